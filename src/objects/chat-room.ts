/**
 * One chat's single writer, named by the chat id. Calls run one at a time (a promise chain: D1 awaits would
 * otherwise let calls interleave), so messages get increasing ids, an `Idempotency-Key` resend finds the first
 * message, and each side's unread count (recounted from the rows in the write's own batch) stays exact under
 * parallel sends. Each write is ONE D1 batch; a new message then publishes `pleroma:chat_update` (the Chat as each
 * side sees it) to both users.
 */
import { DurableObject } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import type { Env } from "../env";
import { db, statement } from "../db/client";
import { newId } from "../db/ids";
import { chatMessages, mediaAttachments } from "../db/schema";
import { and, eq } from "drizzle-orm";
import { IDEMPOTENCY_WINDOW_MS } from "../lib/limits";
import { bothViews, unreadCount, type ChatMessageRow } from "../services/chats";
import { notify } from "../services/notifications";
import { background, runEffects, type WaitUntil } from "../effects";
import { renderChat } from "../render/chat";
import { origins } from "../lib/media-urls";
import { outboxEffects, outboxWrite } from "../services/outbox";
import type { ChatEffects, ChatRoomMethods, ChatWriterMethods, MessageDraft, SentMessage } from "./contracts";

/** The writer itself: what the object runs (and, in the two-instance tests, runs in process: `chatRoomSeam`). */
export class ChatWriter implements ChatWriterMethods {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly env: Env,
    private readonly ctx: WaitUntil,
  ) {}

  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Writes a checked message (src/services/chats.ts `draftMessage`, or an incoming ChatMessage). */
  send(draft: MessageDraft, base: string): Promise<SentMessage> {
    return this.serial(async () => {
      const d = db(this.env);
      const t = Date.now();
      if (draft.idempotencyKey || draft.uri) {
        const dup = draft.uri
          ? sql`${chatMessages.uri} = ${draft.uri}`
          : sql`${chatMessages.chatId} = ${draft.chatId} AND ${chatMessages.accountId} = ${draft.senderId} AND ${chatMessages.idempotencyKey} = ${draft.idempotencyKey} AND ${chatMessages.idempotencyAt} > ${t - IDEMPOTENCY_WINDOW_MS}`;
        const [found] = await d
          .select({ message: chatMessages, media: mediaAttachments })
          .from(chatMessages)
          .leftJoin(mediaAttachments, eq(mediaAttachments.id, chatMessages.mediaId))
          .where(dup)
          .limit(1);
        if (found) return { ...found, created: false, effects: {} };
      }
      const id = newId(t);
      const message: ChatMessageRow = {
        id,
        chatId: draft.chatId,
        accountId: draft.senderId,
        content: draft.content,
        emojis: draft.emojis,
        mediaId: draft.mediaId,
        unread: true,
        uri: draft.uri,
        idempotencyKey: draft.idempotencyKey,
        idempotencyAt: draft.idempotencyKey ? t : null,
        createdAt: t,
      };
      const stmts: D1PreparedStatement[] = [
        statement(d, d.insert(chatMessages).values(message)),
        statement(
          d,
          sql`UPDATE chats SET last_message_id = ${id}, sort_key = ${id}, updated_at = ${t}, a_open = 1, b_open = 1,
            a_unread = ${unreadCount("a")}, b_unread = ${unreadCount("b")} WHERE id = ${draft.chatId}`,
        ),
        notify(d, { type: "pleroma:chat_mention", to: draft.recipientId, from: draft.senderId, chatMessageId: id }),
      ];
      if (draft.mediaId) {
        stmts.push(
          statement(
            d,
            d
              .update(mediaAttachments)
              .set({ chatMessageId: id })
              .where(and(eq(mediaAttachments.id, draft.mediaId), eq(mediaAttachments.accountId, draft.senderId))),
          ),
        );
      }
      if (!draft.uri)
        stmts.push(
          outboxWrite(d, draft.senderId, { type: "ChatMessage", messageId: id, recipientId: draft.recipientId }, t),
        );
      await d.$client.batch(stmts);
      const [media] = draft.mediaId
        ? await d.select().from(mediaAttachments).where(eq(mediaAttachments.id, draft.mediaId))
        : [];
      background(this.ctx, "chat update", this.publish(draft.chatId, base));
      return { message, media: media ?? null, created: true, effects: { push: true, ...outboxEffects(this.env.DB) } };
    });
  }

  /** Marks the reader's messages up to `lastReadId` read (`null`: all of them). */
  read(chatId: string, reader: string, lastReadId: string | null): Promise<void> {
    return this.serial(async () => {
      const d = db(this.env);
      const upTo = lastReadId ?? "\u{10FFFF}";
      await d.$client.batch([
        statement(
          d,
          sql`UPDATE chat_messages SET unread = 0 WHERE chat_id = ${chatId} AND account_id <> ${reader} AND unread = 1 AND id <= ${upTo}`,
        ),
        statement(
          d,
          sql`UPDATE chats SET a_unread = ${unreadCount("a")}, b_unread = ${unreadCount("b")},
            a_last_read_id = CASE WHEN a_id = ${reader} THEN max(coalesce(a_last_read_id, ''), coalesce(${lastReadId}, last_message_id, '')) ELSE a_last_read_id END,
            b_last_read_id = CASE WHEN b_id = ${reader} THEN max(coalesce(b_last_read_id, ''), coalesce(${lastReadId}, last_message_id, '')) ELSE b_last_read_id END
            WHERE id = ${chatId}`,
        ),
      ]);
    });
  }

  /** Marks one message read by its reader. */
  readOne(chatId: string, reader: string, messageId: string): Promise<void> {
    return this.serial(async () => {
      const d = db(this.env);
      await d.$client.batch([
        statement(
          d,
          sql`UPDATE chat_messages SET unread = 0 WHERE id = ${messageId} AND chat_id = ${chatId} AND account_id <> ${reader}`,
        ),
        statement(
          d,
          sql`UPDATE chats SET a_unread = ${unreadCount("a")}, b_unread = ${unreadCount("b")} WHERE id = ${chatId}`,
        ),
      ]);
    });
  }

  /** Deletes the sender's own message (its attachment goes back to the collector, its notification away). */
  /** Deletes a local sender's message; answers what follows (the delivery of its Delete). */
  deleteMessage(chatId: string, sender: string, recipient: string, messageId: string): Promise<ChatEffects> {
    return this.serial(async () => {
      const d = db(this.env);
      const t = Date.now();
      const stmts = [
        statement(d, sql`DELETE FROM notifications WHERE chat_message_id = ${messageId}`),
        statement(d, sql`UPDATE media_attachments SET chat_message_id = NULL WHERE chat_message_id = ${messageId}`),
      ];
      // Only a local sender's message is deleted here; its remote recipient hears of it.
      stmts.push(outboxWrite(d, sender, { type: "DeleteChatMessage", messageId, recipientId: recipient }, t));
      stmts.push(
        statement(
          d,
          sql`DELETE FROM chat_messages WHERE id = ${messageId} AND chat_id = ${chatId} AND account_id = ${sender}`,
        ),
        statement(
          d,
          sql`UPDATE chats SET last_message_id = (SELECT max(id) FROM chat_messages WHERE chat_id = ${chatId}),
            a_unread = ${unreadCount("a")}, b_unread = ${unreadCount("b")} WHERE id = ${chatId}`,
        ),
      );
      await d.$client.batch(stmts);
      return outboxEffects(this.env.DB);
    });
  }

  /** The deleting side no longer sees the chat nor its messages so far; a new message brings the chat back. */
  clear(chatId: string, who: string): Promise<void> {
    return this.serial(async () => {
      const d = db(this.env);
      const mark = newId(Date.now());
      await d.$client.batch([
        statement(
          d,
          sql`UPDATE chats SET
          a_open = CASE WHEN a_id = ${who} THEN 0 ELSE a_open END, a_cleared_id = CASE WHEN a_id = ${who} THEN ${mark} ELSE a_cleared_id END,
          b_open = CASE WHEN b_id = ${who} THEN 0 ELSE b_open END, b_cleared_id = CASE WHEN b_id = ${who} THEN ${mark} ELSE b_cleared_id END
          WHERE id = ${chatId}`,
        ),
        statement(
          d,
          sql`UPDATE chats SET a_unread = ${unreadCount("a")}, b_unread = ${unreadCount("b")} WHERE id = ${chatId}`,
        ),
      ]);
    });
  }

  /** `pleroma:chat_update` to both sides: the Chat with its last message, as each sees it. */
  private async publish(chatId: string, base: string): Promise<void> {
    const d = db(this.env);
    const [chat] = await d.$client
      .prepare("SELECT id, a_id AS aId, b_id AS bId FROM chats WHERE id = ?")
      .bind(chatId)
      .all<{ id: string; aId: string; bId: string }>()
      .then((r) => r.results);
    if (!chat) return;
    const host = base ? new URL(base).host : "";
    const views = await bothViews(d, chat);
    const events = views.map((v) => ({
      accountId: v.viewerId,
      event: "pleroma:chat_update" as const,
      payload: renderChat({ ...origins(this.env, base), host, viewerId: v.viewerId }, v),
    }));
    // Through the one door, as every other action's events.
    runEffects(this.env, this.ctx, base, { events });
  }
}

export class ChatRoom extends DurableObject<Env> implements ChatRoomMethods {
  private readonly writer = new ChatWriter(this.env, this.ctx);

  send(draft: MessageDraft, base: string) {
    return this.writer.send(draft, base);
  }
  read(chatId: string, reader: string, lastReadId: string | null) {
    return this.writer.read(chatId, reader, lastReadId);
  }
  readOne(chatId: string, reader: string, messageId: string) {
    return this.writer.readOne(chatId, reader, messageId);
  }
  deleteMessage(chatId: string, sender: string, recipient: string, messageId: string) {
    return this.writer.deleteMessage(chatId, sender, recipient, messageId);
  }
  clear(chatId: string, who: string) {
    return this.writer.clear(chatId, who);
  }
}
