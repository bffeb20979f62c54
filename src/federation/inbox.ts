/**
 * The inbox listeners (issue 13, part 1): Follow, Accept(Follow), Reject(Follow), Undo(Follow), and Create /
 * Update / Delete of notes. Fedify has verified the request's signature and that its key belongs to the
 * activity's `actor` before any listener runs (else 401, nothing stored). Listeners trust only that: the sender
 * is stored with `upsertActor` from its own document (fetched through the guarded loader), an object is taken as
 * the sender's only when its `attributedTo` is the sender and it lives on the sender's origin (otherwise it is
 * fetched from its id and checked again), and updates and deletes apply only to the sender's own statuses.
 *
 * Part 2 (issue 18): likes, reactions, boosts (interaction-listeners.ts), blocks and flags (inbound-safety.ts),
 * actor updates and pins (inbound-profile.ts), poll votes (poll-votes.ts). Notes include the other object types shown as statuses (pages, videos, events…: federation/object-types.ts),
 * and a Group's Announce of a Create is its members' post (federation/group-announce.ts). An activity type no
 * listener handles, or a Create of an object type Starling does not show, is acknowledged (202), logged and
 * dropped, as is an Undo, Update, Accept or Reject of an object it has no use for.
 */
import type { Federation, FederationBuilder, InboxContext } from "@fedify/fedify";
import { sql } from "drizzle-orm";
import {
  Accept,
  Activity,
  Add,
  Block,
  ChatMessage,
  Create,
  Delete,
  Flag,
  Follow,
  isActor,
  Move,
  Question,
  Reject,
  Remove,
  Undo,
  Update,
  type Object as APObject,
} from "@fedify/vocab";
import { Announce, EmojiReact, Like } from "@fedify/vocab";
import { onAnnounce, onEmojiReact, onLike, onUndoInteraction } from "./interaction-listeners";
import { receiveUndoInteraction } from "../services/inbound-interactions";
import { config } from "../env";
import { accountByUri } from "../services/remote-accounts";
import { upsertActor } from "./actors";
import type { AccountRow } from "../services/accounts";
import { receiveAccept, receiveFollow, receiveReject, receiveUndoFollow } from "../services/inbound-follows";
import { authoredStatus, storeRemoteNote, unknownMentions, updateRemoteNote } from "../services/remote-statuses";
import { parseNote, type RemoteObject } from "./parse-note";
import { embeddedOnly } from "./loaders";
import { applyNotePolicies } from "../services/federation-policies";
import { deleteStatuses } from "../services/statuses";
import { receiveActorDelete } from "../services/account-deletion";
import { moveAccount } from "../services/move";
import { resolveAccount, resolveEnv } from "./resolve";
import type { FederationData } from "./index";
import { parseChatMessage } from "./chat-messages";
import { receiveChatMessage, receiveChatMessageDelete } from "../services/chats";
import { receiveVoteActivity, voteShape } from "./poll-votes";
import { isEditOf, updateRemoteTallies } from "../services/remote-polls";
import { after, isNoteLike, localAccountAt, sender } from "./inbox-context";
import { onBlock, onFlag, onUndoBlock } from "./inbound-safety";
import { receiveUndoBlock } from "../services/inbound-blocks";
import { receiveActorUpdate, receiveFeatured } from "./inbound-profile";
import { receiveGroupAnnounce } from "./group-announce";
import { isRelayKey, receiveRelayAnnounce } from "./relays";
import { instanceActorUri } from "./instance-actor";
import {
  anyRelay,
  answerRelayFollow,
  relayActingAdmin,
  relayFollowsBack,
  relayUnfollowsBack,
} from "../services/relays";

/**
 * An activity (or an object type) Starling has no use for: acknowledged (202) and dropped, as Mastodon and
 * Pleroma do, so the sender does not retry it; logged with its type.
 */
function dropped(activity: Activity, what: string): void {
  console.log(`inbox: dropped ${what}`, activity.id?.href ?? "", "from", activity.actorId?.href ?? "");
}

async function embedded(
  get: (o: { documentLoader: typeof embeddedOnly }) => Promise<APObject | null>,
): Promise<APObject | null> {
  try {
    return await get({ documentLoader: embeddedOnly });
  } catch {
    return null;
  }
}

/**
 * The object of a Create/Update as the sender's own: embedded and attributed to the sender on its origin, or
 * else fetched from its id (through the guarded loader) and checked again. Null when it is not the sender's.
 */
