/** Timelines (home, public, tag, list), an account's statuses, and favourites. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { SQL } from "drizzle-orm";
import type { AppEnv } from "../app";
import { db } from "../db/client";
import { favourites } from "../db/schema";
import { forbidden } from "../http/errors";
import { pageParams, setLinkHeader } from "../http/pagination";
import { boolParam, enumArrayParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { hostOf, renderContext } from "../http/urls";
import { renderStatuses } from "../render/status";
import { StatusSchema, VISIBILITIES } from "../schemas/status";
import { findAccount } from "../services/accounts";
import { hydrate, hydrateForToken, type Hydrated } from "../services/hydrate";
import { admit, bearer, settleToken, type Auth } from "../http/auth";
import { sha256 } from "../lib/crypto";
import { ownList } from "../services/lists";
import { accountPage, directPage, homePage, publicPage, tagPage, type TimelineFilters } from "../services/timelines";
import { notFound } from "../http/errors";
import { accountById } from "./graph";
import { answerMarked } from "./status-answer";

const timelineParams = {
  ...pageParams(20),
  with_muted: boolParam().optional(),
  exclude_visibilities: enumArrayParam(VISIBILITIES).optional(),
  reply_visibility: z.enum(["following", "self"]).optional(),
  only_media: boolParam().optional(),
  local: boolParam().optional(),
  remote: boolParam().optional(),
};

const LIST_TIMELINE_SCOPES = ["read:statuses", "read:lists"];

type TimelineParams = z.infer<z.ZodObject<typeof timelineParams>>;

const filtersOf = (p: TimelineParams & { instance?: string }): TimelineFilters => ({
  withMuted: p.with_muted,
  excludeVisibilities: p.exclude_visibilities,
  replyVisibility: p.reply_visibility,
  onlyMedia: p.only_media,
  local: p.local,
  remote: p.remote,
  instance: p.instance,
});

type Reorder = (ids: string[], h: Hydrated) => string[];

/**
 * The page and everything its statuses need, in one statement. With a bearer token the statement also reads
 * the token (route() skipped its own look-up: `authInQuery`), so a signed-in read is one round trip; the
 * route's auth rule is applied to what was read before anything is answered. A token that does not qualify
 * on an optional route reads again as anonymous. Link header from the page's ids.
 */
async function answerPage(c: Ctx, rule: { mode: "user" | "optional"; scopes: string[]; auth: Auth | null }, build: (viewerId: string | null) => SQL, withMuted?: boolean, reorder?: Reorder) {
  const d = db(c.env);
  // Folded only when route() left the token to this read; otherwise the caller is already known.
  const token = c.get("auth") === undefined ? bearer(c) : null;
  if (token) {
    const { h, token: found } = await hydrateForToken(d, build("token"), await sha256(token), { withMuted });
    const who = admit(rule.mode, rule.scopes, settleToken(c, found));
    if (who?.account) return respond(c, h, who.account.id, reorder);
  }
  const viewerId = token ? null : (rule.auth?.account?.id ?? (c.get("auth")?.account?.id ?? null));
  return respond(c, await hydrate(d, build(viewerId), viewerId, { withMuted }), viewerId, reorder);
}

function respond(c: Ctx, h: Hydrated, viewerId: string | null, reorder?: Reorder) {
  const ids = reorder ? reorder(h.page, h) : h.page;
  setLinkHeader(c, ids);
  return c.json(renderStatuses(renderContext(c, viewerId), h, ids));
}

