/**
 * The two steps of signing in on a page (the OAuth authorize page and `/auth/sign_in`): one password check and
 * one second-factor check for both, so they refuse, throttle and ask for the second factor alike. What each
 * page does with the outcome (an authorization code, a redirect) is its own.
 */
import { eq } from "drizzle-orm";
import { db } from "../db/client";
import { accounts } from "../db/schema";
import { config } from "../env";
import { ApiError } from "../lib/errors";
import { withUser, type AccountRow, type UserRow } from "../services/accounts";
import { checkLogin } from "../services/credentials";
import { createMfaToken, redeemMfaToken } from "../services/mfa";
import { assertActive, passwordSignIn } from "../services/sign-in";
import { getCookie } from "hono/cookie";
import { authenticate, loginThrottle, SESSION_COOKIE } from "./auth";
import type { Ctx } from "./route";

export type PasswordStep =
  | { kind: "signed-in"; account: AccountRow; user: UserRow }
  /** MFA is on: no session until the code (`mfaToken` is the second form's only secret). */
  | { kind: "second-factor"; mfaToken: string }
  | { kind: "refused"; status: 401 | 403 | 429; message: string; headers: Record<string, string> };

/**
 * The password step (`checkLogin`'s throttling, then `passwordSignIn`'s rule). The MFA token it may make is bound
 * to `app` (null: the browser sign-in page) and the scopes asked for.
 */
export async function passwordStep(
  c: Ctx,
  login: string,
  password: string,
  mfa: { appId: string | null; scopes: string[] },
): Promise<PasswordStep> {
  const d = db(c.env);
  try {
    const found = await checkLogin(d, login, password, loginThrottle(c));
    if (!found) return { kind: "refused", status: 401, message: "Invalid nickname or password.", headers: {} };
    if (passwordSignIn(found, "page") === "signed-in")
      return { kind: "signed-in", account: found.account, user: found.user };
    return {
      kind: "second-factor",
      mfaToken: await createMfaToken(d, { accountId: found.account.id, appId: mfa.appId, scopes: mfa.scopes }),
    };
  } catch (e) {
    // Throttled or refused (disabled, awaiting approval, unconfirmed, reset required): the reason in words.
    if (e instanceof ApiError && (e.status === 403 || e.status === 429))
      return {
        kind: "refused",
        status: e.status,
        message: e.status === 429 ? "Too many attempts. Wait a moment and try again." : e.message,
        headers: e.headers,
      };
    throw e;
  }
}

export type SecondFactorStep =
  | { kind: "signed-in"; accountId: string; scopes: string[] }
  | { kind: "failed" }
  | { kind: "throttled"; headers: Record<string, string> }
  | { kind: "refused"; message: string };

/** The second step: a TOTP or backup (`recovery`) code for an MFA token of `appId` (null: the sign-in page). */
export async function secondFactorStep(
  c: Ctx,
  input: { mfaToken: string | undefined; appId: string | null; challengeType: string | undefined; code?: string },
): Promise<SecondFactorStep> {
  const d = db(c.env);
  let redeemed;
  try {
    redeemed = input.mfaToken
      ? await redeemMfaToken(c.env, d, {
          token: input.mfaToken,
          appId: input.appId,
          type: input.challengeType === "recovery" ? "recovery" : "totp",
          code: input.code,
          limit: config(c.env).rateLimits.mfaFailures,
        })
      : null;
  } catch (e) {
    if (e instanceof ApiError && e.status === 429) return { kind: "throttled", headers: e.headers };
    throw e;
  }
  if (!redeemed) return { kind: "failed" };
  // The account may have been disabled between the two steps.
  const who = await withUser(d).where(eq(accounts.id, redeemed.accountId)).get();
  if (!who?.user) return { kind: "refused", message: "This account no longer exists." };
  try {
    assertActive(who.account, who.user);
  } catch (e) {
    if (e instanceof ApiError) return { kind: "refused", message: e.message };
    throw e;
  }
  return { kind: "signed-in", accountId: redeemed.accountId, scopes: redeemed.scopes };
}

/** The account behind the browser's session cookie, unless the user asked to sign in afresh. */
export async function sessionUser(c: Ctx, forceLogin = false) {
  if (forceLogin || !getCookie(c, SESSION_COOKIE)) return null;
  try {
    const auth = await authenticate(c);
    return auth?.account && auth.user && !auth.app ? { account: auth.account, user: auth.user } : null;
  } catch {
    return null; // a disabled or unconfirmed session just shows the login form
  }
}
