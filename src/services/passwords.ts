/**
 * Passwords and e-mail: changing them (with the current password), resetting by e-mail (single-use expiring
 * tokens, stored as digests), and staff forcing a reset. Every change of password ends sessions: a change keeps only
 * the token that made it, a reset (or a forced one) ends them all.
 */
import { and, eq, gt, inArray, ne, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { credentials, mfaTokens, passwordResetTokens, tokens, users } from "../db/schema";
import type { Config } from "../env";
import { hashPassword, randomToken, sha256 } from "../lib/crypto";
import { findLocalByLogin, type AccountRow } from "./accounts";
import { confirmationMail } from "./registration-mail";
import { queueMail } from "./mail-queue";
import type { Effects } from "./effects";
import { isEmailAddress } from "../lib/email-address";

/** Pleroma's `password_reset_token_validity`: a day. */
const RESET_TOKEN_MS = 24 * 3600 * 1000;

/** Registration's rule, in Pleroma's words for a change ("New password ..."); null when acceptable. */
export function newPasswordError(password: string | undefined, confirmation: string | undefined): string | null {
  if (!password) return "New password can't be blank.";
  if (password !== confirmation) return "New password does not match confirmation.";
  if (password.length < 8) return "New password should be at least 8 character(s).";
  if (password.length > 256) return "New password should be at most 256 character(s).";
  return null;
}

/**
 * Sets a new password and ends every session but `keepTokenId` (the caller's; null ends all), pending MFA sign-ins
 * and reset links, and lifts a forced reset — one batch.
 */
export async function setPassword(
  d: DB,
  accountId: string,
  password: string,
  keepTokenId: string | null,
  iterations: number,
): Promise<void> {
  const hash = await hashPassword(password, iterations);
  await d.batch([
    d
      .update(credentials)
      .set({ passwordHash: hash, passwordResetPending: false })
      .where(eq(credentials.accountId, accountId)),
    d
      .delete(tokens)
      .where(
        keepTokenId
          ? and(eq(tokens.accountId, accountId), ne(tokens.id, keepTokenId))
          : eq(tokens.accountId, accountId),
      ),
    d.delete(mfaTokens).where(eq(mfaTokens.accountId, accountId)),
    d.delete(passwordResetTokens).where(eq(passwordResetTokens.accountId, accountId)),
  ]);
}

/**
 * Changes the e-mail address (the current password already checked): Pleroma's messages for a bad or taken address.
 * When the instance requires confirmation, the new address must be confirmed (the user is unconfirmed until the
 * link mailed to it is opened): the mail is queued in the change's batch.
 */
export async function changeEmail(
  d: DB,
  cfg: Config,
  base: string,
  account: AccountRow,
  email: string | undefined,
): Promise<{ error: string } | { effects: Effects }> {
  const address = (email ?? "").trim();
  if (!address) return { error: "Email can't be blank." };
  if (!isEmailAddress(address)) return { error: "Email has invalid format." };
  const token = cfg.activationRequired ? randomToken(24) : null;
  const t = now();
  const set = token
    ? { email: address, confirmed: false, confirmationTokenHash: await sha256(token), confirmationSentAt: t }
    : { email: address };
  try {
    // The unique index on lower(email) decides a race between two users taking the same address.
    const taken = await d
      .select({ id: users.accountId })
      .from(users)
      .where(and(sql`lower(${users.email}) = ${address.toLowerCase()}`, ne(users.accountId, account.id)))
      .get();
    if (taken) return { error: "Email has already been taken." };
    await d.batch([
      d.update(users).set(set).where(eq(users.accountId, account.id)),
      ...(token ? [queueMail(d, cfg, base, confirmationMail(cfg, base, account, address, token), t)] : []),
    ]);
  } catch (e) {
    if (String(e).includes("UNIQUE")) return { error: "Email has already been taken." };
    throw e;
  }
  return { effects: { mail: token !== null } };
}

/**
 * A reset link mailed to the active local user with this nickname or e-mail, if there is one (not deactivated):
 * the token and its queued mail in one batch. The caller answers the same either way.
 */
export async function mailResetLink(d: DB, cfg: Config, base: string, login: string): Promise<Effects> {
  const found = await findLocalByLogin(d, login);
  if (!found || found.account.deactivated) return {};
  const token = randomToken(32);
  const t = now();
  await d.batch([
    d.insert(passwordResetTokens).values({
      tokenHash: await sha256(token),
      accountId: found.account.id,
      createdAt: t,
      expiresAt: t + RESET_TOKEN_MS,
    }),
    queueMail(d, cfg, base, resetMail(cfg, found.account, found.user.email, token, base), t),
  ]);
  return { mail: true };
}

function resetMail(cfg: Config, account: AccountRow, email: string, token: string, base: string) {
  const link = `${base}/api/v1/pleroma/password_reset/${token}`;
  return {
    to: email,
    subject: "Password reset",
    text: `Hello ${account.username},\n\nSomeone asked to reset the password of your account on ${cfg.name}. To choose a new one, open this link within a day:\n${link}\n\nIf it was not you, ignore this mail: your password stays as it is.\n`,
    html: `<p>Hello ${account.username},</p><p>Someone asked to reset the password of your account on ${cfg.name}. To choose a new one, open this link within a day:</p><p><a href="${link}">${link}</a></p><p>If it was not you, ignore this mail: your password stays as it is.</p>`,
  };
}

/** Whether a reset token is live (the page shows its form only then). */
export async function resetTokenValid(d: DB, token: string): Promise<boolean> {
  const row = await d
    .select({ h: passwordResetTokens.tokenHash })
    .from(passwordResetTokens)
    .where(and(eq(passwordResetTokens.tokenHash, await sha256(token)), gt(passwordResetTokens.expiresAt, now())))
    .get();
  return !!row;
}

/**
 * Resets the password with a live token, in one batch: the password set, every session, MFA sign-in and reset link
 * of the user gone (this token too, so it works once), a forced reset lifted. False when the token is unknown,
 * spent or expired.
 */
export async function resetPassword(d: DB, token: string, password: string, iterations: number): Promise<boolean> {
  const hash = await hashPassword(password, iterations);
  const owner = d
    .select({ id: passwordResetTokens.accountId })
    .from(passwordResetTokens)
    .where(and(eq(passwordResetTokens.tokenHash, await sha256(token)), gt(passwordResetTokens.expiresAt, now())));
  const [, , , spent] = await d.batch([
    d
      .update(credentials)
      .set({ passwordHash: hash, passwordResetPending: false })
      .where(inArray(credentials.accountId, owner)),
    d.delete(tokens).where(inArray(tokens.accountId, owner)),
    d.delete(mfaTokens).where(inArray(mfaTokens.accountId, owner)),
    d
      .delete(passwordResetTokens)
      .where(inArray(passwordResetTokens.accountId, owner))
      .returning({ h: passwordResetTokens.tokenHash }),
  ]);
  return spent.length > 0;
}

/**
 * Pleroma's `password_reset_pending` for the admin API (`force_password_reset`; the ADMIN lane logs it): sign-in is
 * refused ("Password reset is required") until the user resets by e-mail, and every session ends. Statements, to
 * go in the caller's batch.
 */
export function forcePasswordReset(d: DB, accountId: string) {
  return [
    d.update(credentials).set({ passwordResetPending: true }).where(eq(credentials.accountId, accountId)),
    d.delete(tokens).where(eq(tokens.accountId, accountId)),
    d.delete(mfaTokens).where(eq(mfaTokens.accountId, accountId)),
  ] as const;
}
