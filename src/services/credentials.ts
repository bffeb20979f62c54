/**
 * The readers of `credentials` (with `mfa.ts` for the sealed TOTP secret): the password checks (throttled) and
 * the signing key. Other modules write it without reading it back (registration's row, a password change or reset,
 * account deletion); keep it so, as no check does: a query elsewhere that selects a hash or a key could leak one.
 */
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { accounts, credentials, rateLimits, userColumns, users } from "../db/schema";
import type { Limit } from "../env";
import { dummyPasswordHash, verifyPassword } from "../lib/crypto";
import { generateActorKeyPair, generateProofKey } from "../lib/keys";
import { loginMatches } from "./accounts";
import { countHits, throwIfOver, unhit } from "./rate-limit";

export interface LoginThrottle {
  ip: string;
  perIp: Limit;
  perAccount: Limit;
  /** The instance's password hash cost: an unknown login is checked at the same cost as a known one. */
  iterations: number;
}

/** An address that signed in to an account stays known to it this long (see `checkLogin`). */
export const KNOWN_ADDRESS_MS = 30 * 24 * 3600 * 1000;
const knownKey = (accountId: string, ip: string) => `login:known:${accountId}:${ip}`;

/**
 * The local user whose nickname or e-mail and password match, or null. Each check counts first (atomically, so
 * parallel guesses cannot pass together, and before any hashing) against the caller's address and against the
 * login as typed, and answers 429:
 * - when the address is over its limit, whatever the login;
 * - when the login is over its limit (a guess spread over many addresses) and the address has not signed in to
 *   that account before: a stranger cannot lock the owner out of the places they sign in from. The login is
 *   counted as typed, not as the account it names, so a 429 never tells whether a nickname or e-mail exists.
 * A success takes its counts back (only failures add up) and remembers the address for `KNOWN_ADDRESS_MS`. The
 * password is checked even when no such user exists, so the answer takes as long either way.
 */
export async function checkLogin(d: DB, login: string, password: string, throttle: LoginThrottle) {
  // The user and their credentials in one statement: a real login and an unknown one cost the same statements
  // and the same hashing (a dummy hash), so timing tells nothing about which nicknames or addresses exist.
  const hit = await d
    .select({
      account: accounts,
      user: userColumns,
      credentials: {
        passwordHash: credentials.passwordHash,
        totpSecret: credentials.totpSecret,
        passwordResetPending: credentials.passwordResetPending,
      },
    })
    .from(accounts)
    .innerJoin(users, eq(users.accountId, accounts.id))
    .innerJoin(credentials, eq(credentials.accountId, accounts.id))
    .where(loginMatches(login))
    .get();
  const found = hit?.user ? { account: hit.account, user: hit.user } : null;
  const keys = [`login:ip:${throttle.ip}`, `login:name:${login.trim().toLowerCase().slice(0, 320)}`];
  const [byIp, byLogin] = await countHits(d, [
    { key: keys[0], limit: throttle.perIp },
    { key: keys[1], limit: throttle.perAccount },
  ]);
  // Over the per-login limit: whether this address signed in to the account before (asked for unknown logins too,
  // with a key no address has, so a throttled unknown login takes as long as a throttled real one).
  const known =
    byLogin.retryAfter > 0
      ? await d
          .select({ key: rateLimits.key })
          .from(rateLimits)
          .where(
            and(
              eq(rateLimits.key, knownKey(found?.account.id ?? "-", throttle.ip)),
              gt(rateLimits.windowStart, now() - KNOWN_ADDRESS_MS),
            ),
          )
          .get()
      : undefined;
  throwIfOver(found && known ? [byIp] : [byIp, byLogin]);
  const row = found ? hit!.credentials : undefined;
  const stored = row?.passwordHash;
  const ok = await verifyPassword(password, stored ?? dummyPasswordHash(throttle.iterations));
  if (!found || !ok || !stored) return null;
  await unhit(d, keys, { key: knownKey(found.account.id, throttle.ip), at: now() });
  // `mfa`: a second factor is needed before any token (services/mfa.ts); `resetPending`: no sign-in until a reset.
  return { ...found, mfa: !!row!.totpSecret, resetPending: !!row!.passwordResetPending };
}

