/**
 * Fedify's message queue as a Durable Object with an alarm (the Workers Free plan has no Queues). Messages are
 * rows in the object's own SQLite storage; the alarm drains the due ones, hands each to Fedify
 * (`federation.processQueuedTask`) and deletes it only once that succeeded. A failure keeps the row and tries
 * it again later with exponential backoff; after `MAX_ATTEMPTS` the row stays, marked dead with its last
 * error, for an operator to look at: nothing is lost silently. The queue declares `nativeRetrial`, so Fedify
 * rethrows failures here instead of re-enqueueing copies itself.
 */
import { DurableObject } from "cloudflare:workers";
import type { Message, MessageQueue, MessageQueueDepth, MessageQueueEnqueueOptions } from "@fedify/fedify";
import type { Env } from "../env";
import { processQueued } from "../federation";

/** First retry after 30 s, doubling, at most 6 h apart; 16 attempts span about 2.5 days. */
export const RETRY_BASE_MS = 30_000;
export const RETRY_MAX_MS = 6 * 3600_000;
export const MAX_ATTEMPTS = 16;
/** Messages handled per alarm run (each may make a subrequest); the next alarm takes the rest. */
const DRAIN_MAX = 25;

export function retryDelay(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
}

export type QueuedRow = {
  seq: number;
  body: string;
  ordering_key: string | null;
  ready_at: number | null;
  attempts: number;
  last_error: string | null;
};

export class FederationQueue extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    // `ready_at` NULL = dead (given up after MAX_ATTEMPTS), kept for inspection.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS messages (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      body TEXT NOT NULL,
      ordering_key TEXT,
      ready_at INTEGER,
      attempts INTEGER NOT NULL DEFAULT 0,
      last_error TEXT
    )`);
    this.sql.exec(`CREATE INDEX IF NOT EXISTS messages_ready ON messages (ready_at) WHERE ready_at IS NOT NULL`);
  }

  /** Stores messages (JSON-serialisable) due after `delayMs`, and makes sure an alarm comes by then. */
  async enqueue(bodies: unknown[], delayMs = 0, orderingKey: string | null = null): Promise<void> {
    const readyAt = Date.now() + Math.max(0, delayMs);
    for (const body of bodies) {
      this.sql.exec(
        `INSERT INTO messages (body, ordering_key, ready_at) VALUES (?, ?, ?)`,
        JSON.stringify(body),
        orderingKey,
        readyAt,
      );
    }
    await this.schedule();
  }

  async depth(): Promise<MessageQueueDepth & { dead: number }> {
    const t = Date.now();
    const row = this.sql
      .exec<{ queued: number; ready: number; dead: number }>(
        `SELECT count(ready_at) AS queued, coalesce(sum(ready_at <= ?), 0) AS ready, coalesce(sum(ready_at IS NULL), 0) AS dead FROM messages`,
        t,
      )
      .one();
    return { queued: row.queued, ready: row.ready, delayed: row.queued - row.ready, dead: row.dead };
  }

  /** Every stored row (tests and operators). */
  async rows(): Promise<QueuedRow[]> {
    return this.sql
      .exec<QueuedRow>(`SELECT seq, body, ordering_key, ready_at, attempts, last_error FROM messages ORDER BY seq`)
      .toArray();
  }

  /** Makes every waiting (not dead) message due now: an operator's "retry now", and tests of retries. */
  async retryNow(): Promise<void> {
    this.sql.exec(`UPDATE messages SET ready_at = ? WHERE ready_at IS NOT NULL`, Date.now());
    await this.schedule();
  }

  override async alarm(): Promise<void> {
    const t = Date.now();
    const due = this.sql
      .exec<QueuedRow>(
        `SELECT seq, body, ordering_key, ready_at, attempts, last_error FROM messages WHERE ready_at IS NOT NULL AND ready_at <= ? ORDER BY ready_at, seq LIMIT ?`,
        t,
        DRAIN_MAX,
      )
      .toArray();
    // Messages sharing an ordering key run one at a time, in order: after a failure the rest of its key waits.
    const blocked = new Set<string>();
    const local = this.localQueue();
    for (const row of due) {
      if (row.ordering_key && blocked.has(row.ordering_key)) continue;
      try {
        await processQueued(this.env, local, JSON.parse(row.body) as Message);
        this.sql.exec(`DELETE FROM messages WHERE seq = ?`, row.seq);
      } catch (e) {
        const attempts = row.attempts + 1;
        const error = (e instanceof Error ? e.message : String(e)).slice(0, 500);
        const next = attempts >= MAX_ATTEMPTS ? null : Date.now() + retryDelay(attempts);
        if (next === null)
          console.error(`federation queue: message ${row.seq} dead after ${attempts} attempts: ${error}`);
        this.sql.exec(
          `UPDATE messages SET attempts = ?, last_error = ?, ready_at = ? WHERE seq = ?`,
          attempts,
          error,
          next,
          row.seq,
        );
        if (row.ordering_key) blocked.add(row.ordering_key);
      }
    }
    await this.schedule();
  }

  /** The alarm at the earliest due message (now if some are already due), or none when nothing waits. */
  private async schedule(): Promise<void> {
    const next = this.sql
      .exec<{ at: number | null }>(`SELECT min(ready_at) AS at FROM messages WHERE ready_at IS NOT NULL`)
      .one().at;
    if (next === null) {
      await this.ctx.storage.deleteAlarm();
      return;
    }
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > next) await this.ctx.storage.setAlarm(Math.max(next, Date.now()));
  }

  /** The queue Fedify uses while handling a message inside this object: writes rows here, no RPC to itself. */
  private localQueue(): MessageQueue {
    const enqueue = (bodies: readonly unknown[], options?: MessageQueueEnqueueOptions) => {
      const delay = options?.delay ? options.delay.total({ unit: "millisecond" }) : 0;
      const readyAt = Date.now() + Math.max(0, delay);
      for (const body of bodies) {
        this.sql.exec(
          `INSERT INTO messages (body, ordering_key, ready_at) VALUES (?, ?, ?)`,
          JSON.stringify(body),
          options?.orderingKey ?? null,
          readyAt,
        );
      }
      // The alarm handler reschedules when it finishes.
      return Promise.resolve();
    };
    return {
      nativeRetrial: true,
      enqueue: (message, options) => enqueue([message], options),
      enqueueMany: (messages, options) => enqueue(messages, options),
      listen: () => Promise.reject(new Error("the federation queue is drained by its alarm, not by listen()")),
    };
  }
}
