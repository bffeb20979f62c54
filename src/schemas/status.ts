import { z } from "@hono/zod-openapi";
import { AccountSchema, EmojiSchema } from "./account";
import { FilterResultSchema } from "./filter";

export const VISIBILITIES = ["public", "unlisted", "private", "direct", "local", "list"] as const;

const MediaSizeSchema = z.object({
  width: z.number().int(),
  height: z.number().int(),
  size: z.string(),
  aspect: z.number(),
});

export const MediaAttachmentSchema = z
  .object({
    id: z.string(),
    type: z.enum(["image", "gifv", "video", "audio", "unknown"]),
    url: z.string(),
    remote_url: z.string().nullable(),
    preview_url: z.string(),
    text_url: z.string().nullable(),
    description: z.string().nullable(),
    blurhash: z.string().nullable(),
    meta: z
      .object({
        original: MediaSizeSchema.partial()
          .extend({
            frame_rate: z.string().optional(),
            duration: z.number().optional(),
            bitrate: z.number().int().optional(),
          })
          .optional(),
        small: MediaSizeSchema.optional(),
        focus: z.object({ x: z.number(), y: z.number() }).optional(),
      })
      .nullable(),
    pleroma: z.object({ mime_type: z.string() }),
  })
  .openapi("MediaAttachment");

export const PollSchema = z
  .object({
    id: z.string(),
    expires_at: z.string().nullable(),
    expired: z.boolean(),
    multiple: z.boolean(),
    votes_count: z.number().int(),
    voters_count: z.number().int(),
    options: z.array(z.object({ title: z.string(), votes_count: z.number().int().nullable() })),
    voted: z.boolean(),
    own_votes: z.array(z.number().int()),
    emojis: z.array(EmojiSchema),
    pleroma: z.object({ non_anonymous: z.boolean() }).optional(),
  })
  .openapi("Poll");

export const CardSchema = z
  .object({
    url: z.string(),
    title: z.string(),
    description: z.string(),
    image: z.string().nullable(),
    type: z.enum(["link", "photo", "video", "rich"]),
    provider_name: z.string(),
    provider_url: z.string(),
    author_name: z.string(),
    author_url: z.string(),
    html: z.string(),
    width: z.number().int(),
    height: z.number().int(),
    pleroma: z.object({ opengraph: z.record(z.string(), z.string()) }),
  })
  .openapi("Card");

const MentionSchema = z.object({ id: z.string(), username: z.string(), acct: z.string(), url: z.string() });
const TagSchema = z.object({ name: z.string(), url: z.string() });
/** Pleroma 2.6's reaction: `url` is the custom emoji's image (null for a Unicode emoji). */
const reactionFields = { name: z.string(), count: z.number().int(), me: z.boolean(), url: z.string().nullable() };
/** A status's `pleroma.emoji_reactions` entry, with the ids of the accounts behind it (`account_ids`). */
const EmojiReactionSchema = z.object({ ...reactionFields, account_ids: z.array(z.string()) });
/** A reaction list entry (`GET …/reactions`): the reaction with the accounts behind it. */
export const EmojiReactionAccountsSchema = z.object({ ...reactionFields, accounts: z.array(AccountSchema) });

/** A quote's state (Mastodon 4.5): as its server and the quoted author left it, or as the viewer may see it. */
export const QUOTE_STATES = ["pending", "accepted", "rejected", "revoked", "deleted", "unauthorized"] as const;
/** A quote nested in a quoted status: the id only (Mastodon's `ShallowQuote`). */
const ShallowQuoteSchema = z.object({ state: z.enum(QUOTE_STATES), quoted_status_id: z.string().nullable() });
const QuoteApprovalSchema = z.object({
  automatic: z.array(z.string()),
  manual: z.array(z.string()),
  current_user: z.enum(["automatic", "manual", "denied", "unknown"]),
});

const statusFields = {
  id: z.string(),
  uri: z.string(),
  url: z.string(),
  account: AccountSchema,
  in_reply_to_id: z.string().nullable(),
  in_reply_to_account_id: z.string().nullable(),
  content: z.string(),
  text: z.string().nullable(),
  created_at: z.string(),
  edited_at: z.string().nullable(),
  emojis: z.array(EmojiSchema),
  replies_count: z.number().int(),
  reblogs_count: z.number().int(),
  favourites_count: z.number().int(),
  quotes_count: z.number().int(),
  quote_approval: QuoteApprovalSchema,
  reblogged: z.boolean(),
  favourited: z.boolean(),
  muted: z.boolean(),
  bookmarked: z.boolean(),
  pinned: z.boolean(),
  sensitive: z.boolean(),
  spoiler_text: z.string(),
  visibility: z.enum(VISIBILITIES),
  media_attachments: z.array(MediaAttachmentSchema),
  mentions: z.array(MentionSchema),
  tags: z.array(TagSchema),
  card: CardSchema.nullable(),
  poll: PollSchema.nullable(),
  application: z.object({ name: z.string(), website: z.string().nullable() }).nullable(),
  language: z.string().nullable(),
  /** The viewer's filters that match (Mastodon 4): v2 clients warn or hide by them. Absent for anonymous viewers. */
  filtered: z.array(FilterResultSchema).optional(),
  pleroma: z.object({
    local: z.boolean(),
    conversation_id: z.string(),
    context: z.string(),
    direct_conversation_id: z.string().nullable(),
    in_reply_to_account_acct: z.string().nullable(),
    content: z.object({ "text/plain": z.string() }),
    spoiler_text: z.object({ "text/plain": z.string() }),
    expires_at: z.string().nullable(),
    thread_muted: z.boolean(),
    emoji_reactions: z.array(EmojiReactionSchema),
    parent_visible: z.boolean(),
    pinned_at: z.string().nullable(),
    // Pleroma-FE's quote fields: the quoted post's id and ActivityPub id, whether the viewer may see it.
    quote_id: z.string().nullable(),
    quote_url: z.string().nullable(),
    quote_visible: z.boolean(),
    /**
     * Starling's (issue 49): a reply or boost of a post whose author must approve it (GoToSocial's interaction
     * controls): `pending`, `approved`, `rejected`, or `denied` (the policy lets nobody; sent unapproved); null
     * when nobody had to approve.
     */
    approval_state: z.enum(["pending", "approved", "rejected", "denied"]).nullable(),
  }),
};

