/** Keyword filters (Mastodon v1 API). Every change is a `filters_changed` event for the user's streams. */
import { FilterSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../app";
import { db } from "../db/client";
import { unprocessable } from "../http/errors";
import { arrayParam, boolParam, intParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { publish } from "../services/events";
import * as filters from "../services/filters";


const filterParams = z.object({
  phrase: z.string().trim().min(1, "can't be blank").max(1000),
  context: arrayParam(z.string()),
  irreversible: boolParam().optional(),
  whole_word: boolParam().optional(),
  // "" means no expiry (POST) or unchanged (PUT): told apart below.
  expires_in: z.union([z.literal(""), z.null(), intParam().pipe(z.number().int().min(1))]).optional(),
});

/** Context values are checked here to answer 422, as Mastodon does, rather than a generic 400. */
function contexts(values: string[]): filters.FilterInput["context"] {
  const bad = values.filter((v) => !(filters.FILTER_CONTEXTS as readonly string[]).includes(v));
  if (values.length === 0) throw unprocessable("Validation failed: Context can't be blank");
  if (bad.length) throw unprocessable(`Validation failed: Context ${bad.join(", ")} is not a valid context (home, notifications, public, thread)`);
  return values as filters.FilterInput["context"];
}

const changed = (c: Ctx, accountId: string) => publish(c.env, c.executionCtx, [{ accountId, event: "filters_changed", payload: null }]);

export function registerFilterRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/filters",
    summary: "The user's filters",
    tags: ["Filters"],
    auth: "user",
    scopes: ["read:filters"],
    response: z.array(FilterSchema),
    handler: async (c, _p, auth) => c.json((await filters.activeFilters(db(c.env), auth.account.id)).map(filters.renderFilter)),
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
    handler: async (c, p, auth) => c.json(filters.renderFilter(await filters.getFilter(db(c.env), auth.account.id, p.id))),
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
        context: contexts(p.context),
        expires_in: typeof p.expires_in === "number" ? p.expires_in : null,
      });
      changed(c, auth.account.id);
      return c.json(filters.renderFilter(row));
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
        context: contexts(p.context),
        expires_in: typeof p.expires_in === "number" ? p.expires_in : p.expires_in === null ? null : undefined,
      });
      changed(c, auth.account.id);
      return c.json(filters.renderFilter(row));
    },
  });
  route(app, {
    method: "delete",
    path: "/api/v1/filters/:id",
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
