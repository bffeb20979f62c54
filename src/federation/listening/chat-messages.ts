/**
 * Inbound chat messages (Pleroma's `ChatMessage`; rules: services/chats.ts): a `Create` of one, embedded and the
 * sender's own on its origin, lands in the chat through its ChatRoom. Its `Delete` is notes.ts's (a Delete names
 * an id, whichever it was).
 */
import type { InboxContext } from "@fedify/fedify";
import type { ChatMessage } from "@fedify/vocab";
import type { AccountRow } from "../../services/accounts";
import { receiveChatMessage } from "../../services/chats";
import type { FederationData } from "../data";
import { parseChatMessage } from "../documents/chat-messages";
import { after } from "./context";

export async function onChatMessage(
  ctx: InboxContext<FederationData>,
  from: AccountRow,
  chat: ChatMessage,
): Promise<void> {
  if (chat.attributionId?.href !== from.uri || !chat.id || chat.id.origin !== new URL(from.uri).origin) return;
  const parsed = await parseChatMessage(chat, from.domain!);
  if (await receiveChatMessage(ctx.data.d, ctx.data.env, from, parsed, ctx.canonicalOrigin)) after(ctx, { push: true });
}
