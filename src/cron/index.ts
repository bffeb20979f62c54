/**
 * Clocked work, run by the Cron Trigger every minute. Each job is idempotent and bounded, and runs isolated: a
 * job that throws is logged with its name and recorded in its heartbeat (`job_heartbeats`), and the others
 * still run. The healthcheck reports every job's heartbeat (services/heartbeats.ts: a row is written when a job
 * fails, reports or recovers, not every minute). A job with nothing to do reads next to nothing: what it looks
 * for is found through an index that is empty, or nearly, then (test/cron-cost.test.ts measures an idle minute).
 */
import { learnFavicons } from "../services/instance-favicons";
import { collectPresence } from "./presence";
import type { Env } from "../env";
import { db, now, statement, type DB } from "../db/client";
import { recordRun, type JobOutcome } from "../services/heartbeats";
import { asc, lte, sql } from "drizzle-orm";
import { KNOWN_ADDRESS_MS } from "../services/credentials";
import { deleteExpiredFilters, filtersChanged } from "../services/filters";
import { runEffects } from "../effects";
import { mergeEffects } from "../services/effects";
import { deleteExpiredMutes } from "../services/graph";
import { configuredBase } from "../services/events";
import { postDue } from "../services/scheduled";
import { closeEndedPolls } from "../services/notifications";
import { deliverPending } from "../services/push";
import { deleteStatuses } from "../services/statuses";
import { collectCodes, collectIdempotencyKeys, collectMail, collectUnattachedMedia } from "../services/collect";
import { statuses } from "../db/schema";
import { collectFedifyKv } from "../federation/door/kv";
import { collectMfaTokens } from "../services/mfa";
import { sweepFederation } from "../federation/delivery/wake";
import { settleRelays } from "../federation/fetching/relays";
import { runAccountDeletions } from "../services/account-deletion";
import { moveFollowers } from "../services/move";
import { processBackups } from "../services/backups";
import { stepArchiveImports } from "../services/archive-import";
import { config } from "../env";
import { refreshSettings } from "../services/instance-settings";
import { POST_FORMATS } from "../render/instance";
import { pruneNotifications, pruneRemoteStatuses } from "../services/retention";
import { sweepFrontendFiles } from "../services/frontends";
import { measureStorage } from "../services/storage";
import { pruneStatement as pruneInboundUsage } from "../services/inbound-limits";
import { sendQueuedMail } from "../services/mail-queue";
import { drainFileDeletions } from "../services/file-deletions";
import { settlePublicBucket } from "../services/private-files";
import { BUILT_IN_IMAGES } from "../render/images";
import { runDueSubscriptions } from "../services/domain-subscriptions";

export { CRON_HEARTBEAT } from "../services/heartbeats";
/** The minute of each hour the retention jobs run in. */
export const RETENTION_MINUTE = 30;
const DAY = 24 * 3600 * 1000;
/** Expired statuses deleted per run. */
const EXPIRED_PER_RUN = 100;

type Ctx = { waitUntil(p: Promise<unknown>): void } | undefined;
type Job = (env: Env, d: DB, t: number, ctx: Ctx) => Promise<unknown>;

/** Clean-up jobs: independent of each other, run side by side. */
const CLEANUP: Record<string, Job> = {
  // Windows older than a day are over whatever limit they served.
  // Windows last a day at most; the addresses a user signed in from are kept for as long as they count.
  // Each through its partial index (the conditions written as the indexes are), so neither walks the other's rows.
  // Once an hour, the inbound limits' rows of past days too (services/inbound-limits.ts: a range of their key).
  rate_limits: (_env, d, t) =>
    d.$client.batch([
      statement(d, sql`DELETE FROM rate_limits WHERE key NOT LIKE 'login:known:%' AND window_start < ${t - DAY}`),
      statement(
        d,
        sql`DELETE FROM rate_limits WHERE key LIKE 'login:known:%' AND window_start < ${t - KNOWN_ADDRESS_MS}`,
      ),
      ...(new Date(t).getUTCMinutes() === RETENTION_MINUTE ? [pruneInboundUsage(d, t)] : []),
    ]),
  expired_filters: async (env, d, t, ctx) => {
    const owners = await deleteExpiredFilters(d, t);
    if (ctx) runEffects(env, ctx, configuredBase(env), mergeEffects(...owners.map(filtersChanged)));
  },
  expired_mutes: (_env, d, t) => deleteExpiredMutes(d, t),
  collect_media: (env, _d, t) => collectUnattachedMedia(env, t),
  collect_idempotency_keys: (_env, d, t) => collectIdempotencyKeys(d, t),
  collect_codes: (_env, d, t) => collectCodes(d, t),
  collect_mail: (_env, d, t) => collectMail(d, t),
  collect_presence: (env, _d, t) => collectPresence(env, t),
  collect_fedify_kv: (_env, d, t) => collectFedifyKv(d, t),
  // Expired MFA sign-in tokens and password reset links.
  collect_mfa_tokens: (_env, d, t) => collectMfaTokens(d, t),
  // Other instances' favicons, a few a run (remote accounts' `pleroma.favicon`).
  instance_favicons: (env, _d, t) => learnFavicons(env, t),
  // Private files out of the public bucket, then the built-in pictures into it (once; services/private-files.ts).
  public_bucket: async (env) => {
    const report = await settlePublicBucket(env, BUILT_IN_IMAGES);
    return report ? { report } : null;
  },
};

