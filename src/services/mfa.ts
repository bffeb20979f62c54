/**
 * Multi-factor authentication as Pleroma 2.5 has it: one method (TOTP), backup codes, and the `mfa_token` that
 * carries a password sign-in to its second step. The TOTP secret is sealed (AES-GCM, `secretsKey`) in
 * `credentials`; backup codes and MFA tokens are SHA-256 digests. MFA is on exactly when a confirmed secret is set.
 */
import { and, eq, gt, lt, ne, sql, type SQL } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import type { DB } from "../db/client";
import { anyRow, now } from "../db/client";
import { credentials, mfaBackupCodes, mfaTokens, passwordResetTokens, tokens } from "../db/schema";
import type { Env, Limit } from "../env";
import { unprocessable } from "../lib/errors";
import { openSecret, randomToken, sealSecret, sha256 } from "../lib/crypto";
import { confirmPassword } from "./credentials";
import { secretsKey } from "./instance-keys";
import { countHits, throwIfOver, unhit } from "./rate-limit";
import { queueMail } from "./mail-queue";
import type { Effects } from "./effects";
import type { Config } from "../env";

/** Pleroma's defaults: 5 backup codes of 16 hex digits; MFA tokens live 5 minutes. */
const BACKUP_CODES = 5;
const MFA_TOKEN_MS = 5 * 60 * 1000;
/** Wrong codes one MFA token may take before it is spent (the per-account limit also applies). */
const MFA_TOKEN_ATTEMPTS = 5;

const totp = (secret: string, label = "", issuer = "") =>
  new TOTP({ secret: Secret.fromBase32(secret), label, issuer, algorithm: "SHA1", digits: 6, period: 30 });

const PERIOD_MS = 30_000;

/** The time step a TOTP code belongs to (one step of clock drift either way), or null when it is not valid. */
function totpStep(secret: string, code: string, t: number = now()): number | null {
  const clean = code.replace(/\s+/g, "");
  if (!/^\d{6}$/.test(clean)) return null;
  const delta = totp(secret).validate({ token: clean, window: 1, timestamp: t });
  return delta === null ? null : Math.floor(t / PERIOD_MS) + delta;
}

/**
 * Takes a TOTP code's step for the user: only a step later than the last one taken, in one conditional update, so
 * a code (seen over a shoulder, phished, replayed) works once however close two uses come.
 */
const takeTotpStepStatement = (
  d: DB,
  accountId: string,
  step: number,
  set: Partial<typeof credentials.$inferInsert>,
  where: SQL,
) =>
  d
    .update(credentials)
    .set({ ...set, totpLastStep: step })
    .where(
      and(
        eq(credentials.accountId, accountId),
        sql`(${credentials.totpLastStep} IS NULL OR ${credentials.totpLastStep} < ${step})`,
        where,
      ),
    )
    .returning({ a: credentials.accountId });

async function takeTotpStep(d: DB, accountId: string, step: number, where: SQL): Promise<boolean> {
  return (await takeTotpStepStatement(d, accountId, step, {}, where)).length > 0;
}

async function readSecrets(d: DB, accountId: string) {
  return d
    .select({ totpSecret: credentials.totpSecret, totpPending: credentials.totpPending })
    .from(credentials)
    .where(eq(credentials.accountId, accountId))
    .get();
}

/** `{enabled, totp}` as Pleroma renders `settings`. */
export async function mfaSettings(d: DB, accountId: string) {
  const row = await readSecrets(d, accountId);
  const on = !!row?.totpSecret;
  return { enabled: on, totp: on };
}

/**
 * Starts (or restarts) TOTP set-up: a fresh secret kept aside as pending, so a confirmed secret keeps working
 * until the new one is confirmed. Answers the key and its `otpauth://` URI.
 */
export async function setupTotp(env: Env, d: DB, accountId: string, label: string, issuer: string) {
  const secret = new Secret({ size: 20 }).base32;
  const sealed = await sealSecret(await secretsKey(env), accountId, secret);
  await d.update(credentials).set({ totpPending: sealed }).where(eq(credentials.accountId, accountId));
  return { key: secret, provisioning_uri: totp(secret, label, issuer).toString() };
}

/**
 * Confirms the pending secret with a code from it (422 `invalid_token` otherwise); from then on MFA is on. As a
 * password change does, it ends the user's other tokens and browser sessions (`keepTokenId`, the one confirming,
 * stays) and pending MFA sign-ins: a session opened with the password alone must not outlive the second factor.
 * One batch: the ends happen only when the confirmation took.
 */
