import { ChatMessageSchema } from "./chat";
/** Schemas of the social entities: lists, filters, reports, conversations, notifications, markers, push. */
import { z } from "@hono/zod-openapi";
import { AccountSchema } from "./account";
import { StatusSchema } from "./status";

export const NOTIFICATION_TYPES = [
  "mention",
  // A post by an account the user subscribed to (Mastodon 3.3, Pleroma 2.7).
  "status",
  "follow",
  "follow_request",
  "reblog",
  "favourite",
  "poll",
  // A status the user reblogged was edited (Mastodon 3.5, Pleroma 2.5).
  "update",
  "move",
  "pleroma:emoji_reaction",
  "pleroma:chat_mention",
  "pleroma:report",
  // Follows lost to a domain block (Mastodon 4.3): `event` names the RelationshipSeveranceEvent.
  "severed_relationships",
  // Someone quoted the user's post; a post the user quoted was edited (Mastodon 4.5).
  "quote",
  "quoted_update",
  // A remote author approved or rejected the user's reply, boost or like that had to ask (issue 49; GoToSocial's
  // interaction controls): Starling's own, opt-in on v1 like the newer types.
  "interaction_approved",
  "interaction_rejected",
] as const;

/** Mastodon 4.3's RelationshipSeveranceEvent (docs.joinmastodon.org/entities/RelationshipSeveranceEvent). */
export const RelationshipSeveranceEventSchema = z
  .object({
    id: z.string(),
    type: z.enum(["domain_block", "user_domain_block", "account_suspension"]),
    purged: z.boolean(),
    target_name: z.string(),
    followers_count: z.number().int(),
    following_count: z.number().int(),
    created_at: z.string(),
  })
  .openapi("RelationshipSeveranceEvent");

import { FILTER_CONTEXTS } from "./filter";
export { FILTER_CONTEXTS };

export const ListSchema = z.object({ id: z.string(), title: z.string() }).openapi("List");

export const FilterSchema = z
  .object({
    id: z.string(),
    phrase: z.string(),
    context: z.array(z.enum(FILTER_CONTEXTS)),
    whole_word: z.boolean(),
    irreversible: z.boolean(),
    expires_at: z.string().nullable(),
  })
  .openapi("Filter");

export const ReportSchema = z.object({ id: z.string(), action_taken: z.boolean() }).openapi("Report");

export const ConversationSchema = z
  .object({
    id: z.string(),
    accounts: z.array(AccountSchema),
    unread: z.boolean(),
    last_status: StatusSchema.nullable(),
    pleroma: z.object({ recipients: z.array(AccountSchema) }),
  })
  .openapi("Conversation");

export const NotificationSchema = z
  .object({
    id: z.string(),
    type: z.enum(NOTIFICATION_TYPES),
    created_at: z.string(),
    account: AccountSchema,
    status: StatusSchema.optional(),
    emoji: z.string().optional(),
    target: AccountSchema.optional(),
    report: z
      .object({ id: z.string(), action_taken: z.boolean(), comment: z.string(), created_at: z.string() })
      .optional(),
    chat_message: ChatMessageSchema.optional(),
    event: RelationshipSeveranceEventSchema.optional(),
    pleroma: z.object({ is_seen: z.boolean(), is_muted: z.boolean() }),
  })
  .openapi("Notification");

export const MarkerSchema = z.object({ last_read_id: z.string(), version: z.number().int(), updated_at: z.string() });

export const PushSubscriptionSchema = z
  .object({ id: z.string(), endpoint: z.string(), alerts: z.record(z.string(), z.boolean()), server_key: z.string() })
  .openapi("PushSubscription");

/** A hashtag as v2 search answers it. */
export const HashtagSchema = z.object({ name: z.string(), url: z.string(), history: z.array(z.unknown()) });

export { FilterKeywordSchema, FilterV2Schema } from "./filter";
