/** Accounts as staff see them: Pleroma 2.5's `AdminAPI.AccountView` and its `merge_account_views`. */
import { iso } from "../lib/iso";
import type { z } from "@hono/zod-openapi";
import type { AdminAccountSchema, AdminCredentialsSchema, AdminUserSchema } from "../schemas/admin";
import type { UserRow } from "../services/accounts";
import type { AccountWithUser } from "../services/accounts";
import { builtInImageUrl, DEFAULT_AVATAR, mediaUrl } from "../lib/media-urls";
import { renderAccount, type RenderContext } from "./account";

export type AdminUser = z.infer<typeof AdminUserSchema>;
export type AdminAccount = z.infer<typeof AdminAccountSchema>;

export function renderAdminUser(ctx: RenderContext, { account: a, user: u }: AccountWithUser): AdminUser {
  return {
    id: a.id,
    email: u?.email ?? null,
    avatar: a.avatar ? mediaUrl(ctx, a.avatar) : builtInImageUrl(ctx, DEFAULT_AVATAR),
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

/**
 * A user's credentials as Pleroma's admin API shows them (`GET /admin/users/:nickname/credentials`); a remote
 * account has no e-mail or settings here, and its bio is the rendered one.
 */
export function renderAdminCredentials(
  ctx: RenderContext,
  found: AccountWithUser & { user: UserRow | null },
): z.infer<typeof AdminCredentialsSchema> {
  const a = renderAccount(ctx, found);
  const { account: row, user: u } = found;
  return {
    id: a.id,
    nickname: a.acct,
    email: u?.email ?? null,
    name: row.displayName,
    bio: u ? u.noteSource : row.note,
    fields: a.fields.map((f) => ({ name: f.name, value: f.value })),
    raw_fields: u ? u.fieldsSource : a.fields.map((f) => ({ name: f.name, value: f.value })),
    avatar: a.avatar,
    banner: a.header,
    background: a.pleroma.background_image ?? null,
    is_locked: a.locked,
    is_discoverable: row.discoverable,
    actor_type: row.actorType,
    no_rich_text: u?.noRichText ?? false,
    default_scope: u?.defaultScope ?? "public",
    hide_follows: row.hideFollows,
    hide_followers: row.hideFollowers,
    hide_follows_count: row.hideFollowsCount,
    hide_followers_count: row.hideFollowersCount,
    hide_favorites: row.hideFavorites,
    allow_following_move: u?.allowFollowingMove ?? true,
    show_role: u?.showRole ?? false,
    skip_thread_containment: u?.skipThreadContainment ?? false,
    pleroma_settings_store: u?.settingsStore ?? {},
  };
}
