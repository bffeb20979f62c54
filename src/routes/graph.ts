/** Follows, follow requests, blocks, mutes, endorsements, subscriptions, relationships and the account lists. */
import { accountToActOn } from "../services/accounts";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { isId } from "../db/ids";
import { blocks, endorsements, followRequests, follows, mutes } from "../db/schema";
import { pageParams } from "../http/pagination";
import { arrayParam, boolParam, durationParam } from "../http/params";
import { after, route, type Ctx } from "../http/route";
import { iso } from "../lib/iso";
import { AccountSchema, RelationshipSchema } from "../schemas/account";
import { familiarFollowers, relatedAccounts } from "../services/account-pages";
import * as graph from "../services/graph";
import { loadRelationships } from "../services/relationships";
import { answerAccounts } from "./account-list";
import { hostOf, renderContext } from "../http/urls";
import { renderAccount } from "../render/account";
import type { UserAuth } from "../http/auth";
import type { AccountRow } from "../services/accounts";

const withRelationships = { with_relationships: boolParam().optional() };

type Action = (c: Ctx, p: any, me: AccountRow, target: AccountRow) => Promise<graph.GraphResult>;

export function registerGraphRoutes(app: OpenAPIHono<AppEnv>) {
  const action = (name: string, scopes: string[], summary: string, run: Action, params: z.ZodRawShape = {}) =>
    route(app, {
      method: "post",
      path: `/api/v1/accounts/:id/${name}`,
      summary,
      tags: ["Relationships"],
      auth: "user",
      scopes,
      params: z.object({ id: z.string(), ...params }),
      response: RelationshipSchema,
      handler: async (c, p, auth: UserAuth) => {
        const target = await accountToActOn(db(c.env), p.id, hostOf(c));
        const result = await run(c, p, auth.account, target.account);
        after(c, result.effects);
        return c.json(result.relationship);
      },
    });

  const d = (c: Ctx) => db(c.env);
  action(
    "follow",
    ["follow", "write:follows"],
    "Follow (or request to follow) an account",
    (c, p, me, t) => graph.follow(d(c), me, t, { reblogs: p.reblogs, notify: p.notify }),
    {
      reblogs: boolParam().optional(),
      notify: boolParam().optional(),
    },
  );
  action("unfollow", ["follow", "write:follows"], "Stop following, or withdraw a follow request", (c, _p, me, t) =>
    graph.unfollow(d(c), me, t),
  );
  action("block", ["follow", "write:blocks"], "Block an account", (c, _p, me, t) => graph.block(d(c), me, t));
  action("unblock", ["follow", "write:blocks"], "Unblock an account", (c, _p, me, t) => graph.unblock(d(c), me, t));
  action(
    "mute",
    ["follow", "write:mutes"],
    "Mute an account",
    // Mastodon's `duration` and Pleroma's `expires_in` (seconds, 0 = forever); Pleroma takes `duration` first too.
    (c, p, me, t) =>
      graph.mute(d(c), me, t, { notifications: p.notifications ?? true, expiresIn: p.duration ?? p.expires_in }),
    {
      notifications: boolParam().optional(),
      duration: durationParam(0).optional(),
      expires_in: durationParam(0).optional(),
    },
  );
  action("unmute", ["follow", "write:mutes"], "Unmute an account", (c, _p, me, t) => graph.unmute(d(c), me, t));
  action(
    "remove_from_followers",
    ["follow", "write:follows"],
    "Remove an account from your followers (a remote one's server is sent a Reject of its Follow)",
    (c, _p, me, t) => graph.removeFromFollowers(d(c), me, t),
  );
  action(
    "note",
    ["write:accounts"],
    "Set a private note on an account (an empty comment removes it)",
    (c, p, me, t) => graph.setAccountNote(d(c), me, t, p.comment ?? ""),
    {
      comment: z.string().max(20_000).optional(),
    },
  );
  action("pin", ["write:accounts"], "Feature (endorse) an account on your profile", (c, _p, me, t) =>
    graph.endorse(d(c), me, t),
  );
  action("unpin", ["write:accounts"], "Stop featuring an account", (c, _p, me, t) => graph.unendorse(d(c), me, t));

  for (const [name, run] of [
    ["subscribe", graph.subscribe],
    ["unsubscribe", graph.unsubscribe],
  ] as const) {
    route(app, {
      method: "post",
      path: `/api/v1/pleroma/accounts/:id/${name}`,
      summary: `${name === "subscribe" ? "Be" : "Stop being"} notified of every post of an account`,
      tags: ["Relationships"],
      auth: "user",
      scopes: ["follow", "write:follows"],
      params: z.object({ id: z.string() }),
      response: RelationshipSchema,
      handler: async (c, p, auth) => {
        const target = await accountToActOn(db(c.env), p.id, hostOf(c));
        return c.json((await run(db(c.env), auth.account, target.account)).relationship);
      },
    });
  }

  route(app, {
    method: "get",
    path: "/api/v1/accounts/relationships",
    summary: "The user's relationships to accounts",
    tags: ["Relationships"],
    auth: "user",
    scopes: ["read:follows"],
    params: z.object({ id: arrayParam(z.string(), 100).optional() }),
    response: z.array(RelationshipSchema),
    handler: async (c, p, auth) => {
      const ids = [...new Set((p.id ?? []).filter(isId))].slice(0, 100);
      const rels = await loadRelationships(db(c.env), auth.account.id, ids);
      // In the order asked, unknown ids left out (Mastodon answers [] when none are given).
      return c.json(ids.flatMap((id) => (rels.has(id) ? [rels.get(id)!] : [])));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/accounts/familiar_followers",
    summary: "For each account asked, the accounts the user follows that follow it (among its newest followers)",
    tags: ["Relationships"],
    auth: "user",
    scopes: ["read:follows"],
    params: z.object({ id: arrayParam(z.string(), 100).optional() }),
    response: z.array(z.object({ id: z.string(), accounts: z.array(AccountSchema) })),
    handler: async (c, p, auth) => {
      // Mastodon answers every id asked, unknown ones with no accounts; a few per request (each is one query).
      const ids = [...new Set((p.id ?? []).filter(isId))].slice(0, 10);
      const found = await familiarFollowers(db(c.env), auth.account.id, ids);
      const ctx = renderContext(c, auth.account.id);
      return c.json(ids.map((id) => ({ id, accounts: (found.get(id) ?? []).map((r) => renderAccount(ctx, r)) })));
    },
  });

  // ---- account lists ----

  for (const [name, by, summary, hideFlag] of [
    ["followers", "targetAccountId", "Accounts following this account", "hideFollowers"],
    ["following", "accountId", "Accounts this account follows", "hideFollows"],
  ] as const) {
    route(app, {
      method: "get",
      path: `/api/v1/accounts/:id/${name}`,
      summary,
      tags: ["Accounts"],
      auth: "required",
      scopes: ["read:accounts"],
      params: z.object({ id: z.string(), ...pageParams(40), ...withRelationships }),
      response: z.array(AccountSchema),
      handler: async (c, p, auth) => {
        const target = await accountToActOn(db(c.env), p.id, hostOf(c));
        const viewerId = auth.account?.id ?? null;
        // A hidden list is empty for everyone but its owner (Pleroma answers [] rather than an error).
        const hidden = target.account[hideFlag] && viewerId !== target.account.id;
        const rows = hidden ? [] : await relatedAccounts(db(c.env), follows, by, target.account.id, p);
        return answerAccounts(c, rows, { viewerId, withRelationships: p.with_relationships });
      },
    });
  }

  const ownList = (
    path: string,
    summary: string,
    scopes: string[],
    run: (c: Ctx, me: string, page: any) => ReturnType<typeof relatedAccounts>,
    extend?: Parameters<typeof answerAccounts>[2]["extend"],
  ) =>
    route(app, {
      method: "get",
      path,
      summary,
      tags: ["Relationships"],
      auth: "user",
      scopes,
      params: z.object({ ...pageParams(40), ...withRelationships }),
      response: z.array(AccountSchema),
      handler: async (c, p, auth) =>
        answerAccounts(c, await run(c, auth.account.id, p), {
          viewerId: auth.account.id,
          withRelationships: p.with_relationships,
          extend,
        }),
    });

  ownList(
    "/api/v1/mutes",
    "Accounts the user mutes",
    ["follow", "read:mutes"],
    (c, me, page) => relatedAccounts(db(c.env), mutes, "accountId", me, page),
    (row) => {
      const expires = (row.relation as { expiresAt: number | null }).expiresAt;
      return { mute_expires_at: expires === null ? null : iso(expires) };
    },
  );
  ownList("/api/v1/blocks", "Accounts the user blocks", ["follow", "read:blocks"], (c, me, page) =>
    relatedAccounts(db(c.env), blocks, "accountId", me, page),
  );
  ownList("/api/v1/follow_requests", "Accounts asking to follow the user", ["follow", "read:follows"], (c, me, page) =>
    relatedAccounts(db(c.env), followRequests, "targetAccountId", me, page),
  );
  ownList("/api/v1/endorsements", "Accounts the user features", ["read:accounts"], (c, me, page) =>
    relatedAccounts(db(c.env), endorsements, "accountId", me, page),
  );

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/accounts/:id/endorsements",
    summary: "Accounts an account features",
    tags: ["Accounts"],
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({ id: z.string(), ...pageParams(40), ...withRelationships }),
    response: z.array(AccountSchema),
    handler: async (c, p, auth) => {
      const target = await accountToActOn(db(c.env), p.id, hostOf(c));
      const rows = await relatedAccounts(db(c.env), endorsements, "accountId", target.account.id, p);
      return answerAccounts(c, rows, { viewerId: auth?.account?.id ?? null, withRelationships: p.with_relationships });
    },
  });

  for (const [name, run] of [
    ["authorize", graph.authorizeRequest],
    ["reject", graph.rejectRequest],
  ] as const) {
    route(app, {
      method: "post",
      path: `/api/v1/follow_requests/:id/${name}`,
      summary: name === "authorize" ? "Accept a follow request" : "Refuse a follow request",
      tags: ["Relationships"],
      auth: "user",
      scopes: ["follow", "write:follows"],
      params: z.object({ id: z.string() }),
      response: RelationshipSchema,
      handler: async (c, p, auth) => {
        const requester = await accountToActOn(db(c.env), p.id, hostOf(c));
        const result = await run(db(c.env), auth.account, requester.account.id);
        after(c, result.effects);
        return c.json(result.relationship);
      },
    });
  }
}
