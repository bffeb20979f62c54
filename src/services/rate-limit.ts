/**
 * Fixed-window rate limits kept in D1 (`rate_limits`): one atomic upsert per key and hit, so concurrent requests
 * cannot slip past a limit. Windows are bounded: a key over its limit is free again when its window ends.
 */
import { inArray, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { rateLimits } from "../db/schema";
import { tooManyRequests } from "../lib/errors";

import type { Limit } from "../env";

export type { Limit };

export interface Hit {
  key: string;
  limit: Limit;
}

function upsert(d: DB, key: string, limit: Limit, t: number) {
  const expired = t - limit.windowSeconds * 1000;
  return d
    .insert(rateLimits)
    .values({ key, windowStart: t, count: 1 })
    .onConflictDoUpdate({
      target: rateLimits.key,
      set: {
        count: sql`CASE WHEN ${rateLimits.windowStart} <= ${expired} THEN 1 ELSE ${rateLimits.count} + 1 END`,
        windowStart: sql`CASE WHEN ${rateLimits.windowStart} <= ${expired} THEN ${t} ELSE ${rateLimits.windowStart} END`,
      },
    })
    .returning({ count: rateLimits.count, windowStart: rateLimits.windowStart });
}

/** How long a window still has to run, in whole seconds, when its key is over its limit; 0 when it is not. */
export type HitResult = { retryAfter: number };

/** Counts one hit on every key (one batch) and says, per key, whether it is now over its `max`. */
export async function countHits(d: DB, hits: Hit[]): Promise<HitResult[]> {
  if (!hits.length) return [];
  const t = now();
  const [first, ...rest] = hits.map((h) => upsert(d, h.key, h.limit, t));
  const rows = await d.batch([first, ...rest]);
  return rows.map(([row], i) => ({
    retryAfter:
      row && row.count > hits[i].limit.max
        ? Math.max(1, Math.ceil((row.windowStart + hits[i].limit.windowSeconds * 1000 - t) / 1000))
        : 0,
  }));
}

/** Throws 429 `Throttled` with `Retry-After` (the longest of the exceeded windows) when any result is over. */
export function throwIfOver(results: HitResult[]): void {
  const retryAfter = Math.max(0, ...results.map((r) => r.retryAfter));
  if (retryAfter > 0) throw tooManyRequests("Throttled", retryAfter);
}

/**
 * Counts one hit on every key (one batch); throws 429 `Throttled` with `Retry-After` (seconds until the last
 * exceeded window ends) when any key now holds more than its `max`.
 */
export async function hitAll(d: DB, hits: Hit[]): Promise<void> {
  throwIfOver(await countHits(d, hits));
}

/**
 * Takes back one hit on each key (a password check that succeeded does not count as a failure), and writes
 * `remember` (a key with no limit, dated `at`) in the same batch.
 */
export async function unhit(d: DB, keys: string[], remember?: { key: string; at: number }): Promise<void> {
  const back = d
    .update(rateLimits)
    .set({ count: sql`max(${rateLimits.count} - 1, 0)` })
    .where(inArray(rateLimits.key, keys));
  if (!remember) return void (await back);
  await d.batch([
    back,
    d
      .insert(rateLimits)
      .values({ key: remember.key, windowStart: remember.at, count: 0 })
      .onConflictDoUpdate({ target: rateLimits.key, set: { windowStart: remember.at } }),
  ]);
}

/**
 * Claims work done at most once per `everyMs` per key (a `rate_limits` row; the cron's clean-up removes old ones):
 * true for the one caller that gets it. `keySql` selects the key as `k` (no row: nothing to claim). (`WHERE true`:
 * SQLite would read the upsert's ON as a join's.)
 */
export async function claimOnce(d: DB, keySql: SQL, t: number, everyMs: number): Promise<boolean> {
  const { results } = await statement(
    d,
    sql`INSERT INTO rate_limits (key, window_start, count) SELECT k, ${t}, 1 FROM (${keySql}) WHERE true
      ON CONFLICT (key) DO UPDATE SET window_start = excluded.window_start, count = count + 1
        WHERE window_start <= ${t - everyMs}
      RETURNING key`,
  ).all();
  return results.length > 0;
}
