/** Clocked work, run by the Cron Trigger every minute. Each job is idempotent and bounded. */
import type { Env } from "../env";
import { db, now } from "../db/client";
import { instanceKeys, rateLimits } from "../db/schema";
import { lt } from "drizzle-orm";
import { pruneUsedCaptchas } from "../services/captcha";
import { deleteExpiredFilters } from "../services/filters";
import { deleteExpiredMutes } from "../services/graph";
import { configuredBase, publish, type StreamEvent } from "../services/events";
import { postDue } from "../services/scheduled";
import { closeEndedPolls } from "../services/notifications";
import { deliverPending } from "../services/push";
import { deleteStatuses } from "../services/statuses";
import { statuses } from "../db/schema";
import { config } from "../env";
import { POST_FORMATS } from "../render/instance";
import { asc, lte } from "drizzle-orm";

export const CRON_HEARTBEAT = "cron:last_run_at";
const DAY = 24 * 3600 * 1000;

export async function runScheduled(env: Env, time: number = now(), ctx?: { waitUntil(p: Promise<unknown>): void }): Promise<void> {
  const d = db(env);
  const [, , filterOwners] = await Promise.all([
    pruneUsedCaptchas(env),
    // Windows older than a day are over whatever limit they served.
    d.delete(rateLimits).where(lt(rateLimits.windowStart, time - DAY)),
    deleteExpiredFilters(d, time),
    deleteExpiredMutes(d, time),
  ]);
  if (ctx) publish(env, ctx, filterOwners.map((accountId) => ({ accountId, event: "filters_changed" as const, payload: null })));
  const posted = await postDue(d, config(env), POST_FORMATS, time);
  if (ctx) publish(env, ctx, posted.map((id) => ({ accountId: null, event: "update" as const, payload: id })));
  await closeEndedPolls(d, time);
  // Anything not pushed yet (poll endings made just now, deliveries cut short) goes out here.
  await deliverPending(env, configuredBase(env));
  const gone = await deleteExpiredStatuses(env, time);
  if (ctx) publish(env, ctx, gone);
  const at = new Date(time).toISOString();
  await d
    .insert(instanceKeys)
    .values({ name: CRON_HEARTBEAT, value: at, createdAt: time })
    .onConflictDoUpdate({ target: instanceKeys.name, set: { value: at } });
}

/** Deletes statuses whose `expires_at` has passed, as their author deleting them would, a bounded number a run. */
async function deleteExpiredStatuses(env: Env, time: number, max = 100): Promise<StreamEvent[]> {
  const d = db(env);
  const due = await d.select({ id: statuses.id }).from(statuses).where(lte(statuses.expiresAt, time)).orderBy(asc(statuses.expiresAt)).limit(max);
  const { files, events } = await deleteStatuses(d, due.map((r) => r.id));
  if (files.length) await env.MEDIA.delete(files);
  return events;
}