export interface SigningKey {
  /** PKCS#8 PEM. */
  privateKey: string;
  /** SPKI PEM, also on the account row for the actor document. */
  publicKey: string;
}

/**
 * The account's signing key pair, made the first time something signs (not at registration: RSA generation
 * costs 90–270 ms of CPU). Racing first calls settle in one batch: the private key is written only while none
 * exists, the public key only with the private key that won, and both are read back.
 */
export async function signingKey(d: DB, accountId: string): Promise<SigningKey | null> {
  const read = () =>
    d
      .select({ privateKey: credentials.privateKey, publicKey: accounts.publicKey })
      .from(credentials)
      .innerJoin(accounts, eq(accounts.id, credentials.accountId))
      .where(eq(credentials.accountId, accountId));
  const existing = (await read())[0];
  if (!existing) return null;
  if (existing.privateKey && existing.publicKey)
    return { privateKey: existing.privateKey, publicKey: existing.publicKey };
  const made = await generateActorKeyPair();
  const [, , rows] = await d.batch([
    d
      .update(credentials)
      .set({ privateKey: made.privateKey })
      .where(and(eq(credentials.accountId, accountId), isNull(credentials.privateKey))),
    d
      .update(accounts)
      .set({ publicKey: made.publicKey })
      .where(
        and(
          eq(accounts.id, accountId),
          sql`(SELECT private_key FROM credentials WHERE account_id = ${accountId}) = ${made.privateKey}`,
        ),
      ),
    read(),
  ]);
  const row = rows[0];
  return row?.privateKey && row.publicKey ? { privateKey: row.privateKey, publicKey: row.publicKey } : null;
}

export interface ActorKeys extends SigningKey {
  /** Ed25519 private JWK (with the public point `x`) for Object Integrity Proofs. */
  proofKey: JsonWebKey;
}

/**
 * Both keys of an actor for federation: the RSA pair of `signingKey` (HTTP Signatures) and an Ed25519 key
 * (Object Integrity Proofs), read in one query and made on first need like `signingKey` (each written only
 * while absent, then read back, so racing first calls agree).
 */
export async function actorKeys(d: DB, accountId: string): Promise<ActorKeys | null> {
  const read = () =>
    d
      .select({ privateKey: credentials.privateKey, proofKey: credentials.proofKey, publicKey: accounts.publicKey })
      .from(credentials)
      .innerJoin(accounts, eq(accounts.id, credentials.accountId))
      .where(eq(credentials.accountId, accountId));
  const done = (row: { privateKey: string | null; proofKey: string | null; publicKey: string | null } | undefined) =>
    row?.privateKey && row.publicKey && row.proofKey
      ? { privateKey: row.privateKey, publicKey: row.publicKey, proofKey: JSON.parse(row.proofKey) as JsonWebKey }
      : null;
  const existing = (await read())[0];
  if (!existing) return null;
  const ready = done(existing);
  if (ready) return ready;
  if (!existing.privateKey || !existing.publicKey) await signingKey(d, accountId);
  if (!existing.proofKey) {
    const made = JSON.stringify(await generateProofKey());
    await d
      .update(credentials)
      .set({ proofKey: made })
      .where(and(eq(credentials.accountId, accountId), isNull(credentials.proofKey)));
  }
  return done((await read())[0]);
}

/**
 * Pleroma's `confirm_current_password` for a signed-in user (delete/disable/move, MFA, password and e-mail
 * changes, backup codes): whether `password` is the account's; absent, it is a wrong one. Failures count against
 * the account like sign-in failures (429 over the limit); a success takes its count back. Routes ask through
 * `passwordAgain` (http/auth.ts).
 */
export async function confirmPassword(
  d: DB,
  accountId: string,
  password: string | undefined,
  perAccount: Limit,
): Promise<boolean> {
  const key = `password:account:${accountId}`;
  throwIfOver(await countHits(d, [{ key, limit: perAccount }]));
  const stored = (
    await d
      .select({ hash: credentials.passwordHash })
      .from(credentials)
      .where(eq(credentials.accountId, accountId))
      .get()
  )?.hash;
  const ok = await verifyPassword(password ?? "", stored ?? dummyPasswordHash());
  if (!ok || !stored) return false;
  await unhit(d, [key]);
  return true;
}
