/**
 * The first administrator, made in the browser (issue 33): until an admin exists, `/setup` creates one, and only
 * for whoever holds the set-up secret (`SETUP_SECRET`, a Worker secret the deploy command makes and prints). The
 * claim row (`instance_keys.first_admin`, unique) is written in the same batch as the account, so two set-ups
 * racing make one admin; once any admin exists (this way or `npm run admin -- create-admin`), the page is gone.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { newId } from "../db/ids";
import { accounts, credentials, instanceKeys, users } from "../db/schema";
import { hashPassword, safeEqual } from "../lib/crypto";
import { ApiError } from "../lib/errors";
import { emptyAccount, localActorUrls, type AccountRow } from "./accounts";
import { credentialErrors, fieldErrors } from "./registration";

/**
 * Whether `/setup` is open: a secret is configured, no admin exists, and no set-up ever made one (an admin made
 * here and later demoted or deleted does not reopen it for the old secret).
 */
export async function setupOpen(d: DB, secret: string | undefined): Promise<boolean> {
  if (!secret) return false;
  const row = await d.get(
    sql`SELECT 1 AS x WHERE EXISTS (SELECT 1 FROM users WHERE is_admin = 1)
      OR EXISTS (SELECT 1 FROM instance_keys WHERE name = 'first_admin')`,
  );
  return !row;
}

export interface FirstAdmin {
  secret: string;
  username: string;
  email: string;
  password: string;
}

/**
 * Creates the first admin (confirmed, approved). 403 for a wrong secret, 404 once an admin exists, 400 with
 * Pleroma's field errors for a bad nickname, address or password.
 */
export async function createFirstAdmin(
  d: DB,
  configured: string | undefined,
  base: string,
  input: FirstAdmin,
  iterations: number,
): Promise<AccountRow> {
  if (!(await setupOpen(d, configured))) throw new ApiError(404, "There is nothing to set up.");
  if (!safeEqual(input.secret.trim(), configured!)) throw new ApiError(403, "The set-up secret is not right.");
  const errors = credentialErrors(input.username, input.email, input.password);
  if (Object.keys(errors).length) throw fieldErrors(errors);
  const t = now();
  const id = newId(t);
  const account: AccountRow = { ...emptyAccount(id, input.username, t), ...localActorUrls(base, input.username) };
  const hash = await hashPassword(input.password, iterations);
  try {
    await d.batch([
      d.insert(instanceKeys).values({ name: "first_admin", value: id, createdAt: t }),
      d.insert(accounts).values(account),
      d.insert(users).values({
        accountId: id,
        email: input.email,
        confirmed: true,
        isAdmin: true,
        lastActiveAt: t,
        createdAt: t,
      }),
      d.insert(credentials).values({ accountId: id, passwordHash: hash, privateKey: null }),
    ]);
  } catch (e) {
    if (String(e).includes("instance_keys")) throw new ApiError(404, "There is nothing to set up.");
    // A nickname or address an existing (non-admin) account already has.
    if (String(e).includes("UNIQUE"))
      throw fieldErrors(
        String(e).includes("email") ? { email: ["has already been taken"] } : { nickname: ["has already been taken"] },
      );
    throw e;
  }
  return account;
}
