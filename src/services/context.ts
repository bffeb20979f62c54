/**
 * A status's context (`GET /statuses/:id/context`): the statuses it replies to and the replies to it that the
 * viewer may see. One recursive statement walks up (`in_reply_to_id`) and down (the reply index) within
 * Mastodon's limits; hidden statuses are walked through, not shown.
 */
import { claimOnce } from "./rate-limit";
import { sql } from "drizzle-orm";
import { statement, type DB } from "../db/client";
import { ME, notSilenced, paramsCte, visibleTo } from "./visibility";
import type { Effects } from "./effects";

/** Mastodon's context limits (StatusesController): 4,096 each way signed in; 40 up, 60 down, 20 deep anonymously. */
const CONTEXT_LIMITS = {
  signedIn: { ancestors: 4096, descendants: 4096, depth: 4096 },
  anonymous: { ancestors: 40, descendants: 60, depth: 20 },
};

/**
 * Ids of the ancestors (root first) and descendants (depth first, replies in id order) of a status the caller
 * already checked the viewer may see.
 */
export async function contextIds(
  d: DB,
  statusId: string,
  viewerId: string | null,
): Promise<{ ancestors: string[]; descendants: string[] }> {
  // Ancestors up to `ancestors` levels; descendants depth first (the recursion queue ordered by path), at most
  // `descendants` of them and `depth` levels down. Without statistics SQLite would walk every non-reblog
  // (`statuses_reblog_of`, reblog_of_id IS NULL) per reply step and every status for the final join, so the reply
  // index is named and CROSS JOIN keeps `down` the outer loop (test/query-plans.test.ts).
  const lim = viewerId ? CONTEXT_LIMITS.signedIn : CONTEXT_LIMITS.anonymous;
  const viewerRef = viewerId ? ME : null;
  const ok = sql`(${visibleTo(viewerRef, { id: sql`s.id`, accountId: sql`s.account_id`, visibility: sql`s.visibility` })} AND ${notSilenced(viewerRef, false, sql`s.account_id`)})`;
  const { results } = await statement(
    d,
    sql`WITH RECURSIVE ${paramsCte(viewerId)},
      up(id, depth) AS (SELECT in_reply_to_id, 1 FROM statuses WHERE id = ${statusId} AND in_reply_to_id IS NOT NULL
        UNION ALL SELECT p.in_reply_to_id, up.depth + 1 FROM up JOIN statuses p ON p.id = up.id WHERE p.in_reply_to_id IS NOT NULL AND up.depth < ${lim.ancestors}),
      down(id, path, depth) AS (SELECT ${statusId}, '', 0
        UNION ALL SELECT r.id, down.path || '/' || r.id, down.depth + 1 FROM down JOIN statuses r INDEXED BY statuses_reply ON r.in_reply_to_id = down.id
          WHERE r.reblog_of_id IS NULL AND down.depth < ${lim.depth} ORDER BY 2 LIMIT ${lim.descendants + 1})
    SELECT s.id AS id, up.depth AS depth, NULL AS path, ${ok} AS ok FROM up JOIN statuses s ON s.id = up.id
    UNION ALL SELECT s.id, NULL, down.path, ${ok} FROM down CROSS JOIN statuses s ON s.id = down.id WHERE down.depth > 0`,
  ).all<{ id: string; depth: number | null; path: string | null; ok: number }>();
  const shown = results.filter((r) => r.ok);
  return {
    ancestors: shown
      .filter((r) => r.depth !== null)
      .sort((x, y) => y.depth! - x.depth!)
      .map((r) => r.id),
    descendants: shown
      .filter((r) => r.path !== null)
      .sort((x, y) => (x.path! < y.path! ? -1 : 1))
      .map((r) => r.id),
  };
}

/** A remote thread's replies are fetched at most once in this time (issue 36), however many open it. */
export const THREAD_FETCH_EVERY_MS = 3600_000;

/**
 * What opening a status's context asks to follow it: for a signed-in viewer and a remote status, its thread's
 * missing ancestors and replies fetched after the response (federation/fetching/thread-replies.ts), shown on the next load.
 */
export function threadFetch(s: { id: string; local: boolean }, viewerId: string | null): Effects {
  return viewerId && !s.local ? { threads: [s.id] } : {};
}

/**
 * Claims the fetch of `statusId`'s thread: true at most once per `THREAD_FETCH_EVERY_MS` per thread, whoever
 * asks (a `rate_limits` row keyed by the thread, which the cron's clean-up removes after a day).
 */
export function claimThreadFetch(d: DB, statusId: string, t: number): Promise<boolean> {
  return claimOnce(
    d,
    sql`SELECT 'thread:' || thread_id AS k FROM statuses WHERE id = ${statusId} AND local = 0`,
    t,
    THREAD_FETCH_EVERY_MS,
  );
}
