/** Posting, reading, deleting and acting on statuses; emoji reactions; bookmarks. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { config, MEDIA_ATTACHMENTS_MAX } from "../env";
import { db } from "../db/client";
import { isId } from "../db/ids";
import { bookmarks } from "../db/schema";
import type { UserAuth } from "../http/auth";
import { pageParams } from "../http/pagination";
import { arrayParam, boolParam, durationParam, optionalString } from "../http/params";
import { after, route, type Ctx } from "../http/route";
import { baseUrl, hostOf, renderContext } from "../http/urls";
import { POST_FORMATS } from "../render/instance";
import { renderReactions } from "../render/reaction";
import { renderScheduled } from "../render/scheduled";
import { renderCard, renderStatuses } from "../render/status";
import { AccountSchema } from "../schemas/account";
import {
  CardSchema,
  ContextSchema,
  EmojiReactionAccountsSchema,
  ScheduledStatusSchema,
  StatusEditSchema,
  StatusSchema,
  StatusSourceSchema,
} from "../schemas/status";
import { currentVersion, renderStatusEdit } from "../render/status-edit";
import { editStatus, statusVersions } from "../services/status-edits";
import { relatedStatusAccounts } from "../services/account-pages";
import { contextIds, threadFetch } from "../services/context";
import { listReactions } from "../services/reactions";
import { ensureCard } from "../services/cards";
import { allowPrivateAddress } from "../lib/outbound";
import { resolveEnv, resolveMentions } from "../federation/fetching/resolve";
import {
  previewHydrated,
  preparePost,
  createStatus,
  deleteStatuses,
  visibleAmong,
  visibleStatus,
  type PostContext,
} from "../services/statuses";
import * as actions from "../services/status-actions";
import { scheduledById, scheduleStatus } from "../services/scheduled";
import { answerAccounts } from "./account-list";
import { answerMarked, loadStatus, loadStatuses } from "./status-answer";
import { notFound } from "../lib/errors";

const postParams = z.object({
  status: z.string().optional(),
  in_reply_to_id: optionalString(),
  media_ids: arrayParam(z.string(), MEDIA_ATTACHMENTS_MAX).optional(),
  poll: z
    .object({
      options: arrayParam(z.string()),
      expires_in: durationParam(),
      multiple: boolParam().optional(),
      hide_totals: boolParam().optional(),
    })
    .optional(),
  sensitive: boolParam().optional(),
  spoiler_text: z.string().optional(),
  visibility: optionalString(),
  scheduled_at: optionalString(),
  language: optionalString(),
  preview: boolParam().optional(),
  content_type: optionalString(),
  to: arrayParam(z.string(), 100).optional(),
  expires_in: durationParam().optional(),
  in_reply_to_conversation_id: optionalString(),
  quoted_status_id: optionalString(),
  quote_id: optionalString(),
  quote_approval_policy: optionalString(),
});

/** What posting needs from a request: also the remote interaction page's reply (a browser session, no app). */
export function postContext(c: Ctx, auth: Pick<UserAuth, "account" | "user" | "app">): PostContext {
  return {
    d: db(c.env),
    cfg: config(c.env),
    base: baseUrl(c),
    host: hostOf(c),
    author: { account: auth.account, user: auth.user },
    appId: auth.app?.id ?? null,
    postFormats: POST_FORMATS,
    resolveMentions: (keys) =>
      resolveMentions(
        resolveEnv(c.env, baseUrl(c), hostOf(c), (e) => after(c, e)),
        keys,
      ),
  };
}

const idParam = z.object({ id: z.string() });

