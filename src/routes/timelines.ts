/** Timelines (home, public, tag, list), an account's statuses, and favourites. */
import { accountToActOn } from "../services/accounts";
import { db } from "../db/client";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { favourites } from "../db/schema";
import { forbidden } from "../lib/errors";
import { pageParams, setLinkHeader, type WalkedPast } from "../http/pagination";
import { boolParam, enumArrayParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { hostOf, renderContext } from "../http/urls";
import { renderStatuses } from "../render/status";
import { StatusSchema, VISIBILITIES } from "../schemas/status";
import { hydrate, type Hydrated } from "../services/hydrate";
import { readPage, type PageRead } from "./page-read";
import { ownListPart } from "../services/lists";
import {
  accountPage,
  directPage,
  homePage,
  publicPage,
  tagPage,
  targetAccount,
  walkOn,
  type TimelineFilters,
} from "../services/timelines";
import { notFound } from "../lib/errors";
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

const hashtag = (name: string) => name.replace(/^#/, "");

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

interface TimelineRead extends PageRead {
  /** The page's order when it is not newest first. */
  reorder?: (ids: string[], h: Hydrated) => string[];
  /** For a bounded walk (public, tag): walked on when it found too little (`walkOn`), with where it stopped. */
  walked?: (viewerId: string | null, ids: string[]) => Promise<{ ids: string[]; past: WalkedPast }>;
}

/**
 * A page of statuses in one statement (`readPage`), answered with its Link header; a public or tag page walked on
 * past a run it found too little in, its further finds read in one more statement.
 */
async function answerPage(c: Ctx, rule: Parameters<typeof readPage>[1], { reorder, walked, ...read }: TimelineRead) {
  let h = await readPage(c, rule, read);
  let ids = reorder ? reorder(h.page, h) : h.page;
  const on = walked ? await walked(h.viewerId, ids) : { ids, past: {} };
  if (on.ids.length !== ids.length) h = await hydrate(db(c.env), on.ids, h.viewerId, { withMuted: read.withMuted });
  ids = on.ids;
  setLinkHeader(c, ids, on.past);
  return c.json(renderStatuses(renderContext(c, h.viewerId), h, ids));
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
    handler: (c, p, auth) =>
      answerPage(
        c,
        { mode: "user", scopes: ["read:statuses"], auth },
        { page: () => homePage(p, filtersOf(p)), withMuted: p.with_muted },
      ),
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
    handler: (c, p, auth) =>
      answerPage(
        c,
        { mode: "user", scopes: ["read:statuses"], auth },
        { page: () => directPage(p, filtersOf(p)), withMuted: p.with_muted },
      ),
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
    handler: (c, p, auth) =>
      answerPage(
        c,
        { mode: "optional", scopes: ["read:statuses"], auth },
        {
          page: (me) => publicPage(me, p, filtersOf(p)),
          withMuted: p.with_muted,
          walked: (me, ids) => walkOn(db(c.env), me, p, filtersOf(p), ids),
        },
      ),
  });

  route(app, {
    method: "get",
    path: "/api/v1/timelines/link",
    summary:
      "Posts about a trending link (Mastodon 4.3): none, since no link trends here (`/api/v1/trends/links` is empty)",
    tags: ["Timelines"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: z.object({ ...timelineParams, url: z.string().url().max(2048) }),
    response: z.array(StatusSchema),
    handler: (c) => c.json([]),
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
      answerPage(
        c,
        { mode: "optional", scopes: ["read:statuses"], auth },
        {
          page: (me) => tagPage(me, hashtag(p.hashtag), p, filtersOf(p)),
          withMuted: p.with_muted,
          walked: (me, ids) => walkOn(db(c.env), me, p, filtersOf(p), ids, hashtag(p.hashtag)),
        },
      ),
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
    authInQuery: true,
    handler: (c, p, auth) =>
      answerPage(
        c,
        { mode: "user", scopes: LIST_TIMELINE_SCOPES, auth },
        {
          page: () => homePage(p, filtersOf(p), p.list_id),
          withMuted: p.with_muted,
          // The list is read with the page: a list that is not the viewer's is not found (and its page is empty).
          parts: [ownListPart(p.list_id)],
          check: (h) => {
            if (!h.extra.has("list")) throw notFound();
          },
        },
      ),
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
    authInQuery: true,
    handler: (c, p, auth) => {
      const target = targetAccount(p.id, hostOf(c));
      const filters = {
        ...filtersOf(p),
        excludeReplies: p.exclude_replies,
        excludeReblogs: p.exclude_reblogs,
        tagged: p.tagged?.replace(/^#/, ""),
        pinned: p.pinned,
      };
      return answerPage(
        c,
        { mode: "optional", scopes: ["read:statuses"], auth },
        {
          page: (viewer) => accountPage(viewer, target.id, p, filters),
          withMuted: true,
          ctes: target.ctes,
          parts: target.parts,
          check: (h) => {
            if (!target.found(h)) throw notFound("Can't find user");
          },
          // Pinned statuses come in the order they were pinned, newest pin first.
          reorder: p.pinned
            ? (ids, h) =>
                [...ids].sort((a, b) => (h.statuses.get(b)?.pinnedAt ?? 0) - (h.statuses.get(a)?.pinnedAt ?? 0))
            : undefined,
        },
      );
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
      const target = await accountToActOn(db(c.env), p.id, hostOf(c));
      if (target.account.hideFavorites && me !== target.account.id) throw forbidden("Can't get favorites");
      return answerMarked(c, favourites, target.account.id, me, p);
    },
  });
}
