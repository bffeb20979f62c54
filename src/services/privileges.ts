/**
 * Who among staff may do what: Pleroma 2.5's privileges (`:instance, :admin_privileges` and
 * `:moderator_privileges`), so that admin-fe and Pleroma scripts meet the same refusals. Admins hold every
 * privilege; moderators act on reports and statuses. Instance settings need an admin (`superuser`).
 */
import { ApiError } from "../lib/errors";

export const PRIVILEGES = [
  "users_read",
  "users_manage_invites",
  "users_manage_activation_state",
  "users_manage_tags",
  "users_manage_credentials",
  "users_delete",
  "messages_read",
  "messages_delete",
  "instances_delete",
  "reports_manage_reports",
  "moderation_log_read",
  "announcements_manage_announcements",
  "emoji_manage_emoji",
  "statistics_read",
] as const;
export type Privilege = (typeof PRIVILEGES)[number];

const MODERATOR_PRIVILEGES: ReadonlySet<Privilege> = new Set([
  "messages_read",
  "messages_delete",
  "reports_manage_reports",
  // Acting on a report means seeing the account it is about.
  "users_read",
]);

interface Staff {
  isAdmin: boolean;
  isModerator: boolean;
}

function hasPrivilege(user: Staff | null | undefined, privilege: Privilege): boolean {
  if (!user) return false;
  return user.isAdmin || (user.isModerator && MODERATOR_PRIVILEGES.has(privilege));
}

/** Refuses, with Pleroma's answers, a caller who is not staff enough; `superuser` = admins only. */
export function requirePrivilege(user: Staff | null | undefined, privilege: Privilege | "superuser"): void {
  if (privilege === "superuser") {
    if (!user?.isAdmin) throw new ApiError(403, "User is not an admin.");
    return;
  }
  if (!hasPrivilege(user, privilege)) throw new ApiError(403, "User isn't privileged.");
}