async function ownObject(
  ctx: InboxContext<FederationData>,
  activity: Create | Update,
  from: AccountRow,
): Promise<RemoteObject | "unhandled" | null> {
  const sameOrigin = (u: URL | null) => u !== null && u.origin === new URL(from.uri).origin;
  let object: APObject | null = await embedded((o) => activity.getObject(o));
  if (object && !isNoteLike(object)) return "unhandled";
  if (!object || object.attributionId?.href !== from.uri || !sameOrigin(object.id)) {
    const id = object?.id ?? activity.objectId;
    if (!id) return null;
    object = await ctx.lookupObject(id.href).catch(() => null);
    if (object && !isNoteLike(object)) return "unhandled";
  }
  if (!object || object.attributionId?.href !== from.uri || !sameOrigin(object.id)) return null;
  return object as RemoteObject;
}

export function registerInbox(builder: FederationBuilder<FederationData> | Federation<FederationData>) {
  builder
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ctx, follow) => {
      // A Follow of nobody here (or without an id to answer) is acknowledged and dropped, its sender not fetched.
      const target = await localAccountAt(ctx, follow.objectId);
      if (follow.id && follow.objectId?.href === instanceActorUri(ctx.canonicalOrigin))
        return relayFollowBack(ctx, follow);
      if (!target || !follow.id) return;
      const from = await sender(ctx, follow);
      if (!from) return;
      after(ctx, await receiveFollow(ctx.data.d, from, target, follow.id.href));
    })
    .on(Accept, async (ctx, accept) => {
      const from = await sender(ctx, accept);
      if (!from || (await relayAnswer(ctx, accept, from, "accepted"))) return;
      const ref = await followRef(ctx, accept, from);
      if (ref) after(ctx, await receiveAccept(ctx.data.d, from, ref));
    })
    .on(Reject, async (ctx, reject) => {
      const from = await sender(ctx, reject);
      if (!from || (await relayAnswer(ctx, reject, from, "rejected"))) return;
      const ref = await followRef(ctx, reject, from);
      if (ref) after(ctx, await receiveReject(ctx.data.d, from, ref));
    })
    .on(Undo, async (ctx, undo) => {
      const object = await embedded((o) => undo.getObject(o));
      if (object instanceof Block) return onUndoBlock(ctx, undo, object);
      if (object instanceof Like || object instanceof EmojiReact || object instanceof Announce)
        return onUndoInteraction(ctx, undo, object);
      if (object && !(object instanceof Follow)) return dropped(undo, `Undo(${object.constructor.name})`);
      const from = await sender(ctx, undo);
      if (!from) return;
      if (object instanceof Follow) {
        // Only the follower can withdraw its Follow.
        if (object.actorId?.href !== from.uri) return;
        // A relay no longer following the instance actor back.
        if (object.objectId?.href === instanceActorUri(ctx.canonicalOrigin))
          return relayUnfollowsBack(ctx.data.d, from.uri);
        const target = await localAccountAt(ctx, object.objectId);
        after(
          ctx,
          await receiveUndoFollow(ctx.data.d, from, { uri: object.id?.href ?? null, targetId: target?.id ?? null }),
        );
      } else if (undo.objectId) {
        // Only an id: whichever of the sender's follows, blocks, favourites, reactions or reblogs it names.
        after(ctx, await receiveUndoFollow(ctx.data.d, from, { uri: undo.objectId.href, targetId: null }));
        await receiveUndoBlock(ctx.data.d, from, { uri: undo.objectId.href, targetId: null });
        after(ctx, await receiveUndoInteraction(ctx.data.d, from, undo.objectId.href));
      }
    })
    .on(Like, onLike)
    .on(EmojiReact, onEmojiReact)
    .on(Create, async (ctx, create) => {
      const from = await sender(ctx, create);
      // A deleted (deactivated) actor's late activities are not stored: its deletion job would not come back for them.
      if (!from || from.deactivated) return;
      // Pleroma's chat messages (embedded, the sender's own on its origin) land in the chat through its ChatRoom.
      const chat = await embedded((o) => create.getObject(o));
      if (chat instanceof ChatMessage) {
        if (chat.attributionId?.href !== from.uri || !chat.id || chat.id.origin !== new URL(from.uri).origin) return;
        const parsed = await parseChatMessage(chat, from.domain!);
        if (await receiveChatMessage(ctx.data.d, ctx.data.env, from, parsed, ctx.canonicalOrigin))
          after(ctx, { push: true });
        return;
      }
      // A poll vote (a Note with a `name`, or Pleroma's Answer) in a local poll is counted, never stored as a status.
      const ballot = voteShape(chat);
      if (ballot && (await receiveVoteActivity(ctx.data.d, from, chat!, ballot))) return;
      const object = await ownObject(ctx, create, from);
      if (object === "unhandled") return dropped(create, "Create of an object type Starling does not show");
      if (!object || !object.id) return;
      const d = ctx.data.d;
      const base = ctx.canonicalOrigin;
      const note = applyNotePolicies(d, from.domain!, await parseNote(object, from, from.domain!));
      // Forwarded by a followed relay (its HTTP signature, the author's own signature or the origin's copy): a
      // public post is taken even when nothing here concerns it (issue 36). What a relay brings that is stored
      // already, or not public, costs no fetch of its mentions.
      const relayed = ctx.data.relayedBy ? await isRelayKey(ctx, ctx.data.relayedBy) : false;
      if (
        relayed &&
        (note.visibility !== "public" || (await d.get(sql`SELECT 1 FROM statuses WHERE uri = ${note.uri}`)))
      )
        return;
      // Mentioned remote actors not known yet are fetched (a few) so that the mentions resolve. (In parallel: the
      // sender waits, and each fetch may take up to the guard's 10 s.) Not for what a relay brings: at a relay's
      // volume that is a stream of fetches for posts nobody here asked for (their mentions of known accounts resolve).
      if (!relayed)
        await Promise.all(
          (await unknownMentions(d, note, new URL(base).origin)).map(async (uri) => {
            const actor = await ctx.lookupObject(uri).catch(() => null);
            if (actor && isActor(actor) && actor.id?.href === uri) await upsertActor(d, actor).catch(() => null);
          }),
        );
      const stored = await storeRemoteNote(d, from, note, {
        inlineFanoutMax: config(ctx.data.env).inlineFanoutMax,
        base,
        relayed,
      });
      if (stored.stored) after(ctx, stored.effects);
      // A reply to something not stored here: its ancestors are fetched after the response (bounded); not for
      // what only a relay brought (a relay would multiply the fetches).
      // Not from 80% of any of the plan's caps either (services/usage-budget.ts).
      if (stored.stored && note.inReplyTo && !relayed)
        after(ctx, { ancestors: [{ statusId: stored.statusId, parentUri: note.inReplyTo }] });
    })
    .on(Update, async (ctx, update) => {
      const object = await embedded((o) => update.getObject(o));
      // A profile change: the actor's own document (an actor id alone, as the sender's, is refetched).
      if (object && isActor(object)) return receiveActorUpdate(ctx, update, object);
      if (!object && update.objectId && update.objectId.href === update.actorId?.href)
        return receiveActorUpdate(ctx, update, null);
      if (object && !isNoteLike(object)) return dropped(update, `Update(${object.constructor.name})`);
      const from = await sender(ctx, update);
      if (!from) return;
      const own = await ownObject(ctx, update, from);
      if (!own || own === "unhandled" || !(await authoredStatus(ctx.data.d, own.id!.href, from.uri))) return;
      const note = applyNotePolicies(ctx.data.d, from.domain!, await parseNote(own, from, from.domain!));
      // A poll's Update carries its tallies; it is an edit only when its `updated` is newer (services/remote-polls.ts).
      if (
        own instanceof Question &&
        (await updateRemoteTallies(ctx.data.d, from, note)) &&
        !(await isEditOf(ctx.data.d, note.uri, note.updated))
      )
        return;
      const edited = await updateRemoteNote(ctx.data.d, from, note);
      if (edited) after(ctx, edited.effects);
    })
    .on(Add, async (ctx, add) => {
      const from = await sender(ctx, add);
      if (from && !from.deactivated) await receiveFeatured(ctx, add, from, true);
    })
    .on(Remove, async (ctx, remove) => {
      const from = await sender(ctx, remove);
      if (from && !from.deactivated) await receiveFeatured(ctx, remove, from, false);
    })
    .on(Delete, async (ctx, del) => {
      const id = del.objectId;
      if (!id) return;
      // An actor deleting itself (the signature is its own): deactivated here, its follows ended, its content
      // removed by the deletion job.
      if (id.href === del.actorId?.href) {
        const known = await accountByUri(ctx.data.d, id.href);
        if (known && known.domain !== null) await receiveActorDelete(ctx.data.d, known.id, Date.now());
        return;
      }
      // Only the author deletes: a status of anyone else, or unknown, is left alone (and the sender is not even
      // fetched: servers send deletes of statuses nobody here stored).
      const statusId = await authoredStatus(ctx.data.d, id.href, del.actorId!.href);
      if (!statusId) {
        await receiveChatMessageDelete(ctx.data.d, ctx.data.env, id.href, del.actorId!.href);
        return;
      }
      const { events } = await deleteStatuses(ctx.data.d, [statusId]);
      after(ctx, { events });
    })
    .on(Move, async (ctx, move) => {
      // Only an actor moves itself; the target, refetched now, must list it among its aliases (alsoKnownAs).
      if (!move.objectId || move.objectId.href !== move.actorId?.href || !move.targetId) return;
      const from = await sender(ctx, move);
      if (!from || from.deactivated) return;
      const base = ctx.canonicalOrigin;
      // A target that cannot be reached now (down, or too slow on its first fetch) is not a refusal: the error
      // answers the sender 500, and its retry brings the Move again later. Only a target that answers without
      // listing the account is refused for good.
      const target = await resolveAccount(
        resolveEnv(ctx.data.env, base, new URL(base).host, (e) => after(ctx, e)),
        move.targetId.href,
        {
          refresh: true,
          strict: true,
        },
      );
      if (!target || target.account.deactivated) return;
      // Local followers are told, and follow the target at once (the `moves` effect).
      after(ctx, (await moveAccount(ctx.data.d, from, target.account, Date.now())).effects);
    })
    .on(Block, onBlock)
    .on(Flag, onFlag)
    .on(Announce, async (ctx, announce) => {
      // A Group's Announce of a Create (Lemmy, Mbin: FEP-1b12) is its members' post; any other is a boost.
      const from = await sender(ctx, announce);
      // A followed relay's Announce (LitePub) is the post it names, fetched from its origin: never a boost. From a
      // relay not accepted (pending, rejected, being removed, failed): dropped, never a boost either.
      const relay = from ? await anyRelay(ctx.data.d, from.uri) : null;
      if (relay?.state === "accepted") return receiveRelayAnnounce(ctx, announce);
      if (relay) return dropped(announce, `Announce by a relay not accepted (${relay.state})`);
      if (from && (await receiveGroupAnnounce(ctx, announce, from))) return;
      // An Announce of an activity (a relay's, a group's) is not a boost: nothing to fetch.
      if ((await embedded((o) => announce.getObject(o))) instanceof Activity)
        return dropped(announce, "Announce of an activity");
      await onAnnounce(ctx, announce);
    })
    .on(Activity, async (_ctx, activity) => dropped(activity, activity.constructor.name))
    .onError((_ctx, error) => {
      console.error("inbox", error);
    })
    .withIdempotency(idempotencyKey);
}

