/**
 * Reports, statuses, invites and the moderation log of the admin API (Pleroma 2.5's `ReportController`,
 * `StatusController`, `InviteController`, `AdminAPIController.list_log`).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { config } from "../../env";
import { db } from "../../db/client";
import { badRequest } from "../../lib/errors";
import { boolParam } from "../../http/params";
import { after, route } from "../../http/route";
import { baseUrl, renderContext } from "../../http/urls";
import { renderReports } from "../../render/admin-report";
import {
  AdminReportSchema,
  AdminReportsSchema,
  AdminStatusSchema,
  InviteSchema,
  ModerationLogSchema,
} from "../../schemas/admin";
import { addNote, deleteNote, listReports, reportById, updateReports } from "../../services/admin-reports";
import { adminDeleteStatus, adminStatusIds, anyStatus, updateStatus } from "../../services/admin-statuses";
import { createInvite, listInvites, renderInvite, revokeInvite } from "../../services/admin-invites";
import { readLog } from "../../services/admin-log";
import { ADMIN_TAG, actorOf, adminStatuses, pageFields } from "./common";

/** A date or date-time; Pleroma's admin-fe sends `2019-04-12` or ISO 8601. */
const dateParam = () =>
  z
    .string()
    .max(40)
    .transform((s, ctx) => {
      const t = Date.parse(s);
      if (Number.isNaN(t)) {
        ctx.addIssue({ code: "custom", message: "invalid date" });
        return z.NEVER;
      }
      return t;
    });

/**
 * An invite's last day: from 1970 to the year 9999, the dates Pleroma's `YYYY-MM-DD` can show (a later one, up to
 * the last a date can hold, overflowed when its day was added and every rendering of the invite failed).
 */
const LAST_INVITE_DAY = Date.UTC(9999, 11, 31);
const inviteDateParam = () =>
  dateParam().refine((t) => t >= 0 && t <= LAST_INVITE_DAY, "expires_at must be a date from 1970 to 9999");

