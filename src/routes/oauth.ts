/** OAuth 2: the authorize page, the token endpoint (four grants) and revocation. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { csrfCookie, csrfToken, csrfValid, signInBrowser } from "../http/browser";
import { passwordStep, secondFactorStep, sessionUser } from "../http/page-sign-in";
import type { AppEnv } from "../http/app-env";
import { config } from "../env";
import { db } from "../db/client";
import { loginThrottle } from "../http/auth";
import { assertActive } from "../services/sign-in";
import { badRequest } from "../lib/errors";
import { parseParams } from "../http/params";
import { route, type Ctx } from "../http/route";
import { hostOf } from "../http/urls";
import { authorizePage, codePage, messagePage, mfaPage } from "../render/pages";
import { renderToken } from "../render/oauth";
import { TokenSchema } from "../schemas/oauth";
import { confirmEmail } from "../services/registration-mail";
import { authenticateClient, findAppByClientId, OOB_URI, redirectUriList, type AppRow } from "../services/apps";
import { createCode } from "../services/oauth";
import { parseScopes, withinScopes } from "../services/scopes";
import { issueToken, revokeToken } from "../services/tokens";
import { grantToken } from "../services/oauth-grants";
import { eq } from "drizzle-orm";
import { accounts } from "../db/schema";
import { redeemMfaToken } from "../services/mfa";
import { withUser } from "../services/accounts";

const authorizeParams = z.object({
  response_type: z.string().optional(),
  client_id: z.string().optional(),
  redirect_uri: z.string().optional(),
  scope: z.string().optional(),
  state: z.string().optional(),
  code_challenge: z.string().optional(),
  code_challenge_method: z.enum(["S256", "plain"]).optional(),
  force_login: z.string().optional(),
});

const mfaVerifyParams = authorizeParams.extend({
  csrf_token: z.string().optional(),
  mfa_token: z.string().optional(),
  code: z.string().optional(),
  challenge_type: z.string().optional(),
});

const decisionParams = authorizeParams.extend({
  csrf_token: z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  decision: z.enum(["approve", "deny"]).optional(),
});

type AuthorizeRequest = z.infer<typeof authorizeParams>;

interface Checked {
  app: AppRow;
  redirectUri: string;
  scopes: string[];
}

/** Errors that cannot be sent back to the client (unknown app or redirect URI) are shown to the user instead. */
async function checkRequest(c: Ctx, p: AuthorizeRequest): Promise<Checked | Response> {
  const fail = (message: string) => c.html(messagePage("Authorization failed", message), 400) as Response;
  if (!p.client_id) return fail("The application did not say who it is (client_id is missing).");
  const app = await findAppByClientId(db(c.env), p.client_id);
  if (!app) return fail("Unknown application.");
  const registered = redirectUriList(app);
  const redirectUri = p.redirect_uri ?? (registered.length === 1 ? registered[0] : undefined);
  if (!redirectUri || !registered.includes(redirectUri))
    return fail("The redirect URI is not one the application registered.");
  if (p.response_type !== undefined && p.response_type !== "code") {
    return redirectError(c, redirectUri, "unsupported_response_type", p.state);
  }
  const appScopes = app.scopes.split(" ");
  const scopes = p.scope ? parseScopes(p.scope) : appScopes;
  if (!withinScopes(scopes, appScopes)) return redirectError(c, redirectUri, "invalid_scope", p.state);
  return { app, redirectUri, scopes };
}

function redirectError(c: Ctx, redirectUri: string, error: string, state?: string): Response {
  if (redirectUri === OOB_URI) return c.html(messagePage("Authorization failed", error), 400) as Response;
  const url = new URL(redirectUri);
  url.searchParams.set("error", error);
  if (state) url.searchParams.set("state", state);
  return c.redirect(url.toString(), 302);
}

function hiddenFields(p: AuthorizeRequest, checked: Checked) {
  return {
    response_type: "code",
    client_id: checked.app.clientId,
    redirect_uri: checked.redirectUri,
    scope: checked.scopes.join(" "),
    state: p.state,
    code_challenge: p.code_challenge,
    code_challenge_method: p.code_challenge_method,
  };
}

