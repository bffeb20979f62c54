/** The Worker: the HTTP app, the clocked jobs and the Durable Object classes. */
import { createApp } from "./app";
import { runScheduled } from "./cron";
import type { Env } from "./env";
import { eventSinks } from "./services/events";
import { deliverToStreams } from "./services/stream-delivery";

export { UserStream, TopicStream } from "./objects/streams";

// Published events go to the streaming objects.
eventSinks.push(deliverToStreams);

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime, ctx));
  },
} satisfies ExportedHandler<Env>;
