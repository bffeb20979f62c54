/** The profile directory (`/api/v1/directory`) and account look-up by acct (`/api/v1/accounts/lookup`). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { notFound } from "../lib/errors";
import { boolParam, intParam, offsetParam } from "../http/params";
import { after, route } from "../http/route";
import { baseUrl, hostOf, renderContext } from "../http/urls";
import { renderAccount } from "../render/account";
import { AccountSchema } from "../schemas/account";
import { findByAcct } from "../services/accounts";
import { directory } from "../services/directory";
import { parseHandle, resolveAccount, resolveEnv } from "../federation/fetching/resolve";

export function registerDirectoryRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/directory",
    summary: "Discoverable accounts, most recently active (or newest) first",
    tags: ["Accounts"],
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({
      offset: offsetParam()
        .optional()
        .transform((n) => n ?? 0),
      limit: intParam()
        .optional()
        .transform((n) => (n === undefined || n < 1 ? 40 : Math.min(n, 80))),
      // Unknown orders fall back to `active`, as Mastodon does.
      order: z
        .string()
        .optional()
        .transform((o) => (o === "new" ? "new" : "active") as "active" | "new"),
      local: boolParam().optional(),
    }),
    response: z.array(AccountSchema),
    handler: async (c, p, auth) => {
      const viewerId = auth?.account?.id ?? null;
      const rows = await directory(db(c.env), {
        viewerId,
        order: p.order,
        local: p.local ?? false,
        limit: p.limit,
        offset: p.offset,
      });
      const ctx = renderContext(c, viewerId);
      return c.json(rows.map((r) => renderAccount(ctx, r)));
    },
  });

  // Registered before `/api/v1/accounts/:id` (see app.ts), which would otherwise take `lookup` for an id.
  route(app, {
    method: "get",
    path: "/api/v1/accounts/lookup",
    summary:
      "An account by its acct (`alice`, `alice@remote.example`; unknown remote ones are fetched with a user token); 404 when unknown",
    tags: ["Accounts"],
    auth: "optional",
    scopes: ["read:accounts"],
    params: z.object({ acct: z.string().trim().min(1, "can't be blank") }),
    response: AccountSchema,
    handler: async (c, p, auth) => {
      const viewerId = auth?.account?.id ?? null;
      // With a user token, an unknown or stale remote account is fetched from its server (as search resolves).
      const found = parseHandle(p.acct, hostOf(c))
        ? await resolveAccount(
            resolveEnv(c.env, baseUrl(c), hostOf(c), (e) => after(c, e)),
            p.acct,
            {
              fetch: viewerId !== null,
              background: c.executionCtx,
            },
          )
        : await findByAcct(db(c.env), p.acct, hostOf(c));
      if (!found || (found.account.deactivated && viewerId !== found.account.id)) throw notFound();
      return c.json(renderAccount(renderContext(c, viewerId), found));
    },
  });
}
