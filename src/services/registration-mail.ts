/**
 * What registration mails: the confirmation of the address (the link, its check, the mail again on request) and
 * the admins' notice of an account awaiting approval.
 */
import { and, eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { db, now } from "../db/client";
import { users } from "../db/schema";
import { randomToken, sha256 } from "../lib/crypto";
import { config, type Config, type Env } from "../env";
import { findLocalByLogin, type AccountRow, type UserRow } from "./accounts";
import { mailer } from "./mailer";

/** Marks the user confirmed when the token matches; false otherwise. */
export async function confirmEmail(d: DB, accountId: string, token: string): Promise<boolean> {
  const rows = await d
    .update(users)
    .set({ confirmed: true, confirmationTokenHash: null })
    .where(and(eq(users.accountId, accountId), eq(users.confirmationTokenHash, await sha256(token))))
    .returning({ id: users.accountId });
  return rows.length > 0;
}

/** A fresh confirmation token for an unconfirmed user with this e-mail or nickname; null if there is none. */
async function renewConfirmation(
  d: DB,
  login: string,
): Promise<{ found: { account: AccountRow; user: UserRow }; token: string } | null> {
  const found = await findLocalByLogin(d, login);
  if (!found || found.user.confirmed) return null;
  const token = randomToken(24);
  await d
    .update(users)
    .set({ confirmationTokenHash: await sha256(token), confirmationSentAt: now() })
    .where(eq(users.accountId, found.account.id));
  return { found, token };
}

/** The confirmation mail again, to an unconfirmed user with this login, if there is one (after the answer). */
export async function resendConfirmation(env: Env, base: string, host: string, login: string): Promise<void> {
  const renewed = await renewConfirmation(db(env), login);
  if (renewed)
    await mailer(env, host).send(
      confirmationMail(config(env), base, renewed.found.account, renewed.found.user.email, renewed.token),
    );
}

/**
 * What admins are mailed when someone asks to join while approval is required (Pleroma's
 * `new_unapproved_registration`): who, and the reason they gave.
 */
export function approvalRequestMail(
  cfg: Config,
  base: string,
  account: AccountRow,
  email: string,
  reason: string,
  to: string,
) {
  const esc = (x: string) => x.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return {
    to,
    subject: `New account up for review on ${cfg.name} (@${account.username})`,
    text: `New account for review: @${account.username} (${email})\n\nReason: ${reason}\n\nApprove or reject it in the admin interface: ${base}/pleroma/admin/\n`,
    html: `<p>New account for review: @${esc(account.username)} (${esc(email)})</p><blockquote>${esc(reason)}</blockquote><p>Approve or reject it in the admin interface.</p>`,
  };
}

export function confirmationMail(cfg: Config, base: string, account: AccountRow, email: string, token: string) {
  const link = `${base}/api/account/confirm_email/${account.id}/${token}`;
  return {
    to: email,
    subject: `${cfg.name} account confirmation`,
    text: `Hello ${account.username},\n\nConfirm your account on ${cfg.name} by opening this link:\n${link}\n`,
    html: `<p>Hello ${account.username},</p><p>Confirm your account on ${cfg.name} by opening this link:</p><p><a href="${link}">${link}</a></p>`,
  };
}
