/**
 * The admin API's rules about users (Pleroma 2.5's `AdminAPI.UserController`): listing with filters, and the
 * bulk actions on `nicknames[]`, each written with its moderation-log entry in ONE batch.
 */
import type { Effects } from "./effects";
import { accountDeletionStatements } from "./account-deletion";
import { disableMfaStatements } from "./mfa";
import { changeEmail, forcePasswordReset, newPasswordError, setPassword } from "./passwords";
import { mergeEffects } from "./effects";
import { confirmationMail } from "./registration-mail";
import { updateCredentials } from "./update-credentials";
import { queueMail } from "./mail-queue";
import type { Config } from "../env";
import { and, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { mixedBatch, now, statement } from "../db/client";
import { newId } from "../db/ids";
import { inOrder, pageQuery, type Page } from "../db/paging";
import { accounts, credentials, users } from "../db/schema";
import { badRequest, forbidden, notFound } from "../lib/errors";
import { hashPassword, randomToken, sha256 } from "../lib/crypto";
import {
  emptyAccount,
  localActorUrls,
  withUser,
  type AccountRow,
  type AccountWithUser,
  type UserRow,
} from "./accounts";
import { approveUsers as approvePending, credentialErrors } from "./registration";
import { logEntry, userRef, type Actor } from "./moderation-log";

const nicknameList = (rows: { account: AccountRow }[]) => rows.map((r) => `@${userRef(r.account).nickname}`).join(", ");

// ---- listing ----

export const USER_FILTERS = [
  "local",
  "external",
  "active",
  "deactivated",
  "need_approval",
  "unconfirmed",
  "is_admin",
  "is_moderator",
] as const;
export type UserFilter = (typeof USER_FILTERS)[number];

export interface UserQuery {
  filters: Set<UserFilter>;
  query?: string;
  name?: string;
  email?: string;
  /** Mastodon's `username` and `by_domain`: parts of the nickname and of the domain. */
  username?: string;
  domain?: string;
  tags: string[];
  actorTypes: string[];
}

const like = (s: string) => `%${s.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

function userConditions(q: UserQuery): SQL | undefined {
  const where: SQL[] = [];
  const f = q.filters;
  if (f.has("local")) where.push(sql`${accounts.domain} IS NULL`);
  if (f.has("external")) where.push(sql`${accounts.domain} IS NOT NULL`);
  if (f.has("active")) where.push(sql`${accounts.deactivated} = 0`);
  if (f.has("deactivated")) where.push(sql`${accounts.deactivated} = 1`);
  if (f.has("need_approval")) where.push(sql`${users.approvalPending} = 1`);
  if (f.has("unconfirmed")) where.push(sql`${users.confirmed} = 0`);
  if (f.has("is_admin") && f.has("is_moderator")) where.push(sql`(${users.isAdmin} = 1 OR ${users.isModerator} = 1)`);
  else if (f.has("is_admin")) where.push(sql`${users.isAdmin} = 1`);
  else if (f.has("is_moderator")) where.push(sql`${users.isModerator} = 1`);
  if (q.query) {
    const p = like(q.query);
    where.push(
      sql`(${accounts.acctKey} LIKE ${p} ESCAPE '\\' OR lower(${accounts.displayName}) LIKE ${p} ESCAPE '\\' OR lower(${users.email}) LIKE ${p} ESCAPE '\\')`,
    );
  }
  if (q.name) where.push(sql`lower(${accounts.displayName}) LIKE ${like(q.name)} ESCAPE '\\'`);
  if (q.email) where.push(sql`lower(${users.email}) LIKE ${like(q.email)} ESCAPE '\\'`);
  if (q.username) where.push(sql`lower(${accounts.username}) LIKE ${like(q.username)} ESCAPE '\\'`);
  if (q.domain) where.push(sql`lower(${accounts.domain}) LIKE ${like(q.domain)} ESCAPE '\\'`);
  if (q.tags.length)
    where.push(
      sql`EXISTS (SELECT 1 FROM json_each(${accounts.tags}) t WHERE t.value IN (SELECT value FROM json_each(${JSON.stringify(q.tags)})))`,
    );
  if (q.actorTypes.length)
    where.push(sql`${accounts.actorType} IN (SELECT value FROM json_each(${JSON.stringify(q.actorTypes)}))`);
  return where.length ? and(...where) : undefined;
}

/** Pleroma's pages (`page`, `page_size`) with the total. */
export async function listUsers(
  d: DB,
  q: UserQuery & { page: number; pageSize: number },
): Promise<{ rows: AccountWithUser[]; count: number }> {
  const cond = userConditions(q);
  const [rows, [total]] = await d.batch([
    withUser(d)
      .where(cond)
      .orderBy(desc(accounts.id))
      .limit(q.pageSize)
      .offset((q.page - 1) * q.pageSize),
    d
      .select({ n: sql<number>`count(*)` })
      .from(accounts)
      .leftJoin(users, eq(users.accountId, accounts.id))
      .where(cond),
  ]);
  return { rows, count: total?.n ?? 0 };
}

/** Mastodon's admin pages (`max_id`, `min_id`, … over the account id, newest first), the same filters. */
export async function pageUsers(d: DB, q: UserQuery, page: Page): Promise<AccountWithUser[]> {
  const pq = pageQuery(accounts.id, page);
  const rows = await withUser(d)
    .where(and(userConditions(q), pq.where))
    .orderBy(pq.orderBy)
    .limit(pq.limit);
  return inOrder(rows, pq);
}

// ---- finding the subjects of an action ----

/** Accounts by nickname (`bob`, `bob@remote.example`) or id, as Pleroma's `User.get_cached_by_nickname_or_id`. */
export async function accountsByNicknames(d: DB, nicknames: string[], localHost: string): Promise<AccountWithUser[]> {
  const keys = nicknames.map((n) => {
    const [user, domain] = n.trim().replace(/^@/, "").split("@");
    return (!domain || domain.toLowerCase() === localHost.toLowerCase() ? user! : `${user}@${domain}`).toLowerCase();
  });
  if (keys.length === 0) return [];
  return withUser(d).where(
    sql`${accounts.acctKey} IN (SELECT value FROM json_each(${JSON.stringify(keys)})) OR ${accounts.id} IN (SELECT value FROM json_each(${JSON.stringify(nicknames)}))`,
  );
}

// ---- actions ----

/** Activates or deactivates accounts (local or remote). Returns the accounts as they are now. */
export async function setActive(
  d: DB,
  actor: Actor,
  found: AccountWithUser[],
  active: boolean,
): Promise<AccountWithUser[]> {
  if (found.length === 0) return [];
  const t = now();
  const ids = found.map((f) => f.account.id);
  const action = active ? "activate" : "deactivate";
  await mixedBatch(d, [
    d.update(accounts).set({ deactivated: !active, updatedAt: t }).where(inArray(accounts.id, ids)),
    logEntry(
      d,
      actor,
      action,
      { subject: found.map((f) => userRef(f.account)) },
      `@${actor.username} ${action}d users: ${nicknameList(found)}`,
      t,
    ),
  ]);
  return found.map((f) => ({ ...f, account: { ...f.account, deactivated: !active } }));
}

/**
 * Deleting users (logged): a local user's account goes through the full deletion job (`accountDeletionStatements`,
 * the same as `delete_account`: hidden at once, emptied by the cron, its actor's Delete federated); a remote
 * account is only deactivated here (its server owns it). Answers the nicknames, and the kick for the Deletes.
 */
export async function deleteUsers(
  d: DB,
  actor: Actor,
  found: AccountWithUser[],
): Promise<{ nicknames: string[]; effects: Effects }> {
  if (found.length === 0) return { nicknames: [], effects: {} };
  const t = now();
  // Local users are deleted for real by the background job (their actor Delete federated); remote accounts are
  // only deactivated here (their server owns them).
  const local = found.filter((f) => f.user);
  const remote = found.filter((f) => !f.user);
  await mixedBatch(d, [
    ...local.flatMap((f) => accountDeletionStatements(d, f.account.id, t, actor.id)),
    ...(remote.length
      ? [
          d
            .update(accounts)
            .set({ deactivated: true, updatedAt: t })
            .where(
              inArray(
                accounts.id,
                remote.map((f) => f.account.id),
              ),
            ),
        ]
      : []),
    logEntry(
      d,
      actor,
      "delete",
      { subject: found.map((f) => userRef(f.account)) },
      `@${actor.username} deleted users: ${nicknameList(found)}`,
      t,
    ),
  ]);
  return { nicknames: found.map((f) => userRef(f.account).nickname), effects: {} };
}

/** Approves pending registrations (services/registration.ts), logged in the same batch. */
export async function approveUsers(d: DB, actor: Actor, found: AccountWithUser[]): Promise<AccountWithUser[]> {
  const local = found.filter((f) => f.user);
  if (local.length === 0) return [];
  const t = now();
  await mixedBatch(d, [
    approvePending(
      d,
      local.map((f) => f.account.id),
    ),
    logEntry(
      d,
      actor,
      "approve",
      { subject: local.map((f) => userRef(f.account)) },
      `@${actor.username} approved users: ${nicknameList(local)}`,
      t,
    ),
  ]);
  // As they are now (Pleroma answers the approved users), not as they were read.
  return local.map((f) => ({ ...f, user: { ...f.user!, approvalPending: false } }));
}

export async function confirmEmails(d: DB, actor: Actor, found: AccountWithUser[]): Promise<void> {
  const local = found.filter((f) => f.user);
  if (local.length === 0) return;
  const t = now();
  await mixedBatch(d, [
    d
      .update(users)
      .set({ confirmed: true, confirmationTokenHash: null })
      .where(
        inArray(
          users.accountId,
          local.map((f) => f.account.id),
        ),
      ),
    logEntry(
      d,
      actor,
      "confirm_email",
      { subject: local.map((f) => userRef(f.account)) },
      `@${actor.username} confirmed email for users: ${nicknameList(local)}`,
      t,
    ),
  ]);
}

/** Fresh confirmation tokens for the unconfirmed among them, written with the log entry; the caller mails them. */
export async function renewConfirmations(
  d: DB,
  cfg: Config,
  base: string,
  actor: Actor,
  found: AccountWithUser[],
): Promise<Effects> {
  const pending = await Promise.all(
    found
      .filter((f) => f.user && !f.user.confirmed)
      .map(async (f) => {
        const token = randomToken(24);
        return { found: f, token, hash: await sha256(token) };
      }),
  );
  const t = now();
  await mixedBatch(d, [
    ...pending.map((p) =>
      d
        .update(users)
        .set({ confirmationTokenHash: p.hash, confirmationSentAt: t })
        .where(eq(users.accountId, p.found.account.id)),
    ),
    ...pending.map((p) =>
      queueMail(d, cfg, base, confirmationMail(cfg, base, p.found.account, p.found.user!.email, p.token), t),
    ),
    logEntry(
      d,
      actor,
      "resend_confirmation_email",
      { subject: found.map((f) => userRef(f.account)) },
      `@${actor.username} re-sent confirmation email for users: ${nicknameList(found)}`,
      t,
    ),
  ]);
  return { mail: pending.length > 0 };
}

export async function tagUsers(
  d: DB,
  actor: Actor,
  found: AccountWithUser[],
  tags: string[],
  add: boolean,
): Promise<void> {
  if (found.length === 0 || tags.length === 0) return;
  const t = now();
  const ids = JSON.stringify(found.map((f) => f.account.id));
  const list = JSON.stringify(tags);
  const nicknames = found.map((f) => userRef(f.account).nickname);
  const set = add
    ? sql`(SELECT json_group_array(value) FROM (SELECT value FROM json_each(accounts.tags) UNION SELECT value FROM json_each(${list})))`
    : sql`(SELECT json_group_array(value) FROM (SELECT value FROM json_each(accounts.tags) WHERE value NOT IN (SELECT value FROM json_each(${list}))))`;
  const message = add
    ? `@${actor.username} added tags: ${tags.join(", ")} to users: ${nicknames.map((n) => `@${n}`).join(", ")}`
    : `@${actor.username} removed tags: ${tags.join(", ")} from users: ${nicknames.map((n) => `@${n}`).join(", ")}`;
  await mixedBatch(d, [
    statement(d, sql`UPDATE accounts SET tags = ${set} WHERE id IN (SELECT value FROM json_each(${ids}))`),
    logEntry(d, actor, add ? "tag" : "untag", { nicknames, tags }, message, t),
  ]);
}

/** Grants or revokes a role to local users (`POST/DELETE /users/permission_group/:group`). */
export async function setRole(
  d: DB,
  actor: Actor,
  found: AccountWithUser[],
  group: string,
  on: boolean,
): Promise<void> {
  if (group !== "admin" && group !== "moderator") throw badRequest("No such permission_group");
  if (!on && group === "admin" && found.some((f) => f.account.id === actor.id))
    throw forbidden("You can't revoke your own admin status.");
  const local = found.filter((f) => f.user);
  if (local.length === 0) throw notFound();
  const t = now();
  const column = group === "admin" ? { isAdmin: on } : { isModerator: on };
  await mixedBatch(d, [
    d
      .update(users)
      .set(column)
      .where(
        inArray(
          users.accountId,
          local.map((f) => f.account.id),
        ),
      ),
    logEntry(
      d,
      actor,
      on ? "grant" : "revoke",
      { subject: local.map((f) => userRef(f.account)), permission: group },
      on
        ? `@${actor.username} made ${nicknameList(local)} ${group}`
        : `@${actor.username} revoked ${group} role from ${nicknameList(local)}`,
      t,
    ),
  ]);
}

export interface NewUser {
  nickname: string;
  email: string;
  password: string;
}

export type CreateResult =
  | { type: "success"; code: 200; data: { nickname: string; email: string } }
  | { type: "error"; code: 409; error: Record<string, string[]>; data: { nickname: string; email: string } };

/**
 * Creates local users, confirmed (`POST /users`). As Pleroma, all or nothing: any invalid or taken nickname or
 * e-mail answers every item with its errors and creates none.
 */
export async function createUsers(
  d: DB,
  actor: Actor,
  base: string,
  input: NewUser[],
  iterations: number,
): Promise<{ ok: boolean; results: CreateResult[] }> {
  const t = now();
  const [nickRows, emailRows] = await d.batch([
    d
      .select({ key: accounts.acctKey })
      .from(accounts)
      .where(
        sql`${accounts.acctKey} IN (SELECT value FROM json_each(${JSON.stringify(input.map((u) => u.nickname.toLowerCase()))}))`,
      ),
    d
      .select({ email: sql<string>`lower(${users.email})` })
      .from(users)
      .where(
        sql`lower(${users.email}) IN (SELECT value FROM json_each(${JSON.stringify(input.map((u) => u.email.toLowerCase()))}))`,
      ),
  ]);
  const takenNick = new Set(nickRows.map((r) => r.key));
  const takenEmail = new Set(emailRows.map((r) => r.email));
  const seenNick = new Set<string>();
  const seenEmail = new Set<string>();
  let ok = true;
  const results: CreateResult[] = input.map((u) => {
    const errors = credentialErrors(u.nickname, u.email, u.password);
    const add = (k: string, m: string) => (errors[k] ??= []).push(m);
    const nick = u.nickname.toLowerCase();
    const mail = u.email.toLowerCase();
    if (!errors.nickname && (takenNick.has(nick) || seenNick.has(nick))) add("nickname", "has already been taken");
    if (!errors.email && (takenEmail.has(mail) || seenEmail.has(mail))) add("email", "has already been taken");
    seenNick.add(nick);
    seenEmail.add(mail);
    const data = { nickname: u.nickname, email: u.email };
    if (Object.keys(errors).length) {
      ok = false;
      return { type: "error", code: 409, error: errors, data };
    }
    return { type: "success", code: 200, data };
  });
  if (!ok) return { ok, results };
  const rows = await Promise.all(
    input.map(async (u) => {
      const id = newId(t);
      const account: AccountRow = { ...emptyAccount(id, u.nickname, t), ...localActorUrls(base, u.nickname) };
      return { account, email: u.email, hash: await hashPassword(u.password, iterations) };
    }),
  );
  try {
    await mixedBatch(d, [
      ...rows.flatMap((r) => [
        d.insert(accounts).values(r.account),
        d
          .insert(users)
          .values({ accountId: r.account.id, email: r.email, confirmed: true, lastActiveAt: t, createdAt: t }),
        d.insert(credentials).values({ accountId: r.account.id, passwordHash: r.hash, privateKey: null }),
      ]),
      logEntry(
        d,
        actor,
        "create",
        { subjects: rows.map((r) => userRef(r.account)) },
        `@${actor.username} created users: ${rows.map((r) => `@${r.account.username}`).join(", ")}`,
        t,
      ),
    ]);
  } catch (e) {
    // Raced by a registration taking the same name or address.
    if (String(e).includes("UNIQUE"))
      return {
        ok: false,
        results: results.map((r) => ({
          type: "error",
          code: 409,
          error: { nickname: ["has already been taken"] },
          data: r.data,
        })),
      };
    throw e;
  }
  return { ok, results };
}

/** Pleroma's `force_password_reset`: sign-in refused until the user resets the password; their sessions end. */
export async function forcePasswordResets(d: DB, actor: Actor, found: AccountWithUser[]): Promise<void> {
  const local = found.filter((f) => f.user);
  if (local.length === 0) return;
  const t = now();
  await mixedBatch(d, [
    ...local.flatMap((f) => forcePasswordReset(d, f.account.id)),
    logEntry(
      d,
      actor,
      "force_password_reset",
      { subject: local.map((f) => userRef(f.account)) },
      `@${actor.username} forced password reset for users: ${nicknameList(local)}`,
      t,
    ),
  ]);
}

/** Turns off a user's second factor (a lost phone), logged in the same batch. */
export async function disableUserMfa(d: DB, actor: Actor, found: AccountWithUser): Promise<void> {
  const t = now();
  await mixedBatch(d, [
    ...disableMfaStatements(d, found.account.id),
    logEntry(
      d,
      actor,
      "disable_mfa",
      { subject: [userRef(found.account)] },
      `@${actor.username} disabled two-factor authentication for @${userRef(found.account).nickname}`,
      t,
    ),
  ]);
}

export interface CredentialsChange {
  email?: string;
  password?: string;
  actor_type?: "Person" | "Service" | "Group" | "Application";
}

/**
 * Pleroma's `update_user_credentials` for the fields admin-fe's security dialog and actor-type menu send: a new
 * e-mail (re-confirmed when the instance requires it), a new password (every session ends and, as Pleroma does,
 * the user must still reset it by e-mail: an admin never knows a password that works), the actor type (federated
 * as the user's own profile change is). Each is checked before any is written; each logged.
 */
export async function updateCredentialsAsAdmin(
  d: DB,
  cfg: Config,
  media: { bucket: R2Bucket; images?: ImagesBinding },
  base: string,
  actor: Actor,
  found: { account: AccountRow; user: UserRow },
  change: CredentialsChange,
): Promise<Effects> {
  const refuse = (field: string, message: string) => badRequest(message, { errors: { [field]: message } });
  if (change.password !== undefined) {
    const problem = newPasswordError(change.password, change.password);
    if (problem) throw refuse("password", problem);
  }
  const effects: Effects[] = [];
  if (change.email !== undefined && change.email !== found.user.email) {
    const changed = await changeEmail(d, cfg, base, found.account, change.email);
    if ("error" in changed) throw refuse("email", changed.error);
    effects.push(changed.effects);
  }
  if (change.actor_type !== undefined && change.actor_type !== found.account.actorType)
    effects.push((await updateCredentials(d, cfg, media, found, { actor_type: change.actor_type })).effects);
  if (change.password !== undefined)
    await setPassword(d, found.account.id, change.password, null, cfg.passwordIterations);
  const changed =
    (change.email !== undefined && change.email !== found.user.email) ||
    (change.actor_type !== undefined && change.actor_type !== found.account.actorType) ||
    change.password !== undefined;
  if (!changed) return {};
  const t = now();
  const subject = { subject: [userRef(found.account)] };
  await mixedBatch(d, [
    logEntry(d, actor, "updated_users", subject, `@${actor.username} updated users: @${found.account.username}`, t),
    ...(change.password !== undefined
      ? [
          ...forcePasswordReset(d, found.account.id),
          logEntry(
            d,
            actor,
            "force_password_reset",
            subject,
            `@${actor.username} forced password reset for users: @${found.account.username}`,
            t,
          ),
        ]
      : []),
  ]);
  return mergeEffects(...effects);
}
