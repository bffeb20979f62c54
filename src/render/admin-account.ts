/** Accounts as staff see them: Pleroma 2.5's `AdminAPI.AccountView` and its `merge_account_views`. */
import { iso } from "../db/client";
import type { z } from "@hono/zod-openapi";
import type { AdminAccountSchema, AdminUserSchema } from "../schemas/admin";
import type { AccountWithUser } from "../services/accounts";
import { DEFAULT_AVATAR, mediaUrl } from "../services/media";
import { renderAccount, type RenderContext } from "./account";

export type AdminUser = z.infer<typeof AdminUserSchema>;
export type AdminAccount = z.infer<typeof AdminAccountSchema>;

export function renderAdminUser(ctx: RenderContext, { account: a, user: u }: AccountWithUser): AdminUser {
  return {
    id: a.id,
    email: u?.email ?? null,
    avatar: a.avatar ? mediaUrl(ctx.base, a.avatar) : `${ctx.base}/${DEFAULT_AVATAR}`,
    nickname: a.domain ? `${a.username}@${a.domain}` : a.username,
    display_name: a.displayName || a.username,
    is_active: !a.deactivated,
    local: a.domain === null,
    roles: { admin: u?.isAdmin ?? false, moderator: u?.isModerator ?? false },
    tags: a.tags,
    is_confirmed: u ? u.confirmed : true,
    is_approved: u ? !u.approvalPending : true,
    url: a.url || a.uri,
    registration_reason: u?.registrationReason ?? null,
    actor_type: a.actorType,
    created_at: iso(a.createdAt),
  };
}

/** The Mastodon account with the admin fields over it, as Pleroma's reports and admin statuses carry it. */
export function renderAdminAccount(ctx: RenderContext, found: AccountWithUser): AdminAccount {
  return { ...renderAccount(ctx, found), ...renderAdminUser(ctx, found) };
}
