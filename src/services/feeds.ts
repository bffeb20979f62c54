/**
 * Home feeds, fanned out on write. A post adds one row per reader to `home_feed` with set-based statements:
 * the author, local followers (for a reblog, those who show the booster's reblogs) and the local accounts it
 * addresses.
 * - Up to FANOUT_INLINE_MAX followers (configuration, 200 by default), everything is written in the post's
 *   own batch.
 * - Beyond, the post's batch writes the author's and the addressed accounts' rows and marks the status
 *   `fanout_pending`; the followers' rows are written after the response, in chunks of FANOUT_CHUNK, and the
 *   mark is cleared. Home reads also pull pending statuses of followed accounts (a partial index holds only
 *   those), so no home timeline is ever stale, and the cron finishes any fan-out that was interrupted.
 * Reads re-check visibility, blocks, mutes and follows, so unfollowing, blocking or muting takes effect at once
 * without rewriting feeds.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import type { StatusRow } from "./hydrate";

export const FANOUT_CHUNK = 500;

type FanOutStatus = Pick<StatusRow, "id" | "accountId" | "visibility" | "reblogOfId">;
const reachesFollowers = (s: Pick<StatusRow, "visibility">) => ["public", "unlisted", "private", "local"].includes(s.visibility);

/** Whether a status by an account with this many followers is fanned out after the response. */
export const fanOutLater = (s: Pick<StatusRow, "visibility">, followers: number, inlineMax: number) => reachesFollowers(s) && followers > inlineMax;

/** The statement that fans a new status (or reblog) out to its readers' home feeds (followers unless `later`). */
export function fanOut(d: DB, s: FanOutStatus, later = false): D1PreparedStatement {
  const toFollowers = reachesFollowers(s) && !later;
  const followers = toFollowers
    ? sql`UNION SELECT f.account_id FROM follows f JOIN accounts a ON a.id = f.account_id AND a.domain IS NULL
          WHERE f.target_account_id = ${s.accountId} ${s.reblogOfId ? sql`AND f.show_reblogs = 1` : sql``}`
    : sql``;
  return statement(
    d,
    sql`INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id)
      SELECT reader, ${s.id}, ${s.accountId} FROM (
        SELECT a.id AS reader FROM accounts a WHERE a.id = ${s.accountId} AND a.domain IS NULL
        ${followers}
        UNION SELECT r.account_id FROM status_recipients r JOIN accounts a ON a.id = r.account_id AND a.domain IS NULL WHERE r.status_id = ${s.id}
      )`,
  );
}

/** The statements that put a status's plain text into the full-text index (after the status row exists). */
export function indexForSearch(d: DB, statusId: string, body: string): D1PreparedStatement[] {
  return [
    statement(d, sql`INSERT INTO statuses_fts (rowid, body) VALUES ((SELECT coalesce(max(rowid), 0) + 1 FROM statuses_fts), ${body})`),
    statement(d, sql`UPDATE statuses SET search_rowid = (SELECT max(rowid) FROM statuses_fts) WHERE id = ${statusId}`),
  ];
}

const followerInsert = (s: FanOutStatus, after: string, upTo: ReturnType<typeof sql>) =>
  sql`INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id)
    SELECT f.account_id, ${s.id}, ${s.accountId} FROM follows f JOIN accounts a ON a.id = f.account_id AND a.domain IS NULL
    WHERE f.target_account_id = ${s.accountId} ${s.reblogOfId ? sql`AND f.show_reblogs = 1` : sql``} AND f.id > ${after} AND f.id <= ${upTo}`;

/**
 * Writes the followers' home rows of a status marked `fanout_pending`, FANOUT_CHUNK followers a batch, then
 * clears the mark. Idempotent: run again (by the cron) it writes nothing twice.
 */
export async function fanOutToFollowers(d: DB, s: FanOutStatus): Promise<void> {
  let after = "";
  for (;;) {
    const boundary = sql`coalesce((SELECT id FROM follows WHERE target_account_id = ${s.accountId} AND id > ${after} ORDER BY id LIMIT 1 OFFSET ${FANOUT_CHUNK - 1}), '~')`;
    const next = sql`SELECT id FROM follows WHERE target_account_id = ${s.accountId} AND id > ${after} ORDER BY id LIMIT 1 OFFSET ${FANOUT_CHUNK - 1}`;
    const [, rows] = await d.$client.batch<{ id: string }>([statement(d, followerInsert(s, after, boundary)), statement(d, next)]);
    const last = rows.results[0]?.id;
    if (!last) break;
    after = last;
  }
  await statement(d, sql`UPDATE statuses SET fanout_pending = 0 WHERE id = ${s.id}`).run();
}

/** Fan-outs left unfinished (the Worker stopped mid-way), oldest first, for the cron. */
export async function resumeFanOuts(d: DB, olderThan: number, max = 5): Promise<void> {
  const { results } = await statement(
    d,
    sql`SELECT id, account_id AS accountId, visibility, reblog_of_id AS reblogOfId FROM statuses WHERE fanout_pending = 1 AND created_at < ${olderThan} ORDER BY id LIMIT ${max}`,
  ).all<FanOutStatus>();
  for (const s of results) await fanOutToFollowers(d, s);
}