/** Jobs run one after another, in this order (poll endings made by `polls` are pushed by `push`). */
const SEQUENCE: Record<string, Job> = {
  scheduled_statuses: async (env, d, t, ctx) => {
    const { effects } = await postDue(d, config(env), POST_FORMATS, t);
    // What each post's batch says must follow it, as after a post through the API (this run's `push` and
    // `federation` jobs also send whatever the door has not).
    if (ctx) runEffects(env, ctx, configuredBase(env), effects);
  },
  polls: (_env, d, t) => closeEndedPolls(d, t),
  // Anything not pushed yet (poll endings made just now, deliveries cut short) goes out here.
  push: (env) => deliverPending(env, configuredBase(env)),
  // As their author deleting them would: the events and the files (with their thumbnails) through the door.
  expired_statuses: async (env, d, t, ctx) => {
    const due = await d
      .select({ id: statuses.id })
      .from(statuses)
      .where(lte(statuses.expiresAt, t))
      .orderBy(asc(statuses.expiresAt))
      .limit(EXPIRED_PER_RUN);
    const { effects } = await deleteStatuses(
      d,
      due.map((r) => r.id),
    );
    if (ctx) runEffects(env, ctx, configuredBase(env), effects);
  },
  // Bounded steps of account deletions (after expired statuses: both delete statuses and their files).
  account_deletions: (env, _d, t) => runAccountDeletions(env, t),
  // Moves whose followers' pass failed (or left some over) are retried (before federation: their Follows go out).
  // A move itself moves its followers at once, after the answer (services/move.ts): nothing is polled.
  account_moves: (env, _d, t, ctx) => moveFollowers(env, t, (e) => ctx && runEffects(env, ctx, configuredBase(env), e)),
  // One account archive a run; expired archives go.
  backups: (env, _d, t) => processBackups(env, t),
  // One step of the oldest account archive import going on (services/archive-import.ts): quiet, bounded, resumable.
  archive_imports: (env, _d, t) => stepArchiveImports(env, t),
  // Retention (services/retention.ts): once an hour, a bounded step each (rows read stay within D1's free budget).
  prune_remote_statuses: async (env, d, t) =>
    new Date(t).getUTCMinutes() === RETENTION_MINUTE
      ? { report: await pruneRemoteStatuses(d, t, config(env).remotePostRetentionDays) }
      : null,
  prune_notifications: async (env, d, t) =>
    new Date(t).getUTCMinutes() === RETENTION_MINUTE
      ? { report: await pruneNotifications(d, t, config(env).notificationRetentionDays) }
      : null,
  // Frontend files no installed build names (services/frontends.ts), with the other hourly clean-ups.
  frontend_files: async (env, _d, t) =>
    new Date(t).getUTCMinutes() === RETENTION_MINUTE ? { report: await sweepFrontendFiles(env, t) } : null,
  // Subscribed blocklists and allow-lists, each once a day (services/domain-subscriptions.ts), with the hourly jobs.
  domain_subscriptions: async (env, d, t) =>
    new Date(t).getUTCMinutes() === RETENTION_MINUTE ? runDueSubscriptions(env, d, t) : null,
  // The database's size against its ceiling, after the pruning (services/storage.ts).
  // Its own row (kept only when the size moved, or hourly) is what the healthcheck shows: no heartbeat report too.
  storage: async (env, d, t) => {
    await measureStorage(env, d, t);
  },
  // Files of deleted rows the door did not delete (cut short, R2 failing), after the jobs above that delete statuses.
  file_deletions: (env) => drainFileDeletions(env),
  // Mail still due (queued by an action whose door did not send it, by a job above, or waiting for its retry).
  mail: (env, d, t) => sendQueuedMail(env, d, t),
  // Relays the command line added or removed: looked up and followed, or unfollowed (federation/fetching/relays.ts).
  relays: (env) => (configuredBase(env) ? settleRelays(env, configuredBase(env)) : Promise.resolve(false)),
  // Last: the outbox rows the jobs above wrote (scheduled posts, expired statuses) go out in this same run.
  federation: (env, _d, t) => sweepFederation(env, t),
};

/** Every job's name, for the healthcheck (a job that never failed nor reported has no heartbeat row). */
export const JOB_NAMES: readonly string[] = [...Object.keys(CLEANUP), ...Object.keys(SEQUENCE)];

async function runJob(name: string, job: Job, env: Env, d: DB, t: number, ctx: Ctx): Promise<JobOutcome> {
  try {
    const done = await job(env, d, t, ctx);
    const report =
      done && typeof done === "object" && "report" in done ? (done as { report: Record<string, number> }).report : null;
    return { name, error: null, report };
  } catch (e) {
    const error = (e instanceof Error ? e.message : String(e)).slice(0, 500);
    console.error(`cron job ${name} failed: ${error}`);
    return { name, error, report: null };
  }
}

export async function runScheduled(
  env: Env,
  time: number = now(),
  ctx?: { waitUntil(p: Promise<unknown>): void },
): Promise<void> {
  const d = db(env);
  // Without the runtime's context (a test, a script), what the jobs hand to the door is awaited here.
  const pending: Promise<unknown>[] = [];
  ctx ??= { waitUntil: (p) => pending.push(p) };
  // Jobs read the run-time settings too (src/services/instance-settings.ts).
  await refreshSettings(env);
  const outcomes = await Promise.all(
    Object.entries(CLEANUP).map(([name, job]) => runJob(name, job, env, d, time, ctx)),
  );
  for (const [name, job] of Object.entries(SEQUENCE)) outcomes.push(await runJob(name, job, env, d, time, ctx));
  await recordRun(d, time, outcomes);
  await Promise.allSettled(pending);
}
