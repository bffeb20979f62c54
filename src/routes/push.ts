/** Web Push subscription of the current access token. */
import { PushSubscriptionSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { AppEnv } from "../app";
import { db } from "../db/client";
import { pushSubscriptions } from "../db/schema";
import type { UserAuth } from "../http/auth";
import { forbidden, notFound } from "../http/errors";
import { boolParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { ALERTS, alertsFrom, renderSubscription, subscribe } from "../services/push";

const alertsParam = z.object({ alerts: z.object(Object.fromEntries(ALERTS.map((a) => [a, boolParam().optional()]))).optional() }).optional();

/** The subscription belongs to the token: a password (Basic) login has none. */
function tokenOf(auth: UserAuth): string {
  if (!auth.tokenId) throw forbidden("Push subscriptions need an access token");
  return auth.tokenId;
}

async function current(c: Ctx, auth: UserAuth) {
  const row = await db(c.env).select().from(pushSubscriptions).where(eq(pushSubscriptions.tokenId, tokenOf(auth))).get();
  if (!row) throw notFound();
  return row;
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
      return c.json(await renderSubscription(c.env, row));
    },
  });
  route(app, {
    ...common,
    method: "get",
    summary: "This token's push subscription",
    response: PushSubscriptionSchema,
    handler: async (c, _p, auth) => c.json(await renderSubscription(c.env, await current(c, auth))),
  });
  route(app, {
    ...common,
    method: "put",
    summary: "Change which alerts this token's subscription receives (only data[alerts] can change)",
    params: z.object({ data: alertsParam }),
    response: PushSubscriptionSchema,
    handler: async (c, p, auth) => {
      const row = await current(c, auth);
      const alerts = alertsFrom(p.data?.alerts, row.alerts);
      await db(c.env).update(pushSubscriptions).set({ alerts }).where(eq(pushSubscriptions.id, row.id));
      return c.json(await renderSubscription(c.env, { ...row, alerts }));
    },
  });
  route(app, {
    ...common,
    method: "delete",
    summary: "Remove this token's push subscription",
    response: z.object({}),
    handler: async (c, _p, auth) => {
      await db(c.env).delete(pushSubscriptions).where(eq(pushSubscriptions.tokenId, tokenOf(auth)));
      return c.json({});
    },
  });
}
