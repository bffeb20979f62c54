/**
 * `POST /oauth/token`'s rules: which client, which scopes, and each grant (authorization code with PKCE, password
 * with the one sign-in rule and MFA's second step, client credentials, refresh token). The route reads the request
 * and renders the answer; every decision is here.
 */
import { eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts } from "../db/schema";
import { badRequest, forbidden } from "../lib/errors";
import { authenticateClient } from "./apps";
import { checkLogin, type LoginThrottle } from "./credentials";
import { createMfaToken } from "./mfa";
import { consumeCode, verifyPkce } from "./oauth";
import { parseScopes, withinScopes } from "./scopes";
import { passwordSignIn } from "./sign-in";
import { issueToken, refreshToken, type IssuedToken } from "./tokens";

export interface TokenRequest {
  grant_type: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  username?: string;
  password?: string;
  refresh_token?: string;
  scope?: string;
}

/** What every refusal answers, as Pleroma does: nothing about which part was wrong. */
const invalidCredentials = () => badRequest("Invalid credentials");

/** A token for the client `creds` names, by the request's grant; `me` is the account's ActivityPub id. */
export async function grantToken(
  d: DB,
  creds: { id?: string; secret?: string },
  p: TokenRequest,
  throttle: LoginThrottle,
): Promise<{ issued: IssuedToken; me: string | null }> {
  const client = await authenticateClient(d, creds.id, creds.secret);
  if (!client) throw invalidCredentials();
  const appScopes = client.scopes.split(" ");
  // A request may narrow the app's scopes, never widen them.
  const requested = p.scope ? parseScopes(p.scope) : null;
  if (requested && !withinScopes(requested, appScopes)) throw invalidCredentials();
  const scopes = requested ?? appScopes;

  switch (p.grant_type) {
    case "authorization_code": {
      if (!p.code) throw invalidCredentials();
      const grant = await consumeCode(d, client.id, p.code);
      if (!grant) throw invalidCredentials();
      if (p.redirect_uri && p.redirect_uri !== grant.redirectUri) throw invalidCredentials();
      if (!(await verifyPkce(grant.codeChallenge, grant.codeChallengeMethod, p.code_verifier)))
        throw invalidCredentials();
      const account = await d.select().from(accounts).where(eq(accounts.id, grant.accountId)).get();
      if (!account) throw invalidCredentials();
      const issued = await issueToken(d, { appId: client.id, accountId: account.id, scopes: grant.scopes.split(" ") });
      return { issued, me: account.uri };
    }
    case "password": {
      if (!p.username || !p.password) throw invalidCredentials();
      const found = await checkLogin(d, p.username, p.password, throttle);
      if (!found) throw invalidCredentials();
      if (passwordSignIn(found, "grant") === "second-factor") {
        // Pleroma 2.5: 403 with a token for POST /oauth/mfa/challenge; methods as a comma-separated string.
        const mfaToken = await createMfaToken(d, { accountId: found.account.id, appId: client.id, scopes });
        throw forbidden("mfa_required", { mfa_token: mfaToken, supported_challenge_types: "totp" });
      }
      const issued = await issueToken(d, { appId: client.id, accountId: found.account.id, scopes });
      return { issued, me: found.account.uri };
    }
    case "client_credentials":
      return { issued: await issueToken(d, { appId: client.id, accountId: null, scopes }), me: null };
    case "refresh_token": {
      if (!p.refresh_token) throw invalidCredentials();
      const issued = await refreshToken(d, client.id, p.refresh_token, requested ?? undefined);
      if (!issued) throw invalidCredentials();
      const me = issued.row.accountId
        ? ((await d.select({ uri: accounts.uri }).from(accounts).where(eq(accounts.id, issued.row.accountId)).get())
            ?.uri ?? null)
        : null;
      return { issued, me };
    }
    default:
      throw badRequest("Unsupported grant_type");
  }
}
