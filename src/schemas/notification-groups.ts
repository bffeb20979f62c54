/** Mastodon 4.3's grouped notifications, notification policy and requests, from docs.joinmastodon.org. */
import { z } from "@hono/zod-openapi";
import { AccountSchema } from "./account";
import { NOTIFICATION_TYPES, RelationshipSeveranceEventSchema } from "./social";
import { StatusSchema } from "./status";

export const PartialAccountWithAvatarSchema = z
  .object({
    id: z.string(),
    acct: z.string(),
    url: z.string(),
    avatar: z.string(),
    avatar_static: z.string(),
    locked: z.boolean(),
    bot: z.boolean(),
  })
  .openapi("PartialAccountWithAvatar");

export const NotificationGroupSchema = z
  .object({
    group_key: z.string(),
    notifications_count: z.number().int().min(1),
    type: z.enum(NOTIFICATION_TYPES),
    most_recent_notification_id: z.string(),
    page_min_id: z.string().optional(),
    page_max_id: z.string().optional(),
    latest_page_notification_at: z.string().optional(),
    sample_account_ids: z.array(z.string()),
    status_id: z.string().optional(),
    report: z
      .object({ id: z.string(), action_taken: z.boolean(), comment: z.string(), created_at: z.string() })
      .optional(),
    /** Pleroma's reaction (`pleroma:emoji_reaction`): the newest one's emoji. */
    emoji: z.string().optional(),
    event: RelationshipSeveranceEventSchema.optional(),
  })
  .openapi("NotificationGroup");

export const GroupedNotificationsResultsSchema = z
  .object({
    accounts: z.array(AccountSchema),
    partial_accounts: z.array(PartialAccountWithAvatarSchema).optional(),
    statuses: z.array(StatusSchema),
    notification_groups: z.array(NotificationGroupSchema),
  })
  .openapi("GroupedNotificationsResults");

const PolicyValue = z.enum(["accept", "filter", "drop"]);
const SummarySchema = z.object({
  pending_requests_count: z.number().int(),
  pending_notifications_count: z.number().int(),
});

export const NotificationPolicySchema = z
  .object({
    for_not_following: PolicyValue,
    for_not_followers: PolicyValue,
    for_new_accounts: PolicyValue,
    for_private_mentions: PolicyValue,
    for_limited_accounts: PolicyValue,
    summary: SummarySchema,
  })
  .openapi("NotificationPolicy");

/** v1's shape (Mastodon 4.2 and 4.3's `/api/v1/notifications/policy`): booleans, filter or not. */
export const NotificationPolicyV1Schema = z
  .object({
    filter_not_following: z.boolean(),
    filter_not_followers: z.boolean(),
    filter_new_accounts: z.boolean(),
    filter_private_mentions: z.boolean(),
    summary: SummarySchema,
  })
  .openapi("V1_NotificationPolicy");

export const NotificationRequestSchema = z
  .object({
    id: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    account: AccountSchema,
    // A string in Mastodon's serializer (`notifications_count.to_s`), whatever the entity page says.
    notifications_count: z.string(),
    last_status: StatusSchema.optional(),
  })
  .openapi("NotificationRequest");