/** A quoted status: its own quote shown by id only, no Pleroma `quote` inside. */
const QuotedStatusSchema = z.object({
  ...statusFields,
  reblog: z.null(),
  quote: ShallowQuoteSchema.nullable(),
  pleroma: statusFields.pleroma.extend({ quote: z.null() }),
});
const QuoteSchema = z.object({ state: z.enum(QUOTE_STATES), quoted_status: QuotedStatusSchema.nullable() });
const quoteFields = {
  quote: QuoteSchema.nullable(),
  pleroma: statusFields.pleroma.extend({ quote: QuotedStatusSchema.nullable() }),
};

export const BaseStatusSchema = z.object({ ...statusFields, ...quoteFields, reblog: z.null() });
export const StatusSchema = z
  .object({ ...statusFields, ...quoteFields, reblog: BaseStatusSchema.nullable() })
  .openapi("Status");

export const ContextSchema = z
  .object({ ancestors: z.array(StatusSchema), descendants: z.array(StatusSchema) })
  .openapi("Context");

/** A version of a status (Mastodon 3.5's StatusEdit): `GET /api/v1/statuses/:id/history`, oldest first. */
export const StatusEditSchema = z
  .object({
    content: z.string(),
    spoiler_text: z.string(),
    sensitive: z.boolean(),
    created_at: z.string(),
    account: AccountSchema,
    poll: z.object({ options: z.array(z.object({ title: z.string() })) }).nullable(),
    media_attachments: z.array(MediaAttachmentSchema),
    emojis: z.array(EmojiSchema),
  })
  .openapi("StatusEdit");

export const StatusSourceSchema = z
  .object({ id: z.string(), text: z.string(), spoiler_text: z.string(), content_type: z.string() })
  .openapi("StatusSource");

export const ScheduledStatusSchema = z
  .object({
    id: z.string(),
    scheduled_at: z.string(),
    params: z.object({
      text: z.string().nullable(),
      media_ids: z.array(z.string()).nullable(),
      sensitive: z.boolean().nullable(),
      spoiler_text: z.string().nullable(),
      visibility: z.string(),
      scheduled_at: z.string().nullable(),
      poll: z.unknown().nullable(),
      idempotency: z.string().nullable(),
      in_reply_to_id: z.string().nullable(),
      application_id: z.string().nullable(),
      expires_in: z.number().int().nullable(),
      content_type: z.string().nullable(),
      language: z.string().nullable(),
    }),
    media_attachments: z.array(MediaAttachmentSchema),
  })
  .openapi("ScheduledStatus");

export type Status = z.infer<typeof StatusSchema>;
export type BaseStatus = z.infer<typeof BaseStatusSchema>;
export type QuotedStatus = z.infer<typeof QuotedStatusSchema>;
export type MediaAttachment = z.infer<typeof MediaAttachmentSchema>;
export type Poll = z.infer<typeof PollSchema>;
export type Card = z.infer<typeof CardSchema>;
export type StatusEdit = z.infer<typeof StatusEditSchema>;

/** Mastodon's Translation entity (`POST /api/v1/statuses/:id/translate`). */
export const TranslationSchema = z
  .object({
    content: z.string(),
    spoiler_text: z.string(),
    poll: z.object({ id: z.string(), options: z.array(z.object({ title: z.string() })) }).nullable(),
    media_attachments: z.array(z.object({ id: z.string(), description: z.string() })),
    detected_source_language: z.string(),
    language: z.string(),
    provider: z.string(),
  })
  .openapi("Translation");

/** Akkoma's translation answer and language list. */
export const AkkomaTranslationSchema = z.object({ detected_language: z.string(), text: z.string() });
export const AkkomaTranslationLanguagesSchema = z.union([
  z.object({
    source: z.array(z.object({ code: z.string(), name: z.string() })),
    target: z.array(z.object({ code: z.string(), name: z.string() })),
  }),
  z.object({}).strict(),
]);
