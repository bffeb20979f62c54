/** Search (v1 and v2) and account search. `resolve` looks up this instance's database only for now. */
import { HashtagSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../app";
import { db } from "../db/client";
import { boolParam, intParam, offsetParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { baseUrl, hostOf, renderContext } from "../http/urls";
import { renderAccount } from "../render/account";
import { renderStatuses } from "../render/status";
import { AccountSchema } from "../schemas/account";
import { StatusSchema } from "../schemas/status";
import { hydrate } from "../services/hydrate";
import { searchAccounts, searchHashtags, statusSearchPage } from "../services/search";

const searchParams = z.object({
  q: z.string().trim().min(1, "can't be blank"),
  type: z.enum(["accounts", "statuses", "hashtags"]).optional(),
  resolve: boolParam().optional(),
  following: boolParam().optional(),
  account_id: z.string().optional(),
  limit: intParam().optional().transform((n) => (n === undefined || n < 1 ? 20 : Math.min(n, 40))),
  offset: offsetParam().optional(),
});


async function search(c: Ctx, p: z.infer<typeof searchParams>, viewerId: string | null) {
  const d = db(c.env);
  const want = (t: string) => !p.type || p.type === t;
  const offset = p.offset ?? 0;
  const page = want("statuses") ? statusSearchPage(viewerId, p.q, p.limit, offset, p.account_id) : null;
  const [found, tags, h] = await Promise.all([
    want("accounts") ? searchAccounts(d, { q: p.q, limit: p.limit, offset, following: p.following, viewerId, localHost: hostOf(c) }) : [],
    want("hashtags") ? searchHashtags(d, p.q, p.limit, offset) : [],
    page ? hydrate(d, page, viewerId) : null,
  ]);
  const ctx = renderContext(c, viewerId);
  return {
    accounts: found.map((a) => renderAccount(ctx, a)),
    statuses: h ? renderStatuses(ctx, h, h.page) : [],
    hashtags: tags,
  };
}

export function registerSearchRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v2/search",
    summary: "Search accounts, statuses and hashtags",
    tags: ["Search"],
    auth: "optional",
    scopes: ["read:search"],
    params: searchParams,
    response: z.object({ accounts: z.array(AccountSchema), statuses: z.array(StatusSchema), hashtags: z.array(HashtagSchema) }),
    handler: async (c, p, auth) => {
      const r = await search(c, p, auth?.account?.id ?? null);
      const base = baseUrl(c);
      return c.json({ ...r, hashtags: r.hashtags.map((name) => ({ name, url: `${base}/tag/${encodeURIComponent(name)}`, history: [] })) });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/search",
    summary: "Search (hashtags as plain names)",
    tags: ["Search"],
    auth: "optional",
    scopes: ["read:search"],
    params: searchParams,
    response: z.object({ accounts: z.array(AccountSchema), statuses: z.array(StatusSchema), hashtags: z.array(z.string()) }),
    handler: async (c, p, auth) => c.json(await search(c, p, auth?.account?.id ?? null)),
  });

  route(app, {
    method: "get",
    path: "/api/v1/accounts/search",
    summary: "Search accounts (no token needed; following=true needs one)",
    tags: ["Search"],
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({
      q: z.string().trim().min(1, "can't be blank"),
      limit: intParam().optional().transform((n) => (n === undefined || n < 1 ? 40 : Math.min(n, 80))),
      offset: offsetParam().optional(),
      resolve: boolParam().optional(),
      following: boolParam().optional(),
    }),
    response: z.array(AccountSchema),
    handler: async (c, p, auth) => {
      const viewerId = auth?.account?.id ?? null;
      const found = await searchAccounts(db(c.env), { q: p.q, limit: p.limit, offset: p.offset ?? 0, following: p.following, viewerId, localHost: hostOf(c) });
      const ctx = renderContext(c, viewerId);
      return c.json(found.map((a) => renderAccount(ctx, a)));
    },
  });
}
