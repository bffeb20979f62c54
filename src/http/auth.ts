/**
 * Who is calling: a bearer token (`Authorization`, `?access_token=`), the `_pleroma_key` session cookie
 * (its value is an access token), or HTTP Basic (nickname or e-mail and password). Scopes are checked here.
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { AppEnv, Auth } from "./app-env";
import { eq } from "drizzle-orm";
import { db } from "../db/client";
import { users } from "../db/schema";
import { config } from "../env";
import type { AccountRow, UserRow } from "../services/accounts";
import { checkLogin, confirmPassword, type LoginThrottle } from "../services/credentials";
import { assertActive, passwordSignIn } from "../services/sign-in";
import { findToken } from "../services/tokens";
import { hasAnyScope } from "../services/scopes";
import { forbidden } from "../lib/errors";
import { clientIp, fromOtherOrigin } from "./urls";
import { background } from "../effects/background";

export const SESSION_COOKIE = "_pleroma_key";
/** What a password (Basic) login may do: everything a full-scope token may. */
const BASIC_SCOPES = ["read", "write", "follow", "push"];

export type { Auth } from "./app-env";

/** Auth with a user, as routes that need one receive it. */
export type UserAuth = Auth & { account: AccountRow; user: UserRow };

/** The bearer token of the request (header, `?access_token=` or session cookie), if any. */
export function bearer(c: Context): string | null {
  const header = c.req.header("authorization");
  if (header) {
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (m) return m[1].trim();
  }
  const query = c.req.query("access_token");
  if (query) return query;
  // The browser session writes only from this origin's own pages: a page elsewhere (a sibling subdomain of the
  // same site included, which SameSite=Lax lets the cookie reach) cannot post, follow or change settings with it.
  if (!SAFE_METHODS.has(c.req.method) && fromOtherOrigin(c)) return null;
  return getCookie(c, SESSION_COOKIE) ?? null;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function basic(c: Context): { login: string; password: string } | null {
  const header = c.req.header("authorization");
  const m = header && /^Basic\s+(.+)$/i.exec(header.trim());
  if (!m) return null;
  let decoded: string;
  try {
    decoded = new TextDecoder().decode(Uint8Array.from(atob(m[1]), (ch) => ch.charCodeAt(0)));
  } catch {
    return null;
  }
  const i = decoded.indexOf(":");
  if (i < 0) return null;
  return { login: decoded.slice(0, i), password: decoded.slice(i + 1) };
}

/** Resolves the caller once per request; null when no valid credentials were sent. */
export async function authenticate(c: Context<AppEnv>): Promise<Auth | null> {
  if (c.get("auth") !== undefined) return c.get("auth")!;
  let auth: Auth | null = null;
  const token = bearer(c);
  if (token) {
    return settleToken(c, await findToken(db(c.env), token));
  } else {
    const creds = basic(c);
    if (creds) {
      const found = await checkLogin(db(c.env), creds.login, creds.password, loginThrottle(c));
      if (found && passwordSignIn(found, "basic") === "signed-in")
        auth = {
          tokenId: null,
          secondFactorAt: null,
          scopes: BASIC_SCOPES,
          app: null,
          account: found.account,
          user: found.user,
        };
    }
  }
  if (auth?.account && auth.user) {
    assertActive(auth.account, auth.user);
    touchActivity(c, auth.user);
  }
  c.set("auth", auth);
  return auth;
}

/**
 * The caller behind a token row (found by `findToken`, or read inside another statement by routes that fold
 * the token look-up into their own query): refuses disabled and unconfirmed users, records activity.
 */
export function settleToken(c: Context<AppEnv>, found: TokenFound | null): Auth | null {
  const auth: Auth | null = found
    ? {
        tokenId: found.token.id,
        secondFactorAt: found.token.secondFactorAt,
        scopes: found.token.scopes.split(" "),
        app: found.app,
        account: found.account,
        user: found.user,
      }
    : null;
  if (auth?.account && auth.user) {
    assertActive(auth.account, auth.user);
    touchActivity(c, auth.user);
  }
  c.set("auth", auth);
  return auth;
}

/** The limits on failed password checks for this request's caller (config `rateLimits`). */
export function loginThrottle(c: Context<AppEnv>): LoginThrottle {
  const limits = config(c.env).rateLimits;
  return {
    ip: clientIp(c),
    perIp: limits.loginPerIp,
    perAccount: limits.loginPerAccount,
    iterations: config(c.env).passwordIterations,
  };
}

export type TokenFound = NonNullable<Awaited<ReturnType<typeof findToken>>>;

const ACTIVITY_GRANULARITY_MS = 3600_000;

/** Keeps `last_active_at` (monthly active users) within an hour, writing at most hourly and after the response. */
function touchActivity(c: Context<AppEnv>, user: UserRow): void {
  const t = Date.now();
  if (user.lastActiveAt !== null && t - user.lastActiveAt < ACTIVITY_GRANULARITY_MS) return;
  const write = db(c.env).update(users).set({ lastActiveAt: t }).where(eq(users.accountId, user.accountId)).run();
  try {
    background(c.executionCtx, "activity", write);
  } catch {
    // No execution context (called outside a request): the write still runs, unawaited.
  }
}

function insufficientScopes(alternatives: string[]) {
  return forbidden(`Insufficient permissions: ${alternatives.join(" | ")}.`);
}

export type AuthMode = "none" | "optional" | "required" | "user";

/**
 * Applies a route's auth rule:
 * - `optional`: a caller without the scopes is treated as anonymous (Pleroma's proceed_unauthenticated);
 * - `required`: a token is needed (an app-only one will do);
 * - `user`: a token belonging to a user is needed.
 */
export async function authorize(c: Context<AppEnv>, mode: AuthMode, scopes: string[]): Promise<Auth | null> {
  if (mode === "none") return null;
  return admit(mode, scopes, await authenticate(c));
}

/** Applies a route's auth rule to a resolved caller (see `authorize`). */
export function admit(mode: AuthMode, scopes: string[], auth: Auth | null): Auth | null {
  if (mode === "none") return null;
  if (mode === "optional") {
    if (!auth || (scopes.length > 0 && !hasAnyScope(auth.scopes, scopes))) return null;
    return auth;
  }
  if (!auth) throw forbidden("Invalid credentials.");
  if (scopes.length > 0 && !hasAnyScope(auth.scopes, scopes)) throw insufficientScopes(scopes);
  if (mode === "user" && !auth.account) throw forbidden("Invalid credentials.");
  return auth;
}

/**
 * The signed-in user's password asked again before an action that needs it (Pleroma's
 * `confirm_current_password`), throttled per account (services/credentials.ts `confirmPassword`). Each route
 * answers a wrong one as Pleroma does there: `{"error": "Invalid password."}` or 422.
 */
export const passwordAgain = (c: Context<AppEnv>, accountId: string, password: string | undefined) =>
  confirmPassword(db(c.env), accountId, password, config(c.env).rateLimits.loginPerAccount);
