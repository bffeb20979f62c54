/**
 * Pleroma's account lifecycle endpoints (UtilController): `delete_account`, `disable_account`. They answer 200
 * `{status: "success"}`, or 200 `{error: "Invalid password."}` for a wrong password, as Pleroma does.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../app";
import { db, now } from "../../db/client";
import { config } from "../../env";
import { route, type Ctx } from "../../http/route";
import { confirmPassword } from "../../services/credentials";
import { disableAccount, startAccountDeletion } from "../../services/account-deletion";

export const StatusOrErrorSchema = z.union([z.object({ status: z.literal("success") }), z.object({ error: z.string() })]).openapi("StatusOrError");
export const INVALID_PASSWORD = "Invalid password.";

/** Pleroma's `confirm_current_password`: a missing password is a wrong one. */
export const passwordOk = (c: Ctx, accountId: string, password: string | undefined) =>
  confirmPassword(db(c.env), accountId, password ?? "", config(c.env).rateLimits.loginPerAccount);

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
      federates: true,
      handler: async (c, p, auth) => {
        if (!(await passwordOk(c, auth.account.id, p.password))) return c.json({ error: INVALID_PASSWORD });
        await startAccountDeletion(db(c.env), auth.account.id, now(), auth.account.id);
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
      if (!(await passwordOk(c, auth.account.id, p.password))) return c.json({ error: INVALID_PASSWORD });
      await disableAccount(db(c.env), auth.account.id, now());
      return c.json({ status: "success" as const });
    },
  });
}
