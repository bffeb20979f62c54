/** Instance information and the empty-by-design Mastodon endpoints. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../app";
import { db } from "../db/client";
import { notFound } from "../http/errors";
import { route } from "../http/route";
import { baseUrl, hostOf } from "../http/urls";
import { renderInstance } from "../render/instance";
import { InstanceSchema } from "../schemas/instance";
import { instanceStats, peers } from "../services/instance";
import { vapidKeys } from "../services/instance-keys";

export function registerInstanceRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/instance",
    summary: "Information about this instance",
    tags: ["Instance"],
    auth: "none",
    response: InstanceSchema,
    handler: async (c) => {
      const [stats, vapid] = await Promise.all([instanceStats(db(c.env)), vapidKeys(c.env)]);
      return c.json(renderInstance(c.env, baseUrl(c), hostOf(c), stats, vapid.publicKey));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/instance/peers",
    summary: "Domains this instance knows of",
    tags: ["Instance"],
    auth: "none",
    response: z.array(z.string()),
    handler: async (c) => c.json(await peers(db(c.env))),
  });

  // Accepted so clients that ask get a well-formed empty answer (the spec lists them as unsupported).
  for (const path of ["/api/v1/suggestions", "/api/v1/trends", "/api/v1/identity_proofs"]) {
    route(app, {
      method: "get",
      path,
      summary: "Not offered by this server: always empty",
      tags: ["Instance"],
      auth: "none",
      response: z.array(z.unknown()).max(0),
      handler: (c) => c.json([]),
    });
  }

  route(app, {
    method: "get",
    path: "/api/v1/featured_tags",
    summary: "Not offered by this server: 404",
    tags: ["Instance"],
    auth: "none",
    handler: () => {
      throw notFound("Not found");
    },
  });
}
