/**
 * Follows arriving from other servers (issue 13, part 1): a remote actor's Follow of a local account, the Accept
 * or Reject of a local account's follow request, and the Undo of a remote follow. Each is ONE batch: the rows,
 * the recounts, the notification and the outbox row of the answer (`outboxWrite`) together. The caller (the
 * inbox) has already checked that the sender signed the activity and stored it with `upsertActor`.
 */
import type { Effects } from "./effects";
import { and, eq, or, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { mixedBatch, now } from "../db/client";
import { newId } from "../db/ids";
import { blocks, domainBlocks, followRequests, follows, subscriptions } from "../db/schema";
import type { AccountRow } from "./accounts";
import { backfillHome } from "./backfill";
import { notify, unnotify } from "./notifications";
import { outboxWrite } from "./outbox";
import type { FollowCounts } from "./events";
import { countsOf, followEvent, insertFollow } from "./graph-rows";
import { limitedHost } from "./federation-policies";

/** What follows an incoming follow activity: the relationship events, and push when it notified someone. */
export type InboundResult = Effects;

const none: InboundResult = {};

/**
 * A remote actor's Follow (`uri`: its id) of a local account. Refused (a `Reject` in the outbox, nothing else)
 * when the target is deactivated, blocks the actor or blocks its domain. Unlocked: a follow, answered `Accept`;
 * locked, or the actor's domain limited (silenced): a follow request the user decides on (the route's authorize/reject answer it). A repeated Follow of
 * an existing follow is accepted again (the sender lost our first Accept).
 */
export async function receiveFollow(
  d: DB,
  actor: AccountRow,
  target: AccountRow,
  uri: string,
  t: number = now(),
): Promise<InboundResult> {
  const [blocked, domainBlocked, existing] = await d.batch([
    d
      .select({ id: blocks.id })
      .from(blocks)
      .where(and(eq(blocks.accountId, target.id), eq(blocks.targetAccountId, actor.id))),
    d
      .select({ id: domainBlocks.id })
      .from(domainBlocks)
      .where(and(eq(domainBlocks.accountId, target.id), eq(domainBlocks.domain, actor.domain ?? ""))),
    d
      .select({ id: follows.id })
      .from(follows)
      .where(and(eq(follows.accountId, actor.id), eq(follows.targetAccountId, target.id))),
  ]);
  if (target.deactivated || blocked.length || domainBlocked.length) {
    await outboxWrite(d, target.id, { type: "Reject", uri, followerId: actor.id }, t).run();
    return none;
  }
  if (existing.length) {
    // The follow now answers to the latest Follow's id (an Undo will name that one).
    await mixedBatch(d, [
      d.update(follows).set({ uri }).where(eq(follows.id, existing[0]!.id)),
      outboxWrite(d, target.id, { type: "Accept", uri, followerId: actor.id }, t),
    ]);
    return none;
  }
  // A locked account decides; so does anyone followed from a limited domain (Mastodon's silence).
  if (target.locked || (actor.domain !== null && limitedHost(d, actor.domain))) {
    const requestId = newId(t);
    const results = await mixedBatch(d, [
      d
        .insert(followRequests)
        .values({
          id: requestId,
          accountId: actor.id,
          targetAccountId: target.id,
          showReblogs: true,
          notify: false,
          createdAt: t,
          uri,
        })
        .onConflictDoUpdate({ target: [followRequests.accountId, followRequests.targetAccountId], set: { uri } }),
      notify(d, {
        type: "follow_request",
        to: target.id,
        from: actor.id,
        onlyIf: sql`EXISTS (SELECT 1 FROM follow_requests WHERE id = ${requestId})`,
      }),
      countsOf(d, [actor.id, target.id]),
    ]);
    return {
      events: followEvent("follow_pending", actor.id, target.id, results[2] as FollowCounts[], [target.id]),
      push: true,
    };
  }
  const followId = newId(t);
  const results = await mixedBatch(d, [
    insertFollow(d, { id: followId, accountId: actor.id, targetAccountId: target.id, showReblogs: true, uri }, t),
    notify(d, {
      type: "follow",
      to: target.id,
      from: actor.id,
      onlyIf: sql`EXISTS (SELECT 1 FROM follows WHERE id = ${followId})`,
    }),
    outboxWrite(d, target.id, { type: "Accept", uri, followerId: actor.id }, t),
    countsOf(d, [actor.id, target.id]),
  ]);
  return {
    events: followEvent("follow_accept", actor.id, target.id, results[results.length - 1] as FollowCounts[], [
      target.id,
    ]),
    push: true,
  };
}

/**
 * Which of a local account's follow requests (or follows) an Accept/Reject from `sender` answers: the one whose
 * id the activity names, or else the one of the embedded Follow's local actor to the sender.
 */
export interface FollowRef {
  /** The Follow's id, as the answer names it. */
  uri: string | null;
  /** The local follower named by an embedded Follow (its actor). */
  followerId: string | null;
}

const refCondition = <T extends typeof follows | typeof followRequests>(table: T, sender: AccountRow, ref: FollowRef) =>
  and(
    eq(table.targetAccountId, sender.id),
    or(eq(table.uri, ref.uri ?? "\u0000"), eq(table.accountId, ref.followerId ?? "\u0000")),
  );

/** The sender accepted a local account's follow request: the follow starts (and a subscription asked with it). */
export async function receiveAccept(
  d: DB,
  sender: AccountRow,
  ref: FollowRef,
  t: number = now(),
): Promise<InboundResult> {
  const request = await d
    .select()
    .from(followRequests)
    .where(refCondition(followRequests, sender, ref))
    .get();
  if (!request) return none;
  const results = await mixedBatch(d, [
    insertFollow(
      d,
      { accountId: request.accountId, targetAccountId: sender.id, showReblogs: request.showReblogs, uri: request.uri },
      t,
    ),
    d.delete(followRequests).where(eq(followRequests.id, request.id)),
    // What is stored of the account (its outbox fetched at the follow, posts others here follow) into the home.
    backfillHome(d, request.accountId, [sender.id]),
    ...(request.notify
      ? [
          d
            .insert(subscriptions)
            .values({ id: newId(t), accountId: request.accountId, targetAccountId: sender.id, createdAt: t })
            .onConflictDoNothing(),
        ]
      : []),
    countsOf(d, [request.accountId, sender.id]),
  ]);
  return {
    events: followEvent("follow_accept", request.accountId, sender.id, results[results.length - 1] as FollowCounts[], [
      request.accountId,
    ]),
    push: false,
  };
}

/** The sender refused (or ended) a local account's follow: the request or the follow goes. */
export async function receiveReject(d: DB, sender: AccountRow, ref: FollowRef): Promise<InboundResult> {
  const [request, follow] = await d.batch([
    d
      .select({ accountId: followRequests.accountId })
      .from(followRequests)
      .where(refCondition(followRequests, sender, ref)),
    d
      .select({ accountId: follows.accountId })
      .from(follows)
      .where(refCondition(follows, sender, ref)),
  ]);
  const followerId = request[0]?.accountId ?? follow[0]?.accountId;
  if (!followerId) return none;
  const results = await mixedBatch(d, [
    d
      .delete(followRequests)
      .where(and(eq(followRequests.accountId, followerId), eq(followRequests.targetAccountId, sender.id))),
    d.delete(follows).where(and(eq(follows.accountId, followerId), eq(follows.targetAccountId, sender.id))),
    d
      .delete(subscriptions)
      .where(and(eq(subscriptions.accountId, followerId), eq(subscriptions.targetAccountId, sender.id))),
    countsOf(d, [followerId, sender.id]),
  ]);
  return {
    events: followEvent("follow_reject", followerId, sender.id, results[results.length - 1] as FollowCounts[], [
      followerId,
    ]),
    push: false,
  };
}

/**
 * The actor withdrew its Follow (`ref.uri`: the Follow's id; or, from an embedded Follow, the local account it
 * followed): the follow or request goes, with its notification, and the target is recounted.
 */
export async function receiveUndoFollow(
  d: DB,
  actor: AccountRow,
  ref: { uri: string | null; targetId: string | null },
): Promise<InboundResult> {
  const match = <T extends typeof follows | typeof followRequests>(table: T) =>
    and(
      eq(table.accountId, actor.id),
      or(eq(table.uri, ref.uri ?? "\u0000"), eq(table.targetAccountId, ref.targetId ?? "\u0000")),
    );
  const [f, r] = await d.batch([
    d.select({ targetId: follows.targetAccountId }).from(follows).where(match(follows)),
    d.select({ targetId: followRequests.targetAccountId }).from(followRequests).where(match(followRequests)),
  ]);
  const targetId = f[0]?.targetId ?? r[0]?.targetId;
  if (!targetId) return none;
  await mixedBatch(d, [
    d.delete(follows).where(and(eq(follows.accountId, actor.id), eq(follows.targetAccountId, targetId))),
    d
      .delete(followRequests)
      .where(and(eq(followRequests.accountId, actor.id), eq(followRequests.targetAccountId, targetId))),
    unnotify(d, { type: "follow", to: targetId, from: actor.id }),
    unnotify(d, { type: "follow_request", to: targetId, from: actor.id }),
  ]);
  return none;
}
