/**
 * Signing up and out in a browser, without JavaScript (issue 34): `/auth/sign_up` (also `/registration`, and an
 * invite link `/registration/:token`, Pleroma's paths) through the same service as `POST /api/v1/accounts`
 * (services/sign-up.ts); a new account that may sign in at once gets a browser session (`_pleroma_key`).
 * `/auth/sign_out` ends it (same-origin only). The form carries a double-submit CSRF token and is throttled as
 * registrations are.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { getCookie } from "hono/cookie";
import type { AppEnv } from "../http/app-env";
import { SESSION_COOKIE } from "../http/auth";
import { db } from "../db/client";
import { config } from "../env";
import { csrfToken, csrfValid, endSession, FORM_PAGE_HEADERS, signInBrowser, visitorLanguage } from "../http/browser";
import { parseParams } from "../http/params";
import { after, throttle, type Ctx } from "../http/route";
import { baseUrl, fromOtherOrigin, hostOf } from "../http/urls";
import { ApiError } from "../lib/errors";
import { messagePage, signUpPage, type SignUpForm } from "../render/pages";
import { newCaptcha } from "../services/captcha";
import { endSessionToken } from "../services/oauth";
import { signUp } from "../services/sign-up";

const noStore = FORM_PAGE_HEADERS;

const signUpParams = z.object({
  csrf_token: z.string().max(200).optional(),
  username: z.string().max(100).default(""),
  email: z.string().max(320).default(""),
  password: z.string().max(1000).default(""),
  password_confirmation: z.string().max(1000).default(""),
  reason: z.string().max(10_000).optional(),
  token: z.string().max(200).optional(),
  agreement: z.string().optional(),
  captcha_token: z.string().max(200).optional(),
  captcha_solution: z.string().max(100).optional(),
  captcha_answer_data: z.string().max(500).optional(),
});

async function form(c: Ctx, extra: Partial<SignUpForm> = {}): Promise<SignUpForm> {
  const cfg = config(c.env);
  const captcha = cfg.captcha === "native" ? await newCaptcha(c.env, "native") : null;
  return {
    instance: hostOf(c),
    csrf: csrfToken(c, "/auth"),
    inviteOnly: !cfg.registrationsOpen,
    approvalRequired: cfg.approvalRequired,
    reasonLimit: cfg.registrationReasonLength,
    captcha: captcha?.token ? { token: captcha.token, url: captcha.url!, answerData: captcha.answer_data! } : null,
    ...extra,
  };
}

/** Pleroma's field errors (a JSON-encoded map) in words. */
function inWords(e: ApiError): string {
  try {
    const fields = JSON.parse(e.message) as Record<string, string[]>;
    return Object.entries(fields)
      .map(([k, v]) => `${k} ${v.join(", ")}`)
      .join("; ");
  } catch {
    return e.message;
  }
}

export function registerSignUpRoutes(app: OpenAPIHono<AppEnv>) {
  const show = async (c: Ctx, token?: string) => c.html(signUpPage(await form(c, { token })), 200, noStore);
  app.get("/auth/sign_up", (c) => show(c as unknown as Ctx, c.req.query("token")));
  app.get("/registration", (c) => show(c as unknown as Ctx, c.req.query("token")));
  app.get("/registration/:token", (c) => show(c as unknown as Ctx, c.req.param("token")));

  app.post("/auth/sign_up", async (ctx) => {
    const c = ctx as unknown as Ctx;
    const p = await parseParams(c, signUpParams);
    if (!csrfValid(c, p.csrf_token))
      return c.html(messagePage("Sign-up failed", "The form expired. Go back, reload the page and try again."), 403);
    const again = async (status: 400 | 403 | 422 | 429, error: string) =>
      c.html(
        signUpPage(
          await form(c, { error, token: p.token, values: { username: p.username, email: p.email, reason: p.reason } }),
        ),
        status,
        noStore,
      );
    try {
      await throttle(c, "registration", undefined);
      if (p.password !== p.password_confirmation) return again(422, "The two passwords differ.");
      const d = db(c.env);
      const { made, effects } = await signUp(c.env, d, config(c.env), baseUrl(c), null, {
        username: p.username,
        email: p.email,
        password: p.password,
        agreement: p.agreement === "true" || p.agreement === "on" || p.agreement === "1",
        reason: p.reason,
        token: p.token,
        locale: visitorLanguage(c),
        language: visitorLanguage(c),
        captcha_token: p.captcha_token,
        captcha_solution: p.captcha_solution,
        captcha_answer_data: p.captcha_answer_data,
      });
      after(c, effects);
      const who = `@${made.account.username}`;
      if (made.user.approvalPending)
        return c.html(
          messagePage("Thank you", `${who} is registered. You can sign in once the admins approve the account.`),
          200,
          noStore,
        );
      if (made.confirmationToken)
        return c.html(
          messagePage("Check your mail", `${who} is registered. Open the link mailed to you to confirm the address.`),
          200,
          noStore,
        );
      await signInBrowser(c, made.account.id);
      return c.html(
        messagePage(
          "Welcome",
          `${who} is ready, and this browser is signed in. Use any Mastodon or Pleroma app with ${hostOf(c)}.`,
        ),
        200,
        noStore,
      );
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return again(e.status === 429 ? 429 : e.status === 403 ? 403 : 422, inWords(e));
    }
  });

  const signOut = async (ctx: unknown) => {
    const c = ctx as Ctx;
    // Only from this instance's own pages (http/urls.ts `fromOtherOrigin`): SameSite=Lax keeps the cookie from
    // other sites, but a sibling subdomain of the same site is not another site.
    if (fromOtherOrigin(c))
      return c.html(messagePage("Sign-out refused", "Sign out from this server's own pages."), 403);
    const token = getCookie(c, SESSION_COOKIE);
    if (token) await endSessionToken(db(c.env), token);
    endSession(c);
    return c.redirect("/", 303);
  };
  app.post("/auth/sign_out", signOut);
  app.delete("/auth/sign_out", signOut);
}
