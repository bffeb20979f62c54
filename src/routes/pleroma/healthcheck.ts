import type { OpenAPIHono } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { AppEnv } from "../../app";
import { db } from "../../db/client";
import { instanceKeys } from "../../db/schema";
import { route } from "../../http/route";
import { HealthcheckSchema } from "../../schemas/instance";
import { CRON_HEARTBEAT } from "../../cron";

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
    auth: "none",
    response: HealthcheckSchema,
    handler: async (c) => {
      // D1 is the one connection this Worker depends on: healthy means it answers, in time.
      const started = Date.now();
      let heartbeat: string | null = null;
      let healthy = true;
      try {
        const row = await Promise.race([
          db(c.env).select().from(instanceKeys).where(eq(instanceKeys.name, CRON_HEARTBEAT)).get(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error("D1 timeout")), DB_TIMEOUT_MS)),
        ]);
        heartbeat = row?.value ?? null;
      } catch {
        healthy = false;
      }
      const body = {
        pool_size: 1,
        active: healthy ? 0 : 1,
        idle: healthy ? 1 : 0,
        memory_used: memoryUsedMb(),
        healthy,
        job_queue_stats: { cron_last_run_at: heartbeat, database_latency_ms: Date.now() - started },
      };
      c.header("Cache-Control", "no-store");
      return c.json(body, healthy ? 200 : 503);
    },
  });
}
