/** The Worker: the HTTP app, the clocked jobs and the Durable Object classes. */
import { createApp } from "./app";
import { runScheduled } from "./cron";
import type { Env } from "./env";
import { eventSinks } from "./services/events";
import { deliverToStreams } from "./effects/stream-delivery";
import { handleFederated } from "./federation";
import { ensureSchema } from "./db/schema-upgrade";

export { UserStream, TopicStream } from "./objects/streams";
export { HostDelivery } from "./objects/host-delivery";
export { ChatRoom } from "./objects/chat-room";

// Published events go to the streaming objects.
eventSinks.push(deliverToStreams);

const app = createApp();

export default {
  // The schema first (once per isolate: src/db/schema-upgrade.ts). Fedify answers federation requests
  // (WebFinger, actors, inboxes); everything else goes to the hono app.
  async fetch(req: Request, env: Env, ctx: ExecutionContext) {
    // A database that cannot be checked is most likely down: the request goes on and answers what it can (the
    // healthcheck says unhealthy); the next request checks again.
    await ensureSchema(env.DB).catch((e) => console.error("schema check", e));
    return handleFederated(req, env, ctx, app.fetch);
  },
  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(
      ensureSchema(env.DB)
        .catch((e) => console.error("schema check", e))
        .then(() => runScheduled(env, controller.scheduledTime, ctx)),
    );
  },
} satisfies ExportedHandler<Env>;
