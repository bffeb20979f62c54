/**
 * Search (v1 and v2) and account search. `resolve=true` with a user token also finds remote accounts by
 * `user@domain` or URL (`federation/fetching/resolve.ts`); a URL query then answers only what the URL names.
 */
import { HashtagSchema } from "../schemas/social";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { boolParam, intParam, offsetParam } from "../http/params";
import { after, route, type Ctx } from "../http/route";
import { baseUrl, hostOf, renderContext } from "../http/urls";
import { renderAccount } from "../render/account";
import { renderStatuses } from "../render/status";
import { AccountSchema } from "../schemas/account";
import { StatusSchema } from "../schemas/status";
import { hydrate } from "../services/hydrate";
import { isResolvable, parseHandle, resolveAccount, resolveAny, resolveEnv } from "../federation/fetching/resolve";
import { searchAccounts, searchHashtags, statusByUrlPage, statusSearchPage } from "../services/search";

const searchParams = z.object({
  q: z.string().trim().min(1, "can't be blank"),
  type: z.enum(["accounts", "statuses", "hashtags"]).optional(),
  resolve: boolParam().optional(),
  following: boolParam().optional(),
  account_id: z.string().optional(),
  limit: intParam()
    .optional()
    .transform((n) => (n === undefined || n < 1 ? 20 : Math.min(n, 40))),
  offset: offsetParam().optional(),
});

/**
 * What resolving adds to a search: the account `q` names, fetched when unknown or stale. Fetching from other
 * servers takes a user token (as Mastodon); otherwise, and past the first page, stored rows only.
 */
async function resolved(c: Ctx, q: string, resolve: boolean | undefined, viewerId: string | null, offset: number) {
  const r = resolveEnv(c.env, baseUrl(c), hostOf(c), (e) => after(c, e));
  const handle = resolve ? parseHandle(q, r.localHost) : null;
  if (!handle) return { url: null, accountId: null, statusId: null };
  const fetch = viewerId !== null && offset === 0;
  if (handle.kind === "url") {
    const found = await resolveAny(r, q, { fetch, background: c.executionCtx });
    // A fetched reply's thread: its missing ancestors are fetched after the response (federation/fetching/thread-ancestors.ts).
    if (found && "statusId" in found && found.parentUri)
      after(c, { ancestors: [{ statusId: found.statusId, parentUri: found.parentUri }] });
    return {
      url: handle.url.href,
      accountId: found && "account" in found ? found.account.id : null,
      statusId: found && "statusId" in found ? found.statusId : null,
    };
  }
  const found =
    fetch && isResolvable(q, r.localHost) ? await resolveAccount(r, q, { background: c.executionCtx }) : null;
  return { url: null, accountId: found?.account.id ?? null, statusId: null };
}

async function search(c: Ctx, p: z.infer<typeof searchParams>, viewerId: string | null) {
  const d = db(c.env);
  const want = (t: string) => !p.type || p.type === t;
  const offset = p.offset ?? 0;
  const r =
    want("accounts") || want("statuses")
      ? await resolved(c, p.q, p.resolve, viewerId, offset)
      : { url: null, accountId: null, statusId: null };
  // A URL with resolve=true names one thing (Mastodon): that account or that status, no text search.
  const page = !want("statuses")
    ? null
    : r.url
      ? offset === 0
        ? statusByUrlPage(viewerId, r.url, r.statusId)
        : null
      : statusSearchPage(viewerId, p.q, p.limit, offset, p.account_id);
  const accountsFound = !want("accounts")
    ? []
    : r.url && !r.accountId
      ? []
      : searchAccounts(d, {
          q: r.url ? "" : p.q,
          limit: p.limit,
          offset,
          following: p.following,
          viewerId,
          localHost: hostOf(c),
          include: r.accountId,
        });
  const [found, tags, h] = await Promise.all([
    accountsFound,
    want("hashtags") && !r.url ? searchHashtags(d, p.q, p.limit, offset) : [],
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
    response: z.object({
      accounts: z.array(AccountSchema),
      statuses: z.array(StatusSchema),
      hashtags: z.array(HashtagSchema),
    }),
    handler: async (c, p, auth) => {
      const r = await search(c, p, auth?.account?.id ?? null);
      const base = baseUrl(c);
      return c.json({
        ...r,
        hashtags: r.hashtags.map((name) => ({ name, url: `${base}/tag/${encodeURIComponent(name)}`, history: [] })),
      });
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
    response: z.object({
      accounts: z.array(AccountSchema),
      statuses: z.array(StatusSchema),
      hashtags: z.array(z.string()),
    }),
    handler: async (c, p, auth) => c.json(await search(c, p, auth?.account?.id ?? null)),
  });

  route(app, {
    method: "get",
    path: "/api/v1/accounts/search",
    summary: "Search accounts (no token needed; following=true and resolving remote accounts need one)",
    tags: ["Search"],
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({
      // Blank (or absent) finds nobody: Soapbox's chat screen asks `q=` as it opens and wants `[]`, not 400.
      q: z.string().trim().optional().default(""),
      limit: intParam()
        .optional()
        .transform((n) => (n === undefined || n < 1 ? 40 : Math.min(n, 80))),
      offset: offsetParam().optional(),
      resolve: boolParam().optional(),
      following: boolParam().optional(),
    }),
    response: z.array(AccountSchema),
    handler: async (c, p, auth) => {
      if (!p.q) return c.json([]);
      const viewerId = auth?.account?.id ?? null;
      const offset = p.offset ?? 0;
      const r = await resolved(c, p.q, p.resolve, viewerId, offset);
      const found =
        r.url && !r.accountId
          ? []
          : await searchAccounts(db(c.env), {
              q: r.url ? "" : p.q,
              limit: p.limit,
              offset,
              following: p.following,
              viewerId,
              localHost: hostOf(c),
              include: r.accountId,
            });
      const ctx = renderContext(c, viewerId);
      return c.json(found.map((a) => renderAccount(ctx, a)));
    },
  });
}
