/**
 * Chats: one-to-one messages, one chat per unordered pair of accounts (`a_id` < `b_id`), created on demand.
 * Reads are here, one D1 round trip each (the chat list and a message page come with the other account, the last
 * message and its attachment). Every write to a chat's messages, unread counts and read marks goes through the
 * chat's ChatRoom object (src/objects/chat-room.ts), its single writer; this module checks the rules first
 * (blocks either way, `accepts_chat_messages`, deactivation, `chat_limit`, own unattached media).
 */
import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { isId, newId } from "../db/ids";
import { accounts, chatMessages, chats, mediaAttachments, userColumns, users, type StatusEmoji } from "../db/schema";
import type { ChatWriterMethods, MessageDraft } from "../objects/contracts";

export type { MessageDraft } from "../objects/contracts";
import { badRequest, notFound } from "../lib/errors";
import { inOrder, pageQuery, type Page } from "../db/paging";
import { plainTextToHtml } from "../content/text";
import { extract } from "../content/format";
import type { Env } from "../env";
import type { AccountWithUser } from "./accounts";
import type { MediaRow } from "./hydrate";
import { silenced } from "./visibility";
import { localEmojisNamed, resolveLocalEmojis } from "./emoji";

export type ChatRow = typeof chats.$inferSelect;
export type ChatMessageRow = typeof chatMessages.$inferSelect;

const pairOf = (x: string, y: string): [string, string] => (x < y ? [x, y] : [y, x]);

/** A chat as one side sees it: the other account, the unread count and the last message visible to that side. */
export interface ChatView {
  chat: ChatRow;
  viewerId: string;
  other: AccountWithUser;
  unread: number;
  lastMessage: ChatMessageRow | null;
  lastMedia: MediaRow | null;
}

const otherId = (me: string) => sql`CASE WHEN ${chats.aId} = ${me} THEN ${chats.bId} ELSE ${chats.aId} END`;
/** `me`'s open chats; any chat for staff (`null`: the admin API's chat views). */
const mine = (me: string | null) =>
  me === null
    ? sql`1`
    : sql`((${chats.aId} = ${me} AND ${chats.aOpen} = 1) OR (${chats.bId} = ${me} AND ${chats.bOpen} = 1))`;
/** What `me` cleared from view; staff see every message. */
const myCleared = (me: string | null) =>
  me === null
    ? sql`''`
    : sql`coalesce(CASE WHEN ${chats.aId} = ${me} THEN ${chats.aClearedId} ELSE ${chats.bClearedId} END, '')`;

/**
 * The other side's user columns a chat renders (D1 answers at most 100 columns per row, and chat, account, message
 * and attachment already take most): the user's own settings and sources are only rendered for themselves.
 */
const {
  settingsStore: _s,
  notificationSettings: _n,
  noteSource: _ns,
  fieldsSource: _fs,
  mascot: _m,
  registrationReason: _r,
  quotePolicy: _q,
  ...otherUserColumns
} = userColumns;
const OMITTED_USER = {
  settingsStore: {},
  notificationSettings: null,
  noteSource: null,
  fieldsSource: null,
  mascot: null,
  registrationReason: null,
  quotePolicy: "public" as const,
};

/**
 * The query of chat views for `me` (one statement: chat, other account, last message and its attachment); `staff`:
 * whether or not `me` keeps it open or cleared it (the admin API's view, from one side).
 */
function chatViewQuery(d: DB, me: string, where: SQL | undefined, staff = false) {
  return d
    .select({ chat: chats, account: accounts, user: otherUserColumns, message: chatMessages, media: mediaAttachments })
    .from(chats)
    .innerJoin(accounts, eq(accounts.id, otherId(me)))
    .leftJoin(users, eq(users.accountId, accounts.id))
    .leftJoin(
      chatMessages,
      and(eq(chatMessages.id, chats.lastMessageId), sql`${chatMessages.id} > ${myCleared(staff ? null : me)}`),
    )
    .leftJoin(mediaAttachments, eq(mediaAttachments.id, chatMessages.mediaId))
    .where(and(mine(staff ? null : me), where));
}

