/** Pleroma's Chat and ChatMessage entities (Pleroma 2.5's ChatView and MessageReferenceView). */
import { z } from "@hono/zod-openapi";
import { AccountSchema, EmojiSchema } from "./account";
import { MediaAttachmentSchema } from "./status";

export const ChatMessageSchema = z
  .object({
    id: z.string(),
    chat_id: z.string(),
    account_id: z.string(),
    content: z.string().nullable(),
    created_at: z.string(),
    emojis: z.array(EmojiSchema),
    attachment: MediaAttachmentSchema.nullable(),
    card: z.null(),
    unread: z.boolean(),
    /** Copy of the `Idempotency-Key` header, only in the first minutes after creation. */
    idempotency_key: z.string().optional(),
  })
  .openapi("ChatMessage");

export const ChatSchema = z
  .object({
    id: z.string(),
    account: AccountSchema,
    unread: z.number().int(),
    last_message: ChatMessageSchema.nullable().optional(),
    updated_at: z.string(),
  })
  .openapi("Chat");

export type ChatMessage = z.infer<typeof ChatMessageSchema>;
export type Chat = z.infer<typeof ChatSchema>;
