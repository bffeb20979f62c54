/**
 * Remote follow and interaction (issue 34), both directions, without JavaScript.
 * - Outgoing: `POST /api/v1/pleroma/remote_interaction` (Pleroma 2.5: `ap_id` + the visitor's `profile` → the
 *   URL their server's subscribe template gives) and `POST /main/ostatus` (Pleroma's form; the public pages'
 *   "follow from your server" form), which redirects the browser there. `GET /main/ostatus` shows the form.
 * - Incoming: `GET /authorize_interaction?uri=` (Mastodon) and `GET /ostatus_subscribe?acct=` (Pleroma; the
 *   template WebFinger announces): resolves what another server sent its user here for (through resolve.ts and
 *   its SSRF guard), asks a signed-out browser to sign in first, then shows a confirmation whose POST (CSRF)
 *   follows, favourites, boosts or replies through the same services as the client API, effects and all.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { db } from "../db/client";
import { config } from "../env";
import { resolveAny, resolveEnv } from "../federation/fetching/resolve";
import { visitorTemplate } from "../federation/fetching/remote-follow";
import type { AppEnv } from "../http/app-env";
import { csrfToken, csrfValid, FORM_PAGE_HEADERS } from "../http/browser";
import { sessionUser } from "../http/page-sign-in";
import { parseParams } from "../http/params";
import { after, route, throttle, type Ctx } from "../http/route";
import { baseUrl, fromOtherOrigin, hostOf, renderContext } from "../http/urls";
import { ApiError, badRequest } from "../lib/errors";
import { renderAccount } from "../render/account";
import { authorizeInteractionPage, remoteFollowPage, type RemoteFollowForm } from "../render/interaction-pages";
import { messagePage } from "../render/pages";
import { renderStatuses } from "../render/status";
import { accountToActOn } from "../services/accounts";
import { follow } from "../services/graph";
import { hydrate } from "../services/hydrate";
import { loadRelationships } from "../services/relationships";
import { interactionUrl, localApId, parseVisitorHandle, subscribeTemplate } from "../services/remote-interaction";
import { splitAcct } from "../lib/acct";
import * as actions from "../services/status-actions";
import { createStatus } from "../services/statuses";
import { postContext } from "./statuses";

const httpUrl = z
  .string()
  .max(2000)
  .regex(/^https?:\/\/\S+$/i, "must be an http(s) URL");

/** The URL the visitor's server gives for `apId`, or null (bad handle, unknown server, no template). */
async function visitorUrl(c: Ctx, profile: string, apId: string): Promise<string | null> {
  // A visitor of this very instance (by the host reached or the configured domain, with or without a dot):
  // looked up here, never over WebFinger to ourselves.
  const own = splitAcct(profile);
  const hosts = [hostOf(c), config(c.env).domain].filter(Boolean).map((h) => h!.toLowerCase());
  if (own?.host && hosts.includes(own.host)) {
    const local = await localApId(db(c.env), { nickname: own.username });
    return local ? interactionUrl(subscribeTemplate(baseUrl(c)), apId) : null;
  }
  const handle = parseVisitorHandle(profile);
  const template = handle && (await visitorTemplate(c.env, baseUrl(c), handle));
  return template ? interactionUrl(template, apId) : null;
}

const remoteFollowParams = z.object({
  user: z.object({ nickname: z.string().max(100).optional(), profile: z.string().max(320).optional() }).optional(),
  status: z.object({ status_id: z.string().max(100).optional(), profile: z.string().max(320).optional() }).optional(),
  // Pleroma-FE's "Remote follow" button posts these flat, with an empty profile: the form is shown to fill it.
  nickname: z.string().max(100).optional(),
  profile: z.string().max(320).optional(),
});
const remoteFollowQuery = z.object({
  nickname: z.string().max(100).optional(),
  status_id: z.string().max(100).optional(),
  profile: z.string().max(320).optional(),
});

