/**
 * Fixed-window rate limits kept in D1 (`rate_limits`): one atomic upsert per key and hit, so concurrent requests
 * cannot slip past a limit. Windows are bounded: a key over its limit is free again when its window ends.
 */
import { inArray, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { rateLimits } from "../db/schema";
import { tooManyRequests } from "../http/errors";

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

/**
 * Counts one hit on every key (one batch); throws 429 `Throttled` with `Retry-After` (seconds until the last
 * exceeded window ends) when any key now holds more than its `max`.
 */
export async function hitAll(d: DB, hits: Hit[]): Promise<void> {
  if (!hits.length) return;
  const t = now();
  const [first, ...rest] = hits.map((h) => upsert(d, h.key, h.limit, t));
  const rows = await d.batch([first, ...rest]);
  let retryAfter = 0;
  rows.forEach(([row], i) => {
    if (row && row.count > hits[i].limit.max) {
      retryAfter = Math.max(retryAfter, Math.ceil((row.windowStart + hits[i].limit.windowSeconds * 1000 - t) / 1000));
    }
  });
  if (retryAfter > 0) throw tooManyRequests("Throttled", retryAfter);
}

/** Counts one hit on `key`; throws 429 when the window already holds `max` hits. */
export function hit(d: DB, key: string, max: number, windowSeconds: number): Promise<void> {
  return hitAll(d, [{ key, limit: { max, windowSeconds } }]);
}

/** Takes back one hit on each key (a password check that succeeded does not count as a failure). */
export async function unhit(d: DB, keys: string[]): Promise<void> {
  if (!keys.length) return;
  await d
    .update(rateLimits)
    .set({ count: sql`max(${rateLimits.count} - 1, 0)` })
    .where(inArray(rateLimits.key, keys));
}
