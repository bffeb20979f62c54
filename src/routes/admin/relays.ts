/**
 * Pleroma's relay admin API (issue 36), as admin-fe's relay page calls it: `GET …/admin/relay` lists the relays
 * followed (`actor`, `followed_back`, and Starling's `state`: pending, accepted, rejected, failed: the cron could not look it up), `POST` with
 * `relay_url` follows one (answering its actor id), `DELETE` with `relay_url` unfollows it. Admins only.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db, now, type DB } from "../../db/client";
import type { UserAuth } from "../../http/auth";
import { route } from "../../http/route";
import { baseUrl } from "../../http/urls";
import { badRequest, notFound } from "../../lib/errors";
import { logEntry } from "../../services/moderation-log";
import { listRelays, relayByUrl, relayUrl, removeRelay, renderRelay } from "../../services/relays";
import { followRelayNow } from "../../federation/fetching/relays";
import { actorOf, ADMIN_TAG } from "./common";
import { allowPrivateAddress } from "../../lib/outbound";

const RelaySchema = z
  .object({
    actor: z.string(),
    followed_back: z.boolean(),
    state: z.enum(["pending", "accepted", "rejected", "failed"]),
  })
  .openapi("AdminRelay");

// `force` (Pleroma's: unfollow even when the relay cannot be reached; Starling never waits for it) as a string or
// as the JSON boolean Pleroma's admin-fe sends.
const relayParams = z.object({
  relay_url: z.string().min(1).max(2048),
  force: z.union([z.string(), z.boolean()]).optional(),
});

/** The moderation log's entry of a relay followed or unfollowed (Pleroma's `relay_follow`, `relay_unfollow`). */
const relayLog = (d: DB, auth: UserAuth, verb: "follow" | "unfollow", url: string) =>
  logEntry(
    d,
    actorOf(auth),
    `relay_${verb}`,
    { target: url },
    `@${auth.account.username} ${verb}ed relay: ${url}`,
    now(),
  );

const admin = { tags: ADMIN_TAG, auth: "user", privilege: "superuser" } as const;
const write = { ...admin, scopes: ["admin:write:follows"], params: relayParams, response: z.string() };

export function registerAdminRelayRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/relay",
    summary: "The relays this instance follows, with whether each follows back and its state",
    ...admin,
    scopes: ["admin:read:follows"],
    response: z.object({ relays: z.array(RelaySchema) }),
    handler: async (c) => c.json({ relays: (await listRelays(db(c.env))).map(renderRelay) }),
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/relay",
    summary: "Follow a relay: a LitePub relay's actor, or a Mastodon-style relay's inbox",
    ...write,
    handler: async (c, p, auth) => {
      const url = relayUrl(p.relay_url, allowPrivateAddress(c.env));
      const d = db(c.env);
      const base = baseUrl(c);
      const log = relayLog(d, auth, "follow", url);
      const followed = await followRelayNow(c.env, base, url, auth.account.id, log);
      if (followed === "not found")
        throw badRequest(`Could not follow relay: ${url} is neither a relay actor nor an inbox`);
      return c.json(followed.actorUri ?? followed.url);
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/pleroma/admin/relay",
    summary: "Unfollow a relay (by the URL it was followed with, or its actor id): nothing more to or from it",
    ...write,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      // Any relay followed before may be unfollowed, http or not.
      const row = await relayByUrl(d, relayUrl(p.relay_url, true));
      if (!row) throw notFound("Relay not found");
      await removeRelay(d, row, auth.account.id, [relayLog(d, auth, "unfollow", row.url)]);
      return c.json(row.actorUri ?? row.url);
    },
  });
}
