/**
 * What the HTML forms share (the authorize, sign-in, sign-up and remote interaction pages): the double-submit
 * CSRF token, the browser session cookie (`_pleroma_key`, docs/security.md) and where a page may send the browser
 * next (`safeReturnTo`). Cookies are `Secure` over https or with a public DOMAIN.
 */
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { config } from "../env";
import { randomToken, safeEqual } from "../lib/crypto";
import { db } from "../db/client";
import { createSession, endSessionToken, SESSION_SECONDS } from "../services/oauth";
import { SESSION_COOKIE } from "./auth";
import type { Ctx } from "./route";

const CSRF_COOKIE = "starling_csrf";

/** Headers of a page with a form: never cached, never framed (another site cannot make the user click in it). */
export const FORM_PAGE_HEADERS = {
  "Cache-Control": "no-store",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "frame-ancestors 'none'",
};

/** Cookies are `Secure` when the page is served over https, or the instance has a public DOMAIN (always https). */
export const secure = (c: Ctx) => new URL(c.req.url).protocol === "https:" || config(c.env).domain !== null;

/** The form's CSRF token (kept in a cookie scoped to `path`, made when missing). */
export function csrfToken(c: Ctx, path: string): string {
  const existing = getCookie(c, CSRF_COOKIE);
  if (existing && existing.length >= 32) return existing;
  const token = randomToken(24);
  setCookie(c, CSRF_COOKIE, token, { path, httpOnly: true, sameSite: "Strict", secure: secure(c) });
  return token;
}

/** Whether a submitted form carries the token its cookie holds. */
export function csrfValid(c: Ctx, submitted: string | undefined): boolean {
  const cookie = getCookie(c, CSRF_COOKIE);
  return !!cookie && !!submitted && safeEqual(cookie, submitted);
}

/** The CSRF cookie's value, for a form shown again. */
export const csrfCookie = (c: Ctx) => getCookie(c, CSRF_COOKIE);

/** Sets the `_pleroma_key` session cookie (`signInBrowser` makes its token). */
function startSession(c: Ctx, accessToken: string) {
  setCookie(c, SESSION_COOKIE, accessToken, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: secure(c),
    maxAge: SESSION_SECONDS,
  });
}

/**
 * Signs the browser in as `accountId` with a new session token, ending the one it held (signing in as someone
 * else, or again, leaves no live token behind). The token is always made here, never taken from the request: a
 * session planted in the browser beforehand is not the one that gets signed in (no session fixation).
 */
export async function signInBrowser(c: Ctx, accountId: string) {
  const d = db(c.env);
  const previous = getCookie(c, SESSION_COOKIE);
  if (previous) await endSessionToken(d, previous);
  startSession(c, (await createSession(d, accountId)).accessToken);
}

/** Signs the browser out (the session's token is revoked by the caller). */
export function endSession(c: Ctx) {
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: secure(c) });
}

const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3}$/;

/**
 * The language a visitor reads, for the mails of a new account (Pleroma's order): the `userLanguage` cookie
 * Pleroma-FE sets from its language setting, else the browser's `Accept-Language`. Only a well-formed tag.
 */
export function visitorLanguage(c: Ctx): string | undefined {
  const cookie = getCookie(c, "userLanguage")?.trim();
  if (cookie && LANGUAGE_TAG.test(cookie)) return cookie;
  const header = c.req.header("accept-language")?.split(",")[0]?.split(";")[0]?.trim();
  return header && LANGUAGE_TAG.test(header) ? header : undefined;
}

/**
 * Where a page may send the browser after it (`return_to`): a path on this instance only, else `/`. Refused:
 * anything a browser could read as another host (`//evil`, `/\evil`, backslashes or control characters anywhere,
 * which browsers drop or turn into `/`), absolute URLs, whatever resolves to another origin, and a path that only
 * becomes `//evil` once its dot segments are resolved (`/..//evil`, `/%2e%2e//evil`): the answer is checked again.
 */
export function safeReturnTo(value: string | undefined, base: string): string {
  if (!value || value.length > 2000 || !value.startsWith("/") || value.startsWith("//")) return "/";
  if (/[\\\u0000-\u0020\u007f]/.test(value)) return "/";
  try {
    const origin = new URL(base).origin;
    const url = new URL(value, origin);
    const path = url.pathname + url.search + url.hash;
    return url.origin === origin && !path.startsWith("//") && !path.includes("\\") ? path : "/";
  } catch {
    return "/";
  }
}
