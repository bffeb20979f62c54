/**
 * Pleroma's chats (`/api/v1/pleroma/chats`, and `/api/pleroma/chats` by route()). Another pair's chat, or a
 * message of it, answers 404 as if it did not exist. Writes go through the chat's ChatRoom object.
 */
import { accountToActOn } from "../services/accounts";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { config } from "../env";
import { db } from "../db/client";
import { pageParams, setLinkHeader } from "../http/pagination";
import { boolParam, optionalString } from "../http/params";
import { notFound } from "../lib/errors";
import { after, route, type Ctx } from "../http/route";
import { baseUrl, hostOf, renderContext } from "../http/urls";
import { ChatMessageSchema, ChatSchema } from "../schemas/chat";
import { renderChat, renderChatMessage } from "../render/chat";
import * as chats from "../services/chats";

const read = ["read:chats"];
const write = ["write:chats"];
const chatId = { id: z.string() };

export function registerChatRoutes(app: OpenAPIHono<AppEnv>) {
  const tags = ["Chats"];
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/chats/by-account-id/:id",
    summary: "The chat with an account (created if absent; never more than one per pair)",
    tags,
    auth: "user",
    scopes: write,
    params: z.object({ id: z.string() }),
    response: ChatSchema,
    handler: async (c, p, auth) => {
      const target = await accountToActOn(db(c.env), p.id, hostOf(c));
      return c.json(
        renderChat(renderContext(c, auth.account.id), await chats.chatWith(db(c.env), auth.account.id, target)),
      );
    },
  });
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/chats",
    summary: "The user's chats, most recently updated first (no pagination)",
    tags,
    auth: "user",
    scopes: read,
    params: z.object({ with_muted: boolParam().optional() }),
    response: z.array(ChatSchema),
    handler: async (c, p, auth) => {
      const views = await chats.chatList(db(c.env), auth.account.id, { withMuted: p.with_muted ?? false });
      const ctx = renderContext(c, auth.account.id);
      return c.json(views.map((v) => renderChat(ctx, v)));
    },
  });
  route(app, {
    method: "get",
    path: "/api/v2/pleroma/chats",
    summary: "The user's chats, most recently updated first, paginated (Link headers)",
    tags,
    auth: "user",
    scopes: read,
    params: z.object({ with_muted: boolParam().optional(), ...pageParams(20) }),
    response: z.array(ChatSchema),
    handler: async (c, p, auth) => {
      const views = await chats.chatList(db(c.env), auth.account.id, { withMuted: p.with_muted ?? false, page: p });
      setLinkHeader(
        c,
        views.map((v) => v.chat.sortKey),
      );
      const ctx = renderContext(c, auth.account.id);
      return c.json(views.map((v) => renderChat(ctx, v)));
    },
  });
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/chats/:id",
    summary: "A chat",
    tags,
    auth: "user",
    scopes: read,
    params: z.object(chatId),
    response: ChatSchema,
    handler: async (c, p, auth) =>
      c.json(renderChat(renderContext(c, auth.account.id), await chats.ownChat(db(c.env), auth.account.id, p.id))),
  });
  route(app, {
    method: "delete",
    path: "/api/v1/pleroma/chats/:id",
    summary: "Delete a chat (for the user: its messages so far and the chat leave their list)",
    tags,
    auth: "user",
    scopes: write,
    params: z.object(chatId),
    response: ChatSchema,
    handler: async (c, p, auth) => {
      const view = await chats.ownChat(db(c.env), auth.account.id, p.id);
      await chats.chatRoom(c.env, view.chat.id).clear(view.chat.id, auth.account.id);
      return c.json(renderChat(renderContext(c, auth.account.id), view));
    },
  });
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/chats/:id/messages",
    summary: "Messages of a chat, newest first",
    tags,
    auth: "user",
    scopes: read,
    params: z.object({ ...chatId, ...pageParams(20) }),
    response: z.array(ChatMessageSchema),
    handler: async (c, p, auth) => {
      const messages = await chats.messagePage(db(c.env), auth.account.id, p.id, p);
      setLinkHeader(
        c,
        messages.map((m) => m.message.id),
      );
      const ctx = renderContext(c, auth.account.id);
      return c.json(messages.map((m) => renderChatMessage(ctx, m.message, m.media)));
    },
  });
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/chats/:id/messages",
    summary: "Send a message (content and/or media_id; Idempotency-Key dedupes a resend)",
    tags,
    auth: "user",
    scopes: write,
    params: z.object({ ...chatId, content: z.string().optional(), media_id: optionalString() }),
    response: ChatMessageSchema,
    handler: async (c, p, auth) => {
      const me = auth.account.id;
      const draft = await chats.draftMessage(
        db(c.env),
        me,
        p.id,
        { content: p.content, media_id: p.media_id, idempotencyKey: c.req.header("idempotency-key") ?? null },
        { chatLimit: config(c.env).chatLimit, host: hostOf(c) },
      );
      const sent = await chats.chatRoom(c.env, draft.chatId).send(draft, baseUrl(c));
      after(c, sent.effects);
      return c.json(renderChatMessage(renderContext(c, me), sent.message, sent.media));
    },
  });
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/chats/:id/read",
    summary: "Mark the chat's messages up to last_read_id read",
    tags,
    auth: "user",
    scopes: write,
    params: z.object({ ...chatId, last_read_id: optionalString() }),
    response: ChatSchema,
    handler: async (c, p, auth) => {
      const me = auth.account.id;
      const view = await chats.ownChat(db(c.env), me, p.id);
      await chats.chatRoom(c.env, view.chat.id).read(view.chat.id, me, p.last_read_id ?? null);
      return c.json(renderChat(renderContext(c, me), await chats.ownChat(db(c.env), me, p.id), { withLast: false }));
    },
  });
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/chats/:id/messages/:message_id/read",
    summary: "Mark one message read",
    tags,
    auth: "user",
    scopes: write,
    params: z.object({ ...chatId, message_id: z.string() }),
    response: ChatMessageSchema,
    handler: async (c, p, auth) => messageAction(c, p, auth.account.id, "read"),
  });
  route(app, {
    method: "delete",
    path: "/api/v1/pleroma/chats/:id/messages/:message_id",
    summary: "Delete one of your messages",
    tags,
    auth: "user",
    scopes: write,
    params: z.object({ ...chatId, message_id: z.string() }),
    response: ChatMessageSchema,
    handler: async (c, p, auth) => messageAction(c, p, auth.account.id, "delete"),
  });
}

async function messageAction(c: Ctx, p: { id: string; message_id: string }, me: string, action: "read" | "delete") {
  const d = db(c.env);
  const found = await chats.ownMessage(d, me, p.id, p.message_id);
  const room = chats.chatRoom(c.env, found.chat.id);
  const ctx = renderContext(c, me);
  if (action === "read") {
    await room.readOne(found.chat.id, me, found.message.id);
    return c.json(
      renderChatMessage(
        ctx,
        { ...found.message, unread: found.message.accountId === me ? found.message.unread : false },
        found.media,
      ),
    );
  }
  // Only your own messages can be deleted; another's answers 404, as Pleroma does.
  if (found.message.accountId !== me) throw notFound();
  const other = found.chat.aId === me ? found.chat.bId : found.chat.aId;
  after(c, await room.deleteMessage(found.chat.id, me, other, found.message.id));
  return c.json(renderChatMessage(ctx, found.message, found.media));
}
