/**
 * Pleroma's account lifecycle endpoints (UtilController): `delete_account`, `disable_account`, `move_account`,
 * `aliases`. They answer 200 `{status: "success"}`, or 200 `{error: "Invalid password."}` for a wrong password,
 * and 404 `{error}` for an unknown account, as Pleroma does.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db, now } from "../../db/client";
import { after, route, type Ctx } from "../../http/route";
import { passwordAgain } from "../../http/auth";
import { disableAccount, startAccountDeletion } from "../../services/account-deletion";
import { addAlias, listAliases, moveAccount, removeAlias } from "../../services/move";
import { resolveAccount, resolveEnv } from "../../federation/fetching/resolve";
import { ApiError, notFound } from "../../lib/errors";
import { baseUrl, hostOf } from "../../http/urls";

/** An account by nickname (`alice`, `alice@remote.example`), local or remote, fetched when unknown or stale. */
const byNickname = async (c: Ctx, nickname: string, refresh = false) => {
  const found = await resolveAccount(
    resolveEnv(c.env, baseUrl(c), hostOf(c), (e) => after(c, e)),
    nickname.trim(),
    {
      refresh,
      background: c.executionCtx,
    },
  );
  return found && !found.account.deactivated ? found.account : null;
};

const StatusOrErrorSchema = z
  .union([z.object({ status: z.literal("success") }), z.object({ error: z.string() })])
  .openapi("StatusOrError");
const INVALID_PASSWORD = "Invalid password.";

export function registerAccountLifecycleRoutes(app: OpenAPIHono<AppEnv>) {
  // Pleroma 2.5 takes the password from the JSON body or (older clients, DELETE) the query string.
  for (const method of ["post", "delete"] as const) {
    route(app, {
      method,
      path: "/api/v1/pleroma/delete_account",
      summary: "Delete the account (with its password); the content is removed in the background",
      tags: ["Pleroma"],
      auth: "user",
      scopes: ["write:accounts"],
      params: z.object({ password: z.string().optional() }),
      response: StatusOrErrorSchema,
      handler: async (c, p, auth) => {
        if (!(await passwordAgain(c, auth.account.id, p.password))) return c.json({ error: INVALID_PASSWORD });
        after(c, await startAccountDeletion(db(c.env), auth.account.id, now(), auth.account.id));
        return c.json({ status: "success" as const });
      },
    });
  }

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/disable_account",
    summary: "Deactivate the account (with its password); every token is revoked",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:accounts"],
    params: z.object({ password: z.string().optional() }),
    response: StatusOrErrorSchema,
    handler: async (c, p, auth) => {
      if (!(await passwordAgain(c, auth.account.id, p.password))) return c.json({ error: INVALID_PASSWORD });
      await disableAccount(db(c.env), auth.account.id, now());
      return c.json({ status: "success" as const });
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/move_account",
    summary: "Move to another account, which must list this one among its aliases",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:accounts"],
    params: z.object({ password: z.string().optional(), target_account: z.string().max(500) }),
    response: StatusOrErrorSchema,
    handler: async (c, p, auth) => {
      if (!(await passwordAgain(c, auth.account.id, p.password))) return c.json({ error: INVALID_PASSWORD });
      // The target's aliases as its server says now (it lists the origin just before the move).
      const target = await byNickname(c, p.target_account, true);
      if (!target) throw notFound("Target account not found.");
      const { error, effects } = await moveAccount(db(c.env), auth.account, target, now());
      after(c, effects);
      return c.json(error ? { error } : { status: "success" as const });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/aliases",
    summary: "The account's aliases (its other accounts), as nicknames",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["read:accounts"],
    response: z.object({ aliases: z.array(z.string()) }),
    handler: async (c, _p, auth) => c.json({ aliases: await listAliases(db(c.env), auth.account, hostOf(c)) }),
  });

  for (const method of ["put", "delete"] as const) {
    route(app, {
      method,
      path: "/api/v1/pleroma/aliases",
      summary: method === "put" ? "Add an alias (local or user@domain)" : "Remove an alias",
      tags: ["Pleroma"],
      auth: "user",
      scopes: ["write:accounts"],
      params: z.object({ alias: z.string().min(1).max(500) }),
      response: StatusOrErrorSchema,
      handler: async (c, p, auth) => {
        const d = db(c.env);
        const alias = await byNickname(c, p.alias);
        if (!alias) throw notFound("Target account does not exist.");
        if (method === "put") {
          const { error, effects } = await addAlias(d, auth.account, alias, now());
          if (error) throw new ApiError(400, error);
          after(c, effects);
        } else {
          const removed = await removeAlias(d, auth.account, alias, now());
          if (!removed) throw notFound("Account has no such alias.");
          after(c, removed);
        }
        return c.json({ status: "success" as const });
      },
    });
  }
}
