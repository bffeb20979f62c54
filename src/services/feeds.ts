/**
 * Home feeds: fanned out on write, pulled on read for accounts with many followers (the hybrid model of large
 * services). A post adds one row per reader to `home_feed` with ONE set-based statement in the post's own
 * batch: the author, local followers (for a reblog, those who show the booster's reblogs) and the local
 * accounts it addresses. When the author has more than FANOUT_INLINE_MAX followers (configuration, 200 by
 * default), the followers get no rows: the status is marked `home_pull`, and home reads pull such statuses per
 * followed account, newest first, from a partial index (src/services/timelines.ts). Posting then costs the
 * same whatever the audience, and no home timeline is ever stale.
 * Reads re-check visibility, blocks, mutes and follows, so unfollowing, blocking or muting takes effect at once
 * without rewriting feeds.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import type { StatusRow } from "./hydrate";
import { htmlToText } from "../content/format";

type FanOutStatus = Pick<StatusRow, "id" | "accountId" | "visibility" | "reblogOfId">;
const reachesFollowers = (s: Pick<StatusRow, "visibility">) =>
  ["public", "unlisted", "private", "local"].includes(s.visibility);

/** Whether a status by an account with this many followers is pulled by readers rather than fanned out. */
export const pulledByReaders = (s: Pick<StatusRow, "visibility">, followers: number, inlineMax: number) =>
  reachesFollowers(s) && followers > inlineMax;

/** The statement that fans a new status (or reblog) out to its readers' home feeds (followers unless pulled). */
export function fanOut(d: DB, s: FanOutStatus, pulled = false): D1PreparedStatement {
  const toFollowers = reachesFollowers(s) && !pulled;
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

/**
 * The `search_rowid` a new status is inserted with: the full-text row `indexForSearch` writes next in the same
 * batch (one transaction), so the status row is written once, not inserted and then updated (two rows more).
 */
export const nextSearchRowid = sql`(SELECT coalesce(max(rowid), 0) + 1 FROM statuses_fts)`;

/** A status's searchable text: its content warning and its content as plain text. */
export const searchBody = (s: Pick<StatusRow, "spoilerText" | "content">) =>
  [s.spoilerText, htmlToText(s.content)].filter(Boolean).join("\n");

/** The statement that puts a status's plain text into the full-text index, at the row its status names. */
export function indexForSearch(d: DB, s: Pick<StatusRow, "id" | "spoilerText" | "content">): D1PreparedStatement {
  return statement(
    d,
    sql`INSERT INTO statuses_fts (rowid, body) VALUES ((SELECT search_rowid FROM statuses WHERE id = ${s.id}), ${searchBody(s)})`,
  );
}

/**
 * What is searchable (issue 42: a full-text row and its index entry are two rows written per status): local
 * statuses and remote ones someone here has to do with: on arrival, those addressed to a local account, answering
 * a local status or fetched on request (`writePost`'s `searchable`); the others from the first time a local user
 * favourites, boosts, bookmarks, answers, votes in or reacts to them. A remote post nobody here touched is not
 * searchable, as in Mastodon (which indexes a status for those who interacted with it).
 *
 * These are the statements, for the interaction's own batch, that make a status searchable: its `search_rowid`
 * set, then its full-text row at that rowid. Nothing for a status that already is (and racing interactions write
 * the row once).
 */
export function indexOnInteraction(d: DB, s: Pick<StatusRow, "id" | "searchRowid" | "spoilerText" | "content">) {
  if (s.searchRowid !== null) return [];
  return [
    statement(
      d,
      sql`UPDATE statuses SET search_rowid = ${nextSearchRowid} WHERE id = ${s.id} AND search_rowid IS NULL`,
    ),
    statement(
      d,
      sql`INSERT INTO statuses_fts (rowid, body) SELECT s.search_rowid, ${searchBody(s)} FROM statuses s
        WHERE s.id = ${s.id} AND s.search_rowid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM statuses_fts f WHERE f.rowid = s.search_rowid)`,
    ),
  ];
}

/** Marks an account whose statuses are pulled (in the batch writing such a status): home reads visit it. */
export const markPulled = (d: DB, accountId: string): D1PreparedStatement =>
  statement(d, sql`UPDATE accounts SET home_pull = 1 WHERE id = ${accountId} AND home_pull = 0`);
