/**
 * Mastodon's admin entities (Admin::Account, Admin::Report) over the same rows as Pleroma's admin views: Soapbox
 * reads them for its staff counters and lists.
 */
import type { z } from "@hono/zod-openapi";
import { iso } from "../lib/iso";
import type { MastodonAdminAccountSchema, MastodonRoleSchema } from "../schemas/admin";
import type { AccountWithUser } from "../services/accounts";
import type { LoadedReports } from "../services/admin-reports";
import { renderAccount, type RenderContext } from "./account";
import { reportParts } from "./admin-report";

type Role = z.infer<typeof MastodonRoleSchema>;

/**
 * Mastodon's default roles: permissions as its `UserRole::FLAGS` (administrator = 1; a moderator's view_audit_log
 * 4, view_dashboard 8, manage_reports 16, manage_taxonomies 256, manage_users 1024; everyone's invite_users 65536).
 */
const ROLES: Record<"admin" | "moderator" | "user", Role> = {
  admin: { id: "2", name: "Admin", color: "", permissions: "1", highlighted: true },
  moderator: { id: "1", name: "Moderator", color: "", permissions: "1308", highlighted: true },
  user: { id: "-99", name: "", color: "", permissions: "65536", highlighted: false },
};

export function renderMastodonAdminAccount(
  ctx: RenderContext,
  found: AccountWithUser,
): z.infer<typeof MastodonAdminAccountSchema> {
  const { account: a, user: u } = found;
  return {
    id: a.id,
    username: a.username,
    domain: a.domain,
    created_at: iso(a.createdAt),
    email: u?.email ?? "",
    // Sign-in addresses are not kept.
    ip: null,
    ips: [],
    locale: u?.locale ?? "",
    invite_request: u?.registrationReason ?? null,
    role: u?.isAdmin ? ROLES.admin : u?.isModerator ? ROLES.moderator : ROLES.user,
    confirmed: u ? u.confirmed : true,
    approved: u ? !u.approvalPending : true,
    // Pleroma's deactivation is both (as Rebased maps it): the account is gone from view and cannot sign in.
    disabled: a.deactivated,
    silenced: false,
    suspended: a.deactivated,
    sensitized: false,
    account: renderAccount(ctx, found),
  };
}

export function renderMastodonAdminReports(ctx: RenderContext, loaded: LoadedReports) {
  const { account, statuses } = reportParts(ctx, loaded, renderMastodonAdminAccount);
  return loaded.reports.map((r) => ({
    id: r.id,
    action_taken: r.state !== "open",
    // The moment of the change is in the moderation log, not on the report.
    action_taken_at: null,
    category: "other" as const,
    comment: r.comment,
    forwarded: r.forward,
    created_at: iso(r.createdAt),
    updated_at: iso(r.createdAt),
    account: account(r.accountId),
    target_account: account(r.targetAccountId),
    assigned_account: null,
    action_taken_by_account: null,
    statuses: statuses(r.statusIds),
    rules: [] as { id: string; text: string }[],
  }));
}
