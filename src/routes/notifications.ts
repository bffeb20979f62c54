/** Notifications, their read state, markers and notification settings. */
import { MarkerSchema, NotificationSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { and, desc, eq, lte, sql, type SQL } from "drizzle-orm";
import type { AppEnv } from "../app";
import { db, iso, now, inJson } from "../db/client";
import { markers, notifications, users } from "../db/schema";
import { badRequest, notFound } from "../http/errors";
import { inOrder, pageParams, pageQuery, setLinkHeader } from "../http/pagination";
import { arrayParam, boolParam, enumArrayParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { renderContext } from "../http/urls";
import { renderNotifications, type NotificationRow } from "../render/notification";
import { NotificationSettingsSchema } from "../schemas/account";
import { VISIBILITIES } from "../schemas/status";
import { NOTIFICATION_TYPES, OPT_IN_TYPES, senderMuted } from "../services/notifications";
import { visibleTo } from "../services/visibility";


type Row = NotificationRow;

/**
 * The user's notifications that still make sense: from accounts not blocked either way since, about statuses
 * the user may still see; from muted accounts only `withMuted`.
 */
function shownTo(me: string, withMuted: boolean): SQL {
  const t = Date.now();
  return sql`NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.account_id = ${me} AND b.target_account_id = ${notifications.fromAccountId}) OR (b.account_id = ${notifications.fromAccountId} AND b.target_account_id = ${me}))
    ${withMuted ? sql`` : sql`AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = ${me} AND m.target_account_id = ${notifications.fromAccountId} AND (m.expires_at IS NULL OR m.expires_at > ${t}))`}
    AND (${notifications.statusId} IS NULL OR EXISTS (SELECT 1 FROM statuses WHERE statuses.id = ${notifications.statusId} AND ${visibleTo(me)}))`;
}

const selectRows = (c: Ctx) =>
  db(c.env)
    .select({
      n: notifications,
      isMuted: senderMuted(Date.now()),
    })
    .from(notifications);

const render = (c: Ctx, me: string, rows: Row[]) => renderNotifications(db(c.env), renderContext(c, me), rows);

const flat = (rows: { n: typeof notifications.$inferSelect; isMuted: number }[]): Row[] => rows.map((r) => ({ ...r.n, isMuted: r.isMuted }));

async function own(c: Ctx, me: string, id: string): Promise<Row> {
  const row = await selectRows(c).where(and(eq(notifications.id, id), eq(notifications.accountId, me))).get();
  if (!row) throw notFound();
  return flat([row])[0];
}


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
    }),
    response: z.array(NotificationSchema),
    handler: async (c, p, auth) => {
      const me = auth.account.id;
      const included = [...(p.include_types ?? []), ...(p.types ?? [])];
      const types = (included.length ? included : NOTIFICATION_TYPES.filter((t) => !OPT_IN_TYPES.includes(t))).filter((t) => !p.exclude_types?.includes(t));
      const q = pageQuery(notifications.id, p);
      const conds: (SQL | undefined)[] = [
        eq(notifications.accountId, me),
        q.where,
        sql`${notifications.type} IN (SELECT value FROM json_each(${JSON.stringify(types)}))`,
        p.account_id ? eq(notifications.fromAccountId, p.account_id) : undefined,
        p.exclude_visibilities?.length
          ? sql`(${notifications.statusId} IS NULL OR (SELECT visibility FROM statuses WHERE id = ${notifications.statusId}) NOT IN (SELECT value FROM json_each(${JSON.stringify(p.exclude_visibilities)})))`
          : undefined,
        shownTo(me, p.with_muted ?? false),
      ];
      const rows = inOrder(flat(await selectRows(c).where(and(...conds)).orderBy(q.orderBy).limit(q.limit)), q);
      setLinkHeader(c, rows.map((r) => r.id));
      return c.json(await render(c, me, rows));
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
      const [rendered] = await render(c, auth.account.id, [await own(c, auth.account.id, p.id)]);
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
      const gone = await db(c.env).delete(notifications).where(and(eq(notifications.id, p.id), eq(notifications.accountId, auth.account.id))).returning({ id: notifications.id });
      if (gone.length === 0) throw notFound();
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
      await db(c.env).delete(notifications).where(eq(notifications.accountId, auth.account.id));
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
      await db(c.env).delete(notifications).where(and(eq(notifications.accountId, auth.account.id), inJson(notifications.id, p.ids)));
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
        const row = await own(c, me, p.id);
        await d.update(notifications).set({ isSeen: true }).where(eq(notifications.id, row.id));
        const [rendered] = await render(c, me, [{ ...row, isSeen: true }]);
        if (!rendered) throw notFound();
        return c.json(rendered);
      }
      if (!p.max_id) throw badRequest("You have to give an id or a max_id");
      const marked = await d
        .update(notifications)
        .set({ isSeen: true })
        .where(and(eq(notifications.accountId, me), lte(notifications.id, p.max_id), eq(notifications.isSeen, false)))
        .returning({ id: notifications.id });
      const ids = marked.map((m) => m.id).sort().reverse().slice(0, 80);
      const rows = ids.length ? flat(await selectRows(c).where(inJson(notifications.id, ids)).orderBy(desc(notifications.id))) : [];
      return c.json(await render(c, me, rows));
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
    response: z.record(z.string(), MarkerSchema.extend({ pleroma: z.object({ unread_count: z.number().int() }).optional() })),
    handler: async (c, p, auth) => c.json(await markersOf(c, auth.account.id, p.timeline ?? ["home", "notifications"])),
  });

  route(app, {
    method: "post",
    path: "/api/v1/markers",
    summary: "Save reading positions (home[last_read_id], notifications[last_read_id])",
    tags: ["Markers"],
    auth: "user",
    scopes: ["write:statuses"],
    params: z.object({ home: z.object({ last_read_id: z.string() }).optional(), notifications: z.object({ last_read_id: z.string() }).optional() }),
    response: z.record(z.string(), MarkerSchema),
    handler: async (c, p, auth) => {
      const me = auth.account.id;
      const t = now();
      const given = (["home", "notifications"] as const).filter((k) => p[k]);
      if (given.length === 0) throw badRequest("Give home[last_read_id] or notifications[last_read_id]");
      for (const timeline of given) {
        await db(c.env)
          .insert(markers)
          .values({ accountId: me, timeline, lastReadId: p[timeline]!.last_read_id, version: 1, updatedAt: t })
          .onConflictDoUpdate({ target: [markers.accountId, markers.timeline], set: { lastReadId: p[timeline]!.last_read_id, version: sql`${markers.version} + 1`, updatedAt: t } });
      }
      return c.json(await markersOf(c, me, [...given]));
    },
  });

  route(app, {
    method: "put",
    path: "/api/v1/pleroma/notification_settings",
    summary: "Notification settings: block_from_strangers, hide_notification_contents",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["write:accounts"],
    params: z.object({ block_from_strangers: boolParam().optional(), hide_notification_contents: boolParam().optional() }),
    response: z.object({ status: z.literal("success") }),
    handler: async (c, p, auth) => {
      const current = NotificationSettingsSchema.parse(auth.user.notificationSettings);
      const next = { ...current, ...Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) };
      await db(c.env).update(users).set({ notificationSettings: next }).where(eq(users.accountId, auth.account.id));
      return c.json({ status: "success" as const });
    },
  });
}

async function markersOf(c: Ctx, me: string, timelines: string[]) {
  const d = db(c.env);
  const [rows, unread] = await d.batch([
    d.select().from(markers).where(and(eq(markers.accountId, me), inJson(markers.timeline, timelines))),
    d.select({ n: sql<number>`count(*)` }).from(notifications).where(and(eq(notifications.accountId, me), eq(notifications.isSeen, false))),
  ]);
  const out: Record<string, unknown> = {};
  for (const m of rows) {
    out[m.timeline] = {
      last_read_id: m.lastReadId,
      version: m.version,
      updated_at: iso(m.updatedAt),
      ...(m.timeline === "notifications" ? { pleroma: { unread_count: unread[0]?.n ?? 0 } } : {}),
    };
  }
  return out;
}