export function registerTimelineRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/timelines/home",
    summary: "The user's home timeline",
    tags: ["Timelines"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object(timelineParams),
    response: z.array(StatusSchema),
    authInQuery: true,
    handler: (c, p, auth) => answerPage(c, { mode: "user", scopes: ["read:statuses"], auth }, () => homePage("token", p, filtersOf(p)), p.with_muted),
  });

  route(app, {
    method: "get",
    path: "/api/v1/timelines/direct",
    summary: "Direct statuses the user wrote or is addressed in",
    tags: ["Timelines"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object(timelineParams),
    response: z.array(StatusSchema),
    authInQuery: true,
    handler: (c, p, auth) => answerPage(c, { mode: "user", scopes: ["read:statuses"], auth }, () => directPage(p, filtersOf(p)), p.with_muted),
  });

  route(app, {
    method: "get",
    path: "/api/v1/timelines/public",
    summary: "Public statuses of this instance and others (local: this instance only)",
    tags: ["Timelines"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: z.object({ ...timelineParams, instance: z.string().optional() }),
    response: z.array(StatusSchema),
    authInQuery: true,
    handler: (c, p, auth) => answerPage(c, { mode: "optional", scopes: ["read:statuses"], auth }, (me) => publicPage(me, p, filtersOf(p)), p.with_muted),
  });

  route(app, {
    method: "get",
    path: "/api/v1/timelines/tag/:hashtag",
    summary: "Public statuses with a hashtag",
    tags: ["Timelines"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: z.object({ hashtag: z.string().min(1), ...timelineParams }),
    response: z.array(StatusSchema),
    authInQuery: true,
    handler: (c, p, auth) =>
      answerPage(c, { mode: "optional", scopes: ["read:statuses"], auth }, (me) => tagPage(me, p.hashtag.replace(/^#/, ""), p, filtersOf(p)), p.with_muted),
  });

  route(app, {
    method: "get",
    path: "/api/v1/timelines/list/:list_id",
    summary: "Statuses of a list's members",
    tags: ["Timelines"],
    auth: "user",
    // The spec's scope is read:statuses (it is a timeline); read:lists is also accepted, as before.
    scopes: LIST_TIMELINE_SCOPES,
    params: z.object({ list_id: z.string(), ...timelineParams }),
    response: z.array(StatusSchema),
    handler: async (c, p, auth) => {
      const list = await ownList(db(c.env), auth.account.id, p.list_id);
      return answerPage(c, { mode: "user", scopes: LIST_TIMELINE_SCOPES, auth }, () => homePage(auth.account.id, p, filtersOf(p), list.id), p.with_muted);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/accounts/:id/statuses",
    summary: "An account's statuses (id or nickname); pinned=true gives the pinned ones",
    tags: ["Accounts"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: z.object({
      id: z.string(),
      ...timelineParams,
      pinned: boolParam().optional(),
      exclude_replies: boolParam().optional(),
      exclude_reblogs: boolParam().optional(),
      tagged: z.string().optional(),
    }),
    response: z.array(StatusSchema),
    handler: async (c, p, auth) => {
      const me = auth?.account?.id ?? null;
      const target = await findAccount(db(c.env), p.id, hostOf(c));
      if (!target || (target.account.deactivated && me !== target.account.id)) throw notFound("Can't find user");
      const page = (viewer: string | null) =>
        accountPage(viewer, target.account.id, p, {
          ...filtersOf(p),
          excludeReplies: p.exclude_replies,
          excludeReblogs: p.exclude_reblogs,
          tagged: p.tagged?.replace(/^#/, ""),
          pinned: p.pinned,
        });
      // Pinned statuses come in the order they were pinned, newest pin first.
      const byPin = p.pinned ? (ids: string[], h: Hydrated) => [...ids].sort((a, b) => (h.statuses.get(b)?.pinnedAt ?? 0) - (h.statuses.get(a)?.pinnedAt ?? 0)) : undefined;
      return answerPage(c, { mode: "optional", scopes: ["read:statuses"], auth }, page, true, byPin);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/favourites",
    summary: "Statuses the user favourited, newest favourite first",
    tags: ["Timelines"],
    auth: "user",
    scopes: ["read:favourites"],
    params: z.object(pageParams(20)),
    response: z.array(StatusSchema),
    handler: (c, p, auth) => answerMarked(c, favourites, auth.account.id, auth.account.id, p),
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/accounts/:id/favourites",
    summary: "Statuses an account favourited, unless it hides them",
    tags: ["Timelines"],
    auth: "optional",
    scopes: ["read:favourites"],
    params: z.object({ id: z.string(), ...pageParams(20) }),
    response: z.array(StatusSchema),
    handler: async (c, p, auth) => {
      const me = auth?.account?.id ?? null;
      const target = await accountById(c, p.id);
      if (target.account.hideFavorites && me !== target.account.id) throw forbidden("Can't get favorites");
      return answerMarked(c, favourites, target.account.id, me, p);
    },
  });
}
