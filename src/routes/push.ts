/** Web Push subscription of the current access token. */
import { PushSubscriptionSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import type { UserAuth } from "../http/auth";
import { forbidden } from "../lib/errors";
import { boolParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { renderPushSubscription } from "../render/push";
import { ALERTS, alertsFrom } from "../lib/push-alerts";
import {
  serverKey,
  setAlerts,
  subscribe,
  tokenSubscription,
  unsubscribe,
  type SubscriptionRow,
} from "../services/push";

const alertsParam = z
  .object({ alerts: z.object(Object.fromEntries(ALERTS.map((a) => [a, boolParam().optional()]))).optional() })
  .optional();

/** The subscription belongs to the token: a password (Basic) login has none. */
function tokenOf(auth: UserAuth): string {
  if (!auth.tokenId) throw forbidden("Push subscriptions need an access token");
  return auth.tokenId;
}

async function render(c: Ctx, row: SubscriptionRow) {
  return renderPushSubscription(row, await serverKey(c.env));
}

export function registerPushRoutes(app: OpenAPIHono<AppEnv>) {
  const common = { path: "/api/v1/push/subscription", tags: ["Push"], auth: "user" as const, scopes: ["push"] };
  route(app, {
    ...common,
    method: "post",
    summary: "Subscribe this token to Web Push (replaces its previous subscription)",
    params: z.object({
      subscription: z.object({ endpoint: z.url(), keys: z.object({ p256dh: z.string(), auth: z.string() }) }),
      data: alertsParam,
    }),
    response: PushSubscriptionSchema,
    handler: async (c, p, auth) => {
      const row = await subscribe(db(c.env), tokenOf(auth), auth.account.id, {
        endpoint: p.subscription.endpoint,
        p256dh: p.subscription.keys.p256dh,
        auth: p.subscription.keys.auth,
        alerts: alertsFrom(p.data?.alerts),
      });
      return c.json(await render(c, row));
    },
  });
  route(app, {
    ...common,
    method: "get",
    summary: "This token's push subscription",
    response: PushSubscriptionSchema,
    handler: async (c, _p, auth) => c.json(await render(c, await tokenSubscription(db(c.env), tokenOf(auth)))),
  });
  route(app, {
    ...common,
    method: "put",
    summary: "Change which alerts this token's subscription receives (only data[alerts] can change)",
    params: z.object({ data: alertsParam }),
    response: PushSubscriptionSchema,
    handler: async (c, p, auth) => {
      return c.json(await render(c, await setAlerts(db(c.env), tokenOf(auth), p.data?.alerts)));
    },
  });
  route(app, {
    ...common,
    method: "delete",
    summary: "Remove this token's push subscription",
    response: z.object({}),
    handler: async (c, _p, auth) => {
      await unsubscribe(db(c.env), tokenOf(auth));
      return c.json({});
    },
  });
}
