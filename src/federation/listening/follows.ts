/**
 * Inbound follows (rules: services/inbound-follows.ts): a `Follow` of a local account, the `Accept` or `Reject`
 * of a local account's Follow, and the `Undo` of a Follow by its follower. Relays' follows and answers are
 * listening/relays.ts's.
 */
import type { InboxContext } from "@fedify/fedify";
import { Follow, type Accept, type Reject } from "@fedify/vocab";
import type { AccountRow } from "../../services/accounts";
import { receiveAccept, receiveFollow, receiveReject, receiveUndoFollow } from "../../services/inbound-follows";
import { relayUnfollowsBack } from "../../services/relays";
import type { FederationData } from "../data";
import { instanceActorUri } from "../door/instance-actor";
import { after, dropped, embedded, localAccountAt, sender } from "./context";
import { relayAnswer, relayFollowBack } from "./relays";

type Ctx = InboxContext<FederationData>;

export async function onFollow(ctx: Ctx, follow: Follow): Promise<void> {
  // A Follow of nobody here (or without an id to answer) is acknowledged and dropped, its sender not fetched.
  const target = await localAccountAt(ctx, follow.objectId);
  if (follow.id && follow.objectId?.href === instanceActorUri(ctx.canonicalOrigin)) return relayFollowBack(ctx, follow);
  if (!target || !follow.id) return;
  const from = await sender(ctx, follow);
  if (!from) return;
  after(ctx, await receiveFollow(ctx.data.d, from, target, follow.id.href));
}

/** The answer to a local account's Follow (or to the instance actor's Follow of a relay). */
export async function onFollowAnswer(ctx: Ctx, answer: Accept | Reject, accepted: boolean): Promise<void> {
  const from = await sender(ctx, answer);
  if (!from || (await relayAnswer(ctx, answer, from, accepted ? "accepted" : "rejected"))) return;
  const ref = await followRef(ctx, answer, from);
  if (ref) after(ctx, await (accepted ? receiveAccept : receiveReject)(ctx.data.d, from, ref));
}

/** The `Undo` of a Follow embedded whole, by `from` (the verified sender). */
export async function onUndoFollow(ctx: Ctx, from: AccountRow, object: Follow): Promise<void> {
  // Only the follower can withdraw its Follow.
  if (object.actorId?.href !== from.uri) return;
  // A relay no longer following the instance actor back.
  if (object.objectId?.href === instanceActorUri(ctx.canonicalOrigin)) return relayUnfollowsBack(ctx.data.d, from.uri);
  const target = await localAccountAt(ctx, object.objectId);
  after(ctx, await receiveUndoFollow(ctx.data.d, from, { uri: object.id?.href ?? null, targetId: target?.id ?? null }));
}

/**
 * What an Accept/Reject answers: the Follow's id, and for an embedded Follow its local actor when the Follow is
 * of the sender (a Follow of anyone else is not the sender's to answer). An embedded object that is not a
 * Follow is dropped.
 */
async function followRef(ctx: Ctx, activity: Accept | Reject, from: AccountRow) {
  const object = await embedded((o) => activity.getObject(o));
  if (object && !(object instanceof Follow)) {
    dropped(activity, `${activity.constructor.name}(${object.constructor.name})`);
    return null;
  }
  if (object instanceof Follow) {
    if (object.objectId?.href !== from.uri) return null;
    const follower = await localAccountAt(ctx, object.actorId);
    return { uri: object.id?.href ?? null, followerId: follower?.id ?? null };
  }
  return activity.objectId ? { uri: activity.objectId.href, followerId: null } : null;
}
