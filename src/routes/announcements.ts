/** Administrators' announcements. None exist yet (the admin API will add them): an empty list, and 404 to dismiss. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../app";
import { notFound } from "../http/errors";
import { boolParam } from "../http/params";
import { route } from "../http/route";
import { AnnouncementSchema } from "../schemas/instance";

export function registerAnnouncementRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/announcements",
    summary: "Announcements in force (none yet)",
    tags: ["Announcements"],
    // Pleroma shows them to anyone; a token with read:accounts marks which the user has read.
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({ with_dismissed: boolParam().optional() }),
    response: z.array(AnnouncementSchema),
    handler: (c) => c.json([]),
  });

  route(app, {
    method: "post",
    path: "/api/v1/announcements/:id/dismiss",
    summary: "Mark an announcement as read",
    tags: ["Announcements"],
    auth: "user",
    scopes: ["write:accounts"],
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: () => {
      // No announcement exists, so any id is unknown: Pleroma's answer for one.
      throw notFound();
    },
  });
}
