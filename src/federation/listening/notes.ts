/**
 * Inbound posts (rules: services/remote-statuses.ts, remote-status-edits.ts): `Create`, `Update` and `Delete` of
 * notes and of the other object types shown as statuses (pages, videos, events…: documents/object-types.ts). An
 * object is taken as the sender's only when its `attributedTo` is the sender and it lives on the sender's origin
 * (otherwise it is fetched from its id and checked again), and updates and deletes apply only to the sender's own
 * statuses. A Create of a chat message or of a poll vote goes to chat-messages.ts or poll-votes.ts.
 */
import type { InboxContext } from "@fedify/fedify";
import { sql } from "drizzle-orm";
import {
  ChatMessage,
  isActor,
  Question,
  type Create,
  type Delete,
  type Object as APObject,
  type Update,
} from "@fedify/vocab";
import { config } from "../../env";
import type { AccountRow } from "../../services/accounts";
import { receiveChatMessageDelete } from "../../services/chats";
import { applyNotePolicies } from "../../services/federation-policies";
import { isEditOf, updateRemoteTallies } from "../../services/remote-polls";
import { authoredStatus, storeRemoteNote, unknownMentions } from "../../services/remote-statuses";
import { updateRemoteNote } from "../../services/remote-status-edits";
import { deleteStatuses } from "../../services/statuses";
import type { FederationData } from "../data";
import { upsertActor } from "../documents/parse-actor";
import { parseNote, type RemoteObject } from "../documents/parse-note";
import { voteShape } from "../documents/polls";
import { onChatMessage } from "./chat-messages";
import { after, dropped, embedded, isNoteLike, sender } from "./context";
import { receiveVoteActivity } from "./poll-votes";
import { quoteOfUpdate, settleQuote } from "./quotes";
import { isRelayKey } from "./relays";

type Ctx = InboxContext<FederationData>;

/**
 * The object of a Create/Update as the sender's own: embedded and attributed to the sender on its origin, or
 * else fetched from its id (through the guarded loader) and checked again. Null when it is not the sender's.
 */
async function ownObject(
  ctx: Ctx,
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

export async function onCreate(ctx: Ctx, create: Create): Promise<void> {
  const from = await sender(ctx, create);
  // A deleted (deactivated) actor's late activities are not stored: its deletion job would not come back for them.
  if (!from || from.deactivated) return;
  // Pleroma's chat messages (embedded, the sender's own on its origin) land in the chat through its ChatRoom.
  const chat = await embedded((o) => create.getObject(o));
  if (chat instanceof ChatMessage) return onChatMessage(ctx, from, chat);
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
  if (relayed && (note.visibility !== "public" || (await d.get(sql`SELECT 1 FROM statuses WHERE uri = ${note.uri}`))))
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
  if (stored.stored) {
    after(ctx, stored.effects);
    // Stored: its quote's target fetched when unknown (not for a relay's posts), its stamp checked.
    await settleQuote(ctx, note, from, !relayed);
  }
  // Over the sender's inbound limits: answered 429 (door/handle.ts). A relay's copy is dropped instead (never retried).
  else if (stored.reason === "throttled" && !relayed) ctx.data.retryAfter = stored.retryAfter;
  // A reply to something not stored here: its ancestors are fetched after the response (bounded); not for
  // what only a relay brought (a relay would multiply the fetches).
  // Not from 80% of any of the plan's caps either (services/usage-budget.ts).
  if (stored.stored && note.inReplyTo && !relayed)
    after(ctx, { ancestors: [{ statusId: stored.statusId, parentUri: note.inReplyTo }] });
}

/** The `Update` of a post (an actor's Update of itself is profiles.ts's). */
export async function onUpdateNote(ctx: Ctx, update: Update, object: APObject | null): Promise<void> {
  if (object && !isNoteLike(object)) return dropped(update, `Update(${object.constructor.name})`);
  const from = await sender(ctx, update);
  if (!from) return;
  const own = await ownObject(ctx, update, from);
  if (!own || own === "unhandled" || !(await authoredStatus(ctx.data.d, own.id!.href, from.uri))) return;
  const note = applyNotePolicies(ctx.data.d, from.domain!, await parseNote(own, from, from.domain!));
  // Mastodon sends its quote again with the stamp once approved.
  await quoteOfUpdate(ctx, note);
  // A poll's Update carries its tallies; it is an edit only when its `updated` is newer (services/remote-polls.ts).
  if (
    own instanceof Question &&
    (await updateRemoteTallies(ctx.data.d, from, note)) &&
    !(await isEditOf(ctx.data.d, note.uri, note.updated))
  )
    return;
  const edited = await updateRemoteNote(ctx.data.d, from, note);
  if (edited && "retryAfter" in edited) ctx.data.retryAfter = edited.retryAfter;
  else if (edited) after(ctx, edited.effects);
}

/** The `Delete` of a post (or of a chat message) by its author (an actor's Delete of itself is profiles.ts's). */
export async function onDeleteNote(ctx: Ctx, del: Delete, id: URL): Promise<void> {
  // Only the author deletes: a status of anyone else, or unknown, is left alone (and the sender is not even
  // fetched: servers send deletes of statuses nobody here stored).
  const statusId = await authoredStatus(ctx.data.d, id.href, del.actorId!.href);
  if (!statusId) {
    await receiveChatMessageDelete(ctx.data.d, ctx.data.env, id.href, del.actorId!.href);
    return;
  }
  const { events } = await deleteStatuses(ctx.data.d, [statusId]);
  after(ctx, { events });
}
