/**
 * The graph's rows as both ways in write them: a local account's action (services/graph.ts) and a remote
 * actor's activity (inbound-follows.ts, inbound-blocks.ts). Each rule is written here once: the follow row, the
 * id of the Follow a withdrawal names, what a block ends, the counts and events a follow change reports.
 */
import { and, eq, or, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { inJson } from "../db/client";
import { newId } from "../db/ids";
import { accounts, endorsements, followRequests, follows, listAccounts, subscriptions } from "../db/schema";
import type { FollowCounts, StreamEvent } from "./events";

/**
 * The id of `followerId`'s Follow of `targetId`, as SQL read in the batch that ends it (before its rows go): the
 * follow's, else (unless `requests` is false) the pending request's; NULL when there is none, so no Undo or
 * Reject is written.
 */
export function followUri(followerId: string, targetId: string, requests = true): SQL {
  const follow = sql`(SELECT uri FROM follows WHERE account_id = ${followerId} AND target_account_id = ${targetId})`;
  if (!requests) return follow;
  return sql`coalesce(${follow}, (SELECT uri FROM follow_requests WHERE account_id = ${followerId} AND target_account_id = ${targetId}))`;
}

/**
 * A follow of `targetId` by `accountId` starts (its id `id`, its Follow's id `uri`: a request's when it was
 * one). A follow that exists already stays as it is, so `EXISTS (… WHERE id = ${id})` tells whether it is new.
 */
export const insertFollow = (
  d: DB,
  f: { id?: string; accountId: string; targetAccountId: string; showReblogs: boolean; uri: string | null },
  t: number,
) =>
  d
    .insert(follows)
    .values({
      id: f.id ?? newId(t),
      accountId: f.accountId,
      targetAccountId: f.targetAccountId,
      showReblogs: f.showReblogs,
      notify: false,
      createdAt: t,
      uri: f.uri,
    })
    .onConflictDoNothing();

/** Removes `member` from every list owned by `owner`. */
export const leaveLists = (d: DB, owner: string, member: string) =>
  d
    .delete(listAccounts)
    .where(
      and(
        eq(listAccounts.accountId, member),
        sql`${listAccounts.listId} IN (SELECT id FROM lists WHERE account_id = ${owner})`,
      ),
    );

/**
 * A block severs every tie between `a` and `b`, whoever blocks whom: follows and follow requests both ways,
 * subscriptions, endorsements, and each one's place in the other's lists. The statements go in the block's batch,
 * after those that read the rows they delete (the Undo and Reject of the follows).
 */
export function severTies(d: DB, a: string, b: string) {
  const pair = <T extends typeof follows | typeof followRequests | typeof subscriptions | typeof endorsements>(
    table: T,
  ) =>
    d
      .delete(table)
      .where(
        or(
          and(eq(table.accountId, a), eq(table.targetAccountId, b)),
          and(eq(table.accountId, b), eq(table.targetAccountId, a)),
        ),
      );
  return [
    pair(follows),
    pair(followRequests),
    pair(subscriptions),
    pair(endorsements),
    leaveLists(d, a, b),
    leaveLists(d, b, a),
  ];
}

/** Follower and following figures of the accounts a follow change touched (read back in its batch). */
export const countsOf = (d: DB, ids: string[]) =>
  d
    .select({ id: accounts.id, follower_count: accounts.followersCount, following_count: accounts.followingCount })
    .from(accounts)
    .where(inJson(accounts.id, ids));

/** `pleroma:follow_relationships_update` to each of `to`: the new state, with both accounts' figures. */
export function followEvent(
  state: "follow_pending" | "follow_accept" | "follow_reject",
  followerId: string,
  followingId: string,
  counts: FollowCounts[],
  to: string[],
): StreamEvent[] {
  const find = (id: string) => counts.find((c) => c.id === id) ?? { id, follower_count: 0, following_count: 0 };
  const payload = { state, follower: find(followerId), following: find(followingId) };
  return to.map((accountId) => ({ accountId, event: "pleroma:follow_relationships_update" as const, payload }));
}
