/**
 * Registration (the client API's `POST /api/v1/accounts` and the sign-up page both come through sign-up.ts): the
 * checks of a new account's nickname, address and password, invites, the account made in one batch; and
 * registration with approval (issue 17): accounts registered while `account_approval_required` is on wait
 * (`users.approval_pending`) until an admin approves them; admins are mailed when one asks (registration-mail.ts).
 */
import { and, eq, sql } from "drizzle-orm";
import { now, readsWhere, statement, type DB } from "../db/client";
import { newId } from "../db/ids";
import { accounts, credentials, invites, tokens, users } from "../db/schema";
import { plainTextToHtml } from "../content/text";
import { ApiError, badRequest } from "../lib/errors";
import { hashPassword, randomToken, sha256 } from "../lib/crypto";
import type { Config } from "../env";
import { emptyAccount, localActorUrls, type AccountRow, type UserRow } from "./accounts";
import type { AppRow } from "./apps";
import { buildToken, type IssuedToken } from "./tokens";
import { localEmojisNamed, profileEmojis, shortcodesIn } from "./emoji";
import { NICKNAME_PATTERN, RESERVED_NICKNAMES } from "../lib/nicknames";
import { queueMail } from "./mail-queue";
import { isEmailAddress } from "../lib/email-address";
import { approvalRequestMail, confirmationMail } from "./registration-mail";

const RESERVED = new Set(RESERVED_NICKNAMES);

// ---- registering ----

export interface RegistrationInput {
  username: string;
  email: string;
  password: string;
  locale?: string;
  language?: string;
  fullname?: string;
  bio?: string;
  token?: string;
  /** Why the person wants to join: required while approval is required. */
  reason?: string;
}

/** Pleroma reports field errors as a JSON-encoded map inside `error`, which Pleroma-FE parses. */
export function fieldErrors(errors: Record<string, string[]>): ApiError {
  return badRequest(JSON.stringify(errors));
}

/** Pleroma's checks of a new account's nickname, e-mail address and password (registration, admins, set-up). */
export function credentialErrors(username: string, email: string, password: string): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (!NICKNAME_PATTERN.test(username)) add("nickname", "has invalid format");
  else if (RESERVED.has(username.toLowerCase())) add("nickname", "is reserved");
  if (!isEmailAddress(email)) add("email", "has invalid format");
  if (password.length < 8) add("password", "should be at least 8 character(s)");
  if (password.length > 256) add("password", "should be at most 256 character(s)");
  return errors;
}

export interface Registered {
  account: AccountRow;
  user: UserRow;
  token: IssuedToken | null;
  /** The clear confirmation token when one was mailed. */
  confirmationToken: string | null;
  /** Mail was queued in the registration's batch (the confirmation link, the admins' approval requests). */
  mailed: boolean;
}

/**
 * Registers a local account, as a row of named steps (each readable alone): the fields checked, names and invite
 * looked up, the rows made, the mail to send, and one batch that writes them.
 */
export async function register(
  d: DB,
  cfg: Config,
  base: string,
  app: AppRow | null,
  input: RegistrationInput,
): Promise<Registered> {
  const reason = checkFields(cfg, input);
  const t = now();
  const codes = await shortcodesIn([input.fullname ?? "", input.bio ?? ""]);
  const { invite, emojiRows, admins } = await lookUpTaken(d, cfg, input, codes);
  const inviteId = cfg.registrationsOpen ? null : useInvite(invite, t);

  const id = newId(t);
  // No signing key yet: `signingKey` makes one when something first signs (RSA generation costs 90–270 ms).
  const confirmationToken = cfg.activationRequired ? randomToken(24) : null;
  const account: AccountRow = {
    ...emptyAccount(id, input.username, t),
    ...localActorUrls(base, input.username),
    displayName: input.fullname ?? "",
    note: plainTextToHtml(input.bio ?? ""),
    emojis: profileEmojis(codes, emojiRows),
  };
  const user = newUserRow(cfg, input, id, t, { inviteId, reason, confirmationSent: confirmationToken !== null });
  const confirmationTokenHash = confirmationToken ? await sha256(confirmationToken) : null;
  const passwordHash = await hashPassword(input.password, cfg.passwordIterations);
  // A token for the app that registered it (none for the web page, which starts a browser session instead).
  const token =
    app && user.confirmed && !user.approvalPending
      ? await buildToken({ appId: app.id, accountId: id, scopes: app.scopes.split(" ") })
      : null;
  const mail = registrationMail(cfg, base, account, user, {
    confirmationToken,
    reason,
    admins: emailsOf(admins ?? []),
  });

  await insertRegistration(d, [
    d.insert(accounts).values(account),
    ...mail.map((m) => queueMail(d, cfg, base, m, t)),
    d.insert(users).values({ ...user, confirmationTokenHash }),
    d.insert(credentials).values({ accountId: id, passwordHash, privateKey: null }),
    ...(token ? [d.insert(tokens).values(token.row)] : []),
    ...(inviteId
      ? [
          d
            .update(invites)
            .set({ uses: sql`${invites.uses} + 1` })
            .where(eq(invites.id, inviteId)),
        ]
      : []),
  ]);
  return { account, user, token, confirmationToken, mailed: mail.length > 0 };
}

/** The checks that need no database (Pleroma's, then the instance's lengths and the reason); answers the reason. */
function checkFields(cfg: Config, input: RegistrationInput): string {
  const errors = credentialErrors(input.username, input.email, input.password);
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if ((input.fullname ?? "").length > cfg.maxNameLength)
    add("name", `should be at most ${cfg.maxNameLength} character(s)`);
  if ((input.bio ?? "").length > cfg.maxBioLength) add("bio", `should be at most ${cfg.maxBioLength} character(s)`);
  const reason = (input.reason ?? "").trim();
  if (cfg.approvalRequired && !reason) add("reason", "can't be blank");
  if (reason.length > cfg.registrationReasonLength)
    add("reason", `should be at most ${cfg.registrationReasonLength} character(s)`);
  if (Object.keys(errors).length) throw fieldErrors(errors);
  return reason;
}

