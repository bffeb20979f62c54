/**
 * Passwords and e-mail (Pleroma's UtilController change_password/change_email, PasswordController): changes with
 * the current password, and the reset by e-mail with its page.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db } from "../../db/client";
import { config } from "../../env";
import { parseParams } from "../../http/params";
import { passwordAgain } from "../../http/auth";
import { after, route, type Ctx } from "../../http/route";
import { baseUrl } from "../../http/urls";
import { EMAIL_MAX } from "../../lib/email-address";
import { messagePage, resetPage } from "../../render/pages";
import { changeEmail, newPasswordError, resetPassword, resetTokenValid, setPassword } from "../../services/passwords";

/** Pleroma answers these with 200 and `{status: "success"}` or `{error}`. */
const StatusOrError = z.union([z.object({ status: z.literal("success") }), z.object({ error: z.string() })]);
const INVALID_TOKEN =
  "This password reset link is invalid, was already used or has expired. Ask for a new one from the sign-in page.";

const resetParams = z.object({
  data: z
    .object({
      token: z.string().optional(),
      password: z.string().optional(),
      password_confirmation: z.string().optional(),
    })
    .optional(),
  token: z.string().optional(),
  password: z.string().optional(),
  password_confirmation: z.string().optional(),
});

export function registerPasswordRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/change_password",
    summary: "Change the password (ends the user's other sessions)",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:security"],
    params: z.object({
      password: z.string().optional(),
      new_password: z.string().optional(),
      new_password_confirmation: z.string().optional(),
    }),
    response: StatusOrError,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      // Pleroma's order: the confirmation is compared before the current password is checked.
      if ((p.new_password ?? "") !== (p.new_password_confirmation ?? ""))
        return c.json({ error: "New password does not match confirmation." });
      if (!(await passwordAgain(c, auth.account.id, p.password))) return c.json({ error: "Invalid password." });
      const invalid = newPasswordError(p.new_password, p.new_password_confirmation);
      if (invalid) return c.json({ error: invalid });
      await setPassword(d, auth.account.id, p.new_password!, auth.tokenId, config(c.env).passwordIterations);
      return c.json({ status: "success" as const });
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/change_email",
    summary: "Change the e-mail address (to be confirmed again when the instance requires confirmation)",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:security"],
    params: z.object({ password: z.string().optional(), email: z.string().max(EMAIL_MAX).optional() }),
    response: StatusOrError,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      if (!(await passwordAgain(c, auth.account.id, p.password))) return c.json({ error: "Invalid password." });
      const changed = await changeEmail(d, config(c.env), baseUrl(c), auth.account, p.email);
      if ("error" in changed) return c.json({ error: changed.error });
      after(c, changed.effects);
      return c.json({ status: "success" as const });
    },
  });

  route(app, {
    method: "post",
    path: "/auth/password",
    summary: "Mail a password reset link to the user with this nickname or e-mail (204 whether or not one exists)",
    tags: ["Pleroma"],
    auth: "none",
    params: z.object({ email: z.string().max(EMAIL_MAX).optional(), nickname: z.string().max(EMAIL_MAX).optional() }),
    noContent: true,
    // Each call may send a mail: limited per address and per login asked for.
    rateLimit: { name: "passwordReset", by: (p) => p.email ?? p.nickname },
    handler: async (c, p) => {
      const login = p.email ?? p.nickname;
      // The same answer, after the same work, whether or not the user exists: the rest follows the answer.
      if (login) after(c, { mailLinks: [{ link: "reset", login }] });
      return c.body(null, 204);
    },
  });

  // The reset page the mail links to, and its form's target (Pleroma's paths and `data[...]` fields).
  const noStore = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
  };
  app.get("/api/v1/pleroma/password_reset/:token", async (c) => {
    const token = c.req.param("token");
    if (!(await resetTokenValid(db(c.env), token)))
      return c.html(messagePage("Password reset", INVALID_TOKEN), 404, noStore);
    return c.html(resetPage(token), 200, noStore);
  });
  const doReset = async (c: Ctx) => {
    const p = await parseParams(c, resetParams);
    const token = p.data?.token ?? p.token ?? c.req.param("token") ?? "";
    const password = p.data?.password ?? p.password;
    const confirmation = p.data?.password_confirmation ?? p.password_confirmation;
    const invalid = newPasswordError(password, confirmation);
    const d = db(c.env);
    if (invalid) {
      if (!(await resetTokenValid(d, token))) return c.html(messagePage("Password reset", INVALID_TOKEN), 404, noStore);
      return c.html(resetPage(token, invalid.replace(/^New password/, "The password")), 422, noStore);
    }
    if (!(await resetPassword(d, token, password!, config(c.env).passwordIterations)))
      return c.html(messagePage("Password reset", INVALID_TOKEN), 404, noStore);
    return c.html(
      messagePage(
        "Password reset",
        "Your password was changed. Sign in with the new one; your other sessions were signed out.",
      ),
      200,
      noStore,
    );
  };
  app.post("/api/v1/pleroma/password_reset", (c) => doReset(c as Ctx));
  app.post("/api/v1/pleroma/password_reset/:token", (c) => doReset(c as Ctx));
}
