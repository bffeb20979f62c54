/**
 * The transactional outbox: what a local account sends to other servers is written as a `federation_outbox` row
 * in the **same D1 batch** as the action, so an action is never stored without its delivery nor delivered without
 * being stored. Rows describe the activity (`OutboxActivity`); building the ActivityStreams document, choosing
 * the inboxes and delivering happen later, off the request path (src/federation/delivery.ts).
 */
import { newId } from "../db/ids";
import type { DB } from "../db/client";
import { federationOutbox, type Visibility } from "../db/schema";

/**
 * What to send. Rows that outlive their subject (a deleted status, an undone follow) carry what the document
 * and its audience need; the rest are built from the current rows when expanded.
 */
export type OutboxActivity =
  /** A new local status (to followers by visibility and to the remote accounts it addresses). */
  | { type: "Create"; statusId: string }
  /** An edited status, to the same audience as its Create. */
  | { type: "Update"; statusId: string }
  /** A deleted status: its uri and audience as they were (remote account ids it addressed). */
  | { type: "Delete"; statusId: string; uri: string; visibility: Visibility; recipients: string[] }
  /** A follow (or follow request) of a remote account; `uri` is the row's activity id. */
  | { type: "Follow"; uri: string; targetId: string }
  /** Withdrawing a follow or a follow request (`uri`: the Follow's id). */
  | { type: "Undo"; object: "Follow"; uri: string; targetId: string }
  /** Answering a remote account's Follow (`uri`: their Follow's id). */
  | { type: "Accept" | "Reject"; uri: string; followerId: string }
  /** The local account's profile changed: the actor document to its followers. */
  | { type: "UpdateActor" };

/** The insert of an outbox row, to put in the action's batch. */
export function outboxWrite(d: DB, accountId: string, activity: OutboxActivity, t: number) {
  return d.insert(federationOutbox).values({ id: newId(t), accountId, activity: JSON.stringify(activity), createdAt: t });
}
