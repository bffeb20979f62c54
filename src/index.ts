/** The Worker: the HTTP app and the clocked jobs. Durable Object classes are exported here as they appear. */
import { createApp } from "./app";
import { runScheduled } from "./cron";
import type { Env } from "./env";

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime, ctx));
  },
} satisfies ExportedHandler<Env>;
