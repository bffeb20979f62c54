/**
 * The cron's heartbeats, which the healthcheck shows: when the cron last ran (`cron:last_run_at` in
 * `instance_keys`, one row written a run) and, per job, when it last ran and last succeeded, its last error (and
 * when), and what it last reported doing (`job_heartbeats`).
 *
 * A job's own row is written only when it has something to say: it failed (in every run it fails), it reported
 * what it did, or it succeeded after failing (found through `job_heartbeats_failing`, an index of the failing
 * jobs only). A job that keeps succeeding costs nothing: it ran when the cron last ran, and succeeded, since a
 * failure would have been written. So an idle minute writes one row, not one per job.
 */
import { sql } from "drizzle-orm";
import { statement, type DB } from "../db/client";
import { instanceKeys, jobHeartbeats } from "../db/schema";

export const CRON_HEARTBEAT = "cron:last_run_at";

export interface JobOutcome {
  name: string;
  error: string | null;
  /** What the job said it did (`{ report }`), shown in the healthcheck. */
  report: Record<string, number> | null;
}

export type JobHeartbeat = typeof jobHeartbeats.$inferSelect;

/**
 * The jobs whose last run failed (the healthcheck's `ok` is false: the run and the success differ), read through
 * the partial index of exactly those (the same condition, as the index names it).
 */
const failingJobs = (d: DB) =>
  d.all<{ name: string }>(sql`SELECT name FROM job_heartbeats WHERE last_success_at IS NOT last_run_at`);

/** Records a cron run at `t`: its heartbeat, and the rows of the jobs that failed, reported or recovered. */
export async function recordRun(d: DB, t: number, outcomes: JobOutcome[]): Promise<void> {
  const failing = new Set((await failingJobs(d)).map((r) => r.name));
  const at = new Date(t).toISOString();
  const worth = outcomes.filter((o) => o.error || o.report || failing.has(o.name));
  // In one round trip: a success moves `last_success_at`, a failure records the error and its time.
  await d.$client.batch([
    statement(
      d,
      d
        .insert(instanceKeys)
        .values({ name: CRON_HEARTBEAT, value: at, createdAt: t })
        .onConflictDoUpdate({ target: instanceKeys.name, set: { value: at } }),
    ),
    ...worth.map((o) =>
      statement(
        d,
        d
          .insert(jobHeartbeats)
          .values({
            name: o.name,
            lastRunAt: t,
            lastSuccessAt: o.error ? null : t,
            lastError: o.error,
            lastErrorAt: o.error ? t : null,
            lastResult: o.report,
          })
          .onConflictDoUpdate({
            target: jobHeartbeats.name,
            set: o.error
              ? { lastRunAt: t, lastError: o.error, lastErrorAt: t }
              : { lastRunAt: t, lastSuccessAt: t, ...(o.report ? { lastResult: o.report } : {}) },
          }),
      ),
    ),
  ]);
}

/**
 * Every job's heartbeat as of the cron's last run (`lastRun`, ISO): a job that has succeeded since its row was
 * written (or that has no row: it never failed nor reported) ran, and succeeded, in that run. `jobs`: the cron's
 * jobs; rows of jobs no longer run are shown as they were left.
 */
export function heartbeatsAsOf(rows: JobHeartbeat[], lastRun: string | null, jobs: readonly string[]): JobHeartbeat[] {
  const last = lastRun === null ? NaN : Date.parse(lastRun);
  const byName = new Map(rows.map((r) => [r.name, r]));
  if (!Number.isNaN(last))
    for (const name of jobs)
      if (!byName.has(name))
        byName.set(name, {
          name,
          lastRunAt: last,
          lastSuccessAt: last,
          lastError: null,
          lastErrorAt: null,
          lastResult: null,
        });
  return [...byName.values()]
    .map((r) => {
      const ok = r.lastSuccessAt === r.lastRunAt;
      if (!ok || Number.isNaN(last) || last <= r.lastRunAt || !jobs.includes(r.name)) return r;
      return { ...r, lastRunAt: last, lastSuccessAt: last };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
