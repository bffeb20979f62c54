/** The outbox's vocabulary: what a `federation_outbox` row says to send (services/outbox.ts writes them). */
import type { InteractionKind, Visibility } from "../db/schema";

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
  /** Asking a remote author to approve a local quote (`statusId`) of their post `objectUri` (FEP-044f). */
  | { type: "QuoteRequest"; uri: string; statusId: string; objectUri: string; targetId: string }
  /**
   * Answering a remote `QuoteRequest` (`uri`: its id) of the local post `objectUri` by the post `instrument`;
   * `result`: the stamp an Accept hands over (null for a Reject).
   */
  | {
      type: "QuoteAccept" | "QuoteReject";
      uri: string;
      objectUri: string;
      instrument: string;
      requesterId: string;
      result: string | null;
    }
  /** An approval withdrawn: a `Delete` of its stamp (`uri`), to the quoting author. */
  | { type: "DeleteQuoteAuthorization"; uri: string; targetId: string }
  /**
   * Answering a remote GoToSocial-style polite request (`LikeRequest`, `ReplyRequest`, `AnnounceRequest`; id
   * `requestUri`) of the local post `objectUri` by the interaction `instrument`: an Accept handing over the
   * authorization `uri` this instance serves (services/interaction-requests.ts), or a Reject (`uri`: the request's).
   */
  | {
      type: "InteractionAccept" | "InteractionReject";
      request: "LikeRequest" | "ReplyRequest" | "AnnounceRequest";
      uri: string;
      requestUri: string;
      objectUri: string;
      instrument: string;
      requesterId: string;
    }
  /**
   * Asking a remote author to approve a local interaction with their post `objectUri` (GoToSocial's
   * `ReplyRequest`, `LikeRequest`, `AnnounceRequest`; `uri`: the request's id): `statusId` the reply or the
   * boost, `likeUri` the like's id.
   */
  | {
      type: "InteractionRequest";
      kind: InteractionKind;
      uri: string;
      objectUri: string;
      targetId: string;
      statusId: string | null;
      likeUri: string | null;
    }
  /** The instance actor accepts a followed relay's Follow of it (`uri`: their Follow's id; `actor`: the relay). */
  | { type: "RelayAccept"; uri: string; inbox: string; actor: string };

export type OutboxKind = OutboxActivity["type"];
/** The member of the union whose `type` admits K (some members cover two kinds, e.g. Accept | Reject). */
export type OutboxActivityOf<K extends OutboxKind> = OutboxActivity extends infer A
  ? A extends { type: infer T }
    ? K extends T
      ? A
      : never
    : never
  : never;
