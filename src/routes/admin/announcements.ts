/** Pleroma's admin API for announcements (`announcements_manage_announcements`). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { actorOf } from "./common";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db } from "../../db/client";
import { badRequest } from "../../lib/errors";
import { boolParam, intParam, offsetParam } from "../../http/params";
import { route } from "../../http/route";
import { renderAnnouncement } from "../../render/announcement";
import { AnnouncementSchema } from "../../schemas/instance";
import {
  createAnnouncement,
  deleteAnnouncement,
  getAnnouncement,
  listAll,
  updateAnnouncement,
} from "../../services/announcements";

/** An ISO 8601 time, or empty/null for none. */
const timeParam = () =>
  z.preprocess(
    (v) => (v === "" ? null : v),
    z
      .string()
      .nullable()
      .transform((s, ctx) => {
        if (s === null) return null;
        const t = Date.parse(s);
        if (Number.isNaN(t)) {
          ctx.addIssue({ code: "custom", message: "is not a valid time" });
          return z.NEVER;
        }
        return t;
      }),
  );

const fields = {
  starts_at: timeParam().optional(),
  ends_at: timeParam().optional(),
  all_day: boolParam().optional(),
};

function checkOrder(startsAt: number | null | undefined, endsAt: number | null | undefined) {
  if (startsAt != null && endsAt != null && endsAt < startsAt) throw badRequest("ends_at must not be before starts_at");
}

export function registerAdminAnnouncementRoutes(app: OpenAPIHono<AppEnv>) {
  const base = { tags: ["Admin"], auth: "user" as const, privilege: "announcements_manage_announcements" as const };

  route(app, {
    ...base,
    method: "get",
    path: "/api/v1/pleroma/admin/announcements",
    summary: "Every announcement, newest first",
    scopes: ["admin:read"],
    params: z.object({
      limit: intParam()
        .optional()
        .transform((n) => (n === undefined || n < 1 ? 20 : Math.min(n, 100))),
      offset: offsetParam().optional(),
    }),
    response: z.array(AnnouncementSchema),
    handler: async (c, p) =>
      c.json((await listAll(db(c.env), p.limit, p.offset ?? 0)).map((a) => renderAnnouncement(a, null))),
  });

  route(app, {
    ...base,
    method: "post",
    path: "/api/v1/pleroma/admin/announcements",
    summary: "Publish an announcement",
    scopes: ["admin:write"],
    params: z.object({ content: z.string().trim().min(1).max(10_000), ...fields }),
    response: AnnouncementSchema,
    handler: async (c, p, auth) => {
      checkOrder(p.starts_at, p.ends_at);
      return c.json(renderAnnouncement(await createAnnouncement(db(c.env), actorOf(auth), p), null));
    },
  });

  route(app, {
    ...base,
    method: "get",
    path: "/api/v1/pleroma/admin/announcements/:id",
    summary: "One announcement",
    scopes: ["admin:read"],
    params: z.object({ id: z.string() }),
    response: AnnouncementSchema,
    handler: async (c, p) => c.json(renderAnnouncement(await getAnnouncement(db(c.env), p.id), null)),
  });

  route(app, {
    ...base,
    method: "patch",
    path: "/api/v1/pleroma/admin/announcements/:id",
    summary: "Change an announcement",
    scopes: ["admin:write"],
    params: z.object({ id: z.string(), content: z.string().trim().min(1).max(10_000).optional(), ...fields }),
    response: AnnouncementSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const current = await getAnnouncement(d, p.id);
      checkOrder(
        p.starts_at === undefined ? current.startsAt : p.starts_at,
        p.ends_at === undefined ? current.endsAt : p.ends_at,
      );
      return c.json(renderAnnouncement(await updateAnnouncement(d, actorOf(auth), p.id, p), null));
    },
  });

  route(app, {
    ...base,
    method: "delete",
    path: "/api/v1/pleroma/admin/announcements/:id",
    summary: "Delete an announcement",
    scopes: ["admin:write"],
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      await deleteAnnouncement(db(c.env), actorOf(auth), p.id);
      return c.json({});
    },
  });
}
