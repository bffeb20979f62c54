/**
 * What registration mails: the confirmation of the address (the link, its check, the mail again on request) and
 * the admins' notice of an account awaiting approval.
 */
import { and, eq } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { users } from "../db/schema";
import { randomToken, sha256 } from "../lib/crypto";
import type { Config } from "../env";
import { findLocalByLogin, type AccountRow } from "./accounts";
import { queueMail } from "./mail-queue";
import type { Effects } from "./effects";

/** Marks the user confirmed when the token matches; false otherwise. */
export async function confirmEmail(d: DB, accountId: string, token: string): Promise<boolean> {
  const rows = await d
    .update(users)
    .set({ confirmed: true, confirmationTokenHash: null })
    .where(and(eq(users.accountId, accountId), eq(users.confirmationTokenHash, await sha256(token))))
    .returning({ id: users.accountId });
  return rows.length > 0;
}

/**
 * The confirmation mail again, to an unconfirmed user with this e-mail or nickname, if there is one: a fresh
 * token and its mail in one batch (the mail is queued, sent by the Effects door).
 */
export async function resendConfirmation(d: DB, cfg: Config, base: string, login: string): Promise<Effects> {
  const found = await findLocalByLogin(d, login);
  if (!found || found.user.confirmed) return {};
  const token = randomToken(24);
  const t = now();
  await d.batch([
    d
      .update(users)
      .set({ confirmationTokenHash: await sha256(token), confirmationSentAt: t })
      .where(eq(users.accountId, found.account.id)),
    queueMail(d, cfg, base, confirmationMail(cfg, base, found.account, found.user.email, token), t),
  ]);
  return { mail: true };
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
