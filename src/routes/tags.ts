/**
 * Hashtags: the Tag entity, following and unfollowing tags, the followed tags; and featured tags, which
 * Starling does not keep yet (the real shape, empty, with the auth Mastodon requires).
 */
import { accountToActOn } from "../services/accounts";
import { hostOf } from "../http/urls";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { pageParams, setLinkHeader } from "../http/pagination";
import { route, type Ctx } from "../http/route";
import { baseUrl } from "../http/urls";
import { renderTag } from "../render/tag";
import { FeaturedTagSchema, TrendTagSchema } from "../schemas/instance";
import * as tags from "../services/followed-tags";

export function registerTagRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/followed_tags",
    summary: "Hashtags the user follows, newest followed first (Link header)",
    tags: ["Tags"],
    auth: "user",
    scopes: ["read:follows"],
    params: z.object(pageParams(100)),
    response: z.array(TrendTagSchema),
    handler: async (c, p, auth) => {
      const rows = await tags.followedTagsPage(db(c.env), auth.account.id, p);
      setLinkHeader(
        c,
        rows.map((r) => r.cursor),
      );
      return c.json(rows.map((r) => renderTag(baseUrl(c), r.tag)));
    },
  });

  const answer = async (c: Ctx, viewerId: string | null, tag: string) =>
    c.json(renderTag(baseUrl(c), await tags.tagInfo(db(c.env), viewerId, tag)));

  route(app, {
    method: "get",
    path: "/api/v1/tags/:name",
    summary: "A hashtag: its last week and whether the user follows it (any well-formed name, used or not)",
    tags: ["Tags"],
    auth: "optional",
    scopes: ["read:follows"],
    params: z.object({ name: z.string() }),
    response: TrendTagSchema,
    handler: (c, p, auth) => answer(c, auth?.account?.id ?? null, tags.tagFromPath(p.name)),
  });

  for (const action of ["follow", "unfollow"] as const) {
    route(app, {
      method: "post",
      path: `/api/v1/tags/:name/${action}`,
      summary:
        action === "follow" ? "Follow a hashtag: its public posts join the home timeline" : "Stop following a hashtag",
      tags: ["Tags"],
      auth: "user",
      scopes: ["write:follows"],
      params: z.object({ name: z.string() }),
      response: TrendTagSchema,
      handler: async (c, p, auth) => {
        const tag = tags.tagFromPath(p.name);
        await (action === "follow" ? tags.followTag : tags.unfollowTag)(db(c.env), auth.account.id, tag);
        return answer(c, auth.account.id, tag);
      },
    });
  }

  route(app, {
    method: "get",
    path: "/api/v1/accounts/:id/featured_tags",
    summary: "Hashtags an account features on its profile (none: featuring is not offered yet)",
    tags: ["Accounts"],
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({ id: z.string() }),
    response: z.array(FeaturedTagSchema),
    handler: async (c, p) => {
      await accountToActOn(db(c.env), p.id, hostOf(c));
      return c.json([]);
    },
  });
}
