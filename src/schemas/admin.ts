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
