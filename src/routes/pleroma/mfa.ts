/** Pleroma's MFA settings (TwoFactorAuthenticationController): TOTP set-up, confirmation, disabling, backup codes. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db } from "../../db/client";
import { config } from "../../env";
import { badRequest, unprocessable } from "../../lib/errors";
import { after, route } from "../../http/route";
import { baseUrl } from "../../http/urls";
import { passwordAgain } from "../../http/auth";
import { confirmTotp, disableMfa, mfaSettings, regenerateBackupCodes, setupTotp } from "../../services/mfa";

const Empty = z.object({});

export function registerMfaRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/accounts/mfa",
    summary: "The user's MFA settings",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["read:security"],
    response: z.object({ settings: z.object({ enabled: z.boolean(), totp: z.boolean() }) }),
    handler: async (c, _p, auth) => c.json({ settings: await mfaSettings(db(c.env), auth.account.id) }),
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/accounts/mfa/setup/:method",
    summary: "Start TOTP set-up: a new secret and its otpauth:// URI (MFA stays as it is until confirmed)",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:security"],
    params: z.object({ method: z.string() }),
    response: z.object({ key: z.string(), provisioning_uri: z.string() }),
    handler: async (c, p, auth) => {
      if (p.method !== "totp") throw badRequest("undefined method");
      return c.json(await setupTotp(c.env, db(c.env), auth.account.id, auth.user.email, config(c.env).name));
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/accounts/mfa/confirm/:method",
    summary: "Confirm TOTP with the password and a code: MFA is on from then",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:security"],
    params: z.object({ method: z.string(), password: z.string().optional(), code: z.string().optional() }),
    response: Empty,
    handler: async (c, p, auth) => {
      if (p.method !== "totp") throw badRequest("undefined mfa method");
      const d = db(c.env);
      if (!(await passwordAgain(c, auth.account.id, p.password))) throw unprocessable("Invalid password.");
      await confirmTotp(c.env, d, auth.account.id, p.code ?? "", auth.tokenId);
      return c.json({});
    },
  });

  route(app, {
    method: "delete",
    path: "/api/v1/pleroma/accounts/mfa/:method",
    summary: "Turn TOTP (`totp`) or all MFA (`mfa`) off, with the password",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:security"],
    params: z.object({ method: z.string(), password: z.string().optional() }),
    response: Empty,
    handler: async (c, p, auth) => {
      // TOTP is the only method, so turning it off turns MFA off, as in Pleroma.
      if (p.method !== "totp" && p.method !== "mfa") throw badRequest("undefined mfa method");
      const d = db(c.env);
      if (!(await passwordAgain(c, auth.account.id, p.password))) throw unprocessable("Invalid password.");
      await disableMfa(d, auth.account.id);
      return c.json({});
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/accounts/mfa/backup_codes",
    summary: "New backup codes, shown this once (the old ones stop working); with MFA on, the password is asked",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:security"],
    params: z.object({ password: z.string().optional() }),
    response: z.object({ codes: z.array(z.string()) }),
    handler: async (c, p, auth) => {
      const { codes, effects } = await regenerateBackupCodes(
        db(c.env),
        { accountId: auth.account.id, email: auth.user.email, username: auth.account.username },
        { password: p.password, secondFactorAt: auth.secondFactorAt },
        config(c.env).rateLimits.loginPerAccount,
        config(c.env),
        baseUrl(c),
      );
      after(c, effects);
      return c.json({ codes });
    },
  });
}