/**
 * One round trip for what registering reads: fails when the nickname or address is taken; answers the invite the
 * token names, the profile's emoji, and the admins to tell (when approval is required).
 */
async function lookUpTaken(d: DB, cfg: Config, input: RegistrationInput, codes: string[]) {
  const [nickTaken, emailTaken, invite, emojiRows, admins] = await readsWhere(d, [
    d.select({ id: accounts.id }).from(accounts).where(eq(accounts.acctKey, input.username.toLowerCase())),
    d
      .select({ id: users.accountId })
      .from(users)
      .where(sql`lower(${users.email}) = ${input.email.toLowerCase()}`),
    d
      .select()
      .from(invites)
      .where(eq(invites.tokenHash, input.token ? await sha256(input.token) : "")),
    localEmojisNamed(d, codes),
    // Told of an account awaiting approval.
    cfg.approvalRequired ? adminEmailsQuery(d) : null,
  ]);
  const errors: Record<string, string[]> = {};
  if (nickTaken.length) errors.nickname = ["has already been taken"];
  if (emailTaken.length) errors.email = ["has already been taken"];
  if (Object.keys(errors).length) throw fieldErrors(errors);
  return { invite: invite[0], emojiRows, admins };
}

/** While registrations are closed, an invite is required: answers its id when it can still be used. */
function useInvite(inv: typeof invites.$inferSelect | undefined, t: number): string {
  if (!inv) throw badRequest("Invalid token");
  if (
    inv.revoked ||
    (inv.expiresAt !== null && inv.expiresAt < t) ||
    (inv.maxUses !== null && inv.uses >= inv.maxUses)
  ) {
    throw badRequest("Expired token");
  }
  return inv.id;
}

/** The new user's settings row: the instance's defaults, confirmed unless activation is required. */
function newUserRow(
  cfg: Config,
  input: RegistrationInput,
  id: string,
  t: number,
  how: { inviteId: string | null; reason: string; confirmationSent: boolean },
): UserRow {
  return {
    accountId: id,
    email: input.email,
    confirmed: !cfg.activationRequired,
    confirmationSentAt: how.confirmationSent ? t : null,
    locale: input.language || input.locale || "en",
    defaultScope: "public",
    quotePolicy: "public",
    sensitive: false,
    postingLanguage: null,
    noteSource: input.bio ?? "",
    fieldsSource: [],
    noRichText: false,
    showRole: true,
    skipThreadContainment: false,
    allowFollowingMove: true,
    isAdmin: false,
    isModerator: false,
    settingsStore: {},
    notificationSettings: { block_from_strangers: false, hide_notification_contents: false },
    inviteId: how.inviteId,
    mascot: null,
    approvalPending: cfg.approvalRequired,
    registrationReason: how.reason || null,
    lastActiveAt: t,
    createdAt: t,
  };
}

/** The mail a registration sends: the confirmation link, and each admin's approval request. */
function registrationMail(
  cfg: Config,
  base: string,
  account: AccountRow,
  user: UserRow,
  { confirmationToken, reason, admins }: { confirmationToken: string | null; reason: string; admins: string[] },
) {
  const mail = confirmationToken ? [confirmationMail(cfg, base, account, user.email, confirmationToken)] : [];
  if (user.approvalPending)
    for (const to of admins) mail.push(approvalRequestMail(cfg, base, account, user.email, reason, to));
  return mail;
}

/** Writes the registration in one batch, answering a lost race (for the name, the address, the invite) as a 400. */
async function insertRegistration(d: DB, batch: Parameters<DB["batch"]>[0]): Promise<void> {
  try {
    await d.batch(batch);
  } catch (e) {
    // Racing registrations on one invite: its `invites_max_uses` trigger aborts the batch that would overuse it.
    if (String(e).includes("invite_exhausted")) throw badRequest("Expired token");
    // Two registrations racing for one name: the unique index decides.
    if (String(e).includes("UNIQUE")) {
      throw fieldErrors(
        String(e).includes("email") ? { email: ["has already been taken"] } : { nickname: ["has already been taken"] },
      );
    }
    throw e;
  }
}

// ---- approval ----

/** The e-mail addresses of active admins (told about accounts awaiting approval). */
export async function adminEmails(d: DB): Promise<string[]> {
  return emailsOf(await adminEmailsQuery(d));
}

/** `adminEmails` as a query, for a batch of reads (`emailsOf` its rows). */
export function adminEmailsQuery(d: DB) {
  return d
    .select({ email: users.email })
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(and(eq(users.isAdmin, true), eq(accounts.deactivated, false)))
    .limit(20);
}

export const emailsOf = (rows: { email: string }[]) => rows.map((r) => r.email).filter(Boolean);

/**
 * Approves local users awaiting approval (for the admin API's `PATCH /admin/users/approve`, ADMIN's lane): a
 * statement to put in the action's own batch with its moderation log entry (`approve`). Answers the ids' rows
 * it changed when run (RETURNING account_id).
 */
export function approveUsers(d: DB, accountIds: string[]): D1PreparedStatement {
  return statement(
    d,
    sql`UPDATE users SET approval_pending = 0
      WHERE approval_pending = 1 AND account_id IN (SELECT value FROM json_each(${JSON.stringify(accountIds)}))
      RETURNING account_id`,
  );
}
