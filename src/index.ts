/** The Worker: the HTTP app, the clocked jobs and the Durable Object classes. */
import { createApp } from "./app";
import { runScheduled } from "./cron";
import type { Env } from "./env";
import { eventSinks } from "./services/events";
import { deliverToStreams } from "./effects/stream-delivery";
import { registerFederationSinks } from "./effects";
import { kickFederation } from "./federation/delivery/wake";
import { backfillFromOutboxes } from "./federation/fetching/outbox-backfill";
import { fetchThreads } from "./federation/fetching/thread-replies";
import { resolveEnv } from "./federation/fetching/resolve";
import { handleFederated } from "./federation";
import { ensureSchema } from "./db/schema-upgrade";

import { UserStream as UserStreamObject, TopicStream as TopicStreamObject } from "./objects/streams";
import { HostDelivery as HostDeliveryObject } from "./objects/host-delivery";
import { ChatRoom as ChatRoomObject } from "./objects/chat-room";
import { metered } from "./objects/metered";
import { count, lifetimeUsage, meteredEnv } from "./lib/meter";
import { budgetAfterCron, flushUsage } from "./services/usage-budget";

// Each object's calls from outside are counted (lib/meter.ts), and its bindings metered.
const STREAM_ENTRIES = [
  "fetch",
  "deliver",
  "relay",
  "refreshPresence",
  "webSocketMessage",
  "webSocketClose",
  "webSocketError",
  "alarm",
];
export const UserStream = metered(UserStreamObject, STREAM_ENTRIES);
export const TopicStream = metered(TopicStreamObject, STREAM_ENTRIES);
export const HostDelivery = metered(HostDeliveryObject, ["kick", "alarm"]);
export const ChatRoom = metered(ChatRoomObject, ["send", "read", "readOne", "deleteMessage", "clear"]);

// Published events go to the streaming objects; what reaches other servers goes through federation/.
eventSinks.push(deliverToStreams);
registerFederationSinks({
  kick: kickFederation,
  backfill: (env, base, accounts) => backfillFromOutboxes(resolveEnv(env, base, new URL(base).host), accounts),
  threads: (env, base, ids) => fetchThreads(resolveEnv(env, base, new URL(base).host), ids),
});

const app = createApp();

export default {
  // The schema first (once per isolate: src/db/schema-upgrade.ts). Fedify answers federation requests
  // (WebFinger, actors, inboxes); everything else goes to the hono app.
  async fetch(req: Request, rawEnv: Env, ctx: ExecutionContext) {
    const env = meteredEnv(rawEnv);
    // The cost bench (bench/cost.ts) reads the isolate's running totals; never on a deployed instance.
    if (env.COST_METER === "true" && new URL(req.url).pathname === "/__cost") return Response.json(lifetimeUsage());
    count("requests");
    // A database that cannot be checked is most likely down: the request goes on and answers what it can (the
    // healthcheck says unhealthy); the next request checks again.
    await ensureSchema(env.DB).catch((e) => console.error("schema check", e));
    try {
      return await handleFederated(req, env, ctx, app.fetch);
    } finally {
      // What this isolate counted reaches the day's budget now and then, after the response (services/usage-budget.ts).
      ctx.waitUntil(flushUsage(env));
    }
  },
  async scheduled(controller: ScheduledController, rawEnv: Env, ctx: ExecutionContext) {
    const env = meteredEnv(rawEnv);
    count("requests");
    ctx.waitUntil(
      ensureSchema(env.DB)
        .catch((e) => console.error("schema check", e))
        .then(() => runScheduled(env, controller.scheduledTime, ctx))
        // The budget meter's part, whatever the jobs did: the exact figures every 15 minutes when a token is set,
        // and the flush (never throws).
        .finally(() => budgetAfterCron(env, controller.scheduledTime)),
    );
  },
} satisfies ExportedHandler<Env>;
