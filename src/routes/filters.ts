/**
 * Filters: Mastodon 4's v2 API (a filter with a title, keywords and statuses), and the v1 API, where each keyword
 * is a filter of its own (under the keyword's id). Every change is a `filters_changed` event for the user's streams.
 */
import { FilterKeywordSchema, FilterSchema, FilterV2Schema } from "../schemas/social";
import {
  renderFilter,
  renderFilterKeyword,
  renderFilterStatus,
  renderFiltersV1,
  renderFilterV2,
} from "../render/filter";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { arrayParam, boolParam, durationParam } from "../http/params";
import { after, route, type Ctx } from "../http/route";
import * as filters from "../services/filters";

const filterParams = z.object({
  phrase: z.string().trim().min(1, "can't be blank").max(1000),
  context: arrayParam(z.string()),
  irreversible: boolParam().optional(),
  whole_word: boolParam().optional(),
  // "" means no expiry (POST) or unchanged (PUT): told apart below.
  expires_in: z.union([z.literal(""), z.null(), durationParam(1)]).optional(),
});

/**
 * `keywords_attributes` as clients send it: a JSON array, an indexed object (`[0][keyword]`), or Rails' form
 * `[][keyword]=a&[][whole_word]=1`, whose fields arrive as separate objects and belong to one entry until a
 * field repeats.
 */
const keywordAttributes = z.preprocess(
  (v) => {
    const list = Array.isArray(v) ? v : v && typeof v === "object" ? Object.values(v) : v;
    if (!Array.isArray(list)) return list;
    // Only the form style gives one field per object; JSON entries are taken as they are.
    if (!list.every((item) => item && typeof item === "object" && Object.keys(item).length === 1)) return list;
    const merged: Record<string, unknown>[] = [];
    for (const item of list) {
      const last = merged[merged.length - 1];
      if (item && typeof item === "object" && last && Object.keys(item).every((k) => !(k in last)))
        Object.assign(last, item);
      else merged.push({ ...item });
    }
    return merged;
  },
  z
    .array(
      z.object({
        id: z.string().optional(),
        keyword: z.string().trim().max(1000).optional(),
        whole_word: boolParam().optional(),
        _destroy: boolParam().optional(),
      }),
    )
    // Beyond a filter's cap of keywords and as many changes: no client sends more.
    .max(2 * filters.MAX_KEYWORDS_PER_FILTER),
);

const filterV2Params = z.object({
  title: z.string().trim().max(1000).optional(),
  context: arrayParam(z.string()).optional(),
  // `warn`, `hide`, `blur` (Mastodon 4.4; accepted whatever level is claimed); unknown actions are ignored.
  filter_action: z.string().optional(),
  expires_in: z.union([z.literal(""), z.null(), durationParam(1)]).optional(),
  keywords_attributes: keywordAttributes.optional(),
});

const changed = (c: Ctx, accountId: string) => after(c, filters.filtersChanged(accountId));

/** A v2 `expires_in`: a number sets it, null or "" clears it, absent leaves it. */
const v2Expiry = (v: number | "" | null | undefined) =>
  typeof v === "number" ? v : v === undefined ? undefined : null;

