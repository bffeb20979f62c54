/** The instance's figures as every route shows them, cached at the edge. */
import { db } from "../db/client";
import { config } from "../env";
import { edgeCached } from "../http/edge-cache";
import type { Ctx } from "../http/route";
import { instanceStats, type InstanceStats } from "../services/instance";

/** Below this many local accounts counting is cheap: figures are read fresh (a new instance's first posts count). */
const SMALL = 50;

/**
 * The figures as the instance document, nodeinfo and the front page show them: the same for everyone and read
 * by every client at start (the counts walk every local account), so kept `STATS_CACHE_SECONDS` (60) at the edge
 * once the instance is not small.
 */
export function cachedInstanceStats(c: Ctx): Promise<InstanceStats> {
  const ttl = config(c.env).statsCacheSeconds;
  return edgeCached(c, "instance-stats", ttl > 0 ? (s: InstanceStats) => (s.userCount < SMALL ? 0 : ttl) : 0, () =>
    instanceStats(db(c.env)),
  );
}