export function registerOAuthRoutes(app: OpenAPIHono<AppEnv>) {
  // The authorize page must not be framed: a remembered session would let another site click "Approve".
  app.use("/oauth/authorize", async (c, next) => {
    await next();
    c.header("X-Frame-Options", "DENY");
    c.header("Content-Security-Policy", "frame-ancestors 'none'");
  });
  app.get("/oauth/authorize", async (c) => {
    const p = await parseParams(c, authorizeParams);
    const checked = await checkRequest(c, p);
    if (checked instanceof Response) return checked;
    const session = await sessionUser(c, p.force_login === "true");
    const forceLogin = new URL(c.req.url);
    forceLogin.searchParams.set("force_login", "true");
    return c.html(
      authorizePage({
        instance: config(c.env).name,
        appName: checked.app.name,
        scopes: checked.scopes,
        csrf: csrfToken(c, "/oauth"),
        hidden: { ...hiddenFields(p, checked), force_login: p.force_login },
        user: session?.account.username ?? null,
        forceLoginUrl: forceLogin.pathname + forceLogin.search,
      }),
    );
  });

  app.post("/oauth/authorize", async (c) => {
    const p = await parseParams(c, decisionParams);
    const cookie = csrfCookie(c) ?? "";
    if (!csrfValid(c, p.csrf_token)) {
      return c.html(
        messagePage("Authorization failed", "The form expired. Go back, reload the page and try again."),
        403,
      );
    }
    const checked = await checkRequest(c, p);
    if (checked instanceof Response) return checked;
    if (p.decision !== "approve") return redirectError(c, checked.redirectUri, "access_denied", p.state);

    const again = (error: string, status: 401 | 403 | 429, headers: Record<string, string> = {}) =>
      c.html(
        authorizePage({
          instance: config(c.env).name,
          appName: checked.app.name,
          scopes: checked.scopes,
          csrf: cookie,
          hidden: hiddenFields(p, checked),
          user: null,
          error,
        }),
        status,
        headers,
      ) as Response;

    let who = p.username ? null : await sessionUser(c, p.force_login === "true");
    if (!who) {
      const step = await passwordStep(c, p.username ?? "", p.password ?? "", {
        appId: checked.app.id,
        scopes: checked.scopes,
      });
      if (step.kind === "refused") return again(step.message, step.status, step.headers);
      if (step.kind === "second-factor")
        // The second step: no session and no code until a TOTP or backup code passes (POST /oauth/mfa/verify).
        return c.html(
          mfaPage({
            action: "/oauth/mfa/verify",
            purpose: `to let ${checked.app.name} in`,
            csrf: cookie,
            mfaToken: step.mfaToken,
            hidden: { ...hiddenFields(p, checked), force_login: p.force_login },
          }),
        );
      await signInBrowser(c, step.account.id);
      who = step;
    }
    return grantCode(c, checked, p, who.account.id);
  });

  // The authorize page's second step (Pleroma's `mfa[...]` form at the same path): same CSRF rule as the first.
  app.post("/oauth/mfa/verify", async (c) => {
    const p = await parseParams(c, mfaVerifyParams);
    const cookie = csrfCookie(c) ?? "";
    if (!csrfValid(c, p.csrf_token)) {
      return c.html(
        messagePage("Authorization failed", "The form expired. Go back, reload the page and try again."),
        403,
      );
    }
    const checked = await checkRequest(c, p);
    if (checked instanceof Response) return checked;
    const step = await secondFactorStep(c, {
      mfaToken: p.mfa_token,
      appId: checked.app.id,
      challengeType: p.challenge_type,
      code: p.code,
    });
    if (step.kind === "throttled")
      return c.html(
        messagePage("Too many attempts", "Too many wrong codes. Wait a while, then sign in again."),
        429,
        step.headers,
      );
    if (step.kind === "failed")
      return c.html(
        mfaPage({
          action: "/oauth/mfa/verify",
          purpose: `to let ${checked.app.name} in`,
          csrf: cookie,
          mfaToken: p.mfa_token ?? "",
          hidden: { ...hiddenFields(p, checked), force_login: p.force_login },
          error: "Two-factor authentication failed.",
        }),
        401,
      );
    if (step.kind === "refused") return c.html(messagePage("Authorization failed", step.message), 403);
    await signInBrowser(c, step.accountId);
    return grantCode(c, { ...checked, scopes: step.scopes }, p, step.accountId);
  });

  route(app, {
    method: "post",
    path: "/oauth/token",
    summary: "Obtain a token (authorization_code, password, client_credentials, refresh_token)",
    tags: ["OAuth"],
    auth: "none",
    params: z.object({
      grant_type: z.string(),
      client_id: z.string().optional(),
      client_secret: z.string().optional(),
      code: z.string().optional(),
      redirect_uri: z.string().optional(),
      code_verifier: z.string().optional(),
      username: z.string().optional(),
      password: z.string().optional(),
      refresh_token: z.string().optional(),
      scope: z.string().optional(),
    }),
    response: TokenSchema,
    handler: async (c, p) => {
      const { issued, me } = await grantToken(db(c.env), clientCredentials(c, p), p, loginThrottle(c));
      return c.json(renderToken(issued, me));
    },
  });

  route(app, {
    method: "post",
    path: "/oauth/mfa/challenge",
    summary: "Second step of an MFA sign-in: the mfa_token and a TOTP or backup (recovery) code for a token",
    tags: ["OAuth"],
    auth: "none",
    params: z.object({
      mfa_token: z.string().optional(),
      challenge_type: z.string().optional(),
      code: z.string().optional(),
      client_id: z.string().optional(),
      client_secret: z.string().optional(),
    }),
    response: TokenSchema,
    handler: async (c, p) => {
      const d = db(c.env);
      // Pleroma answers every failure alike: 400 "Invalid code".
      const invalidCode = () => badRequest("Invalid code");
      const creds = clientCredentials(c, p);
      const client = await authenticateClient(d, creds.id, creds.secret);
      if (!client || !p.mfa_token) throw invalidCode();
      const redeemed = await redeemMfaToken(c.env, d, {
        token: p.mfa_token,
        appId: client.id,
        type: p.challenge_type,
        code: p.code,
        limit: config(c.env).rateLimits.mfaFailures,
      });
      if (!redeemed) throw invalidCode();
      const who = await withUser(d).where(eq(accounts.id, redeemed.accountId)).get();
      if (!who?.user) throw invalidCode();
      assertActive(who.account, who.user);
      const issued = await issueToken(d, {
        appId: client.id,
        accountId: who.account.id,
        scopes: redeemed.scopes,
        secondFactor: true,
      });
      return c.json(renderToken(issued, who.account.uri));
    },
  });

  route(app, {
    method: "post",
    path: "/oauth/revoke",
    summary: "Revoke a token (RFC 7009)",
    tags: ["OAuth"],
    auth: "none",
    params: z.object({
      token: z.string().optional(),
      client_id: z.string().optional(),
      client_secret: z.string().optional(),
    }),
    response: z.object({}),
    handler: async (c, p) => {
      const d = db(c.env);
      const creds = clientCredentials(c, p);
      const client = await authenticateClient(d, creds.id, creds.secret);
      // RFC 7009: answering the same whatever the token was tells an attacker nothing.
      if (client && p.token) await revokeToken(d, client.id, p.token);
      return c.json({});
    },
  });

  app.get("/api/account/confirm_email/:id/:token", async (c) => {
    const ok = await confirmEmail(db(c.env), c.req.param("id"), c.req.param("token"));
    return ok
      ? c.html(
          messagePage(
            "Account confirmed",
            `Your account on ${hostOf(c)} is confirmed. You can sign in from your app now.`,
          ),
        )
      : c.html(messagePage("Confirmation failed", "This confirmation link is invalid or was already used."), 404);
  });
}