export async function confirmTotp(
  env: Env,
  d: DB,
  accountId: string,
  code: string,
  keepTokenId: string | null,
): Promise<void> {
  const row = await readSecrets(d, accountId);
  // Pleroma's answer when there is no secret to check against.
  if (!row?.totpPending) throw unprocessable("invalid_secret_and_token");
  const secret = await openSecret(await secretsKey(env), accountId, row.totpPending);
  if (!secret) throw unprocessable("invalid_secret_and_token");
  const step = totpStep(secret, code);
  if (step === null) throw unprocessable("invalid_token");
  // Only the secret the code was checked against becomes the confirmed one; its code is then spent for sign-in.
  const confirmed = sql`EXISTS (SELECT 1 FROM credentials WHERE account_id = ${accountId} AND totp_secret = ${row.totpPending} AND totp_last_step = ${step})`;
  const [taken] = await d.batch([
    takeTotpStepStatement(
      d,
      accountId,
      step,
      { totpSecret: row.totpPending, totpPending: null },
      eq(credentials.totpPending, row.totpPending),
    ),
    d
      .delete(tokens)
      .where(and(eq(tokens.accountId, accountId), keepTokenId ? ne(tokens.id, keepTokenId) : undefined, confirmed)),
    d.delete(mfaTokens).where(and(eq(mfaTokens.accountId, accountId), confirmed)),
  ]);
  if (taken.length === 0) throw unprocessable("invalid_token");
}

/**
 * Turns MFA off: the secret (confirmed and pending), the backup codes and pending MFA sign-ins go, in one batch.
 * For the admin API's `disable_mfa` too (the ADMIN lane logs it in its own batch).
 */
export async function disableMfa(d: DB, accountId: string): Promise<void> {
  await d.batch(disableMfaStatements(d, accountId));
}

/** The writes of `disableMfa`, for a caller's own batch (the admin API logs in the same one). */
export function disableMfaStatements(d: DB, accountId: string) {
  return [
    d.update(credentials).set({ totpSecret: null, totpPending: null }).where(eq(credentials.accountId, accountId)),
    d.delete(mfaBackupCodes).where(eq(mfaBackupCodes.accountId, accountId)),
    d.delete(mfaTokens).where(eq(mfaTokens.accountId, accountId)),
  ] as const;
}

const backupHash = (accountId: string, code: string) => sha256(`${accountId}:${code.trim().toLowerCase()}`);

/** How long after passing the second factor a sign-in may replace backup codes without the password. */
export const RECENT_SECOND_FACTOR_MS = 15 * 60_000;

/**
 * New backup codes for the user, shown once. With MFA on they replace codes in force, which are as good as the
 * second factor itself: the password is asked (422 "Invalid password." otherwise, counted like a sign-in), unless
 * the caller's token comes from a sign-in that passed the second factor in the last 15 minutes (Pleroma-FE asks
 * for codes with no password, as Pleroma takes them, typically right after signing in); and the owner is mailed
 * (queued in the batch) whenever codes in force are replaced. With MFA off, none are in force and Pleroma-FE asks for them
 * before its password-checked confirmation, without one.
 */
export async function regenerateBackupCodes(
  d: DB,
  who: { accountId: string; email: string | null; username: string },
  proof: { password: string | undefined; secondFactorAt: number | null },
  perAccount: Limit,
  cfg: Config,
  base: string,
): Promise<{ codes: string[]; effects: Effects }> {
  const enabled = (await mfaSettings(d, who.accountId)).enabled;
  const recent = proof.secondFactorAt !== null && now() - proof.secondFactorAt < RECENT_SECOND_FACTOR_MS;
  if (enabled && !recent && !(await confirmPassword(d, who.accountId, proof.password, perAccount)))
    throw unprocessable("Invalid password.");
  const host = new URL(base).host;
  const text = `Hello ${who.username},\n\nNew backup codes for the second factor of your account on ${cfg.name} (${host}) were just made; the old ones no longer work.\n\nIf it was not you, change your password and make new codes at once.\n`;
  const mail =
    enabled && who.email
      ? {
          to: who.email,
          subject: "New backup codes",
          text,
          html: text
            .trim()
            .split("\n\n")
            .map((para) => `<p>${para.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</p>`)
            .join(""),
        }
      : null;
  const codes = await generateBackupCodes(d, who.accountId, mail ? [queueMail(d, cfg, base, mail)] : []);
  return { codes, effects: { mail: mail !== null } };
}

