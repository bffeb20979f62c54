/** Authorization codes (single use, ten minutes, optionally bound to a PKCE challenge) and session tokens. */
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { newId } from "../db/ids";
import { authorizationCodes } from "../db/schema";
import { base64url, randomToken, safeEqual, sha256 } from "../lib/crypto";
import { issueToken } from "./tokens";

const CODE_LIFETIME_MS = 10 * 60 * 1000;
/** Browser sessions from the authorize page (the `_pleroma_key` cookie) last a month. */
export const SESSION_SECONDS = 30 * 24 * 3600;

export async function createCode(
  d: DB,
  input: {
    appId: string;
    accountId: string;
    scopes: string[];
    redirectUri: string;
    codeChallenge?: string;
    codeChallengeMethod?: string;
  },
): Promise<string> {
  const code = randomToken(32);
  const t = now();
  await d.insert(authorizationCodes).values({
    id: newId(t),
    codeHash: await sha256(code),
    appId: input.appId,
    accountId: input.accountId,
    scopes: input.scopes.join(" "),
    redirectUri: input.redirectUri,
    codeChallenge: input.codeChallenge ?? null,
    codeChallengeMethod: input.codeChallenge ? (input.codeChallengeMethod ?? "plain") : null,
    usedAt: null,
    createdAt: t,
    expiresAt: t + CODE_LIFETIME_MS,
  });
  return code;
}

/**
 * Spends a code: marks it used in the same statement that reads it, so a second exchange finds nothing,
 * however close together the two arrive. Null when unknown, expired, spent or bound to another app.
 */
export async function consumeCode(d: DB, appId: string, code: string) {
  const t = now();
  const row = await d
    .update(authorizationCodes)
    .set({ usedAt: t })
    .where(
      and(
        eq(authorizationCodes.codeHash, await sha256(code)),
        isNull(authorizationCodes.usedAt),
        gt(authorizationCodes.expiresAt, t),
      ),
    )
    .returning()
    .get();
  return row && row.appId === appId ? row : null;
}

/** RFC 7636: S256 (and plain, for old clients). A code without a challenge needs no verifier. */
export async function verifyPkce(
  challenge: string | null,
  method: string | null,
  verifier: string | undefined,
): Promise<boolean> {
  if (!challenge) return true;
  if (!verifier) return false;
  if (method === "S256") {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
    return safeEqual(base64url(digest), challenge);
  }
  return safeEqual(verifier, challenge);
}

/** What a browser session may do: the full user scopes. */
export const SESSION_SCOPES = ["read", "write", "follow", "push"];

/** A session for the browser pages' cookie: a token of no app with the full user scopes. */
export function createSession(d: DB, accountId: string) {
  return issueToken(d, {
    appId: null,
    accountId,
    scopes: SESSION_SCOPES,
    lifetimeSeconds: SESSION_SECONDS,
  });
}

/** Ends a browser session: its token (the `_pleroma_key` cookie's value) is deleted. */
export async function endSessionToken(d: DB, token: string): Promise<void> {
  await d.run(sql`DELETE FROM tokens WHERE app_id IS NULL AND token_hash = ${await sha256(token)}`);
}
