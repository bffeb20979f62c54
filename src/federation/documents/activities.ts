/**
 * ActivityStreams documents of outbox rows (`OutboxActivity`), built once when a row is expanded
 * (src/federation/delivery/) with Fedify's vocabulary: `Create` of a status through `createActivity` (the one
 * status mapping, `notes.ts`), `Delete` with a `Tombstone`, and the follow activities with their stored ids.
 * Addressing is the one rule, `services/addressing.ts`. One builder per kind (`BUILDERS`, an exhaustive table).
 */
import {
  Accept,
  Add,
  Block,
  Delete,
  Flag,
  Follow,
  Move,
  PUBLIC_COLLECTION,
  QuoteRequest,
  Reject,
  Remove,
  Tombstone,
  Undo,
  Update,
  type Activity,
  type Actor,
} from "@fedify/vocab";
import type { OutboxActivity } from "../../services/outbox";
import type { OutboxActivityOf, OutboxKind } from "../../services/outbox-activity";
import { addressing } from "../../services/addressing";
import type { Hydrated } from "../../services/hydrate";
import { interactionRequestActivity } from "./approval-requests";
import { createActivity, statusObject, type NoteContext } from "./notes";
import type { ChatMessageRow } from "../../services/chats";
import type { MediaRow } from "../../services/hydrate";
import { createChatMessage, deleteChatMessage } from "./chat-messages";
import { updatePollActivity, voteActivity, type VoteDoc } from "./polls";
import { instanceActorUri } from "../door/instance-actor";
import { emojiReactActivity, likeActivity, undoAnnounceActivity } from "./interactions";
import { announceActivity } from "./notes";
import { interactionAnswer } from "./interaction-requests";

/** What the documents are built from, read once for a batch of rows. */
export interface ActivitySources {
  nc: NoteContext;
  /** The statuses of Create/Update rows, hydrated (anonymous viewer: visibility is not re-checked here). */
  h: Hydrated;
  parentUris: Map<string, string>;
  /** Accounts named by the rows (actors, targets, followers, addressees): id → uri and nickname. */
  accounts: Map<string, { uri: string; username: string }>;
  /** Actor ids of everyone a list or direct status addresses (members, participants, the replied-to author). */
  listRecipients: Map<string, string[]>;
  /** The chat messages of ChatMessage rows, with their attachments. */
  chatMessages?: Map<string, { message: ChatMessageRow; media: MediaRow | null }>;
  /** The votes of Vote rows (documents/polls.ts). */
  votes?: Map<string, VoteDoc>;
  /** The actor documents of UpdateActor rows' accounts (as served at their ids), by account id. */
  actors?: Map<string, Actor>;
  /** The featured collection of a local actor (by nickname). */
  featuredOf?: (username: string) => URL;
}

const url = (u: string) => new URL(u);

/** The document of one outbox row, or null when its subject is gone (nothing to send). */
export function buildActivity(
  outboxId: string,
  actorId: string,
  a: OutboxActivity,
  src: ActivitySources,
): Activity | null {
  const actor = src.accounts.get(actorId);
  if (!actor) return null;
  const at: BuildAt = { outboxId, actorId, actor, me: url(actor.uri), src };
  return (BUILDERS[a.type] as Builder<OutboxKind>)(a, at);
}

/** What every kind's builder is handed besides its row: the row's id, its actor (loaded) and the sources. */
interface BuildAt {
  outboxId: string;
  actorId: string;
  actor: { uri: string; username: string };
  /** The actor's id as a URL. */
  me: URL;
  src: ActivitySources;
}

type Builder<K extends OutboxKind> = (a: OutboxActivityOf<K>, at: BuildAt) => Activity | null;