type ViewRow = Awaited<ReturnType<ReturnType<typeof chatViewQuery>["all"]>>[number];
const toView =
  (me: string) =>
  (r: ViewRow): ChatView => ({
    chat: r.chat,
    viewerId: me,
    other: { account: r.account, user: (r.user ? { ...r.user, ...OMITTED_USER } : null) as AccountWithUser["user"] },
    unread: r.chat.aId === me ? r.chat.aUnread : r.chat.bUnread,
    lastMessage: r.message,
    lastMedia: r.media,
  });

/** The chat list, most recently updated first: blocked accounts' chats never, muted ones only `withMuted`. */
export async function chatList(d: DB, me: string, opts: { withMuted: boolean; page?: Page }): Promise<ChatView[]> {
  const hidden = silenced(me, accounts.id, {
    blocks: "viewer",
    mutes: opts.withMuted ? "none" : "any",
    domains: false,
    now: sql`${Date.now()}`,
  });
  const q = opts.page ? pageQuery(chats.sortKey, opts.page) : null;
  const base = chatViewQuery(d, me, and(sql`NOT ${hidden}`, eq(accounts.deactivated, false), q?.where));
  const rows = q ? await base.orderBy(q.orderBy).limit(q.limit) : await base.orderBy(sql`${chats.sortKey} DESC`);
  return (q ? inOrder(rows, q) : rows).map(toView(me));
}

/** One chat of `me`, or 404 (another pair's chat does not exist for you). */
export async function ownChat(d: DB, me: string, id: string): Promise<ChatView> {
  const [row] = await chatViewQuery(d, me, eq(chats.id, isId(id) ? id : "")).limit(1);
  if (!row) throw notFound();
  return toView(me)(row);
}

/** Any chat, as its first side sees it (the admin API's view: `sender` is that side), or 404. */
export async function anyChat(d: DB, id: string): Promise<ChatView> {
  const row = await d
    .select({ aId: chats.aId })
    .from(chats)
    .where(eq(chats.id, isId(id) ? id : ""))
    .get();
  if (!row) throw notFound();
  const [view] = await chatViewQuery(d, row.aId, eq(chats.id, id), true).limit(1);
  if (!view) throw notFound();
  return toView(row.aId)(view);
}

/** Views of one chat for both its sides (for `pleroma:chat_update`): two reads side by side. */
export async function bothViews(d: DB, chat: Pick<ChatRow, "id" | "aId" | "bId">): Promise<ChatView[]> {
  // Not one d.batch: batched rows come back as objects, and joined tables' same-named columns would collide.
  const [a, b] = await Promise.all([
    chatViewQuery(d, chat.aId, eq(chats.id, chat.id)),
    chatViewQuery(d, chat.bId, eq(chats.id, chat.id)),
  ]);
  return [...a.map(toView(chat.aId)), ...b.map(toView(chat.bId))];
}

/** The chat of a pair's id, created if absent (one statement; never more than one per pair); reopened for `reopen`. */
async function ensureChat(d: DB, x: string, y: string, reopen: string | null): Promise<string> {
  const [a, b] = pairOf(x, y);
  const t = Date.now();
  const id = newId(t);
  const set = reopen === a ? sql`a_open = 1` : reopen === b ? sql`b_open = 1` : sql`a_open = a_open`;
  const row = await statement(
    d,
    sql`INSERT INTO chats (id, a_id, b_id, sort_key, created_at, updated_at) VALUES (${id}, ${a}, ${b}, ${id}, ${t}, ${t})
      ON CONFLICT (a_id, b_id) DO UPDATE SET ${set} RETURNING id`,
  ).first<{ id: string }>();
  return row!.id;
}

/** The chat with `target`, created (or reopened for `me`) on demand: never more than one per pair. */
export async function chatWith(d: DB, me: string, target: AccountWithUser): Promise<ChatView> {
  if (target.account.id === me) throw notFound();
  const id = await ensureChat(d, me, target.account.id, me);
  const [row] = await chatViewQuery(d, me, eq(chats.id, id)).limit(1);
  if (!row) throw notFound();
  return toView(me)(row);
}

/**
 * A page of messages of one of `me`'s chats (any chat, every message, for staff: `null`), newest first, with their
 * attachments: one statement, the chat left-joined to its page (a chat with no message on the page still answers
 * one row, so 404 means no chat).
 */