/**
 * Fedify remembers each activity it processed (a `fedify_kv` row written, and deleted a day later: six rows
 * written per activity) so that a redelivery is not processed twice. Creates and Announces, most of the inbox's
 * volume (a relay's posts above all), need no such record: a status is stored once per `uri` and a reblog once
 * per (account, status), so a repeated one changes nothing. Every other kind keeps Fedify's per-inbox record.
 */
function idempotencyKey(ctx: InboxContext<FederationData>, activity: Activity): string | null {
  if (activity instanceof Create || activity instanceof Announce) return null;
  const id = activity.id?.href;
  if (!id) return null;
  return `${ctx.origin}\n${id}\n${ctx.recipient == null ? "sharedInbox" : `inbox\n${ctx.recipient}`}`;
}

/**
 * A relay's answer to the instance actor's Follow of it (the Follow embedded, or its id): the relay's row updated.
 * True when the Follow was a relay's (nothing else to do).
 */
async function relayAnswer(
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
async function relayFollowBack(ctx: InboxContext<FederationData>, follow: Follow): Promise<void> {
  const from = await sender(ctx, follow);
  const inbox = from?.sharedInboxUrl ?? from?.inboxUrl;
  const adminId = from && inbox ? await relayActingAdmin(ctx.data.d) : null;
  if (!from || !inbox || !adminId) return dropped(follow, "Follow of the instance actor");
  if (await relayFollowsBack(ctx.data.d, from.uri, from.inboxUrl ?? inbox, follow.id!.href, adminId))
    after(ctx, { federate: true });
  else dropped(follow, "Follow of the instance actor by no relay followed here");
}

/**
 * What an Accept/Reject answers: the Follow's id, and for an embedded Follow its local actor when the Follow is
 * of the sender (a Follow of anyone else is not the sender's to answer). An embedded object that is not a
 * Follow is dropped.
 */
async function followRef(ctx: InboxContext<FederationData>, activity: Accept | Reject, from: AccountRow) {
  const object = await embedded((o) => activity.getObject(o));
  if (object && !(object instanceof Follow)) {
    dropped(activity, `${activity.constructor.name}(${object.constructor.name})`);
    return null;
  }
  if (object instanceof Follow) {
    if (object.objectId?.href !== from.uri) return null;
    const follower = await localAccountAt(ctx, object.actorId);
    return { uri: object.id?.href ?? null, followerId: follower?.id ?? null };
  }
  return activity.objectId ? { uri: activity.objectId.href, followerId: null } : null;
}
