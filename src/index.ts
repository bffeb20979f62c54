/** The Worker: the HTTP app, the clocked jobs and the Durable Object classes. */
import { createApp } from "./app";
import { runScheduled } from "./cron";
import type { Env } from "./env";
import { eventSinks } from "./services/events";
import { deliverToStreams } from "./effects/stream-delivery";
import { handleFederated } from "./federation";

export { UserStream, TopicStream } from "./objects/streams";
export { HostDelivery } from "./objects/host-delivery";
export { ChatRoom } from "./objects/chat-room";

// Published events go to the streaming objects.
eventSinks.push(deliverToStreams);

const app = createApp();

export default {
  // Fedify answers federation requests (WebFinger, actors, inboxes); everything else goes to the hono app.
  fetch: (req: Request, env: Env, ctx: ExecutionContext) => handleFederated(req, env, ctx, app.fetch),
  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime, ctx));
  },
} satisfies ExportedHandler<Env>;
