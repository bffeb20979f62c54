/**
 * The read side of Mastodon's admin API (`/api/v1/admin/accounts`, v2's, `/api/v1/admin/reports`) over the same
 * rows and privileges as Pleroma's admin routes: Soapbox polls them for an admin's counters and lists.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db } from "../../db/client";
import { notFound } from "../../lib/errors";
import { boolParam, arrayParam } from "../../http/params";
import { pageParams, setLinkHeader } from "../../http/pagination";
import { route, type Ctx } from "../../http/route";
import { hostOf, renderContext } from "../../http/urls";
import { renderMastodonAdminAccount, renderMastodonAdminReports } from "../../render/mastodon-admin";
import { MastodonAdminAccountSchema, MastodonAdminReportSchema } from "../../schemas/admin";
import { pageUsers, type UserFilter, type UserQuery } from "../../services/admin-users";
import { pageReports, reportById } from "../../services/admin-reports";
import { findAccount } from "../../services/accounts";
import { ADMIN_TAG } from "./common";
import type { Page } from "../../db/paging";

const ACCOUNTS = { scopes: ["admin:read:accounts"], privilege: "users_read" as const };
const REPORTS = { scopes: ["admin:read:reports"], privilege: "reports_manage_reports" as const };

/** Filters both versions share; a filter on what is not kept here (silencing, sign-in addresses) matches nobody. */
const common = {
  username: z.string().max(300).optional(),
  display_name: z.string().max(300).optional(),
  by_domain: z.string().max(300).optional(),
  email: z.string().max(320).optional(),
  ip: z.string().max(100).optional(),
  ...pageParams(100),
};

async function answerAccounts(c: Ctx, q: UserQuery, page: Page, nobody: boolean) {
  const rows = nobody ? [] : await pageUsers(db(c.env), q, page);
  setLinkHeader(
    c,
    rows.map((r) => r.account.id),
  );
  const ctx = renderContext(c, null);
  return c.json(rows.map((r) => renderMastodonAdminAccount(ctx, r)));
}

const query = (
  filters: UserFilter[],
  p: { username?: string; display_name?: string; by_domain?: string; email?: string },
): UserQuery => ({
  filters: new Set(filters),
  username: p.username || undefined,
  name: p.display_name || undefined,
  domain: p.by_domain || undefined,
  email: p.email || undefined,
  tags: [],
  actorTypes: [],
});

export function registerMastodonAdminRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/admin/accounts",
    summary: "Accounts as staff see them (Mastodon's v1 filters), newest first",
    tags: ADMIN_TAG,
    auth: "user",
    ...ACCOUNTS,
    params: z.object({
      local: boolParam().optional(),
      remote: boolParam().optional(),
      active: boolParam().optional(),
      pending: boolParam().optional(),
      disabled: boolParam().optional(),
      silenced: boolParam().optional(),
      suspended: boolParam().optional(),
      sensitized: boolParam().optional(),
      staff: boolParam().optional(),
      ...common,
    }),
    response: z.array(MastodonAdminAccountSchema),
    handler: (c, p) => {
      const f: UserFilter[] = [];
      if (p.local) f.push("local");
      if (p.remote) f.push("external");
      if (p.active) f.push("active");
      if (p.pending) f.push("need_approval");
      if (p.disabled || p.suspended) f.push("deactivated");
      if (p.staff) f.push("is_admin", "is_moderator");
      const nobody = Boolean(p.silenced || p.sensitized || p.ip || (p.local && p.remote));
      return answerAccounts(c, query(f, p), p, nobody);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v2/admin/accounts",
    summary: "Accounts as staff see them (Mastodon 3.5's v2 filters), newest first",
    tags: ADMIN_TAG,
    auth: "user",
    ...ACCOUNTS,
    params: z.object({
      // Unknown values are ignored, as a filter this server cannot apply.
      origin: z.string().max(20).optional(),
      status: z.string().max(20).optional(),
      permissions: z.string().max(20).optional(),
      role_ids: arrayParam(z.string().max(40)).optional(),
      invited_by: z.string().max(40).optional(),
      ...common,
    }),
    response: z.array(MastodonAdminAccountSchema),
    handler: (c, p) => {
      const f: UserFilter[] = [];
      if (p.origin === "local") f.push("local");
      if (p.origin === "remote") f.push("external");
      if (p.status === "active") f.push("active");
      if (p.status === "pending") f.push("need_approval");
      if (p.status === "disabled" || p.status === "suspended") f.push("deactivated");
      if (p.permissions === "staff") f.push("is_admin", "is_moderator");
      const nobody = Boolean(p.status === "silenced" || p.ip || p.invited_by);
      return answerAccounts(c, query(f, p), p, nobody);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/admin/accounts/:id",
    summary: "An account as staff see it",
    tags: ADMIN_TAG,
    auth: "user",
    ...ACCOUNTS,
    params: z.object({ id: z.string().max(40) }),
    response: MastodonAdminAccountSchema,
    handler: async (c, p) => {
      const found = await findAccount(db(c.env), p.id, hostOf(c));
      if (!found) throw notFound("Record not found");
      return c.json(renderMastodonAdminAccount(renderContext(c, null), found));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/admin/reports",
    summary: "Reports, newest first: unresolved unless resolved=true",
    tags: ADMIN_TAG,
    auth: "user",
    ...REPORTS,
    params: z.object({
      resolved: boolParam().optional(),
      account_id: z.string().max(40).optional(),
      target_account_id: z.string().max(40).optional(),
      ...pageParams(100),
    }),
    response: z.array(MastodonAdminReportSchema),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const loaded = await pageReports(
        d,
        { resolved: p.resolved ?? false, accountId: p.account_id, targetAccountId: p.target_account_id },
        p,
        auth.account.id,
      );
      setLinkHeader(
        c,
        loaded.reports.map((r) => r.id),
      );
      return c.json(renderMastodonAdminReports(renderContext(c, auth.account.id), loaded));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/admin/reports/:id",
    summary: "A report as staff see it",
    tags: ADMIN_TAG,
    auth: "user",
    ...REPORTS,
    params: z.object({ id: z.string().max(40) }),
    response: MastodonAdminReportSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const [report] = renderMastodonAdminReports(
        renderContext(c, auth.account.id),
        await reportById(d, p.id, auth.account.id),
      );
      return c.json(report);
    },
  });
}