export function registerFilterRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/filters",
    summary: "The user's filters (each keyword of each filter)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    response: z.array(FilterSchema),
    handler: async (c, _p, auth) => c.json(renderFiltersV1(await filters.activeFilters(db(c.env), auth.account.id))),
  });
  route(app, {
    method: "get",
    path: "/api/v1/filters/:id",
    summary: "A filter (a keyword, with its filter's context and expiry)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    params: z.object({ id: z.string() }),
    response: FilterSchema,
    handler: async (c, p, auth) => {
      const { filter, keyword } = await filters.getKeyword(db(c.env), auth.account.id, p.id);
      return c.json(renderFilter(filter, keyword));
    },
  });
  route(app, {
    method: "post",
    path: "/api/v1/filters",
    summary: "Create a filter (a filter titled by its one keyword)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: filterParams,
    response: FilterSchema,
    handler: async (c, p, auth) => {
      const f = await filters.createFilter(
        db(c.env),
        auth.account.id,
        {
          title: p.phrase,
          context: filters.filterContexts(p.context),
          irreversible: p.irreversible,
          expires_in: typeof p.expires_in === "number" ? p.expires_in : null,
        },
        [{ keyword: p.phrase, whole_word: p.whole_word }],
        { sameId: true },
      );
      changed(c, auth.account.id);
      return c.json(renderFilter(f, f.keywords[0]!));
    },
  });
  route(app, {
    method: "put",
    path: "/api/v1/filters/:id",
    summary: "Change a filter: its keyword, and its filter's context and expiry (a blank expires_in keeps it)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: filterParams.extend({ id: z.string() }),
    response: FilterSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const { filter, keyword } = await filters.getKeyword(d, auth.account.id, p.id);
      const f = await filters.updateFilter(
        d,
        auth.account.id,
        filter.id,
        {
          context: filters.filterContexts(p.context),
          irreversible: p.irreversible,
          expires_in: typeof p.expires_in === "number" ? p.expires_in : p.expires_in === null ? null : undefined,
        },
        [{ id: keyword.id, keyword: p.phrase, whole_word: p.whole_word }],
      );
      changed(c, auth.account.id);
      return c.json(
        renderFilter(
          f,
          f.keywords.find((k) => k.id === keyword.id)!,
        ),
      );
    },
  });
  route(app, {
    method: "delete",
    path: "/api/v1/filters/:id",
    summary: "Delete a filter (its keyword; the filter goes with its last keyword)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const { filter } = await filters.getKeyword(d, auth.account.id, p.id);
      if (filter.keywords.length === 1 && filter.statuses.length === 0)
        await filters.deleteFilter(d, auth.account.id, filter.id);
      else await filters.deleteKeyword(d, auth.account.id, p.id);
      changed(c, auth.account.id);
      return c.json({});
    },
  });
}

const keywordParams = z.object({ keyword: z.string().trim().max(1000), whole_word: boolParam().optional() });
const StatusFilterSchema = z.object({ id: z.string(), status_id: z.string() }).openapi("FilterStatus");

