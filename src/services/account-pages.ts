/** Pages through relation tables (accounts related to one account, marked statuses, blocked domains), paged by the relation's own row id. */
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import {
  accounts,
  blocks,
  bookmarks,
  domainBlocks,
  endorsements,
  favourites,
  followRequests,
  follows,
  listAccounts,
  mutes,
  statuses,
  subscriptions,
  userColumns,
  users,
} from "../db/schema";
import { notSilenced, visibleTo } from "./visibility";
import { pageQuery, inOrder, seqPage, type Page } from "../db/paging";
import type { AccountWithUser } from "./accounts";

type PairTable =
  typeof follows | typeof followRequests | typeof blocks | typeof mutes | typeof endorsements | typeof subscriptions;

export interface PagedAccount extends AccountWithUser {
  /** The relation row's id: the Link header cursor. */
  cursor: string;
  /** The relation row, for extras such as a mute's expiry. */
  relation: Record<string, unknown>;
}

/**
 * Accounts on the `show` side of `table` whose `by` side is `ownerId` (`by: "targetAccountId", show:
 * "accountId"` on follows are the followers). Deactivated accounts are left out.
 */
export async function relatedAccounts(
  d: DB,
  table: PairTable,
  by: "accountId" | "targetAccountId",
  ownerId: string,
  page: Page,
  extra?: SQL,
): Promise<PagedAccount[]> {
  const show = by === "accountId" ? table.targetAccountId : table.accountId;
  const q = pageQuery(table.id, page);
  const rows = await d
    .select({ relation: table, account: accounts, user: userColumns })
    .from(table as typeof follows)
    .innerJoin(accounts, eq(accounts.id, show))
    .leftJoin(users, eq(users.accountId, accounts.id))
    .where(and(eq(table[by], ownerId), eq(accounts.deactivated, false), q.where, extra))
    .orderBy(q.orderBy)
    .limit(q.limit);
  return inOrder(rows, q).map((r) => ({
    cursor: r.relation.id,
    relation: r.relation,
    account: r.account,
    user: r.user,
  }));
}

/** How many of an account's newest followers `familiarFollowers` looks at: its cost stays fixed however many it has. */
export const FAMILIAR_FOLLOWERS_SCANNED = 200;

/**
 * Mastodon's familiar followers (3.5; Phanpy asks on every profile card): accounts the viewer follows that follow
 * `target`, at most `limit`, among the target's newest `FAMILIAR_FOLLOWERS_SCANNED` followers. Nobody when the
 * target hides its followers from others.
 */
export async function familiarFollowers(d: DB, viewerId: string, ids: string[], limit = 5) {
  const found = ids.length
    ? await d
        .select({ id: accounts.id, hideFollowers: accounts.hideFollowers })
        .from(accounts)
        .where(inArray(accounts.id, ids))
    : [];
  const answer = new Map<string, PagedAccount[]>();
  for (const target of found) answer.set(target.id, await familiarOf(d, viewerId, target, limit));
  return answer;
}

async function familiarOf(d: DB, viewerId: string, target: { id: string; hideFollowers: boolean }, limit: number) {
  if (target.hideFollowers && target.id !== viewerId) return [];
  const newest = sql`${follows.id} IN (SELECT id FROM follows WHERE target_account_id = ${target.id} ORDER BY id DESC LIMIT ${FAMILIAR_FOLLOWERS_SCANNED})`;
  const known = sql`EXISTS (SELECT 1 FROM follows mine WHERE mine.account_id = ${viewerId} AND mine.target_account_id = ${follows.accountId})`;
  return relatedAccounts(d, follows, "targetAccountId", target.id, { limit }, and(newest, known));
}

/** Members of a list, paged by membership row; `limit: null` gives all of them. */
export async function listMembers(d: DB, listId: string, page: Page | null): Promise<PagedAccount[]> {
  const q = page ? pageQuery(listAccounts.id, page) : null;
  const base = d
    .select({ relation: listAccounts, account: accounts, user: userColumns })
    .from(listAccounts)
    .innerJoin(accounts, eq(accounts.id, listAccounts.accountId))
    .leftJoin(users, eq(users.accountId, accounts.id))
    .where(and(eq(listAccounts.listId, listId), eq(accounts.deactivated, false), q?.where));
  const rows = q ? inOrder(await base.orderBy(q.orderBy).limit(q.limit), q) : await base.orderBy(listAccounts.id);
  return rows.map((r) => ({ cursor: r.relation.id, relation: r.relation, account: r.account, user: r.user }));
}

/**
 * Accounts that reblogged or favourited a status, paged by the reblog's or favourite's id, without accounts
 * the viewer blocks or mutes.
 */
export async function relatedStatusAccounts(
  d: DB,
  kind: "reblogs" | "favourites",
  statusId: string,
  viewerId: string | null,
  page: Page,
): Promise<PagedAccount[]> {
  const rel =
    kind === "reblogs"
      ? { id: statuses.id, account: statuses.accountId, status: statuses.reblogOfId }
      : { id: favourites.id, account: favourites.accountId, status: favourites.statusId };
  const table = kind === "reblogs" ? statuses : favourites;
  const q = pageQuery(rel.id, page);
  const rows = await d
    .select({ cursor: rel.id, account: accounts, user: userColumns })
    .from(table as typeof favourites)
    .innerJoin(accounts, eq(accounts.id, rel.account))
    .leftJoin(users, eq(users.accountId, accounts.id))
    .where(
      and(
        eq(rel.status, statusId),
        eq(accounts.deactivated, false),
        notSilenced(viewerId, false, rel.account),
        q.where,
      ),
    )
    .orderBy(q.orderBy)
    .limit(q.limit);
  return inOrder(rows, q).map((r) => ({ cursor: r.cursor, relation: {}, account: r.account, user: r.user }));
}

/**
 * The statuses an account favourited or bookmarked that the viewer may see, newest mark first, paged by the
 * mark's id (Link-only): the cursors and the status ids.
 */
export async function markedStatuses(
  d: DB,
  table: typeof favourites | typeof bookmarks,
  ownerId: string,
  viewerId: string | null,
  page: Page,
): Promise<{ cursor: string; statusId: string }[]> {
  // Bookmarks have sequence ids (Pleroma-FE reads their Link cursors as numbers).
  const q = pageQuery(table.id, table === bookmarks ? seqPage(page) : page);
  return inOrder(
    await d
      .select({ cursor: table.id, statusId: table.statusId })
      .from(table as typeof favourites)
      .innerJoin(statuses, eq(statuses.id, table.statusId))
      .where(and(eq(table.accountId, ownerId), q.where, visibleTo(viewerId)))
      .orderBy(q.orderBy)
      .limit(q.limit),
    q,
  );
}

/** The domains the user blocks, newest first, paged by the block's id (Link-only). */
export async function blockedDomains(d: DB, ownerId: string, page: Page): Promise<{ id: string; domain: string }[]> {
  const q = pageQuery(domainBlocks.id, page);
  return inOrder(
    await d
      .select({ id: domainBlocks.id, domain: domainBlocks.domain })
      .from(domainBlocks)
      .where(and(eq(domainBlocks.accountId, ownerId), q.where))
      .orderBy(q.orderBy)
      .limit(q.limit),
    q,
  );
}