/** One builder per outbox kind: a kind added to `OutboxActivity` does not compile until it has its document. */
const BUILDERS: { [K in OutboxKind]: Builder<K> } = {
  Create: (a, at) => statusCreate(a, at),
  Update: (a, at) => statusUpdate(at.actorId, at.me, a, at.src),
  Delete: (a, at) => statusDelete(at.actor, at.me, a, at.src),
  Follow: (a, at) => followActivity(a, at),
  Undo: (a, at) => followActivity(a, at),
  Accept: (a, at) => followAnswer(at.outboxId, at.actor.uri, at.src.accounts.get(a.followerId), a),
  Reject: (a, at) => followAnswer(at.outboxId, at.actor.uri, at.src.accounts.get(a.followerId), a),
  DeleteActor: (_a, at) => actorDelete(at),
  Move: (a, at) => actorMove(a, at),
  UpdateActor: (_a, at) => actorUpdate(at),
  AddFeatured: (a, at) => featuredActivity(a, at),
  RemoveFeatured: (a, at) => featuredActivity(a, at),
  ChatMessage: (a, at) => chatMessage(a, at),
  DeleteChatMessage: (a, at) => chatMessageDelete(a, at),
  Vote: (a, at) => voteActivity(at.actorId, at.actor.uri, at.src.votes?.get(a.voteId)),
  UpdatePoll: (a, at) => pollUpdate(a, at),
  Block: (a, at) => blockActivity(a, at),
  UndoBlock: (a, at) => blockActivity(a, at),
  Flag: (a, at) => flagActivity(a, at),
  Like: (a, at) => like(a, at),
  UndoLike: (a, at) => like(a, at),
  EmojiReact: (a, at) => emojiReact(a, at),
  UndoEmojiReact: (a, at) => emojiReact(a, at),
  Announce: (a, at) => announce(a, at),
  UndoAnnounce: (a, at) => undoAnnounceActivity(at.src.nc, at.actor, at.src.accounts.get(a.originalAuthorId), a),
  RelayFollow: (a, at) => relayFollow(a, at),
  RelayUndo: (a, at) => relayFollow(a, at),
  RelayAccept: (a, at) => relayAccept(a, at),
  QuoteRequest: (a, at) => quoteActivity(at.outboxId, at.actorId, at.actor.uri, a, at.src),
  QuoteAccept: (a, at) => quoteActivity(at.outboxId, at.actorId, at.actor.uri, a, at.src),
  QuoteReject: (a, at) => quoteActivity(at.outboxId, at.actorId, at.actor.uri, a, at.src),
  DeleteQuoteAuthorization: (a, at) => quoteActivity(at.outboxId, at.actorId, at.actor.uri, a, at.src),
  InteractionAccept: (a, at) => interactionAnswer(at.outboxId, at.actor.uri, at.src.accounts.get(a.requesterId), a),
  InteractionReject: (a, at) => interactionAnswer(at.outboxId, at.actor.uri, at.src.accounts.get(a.requesterId), a),
  InteractionRequest: (a, at) => interactionRequestActivity(at.src, at.actorId, at.actor.uri, a),
};

/** The Create of a local status, by its author alone. */
function statusCreate(a: ActivityOf<"Create">, { actorId, src }: BuildAt): Activity | null {
  if (src.h.statuses.get(a.statusId)?.accountId !== actorId) return null;
  return createActivity(src.nc, src.h, src.parentUris, a.statusId, src.listRecipients.get(a.statusId));
}

/** A Follow by its stored id, or its Undo (which embeds it). */
function followActivity(a: ActivityOf<"Follow" | "Undo">, { me, src }: BuildAt): Activity | null {
  const target = src.accounts.get(a.targetId);
  if (!target || !a.uri) return null;
  const follow = new Follow({ id: url(a.uri), actor: me, object: url(target.uri), to: url(target.uri) });
  if (a.type === "Follow") return follow;
  return new Undo({ id: url(`${a.uri}/undo`), actor: me, object: follow, to: url(target.uri) });
}

/** The answer to a remote Follow: their Follow, as they sent it (its id is theirs); ours named after the outbox row. */
function followAnswer(
  outboxId: string,
  actorUri: string,
  follower: { uri: string } | undefined,
  a: ActivityOf<"Accept" | "Reject">,
): Activity | null {
  if (!follower) return null;
  const Answer = a.type === "Accept" ? Accept : Reject;
  return new Answer({
    id: url(`${actorUri}#${a.type.toLowerCase()}s/${outboxId}`),
    actor: url(actorUri),
    object: new Follow({ id: url(a.uri), actor: url(follower.uri), object: url(actorUri) }),
    to: url(follower.uri),
  });
}

/** Pleroma's actor Delete: the actor as its object, public and to its followers (each server drops its copy). */
function actorDelete({ outboxId, actor, me, src }: BuildAt): Activity {
  return new Delete({
    id: url(`${actor.uri}#delete/${outboxId}`),
    actor: me,
    object: me,
    to: PUBLIC_COLLECTION,
    cc: src.nc.followersOf(actor.username),
  });
}

/** An account's Move to its new actor, to its followers. */
function actorMove(a: ActivityOf<"Move">, { outboxId, actor, me, src }: BuildAt): Activity | null {
  const target = src.accounts.get(a.targetId);
  if (!target) return null;
  return new Move({
    id: url(`${actor.uri}#moves/${outboxId}`),
    actor: me,
    object: me,
    target: url(target.uri),
    to: src.nc.followersOf(actor.username),
  });
}

