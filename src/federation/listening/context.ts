/**
 * What every inbox listener (listening/) asks of an activity: who sent it, which local account it names, whether
 * its object is a post, what it embeds (never fetched), and the one door for what must follow it; and how what
 * nobody handles is dropped.
 */
import type { InboxContext } from "@fedify/fedify";
import { isActor, type Activity, type Object as APObject } from "@fedify/vocab";
import type { AccountRow } from "../../services/accounts";
import { accountByUri, isStale } from "../../services/remote-accounts";
import { rejectedHost } from "../../services/federation-policies";
import type { Effects } from "../../services/effects";
import { runEffects } from "../../effects";
import { upsertActor } from "../documents/parse-actor";
import { isPostLike } from "../documents/object-types";
import type { RemoteObject } from "../documents/parse-note";
import type { FederationData } from "../data";
import { embeddedOnly } from "../door/loaders";

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

/**
 * The post `id` as the sender's own: `object` (what the activity embeds) when it is that post, attributed to the
 * sender, on the sender's origin; else fetched from `id` (through the guarded loader) and checked again. Null
 * when it cannot be had so.
 */
export async function sendersPost(
  ctx: InboxContext<FederationData>,
  object: unknown,
  id: URL,
  from: AccountRow,
): Promise<RemoteObject | null> {
  if (id.origin !== new URL(from.uri).origin) return null;
  const own = (o: unknown): o is RemoteObject =>
    isNoteLike(o) && o.id?.href === id.href && o.attributionId?.href === from.uri;
  if (own(object)) return object;
  const fetched = await ctx.lookupObject(id.href).catch(() => null);
  return own(fetched) ? fetched : null;
}

/**
 * An activity (or an object type) Starling has no use for: acknowledged (202) and dropped, as Mastodon and
 * Pleroma do, so the sender does not retry it; logged with its type.
 */
export function dropped(activity: Activity, what: string): void {
  console.log(`inbox: dropped ${what}`, activity.id?.href ?? "", "from", activity.actorId?.href ?? "");
}

/** What an activity embeds, read as it is (nothing fetched); null when it embeds nothing readable. */
export async function embedded(
  get: (o: { documentLoader: typeof embeddedOnly }) => Promise<APObject | null>,
): Promise<APObject | null> {
  try {
    return await get({ documentLoader: embeddedOnly });
  } catch {
    return null;
  }
}
