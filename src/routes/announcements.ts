/** Administrators' announcements as clients see them (src/services/announcements.ts). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { boolParam } from "../http/params";
import { route } from "../http/route";
import { renderAnnouncement } from "../render/announcement";
import { AnnouncementSchema } from "../schemas/instance";
import { dismiss, inForce } from "../services/announcements";

export function registerAnnouncementRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/announcements",
    summary: "Announcements in force, with whether the user dismissed each",
    tags: ["Announcements"],
    // Pleroma shows them to anyone; a token with read:accounts marks which the user has read.
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({ with_dismissed: boolParam().optional() }),
    response: z.array(AnnouncementSchema),
    handler: async (c, p, auth) => {
      const viewer = auth?.account?.id ?? null;
      // Mastodon's rule: a user's dismissed announcements only when asked for; anonymous callers get them all.
      const rows = await inForce(db(c.env), viewer, viewer === null || p.with_dismissed === true);
      return c.json(rows.map((a) => renderAnnouncement(a, a.read)));
    },
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
    handler: async (c, p, auth) => {
      await dismiss(db(c.env), auth.account.id, p.id);
      return c.json({});
    },
  });
}
