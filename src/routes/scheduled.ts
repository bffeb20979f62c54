import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { pageParams, setLinkHeader } from "../http/pagination";
import { route } from "../http/route";
import { renderContext } from "../http/urls";
import { ScheduledStatusSchema } from "../schemas/status";
import { renderScheduled } from "../render/scheduled";
import { listScheduled, reschedule, scheduledById, unschedule } from "../services/scheduled";

export function registerScheduledRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/scheduled_statuses",
    summary: "Your scheduled statuses, newest first (max_id, since_id, min_id, limit; Link header)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object(pageParams(20)),
    response: z.array(ScheduledStatusSchema),
    handler: async (c, p, auth) => {
      const ctx = renderContext(c, auth.account.id);
      const page = await listScheduled(db(c.env), auth.account.id, p);
      setLinkHeader(
        c,
        page.map((s) => s.row.id),
      );
      return c.json(page.map((s) => renderScheduled(ctx, s.row, s.media)));
    },
  });
  route(app, {
    method: "get",
    path: "/api/v1/scheduled_statuses/:id",
    summary: "A scheduled status",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object({ id: z.string() }),
    response: ScheduledStatusSchema,
    handler: async (c, p, auth) => {
      const s = await scheduledById(db(c.env), auth.account.id, p.id);
      return c.json(renderScheduled(renderContext(c, auth.account.id), s.row, s.media));
    },
  });
  route(app, {
    method: "put",
    path: "/api/v1/scheduled_statuses/:id",
    summary: "Move a scheduled status (only its time can change)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["write:statuses"],
    params: z.object({ id: z.string(), scheduled_at: z.string() }),
    response: ScheduledStatusSchema,
    handler: async (c, p, auth) => {
      const s = await reschedule(db(c.env), auth.account.id, p.id, p.scheduled_at);
      return c.json(renderScheduled(renderContext(c, auth.account.id), s.row, s.media));
    },
  });
  route(app, {
    method: "delete",
    path: "/api/v1/scheduled_statuses/:id",
    summary: "Cancel a scheduled status",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["write:statuses"],
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      await unschedule(db(c.env), auth.account.id, p.id);
      return c.json({});
    },
  });
}
