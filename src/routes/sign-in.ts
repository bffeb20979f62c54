/**
 * Signing in in a browser outside OAuth, without JavaScript (issue 34): `/auth/sign_in` (Mastodon's path). The
 * password and second-factor steps are the authorize page's (http/page-sign-in.ts); success is the `_pleroma_key`
 * browser session and a redirect to `return_to` (same-origin paths only, `safeReturnTo`). MFA accounts go on to
 * `/auth/sign_in/mfa`. Forms carry a double-submit CSRF token; the pages cannot be framed.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { csrfCookie, csrfToken, csrfValid, FORM_PAGE_HEADERS, safeReturnTo, signInBrowser } from "../http/browser";
import { passwordStep, secondFactorStep, sessionUser } from "../http/page-sign-in";
import { parseParams } from "../http/params";
import type { Ctx } from "../http/route";
import { baseUrl, hostOf } from "../http/urls";
import { messagePage, mfaPage, signInPage } from "../render/pages";
import { SESSION_SCOPES } from "../services/oauth";

/** `return_to` (also `redirect_to`), and Mastodon's `user[email]`/`user[password]` next to plain fields. */
const target = {
  return_to: z.string().max(2000).optional(),
  redirect_to: z.string().max(2000).optional(),
};
const signInParams = z.object({
  ...target,
  csrf_token: z.string().max(200).optional(),
  username: z.string().max(320).optional(),
  password: z.string().max(1000).optional(),
  user: z.object({ email: z.string().max(320).optional(), password: z.string().max(1000).optional() }).optional(),
});
const mfaParams = z.object({
  ...target,
  csrf_token: z.string().max(200).optional(),
  mfa_token: z.string().max(200).optional(),
  code: z.string().max(100).optional(),
  challenge_type: z.string().max(20).optional(),
});

const expired = (c: Ctx) =>
  c.html(
    messagePage("Sign-in failed", "The form expired. Go back, reload the page and try again."),
    403,
    FORM_PAGE_HEADERS,
  );

const returnTo = (c: Ctx, p: { return_to?: string; redirect_to?: string }) =>
  safeReturnTo(p.return_to ?? p.redirect_to, baseUrl(c));

export function registerSignInRoutes(app: OpenAPIHono<AppEnv>) {
  app.get("/auth/sign_in", async (ctx) => {
    const c = ctx as unknown as Ctx;
    const p = await parseParams(c, z.object(target));
    const me = await sessionUser(c);
    return c.html(
      signInPage({
        instance: hostOf(c),
        csrf: csrfToken(c, "/auth"),
        returnTo: returnTo(c, p),
        signedInAs: me?.account.username ?? null,
      }),
      200,
      FORM_PAGE_HEADERS,
    );
  });

  app.post("/auth/sign_in", async (ctx) => {
    const c = ctx as unknown as Ctx;
    const p = await parseParams(c, signInParams);
    if (!csrfValid(c, p.csrf_token)) return expired(c);
    const to = returnTo(c, p);
    const login = p.username ?? p.user?.email ?? "";
    const step = await passwordStep(c, login, p.password ?? p.user?.password ?? "", {
      appId: null,
      scopes: SESSION_SCOPES,
    });
    if (step.kind === "refused")
      return c.html(
        signInPage({ instance: hostOf(c), csrf: csrfCookie(c) ?? "", returnTo: to, login, error: step.message }),
        step.status,
        { ...FORM_PAGE_HEADERS, ...step.headers },
      );
    if (step.kind === "second-factor")
      return c.html(
        mfaPage({
          action: "/auth/sign_in/mfa",
          purpose: "to sign in",
          csrf: csrfCookie(c) ?? "",
          mfaToken: step.mfaToken,
          hidden: { return_to: to },
        }),
        200,
        FORM_PAGE_HEADERS,
      );
    await signInBrowser(c, step.account.id);
    return c.redirect(to, 303);
  });

  app.post("/auth/sign_in/mfa", async (ctx) => {
    const c = ctx as unknown as Ctx;
    const p = await parseParams(c, mfaParams);
    if (!csrfValid(c, p.csrf_token)) return expired(c);
    const to = returnTo(c, p);
    const step = await secondFactorStep(c, {
      mfaToken: p.mfa_token,
      appId: null,
      challengeType: p.challenge_type,
      code: p.code,
    });
    if (step.kind === "throttled")
      return c.html(messagePage("Too many attempts", "Too many wrong codes. Wait a while, then sign in again."), 429, {
        ...FORM_PAGE_HEADERS,
        ...step.headers,
      });
    if (step.kind === "failed")
      return c.html(
        mfaPage({
          action: "/auth/sign_in/mfa",
          purpose: "to sign in",
          csrf: csrfCookie(c) ?? "",
          mfaToken: p.mfa_token ?? "",
          hidden: { return_to: to },
          error: "Two-factor authentication failed.",
        }),
        401,
        FORM_PAGE_HEADERS,
      );
    if (step.kind === "refused") return c.html(messagePage("Sign-in failed", step.message), 403, FORM_PAGE_HEADERS);
    await signInBrowser(c, step.accountId);
    return c.redirect(to, 303);
  });
}
