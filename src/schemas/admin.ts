/** The admin API's entities (Pleroma 2.5's `Pleroma.Web.AdminAPI.*View`s). */
import { z } from "@hono/zod-openapi";
import { AccountSchema } from "./account";
import { StatusSchema } from "./status";

/** `AdminAPI.AccountView` "show.json": a user as staff see it. */
export const AdminUserSchema = z
  .object({
    id: z.string(),
    email: z.string().nullable(),
    avatar: z.string(),
    nickname: z.string(),
    display_name: z.string(),
    is_active: z.boolean(),
    local: z.boolean(),
    roles: z.object({ admin: z.boolean(), moderator: z.boolean() }),
    tags: z.array(z.string()),
    is_confirmed: z.boolean(),
    is_approved: z.boolean(),
    url: z.string(),
    registration_reason: z.string().nullable(),
    actor_type: z.string(),
    created_at: z.string(),
  })
  .openapi("AdminUser");

export const AdminUsersSchema = z
  .object({ users: z.array(AdminUserSchema), count: z.number().int(), page_size: z.number().int() })
  .openapi("AdminUsers");

/** `merge_account_views`: the Mastodon account with the admin fields over it (reports, notes, statuses). */
export const AdminAccountSchema = AccountSchema.extend(AdminUserSchema.shape).openapi("AdminAccount");

/** A status with its account as staff see it (`AdminAPI.StatusView`). */
export const AdminStatusSchema = StatusSchema.extend({ account: AdminAccountSchema }).openapi("AdminStatus");

const ReportNoteSchema = z
  .object({ id: z.string(), content: z.string(), user: AdminAccountSchema, created_at: z.string() })
  .openapi("AdminReportNote");

const REPORT_STATES = ["open", "closed", "resolved"] as const;

export const AdminReportSchema = z
  .object({
    id: z.string(),
    account: AdminAccountSchema,
    actor: AdminAccountSchema,
    content: z.string(),
    created_at: z.string(),
    statuses: z.array(AdminStatusSchema),
    state: z.enum(REPORT_STATES),
    notes: z.array(ReportNoteSchema),
  })
  .openapi("AdminReport");

export const AdminReportsSchema = z
  .object({ total: z.number().int(), reports: z.array(AdminReportSchema) })
  .openapi("AdminReports");

/** `UserInviteToken` as the admin API shows it. */
export const InviteSchema = z
  .object({
    id: z.string(),
    token: z.string(),
    used: z.boolean(),
    expires_at: z.string().nullable(),
    uses: z.number().int(),
    max_use: z.number().int().nullable(),
    invite_type: z.enum(["one_time", "reusable", "date_limited", "reusable_date_limited"]),
  })
  .openapi("AdminInvite");

const ModerationLogItemSchema = z
  .object({ id: z.string(), data: z.record(z.string(), z.unknown()), time: z.number().int(), message: z.string() })
  .openapi("ModerationLogItem");

export const ModerationLogSchema = z
  .object({ items: z.array(ModerationLogItemSchema), total: z.number().int() })
  .openapi("ModerationLog");

/** Pleroma 2.5's `AdminAPI.AccountView` "credentials.json": what the admin's security dialog reads and edits. */
export const AdminCredentialsSchema = z
  .object({
    id: z.string(),
    nickname: z.string(),
    email: z.string().nullable(),
    name: z.string(),
    bio: z.string(),
    fields: z.array(z.object({ name: z.string(), value: z.string() })),
    raw_fields: z.array(z.object({ name: z.string(), value: z.string() })),
    avatar: z.string(),
    banner: z.string(),
    background: z.string().nullable(),
    is_locked: z.boolean(),
    is_discoverable: z.boolean(),
    actor_type: z.string(),
    no_rich_text: z.boolean(),
    default_scope: z.string(),
    hide_follows: z.boolean(),
    hide_followers: z.boolean(),
    hide_follows_count: z.boolean(),
    hide_followers_count: z.boolean(),
    hide_favorites: z.boolean(),
    allow_following_move: z.boolean(),
    show_role: z.boolean(),
    skip_thread_containment: z.boolean(),
    pleroma_settings_store: z.record(z.string(), z.unknown()),
  })
  .openapi("AdminCredentials");

/** Mastodon 4's Role (`Admin::Account.role`): the permissions a bit mask in a string. */
export const MastodonRoleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    color: z.string(),
    permissions: z.string(),
    highlighted: z.boolean(),
  })
  .openapi("Role");

/** Mastodon's Admin::Account (`/api/v1/admin/accounts`), as its documentation gives it. */
export const MastodonAdminAccountSchema = z
  .object({
    id: z.string(),
    username: z.string(),
    domain: z.string().nullable(),
    created_at: z.string(),
    email: z.string(),
    ip: z.string().nullable(),
    ips: z.array(z.object({ ip: z.string(), used_at: z.string() })),
    locale: z.string(),
    invite_request: z.string().nullable(),
    role: MastodonRoleSchema,
    confirmed: z.boolean(),
    approved: z.boolean(),
    disabled: z.boolean(),
    silenced: z.boolean(),
    suspended: z.boolean(),
    sensitized: z.boolean(),
    account: AccountSchema,
    created_by_application_id: z.string().optional(),
    invited_by_account_id: z.string().optional(),
  })
  .openapi("MastodonAdminAccount");

/** Mastodon's Admin::Report (`/api/v1/admin/reports`). */
export const MastodonAdminReportSchema = z
  .object({
    id: z.string(),
    action_taken: z.boolean(),
    action_taken_at: z.string().nullable(),
    category: z.enum(["spam", "violation", "legal", "other"]),
    comment: z.string(),
    forwarded: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    account: MastodonAdminAccountSchema,
    target_account: MastodonAdminAccountSchema,
    assigned_account: MastodonAdminAccountSchema.nullable(),
    action_taken_by_account: MastodonAdminAccountSchema.nullable(),
    statuses: z.array(StatusSchema),
    rules: z.array(z.object({ id: z.string(), text: z.string() })),
  })
  .openapi("MastodonAdminReport");
