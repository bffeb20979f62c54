/**
 * Group posts (Lemmy, Mbin, PeerTube channels…): a `Group` actor distributes what its members post to it as an
 * `Announce` of their `Create` (Lemmy's FEP-1b12 way). When a local account follows the group, the post is
 * stored as its author's status and put in the home feeds of the group's local followers (by the group, as a
 * boost is by its booster). Nothing embedded is trusted: the post is fetched from its id, must be attributed to
 * an actor on its own origin, and must be addressed to the group (its `to`, `cc` or `audience`).
 *
 * Self-contained on purpose: the Announce listener (boosts) calls `receiveGroupAnnounce` first and handles the
 * announce itself when it answers false.
 */
import { Activity, Announce, Create, isActor, type Object as APObject } from "@fedify/vocab";
import type { InboxContext } from "@fedify/fedify";
import { sql } from "drizzle-orm";
import { statement } from "../../db/client";
import { config } from "../../env";
import { accountByUri, isStale } from "../../services/remote-accounts";
import { upsertActor } from "../documents/parse-actor";
import type { AccountRow } from "../../services/accounts";
import { storeRemoteNote } from "../../services/remote-statuses";
import { parseNote, type RemoteObject } from "../documents/parse-note";
import { applyNotePolicies, rejectedHost } from "../../services/federation-policies";
import { runEffects } from "../../effects";
import { embeddedOnly } from "../door/loaders";
import { isPostLike, typeName } from "../documents/object-types";
import type { FederationData } from "../data";

const log = (what: string, announce: Announce) =>
  console.log(`inbox: group announce dropped (${what})`, announce.id?.href ?? "");

/** A remote actor stored (fetched when unknown or stale); null when it is not an actor with that id, or local. */
async function remoteActor(ctx: InboxContext<FederationData>, uri: string): Promise<AccountRow | null> {
  const d = ctx.data.d;
  const known = await accountByUri(d, uri);
  if (known && known.domain === null) return null;
  if (known && !isStale(known)) return known;
  const actor = await ctx.lookupObject(uri).catch(() => null);
  if (!actor || !isActor(actor) || actor.id?.href !== uri) return known;
  return upsertActor(d, actor);
}

/**
 * Handles `announce` when its sender `group` is a Group and it announces a Create: answers true when it was a
 * group post (stored or dropped for a reason), false when it is not one (a boost: the caller's).
 */
export async function receiveGroupAnnounce(
  ctx: InboxContext<FederationData>,
  announce: Announce,
  group: AccountRow,
): Promise<boolean> {
  if (group.actorType !== "Group") return false;
  let inner: APObject | null = null;
  try {
    inner = await announce.getObject({ documentLoader: embeddedOnly });
  } catch {
    inner = null;
  }
  // Groups also relay their members' likes, votes, updates and deletes as Announces of those activities: not
  // boosts of a post, so none is fetched (handling them is not done: a moderator's delete stays here).
  if (inner instanceof Activity && !(inner instanceof Create))
    return (log(`an announced ${typeName(inner)}`, announce), true);
  if (!(inner instanceof Create)) return false;
  const d = ctx.data.d;
  // Worth a fetch only when someone here follows the group.
  const followed = await d.get<{ n: number }>(
    sql`SELECT 1 AS n FROM follows f JOIN accounts a ON a.id = f.account_id AND a.domain IS NULL WHERE f.target_account_id = ${group.id} LIMIT 1`,
  );
  if (!followed) return (log("nobody here follows the group", announce), true);
  const id = inner.objectId;
  if (!id) return (log("no object id", announce), true);
  const object = await ctx.lookupObject(id.href).catch(() => null);
  if (!isPostLike(object) || object.id?.href !== id.href)
    return (log(`not a post: ${typeName(object as APObject | null)}`, announce), true);
  const authorUri = object.attributionId?.href;
  if (!authorUri || new URL(authorUri).origin !== id.origin)
    return (log("not attributed to an actor of its origin", announce), true);
  const addressed = [...object.toIds, ...object.ccIds, ...object.audienceIds].some((u) => u.href === group.uri);
  if (!addressed) return (log("not addressed to the group", announce), true);
  if (rejectedHost(d, new URL(authorUri).hostname)) return (log("author's domain rejected", announce), true);
  const author = await remoteActor(ctx, authorUri);
  if (!author || author.deactivated) return (log("author unknown", announce), true);
  const note = applyNotePolicies(d, author.domain!, await parseNote(object as RemoteObject, author, author.domain!));
  if (note.visibility !== "public" && note.visibility !== "unlisted")
    return (log(`a ${note.visibility} post`, announce), true);
  const base = ctx.canonicalOrigin;
  // The group's local followers see it in their home, brought by the group as a boost is by its booster: in the
  // status's own batch, and again when it was stored already (another group's announce, an earlier delivery).
  const fanOut = statement(
    d,
    sql`INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id)
      SELECT f.account_id, s.id, ${group.id} FROM statuses s
        JOIN follows f ON f.target_account_id = ${group.id}
        JOIN accounts a ON a.id = f.account_id AND a.domain IS NULL
      WHERE s.uri = ${note.uri} AND s.account_id = ${author.id}`,
  );
  const stored = await storeRemoteNote(d, author, note, {
    inlineFanoutMax: config(ctx.data.env).inlineFanoutMax,
    base,
    requested: true,
    extra: [fanOut],
  });
  if (!stored.stored) await d.$client.batch([fanOut]);
  else if (ctx.data.exec) runEffects(ctx.data.env, ctx.data.exec, base, stored.effects);
  return true;
}