const interactionQuery = z.object({ uri: z.string().max(2000).optional(), acct: z.string().max(2000).optional() });
const interactionForm = z.object({
  csrf_token: z.string().max(200).optional(),
  id: z.string().max(100).default(""),
  action: z.enum(["follow", "favourite", "reblog", "reply"]).optional(),
  /** A reply's text (its limits are posting's own). */
  status: z.string().max(100_000).optional(),
});

const page = (c: Ctx, body: ReturnType<typeof messagePage>, status: 200 | 400 | 403 | 404 | 422 | 429 = 200) =>
  c.html(body, status, FORM_PAGE_HEADERS);

export function registerRemoteInteractionRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/remote_interaction",
    summary: "The URL of the visitor's server where they can follow or interact with ap_id (remote follow)",
    tags: ["Pleroma"],
    auth: "none",
    rateLimit: { name: "remoteInteraction" },
    params: z.object({ ap_id: httpUrl, profile: z.string().max(320) }),
    response: z.object({ url: z.string() }),
    handler: async (c, p) => {
      const url = await visitorUrl(c, p.profile, p.ap_id);
      // Pleroma's words for every failure (unparsable handle, unknown server or account, no template).
      if (!url) throw badRequest("Couldn't find user");
      return c.json({ url });
    },
  });

  app.get("/main/ostatus", async (ctx) => {
    const c = ctx as unknown as Ctx;
    const p = await parseParams(c, remoteFollowQuery);
    const form = await followForm(c, p.nickname ? { nickname: p.nickname } : { statusId: p.status_id });
    if (!form) return page(c, messagePage("Not found", "There is nothing to follow or interact with here."), 404);
    return page(c, remoteFollowPage({ ...form, profile: p.profile }));
  });

  app.post("/main/ostatus", async (ctx) => {
    const c = ctx as unknown as Ctx;
    if (fromOtherOrigin(c)) return page(c, messagePage("Refused", "Use the form on this server's own pages."), 403);
    const p = await parseParams(c, remoteFollowParams);
    const nickname = p.user?.nickname ?? p.nickname;
    const form = await followForm(c, nickname ? { nickname } : { statusId: p.status?.status_id });
    if (!form) return page(c, messagePage("Not found", "There is nothing to follow or interact with here."), 404);
    const profile = (p.user?.profile ?? p.status?.profile ?? p.profile ?? "").trim();
    if (!p.user && !p.status && !profile) return page(c, remoteFollowPage({ ...form, profile }));
    const again = (error: string, status: 422 | 429) => page(c, remoteFollowPage({ ...form, profile, error }), status);
    if (!parseVisitorHandle(profile)) return again("Enter your handle as you@your.server.", 422);
    try {
      await throttle(c, "remoteInteraction", undefined);
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) return again("Too many attempts. Wait a moment.", 429);
      throw e;
    }
    const url = await visitorUrl(c, profile, form.apId);
    if (!url) return again(`Could not find ${profile}, or its server offers no way to follow from there.`, 422);
    return c.redirect(url, 303);
  });

  const showInteraction = async (ctx: unknown) => {
    const c = ctx as Ctx;
    const p = await parseParams(c, interactionQuery);
    const q = (p.uri ?? p.acct ?? "").trim();
    if (!q) return page(c, messagePage("Nothing to show", "The link names no account or post."), 400);
    const me = await sessionUser(c);
    if (!me) {
      const here = new URL(c.req.url);
      return c.redirect(`/auth/sign_in?return_to=${encodeURIComponent(here.pathname + here.search)}`, 303);
    }
    const d = db(c.env);
    // Resolving may fetch from other servers: only for a signed-in user, as search does.
    const found = await resolveAny(resolveEnv(c.env, baseUrl(c), hostOf(c)), q, { background: c.executionCtx });
    const ctxR = renderContext(c, me.account.id);
    const csrf = csrfToken(c, "/authorize_interaction");
    if (found && "account" in found && !found.account.deactivated) {
      const rel = (await loadRelationships(d, me.account.id, [found.account.id])).get(found.account.id);
      return page(
        c,
        authorizeInteractionPage({
          csrf,
          me: me.account.username,
          account: {
            entity: renderAccount(ctxR, found),
            self: found.account.id === me.account.id,
            following: rel?.following ?? false,
            requested: rel?.requested ?? false,
          },
        }),
      );
    }
    if (found && "statusId" in found) {
      // What this user may see, as the API would show it: nothing for a post they may not see.
      const h = await hydrate(d, [found.statusId], me.account.id);
      const [status] = renderStatuses(ctxR, h, [found.statusId]);
      if (status)
        return page(c, authorizeInteractionPage({ csrf, me: me.account.username, status: status.reblog ?? status }));
    }
    return page(c, messagePage("Not found", `Could not find ${q}.`), 404);
  };
  app.get("/authorize_interaction", showInteraction);
  app.get("/ostatus_subscribe", showInteraction);
  // Mastodon before 3.0 announced `/authorize_follow?acct={uri}`: links made then still arrive.
  app.get("/authorize_follow", showInteraction);

  app.post("/authorize_interaction", async (ctx) => {
    const c = ctx as unknown as Ctx;
    const p = await parseParams(c, interactionForm);
    if (!csrfValid(c, p.csrf_token))
      return page(c, messagePage("Failed", "The form expired. Go back, reload the page and try again."), 403);
    const me = await sessionUser(c);
    if (!me) return page(c, messagePage("Signed out", "Sign in again, then open the link again."), 403);
    const d = db(c.env);
    try {
      if (p.action === "follow") {
        const target = await accountToActOn(d, p.id, hostOf(c));
        const done = await follow(d, me.account, target.account, {});
        after(c, done.effects);
        const who = `@${renderAccount(renderContext(c, me.account.id), target).acct}`;
        return page(
          c,
          messagePage(
            done.relationship.following ? "Followed" : "Follow requested",
            done.relationship.following ? `You now follow ${who}.` : `Your request to follow ${who} was sent.`,
          ),
        );
      }
      if (p.action === "favourite" || p.action === "reblog") {
        const done =
          p.action === "favourite"
            ? await actions.favourite(d, me.account, p.id, true)
            : await actions.reblog(d, me.account, p.id, {
                base: baseUrl(c),
                inlineFanoutMax: config(c.env).inlineFanoutMax,
              });
        after(c, done.effects);
        return page(
          c,
          messagePage("Done", p.action === "favourite" ? "You favourited the post." : "You boosted the post."),
        );
      }
      if (p.action === "reply") {
        // Posted as the API posts (mentions resolved, effects through the door), with the session's rights.
        const created = await createStatus(postContext(c, { account: me.account, user: me.user, app: null }), {
          status: p.status,
          in_reply_to_id: p.id,
          narrowToParent: true,
        });
        if (!("earlier" in created)) after(c, created.effects);
        return page(c, messagePage("Replied", "Your reply is posted."));
      }
      return page(c, messagePage("Nothing to do", "Choose what to do on the previous page."), 400);
    } catch (e) {
      if (!(e instanceof ApiError) || e.status >= 500) throw e;
      return page(
        c,
        messagePage("That did not work", e.message),
        e.status === 404 ? 404 : e.status === 403 ? 403 : 422,
      );
    }
  });
}

/** The public pages' form for a local account or status, with its ActivityPub id; null when the pages hide it. */
async function followForm(
  c: Ctx,
  target: { nickname?: string; statusId?: string },
): Promise<(RemoteFollowForm & { apId: string }) | null> {
  const apId = await localApId(db(c.env), target);
  if (!apId) return null;
  return target.nickname
    ? { field: "user", id: target.nickname, what: `@${target.nickname}@${hostOf(c)}`, apId }
    : { field: "status", id: target.statusId!, what: "this post", apId };
}