/** The whole actor as served now (Mastodon replaces the stored profile with it), public, to the followers. */
function actorUpdate({ outboxId, actorId, actor, me, src }: BuildAt): Activity | null {
  const object = src.actors?.get(actorId);
  if (!object) return null;
  return new Update({
    id: url(`${actor.uri}#updates/${outboxId}`),
    actor: me,
    published: object.updated,
    to: PUBLIC_COLLECTION,
    cc: src.nc.followersOf(actor.username),
    object,
  });
}

/** Mastodon's pin: the status by its id, the target the actor's featured collection. */
function featuredActivity(
  a: ActivityOf<"AddFeatured" | "RemoveFeatured">,
  { outboxId, actor, me, src }: BuildAt,
): Activity | null {
  if (!src.featuredOf) return null;
  const Activity = a.type === "AddFeatured" ? Add : Remove;
  return new Activity({
    id: url(`${actor.uri}#${a.type === "AddFeatured" ? "pins" : "unpins"}/${outboxId}`),
    actor: me,
    object: url(a.uri),
    target: src.featuredOf(actor.username),
    to: PUBLIC_COLLECTION,
    cc: src.nc.followersOf(actor.username),
  });
}

/** A chat message, by its author alone, to its recipient. */
function chatMessage(a: ActivityOf<"ChatMessage">, { actorId, actor, src }: BuildAt): Activity | null {
  const m = src.chatMessages?.get(a.messageId);
  const to = src.accounts.get(a.recipientId);
  if (!m || !to || m.message.accountId !== actorId) return null;
  return createChatMessage(src.nc, actor.uri, to.uri, m.message, m.media);
}

/** The Delete of a chat message, to its recipient. */
function chatMessageDelete(a: ActivityOf<"DeleteChatMessage">, { actor, src }: BuildAt): Activity | null {
  const to = src.accounts.get(a.recipientId);
  return to ? deleteChatMessage(actor.uri, to.uri, a.messageId) : null;
}

/** A local poll's current tallies, as an `Update{Question}`. */
function pollUpdate(a: ActivityOf<"UpdatePoll">, { outboxId, actorId, actor, src }: BuildAt): Activity | null {
  return updatePollActivity(
    src.nc,
    src.h,
    src.parentUris,
    outboxId,
    actorId,
    actor.uri,
    a.statusId,
    src.listRecipients.get(a.statusId),
  );
}

/** Mastodon's Block: the blocked actor as the object, its id the block row's (the Undo embeds it). */
function blockActivity(a: ActivityOf<"Block" | "UndoBlock">, { me, src }: BuildAt): Activity | null {
  const target = src.accounts.get(a.targetId);
  if (!target || !a.uri) return null;
  const block = new Block({ id: url(a.uri), actor: me, object: url(target.uri), to: url(target.uri) });
  if (a.type === "Block") return block;
  return new Undo({ id: url(`${a.uri}/undo`), actor: me, object: block, to: url(target.uri) });
}

/**
 * A report, as Mastodon forwards it: by the instance actor (the reporter stays unnamed), the account and the
 * reported statuses as objects, the comment as content.
 */
function flagActivity(a: ActivityOf<"Flag">, { src }: BuildAt): Activity | null {
  const target = src.accounts.get(a.targetId);
  if (!target) return null;
  const instance = instanceActorUri(src.nc.base);
  return new Flag({
    id: url(`${instance}#flags/${a.reportId}`),
    actor: url(instance),
    objects: [url(target.uri), ...a.objectUris.map(url)],
    content: a.comment,
    to: url(target.uri),
  });
}

/** A Like or its Undo, to the status's author. */
function like(a: ActivityOf<"Like" | "UndoLike">, { actor, src }: BuildAt): Activity | null {
  const target = src.accounts.get(a.targetId);
  return target ? likeActivity(actor, target, a) : null;
}

/** A Pleroma EmojiReact or its Undo, to the status's author. */
function emojiReact(a: ActivityOf<"EmojiReact" | "UndoEmojiReact">, { actor, src }: BuildAt): Activity | null {
  const target = src.accounts.get(a.targetId);
  return target ? emojiReactActivity(src.nc, actor, target, a) : null;
}

/** The Announce of a reblog, by its booster alone. */
function announce(a: ActivityOf<"Announce">, { actorId, src }: BuildAt): Activity | null {
  if (src.h.statuses.get(a.statusId)?.accountId !== actorId) return null;
  return announceActivity(src.nc, src.h, a.statusId);
}

