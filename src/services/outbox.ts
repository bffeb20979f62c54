/**
 * The transactional outbox: what a local account sends to other servers is written as a `federation_outbox` row
 * in the **same D1 batch** as the action, so an action is never stored without its delivery nor delivered without
 * being stored. Rows describe the activity (`OutboxActivity`); building the ActivityStreams document, choosing
 * the inboxes and delivering happen later, off the request path (src/federation/delivery.ts).
 *
 * The insert is conditional, decided by SQL inside the batch: a row is written only when the activity has a
 * remote audience (services/audience.ts, the same rule the expansion sends by), so an island instance writes
 * nothing.
 */
import { sql, type SQL } from "drizzle-orm";
import { newId } from "../db/ids";
import { statement, type DB } from "../db/client";
import type { Visibility } from "../db/schema";
import { hasAudience } from "./audience";
import type { Effects } from "./effects";

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
  | { type: "UpdateActor" }
  /** A chat message to its remote recipient (Pleroma's `Create` of a `ChatMessage`, to that one actor). */
  | { type: "ChatMessage"; messageId: string; recipientId: string }
  /** A deleted chat message: its id (the object's uri derives from it) and its remote recipient. */
  | { type: "DeleteChatMessage"; messageId: string; recipientId: string }
  /** The local account is being deleted: a Delete of the actor to its remote followers and the remote accounts it follows. */
  | { type: "DeleteActor" }
  /** The account moved to `targetId` (its new account): a Move to its remote followers. */
  | { type: "Move"; targetId: string }
  /** A vote (one choice, `poll_votes` row) in a remote poll: a Create{Note} to the poll's author. */
  | { type: "Vote"; voteId: string }
  /** A local poll's tallies changed (a remote vote, the end): Update{Question} to its audience and remote voters. */
  | { type: "UpdatePoll"; statusId: string }
  /** A block of a remote account (`uri`: the block row's activity id), and its withdrawal. */
  | { type: "Block" | "UndoBlock"; uri: string; targetId: string }
  /**
   * A report forwarded to the reported remote account's server, sent (and signed) by the instance actor, not the
   * reporter (`SIGNED_BY_INSTANCE`): `objectUris` are the reported statuses' ids, `reportId` names the Flag.
   */
  | { type: "Flag"; reportId: string; targetId: string; objectUris: string[]; comment: string }
  /** A favourite of a remote status (`uri`: the favourite's id), to its author alone (as Mastodon sends it). */
  | { type: "Like" | "UndoLike"; uri: string; objectUri: string; targetId: string }
  /**
   * An emoji reaction to a remote status, to its author (Pleroma's `EmojiReact`): `emoji` a unicode emoji or a
   * local custom emoji's shortcode, `emojiFile` that emoji's file (null for unicode).
   */
  | {
      type: "EmojiReact" | "UndoEmojiReact";
      uri: string;
      objectUri: string;
      targetId: string;
      emoji: string;
      emojiFile: string | null;
    }
  /** A reblog (public or unlisted): an Announce to the reblogger's followers and the original's author. */
  | { type: "Announce"; statusId: string }
  /** A reblog withdrawn: its uri and audience as they were. */
  | { type: "UndoAnnounce"; uri: string; objectUri: string; visibility: Visibility; originalAuthorId: string }
  /** A status pinned (`Add` to the featured collection) or unpinned (`Remove`): its uri, to its author's followers. */
  | { type: "AddFeatured" | "RemoveFeatured"; statusId: string; uri: string }
  /**
   * The instance actor follows a relay, or stops (`uri`: the Follow's id; `object`: the relay's actor, or the
   * public collection for a Mastodon-style relay), to the relay's inbox, which the row carries (it outlives the
   * relay's row).
   */
  | { type: "RelayFollow" | "RelayUndo"; uri: string; inbox: string; object: string }
  /** The instance actor accepts a followed relay's Follow of it (`uri`: their Follow's id; `actor`: the relay). */
  | { type: "RelayAccept"; uri: string; inbox: string; actor: string };

/** Activities sent as the instance actor (its id, its key) whichever local account's action wrote them. */
export const SIGNED_BY_INSTANCE: ReadonlySet<OutboxActivity["type"]> = new Set([
  "Flag",
  "RelayFollow",
  "RelayUndo",
  "RelayAccept",
]);

/** A delivery is given up once its next try would fall later than this after it was written (delivery.ts). */
export const GIVE_UP_MS = 2 * 24 * 3600_000;

export interface OutboxWriteOptions {
  /** A further condition (e.g. "the request was really created"), evaluated in the batch. */
  onlyIf?: SQL;
  /**
   * The activity's `uri` read by the batch itself (e.g. the Follow's id of a row the same batch deletes; put the
   * write before the delete): no row is written when it reads NULL.
   */
  uriFrom?: SQL;
}

/**
 * The insert of an outbox row, to put in the action's batch (a D1 statement: it joins drizzle and raw batches).
 * Nothing is written when the activity has no remote audience.
 */
export function outboxWrite(
  d: DB,
  accountId: string,
  activity: OutboxActivity,
  t: number,
  opts: OutboxWriteOptions = {},
): D1PreparedStatement {
  const json = JSON.stringify(activity);
  const value = opts.uriFrom ? sql`json_set(${json}, '$.uri', (${opts.uriFrom}))` : sql`${json}`;
  const conditions = [
    hasAudience(accountId, activity),
    ...(opts.onlyIf ? [opts.onlyIf] : []),
    ...(opts.uriFrom ? [sql`(${opts.uriFrom}) IS NOT NULL`] : []),
  ];
  const write = statement(
    d,
    sql`INSERT INTO federation_outbox (id, account_id, activity, created_at) SELECT ${newId(t)}, ${accountId}, ${value}, ${t} WHERE ${sql.join(conditions, sql` AND `)}`,
  );
  OUTBOX_WRITES.add(write);
  return write;
}

/** The statements `outboxWrite` made, so that a batch's results say whether one of them wrote a row. */
const OUTBOX_WRITES = new WeakSet<D1PreparedStatement>();

/**
 * What follows a batch from its own results: `federate` when one of its outbox inserts wrote a row, so it can be
 * neither forgotten nor claimed when the audience gate wrote nothing.
 */
export function federateFrom(statements: D1PreparedStatement[], results: D1Result[]): Effects {
  return statements.some((s, i) => OUTBOX_WRITES.has(s) && (results[i]?.meta?.changes ?? 0) > 0)
    ? { federate: true }
    : {};
}

/** Sends a batch of D1 statements; answers its results and what follows from them (`federateFrom`). */
export async function outboxBatch(
  d: DB,
  statements: D1PreparedStatement[],
): Promise<{ results: D1Result[]; effects: Effects }> {
  const results = await d.$client.batch(statements);
  return { results, effects: federateFrom(statements, results) };
}
