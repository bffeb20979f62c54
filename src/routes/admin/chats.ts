/**
 * Pleroma 2.5's admin views of chats (admin-fe's user page and chat page): a user's chats, one chat, its messages
 * (every one: staff see what either side cleared), and deleting a message (as its sender would: a local sender's
 * Delete is federated). Chats are per pair here: a chat's `sender` is its first side.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { db, now } from "../../db/client";
import type { AppEnv } from "../../http/app-env";
import { pageParams, setLinkHeader } from "../../http/pagination";
import { after, route, type Ctx } from "../../http/route";
import { hostOf, renderContext } from "../../http/urls";
import { notFound } from "../../lib/errors";
import { renderAccount } from "../../render/account";
import { renderChat, renderChatMessage } from "../../render/chat";
import { AccountSchema } from "../../schemas/account";
import { ChatMessageSchema, ChatSchema } from "../../schemas/chat";
import { findAccount } from "../../services/accounts";
import { anyChat, chatList, chatRoom, messagePage, ownMessage, type ChatView } from "../../services/chats";
import { logEntry } from "../../services/moderation-log";
import { ADMIN_TAG, actorOf } from "./common";

const AdminChatSchema = ChatSchema.omit({ account: true })
  .extend({ sender: AccountSchema, receiver: AccountSchema })
  .openapi("AdminChat");

const admin = { tags: ADMIN_TAG, auth: "user" } as const;
const chatId = { id: z.string().max(100) };

/** A chat as Pleroma's admin view: the side it is seen from (`sender`) and the other (`receiver`). */
async function adminChat(c: Ctx, view: ChatView) {
  const d = db(c.env);
  const ctx = renderContext(c, view.viewerId);
  const owner = await findAccount(d, view.viewerId, hostOf(c));
  if (!owner) throw notFound();
  const { account, ...chat } = renderChat(ctx, view);
  return { ...chat, sender: renderAccount(ctx, owner), receiver: account };
}

export function registerAdminChatRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/admin/users/:nickname/chats",
    summary: "A user's chats, as Pleroma's admin view (`sender`, `receiver`, the last message)",
    scopes: ["admin:read:chats"],
    privilege: "messages_read",
    params: z.object({ nickname: z.string().max(300) }),
    response: z.array(AdminChatSchema),
    handler: async (c, p) => {
      const d = db(c.env);
      const found = await findAccount(d, p.nickname, hostOf(c));
      if (!found) throw notFound("Not found");
      // A remote account's chats are kept by its server (Pleroma answers [] too).
      if (!found.user) return c.json([]);
      // Rendered as the user sees their chats (Pleroma renders the sender without visibility checks).
      const ctx = renderContext(c, found.account.id);
      const sender = renderAccount(ctx, found);
      const views = await chatList(d, found.account.id, { withMuted: true });
      return c.json(
        views.map((v) => {
          const { account, ...chat } = renderChat(ctx, v);
          return { ...chat, sender, receiver: account };
        }),
      );
    },
  });

  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/admin/chats/:id",
    summary: "A chat, as Pleroma's admin view",
    scopes: ["admin:read:chats"],
    privilege: "messages_read",
    params: z.object(chatId),
    response: AdminChatSchema,
    handler: async (c, p) => c.json(await adminChat(c, await anyChat(db(c.env), p.id))),
  });

  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/admin/chats/:id/messages",
    summary: "A chat's messages, newest first (every one, whatever either side cleared)",
    scopes: ["admin:read:chats"],
    privilege: "messages_read",
    params: z.object({ ...chatId, ...pageParams(20) }),
    response: z.array(ChatMessageSchema),
    handler: async (c, p, auth) => {
      const messages = await messagePage(db(c.env), null, p.id, p);
      setLinkHeader(
        c,
        messages.map((m) => m.message.id),
      );
      const ctx = renderContext(c, auth.account.id);
      return c.json(messages.map((m) => renderChatMessage(ctx, m.message, m.media)));
    },
  });

  route(app, {
    ...admin,
    method: "delete",
    path: "/api/v1/pleroma/admin/chats/:id/messages/:message_id",
    summary: "Delete a chat message (as its sender would: a local sender's Delete is federated)",
    scopes: ["admin:write:chats"],
    privilege: "messages_delete",
    params: z.object({ ...chatId, message_id: z.string().max(100) }),
    response: ChatMessageSchema,
    handler: async (c, p, auth) => {
      const found = await ownMessage(db(c.env), null, p.id, p.message_id);
      const sender = found.message.accountId;
      const other = found.chat.aId === sender ? found.chat.bId : found.chat.aId;
      after(c, await chatRoom(c.env, found.chat.id).deleteMessage(found.chat.id, sender, other, found.message.id));
      // Logged once the chat's own writer has deleted it (its writes are the Durable Object's, not this batch).
      const d = db(c.env);
      await d.$client.batch([
        logEntry(
          d,
          actorOf(auth),
          "chat_message_delete",
          { subject_id: found.message.id },
          `@${auth.account.username} deleted chat message #${found.message.id}`,
          now(),
        ),
      ]);
      return c.json(renderChatMessage(renderContext(c, auth.account.id), found.message, found.media));
    },
  });
}