export function registerAdminModerationRoutes(app: OpenAPIHono<AppEnv>) {
  // ---- reports ----
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/reports",
    summary: "Reports, newest first, by state",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:read:reports"],
    privilege: "reports_manage_reports",
    // An unknown state matches nothing rather than failing.
    params: z.object({ state: z.string().max(20).optional(), ...pageFields(50) }),
    response: AdminReportsSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const loaded = await listReports(
        d,
        { state: p.state || undefined, page: p.page, pageSize: p.page_size },
        auth.account.id,
      );
      return c.json({
        total: loaded.total,
        reports: renderReports(renderContext(c, auth.account.id), loaded),
      });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/reports/:id",
    summary: "A report",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:read:reports"],
    privilege: "reports_manage_reports",
    params: z.object({ id: z.string() }),
    response: AdminReportSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const [report] = renderReports(renderContext(c, auth.account.id), await reportById(d, p.id, auth.account.id));
      return c.json(report);
    },
  });

  route(app, {
    method: "patch",
    path: "/api/v1/pleroma/admin/reports",
    summary: "Change the state of reports (`reports: [{id, state}]`); failures are listed per report",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write:reports"],
    privilege: "reports_manage_reports",
    params: z.object({
      reports: z
        .array(z.object({ id: z.string().max(64), state: z.string().max(20) }))
        .min(1)
        .max(100),
    }),
    noContent: true,
    handler: async (c, p, auth) => {
      const errors = await updateReports(db(c.env), actorOf(auth), p.reports);
      return errors.length ? c.json(errors, 400) : c.body(null, 204);
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/reports/:id/notes",
    summary: "Leave a note on a report",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write:reports"],
    privilege: "reports_manage_reports",
    params: z.object({ id: z.string(), content: z.string().trim().min(1).max(5000) }),
    noContent: true,
    handler: async (c, p, auth) => {
      await addNote(db(c.env), actorOf(auth), p.id, p.content);
      return c.body(null, 204);
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/pleroma/admin/reports/:report_id/notes/:id",
    summary: "Delete a note of a report",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write:reports"],
    privilege: "reports_manage_reports",
    params: z.object({ report_id: z.string(), id: z.string() }),
    noContent: true,
    handler: async (c, p, auth) => {
      await deleteNote(db(c.env), actorOf(auth), p.report_id, p.id);
      return c.body(null, 204);
    },
  });

  // ---- statuses ----
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/statuses",
    summary: "Statuses, newest first (`godmode` includes private and direct ones)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:read:statuses"],
    privilege: "messages_read",
    params: z.object({
      local_only: boolParam().optional(),
      with_reblogs: boolParam().optional(),
      godmode: boolParam().optional(),
      ...pageFields(20),
    }),
    response: z.array(AdminStatusSchema),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const { ids } = await adminStatusIds(d, {
        localOnly: p.local_only ?? false,
        withReblogs: p.with_reblogs ?? false,
        godmode: p.godmode ?? false,
        page: p.page,
        pageSize: p.page_size,
      });
      return c.json(await adminStatuses(c, auth, ids));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/statuses/:id",
    summary: "A status, whatever its visibility",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:read:statuses"],
    privilege: "messages_read",
    params: z.object({ id: z.string() }),
    response: AdminStatusSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const s = await anyStatus(d, p.id);
      const [rendered] = await adminStatuses(c, auth, [s.id]);
      return c.json(rendered);
    },
  });

  route(app, {
    method: "put",
    path: "/api/v1/pleroma/admin/statuses/:id",
    summary: "Change a status's `sensitive` flag and/or `visibility` (public, unlisted, private)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write:statuses"],
    privilege: "messages_delete",
    params: z.object({ id: z.string(), sensitive: boolParam().optional(), visibility: z.string().max(20).optional() }),
    response: AdminStatusSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      await updateStatus(d, actorOf(auth), p.id, { sensitive: p.sensitive, visibility: p.visibility });
      const [rendered] = await adminStatuses(c, auth, [p.id]);
      return c.json(rendered);
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/pleroma/admin/statuses/:id",
    summary: "Delete a status (federated and streamed as its author's deletion)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write:statuses"],
    privilege: "messages_delete",
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      after(c, await adminDeleteStatus(db(c.env), actorOf(auth), p.id));
      return c.json({});
    },
  });

  // ---- invites ----
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/users/invite_token",
    summary: "Create an invite (`max_use`, `expires_at` date)",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write:invites"],
    privilege: "users_manage_invites",
    params: z.object({
      max_use: z.coerce.number().int().min(1).max(100_000).optional(),
      expires_at: inviteDateParam().optional(),
    }),
    response: InviteSchema,
    handler: async (c, p, auth) => {
      // A date means through the end of that day.
      const expires = p.expires_at === undefined ? undefined : p.expires_at + 86_400_000 - 1;
      return c.json(
        renderInvite(await createInvite(db(c.env), actorOf(auth), { maxUse: p.max_use, expiresAt: expires })),
      );
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/users/invites",
    summary: "Invites, newest first",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:read:invites"],
    privilege: "users_manage_invites",
    response: z.object({ invites: z.array(InviteSchema) }),
    handler: async (c) => c.json({ invites: (await listInvites(db(c.env))).map(renderInvite) }),
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/users/revoke_invite",
    summary: "Revoke an invite by its token",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write:invites"],
    privilege: "users_manage_invites",
    params: z.object({ token: z.string().min(1).max(200) }),
    response: InviteSchema,
    handler: async (c, p, auth) => c.json(renderInvite(await revokeInvite(db(c.env), actorOf(auth), p.token))),
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/users/email_invite",
    summary: "E-mail a new one-use invite",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write:invites"],
    privilege: "users_manage_invites",
    params: z.object({ email: z.string().max(320), name: z.string().max(100).optional() }),
    noContent: true,
    handler: async (c, p, auth) => {
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(p.email)) throw badRequest("Invalid email");
      const mailTo = { cfg: config(c.env), base: baseUrl(c), email: p.email, name: p.name };
      await createInvite(db(c.env), actorOf(auth), {}, mailTo);
      after(c, { mail: true });
      return c.body(null, 204);
    },
  });

  // ---- moderation log ----
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/moderation_log",
    summary: "What staff did, newest first",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:read"],
    privilege: "moderation_log_read",
    params: z.object({
      start_date: dateParam().optional(),
      end_date: dateParam().optional(),
      user_id: z.string().max(64).optional(),
      search: z.string().max(200).optional(),
      ...pageFields(50),
    }),
    response: ModerationLogSchema,
    handler: async (c, p) =>
      c.json(
        await readLog(db(c.env), {
          page: p.page,
          pageSize: p.page_size,
          startDate: p.start_date,
          endDate: p.end_date,
          userId: p.user_id || undefined,
          search: p.search || undefined,
        }),
      ),
  });
}
