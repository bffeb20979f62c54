/**
 * "Connect to Bluesky" (issue 49; services/bluesky-bridge.ts): where the user stands with Bridgy Fed's bridge
 * (GET), opting in by following its bot account (POST, the account resolved over federation first) and out by
 * unfollowing it (DELETE). Pleroma-style paths, so any client (or a plain HTTP call) reaches it; also answered at
 * `/api/pleroma/bluesky_bridge`. And `/.well-known/atproto-did` at `<user>.<DOMAIN>`: Bridgy's redirect, for a user
 * who wants that subdomain as their Bluesky handle (the deploy adds the wildcard route, docs/deploy.md). The same
 * opt-in and opt-out (routes/bluesky-bridge-choice.ts) serve the settings page `/settings/bluesky`
 * (routes/settings-bluesky.ts), registered here.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { db } from "../../db/client";
import { config } from "../../env";
import type { AppEnv } from "../../http/app-env";
import type { UserAuth } from "../../http/auth";
import { route, type Ctx } from "../../http/route";
import { hostOf } from "../../http/urls";
import { BRIDGE_ATPROTO_DID, bridgeState, bridgedAccountUri } from "../../services/bluesky-bridge";
import { optIn, optOut } from "../bluesky-bridge-choice";
import { registerSettingsBlueskyRoutes } from "../settings-bluesky";

const ItemSchema = z.object({
  key: z.enum(["avatar", "account_age", "public_posts", "no_nobridge", "follow_back"]),
  ok: z.boolean(),
  message: z.string(),
});
export const BridgeStateSchema = z
  .object({
    connected: z.boolean(),
    pending: z.boolean(),
    followed_back: z.boolean(),
    bridge: z.string(),
    bluesky_handle: z.string(),
    checklist: z.array(ItemSchema),
    missing: z.array(ItemSchema.shape.key),
  })
  .openapi("BlueskyBridge");

const common = {
  path: "/api/v1/pleroma/bluesky_bridge",
  tags: ["Accounts"],
  auth: "user" as const,
  response: BridgeStateSchema,
};

const state = (c: Ctx, auth: UserAuth) => bridgeState(db(c.env), auth.account, auth.user, hostOf(c));

export function registerBlueskyBridgeRoutes(app: OpenAPIHono<AppEnv>) {
  registerSettingsBlueskyRoutes(app);
  route(app, {
    ...common,
    method: "get",
    summary: "Where the account stands with the Bluesky bridge (Bridgy Fed): connected, and what its checklist misses",
    scopes: ["read:accounts"],
    handler: async (c, _p, auth: UserAuth) => c.json(await state(c, auth)),
  });

  route(app, {
    ...common,
    method: "post",
    summary: "Connect to Bluesky: follow the bridge's account (it follows back)",
    scopes: ["follow", "write:follows"],
    handler: async (c, _p, auth: UserAuth) => {
      await optIn(c, auth.account);
      return c.json(await state(c, auth));
    },
  });

  route(app, {
    ...common,
    method: "delete",
    summary: "Disconnect from Bluesky: unfollow the bridge's account",
    scopes: ["follow", "write:follows"],
    handler: async (c, _p, auth: UserAuth) => {
      await optOut(c, auth.account);
      return c.json(await state(c, auth));
    },
  });

  // `<user>.<DOMAIN>/.well-known/atproto-did`: Bridgy answers for the account, when it is bridged (follows the
  // bridge); nothing is said of other accounts, nor at the instance's own domain.
  app.get("/.well-known/atproto-did", async (c) => {
    const domain = config(c.env).domain?.toLowerCase();
    const host = new URL(c.req.url).hostname.toLowerCase();
    const sub = domain && host.endsWith(`.${domain}`) ? host.slice(0, -domain.length - 1) : null;
    const uri = sub && /^[a-z0-9_]+$/.test(sub) ? await bridgedAccountUri(db(c.env), sub) : null;
    if (!uri) return c.json({ error: "Not found" }, 404);
    const target = `${BRIDGE_ATPROTO_DID}?protocol=ap&id=${encodeURIComponent(uri)}`;
    return c.redirect(target, 302);
  });
}
