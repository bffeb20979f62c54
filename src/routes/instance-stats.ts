/** The instance's figures as every route shows them, cached at the edge. */
import { db } from "../db/client";
import { config } from "../env";
import { edgeCached } from "../http/edge-cache";
import type { Ctx } from "../http/route";
import { instanceStats, type InstanceStats } from "../services/instance";

/**
 * The figures as the instance document, nodeinfo and the front page show them: the same for everyone and read
 * by every client at start (the counts walk every local account), so kept `STATS_CACHE_SECONDS` (60) at the edge.
 */
export function cachedInstanceStats(c: Ctx): Promise<InstanceStats> {
  return edgeCached(c, "instance-stats", config(c.env).statsCacheSeconds, () => instanceStats(db(c.env)));
}