export async function messagePage(
  d: DB,
  me: string | null,
  chatId: string,
  page: Page,
): Promise<{ message: ChatMessageRow; media: MediaRow | null }[]> {
  const q = pageQuery(chatMessages.id, page);
  const rows = await d
    .select({ message: chatMessages, media: mediaAttachments })
    .from(chats)
    .leftJoin(chatMessages, and(eq(chatMessages.chatId, chats.id), sql`${chatMessages.id} > ${myCleared(me)}`, q.where))
    .leftJoin(mediaAttachments, eq(mediaAttachments.id, chatMessages.mediaId))
    .where(and(eq(chats.id, isId(chatId) ? chatId : ""), mine(me)))
    .orderBy(q.orderBy)
    .limit(q.limit);
  if (rows.length === 0) throw notFound();
  return inOrder(
    rows.flatMap((r) => (r.message ? [{ message: r.message, media: r.media }] : [])),
    q,
  );
}

/** One message of one of `me`'s chats (of any chat for staff: `null`), or 404. */
export async function ownMessage(d: DB, me: string | null, chatId: string, messageId: string) {
  const [row] = await d
    .select({ message: chatMessages, media: mediaAttachments, chat: chats })
    .from(chatMessages)
    .innerJoin(chats, eq(chats.id, chatMessages.chatId))
    .leftJoin(mediaAttachments, eq(mediaAttachments.id, chatMessages.mediaId))
    .where(
      and(
        eq(chatMessages.id, isId(messageId) ? messageId : ""),
        eq(chatMessages.chatId, chatId),
        mine(me),
        sql`${chatMessages.id} > ${myCleared(me)}`,
      ),
    )
    .limit(1);
  if (!row) throw notFound();
  return row;
}

/** Chat message text as HTML: escaped, links made clickable, line breaks kept (no markup from the user). */
const chatHtml = (text: string) => plainTextToHtml(text);

/**
 * Checks a local user's new message and builds its draft: the chat is the sender's, the recipient is active,
 * accepts chat messages and neither blocks the other; the text fits `chat_limit`; the media is the sender's own
 * and attached nowhere. One round trip.
 */
export async function draftMessage(
  d: DB,
  sender: string,
  chatId: string,
  input: { content?: string; media_id?: string; idempotencyKey: string | null },
  opts: { chatLimit: number; host: string },
): Promise<MessageDraft> {
  const text = input.content ?? "";
  if ([...text].length > opts.chatLimit) throw badRequest("content_too_long");
  if (text.trim() === "" && !input.media_id) throw badRequest("no_content");
  const shortcodes = (await extract(text, "text/plain", opts.host)).emojis;
  const id = isId(chatId) ? chatId : "";
  const [chatRows, mediaRows, emojiRows] = await d.batch([
    d
      // Named columns: batched rows come back as objects, where two `id`s would collide.
      .select({
        chatId: sql<string>`${chats.id}`.as("chat_id"),
        recipientId: sql<string>`${accounts.id}`.as("recipient_id"),
        deactivated: sql<number>`${accounts.deactivated}`.as("deactivated"),
        accepts: sql<number | null>`${accounts.acceptsChatMessages}`.as("accepts"),
        blocked: sql<number>`${silenced(sender, accounts.id, { blocks: "either", mutes: "none", domains: false })}`.as(
          "blocked",
        ),
      })
      .from(chats)
      .innerJoin(accounts, eq(accounts.id, otherId(sender)))
      .where(and(eq(chats.id, id), mine(sender))),
    d
      .select()
      .from(mediaAttachments)
      .where(
        and(
          eq(mediaAttachments.id, input.media_id ?? ""),
          eq(mediaAttachments.accountId, sender),
          isNull(mediaAttachments.statusId),
          isNull(mediaAttachments.scheduledStatusId),
          isNull(mediaAttachments.chatMessageId),
        ),
      ),
    localEmojisNamed(d, shortcodes),
  ]);
  const found = chatRows[0];
  if (!found) throw notFound();
  if (input.media_id && !mediaRows[0]) throw badRequest("Media not found");
  if (found.deactivated) throw badRequest("recipient is deactivated");
  if (found.blocked) throw badRequest("actor is blocked by recipient");
  if (found.accepts === 0) throw badRequest("recipient does not accept chat messages");
  return {
    chatId: found.chatId,
    senderId: sender,
    recipientId: found.recipientId,
    content: chatHtml(text),
    emojis: resolveLocalEmojis(shortcodes, emojiRows),
    mediaId: mediaRows[0]?.id ?? null,
    idempotencyKey: input.idempotencyKey ? input.idempotencyKey.slice(0, 200) : null,
    uri: null,
  };
}

