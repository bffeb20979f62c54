/**
 * Backfill on follow (issue 36): a new follow, or an account added to a list, puts the account's latest statuses
 * the reader may see into the reader's home feed at once, so a small instance's home is not empty until the
 * account posts again (Mastodon merges a followed account's recent statuses the same way). Stored statuses only:
 * a remote account's outbox is fetched after the response (federation/fetching/outbox-backfill.ts), then this runs again.
 * The one visibility rule decides; home reads re-check follows, blocks, mutes and filters, so an unfollow still
 * takes them away.
 */
import { claimOnce } from "./rate-limit";
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { visibleTo } from "./visibility";

/** Statuses per account put into a home feed by a new follow or list membership. */
export const BACKFILL_MAX = 20;

/**
 * The statement that puts the newest `BACKFILL_MAX` statuses of each of `authorIds` that `readerId` may see into
 * `readerId`'s home feed, when the reader is local (reblogs only when the reader follows the author with reblogs shown). Idempotent. One
 * statement, walking `statuses_account` per author; put it in the action's batch after the follow row.
 */
export function backfillHome(d: DB, readerId: string, authorIds: string[]): D1PreparedStatement {
  return statement(
    d,
    sql`INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id)
      SELECT ${readerId}, q.id, q.account_id FROM json_each(${JSON.stringify(authorIds)}) j JOIN statuses q ON q.id IN (
        SELECT statuses.id FROM statuses WHERE statuses.account_id = j.value AND ${visibleTo(readerId)}
          AND (statuses.reblog_of_id IS NULL OR EXISTS (SELECT 1 FROM follows bf
            WHERE bf.account_id = ${readerId} AND bf.target_account_id = j.value AND bf.show_reblogs = 1))
        ORDER BY statuses.id DESC LIMIT ${BACKFILL_MAX})
      WHERE EXISTS (SELECT 1 FROM accounts r WHERE r.id = ${readerId} AND r.domain IS NULL)`,
  );
}

/** A remote account's outbox is read at most this often, whoever follows it or lists it. */
export const OUTBOX_BACKFILL_EVERY_MS = 3600_000;

/**
 * Claims the reading of `accountId`'s outbox: true at most once per `OUTBOX_BACKFILL_EVERY_MS` per account (a
 * `rate_limits` row `outbox:<account id>`, as threads claim theirs), so that following, unfollowing and following
 * again, or many readers following the same account, does not fetch its outbox each time.
 */
export function claimOutboxBackfill(d: DB, accountId: string, t: number): Promise<boolean> {
  return claimOnce(d, sql`SELECT ${"outbox:" + accountId} AS k`, t, OUTBOX_BACKFILL_EVERY_MS);
}

/** What a remote account's follow asks to be fetched after the response: its outbox's first page, for `readerId`. */
export interface OutboxBackfill {
  readerId: string;
  accountId: string;
}
