/**
 * The cron's `collect_presence`: it speaks to the streaming objects, so it lives with the cron (an entry point),
 * not among the services.
 */
import { lt } from "drizzle-orm";
import type { Env } from "../env";
import { db } from "../db/client";
import { streamPresence } from "../db/schema";
import { streamObject } from "../services/streams";

/** An object that wrote no presence for this long is asked what it really holds. */
const PRESENCE_CHECK_AFTER = 3600_000;
/** Objects asked per run: each is one subrequest. */
const PRESENCE_CHECKS_PER_RUN = 10;

/**
 * Presence rows whose object wrote nothing for `PRESENCE_CHECK_AFTER`: each such object (a few a run) rewrites
 * its rows from the connections it really holds, which refreshes live rows and removes those of connections
 * that died with an object that could not close them. An object that cannot be reached keeps its rows for the
 * next run.
 */
export async function collectPresence(env: Env, t: number, max = PRESENCE_CHECKS_PER_RUN): Promise<number> {
  const d = db(env);
  const stale = await d
    .selectDistinct({ object: streamPresence.object })
    .from(streamPresence)
    .where(lt(streamPresence.seenAt, t - PRESENCE_CHECK_AFTER))
    .limit(max);
  const results = await Promise.allSettled(
    stale.map(({ object }) => streamObject(env, object).refreshPresence(object)),
  );
  const failed = results.filter((r) => r.status === "rejected");
  if (failed.length)
    throw new Error(
      `${failed.length} of ${stale.length} stream objects did not answer: ${(failed[0] as PromiseRejectedResult).reason}`,
    );
  return stale.length;
}
