/**
 * Blocks of local accounts by remote actors (`Block`, `Undo{Block}`), kept as Mastodon keeps them: a `blocks`
 * row remote → local. The row is what the rules read: delivery expansion leaves the blocker out of a blocked
 * author's audience (federation/delivery/), the one visibility rule hides the author's statuses from it when it
 * fetches them signed, and the local account can no longer follow it (`blocked_by`).
 */
import { and, eq, or } from "drizzle-orm";
import type { DB } from "../db/client";
import { mixedBatch, now } from "../db/client";
import { newId } from "../db/ids";
import { blocks } from "../db/schema";
import type { AccountRow } from "./accounts";
import { followUri, severTies } from "./graph-rows";
import { unnotify } from "./notifications";
import { outboxWrite } from "./outbox";

/**
 * `from` (remote) blocks `target` (local): the block is stored (with the Block's id, for its Undo) and every
 * tie between them ends, as for a local block (`severTies`): follows and requests both ways (the local one's
 * withdrawal sent to the blocker's server, as Mastodon's UnfollowService does), subscriptions, endorsements,
 * lists, and the follow notifications. One batch; a repeated Block changes nothing more.
 */
export async function receiveBlock(
  d: DB,
  from: AccountRow,
  target: AccountRow,
  uri: string | null,
  t: number = now(),
): Promise<void> {
  await mixedBatch(d, [
    // Any uniqueness conflict (the pair blocked already, or the id reused) leaves the stored block as it is.
    d
      .insert(blocks)
      .values({ id: newId(t), accountId: from.id, targetAccountId: target.id, createdAt: t, uri })
      .onConflictDoNothing(),
    outboxWrite(d, target.id, { type: "Undo", object: "Follow", uri: "", targetId: from.id }, t, {
      uriFrom: followUri(target.id, from.id),
    }),
    ...severTies(d, target.id, from.id),
    unnotify(d, { type: "follow", to: target.id, from: from.id }),
    unnotify(d, { type: "follow_request", to: target.id, from: from.id }),
  ]);
}

/**
 * `from` withdraws its block: the one its Block's id names, or (an Undo embedding the Block without an id
 * stored here) its block of `targetId`. Only its own blocks; none: nothing happens.
 */
export async function receiveUndoBlock(
  d: DB,
  from: AccountRow,
  ref: { uri: string | null; targetId: string | null },
): Promise<void> {
  const which = [
    ref.uri ? eq(blocks.uri, ref.uri) : null,
    ref.targetId ? eq(blocks.targetAccountId, ref.targetId) : null,
  ].filter((c) => c !== null);
  if (which.length === 0) return;
  await d.delete(blocks).where(and(eq(blocks.accountId, from.id), or(...which)));
}