type Writer = ChatWriterMethods;

/**
 * Test seam: the two-instance tests give each instance its own D1, but Durable Objects run with the pool's
 * bindings; there each chat's writer runs in process, one per database and chat (as HostDelivery is drained).
 */
export const chatRoomSeam: { inProcess: ((env: Env, chatId: string) => Writer) | null } = { inProcess: null };

/** The chat's single writer: its ChatRoom object. */
export const chatRoom = (env: Env, chatId: string): Writer =>
  chatRoomSeam.inProcess ? chatRoomSeam.inProcess(env, chatId) : env.CHAT_ROOMS.get(env.CHAT_ROOMS.idFromName(chatId));

/** Unread messages of one side, counted from the rows (exact whatever ran before). */
export function unreadCount(side: "a" | "b"): SQL {
  const reader = sql.raw(`chats.${side}_id`);
  const cleared = sql.raw(`chats.${side}_cleared_id`);
  return sql`(SELECT count(*) FROM chat_messages um WHERE um.chat_id = chats.id AND um.account_id <> ${reader} AND um.unread = 1 AND um.id > coalesce(${cleared}, ''))`;
}

/**
 * An incoming ChatMessage from a remote account: to exactly one local, active recipient who accepts chat messages
 * and is not blocked either way; an attachment is kept by URL. Written through the chat's ChatRoom (a repeat of
 * the same object id is found there). False when refused.
 */
export async function receiveChatMessage(
  d: DB,
  env: Env,
  from: { id: string; deactivated: boolean },
  m: {
    uri: string;
    to: string[];
    content: string;
    emojis: StatusEmoji[];
    attachment: { url: string; mimeType: string; description: string | null } | null;
  },
  base: string,
): Promise<boolean> {
  if (m.to.length !== 1 || from.deactivated) return false;
  const [recipient] = await d
    .select({
      id: accounts.id,
      accepts: accounts.acceptsChatMessages,
      blocked: sql<number>`${silenced(from.id, accounts.id, { blocks: "either", mutes: "none", domains: false })}`,
    })
    .from(accounts)
    .where(and(eq(accounts.uri, m.to[0]), isNull(accounts.domain), eq(accounts.deactivated, false)))
    .limit(1);
  if (!recipient || recipient.blocked || recipient.accepts === false) return false;
  if (m.content.trim() === "" && !m.attachment) return false;
  const chatId = await ensureChat(d, from.id, recipient.id, null);
  let mediaId: string | null = null;
  if (m.attachment) {
    const t = Date.now();
    mediaId = newId(t);
    const kind = m.attachment.mimeType.split("/")[0];
    await d.insert(mediaAttachments).values({
      id: mediaId,
      accountId: from.id,
      file: m.attachment.url,
      remoteUrl: m.attachment.url,
      mimeType: m.attachment.mimeType,
      type: kind === "image" ? "image" : kind === "video" ? "video" : kind === "audio" ? "audio" : "unknown",
      description: m.attachment.description,
      createdAt: t,
    });
  }
  const sent = await chatRoom(env, chatId).send(
    {
      chatId,
      senderId: from.id,
      recipientId: recipient.id,
      content: m.content,
      emojis: m.emojis,
      mediaId,
      idempotencyKey: null,
      uri: m.uri,
    },
    base,
  );
  return sent.created;
}

/** A remote sender's Delete of its chat message (by the object's id); false when there is no such message. */
export async function receiveChatMessageDelete(d: DB, env: Env, uri: string, senderUri: string): Promise<boolean> {
  const [row] = await d
    .select({
      id: chatMessages.id,
      chatId: chatMessages.chatId,
      senderId: chatMessages.accountId,
      aId: chats.aId,
      bId: chats.bId,
    })
    .from(chatMessages)
    .innerJoin(chats, eq(chats.id, chatMessages.chatId))
    .innerJoin(accounts, eq(accounts.id, chatMessages.accountId))
    .where(and(eq(chatMessages.uri, uri), eq(accounts.uri, senderUri)))
    .limit(1);
  if (!row) return false;
  await chatRoom(env, row.chatId).deleteMessage(
    row.chatId,
    row.senderId,
    row.aId === row.senderId ? row.bId : row.aId,
    row.id,
  );
  return true;
}
