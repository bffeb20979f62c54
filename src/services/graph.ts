/**
 * The social graph: follows and follow requests, blocks, mutes, endorsements, subscriptions and domain blocks.
 * Every action is one D1 batch; an action on an account also reads back the resulting relationship. A local
 * account's follower/following figures follow the `follows` rows by their triggers (migration 0050: exact under
 * concurrent writes); a remote account's are what its server reports. Rows standing for an activity (follows,
 * requests, blocks) get their ActivityPub id (`localActivityUri`) in the same batch.
 */
import type { Effects } from "./effects";
import { and, eq, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { DB } from "../db/client";
import { anyRow, mixedBatch, now } from "../db/client";
import { newId } from "../db/ids";
import {
  accountNotes,
  blocks,
  domainBlocks,
  endorsements,
  followRequests,
  follows,
  listAccounts,
  mutes,
  notifications,
  subscriptions,
} from "../db/schema";
import { notify, unnotify } from "./notifications";
import { badRequest, forbidden, notFound, unprocessable } from "../lib/errors";
import type { Relationship } from "../schemas/account";
import { localActivityUri, type AccountRow } from "./accounts";
import type { FollowCounts } from "./events";
import { relationshipsQuery, toRelationship } from "./relationships";
import { outboxRejects, outboxUndoFollows, outboxWrite } from "./outbox";
import { backfillHome } from "./backfill";
import { countsOf, followEvent, followUri, insertFollow, leaveLists, severTies } from "./graph-rows";
import { severanceStatements } from "./severed-relationships";

const MAX_ENDORSEMENTS = 20;

export interface GraphResult {
  relationship: Relationship;
  /** What follows: `pleroma:follow_relationships_update` events, push, delivery. */
  effects: Effects;
}

// A local account's follower and following figures follow the `follows` rows by their triggers (migration
// 0050): nothing here recounts them.

/**
 * Runs writes and the notification statements they cause, then reads the viewer's relationship to the target,
 * all in one round trip (one transaction: no action without its notification, nor the reverse).
 */
async function writeAndRead(
  d: DB,
  viewerId: string,
  targetId: string,
  writes: any[],
  notes: D1PreparedStatement[] = [],
): Promise<{ relationship: Relationship; counts: FollowCounts[] }> {
  const results = await mixedBatch(d, [
    ...writes,
    ...notes,
    countsOf(d, [viewerId, targetId]),
    relationshipsQuery(d, viewerId, [targetId]),
  ]);
  const rel = results[results.length - 1] as Parameters<typeof toRelationship>[0][];
  const counts = results[results.length - 2] as FollowCounts[];
  return { relationship: toRelationship(rel[0]), counts };
}

async function isBlockedBy(d: DB, actorId: string, targetId: string): Promise<boolean> {
  const row = await d
    .select({ id: blocks.id })
    .from(blocks)
    .where(and(eq(blocks.accountId, targetId), eq(blocks.targetAccountId, actorId)))
    .get();
  return Boolean(row);
}

const isLocal = (a: AccountRow) => a.domain === null;

const subscribeWrite = (d: DB, accountId: string, targetAccountId: string, t: number) =>
  d
    .insert(subscriptions)
    .values({ id: newId(t), accountId, targetAccountId, createdAt: t })
    .onConflictDoNothing();

export async function follow(
  d: DB,
  me: AccountRow,
  target: AccountRow,
  opts: { reblogs?: boolean; notify?: boolean },
): Promise<GraphResult> {
  if (me.id === target.id) throw badRequest("Can not follow yourself");
  if (await isBlockedBy(d, me.id, target.id)) throw forbidden(`Could not follow user: ${target.username} blocked you.`);
  const t = now();
  const existing = await d
    .select()
    .from(follows)
    .where(and(eq(follows.accountId, me.id), eq(follows.targetAccountId, target.id)))
    .get();
  // Locked accounts approve followers; remote accounts answer with an Accept, so the follow waits for it.
  const pending = !existing && (target.locked || !isLocal(target));
  const writes = subscriptionWrites(d, me.id, target.id, opts.notify, pending, t);
  if (existing) {
    if (opts.reblogs !== undefined)
      writes.push(d.update(follows).set({ showReblogs: opts.reblogs }).where(eq(follows.id, existing.id)));
    return { ...(await writeAndRead(d, me.id, target.id, writes)), effects: {} };
  }
  if (pending) return askToFollow(d, me, target, opts, writes, t);
  return followNow(d, me, target, opts, writes, t);
}

/**
 * Pleroma's `notify` is a subscription: subscribing and notifying change together. Asked with a follow request,
 * it waits on the request (`follow_requests.notify`) and starts only if the request is accepted: a rejected
 * follower must not hear of the account's posts.
 */
function subscriptionWrites(
  d: DB,
  accountId: string,
  targetAccountId: string,
  subscribe: boolean | undefined,
  pending: boolean,
  t: number,
): any[] {
  const writes: any[] = [];
  if (subscribe === true && !pending) writes.push(subscribeWrite(d, accountId, targetAccountId, t));
  if (subscribe === false)
    writes.push(
      d
        .delete(subscriptions)
        .where(and(eq(subscriptions.accountId, accountId), eq(subscriptions.targetAccountId, targetAccountId))),
    );
  return writes;
}

/**
 * A follow request (of a locked or a remote account), with `writes` in its batch: the request, its Follow to a
 * remote account and its notification, for a new request only (a repeated one keeps its first id and sends
 * nothing). A remote account's recent posts come from its outbox, after the response (they show once it accepts).
 */
async function askToFollow(
  d: DB,
  me: AccountRow,
  target: AccountRow,
  opts: { reblogs?: boolean; notify?: boolean },
  writes: any[],
  t: number,
): Promise<GraphResult> {
  const requestId = newId(t);
  const isNew = sql`EXISTS (SELECT 1 FROM follow_requests WHERE id = ${requestId})`;
  writes.push(
    d
      .insert(followRequests)
      .values({
        id: requestId,
        accountId: me.id,
        targetAccountId: target.id,
        showReblogs: opts.reblogs ?? true,
        notify: opts.notify === true,
        createdAt: t,
        uri: localActivityUri(me, "follows", requestId),
      })
      // A repeated request keeps its first id: the remote Accept will name that one.
      .onConflictDoUpdate({
        target: [followRequests.accountId, followRequests.targetAccountId],
        set: { showReblogs: opts.reblogs ?? true, ...(opts.notify === undefined ? {} : { notify: opts.notify }) },
      }),
    // A remote account hears of a new request as a Follow (its id: the request's uri); a repeated one sends nothing.
    outboxWrite(d, me.id, { type: "Follow", uri: localActivityUri(me, "follows", requestId), targetId: target.id }, t, {
      onlyIf: isNew,
    }),
  );
  const { relationship, counts } = await writeAndRead(d, me.id, target.id, writes, [
    // Only a new request notifies (not a repeated or racing one).
    notify(d, { type: "follow_request", to: target.id, from: me.id, onlyIf: isNew }),
  ]);
  // For a new request only (a repeated one keeps its first id).
  const fresh = !isLocal(target) && Boolean(await d.get(sql`SELECT 1 FROM follow_requests WHERE id = ${requestId}`));
  return {
    relationship,
    effects: {
      events: followEvent("follow_pending", me.id, target.id, counts, [me.id, ...(isLocal(target) ? [target.id] : [])]),
      push: true,
      ...(fresh ? { backfill: [{ readerId: me.id, accountId: target.id }] } : {}),
    },
  };
}

/**
 * A follow of an open local account, at once, with `writes` in its batch: the follow, the account's latest posts
 * into the follower's home, and its notification (for a new follow only).
 */
async function followNow(
  d: DB,
  me: AccountRow,
  target: AccountRow,
  opts: { reblogs?: boolean },
  writes: any[],
  t: number,
): Promise<GraphResult> {
  const followId = newId(t);
  writes.push(
    insertFollow(
      d,
      {
        id: followId,
        accountId: me.id,
        targetAccountId: target.id,
        showReblogs: opts.reblogs ?? true,
        uri: localActivityUri(me, "follows", followId),
      },
      t,
    ),
    // Its latest posts into the new follower's home at once, in the follow's batch.
    backfillHome(d, me.id, [target.id]),
  );
  const { relationship, counts } = await writeAndRead(d, me.id, target.id, writes, [
    notify(d, {
      type: "follow",
      to: target.id,
      from: me.id,
      onlyIf: sql`EXISTS (SELECT 1 FROM follows WHERE id = ${followId})`,
    }),
  ]);
  return {
    relationship,
    effects: {
      events: followEvent("follow_accept", me.id, target.id, counts, [me.id, target.id]),
      push: true,
    },
  };
}

export async function unfollow(d: DB, me: AccountRow, target: AccountRow): Promise<GraphResult> {
  if (me.id === target.id) throw badRequest("Can not unfollow yourself");
  const { relationship } = await writeAndRead(
    d,
    me.id,
    target.id,
    [
      // Undo of the Follow (of the follow, or else the pending request), read before the rows go; none if neither.
      outboxWrite(d, me.id, { type: "Undo", object: "Follow", uri: "", targetId: target.id }, now(), {
        uriFrom: followUri(me.id, target.id),
      }),
      d.delete(follows).where(and(eq(follows.accountId, me.id), eq(follows.targetAccountId, target.id))),
      d
        .delete(followRequests)
        .where(and(eq(followRequests.accountId, me.id), eq(followRequests.targetAccountId, target.id))),
      // `notify` belongs to the follow (Mastodon): unfollowing ends the new-post notifications too.
      d
        .delete(subscriptions)
        .where(and(eq(subscriptions.accountId, me.id), eq(subscriptions.targetAccountId, target.id))),
      leaveLists(d, me.id, target.id),
    ],
    [
      unnotify(d, { type: "follow", to: target.id, from: me.id }),
      unnotify(d, { type: "follow_request", to: target.id, from: me.id }),
    ],
  );
  return { relationship, effects: {} };
}

/** Accepts a pending request of `requesterId` to follow `me`. */
export async function authorizeRequest(d: DB, me: AccountRow, requesterId: string): Promise<GraphResult> {
  const request = await d
    .select()
    .from(followRequests)
    .where(and(eq(followRequests.accountId, requesterId), eq(followRequests.targetAccountId, me.id)))
    .get();
  if (!request) throw notFound();
  const t = now();
  const followId = newId(t);
  const { relationship, counts } = await writeAndRead(
    d,
    me.id,
    requesterId,
    [
      // The follow is the requested Follow: it keeps the request's id (Undo names it).
      insertFollow(
        d,
        {
          id: followId,
          accountId: requesterId,
          targetAccountId: me.id,
          showReblogs: request.showReblogs,
          uri: request.uri,
        },
        t,
      ),
      d.delete(followRequests).where(eq(followRequests.id, request.id)),
      // A local requester's home gets the account's latest posts (a remote one: nothing, it is not read here).
      backfillHome(d, requesterId, [me.id]),
      ...(request.notify ? [subscribeWrite(d, requesterId, me.id, t)] : []),
      // A remote requester gets an Accept of their Follow (the request's uri is its id).
      ...(request.uri ? [outboxWrite(d, me.id, { type: "Accept", uri: request.uri, followerId: requesterId }, t)] : []),
    ],
    [
      unnotify(d, { type: "follow_request", to: me.id, from: requesterId }),
      notify(d, {
        type: "follow",
        to: me.id,
        from: requesterId,
        onlyIf: sql`EXISTS (SELECT 1 FROM follows WHERE id = ${followId})`,
      }),
    ],
  );
  return {
    relationship,
    effects: {
      events: followEvent("follow_accept", requesterId, me.id, counts, [requesterId, me.id]),
      push: true,
    },
  };
}

export async function rejectRequest(d: DB, me: AccountRow, requesterId: string): Promise<GraphResult> {
  // Only a pending request can be refused (404 otherwise), as `authorizeRequest`.
  const pending = await d
    .select({ id: followRequests.id, uri: followRequests.uri })
    .from(followRequests)
    .where(and(eq(followRequests.accountId, requesterId), eq(followRequests.targetAccountId, me.id)))
    .get();
  if (!pending) throw notFound();
  const { relationship, counts } = await writeAndRead(
    d,
    me.id,
    requesterId,
    [
      // A remote requester gets a Reject of their Follow.
      ...(pending.uri
        ? [outboxWrite(d, me.id, { type: "Reject", uri: pending.uri, followerId: requesterId }, now())]
        : []),
      d
        .delete(followRequests)
        .where(and(eq(followRequests.accountId, requesterId), eq(followRequests.targetAccountId, me.id)))
        .returning({ id: followRequests.id }),
    ],
    [unnotify(d, { type: "follow_request", to: me.id, from: requesterId })],
  );
  return {
    relationship,
    effects: { events: followEvent("follow_reject", requesterId, me.id, counts, [requesterId, me.id]) },
  };
}

/** Blocking ends every tie between the two: follows and requests both ways, subscriptions, endorsements, lists. */
export async function block(d: DB, me: AccountRow, target: AccountRow): Promise<GraphResult> {
  if (me.id === target.id) throw badRequest("Can not block yourself");
  const t = now();
  const blockId = newId(t);
  const { relationship } = await writeAndRead(d, me.id, target.id, [
    d
      .insert(blocks)
      .values({
        id: blockId,
        accountId: me.id,
        targetAccountId: target.id,
        createdAt: t,
        uri: localActivityUri(me, "blocks", blockId),
      })
      .onConflictDoNothing(),
    // A remote account's server must learn that the follows are over, or it keeps showing it what this account
    // sends to its other followers there (Mastodon sends Reject and Undo with the Block). Read before the rows go.
    outboxWrite(d, me.id, { type: "Reject", uri: "", followerId: target.id }, t, {
      uriFrom: followUri(target.id, me.id),
    }),
    outboxWrite(d, me.id, { type: "Undo", object: "Follow", uri: "", targetId: target.id }, t, {
      uriFrom: followUri(me.id, target.id),
    }),
    // The Block itself (Mastodon's), only for a new block: a repeated one sends nothing.
    outboxWrite(d, me.id, { type: "Block", uri: localActivityUri(me, "blocks", blockId), targetId: target.id }, t, {
      onlyIf: sql`EXISTS (SELECT 1 FROM blocks WHERE id = ${blockId})`,
    }),
    ...severTies(d, me.id, target.id),
    // What the blocked account caused is no longer shown.
    d.delete(notifications).where(and(eq(notifications.accountId, me.id), eq(notifications.fromAccountId, target.id))),
  ]);
  return { relationship, effects: {} };
}

export async function unblock(d: DB, me: AccountRow, target: AccountRow): Promise<GraphResult> {
  const { relationship } = await writeAndRead(d, me.id, target.id, [
    // Undo of the Block, named by the row's id, read before the row goes; none when there was no block.
    outboxWrite(d, me.id, { type: "UndoBlock", uri: "", targetId: target.id }, now(), {
      uriFrom: sql`(SELECT uri FROM blocks WHERE account_id = ${me.id} AND target_account_id = ${target.id})`,
    }),
    d.delete(blocks).where(and(eq(blocks.accountId, me.id), eq(blocks.targetAccountId, target.id))),
  ]);
  return { relationship, effects: {} };
}

/**
 * Mastodon's `remove_from_followers`: the account's follow of `me` ends (its subscription and its place in `me`'s
 * lists with it). A remote follower's server gets a Reject of its Follow, as Mastodon sends, so it stops showing
 * it what `me` sends to followers. Not a follower: nothing changes.
 */
export async function removeFromFollowers(d: DB, me: AccountRow, follower: AccountRow): Promise<GraphResult> {
  if (me.id === follower.id) throw badRequest("Can not remove yourself from your followers");
  const t = now();
  const { relationship, counts } = await writeAndRead(d, me.id, follower.id, [
    // Read before the row goes; none when there was no follow.
    outboxWrite(d, me.id, { type: "Reject", uri: "", followerId: follower.id }, t, {
      uriFrom: followUri(follower.id, me.id, false),
    }),
    d.delete(follows).where(and(eq(follows.accountId, follower.id), eq(follows.targetAccountId, me.id))),
    d
      .delete(subscriptions)
      .where(and(eq(subscriptions.accountId, follower.id), eq(subscriptions.targetAccountId, me.id))),
    leaveLists(d, follower.id, me.id),
  ]);
  return {
    relationship,
    effects: { events: followEvent("follow_reject", follower.id, me.id, counts, [follower.id, me.id]) },
  };
}

/** Mastodon's account notes: as long as `ACCOUNT_NOTE_MAX`. */
const ACCOUNT_NOTE_MAX = 2_000;

/** Sets (or, empty, removes) `me`'s private note on `target`; answers the relationship, which shows it. */
export async function setAccountNote(d: DB, me: AccountRow, target: AccountRow, comment: string): Promise<GraphResult> {
  const text = comment.trim();
  if ([...text].length > ACCOUNT_NOTE_MAX)
    throw unprocessable(`Validation failed: Comment is too long (maximum is ${ACCOUNT_NOTE_MAX} characters)`);
  const t = now();
  const { relationship } = await writeAndRead(d, me.id, target.id, [
    text
      ? d
          .insert(accountNotes)
          .values({
            id: newId(t),
            accountId: me.id,
            targetAccountId: target.id,
            createdAt: t,
            comment: text,
            updatedAt: t,
          })
          .onConflictDoUpdate({
            target: [accountNotes.accountId, accountNotes.targetAccountId],
            set: { comment: text, updatedAt: t },
          })
      : d
          .delete(accountNotes)
          .where(and(eq(accountNotes.accountId, me.id), eq(accountNotes.targetAccountId, target.id))),
  ]);
  return { relationship, effects: {} };
}

export async function mute(
  d: DB,
  me: AccountRow,
  target: AccountRow,
  opts: { notifications: boolean; expiresIn?: number },
): Promise<GraphResult> {
  if (me.id === target.id) throw badRequest("Can not mute yourself");
  const t = now();
  const expiresAt = opts.expiresIn ? t + opts.expiresIn * 1000 : null;
  const { relationship } = await writeAndRead(d, me.id, target.id, [
    d
      .insert(mutes)
      .values({
        id: newId(t),
        accountId: me.id,
        targetAccountId: target.id,
        hideNotifications: opts.notifications,
        expiresAt,
        createdAt: t,
      })
      .onConflictDoUpdate({
        target: [mutes.accountId, mutes.targetAccountId],
        set: { hideNotifications: opts.notifications, expiresAt },
      }),
  ]);
  return { relationship, effects: {} };
}

export async function unmute(d: DB, me: AccountRow, target: AccountRow): Promise<GraphResult> {
  const { relationship } = await writeAndRead(d, me.id, target.id, [
    d.delete(mutes).where(and(eq(mutes.accountId, me.id), eq(mutes.targetAccountId, target.id))),
  ]);
  return { relationship, effects: {} };
}

export async function endorse(d: DB, me: AccountRow, target: AccountRow): Promise<GraphResult> {
  if (me.id === target.id) throw badRequest("Can not endorse yourself");
  const [following, count] = await d.batch([
    d
      .select({ id: follows.id })
      .from(follows)
      .where(and(eq(follows.accountId, me.id), eq(follows.targetAccountId, target.id))),
    d
      .select({ n: sql<number>`count(*)` })
      .from(endorsements)
      .where(eq(endorsements.accountId, me.id)),
  ]);
  if (following.length === 0) throw badRequest(`Could not endorse user: You are not following ${target.username}`);
  if ((count[0]?.n ?? 0) >= MAX_ENDORSEMENTS) throw badRequest("You have already pinned the maximum number of users");
  const t = now();
  // One conditional insert: following and the count are checked by the write itself, so racing requests
  // cannot pass the limit together.
  const { relationship } = await writeAndRead(d, me.id, target.id, [
    d
      .insert(endorsements)
      .select(
        d
          .select({
            id: sql`${newId(t)}`.as("id"),
            accountId: sql`${me.id}`.as("account_id"),
            targetAccountId: follows.targetAccountId,
            createdAt: sql`${t}`.as("created_at"),
          })
          .from(follows)
          .where(
            and(
              eq(follows.accountId, me.id),
              eq(follows.targetAccountId, target.id),
              sql`(SELECT count(*) FROM endorsements WHERE account_id = ${me.id}) < ${MAX_ENDORSEMENTS}`,
            ),
          ),
      )
      .onConflictDoNothing(),
  ]);
  if (!relationship.endorsed) {
    if (!relationship.following) throw badRequest(`Could not endorse user: You are not following ${target.username}`);
    throw badRequest("You have already pinned the maximum number of users");
  }
  return { relationship, effects: {} };
}

export async function unendorse(d: DB, me: AccountRow, target: AccountRow): Promise<GraphResult> {
  const { relationship } = await writeAndRead(d, me.id, target.id, [
    d.delete(endorsements).where(and(eq(endorsements.accountId, me.id), eq(endorsements.targetAccountId, target.id))),
  ]);
  return { relationship, effects: {} };
}

export async function subscribe(d: DB, me: AccountRow, target: AccountRow): Promise<GraphResult> {
  if (me.id === target.id) throw badRequest("Can not subscribe to yourself");
  if (await isBlockedBy(d, me.id, target.id)) throw forbidden(`Could not subscribe: ${target.username} blocked you.`);
  const t = now();
  const { relationship } = await writeAndRead(d, me.id, target.id, [subscribeWrite(d, me.id, target.id, t)]);
  return { relationship, effects: {} };
}

export async function unsubscribe(d: DB, me: AccountRow, target: AccountRow): Promise<GraphResult> {
  const { relationship } = await writeAndRead(d, me.id, target.id, [
    d
      .delete(subscriptions)
      .where(and(eq(subscriptions.accountId, me.id), eq(subscriptions.targetAccountId, target.id))),
  ]);
  return { relationship, effects: {} };
}

/** A valid, normalised domain name or null. */
export function normaliseDomain(input: string): string | null {
  const domain = input
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, "")
    .replace(/\/.*$/, "");
  return /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}(:\d{1,5})?$/.test(domain)
    ? domain
    : null;
}

