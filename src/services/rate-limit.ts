/** Fixed-window rate limits kept in D1: one upsert per check, atomic under concurrency. */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { rateLimits } from "../db/schema";
import { tooManyRequests } from "../http/errors";

/** Counts one hit on `key`; throws 429 when the window already holds `max` hits. */
export async function hit(d: DB, key: string, max: number, windowSeconds: number): Promise<void> {
  const t = now();
  const windowStart = t - windowSeconds * 1000;
  const row = await d
    .insert(rateLimits)
    .values({ key, windowStart: t, count: 1 })
    .onConflictDoUpdate({
      target: rateLimits.key,
      set: {
        count: sql`CASE WHEN ${rateLimits.windowStart} <= ${windowStart} THEN 1 ELSE ${rateLimits.count} + 1 END`,
        windowStart: sql`CASE WHEN ${rateLimits.windowStart} <= ${windowStart} THEN ${t} ELSE ${rateLimits.windowStart} END`,
      },
    })
    .returning({ count: rateLimits.count })
    .get();
  if (row && row.count > max) throw tooManyRequests("Throttled");
}
