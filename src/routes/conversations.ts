/** Direct-message conversations (Mastodon's and Pleroma's endpoints). */
import { ConversationSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { pageParams, setLinkHeader } from "../http/pagination";
import { arrayParam, boolParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { renderContext } from "../http/urls";
import { renderConversations } from "../render/conversation";
import { renderStatuses } from "../render/status";
import { StatusSchema } from "../schemas/status";
import * as conv from "../services/conversations";
import { hydrate } from "../services/hydrate";

const render = async (c: Ctx, me: string, parts: conv.ParticipationRow[]) =>
  renderConversations(renderContext(c, me), await conv.loadConversations(db(c.env), me, parts));

export function registerConversationRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/conversations",
    summary: "The user's direct conversations, most recent first",
    tags: ["Conversations"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object({ ...pageParams(20), recipients: arrayParam(z.string()).optional() }),
    response: z.array(ConversationSchema),
    handler: async (c, p, auth) => {
      const parts = await conv.listParticipations(db(c.env), auth.account.id, p, p.recipients);
      setLinkHeader(
        c,
        parts.flatMap((x) => (x.lastStatusId ? [x.lastStatusId] : [])),
      );
      return c.json(await render(c, auth.account.id, parts));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/conversations/:id",
    summary: "A conversation",
    tags: ["Conversations"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object({ id: z.string() }),
    response: ConversationSchema,
    handler: async (c, p, auth) =>
      c.json((await render(c, auth.account.id, [await conv.ownParticipation(db(c.env), auth.account.id, p.id)]))[0]),
  });

  route(app, {
    method: "delete",
    path: "/api/v1/conversations/:id",
    summary: "Leave a conversation (its statuses stay)",
    tags: ["Conversations"],
    auth: "user",
    scopes: ["write:conversations"],
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      await conv.deleteParticipation(db(c.env), auth.account.id, p.id);
      return c.json({});
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/conversations/:id/read",
    summary: "Mark a conversation read",
    tags: ["Conversations"],
    auth: "user",
    scopes: ["write:conversations"],
    params: z.object({ id: z.string() }),
    response: ConversationSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const part = await conv.ownParticipation(d, auth.account.id, p.id);
      await conv.markRead(d, auth.account.id, [part.id]);
      return c.json((await render(c, auth.account.id, [{ ...part, unread: false }]))[0]);
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/conversations/read",
    summary: "Mark every conversation read; answers those that were unread",
    tags: ["Conversations"],
    auth: "user",
    scopes: ["write:conversations"],
    response: z.array(ConversationSchema),
    handler: async (c, _p, auth) => {
      const d = db(c.env);
      const ids = await conv.markRead(d, auth.account.id, "all");
      // One read for all of them (not one per conversation), newest first as in the list.
      const parts = (await conv.participationsByIds(d, ids)).sort((a, b) =>
        (a.lastStatusId ?? "") < (b.lastStatusId ?? "") ? 1 : -1,
      );
      return c.json(await render(c, auth.account.id, parts));
    },
  });

  route(app, {
    method: "patch",
    path: "/api/v1/pleroma/conversations/:id",
    summary: "Replace whom your replies in a conversation address (you always stay)",
    tags: ["Conversations"],
    auth: "user",
    scopes: ["write:conversations"],
    params: z.object({ id: z.string(), recipients: arrayParam(z.string(), 100) }),
    response: ConversationSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      await conv.setRecipients(d, auth.account.id, p.id, p.recipients);
      return c.json((await render(c, auth.account.id, [await conv.ownParticipation(d, auth.account.id, p.id)]))[0]);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/conversations/:id/statuses",
    summary: "Statuses of a conversation you may see, newest first",
    tags: ["Conversations"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object({ id: z.string(), ...pageParams(20), with_muted: boolParam().optional() }),
    response: z.array(StatusSchema),
    handler: async (c, p, auth) => {
      const me = auth.account.id;
      const part = await conv.ownParticipation(db(c.env), me, p.id);
      const page = conv.conversationStatusesPage(part.threadId, me, p, p.with_muted ?? false);
      const h = await hydrate(db(c.env), page, me);
      setLinkHeader(c, h.page);
      return c.json(renderStatuses(renderContext(c, me), h, h.page));
    },
  });
}