/** Blocks a domain: hides it and removes the followers the user has there, telling their servers. */
export async function blockDomain(d: DB, me: AccountRow, domain: string): Promise<void> {
  const t = now();
  await mixedBatch(d, [
    d
      .insert(domainBlocks)
      .values({ id: newId(t), accountId: me.id, domain, createdAt: t })
      .onConflictDoNothing(),
    // Their servers learn that the follows (and requests) are over, as Mastodon's AfterBlockDomainFromAccountService
    // tells them, and as `block` and `removeFromFollowers` do; read before the rows go.
    outboxRejects(
      d,
      me.id,
      sql`SELECT f.account_id, f.uri FROM follows f JOIN accounts a ON a.id = f.account_id WHERE f.target_account_id = ${me.id} AND a.domain = ${domain}
        UNION ALL SELECT q.account_id, q.uri FROM follow_requests q JOIN accounts a ON a.id = q.account_id WHERE q.target_account_id = ${me.id} AND a.domain = ${domain}`,
      t,
    ),
    // The user's own follows (and requests) of that domain end too, with an Undo of each (as `unfollow` sends).
    outboxUndoFollows(
      d,
      me.id,
      sql`SELECT f.target_account_id, f.uri FROM follows f JOIN accounts a ON a.id = f.target_account_id WHERE f.account_id = ${me.id} AND a.domain = ${domain}
        UNION ALL SELECT q.target_account_id, q.uri FROM follow_requests q JOIN accounts a ON a.id = q.target_account_id WHERE q.account_id = ${me.id} AND a.domain = ${domain}`,
      t,
    ),
    // The notice of the follows and followers lost (Mastodon 4.3), read before they go.
    ...severanceStatements(
      d,
      [{ type: "user_domain_block", domain }],
      { localId: me.id, followers: true, following: true },
      t,
    ),
    ...ownFollowsOfDomainEnd(d, me.id, domain),
    d
      .delete(follows)
      .where(
        and(
          eq(follows.targetAccountId, me.id),
          sql`${follows.accountId} IN (SELECT id FROM accounts WHERE domain = ${domain})`,
        ),
      ),
    d
      .delete(followRequests)
      .where(
        and(
          eq(followRequests.targetAccountId, me.id),
          sql`${followRequests.accountId} IN (SELECT id FROM accounts WHERE domain = ${domain})`,
        ),
      ),
    // The accounts of that domain are remote: their following counts are their server's, not recounted here.
  ]);
}

