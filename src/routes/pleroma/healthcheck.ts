import type { OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { AppEnv } from "../../http/app-env";
import { db } from "../../db/client";
import { instanceKeys, jobHeartbeats } from "../../db/schema";
import { route } from "../../http/route";
import { HealthcheckSchema } from "../../schemas/instance";
import { CRON_HEARTBEAT, JOB_NAMES } from "../../cron";
import { heartbeatsAsOf } from "../../services/heartbeats";
import { queueStatsQuery } from "../../federation/delivery/deliver";
import { fromRow, storageReport, storageRow } from "../../services/storage";
import { budgetFrom, budgetReport, budgetRow } from "../../services/usage-budget";
import { config } from "../../env";

const DB_TIMEOUT_MS = 2000;

/**
 * Isolate heap in MB where the runtime reports it. workerd's `process.memoryUsage()` is a stub that answers
 * zeros, and Workers expose no other figure, so a zero means "not measurable here" and is reported as null.
 */
function memoryUsedMb(): number | null {
  const mem = (globalThis as { process?: { memoryUsage?: () => { heapUsed: number } } }).process?.memoryUsage?.();
  return mem && mem.heapUsed > 0 ? Math.round((mem.heapUsed / 1048576) * 100) / 100 : null;
}

export function registerHealthcheckRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/healthcheck",
    summary: "Health of the instance: 200 when healthy, 503 when not",
    tags: ["Pleroma"],
    auth: "optional",
    response: HealthcheckSchema,
    handler: async (c, _p, auth) => {
      // Anyone may ask whether the instance is healthy; what a failing job said (it can name tables and queries)
      // is for the instance's admins.
      const admin = Boolean(auth?.user?.isAdmin);
      // D1 is the one connection this Worker depends on: healthy means it answers, in time.
      const started = Date.now();
      let heartbeat: string | null = null;
      const jobs: Record<
        string,
        {
          last_run_at: string;
          last_success_at: string | null;
          last_error: string | null;
          last_error_at: string | null;
          last_result: Record<string, number> | null;
          ok: boolean;
        }
      > = {};
      let storage: ReturnType<typeof storageReport> = null;
      let budget: ReturnType<typeof budgetReport> | null = null;
      let healthy = true;
      let federation: Record<string, unknown> | null = null;
      try {
        const d = db(c.env);
        const [[row, beats, kept, day], stats] = await Promise.race([
          Promise.all([
            d.batch([
              d.select().from(instanceKeys).where(eq(instanceKeys.name, CRON_HEARTBEAT)),
              d.select().from(jobHeartbeats).orderBy(jobHeartbeats.name),
              storageRow(d),
              budgetRow(d, started),
            ]),
            queueStatsQuery(d),
          ]),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error("D1 timeout")), DB_TIMEOUT_MS)),
        ]);
        federation = stats
          ? {
              ...stats,
              oldest_pending_at:
                stats.oldest_pending_at === null ? null : new Date(stats.oldest_pending_at).toISOString(),
            }
          : null;
        heartbeat = row[0]?.value ?? null;
        storage = storageReport(fromRow(kept));
        // The figures are the admins'; anyone else learns the coarse status only.
        budget = budgetReport(budgetFrom(day[0], started, config(c.env).plan), admin);
        const at = (t: number | null) => (t === null ? null : new Date(t).toISOString());
        for (const b of heartbeatsAsOf(beats, heartbeat, JOB_NAMES)) {
          // A job is ok when its last run succeeded; an old error stays visible next to the later success.
          jobs[b.name] = {
            last_run_at: at(b.lastRunAt)!,
            last_success_at: at(b.lastSuccessAt),
            last_error: admin ? b.lastError : b.lastError && "failed",
            last_error_at: at(b.lastErrorAt),
            last_result: b.lastResult,
            ok: b.lastSuccessAt === b.lastRunAt,
          };
        }
      } catch {
        healthy = false;
      }
      const body = {
        pool_size: 1,
        active: healthy ? 0 : 1,
        idle: healthy ? 1 : 0,
        memory_used: memoryUsedMb(),
        healthy,
        // `federation`: the delivery queue (src/federation/delivery/ `queueStatsQuery`: pending, retrying, failed in
        // the last hour, failing and unreachable hosts), null when the database did not answer.
        // `storage`: the database's size against its ceiling (services/storage.ts), as last measured by the cron.
        // `budget`: the day's usage against the plan's caps (services/usage-budget.ts), for admins; else its status.
        job_queue_stats: {
          cron_last_run_at: heartbeat,
          database_latency_ms: Date.now() - started,
          jobs,
          federation,
          storage,
          budget,
        },
      };
      c.header("Cache-Control", "no-store");
      return c.json(body, healthy ? 200 : 503);
    },
  });
}