/** New backup codes, shown once: the old ones stop working in the same batch (with `also`, the mail telling so). */
async function generateBackupCodes(
  d: DB,
  accountId: string,
  also: ReturnType<typeof queueMail>[] = [],
): Promise<string[]> {
  const codes = Array.from({ length: BACKUP_CODES }, () =>
    Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join(""),
  );
  const t = now();
  const rows = await Promise.all(
    codes.map(async (code) => ({ codeHash: await backupHash(accountId, code), accountId, createdAt: t })),
  );
  await d.batch([
    d.delete(mfaBackupCodes).where(eq(mfaBackupCodes.accountId, accountId)),
    d.insert(mfaBackupCodes).values(rows),
    ...also,
  ]);
  return codes;
}

/** Spends a backup code: deleted by the statement that finds it, so it works once however close two uses come. */
async function useBackupCode(d: DB, accountId: string, code: string): Promise<boolean> {
  const rows = await d
    .delete(mfaBackupCodes)
    .where(and(eq(mfaBackupCodes.codeHash, await backupHash(accountId, code)), eq(mfaBackupCodes.accountId, accountId)))
    .returning({ h: mfaBackupCodes.codeHash });
  return rows.length > 0;
}

/** The second step's token for a user who passed the password step, bound to the app and scopes asked for. */
export async function createMfaToken(
  d: DB,
  input: { accountId: string; appId: string | null; scopes: string[] },
): Promise<string> {
  const token = randomToken(32);
  const t = now();
  await d.insert(mfaTokens).values({
    tokenHash: await sha256(token),
    accountId: input.accountId,
    appId: input.appId,
    scopes: input.scopes.join(" "),
    createdAt: t,
    expiresAt: t + MFA_TOKEN_MS,
  });
  return token;
}

export type ChallengeType = "totp" | "recovery";

/**
 * Checks the second factor for an MFA token of this app and spends the token on success: the user and scopes it
 * was issued for, or null (unknown, expired or spent token, another app's, a wrong code). Each attempt counts on
 * the token (spent after `MFA_TOKEN_ATTEMPTS`) and, before any code is checked, on the account (`limit`, 429),
 * so a known password does not buy unlimited guesses through fresh tokens.
 */
export async function redeemMfaToken(
  env: Env,
  d: DB,
  input: { token: string; appId: string | null; type: string | undefined; code: string | undefined; limit: Limit },
): Promise<{ accountId: string; scopes: string[] } | null> {
  const t = now();
  const hash = await sha256(input.token);
  const row = await d
    .update(mfaTokens)
    .set({ attempts: sql`${mfaTokens.attempts} + 1` })
    .where(and(eq(mfaTokens.tokenHash, hash), gt(mfaTokens.expiresAt, t), lt(mfaTokens.attempts, MFA_TOKEN_ATTEMPTS)))
    .returning()
    .get();
  if (!row || row.appId !== input.appId || !input.code || (input.type !== "totp" && input.type !== "recovery"))
    return null;
  const key = `mfa:account:${row.accountId}`;
  throwIfOver(await countHits(d, [{ key, limit: input.limit }]));
  if (!(await checkSecondFactor(env, d, row.accountId, input.type, input.code))) return null;
  const spent = await d.delete(mfaTokens).where(eq(mfaTokens.tokenHash, hash)).returning({ h: mfaTokens.tokenHash });
  if (!spent.length) return null;
  await unhit(d, [key]);
  return { accountId: row.accountId, scopes: row.scopes.split(" ") };
}

/** A TOTP code of the confirmed secret, or an unused backup code (then spent). */
async function checkSecondFactor(
  env: Env,
  d: DB,
  accountId: string,
  type: ChallengeType,
  code: string,
): Promise<boolean> {
  if (type === "recovery") return useBackupCode(d, accountId, code);
  const row = await readSecrets(d, accountId);
  if (!row?.totpSecret) return false;
  const secret = await openSecret(await secretsKey(env), accountId, row.totpSecret);
  const step = secret ? totpStep(secret, code) : null;
  return step !== null && (await takeTotpStep(d, accountId, step, eq(credentials.totpSecret, row.totpSecret)));
}

/** Expired MFA tokens and password reset tokens, at most `max` of each (the cron). */
export async function collectMfaTokens(d: DB, t: number, max = 500) {
  const due =
    (await anyRow(d, sql`mfa_tokens WHERE expires_at < ${t}`)) ||
    (await anyRow(d, sql`password_reset_tokens WHERE expires_at < ${t}`));
  if (!due) return;
  await d.batch([
    d
      .delete(mfaTokens)
      .where(sql`${mfaTokens.tokenHash} IN (SELECT token_hash FROM mfa_tokens WHERE expires_at < ${t} LIMIT ${max})`),
    d
      .delete(passwordResetTokens)
      .where(
        sql`${passwordResetTokens.tokenHash} IN (SELECT token_hash FROM password_reset_tokens WHERE expires_at < ${t} LIMIT ${max})`,
      ),
  ]);
}
