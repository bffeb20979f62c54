import { z } from "@hono/zod-openapi";

export const EmojiSchema = z
  .object({ shortcode: z.string(), url: z.string(), static_url: z.string(), visible_in_picker: z.boolean() })
  .openapi("Emoji");

const FieldSchema = z
  .object({ name: z.string(), value: z.string(), verified_at: z.string().nullable() })
  .openapi("Field");

export const RelationshipSchema = z
  .object({
    id: z.string(),
    following: z.boolean(),
    followed_by: z.boolean(),
    blocking: z.boolean(),
    blocked_by: z.boolean(),
    muting: z.boolean(),
    muting_notifications: z.boolean(),
    subscribing: z.boolean(),
    notifying: z.boolean(),
    requested: z.boolean(),
    domain_blocking: z.boolean(),
    showing_reblogs: z.boolean(),
    endorsed: z.boolean(),
    note: z.string(),
  })
  .openapi("Relationship");

export const NotificationSettingsSchema = z.object({
  block_from_strangers: z.boolean(),
  hide_notification_contents: z.boolean(),
});

const SourceSchema = z.object({
  note: z.string(),
  sensitive: z.boolean(),
  privacy: z.enum(["public", "unlisted", "private", "direct", "local"]),
  language: z.string().nullable(),
  fields: z.array(z.object({ name: z.string(), value: z.string() })),
  /** Who may quote the user's new posts (Mastodon 4.5). */
  quote_policy: z.enum(["public", "followers", "nobody"]),
  pleroma: z.object({
    show_role: z.boolean().nullable(),
    no_rich_text: z.boolean().nullable(),
    discoverable: z.boolean(),
    actor_type: z.string(),
  }),
});

const AccountPleromaSchema = z.object({
  ap_id: z.string().nullable(),
  also_known_as: z.array(z.string()),
  background_image: z.string().nullable(),
  tags: z.array(z.string()),
  relationship: z.union([RelationshipSchema, z.object({}).strict()]),
  is_admin: z.boolean().nullable().optional(),
  is_moderator: z.boolean().nullable().optional(),
  is_confirmed: z.boolean(),
  confirmation_pending: z.boolean(),
  hide_favorites: z.boolean(),
  hide_followers: z.boolean(),
  hide_follows: z.boolean(),
  hide_followers_count: z.boolean(),
  hide_follows_count: z.boolean(),
  deactivated: z.boolean(),
  skip_thread_containment: z.boolean(),
  accepts_chat_messages: z.boolean().nullable(),
  favicon: z.string().nullable(),
  /** Whether the account is this instance's (false for remote accounts). */
  is_local: z.boolean(),
  // Owner only:
  allow_following_move: z.boolean().optional(),
  unread_conversation_count: z.number().int().optional(),
  unread_notifications_count: z.number().int().optional(),
  notification_settings: NotificationSettingsSchema.optional(),
  email: z.string().optional(),
  // verify_credentials and update_credentials only:
  settings_store: z.record(z.string(), z.unknown()).optional(),
  chat_token: z.string().optional(),
});

export const AccountSchema = z
  .object({
    id: z.string(),
    username: z.string(),
    acct: z.string(),
    fqn: z.string(),
    display_name: z.string(),
    locked: z.boolean(),
    bot: z.boolean(),
    discoverable: z.boolean(),
    group: z.boolean(),
    created_at: z.string(),
    note: z.string(),
    url: z.string(),
    avatar: z.string(),
    avatar_static: z.string(),
    header: z.string(),
    header_static: z.string(),
    followers_count: z.number().int(),
    following_count: z.number().int(),
    statuses_count: z.number().int(),
    last_status_at: z.string().nullable(),
    emojis: z.array(EmojiSchema),
    fields: z.array(FieldSchema),
    source: SourceSchema.optional(),
    follow_requests_count: z.number().int().optional(),
    /** The account this one moved to (an Account), where shown. */
    moved: z.object({ id: z.string(), acct: z.string(), url: z.string() }).passthrough().nullable().optional(),
    pleroma: AccountPleromaSchema,
  })
  .openapi("Account");

export type Account = z.infer<typeof AccountSchema>;
export type Relationship = z.infer<typeof RelationshipSchema>;

/** `/api/v1/preferences`: the user's posting and reading defaults, under Mastodon's keys. */
export const PreferencesSchema = z
  .object({
    "posting:default:visibility": z.string(),
    "posting:default:sensitive": z.boolean(),
    "posting:default:language": z.string().nullable(),
    "reading:expand:media": z.enum(["default", "show_all", "hide_all"]),
    "reading:expand:spoilers": z.boolean(),
  })
  .openapi("Preferences");
