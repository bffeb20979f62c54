/**
 * Home feeds, fanned out on write. A post adds one row per reader to `home_feed` with ONE set-based statement
 * inside the post's own batch: the author, local followers (for a reblog, those who show the booster's
 * reblogs) and the local accounts it addresses. The statement runs inside D1, so a 10,000-follower account
 * posts with the same Worker cost as anyone; readers see the post as soon as the post's answer is sent.
 * Reads re-check visibility, blocks, mutes and follows, so unfollowing, blocking or muting takes effect at once
 * without rewriting feeds.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import type { StatusRow } from "./hydrate";

/** The statement that fans a new status (or reblog) out to its readers' home feeds. */
export function fanOut(d: DB, s: Pick<StatusRow, "id" | "accountId" | "visibility" | "reblogOfId">): D1PreparedStatement {
  const toFollowers = ["public", "unlisted", "private", "local"].includes(s.visibility);
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