export function registerFilterV2Routes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v2/filters",
    summary: "The user's filters",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    response: z.array(FilterV2Schema),
    handler: async (c, _p, auth) =>
      c.json((await filters.activeFilters(db(c.env), auth.account.id)).map(renderFilterV2)),
  });
  route(app, {
    method: "get",
    path: "/api/v2/filters/:id",
    summary: "A filter",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    params: z.object({ id: z.string() }),
    response: FilterV2Schema,
    handler: async (c, p, auth) => c.json(renderFilterV2(await filters.getFilter(db(c.env), auth.account.id, p.id))),
  });
  route(app, {
    method: "post",
    path: "/api/v2/filters",
    summary: "Create a filter with its keywords",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: filterV2Params,
    response: FilterV2Schema,
    handler: async (c, p, auth) => {
      const keywords = (p.keywords_attributes ?? []).filter((k) => !k._destroy);
      const f = await filters.createFilter(
        db(c.env),
        auth.account.id,
        {
          title: p.title ?? "",
          context: filters.filterContexts(p.context ?? []),
          ...filters.actionFlags(p.filter_action),
          expires_in: typeof p.expires_in === "number" ? p.expires_in : null,
        },
        keywords.map((k) => ({ keyword: k.keyword ?? "", whole_word: k.whole_word })),
      );
      changed(c, auth.account.id);
      return c.json(renderFilterV2(f));
    },
  });
  route(app, {
    method: "put",
    path: "/api/v2/filters/:id",
    summary: "Change a filter; `keywords_attributes` adds, changes (by id) and removes (`_destroy`) keywords",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: filterV2Params.extend({ id: z.string() }),
    response: FilterV2Schema,
    handler: async (c, p, auth) => {
      const f = await filters.updateFilter(
        db(c.env),
        auth.account.id,
        p.id,
        {
          title: p.title,
          context: p.context === undefined ? undefined : filters.filterContexts(p.context),
          ...filters.actionFlags(p.filter_action),
          expires_in: v2Expiry(p.expires_in),
        },
        p.keywords_attributes ?? [],
      );
      changed(c, auth.account.id);
      return c.json(renderFilterV2(f));
    },
  });
  route(app, {
    method: "delete",
    path: "/api/v2/filters/:id",
    summary: "Delete a filter with its keywords and statuses",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      await filters.deleteFilter(db(c.env), auth.account.id, p.id);
      changed(c, auth.account.id);
      return c.json({});
    },
  });

  // Keywords by themselves (Tusky creates a filter, then adds its keywords).
  route(app, {
    method: "get",
    path: "/api/v2/filters/:id/keywords",
    summary: "A filter's keywords",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    params: z.object({ id: z.string() }),
    response: z.array(FilterKeywordSchema),
    handler: async (c, p, auth) =>
      c.json((await filters.getFilter(db(c.env), auth.account.id, p.id)).keywords.map(renderFilterKeyword)),
  });
  route(app, {
    method: "post",
    path: "/api/v2/filters/:id/keywords",
    summary: "Add a keyword to a filter",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: keywordParams.extend({ id: z.string() }),
    response: FilterKeywordSchema,
    handler: async (c, p, auth) => {
      const k = await filters.addKeyword(db(c.env), auth.account.id, p.id, p);
      changed(c, auth.account.id);
      return c.json(renderFilterKeyword(k));
    },
  });
  // Mastodon routes a keyword at `/api/v2/filters/keywords/:id` (Ice Cubes removes keywords there);
  // `/api/v2/filter_keywords/:id` is the documented name for it.
  for (const path of ["/api/v2/filter_keywords/:id", "/api/v2/filters/keywords/:id"]) {
    route(app, {
      method: "get",
      path,
      summary: "A filter keyword",
      tags: ["Filters"],
      auth: "user",
      scopes: ["read:filters"],
      params: z.object({ id: z.string() }),
      response: FilterKeywordSchema,
      handler: async (c, p, auth) =>
        c.json(renderFilterKeyword((await filters.getKeyword(db(c.env), auth.account.id, p.id)).keyword)),
    });
    route(app, {
      method: "put",
      path,
      summary: "Change a filter keyword",
      tags: ["Filters"],
      auth: "user",
      scopes: ["write:filters"],
      params: keywordParams.partial().extend({ id: z.string() }),
      response: FilterKeywordSchema,
      handler: async (c, p, auth) => {
        const k = await filters.updateKeyword(db(c.env), auth.account.id, p.id, p);
        changed(c, auth.account.id);
        return c.json(renderFilterKeyword(k));
      },
    });
    route(app, {
      method: "delete",
      path,
      summary: "Remove a filter keyword",
      tags: ["Filters"],
      auth: "user",
      scopes: ["write:filters"],
      params: z.object({ id: z.string() }),
      response: z.object({}),
      handler: async (c, p, auth) => {
        await filters.deleteKeyword(db(c.env), auth.account.id, p.id);
        changed(c, auth.account.id);
        return c.json({});
      },
    });
  }

  // Status filters: a filter may name statuses it matches whatever their text.
  route(app, {
    method: "get",
    path: "/api/v2/filters/:id/statuses",
    summary: "Statuses a filter names",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    params: z.object({ id: z.string() }),
    response: z.array(StatusFilterSchema),
    handler: async (c, p, auth) =>
      c.json((await filters.getFilter(db(c.env), auth.account.id, p.id)).statuses.map(renderFilterStatus)),
  });
  route(app, {
    method: "post",
    path: "/api/v2/filters/:id/statuses",
    summary: "Name a status in a filter",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: z.object({ id: z.string(), status_id: z.string().trim().min(1, "can't be blank").max(100) }),
    response: StatusFilterSchema,
    handler: async (c, p, auth) => {
      const s = await filters.addFilterStatus(db(c.env), auth.account.id, p.id, p.status_id);
      changed(c, auth.account.id);
      return c.json(renderFilterStatus(s));
    },
  });
  for (const path of ["/api/v2/filter_statuses/:id", "/api/v2/filters/statuses/:id"]) {
    route(app, {
      method: "get",
      path,
      summary: "A status a filter names",
      tags: ["Filters"],
      auth: "user",
      scopes: ["read:filters"],
      params: z.object({ id: z.string() }),
      response: StatusFilterSchema,
      handler: async (c, p, auth) =>
        c.json(renderFilterStatus((await filters.getFilterStatus(db(c.env), auth.account.id, p.id)).status)),
    });
    route(app, {
      method: "delete",
      path,
      summary: "Stop a filter naming a status",
      tags: ["Filters"],
      auth: "user",
      scopes: ["write:filters"],
      params: z.object({ id: z.string() }),
      response: z.object({}),
      handler: async (c, p, auth) => {
        await filters.deleteFilterStatus(db(c.env), auth.account.id, p.id);
        changed(c, auth.account.id);
        return c.json({});
      },
    });
  }
}
