/**
 * What relays send (issue 36; rows and rules: services/relays.ts): their answers to the instance actor's Follow
 * and their Follow of it (LitePub relays follow back), and once accepted their posts. A forwarded activity is the relay's
 * when its signature key is the relay actor's (`isRelayKey`), and a LitePub relay's `Announce` is never a boost by
 * the relay: the object is fetched from its origin (the relay's copy is not trusted) unless stored already, and
 * stored as a fetched post (the storage guard and the federation policies apply; its author the light way), shown
 * on the federated timeline.
 */
import { Activity, Follow, isActor, type Accept, type Announce, type Reject } from "@fedify/vocab";
import type { InboxContext } from "@fedify/fedify";
import { sql } from "drizzle-orm";
import { rejectedHost } from "../../services/federation-policies";
import type { AccountRow } from "../../services/accounts";
import { answerRelayFollow, relayActingAdmin, relayFollowsBack, relayKeyCandidates } from "../../services/relays";
import { fetchingPaused } from "../../services/usage-budget";
import type { FederationData } from "../data";
import { freshDocumentLoader } from "../federation";
import { embeddedOnly } from "../door/loaders";
import { isPostLike } from "../documents/object-types";
import { resolveEnv, storeFetchedStatus } from "../fetching/resolve";
import { instanceActorUri } from "../door/instance-actor";
import { after, dropped, embedded, sender } from "./context";

/**
 * Whether a forwarded activity's HTTP signature key (`keyId`) is an accepted relay actor's own: its key id names
 * the relay's actor, or the relay's actor document (as its origin serves it) lists the key. A key of any other
 * actor on the relay's host is not the relay's.
 */
export async function isRelayKey(ctx: InboxContext<FederationData>, keyId: string): Promise<boolean> {
  const candidates = await relayKeyCandidates(ctx.data.d, keyId);
  if (candidates === "relay") return true;
  for (const uri of candidates) {
    const actor = await ctx.lookupObject(uri).catch(() => null);
    if (actor && isActor(actor) && actor.id?.href === uri && actor.publicKeyIds.some((k) => k.href === keyId))
      return true;
  }
  return false;
}

/**
 * An accepted LitePub relay's `Announce`: the post it names (the object's id, or the id of the object of an
 * embedded or named `Create`), fetched from its origin and stored as a fetched post. Never a reblog.
 */
export async function receiveRelayAnnounce(ctx: InboxContext<FederationData>, announce: Announce): Promise<void> {
  let id = announce.objectId;
  const embedded = await announce.getObject({ documentLoader: embeddedOnly }).catch(() => null);
  if (embedded instanceof Activity) id = embedded.objectId;
  else if (embedded?.id) id = embedded.id;
  if (!id || rejectedHost(ctx.data.d, id.hostname) || id.origin === new URL(ctx.canonicalOrigin).origin) return;
  // From 80% of any of the plan's caps, relay intake waits: nothing fetched, nothing stored (services/usage-budget.ts).
  if (await fetchingPaused(ctx.data.env)) return;
  // Already stored (relays announce the same post again, several relays the same post): nothing fetched.
  if (await ctx.data.d.get(sql`SELECT 1 FROM statuses WHERE uri = ${id.href}`)) return;
  const base = ctx.canonicalOrigin;
  const loader = freshDocumentLoader(ctx.data.env);
  let want = id.href;
  let object = await ctx.lookupObject(want, { documentLoader: loader }).catch(() => null);
  // A relay may name the Create rather than the post: its object, fetched too (from the same origin).
  if (object instanceof Activity && object.id?.href === want && object.objectId?.origin === id.origin) {
    want = object.objectId.href;
    object = await ctx.lookupObject(want, { documentLoader: loader }).catch(() => null);
  }
  // Only the document served at the id fetched (storeFetchedStatus checks its author lives there too).
  if (!isPostLike(object) || object.id?.href !== want) return;
  const r = resolveEnv(ctx.data.env, base, new URL(base).host, (e) => after(ctx, e));
  await storeFetchedStatus(r, object, { relayed: true });
}

/**
 * A relay's answer to the instance actor's Follow of it (the Follow embedded, or its id): the relay's row updated.
 * True when the Follow was a relay's (nothing else to do).
 */
export async function relayAnswer(
  ctx: InboxContext<FederationData>,
  activity: Accept | Reject,
  from: AccountRow,
  state: "accepted" | "rejected",
): Promise<boolean> {
  const object = await embedded((o) => activity.getObject(o));
  const uri = object instanceof Follow ? object.id?.href : object ? undefined : activity.objectId?.href;
  if (!uri || !uri.startsWith(`${instanceActorUri(ctx.canonicalOrigin)}#relays/`)) return false;
  await answerRelayFollow(ctx.data.d, from, uri, state);
  return true;
}

/** A followed relay follows the instance actor (LitePub relays do): accepted. Anyone else's Follow of it: dropped. */
export async function relayFollowBack(ctx: InboxContext<FederationData>, follow: Follow): Promise<void> {
  const from = await sender(ctx, follow);
  const inbox = from?.sharedInboxUrl ?? from?.inboxUrl;
  const adminId = from && inbox ? await relayActingAdmin(ctx.data.d) : null;
  if (!from || !inbox || !adminId) return dropped(follow, "Follow of the instance actor");
  // Its Accept is queued in the outbox; the inbox's door sends it (federation/door/handle.ts).
  if (!(await relayFollowsBack(ctx.data.d, from.uri, from.inboxUrl ?? inbox, follow.id!.href, adminId)))
    dropped(follow, "Follow of the instance actor by no relay followed here");
}
