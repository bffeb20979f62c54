/** Access and refresh tokens. Only digests are stored; the clear value is shown once, when issued. */
import { and, eq, gt, or, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { newId } from "../db/ids";
import { accounts, apps, tokens, userColumns, users } from "../db/schema";
import { randomToken, sha256 } from "../lib/crypto";
import { badRequest } from "../lib/errors";
import { withinScopes } from "./scopes";

export type TokenRow = typeof tokens.$inferSelect;

/** Tokens live long, as in Pleroma and Mastodon; clients keep them until revoked. */
const TOKEN_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;

export interface IssuedToken {
  row: TokenRow;
  accessToken: string;
  refreshToken: string;
}

export interface TokenInput {
  appId: string | null;
  accountId: string | null;
  scopes: string[];
  lifetimeSeconds?: number;
  /** The sign-in passed its second factor now (the MFA challenge). */
  secondFactor?: boolean;
}

/** Makes a token; the caller inserts `row` (alone or inside a batch). */
export async function buildToken(input: TokenInput): Promise<IssuedToken> {
  const accessToken = randomToken(32);
  const refreshToken = randomToken(32);
  const created = now();
  return {
    accessToken,
    refreshToken,
    row: {
      id: newId(created),
      tokenHash: await sha256(accessToken),
      refreshHash: await sha256(refreshToken),
      appId: input.appId,
      accountId: input.accountId,
      scopes: input.scopes.join(" "),
      createdAt: created,
      expiresAt: created + (input.lifetimeSeconds ?? TOKEN_LIFETIME_SECONDS) * 1000,
      secondFactorAt: input.secondFactor ? created : null,
    },
  };
}

export async function issueToken(d: DB, input: TokenInput) {
  const issued = await buildToken(input);
  await d.insert(tokens).values(issued.row);
  return issued;
}

const tokenQuery = (d: DB) =>
  d
    .select({ token: tokens, app: apps, account: accounts, user: userColumns })
    .from(tokens)
    .leftJoin(apps, eq(apps.id, tokens.appId))
    .leftJoin(accounts, eq(accounts.id, tokens.accountId))
    .leftJoin(users, eq(users.accountId, tokens.accountId))
    .where(and(eq(tokens.tokenHash, sql.placeholder("hash")), gt(tokens.expiresAt, sql.placeholder("now"))))
    .prepare();

// Every signed-in request reads its token: the statement is built once per database handle, not per request.
const tokenQueries = new WeakMap<DB, ReturnType<typeof tokenQuery>>();

/** The live token with its app, account and user, in one query. */
export async function findToken(d: DB, token: string) {
  let q = tokenQueries.get(d);
  if (!q) tokenQueries.set(d, (q = tokenQuery(d)));
  const row = await q.get({ hash: await sha256(token), now: now() });
  return row ?? null;
}

/** Revokes an access or refresh token of this app (RFC 7009: unknown tokens are not an error). */
export async function revokeToken(d: DB, appId: string, token: string): Promise<void> {
  const hash = await sha256(token);
  await d
    .delete(tokens)
    .where(and(eq(tokens.appId, appId), or(eq(tokens.tokenHash, hash), eq(tokens.refreshHash, hash))));
}

/**
 * Exchanges a refresh token for a new token with the same scopes, or the narrower `scopes` asked for; the old one
 * stops working. RFC 6749 §6: the new scopes must be granted by the old token's, or the answer is `invalid_scope`.
 */
export async function refreshToken(
  d: DB,
  appId: string,
  refresh: string,
  scopes?: string[],
): Promise<IssuedToken | null> {
  const old = await d
    .select()
    .from(tokens)
    .where(and(eq(tokens.appId, appId), eq(tokens.refreshHash, await sha256(refresh))))
    .get();
  if (!old) return null;
  const held = old.scopes.split(" ");
  if (scopes && !withinScopes(scopes, held)) {
    throw badRequest("invalid_scope", {
      error_description: "The requested scope exceeds the scope granted by the refresh token.",
    });
  }
  const issued = await buildToken({ appId, accountId: old.accountId, scopes: scopes ?? held });
  // Rotated in place by one conditional statement: the refresh token and its access token are replaced together,
  // and of two uses of the same refresh token (a replay, or a race) only the first finds it; the other is refused
  // and writes nothing. The row keeps its id, so the token's push subscription stays with it.
  const { id: _id, ...fresh } = issued.row;
  const rotated = await d
    .update(tokens)
    .set(fresh)
    .where(and(eq(tokens.id, old.id), eq(tokens.refreshHash, old.refreshHash!)))
    .returning({ id: tokens.id });
  return rotated.length ? { ...issued, row: { ...issued.row, id: old.id } } : null;
}

/** The user's live tokens with their app's name (null for browser sessions), oldest first. */
export function userTokens(d: DB, accountId: string) {
  return d
    .select({ id: tokens.id, expiresAt: tokens.expiresAt, appName: apps.name })
    .from(tokens)
    .leftJoin(apps, eq(apps.id, tokens.appId))
    .where(and(eq(tokens.accountId, accountId), gt(tokens.expiresAt, now())))
    .orderBy(tokens.id);
}

/**
 * Revokes one of the user's own tokens by id (its push subscription goes with it: foreign key); false when the
 * user holds no such token.
 */
export async function revokeUserToken(d: DB, accountId: string, id: string): Promise<boolean> {
  const rows = await d
    .delete(tokens)
    .where(and(eq(tokens.id, id), eq(tokens.accountId, accountId)))
    .returning({ id: tokens.id });
  return rows.length > 0;
}
