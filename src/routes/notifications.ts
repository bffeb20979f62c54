/** Notifications, their read state, markers and notification settings. */
import { MarkerSchema, NotificationSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { badRequest, notFound } from "../lib/errors";
import { pageParams, setLinkHeader } from "../http/pagination";
import { arrayParam, boolParam, enumArrayParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { renderContext } from "../http/urls";
import { renderMarkers } from "../render/marker";
import { renderNotifications } from "../render/notification";
import { readPage } from "./page-read";
import { VISIBILITIES } from "../schemas/status";
import * as notes from "../services/notifications";
import { NOTIFICATION_TYPES, type NotificationRow } from "../services/notifications";

const render = async (c: Ctx, me: string, rows: NotificationRow[]) =>
  renderNotifications(renderContext(c, me), rows, await notes.loadNotificationsNamed(db(c.env), me, rows));

export function registerNotificationRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/notifications",
    summary: "The user's notifications (chat mentions and reports only when asked for with include_types[])",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    params: z.object({
      ...pageParams(20),
      exclude_types: enumArrayParam(NOTIFICATION_TYPES).optional(),
      include_types: enumArrayParam(NOTIFICATION_TYPES).optional(),
      // Mastodon 3.5's name for include_types.
      types: enumArrayParam(NOTIFICATION_TYPES).optional(),
      account_id: z.string().optional(),
      exclude_visibilities: enumArrayParam(VISIBILITIES).optional(),
      with_muted: boolParam().optional(),
      include_filtered: boolParam().optional(),
    }),
    response: z.array(NotificationSchema),
    authInQuery: true,
    handler: async (c, p, auth) => {
      const query = {
        // Given, even if every value was unknown here (and so dropped), it still means "only these": then none.
        include: p.include_types || p.types ? [...(p.include_types ?? []), ...(p.types ?? [])] : undefined,
        exclude: p.exclude_types,
        accountId: p.account_id,
        excludeVisibilities: p.exclude_visibilities,
        withMuted: p.with_muted,
        includeFiltered: p.include_filtered,
      };
      // The token, the page and everything it names: one statement.
      const page = notes.notificationPage(query, p);
      const h = await readPage(
        c,
        { mode: "user", scopes: ["read:notifications"], auth },
        { page: () => page.statusIds, ctes: page.ctes, parts: page.parts },
      );
      const { rows, named } = notes.notificationsRead(h);
      setLinkHeader(
        c,
        rows.map((r) => r.id),
      );
      return c.json(renderNotifications(renderContext(c, h.viewerId), rows, named));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/notifications/:id",
    summary: "A notification",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:notifications"],
    params: z.object({ id: z.string() }),
    response: NotificationSchema,
    handler: async (c, p, auth) => {
      const [rendered] = await render(c, auth.account.id, [
        await notes.ownNotification(db(c.env), auth.account.id, p.id),
      ]);
      if (!rendered) throw notFound();
      return c.json(rendered);
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/notifications/:id/dismiss",
    summary: "Delete a notification",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:notifications"],
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      await notes.dismissNotification(db(c.env), auth.account.id, p.id);
      return c.json({});
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/notifications/clear",
    summary: "Delete all notifications",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:notifications"],
    response: z.object({}),
    handler: async (c, _p, auth) => {
      await notes.clearNotifications(db(c.env), auth.account.id);
      return c.json({});
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/notifications/destroy_multiple",
    summary: "Delete the given notifications",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:notifications"],
    params: z.object({ ids: arrayParam(z.string(), 100).pipe(z.array(z.string()).min(1)) }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      await notes.clearNotifications(db(c.env), auth.account.id, p.ids);
      return c.json({});
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/notifications/read",
    summary: "Mark one notification (id) or all up to one (max_id, answering at most 80) as read",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:notifications"],
    params: z.object({ id: z.string().optional(), max_id: z.string().optional() }),
    response: z.union([NotificationSchema, z.array(NotificationSchema)]),
    handler: async (c, p, auth) => {
      const me = auth.account.id;
      const d = db(c.env);
      if (p.id && p.max_id) throw badRequest("Give either id or max_id, not both");
      if (p.id) {
        const [rendered] = await render(c, me, [await notes.markOneRead(d, me, p.id)]);
        if (!rendered) throw notFound();
        return c.json(rendered);
      }
      if (!p.max_id) throw badRequest("You have to give an id or a max_id");
      return c.json(await render(c, me, await notes.markReadUpTo(d, me, p.max_id)));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/markers",
    summary: "Reading positions of the home timeline and notifications",
    tags: ["Markers"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object({ timeline: enumArrayParam(["home", "notifications"]).optional() }),
    response: z.record(
      z.string(),
      MarkerSchema.extend({ pleroma: z.object({ unread_count: z.number().int() }).optional() }),
    ),
    handler: async (c, p, auth) => c.json(await markers(c, auth.account.id, p.timeline ?? ["home", "notifications"])),
  });

  route(app, {
    method: "post",
    path: "/api/v1/markers",
    summary: "Save reading positions (home[last_read_id], notifications[last_read_id])",
    tags: ["Markers"],
    auth: "user",
    scopes: ["write:statuses"],
    params: z.object({
      home: z.object({ last_read_id: z.string() }).optional(),
      notifications: z.object({ last_read_id: z.string() }).optional(),
    }),
    response: z.record(z.string(), MarkerSchema),
    handler: async (c, p, auth) => {
      const given = await notes.saveMarkers(db(c.env), auth.account.id, {
        home: p.home?.last_read_id,
        notifications: p.notifications?.last_read_id,
      });
      return c.json(await markers(c, auth.account.id, given));
    },
  });

  route(app, {
    method: "put",
    path: "/api/v1/pleroma/notification_settings",
    summary: "Notification settings: block_from_strangers, hide_notification_contents",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:accounts"],
    params: z.object({
      block_from_strangers: boolParam().optional(),
      hide_notification_contents: boolParam().optional(),
    }),
    response: z.object({ status: z.literal("success") }),
    handler: async (c, p, auth) => {
      await notes.updateNotificationSettings(db(c.env), auth.account.id, auth.user.notificationSettings, p);
      return c.json({ status: "success" as const });
    },
  });
}

async function markers(c: Ctx, me: string, timelines: string[]) {
  const { rows, unread } = await notes.markersOf(db(c.env), me, timelines);
  return renderMarkers(rows, unread);
}
