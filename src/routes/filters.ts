/**
 * Keyword filters: Mastodon's v1 API, and v2 over the same rows (each filter one v2 filter with one keyword).
 * Every change is a `filters_changed` event for the user's streams.
 */
import { FilterKeywordSchema, FilterSchema, FilterV2Schema } from "../schemas/social";
import { renderFilter, renderFilterKeyword, renderFilterV2 } from "../render/filter";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { unprocessable } from "../lib/errors";
import { arrayParam, boolParam, intParam } from "../http/params";
import { after, route, type Ctx } from "../http/route";
import * as filters from "../services/filters";

const filterParams = z.object({
  phrase: z.string().trim().min(1, "can't be blank").max(1000),
  context: arrayParam(z.string()),
  irreversible: boolParam().optional(),
  whole_word: boolParam().optional(),
  // "" means no expiry (POST) or unchanged (PUT): told apart below.
  expires_in: z.union([z.literal(""), z.null(), intParam().pipe(z.number().int().min(1))]).optional(),
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
  z.array(
    z.object({
      id: z.string().optional(),
      keyword: z.string().trim().max(1000).optional(),
      whole_word: boolParam().optional(),
      _destroy: boolParam().optional(),
    }),
  ),
);

const filterV2Params = z.object({
  title: z.string().trim().max(1000).optional(),
  context: arrayParam(z.string()).optional(),
  // `warn`, `hide`, `blur` (Mastodon 4.4; accepted whatever level is claimed); unknown actions are ignored.
  filter_action: z.string().optional(),
  expires_in: z.union([z.literal(""), z.null(), intParam().pipe(z.number().int().min(1))]).optional(),
  keywords_attributes: keywordAttributes.optional(),
});

const changed = (c: Ctx, accountId: string) => after(c, filters.filtersChanged(accountId));

export function registerFilterRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/filters",
    summary: "The user's filters",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    response: z.array(FilterSchema),
    handler: async (c, _p, auth) => c.json((await filters.activeFilters(db(c.env), auth.account.id)).map(renderFilter)),
  });
  route(app, {
    method: "get",
    path: "/api/v1/filters/:id",
    summary: "A filter",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    params: z.object({ id: z.string() }),
    response: FilterSchema,
    handler: async (c, p, auth) => c.json(renderFilter(await filters.getFilter(db(c.env), auth.account.id, p.id))),
  });
  route(app, {
    method: "post",
    path: "/api/v1/filters",
    summary: "Create a filter",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: filterParams,
    response: FilterSchema,
    handler: async (c, p, auth) => {
      const row = await filters.createFilter(db(c.env), auth.account.id, {
        ...p,
        context: filters.filterContexts(p.context),
        expires_in: typeof p.expires_in === "number" ? p.expires_in : null,
      });
      changed(c, auth.account.id);
      return c.json(renderFilter(row));
    },
  });
  route(app, {
    method: "put",
    path: "/api/v1/filters/:id",
    summary: "Change a filter (a blank expires_in keeps the expiry)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: filterParams.extend({ id: z.string() }),
    response: FilterSchema,
    handler: async (c, p, auth) => {
      const row = await filters.updateFilter(db(c.env), auth.account.id, p.id, {
        ...p,
        context: filters.filterContexts(p.context),
        expires_in: typeof p.expires_in === "number" ? p.expires_in : p.expires_in === null ? null : undefined,
      });
      changed(c, auth.account.id);
      return c.json(renderFilter(row));
    },
  });
  // v1 and v2 filters are the same rows: one deletion for both paths.
  for (const path of ["/api/v1/filters/:id", "/api/v2/filters/:id"]) {
    route(app, {
      method: "delete",
      path,
      summary: "Delete a filter",
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
  }
}

export function registerFilterV2Routes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v2/filters",
    summary: "The user's filters (Mastodon 4 shape)",
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
    summary: "A filter (Mastodon 4 shape)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    params: z.object({ id: z.string() }),
    response: FilterV2Schema,
    handler: async (c, p, auth) => c.json(renderFilterV2(await filters.getFilter(db(c.env), auth.account.id, p.id))),
  });
  route(app, {
    method: "get",
    path: "/api/v2/filters/:id/keywords",
    summary: "A filter's keywords (its one phrase)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    params: z.object({ id: z.string() }),
    response: z.array(FilterKeywordSchema),
    handler: async (c, p, auth) =>
      c.json([renderFilterKeyword(await filters.getFilter(db(c.env), auth.account.id, p.id))]),
  });
  route(app, {
    method: "get",
    path: "/api/v2/filters/:id/statuses",
    summary: "Statuses a filter names (Starling filters name none)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    params: z.object({ id: z.string() }),
    response: z.array(z.object({ id: z.string(), status_id: z.string() })),
    handler: async (c, p, auth) => {
      await filters.getFilter(db(c.env), auth.account.id, p.id);
      return c.json([]);
    },
  });
  route(app, {
    method: "post",
    path: "/api/v2/filters",
    summary: "Create a filter with one keyword (without keywords, the title is the phrase)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: filterV2Params,
    response: FilterV2Schema,
    handler: async (c, p, auth) => {
      const keyword = filters.singleKeyword(p.keywords_attributes);
      const phrase = keyword?.keyword || p.title;
      if (!phrase) throw unprocessable("Validation failed: Title can't be blank");
      const row = await filters.createFilter(db(c.env), auth.account.id, {
        phrase,
        context: filters.filterContexts(p.context ?? []),
        ...filters.actionFlags(p.filter_action),
        whole_word: keyword?.whole_word,
        expires_in: typeof p.expires_in === "number" ? p.expires_in : null,
      });
      changed(c, auth.account.id);
      return c.json(renderFilterV2(row));
    },
  });
  route(app, {
    method: "put",
    path: "/api/v2/filters/:id",
    summary: "Change a filter; its keyword is its phrase (the title follows the keyword)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: filterV2Params.extend({ id: z.string() }),
    response: FilterV2Schema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const existing = await filters.getFilter(d, auth.account.id, p.id);
      const keyword = filters.singleKeyword(p.keywords_attributes);
      if (keyword?.id && keyword.id !== existing.id)
        throw unprocessable("Validation failed: Keywords: a filter holds one keyword on this server");
      const row = await filters.updateFilter(d, auth.account.id, existing.id, {
        phrase: keyword?.keyword || existing.phrase,
        context: p.context === undefined ? existing.context : filters.filterContexts(p.context),
        ...filters.actionFlags(p.filter_action),
        whole_word: keyword?.whole_word,
        expires_in:
          typeof p.expires_in === "number"
            ? p.expires_in
            : p.expires_in === null || p.expires_in === ""
              ? null
              : undefined,
      });
      changed(c, auth.account.id);
      return c.json(renderFilterV2(row));
    },
  });

  // Keywords by themselves (Tusky creates a filter, then adds its keywords). A Starling filter holds one keyword,
  // its phrase, under the filter's id: adding or changing a keyword sets that phrase.
  const keywordParams = z.object({ keyword: z.string().trim().min(1), whole_word: boolParam().optional() });
  const setKeyword = async (c: Ctx, accountId: string, id: string, k: z.output<typeof keywordParams>) => {
    const d = db(c.env);
    const existing = await filters.getFilter(d, accountId, id);
    const row = await filters.updateFilter(d, accountId, existing.id, {
      phrase: k.keyword,
      context: existing.context,
      whole_word: k.whole_word ?? existing.wholeWord,
    });
    changed(c, accountId);
    return c.json(renderFilterKeyword(row));
  };
  route(app, {
    method: "post",
    path: "/api/v2/filters/:id/keywords",
    summary: "Give a filter its keyword (a filter holds one: this sets it)",
    tags: ["Filters"],
    auth: "user",
    scopes: ["write:filters"],
    params: keywordParams.extend({ id: z.string() }),
    response: FilterKeywordSchema,
    handler: (c, p, auth) => setKeyword(c, auth.account.id, p.id, p),
  });
  // Mastodon routes a keyword at `/api/v2/filters/keywords/:id` (Ice Cubes removes keywords there);
  // `/api/v2/filter_keywords/:id` is the contract's name for it.
  for (const path of ["/api/v2/filter_keywords/:id", "/api/v2/filters/keywords/:id"]) {
    route(app, {
      method: "get",
      path,
      summary: "A filter keyword (its id is the filter's)",
      tags: ["Filters"],
      auth: "user",
      scopes: ["read:filters"],
      params: z.object({ id: z.string() }),
      response: FilterKeywordSchema,
      handler: async (c, p, auth) =>
        c.json(renderFilterKeyword(await filters.getFilter(db(c.env), auth.account.id, p.id))),
    });
    route(app, {
      method: "put",
      path,
      summary: "Change a filter keyword",
      tags: ["Filters"],
      auth: "user",
      scopes: ["write:filters"],
      params: keywordParams.extend({ id: z.string() }),
      response: FilterKeywordSchema,
      handler: (c, p, auth) => setKeyword(c, auth.account.id, p.id, p),
    });
    route(app, {
      method: "delete",
      path,
      summary: "Refused: a filter keeps its one keyword (delete the filter instead)",
      tags: ["Filters"],
      auth: "user",
      scopes: ["write:filters"],
      params: z.object({ id: z.string() }),
      response: z.object({}),
      handler: async (c, p, auth) => {
        await filters.getFilter(db(c.env), auth.account.id, p.id);
        throw unprocessable(
          "Validation failed: a filter on this server holds exactly one keyword; delete the filter instead",
        );
      },
    });
  }
}
