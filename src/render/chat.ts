/** The Chat and ChatMessage entities (Pleroma 2.5's ChatView and MessageReferenceView). */
import { iso } from "../lib/iso";
import type { Chat, ChatMessage } from "../schemas/chat";
import type { ChatMessageRow, ChatView } from "../services/chats";
import { IDEMPOTENCY_WINDOW_MS } from "../lib/limits";
import type { MediaRow } from "../services/hydrate";
import { mediaUrl } from "../lib/media-urls";
import { renderAccount, type RenderContext } from "./account";
import { renderMedia } from "./status";

/** A message as `ctx.viewerId` sees it: your own are never unread; the idempotency key only for a few minutes. */
export function renderChatMessage(
  ctx: RenderContext,
  m: ChatMessageRow,
  media: MediaRow | null,
  t: number = Date.now(),
): ChatMessage {
  const echo = m.idempotencyKey && m.idempotencyAt !== null && m.idempotencyAt > t - IDEMPOTENCY_WINDOW_MS;
  return {
    id: m.id,
    chat_id: m.chatId,
    account_id: m.accountId,
    content: m.content,
    created_at: iso(m.createdAt),
    emojis: m.emojis.map((e) => ({
      shortcode: e.shortcode,
      url: mediaUrl(ctx, e.file),
      static_url: mediaUrl(ctx, e.file),
      visible_in_picker: e.visible_in_picker,
    })),
    attachment: media ? renderMedia(ctx, media) : null,
    card: null,
    unread: m.accountId !== ctx.viewerId && m.unread,
    ...(echo ? { idempotency_key: m.idempotencyKey! } : {}),
  };
}

/** A chat as its viewer sees it; `withLast: false` for the answer of marking it read (Pleroma leaves it out). */
export function renderChat(ctx: RenderContext, v: ChatView, opts: { withLast?: boolean } = {}): Chat {
  return {
    id: v.chat.id,
    account: renderAccount(ctx, v.other),
    unread: v.unread,
    ...(opts.withLast === false
      ? {}
      : { last_message: v.lastMessage ? renderChatMessage(ctx, v.lastMessage, v.lastMedia) : null }),
    updated_at: iso(v.chat.updatedAt),
  };
}
