/**
 * Hashtags a user follows or features. Starling keeps neither yet: the real entity shapes, empty, with the
 * auth Mastodon requires.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../app";
import { pageParams } from "../http/pagination";
import { route } from "../http/route";
import { FeaturedTagSchema, TrendTagSchema } from "../schemas/instance";
import { accountById } from "./graph";

export function registerTagRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/followed_tags",
    summary: "Hashtags the user follows (none: following hashtags is not offered yet)",
    tags: ["Tags"],
    auth: "user",
    scopes: ["read:follows"],
    params: z.object(pageParams(100)),
    response: z.array(TrendTagSchema),
    handler: (c) => c.json([]),
  });

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
      await accountById(c, p.id);
      return c.json([]);
    },
  });
}
