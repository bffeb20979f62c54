/**
 * What an actor says of itself (issue 18): `Update` of the actor (its profile changed), `Add`/`Remove` on its
 * featured collection (pins), `Move` to another account and `Delete` of itself. door/authenticate.ts has verified
 * that the signature is the activity's `actor`; only that actor's own document, collection and account are acted
 * on. Anything else is acknowledged and dropped (logged), never a 500.
 */
import type { InboxContext } from "@fedify/fedify";
import { isActor, type Actor, type Add, type Delete, type Move, type Remove, type Update } from "@fedify/vocab";
import type { FederationData } from "../data";
import { accountByUri } from "../../services/remote-accounts";
import { upsertActor } from "../documents/parse-actor";
import type { AccountRow } from "../../services/accounts";
import { setRemotePin } from "../../services/remote-pins";
import { resolveAccount, resolveAny, resolveEnv } from "../fetching/resolve";
import { receiveActorDelete } from "../../services/account-deletion";
import { moveAccount } from "../../services/move";
import { after, sender } from "./context";

/**
 * An actor's `Update` of itself: the stored account is refreshed from the embedded document (the signature is
 * the actor's, and the document is the actor's own), or from its id when only the id was sent. An Update of any
 * other actor, or of an actor nobody here knows (nothing to refresh), or of a deactivated one, is dropped.
 */
export async function receiveActorUpdate(
  ctx: InboxContext<FederationData>,
  update: Update,
  embedded: Actor | null,
): Promise<void> {
  const actorId = update.actorId;
  const id = embedded?.id ?? update.objectId;
  if (!actorId || !id || id.href !== actorId.href) {
    console.warn(`inbox: Update of actor ${id?.href} by ${actorId?.href} dropped (not its own)`);
    return;
  }
  const d = ctx.data.d;
  const known = await accountByUri(d, id.href);
  if (!known || known.domain === null || known.deactivated) return;
  let actor: Actor | null = embedded;
  if (!actor) {
    const fetched = await ctx.lookupObject(id.href).catch(() => null);
    actor = fetched && isActor(fetched) && fetched.id?.href === id.href ? fetched : null;
  }
  if (!actor) return;
  await upsertActor(d, actor);
}

/**
 * `Add` (pinned) or `Remove` (unpinned) of one of the sender's statuses on the sender's own featured collection
 * (as its actor document names it). A status not stored yet is fetched from its id (one bounded look-up) when
 * pinned; it must be the sender's. Other Adds and Removes (other collections, others' statuses) are dropped.
 */
export async function receiveFeatured(
  ctx: InboxContext<FederationData>,
  activity: Add | Remove,
  from: AccountRow,
  pinned: boolean,
): Promise<void> {
  const target = activity.targetId;
  const object = activity.objectId;
  if (!target || !object) return;
  // The featured collection's id is on the actor document (cached by the loader): the target must be it.
  const actor = await activity
    .getActor({ documentLoader: ctx.documentLoader, contextLoader: ctx.contextLoader })
    .catch(() => null);
  if (!actor || actor.id?.href !== from.uri || actor.featuredId?.href !== target.href) {
    console.warn(
      `inbox: ${pinned ? "Add" : "Remove"} to ${target.href} by ${from.uri} dropped (not its featured collection)`,
    );
    return;
  }
  const d = ctx.data.d;
  if ((await setRemotePin(d, from, object.href, pinned)) || !pinned || object.origin !== new URL(from.uri).origin)
    return;
  const base = ctx.canonicalOrigin;
  const found = await resolveAny(resolveEnv(ctx.data.env, base, new URL(base).host), object.href).catch(() => null);
  if (found && "statusId" in found) await setRemotePin(d, from, object.href, true);
}

/** An actor's `Move` of itself to another account. */
export async function onMove(ctx: InboxContext<FederationData>, move: Move): Promise<void> {
  // Only an actor moves itself; the target, refetched now, must list it among its aliases (alsoKnownAs).
  if (!move.objectId || move.objectId.href !== move.actorId?.href || !move.targetId) return;
  const from = await sender(ctx, move);
  if (!from || from.deactivated) return;
  const base = ctx.canonicalOrigin;
  // A target that cannot be reached now (down, or too slow on its first fetch) is not a refusal: the error
  // answers the sender 500, and its retry brings the Move again later. Only a target that answers without
  // listing the account is refused for good.
  const target = await resolveAccount(resolveEnv(ctx.data.env, base, new URL(base).host), move.targetId.href, {
    refresh: true,
    strict: true,
  });
  if (!target || target.account.deactivated) return;
  // Local followers are told, and follow the target at once (the `moves` effect).
  after(ctx, (await moveAccount(ctx.data.d, from, target.account, Date.now())).effects);
}

/**
 * An actor deleting itself (the signature is its own): deactivated here, its follows ended, its content removed
 * by the deletion job.
 */
export async function onActorDelete(ctx: InboxContext<FederationData>, del: Delete): Promise<void> {
  const known = await accountByUri(ctx.data.d, del.objectId!.href);
  if (known && known.domain !== null) await receiveActorDelete(ctx.data.d, known.id, Date.now());
}
