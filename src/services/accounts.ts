/**
 * Accounts and local users: the rows (`AccountRow`, `UserRow`, a new local account's defaults), their ActivityPub
 * ids, the look-ups by id, nickname or login, and the owner's counters. Registering is registration.ts, its mails
 * registration-mail.ts, the directory directory.ts, a user's own changes update-credentials.ts.
 */
import { and, count, eq, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { isId } from "../db/ids";
import { accounts, followRequests, notifications, participations, userColumns, users } from "../db/schema";
import { notFound } from "../lib/errors";
import type { AppRow } from "./apps";

export type AccountRow = typeof accounts.$inferSelect;
/** A user as code outside login and signing sees it: the `userColumns` allowlist, no secrets. */
export type UserRow = { [K in keyof typeof userColumns]: (typeof users.$inferSelect)[K] };
export type { AppRow };

/** An account with its local user row, when it has one. */
export interface AccountWithUser {
  account: AccountRow;
  user: UserRow | null;
}

/** Actor URLs of a local account. */
export function localActorUrls(base: string, username: string) {
  const uri = `${base}/users/${username}`;
  return {
    uri,
    url: uri,
    inboxUrl: `${uri}/inbox`,
    outboxUrl: `${uri}/outbox`,
    followersUrl: `${uri}/followers`,
    sharedInboxUrl: `${base}/inbox`,
  };
}

/** What a local activity row stands for: Follow (follows and follow requests), Block, Like, EmojiReact. */
export type ActivityKind = "follows" | "blocks" | "likes" | "reactions";

/**
 * The ActivityPub id of a local account's activity, stored in the row's `uri` in the batch that writes it:
 * `<actor uri>#<kind>/<row id>` (as Mastodon names likes and blocks). The actor's uri was made from the
 * instance's base URL (`localActorUrls`, given `baseUrl`), so the activity lives where its actor does, and
 * migration 0012 could backfill existing rows in SQL with the same form. Reblogs are statuses with their own uri.
 */
export function localActivityUri(actor: { uri: string }, kind: ActivityKind, rowId: string): string {
  return `${actor.uri}#${kind}/${rowId}`;
}

/** Accounts with their local user (null for remote accounts), the one select every look-up starts from. */
export const withUser = (d: DB) =>
  d.select({ account: accounts, user: userColumns }).from(accounts).leftJoin(users, eq(users.accountId, accounts.id));

/** The condition for a local user by nickname or e-mail address (case-insensitive); each form has its own index. */
export function loginMatches(login: string) {
  const key = login.trim().toLowerCase();
  return key.includes("@") ? sql`lower(${users.email}) = ${key}` : eq(accounts.acctKey, key);
}

/** A local user by nickname or e-mail address (case-insensitive). */
export async function findLocalByLogin(d: DB, login: string) {
  const row = await withUser(d).where(loginMatches(login)).get();
  return row && row.user ? { account: row.account, user: row.user } : null;
}

/** An account by id, or by nickname (`alice`, `alice@remote.example`; `alice@<this host>` is local). */
export async function findAccount(d: DB, idOrNickname: string, localHost: string): Promise<AccountWithUser | null> {
  if (isId(idOrNickname)) {
    return (await withUser(d).where(eq(accounts.id, idOrNickname)).get()) ?? null;
  }
  return findByAcct(d, idOrNickname, localHost);
}

/** An account by nickname only (`alice`, `@alice`, `alice@remote.example`; `alice@<this host>` is local). */
export async function findByAcct(d: DB, acct: string, localHost: string): Promise<AccountWithUser | null> {
  const key = acctKeyOf(acct, localHost);
  if (key === null) return null;
  return (await withUser(d).where(eq(accounts.acctKey, key)).get()) ?? null;
}

/** The `acct_key` a nickname is stored under (null: no nickname). */
function acctKeyOf(acct: string, localHost: string): string | null {
  const [username, domain] = acct.trim().replace(/^@/, "").split("@");
  if (!username) return null;
  const local = !domain || domain.toLowerCase() === localHost.toLowerCase();
  return local ? username.toLowerCase() : `${username}@${domain}`.toLowerCase();
}

/** `findAccount`'s match as a condition on `accounts` (unaliased), for statements that read the account alongside. */
export function accountMatch(idOrNickname: string, localHost: string): SQL {
  if (isId(idOrNickname)) return sql`${accounts.id} = ${idOrNickname}`;
  const key = acctKeyOf(idOrNickname, localHost);
  return key === null ? sql`0` : sql`${accounts.acctKey} = ${key}`;
}

/** A local account row with defaults; callers fill in what they know. */
export function emptyAccount(id: string, username: string, t: number): AccountRow {
  return {
    id,
    username,
    domain: null,
    displayName: "",
    note: "",
    avatar: null,
    header: null,
    background: null,
    locked: false,
    actorType: "Person",
    discoverable: false,
    fields: [],
    emojis: [],
    alsoKnownAs: [],
    tags: [],
    uri: "",
    url: "",
    inboxUrl: null,
    sharedInboxUrl: null,
    outboxUrl: null,
    followersUrl: null,
    publicKey: null,
    followersCount: 0,
    followingCount: 0,
    statusesCount: 0,
    lastStatusAt: null,
    movedToAccountId: null,
    hideFollowers: false,
    hideFollows: false,
    hideFollowersCount: false,
    hideFollowsCount: false,
    hideFavorites: true,
    acceptsChatMessages: true,
    favicon: null,
    deactivated: false,
    createdAt: t,
    updatedAt: t,
    fetchedAt: null,
    homePull: false,
    acctKey: username.toLowerCase(),
  };
}

/** The owner's counters shown on their own account: pending follow requests, unread conversations and notifications (one batch). */
export async function ownerCounters(d: DB, accountId: string) {
  const [requests, unread, unseen] = await d.batch([
    d.select({ n: count() }).from(followRequests).where(eq(followRequests.targetAccountId, accountId)),
    d
      .select({ n: count() })
      .from(participations)
      .where(and(eq(participations.accountId, accountId), eq(participations.unread, true))),
    d
      .select({ n: count() })
      .from(notifications)
      .where(and(eq(notifications.accountId, accountId), eq(notifications.isSeen, false))),
  ]);
  return {
    followRequestsCount: requests[0]?.n ?? 0,
    unreadConversationCount: unread[0]?.n ?? 0,
    unreadNotificationsCount: unseen[0]?.n ?? 0,
  };
}

/**
 * The account a request names by id to act on or show (Pleroma's nested paths take ids only): 404 "Can't find
 * user" for an unknown or deactivated one.
 */
export async function accountToActOn(d: DB, id: string, localHost: string): Promise<AccountWithUser> {
  const found = isId(id) ? await findAccount(d, id, localHost) : null;
  if (!found || found.account.deactivated) throw notFound("Can't find user");
  return found;
}
