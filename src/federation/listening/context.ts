/**
 * What every inbox listener (inbox.ts, interaction-listeners.ts, inbound-safety.ts) asks of an activity: who sent
 * it, which local account it names, whether its object is a post, and the one door for what must follow it.
 */
import type { InboxContext } from "@fedify/fedify";
import { isActor, type Activity } from "@fedify/vocab";
import type { AccountRow } from "../../services/accounts";
import { accountByUri, isStale } from "../../services/remote-accounts";
import { rejectedHost } from "../../services/federation-policies";
import type { Effects } from "../../services/effects";
import { runEffects } from "../../effects";
import { upsertActor } from "../documents/parse-actor";
import { isPostLike } from "../documents/object-types";
import type { RemoteObject } from "../documents/parse-note";
import type { FederationData } from "../data";

/**
 * The sender as a stored account: the row, refreshed from its document when stale. Null when the actor cannot
 * be loaded as an actor with that very id, or names a local account (only this instance speaks for those).
 */
export async function sender(ctx: InboxContext<FederationData>, activity: Activity): Promise<AccountRow | null> {
  const id = activity.actorId;
  if (!id) return null;
  const d = ctx.data.d;
  // A rejected domain's actors are neither fetched nor heard (the inbox door refuses most before this).
  if (rejectedHost(d, id.hostname)) return null;
  const known = await accountByUri(d, id.href);
  if (known && known.domain === null) return null;
  if (known && !isStale(known)) return known;
  const actor = await activity
    .getActor({ documentLoader: ctx.documentLoader, contextLoader: ctx.contextLoader })
    .catch(() => null);
  if (!actor || !isActor(actor) || actor.id?.href !== id.href) return known;
  return upsertActor(d, actor);
}

/** A local, stored account by its actor id. */
export async function localAccountAt(ctx: InboxContext<FederationData>, uri: URL | null): Promise<AccountRow | null> {
  if (!uri) return null;
  const a = await accountByUri(ctx.data.d, uri.href);
  return a && a.domain === null ? a : null;
}

/** What an activity's handling said must follow it, through the one door, after the response. */
export function after(ctx: InboxContext<FederationData>, e: Effects) {
  if (ctx.data.exec) runEffects(ctx.data.env, ctx.data.exec, ctx.canonicalOrigin, e);
}

export const isNoteLike = (o: unknown): o is RemoteObject => isPostLike(o);