/** The deletes of `accountId`'s follows and follow requests of `domain`'s accounts, and what belongs to them. */
function ownFollowsOfDomainEnd(d: DB, accountId: string, domain: string) {
  const ofDomain = (column: SQLiteColumn) => sql`${column} IN (SELECT id FROM accounts WHERE domain = ${domain})`;
  return [
    d.delete(follows).where(and(eq(follows.accountId, accountId), ofDomain(follows.targetAccountId))),
    d
      .delete(followRequests)
      .where(and(eq(followRequests.accountId, accountId), ofDomain(followRequests.targetAccountId))),
    // `notify` belongs to the follow (Mastodon), and list members are followed accounts, as `unfollow` has it.
    d.delete(subscriptions).where(and(eq(subscriptions.accountId, accountId), ofDomain(subscriptions.targetAccountId))),
    d
      .delete(listAccounts)
      .where(
        and(
          ofDomain(listAccounts.accountId),
          sql`${listAccounts.listId} IN (SELECT id FROM lists WHERE account_id = ${accountId})`,
        ),
      ),
  ];
}

export async function unblockDomain(d: DB, me: AccountRow, domain: string): Promise<void> {
  await d.delete(domainBlocks).where(and(eq(domainBlocks.accountId, me.id), eq(domainBlocks.domain, domain)));
}

/** Deletes mutes past their expiry, a bounded number per run. */
export async function deleteExpiredMutes(d: DB, t: number, max = 500): Promise<void> {
  if (!(await anyRow(d, sql`mutes WHERE expires_at < ${t}`))) return;
  await d.delete(mutes).where(sql`${mutes.id} IN (SELECT id FROM mutes WHERE expires_at < ${t} LIMIT ${max})`);
}