/** What an edit may change (Mastodon 3.5, Pleroma 2.5): visibility, reply target and scheduling stay. */
const editParams = z.object({
  id: z.string(),
  status: postParams.shape.status,
  spoiler_text: postParams.shape.spoiler_text,
  sensitive: postParams.shape.sensitive,
  language: postParams.shape.language,
  content_type: postParams.shape.content_type,
  media_ids: postParams.shape.media_ids,
  media_attributes: arrayParam(
    // masto.js apps send `null` for what they leave as it is.
    z.object({ id: z.string(), description: z.string().nullish(), focus: z.string().nullish() }),
    MEDIA_ATTACHMENTS_MAX,
  ).optional(),
  poll: postParams.shape.poll,
});

const viewer = (auth: { account: { id: string } | null } | null) => auth?.account?.id ?? null;

export function registerStatusRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/statuses",
    summary: "Post a status (or schedule it, or preview it)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["write:statuses"],
    params: postParams,
    response: z.union([StatusSchema, ScheduledStatusSchema]),
    handler: async (c, p, auth) => {
      const ctx = postContext(c, auth);
      const key = c.req.header("idempotency-key") || undefined;
      if (p.scheduled_at) {
        const scheduled = await scheduleStatus(ctx, p, p.scheduled_at, key);
        return c.json(renderScheduled(renderContext(c, auth.account.id), scheduled.row, scheduled.media));
      }
      if (p.preview) {
        const prepared = await preparePost(ctx, p);
        const h = previewHydrated(prepared, { account: auth.account, user: auth.user });
        return c.json(renderStatuses(renderContext(c, auth.account.id), h, [prepared.status.id])[0]);
      }
      const created = await createStatus(ctx, p, key);
      if ("earlier" in created) {
        // A retry: answer what the first request made.
        const [kind, id] = created.earlier.split(":");
        if (kind === "scheduled") {
          const s = await scheduledById(ctx.d, auth.account.id, id);
          return c.json(renderScheduled(renderContext(c, auth.account.id), s.row, s.media));
        }
        return c.json(await loadStatus(c, id, auth.account.id));
      }
      const { prepared, participationId, author, effects } = created;
      const s = prepared.status;
      after(c, effects);
      // A quote shows the quoted post, loaded with what the viewer may see of it.
      if (prepared.quote) return c.json(await loadStatus(c, s.id, auth.account.id));
      // The answer is rendered from what was just written: no second read.
      const h = previewHydrated(prepared, { account: { ...auth.account, ...author }, user: auth.user });
      if (participationId) h.participations.set(s.threadId, participationId);
      if (auth.app) h.apps.set(auth.app.id, { name: auth.app.name, website: auth.app.website });
      return c.json(renderStatuses(renderContext(c, auth.account.id), h, [s.id])[0]);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/statuses",
    summary: "Several statuses by id (at most 100; those you may not see are left out)",
    tags: ["Statuses"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: z.object({ ids: arrayParam(z.string(), 100) }),
    response: z.array(StatusSchema),
    handler: async (c, p, auth) => {
      const me = viewer(auth);
      const ids = [...new Set(p.ids.filter(isId))];
      const ok = await visibleAmong(db(c.env), ids, me);
      return c.json(
        await loadStatuses(
          c,
          ids.filter((id) => ok.has(id)),
          me,
        ),
      );
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/statuses/:id",
    summary: "A status",
    tags: ["Statuses"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: idParam,
    response: StatusSchema,
    handler: async (c, p, auth) => {
      const s = await visibleStatus(db(c.env), p.id, viewer(auth));
      return c.json(await loadStatus(c, s.id, viewer(auth)));
    },
  });

  route(app, {
    method: "put",
    path: "/api/v1/statuses/:id",
    summary: "Edit your status (text, content warning, sensitivity, language, media and their descriptions, poll)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["write:statuses"],
    params: editParams,
    rateLimit: { name: "statusEdits", by: (p) => `status:${p.id}`, byAddress: false },
    response: StatusSchema,
    handler: async (c, p, auth) => {
      const { id, ...input } = p;
      const edited = await editStatus(postContext(c, auth), id, input);
      after(c, edited.effects);
      return c.json(await loadStatus(c, edited.statusId, auth.account.id));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/statuses/:id/history",
    summary: "The versions of a status, oldest first (the original included; one when never edited)",
    tags: ["Statuses"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: idParam,
    response: z.array(StatusEditSchema),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const s = await visibleStatus(d, p.id, viewer(auth));
      const [current, versions] = await Promise.all([loadStatus(c, s.id, viewer(auth)), statusVersions(d, s.id)]);
      const ctx = renderContext(c, viewer(auth));
      return c.json(
        versions.length ? versions.map((v) => renderStatusEdit(ctx, v, current.account)) : [currentVersion(current)],
      );
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/statuses/:id",
    summary: "Delete your status (answers it with its source, for redrafting)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["write:statuses"],
    params: idParam,
    response: StatusSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const s = await visibleStatus(d, p.id, auth.account.id);
      if (s.accountId !== auth.account.id) throw notFound();
      const rendered = await loadStatus(c, s.id, auth.account.id, { withSource: true });
      after(c, (await deleteStatuses(d, [s.id])).effects);
      return c.json(rendered);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/statuses/:id/context",
    summary: "The statuses a status replies to, and the replies to it, that you may see",
    tags: ["Statuses"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: idParam,
    response: ContextSchema,
    handler: async (c, p, auth) => {
      const me = viewer(auth);
      const d = db(c.env);
      const s = await visibleStatus(d, p.id, me);
      const { ancestors, descendants } = await contextIds(d, s.id, me);
      after(c, threadFetch(s, me));
      const rendered = await loadStatuses(c, [...ancestors, ...descendants], me);
      return c.json({ ancestors: rendered.slice(0, ancestors.length), descendants: rendered.slice(ancestors.length) });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/statuses/:id/source",
    summary: "The text of a status as written, with its content type",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["read:statuses"],
    params: idParam,
    response: StatusSourceSchema,
    handler: async (c, p, auth) => {
      const s = await visibleStatus(db(c.env), p.id, auth.account.id);
      return c.json({ id: s.id, text: s.text, spoiler_text: s.spoilerText, content_type: s.contentType });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/statuses/:id/card",
    summary: "The preview card of the status's first link ({} when there is none)",
    tags: ["Statuses"],
    auth: "optional",
    scopes: ["read:statuses"],
    params: idParam,
    response: z.union([CardSchema, z.object({})]),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const s = await visibleStatus(d, p.id, viewer(auth));
      const data = s.cardUrl ? await ensureCard(d, s.cardUrl, allowPrivateAddress(c.env)) : null;
      return c.json(data ? renderCard(data) : {});
    },
  });

  for (const [name, table] of [
    ["reblogged_by", "reblogs"],
    ["favourited_by", "favourites"],
  ] as const) {
    route(app, {
      method: "get",
      path: `/api/v1/statuses/:id/${name}`,
      summary: name === "reblogged_by" ? "Accounts that reblogged the status" : "Accounts that favourited the status",
      tags: ["Statuses"],
      auth: "optional",
      scopes: ["read:statuses"],
      params: z.object({ id: z.string(), ...pageParams(40) }),
      response: z.array(AccountSchema),
      handler: async (c, p, auth) => {
        const me = viewer(auth);
        const s = await visibleStatus(db(c.env), p.id, me);
        const rows = await relatedStatusAccounts(db(c.env), table, s.reblogOfId ?? s.id, me, p);
        return answerAccounts(c, rows, { viewerId: me });
      },
    });
  }

  // ---- actions ----
  const action = (
    name: string,
    scopes: string[],
    run: (c: Ctx, p: any, auth: UserAuth) => Promise<actions.Acted>,
    params: z.ZodRawShape = {},
  ) =>
    route(app, {
      method: "post",
      path: `/api/v1/statuses/:id/${name}`,
      summary: `${name[0].toUpperCase()}${name.slice(1)} a status`,
      tags: ["Statuses"],
      auth: "user",
      scopes,
      params: z.object({ id: z.string(), ...params }),
      response: StatusSchema,
      handler: async (c, p, auth) => {
        const acted = await run(c, p, auth);
        after(c, acted.effects);
        return c.json(await loadStatus(c, acted.id, auth.account.id));
      },
    });
  const d = (c: Ctx) => db(c.env);
  action(
    "reblog",
    ["write:statuses"],
    (c, p, a) =>
      actions.reblog(d(c), a.account, p.id, {
        base: baseUrl(c),
        inlineFanoutMax: config(c.env).inlineFanoutMax,
        visibility: p.visibility,
      }),
    { visibility: optionalString() },
  );
  action("unreblog", ["write:statuses"], (c, p, a) => actions.unreblog(d(c), a.account, p.id));
  action("favourite", ["write:favourites"], (c, p, a) => actions.favourite(d(c), a.account, p.id, true));
  action("unfavourite", ["write:favourites"], (c, p, a) => actions.favourite(d(c), a.account, p.id, false));
  action("bookmark", ["write:bookmarks"], (c, p, a) => actions.bookmark(d(c), a.account, p.id, true));
  action("unbookmark", ["write:bookmarks"], (c, p, a) => actions.bookmark(d(c), a.account, p.id, false));
  action("pin", ["write:accounts"], (c, p, a) => actions.pin(d(c), a.account, p.id, true));
  action("unpin", ["write:accounts"], (c, p, a) => actions.pin(d(c), a.account, p.id, false));
  action("mute", ["write:mutes"], (c, p, a) => actions.muteThread(d(c), a.account, p.id, true, p.expires_in), {
    expires_in: durationParam(0).optional(),
  });
  action("unmute", ["write:mutes"], (c, p, a) => actions.muteThread(d(c), a.account, p.id, false));

  route(app, {
    method: "get",
    path: "/api/v1/bookmarks",
    summary: "The user's bookmarked statuses",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["read:bookmarks"],
    params: z.object(pageParams(20)),
    response: z.array(StatusSchema),
    handler: (c, p, auth) => answerMarked(c, bookmarks, auth.account.id, auth.account.id, p),
  });

  // ---- emoji reactions ----
  for (const prefix of ["/api/v1/pleroma/statuses/:id/reactions", "/api/v1/statuses/:id/reactions"]) {
    for (const path of [prefix, `${prefix}/:emoji`]) {
      route(app, {
        method: "get",
        path,
        summary: "Emoji reactions to a status, with the accounts behind them",
        tags: ["Reactions"],
        auth: "optional",
        scopes: ["read:statuses"],
        params: z.object({ id: z.string(), emoji: z.string().optional(), with_muted: boolParam().optional() }),
        response: z.array(EmojiReactionAccountsSchema),
        handler: async (c, p, auth) => {
          const me = viewer(auth);
          const d = db(c.env);
          const s = await visibleStatus(d, p.id, me);
          const groups = await listReactions(d, s.id, me, { emoji: p.emoji, withMuted: p.with_muted });
          return c.json(renderReactions(renderContext(c, me), groups));
        },
      });
    }
  }
  for (const [method, on] of [
    ["put", true],
    ["delete", false],
  ] as const) {
    route(app, {
      method,
      path: "/api/v1/pleroma/statuses/:id/reactions/:emoji",
      summary: on ? "React to a status with an emoji" : "Remove your emoji reaction",
      tags: ["Reactions"],
      auth: "user",
      scopes: ["write:statuses"],
      params: z.object({ id: z.string(), emoji: z.string() }),
      response: StatusSchema,
      handler: async (c, p, auth) => {
        const acted = await actions.react(db(c.env), auth.account, p.id, p.emoji, on);
        after(c, acted.effects);
        return c.json(await loadStatus(c, acted.id, auth.account.id));
      },
    });
  }
}
