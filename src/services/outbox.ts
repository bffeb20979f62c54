/**
 * The transactional outbox: what a local account sends to other servers is written as a `federation_outbox` row
 * in the **same D1 batch** as the action, so an action is never stored without its delivery nor delivered without
 * being stored. Rows describe the activity (`OutboxActivity`); building the ActivityStreams document, choosing
 * the inboxes and delivering happen later, off the request path (src/federation/delivery.ts).
 *
 * The insert is conditional, decided by SQL inside the batch: a row is written only when the activity has a
 * remote audience (a remote follower, a remote addressee, a remote target), so an island instance writes nothing.
 */
import { sql, type SQL } from "drizzle-orm";
import { newId } from "../db/ids";
import { statement, type DB } from "../db/client";
import type { Visibility } from "../db/schema";

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
  | { type: "AddFeatured" | "RemoveFeatured"; statusId: string; uri: string };

/** Activities sent as the instance actor (its id, its key) whichever local account's action wrote them. */
export const SIGNED_BY_INSTANCE: ReadonlySet<OutboxActivity["type"]> = new Set(["Flag"]);

/** Visibilities whose statuses go to the author's followers (direct and list: only to those addressed). */
export const TO_FOLLOWERS: readonly Visibility[] = ["public", "unlisted", "private"];

const isRemote = (id: string | SQL) => sql`EXISTS (SELECT 1 FROM accounts WHERE id = ${id} AND domain IS NOT NULL)`;
const hasRemoteFollower = (accountId: string) =>
  sql`EXISTS (SELECT 1 FROM follows f JOIN accounts a ON a.id = f.account_id WHERE f.target_account_id = ${accountId} AND a.domain IS NOT NULL)`;
const hasRemoteFollowee = (accountId: string) =>
  sql`EXISTS (SELECT 1 FROM follows f JOIN accounts a ON a.id = f.target_account_id WHERE f.account_id = ${accountId} AND a.domain IS NOT NULL)`;
const followerVisibilities = sql.raw(TO_FOLLOWERS.map((v) => `'${v}'`).join(", "));

/** Whether the activity has anyone to go to, as SQL evaluated inside the action's batch (after its writes). */
function audience(accountId: string, a: OutboxActivity): SQL {
  switch (a.type) {
    case "Create":
    case "Update":
      // The status as written by the same batch: local, not local-only, and followers or addressees remote.
      return sql`EXISTS (SELECT 1 FROM statuses s WHERE s.id = ${a.statusId} AND s.local = 1 AND s.reblog_of_id IS NULL AND s.visibility <> 'local'
        AND ((s.visibility IN (${followerVisibilities}) AND ${hasRemoteFollower(accountId)})
          OR EXISTS (SELECT 1 FROM status_recipients r JOIN accounts ra ON ra.id = r.account_id WHERE r.status_id = s.id AND ra.domain IS NOT NULL)))`;
    case "Delete":
      if (a.visibility === "local") return sql`0`;
      return sql`((${TO_FOLLOWERS.includes(a.visibility) ? 1 : 0} AND ${hasRemoteFollower(accountId)})
        OR EXISTS (SELECT 1 FROM accounts WHERE id IN (SELECT value FROM json_each(${JSON.stringify(a.recipients)})) AND domain IS NOT NULL))`;
    case "Follow":
    case "Undo":
      return isRemote(a.targetId);
    case "Accept":
    case "Reject":
      return isRemote(a.followerId);
    case "UpdateActor":
    case "Move":
      return hasRemoteFollower(accountId);
    case "AddFeatured":
    case "RemoveFeatured":
      return sql`(EXISTS (SELECT 1 FROM statuses WHERE id = ${a.statusId} AND local = 1 AND visibility IN ('public', 'unlisted')) AND ${hasRemoteFollower(accountId)})`;
    case "ChatMessage":
    case "DeleteChatMessage":
      return isRemote(a.recipientId);
    case "DeleteActor":
      return sql`(${hasRemoteFollower(accountId)} OR ${hasRemoteFollowee(accountId)})`;
    case "Vote":
      return sql`EXISTS (SELECT 1 FROM poll_votes v JOIN polls p ON p.id = v.poll_id JOIN statuses s ON s.id = p.status_id JOIN accounts a ON a.id = s.account_id
        WHERE v.id = ${a.voteId} AND a.domain IS NOT NULL)`;
    case "UpdatePoll":
      // As its Create's audience, plus the remote voters and rebloggers (who may not follow the author), as the
      // expansion in federation/delivery.ts sends it.
      return sql`EXISTS (SELECT 1 FROM statuses s WHERE s.id = ${a.statusId} AND s.local = 1 AND s.visibility <> 'local'
        AND ((s.visibility IN (${followerVisibilities}) AND ${hasRemoteFollower(accountId)})
          OR EXISTS (SELECT 1 FROM status_recipients r JOIN accounts ra ON ra.id = r.account_id WHERE r.status_id = s.id AND ra.domain IS NOT NULL)
          OR EXISTS (SELECT 1 FROM polls p JOIN poll_votes v ON v.poll_id = p.id JOIN accounts va ON va.id = v.account_id WHERE p.status_id = s.id AND va.domain IS NOT NULL)
          OR EXISTS (SELECT 1 FROM statuses rb JOIN accounts rba ON rba.id = rb.account_id WHERE rb.reblog_of_id = s.id AND rba.domain IS NOT NULL)))`;
    case "Block":
    case "UndoBlock":
    case "Flag":
      return isRemote(a.targetId);
    case "Like":
    case "UndoLike":
    case "EmojiReact":
    case "UndoEmojiReact":
      return isRemote(a.targetId);
    case "Announce":
      // Never a private, direct or local-only status; to remote followers and a remote original author.
      return sql`EXISTS (SELECT 1 FROM statuses r JOIN statuses o ON o.id = r.reblog_of_id WHERE r.id = ${a.statusId} AND r.local = 1
        AND r.visibility IN ('public', 'unlisted') AND o.visibility IN ('public', 'unlisted')
        AND (${hasRemoteFollower(accountId)} OR ${isRemote(sql`o.account_id`)}))`;
    case "UndoAnnounce":
      if (a.visibility !== "public" && a.visibility !== "unlisted") return sql`0`;
      return sql`(${hasRemoteFollower(accountId)} OR ${isRemote(a.originalAuthorId)})`;
  }
}

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
    audience(accountId, activity),
    ...(opts.onlyIf ? [opts.onlyIf] : []),
    ...(opts.uriFrom ? [sql`(${opts.uriFrom}) IS NOT NULL`] : []),
  ];
  return statement(
    d,
    sql`INSERT INTO federation_outbox (id, account_id, activity, created_at) SELECT ${newId(t)}, ${accountId}, ${value}, ${t} WHERE ${sql.join(conditions, sql` AND `)}`,
  );
}