/** The authorization code for a signed-in user, sent to the redirect URI (or shown, out of band). */
async function grantCode(c: Ctx, checked: Checked, p: AuthorizeRequest, accountId: string): Promise<Response> {
  const code = await createCode(db(c.env), {
    appId: checked.app.id,
    accountId,
    scopes: checked.scopes,
    redirectUri: checked.redirectUri,
    codeChallenge: p.code_challenge,
    codeChallengeMethod: p.code_challenge_method,
  });
  if (checked.redirectUri === OOB_URI) return c.html(codePage(checked.app.name, code));
  const url = new URL(checked.redirectUri);
  url.searchParams.set("code", code);
  if (p.state) url.searchParams.set("state", p.state);
  return c.redirect(url.toString(), 302);
}

/** Client id and secret from the form, or from HTTP Basic as RFC 6749 prefers. */
function clientCredentials(c: Ctx, p: { client_id?: string; client_secret?: string }) {
  const header = c.req.header("authorization");
  const m = header && /^Basic\s+(.+)$/i.exec(header);
  if (m) {
    try {
      const [id, secret] = atob(m[1]).split(":");
      return { id: decodeURIComponent(id), secret: decodeURIComponent(secret ?? "") };
    } catch {
      return { id: undefined, secret: undefined };
    }
  }
  return { id: p.client_id, secret: p.client_secret };
}
