/**
 * Fedify's KvStore on D1 (`fedify_kv`). A key is stored as the JSON array of its parts, so the entries under a
 * prefix of parts are one range of the primary key: `["a","b",` up to `["a","b",-` (`-` follows `,`). Values
 * are JSON; an expired entry reads as absent and is deleted by the cron (`collectFedifyKv`).
 */
import type { KvKey, KvStoreListEntry, KvStoreSetOptions } from "@fedify/fedify";
import { and, eq, gt, gte, isNull, lt, or, sql } from "drizzle-orm";
import { anyRow, now, type DB } from "../../db/client";
import { fedifyKv } from "../../db/schema";
import type { BatchKvStore, HeldEntry } from "./pending-kv";

const encode = (key: KvKey) => JSON.stringify(key);

function expiry(options?: KvStoreSetOptions): number | null {
  if (!options?.ttl) return null;
  return now() + options.ttl.total({ unit: "millisecond" });
}

/** Entries that have not expired at `t`. */
const live = (t: number) => or(isNull(fedifyKv.expiresAt), gt(fedifyKv.expiresAt, t));

export class D1KvStore implements BatchKvStore {
  constructor(private readonly d: DB) {}

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const row = await this.d
      .select({ value: fedifyKv.value })
      .from(fedifyKv)
      .where(and(eq(fedifyKv.key, encode(key)), live(now())))
      .get();
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    await this.upsert({ key, value, options });
  }

  /** Several entries in one round trip (what the inbox door kept of a request's fetches: door/pending-kv.ts). */
  async setMany(entries: HeldEntry[]): Promise<void> {
    const [first, ...rest] = entries.map((e) => this.upsert(e));
    if (first) await this.d.batch([first, ...rest]);
  }

  private upsert({ key, value, options }: HeldEntry) {
    const row = { key: encode(key), value: JSON.stringify(value), expiresAt: expiry(options) };
    return this.d
      .insert(fedifyKv)
      .values(row)
      .onConflictDoUpdate({ target: fedifyKv.key, set: { value: row.value, expiresAt: row.expiresAt } });
  }

  async delete(key: KvKey): Promise<void> {
    await this.d.delete(fedifyKv).where(eq(fedifyKv.key, encode(key)));
  }

  /**
   * One conditional statement, so racing swaps cannot both win. `undefined` expects no (live) entry; values
   * compare as their JSON text.
   */
  async cas(key: KvKey, expectedValue: unknown, newValue: unknown, options?: KvStoreSetOptions): Promise<boolean> {
    const t = now();
    const row = { key: encode(key), value: JSON.stringify(newValue), expiresAt: expiry(options) };
    if (expectedValue === undefined) {
      const done = await this.d
        .insert(fedifyKv)
        .values(row)
        .onConflictDoUpdate({
          target: fedifyKv.key,
          set: { value: row.value, expiresAt: row.expiresAt },
          // Only an expired entry may be replaced: a live one means the key is not absent.
          setWhere: sql`${fedifyKv.expiresAt} IS NOT NULL AND ${fedifyKv.expiresAt} <= ${t}`,
        })
        .returning({ key: fedifyKv.key });
      return done.length > 0;
    }
    const done = await this.d
      .update(fedifyKv)
      .set({ value: row.value, expiresAt: row.expiresAt })
      .where(and(eq(fedifyKv.key, row.key), eq(fedifyKv.value, JSON.stringify(expectedValue)), live(t)))
      .returning({ key: fedifyKv.key });
    return done.length > 0;
  }

  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const t = now();
    let range;
    if (prefix && prefix.length > 0) {
      const exact = encode(prefix);
      const start = `${exact.slice(0, -1)},`;
      range = or(eq(fedifyKv.key, exact), and(gte(fedifyKv.key, start), lt(fedifyKv.key, `${exact.slice(0, -1)}-`)));
    }
    const rows = await this.d
      .select()
      .from(fedifyKv)
      .where(and(range, live(t)))
      .orderBy(fedifyKv.key);
    for (const row of rows) yield { key: JSON.parse(row.key) as KvKey, value: JSON.parse(row.value) };
  }
}

/** The cron's clean-up: expired entries, a bounded number per run. */
export async function collectFedifyKv(d: DB, t: number): Promise<void> {
  if (!(await anyRow(d, sql`fedify_kv WHERE expires_at IS NOT NULL AND expires_at <= ${t}`))) return;
  await d.run(
    sql`DELETE FROM fedify_kv WHERE key IN (SELECT key FROM fedify_kv WHERE expires_at IS NOT NULL AND expires_at <= ${t} LIMIT 1000)`,
  );
}