/** As Mastodon and Pleroma follow relays: by the instance actor, of the relay's actor or of the public collection. */
function relayFollow(a: ActivityOf<"RelayFollow" | "RelayUndo">, { src }: BuildAt): Activity {
  const instance = url(instanceActorUri(src.nc.base));
  const follow = new Follow({ id: url(a.uri), actor: instance, object: url(a.object) });
  return a.type === "RelayFollow" ? follow : new Undo({ id: url(`${a.uri}/undo`), actor: instance, object: follow });
}

/** The instance actor's Accept of a followed relay's Follow of it. */
function relayAccept(a: ActivityOf<"RelayAccept">, { src }: BuildAt): Activity {
  const instance = url(instanceActorUri(src.nc.base));
  return new Accept({
    id: url(`${instance.href}#accepts/${encodeURIComponent(a.uri)}`),
    actor: instance,
    object: new Follow({ id: url(a.uri), actor: url(a.actor), object: instance }),
  });
}

type ActivityOf<K extends OutboxKind> = OutboxActivityOf<K>;

/** The Update of a local status, as it reads now. */
function statusUpdate(actorId: string, me: URL, a: ActivityOf<"Update">, src: ActivitySources): Activity | null {
  const s = src.h.statuses.get(a.statusId);
  if (s?.accountId !== actorId) return null;
  const object = statusObject(src.nc, src.h, src.parentUris, a.statusId, src.listRecipients.get(a.statusId));
  if (!object) return null;
  return new Update({
    id: url(`${s.uri}#updates/${s.editedAt ?? s.createdAt}`),
    actor: me,
    published: object.updated ?? object.published,
    tos: object.toIds,
    ccs: object.ccIds,
    object,
  });
}

/** The Delete of a local status, to the audience it had (its addressees listed in the row). */
function statusDelete(
  actor: { uri: string; username: string },
  me: URL,
  a: ActivityOf<"Delete">,
  src: ActivitySources,
): Activity | null {
  const mentioned = a.recipients.flatMap((id) => src.accounts.get(id)?.uri ?? []);
  const to = addressing({
    visibility: a.visibility,
    followers: src.nc.followersOf(actor.username).href,
    mentioned,
    recipients: mentioned,
  });
  if (!to) return null;
  return new Delete({
    id: url(`${a.uri}#delete`),
    actor: me,
    object: new Tombstone({ id: url(a.uri) }),
    tos: to.to.map(url),
    ccs: to.cc.map(url),
  });
}

/** FEP-044f's quote activities: a request for a quote, its answer with the stamp, the stamp's withdrawal. */
function quoteActivity(
  outboxId: string,
  actorId: string,
  actorUri: string,
  a: ActivityOf<"QuoteRequest" | "QuoteAccept" | "QuoteReject" | "DeleteQuoteAuthorization">,
  src: ActivitySources,
): Activity | null {
  const me = url(actorUri);
  switch (a.type) {
    case "QuoteRequest": {
      // Mastodon 4.5's: the quoted post as `object`, the quoting post embedded as `instrument`.
      const target = src.accounts.get(a.targetId);
      if (!target || src.h.statuses.get(a.statusId)?.accountId !== actorId) return null;
      // Embedded only when anyone may read it; a narrower quote is named by id (its author's server decides).
      const s = src.h.statuses.get(a.statusId)!;
      // A local-only quote asks nobody (services/quotes.ts writes no request for it; an older row stays here).
      if (s.visibility === "local") return null;
      const open = s.visibility === "public" || s.visibility === "unlisted";
      const instrument = open ? statusObject(src.nc, src.h, src.parentUris, a.statusId) : url(s.uri);
      if (!instrument) return null;
      return new QuoteRequest({
        id: url(a.uri),
        actor: me,
        object: url(a.objectUri),
        instrument,
        to: url(target.uri),
      });
    }
    case "QuoteAccept":
    case "QuoteReject": {
      const requester = src.accounts.get(a.requesterId);
      if (!requester) return null;
      const Answer = a.type === "QuoteAccept" ? Accept : Reject;
      return new Answer({
        id: url(`${actorUri}#${a.type === "QuoteAccept" ? "accepts" : "rejects"}/quote_requests/${outboxId}`),
        actor: me,
        object: new QuoteRequest({
          id: url(a.uri),
          actor: url(requester.uri),
          object: url(a.objectUri),
          instrument: url(a.instrument),
        }),
        result: a.result ? url(a.result) : null,
        to: url(requester.uri),
      });
    }
    case "DeleteQuoteAuthorization": {
      const target = src.accounts.get(a.targetId);
      if (!target) return null;
      return new Delete({ id: url(`${a.uri}#delete`), actor: me, object: url(a.uri), to: url(target.uri) });
    }
  }
}
