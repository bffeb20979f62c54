/**
 * The inbox: which listener hears which activity. door/authenticate.ts has verified the request's signature and
 * that its key speaks for the activity's `actor` before any listener runs (else 401, nothing stored); listeners
 * trust only that, and store the sender with `upsertActor` from its own document (listening/context.ts).
 *
 * One file per family, in this folder: follows.ts, notes.ts (posts, and the other object types shown as
 * statuses), chat-messages.ts, poll-votes.ts, interactions.ts (likes, reactions, boosts), blocks-and-reports.ts,
 * profiles.ts (an actor's own Update, pins, Move, Delete), group-posts.ts (a Group's Announce of its members'
 * posts), quotes.ts (FEP-044f's requests, answers and stamps), interaction-requests.ts (GoToSocial's polite
 * LikeRequest, ReplyRequest and AnnounceRequest) and relays.ts. An activity that spans families (an Undo, an Update, a Delete, an Announce) is told apart
 * here. An activity type no listener handles, or a Create of an object type Starling does not show, is
 * acknowledged (202), logged and dropped, as is an Undo, Update, Accept or Reject of an object it has no use for.
 */
import type { Federation, FederationBuilder, InboxContext } from "@fedify/fedify";
import {
  Accept,
  Activity,
  Add,
  Announce,
  AnnounceRequest,
  Block,
  Create,
  Delete,
  EmojiReact,
  Flag,
  Follow,
  isActor,
  Like,
  LikeRequest,
  Move,
  QuoteRequest,
  Reject,
  Remove,
  ReplyRequest,
  Undo,
  Update,
} from "@fedify/vocab";
import { receiveUndoBlock } from "../../services/inbound-blocks";
import { receiveUndoFollow } from "../../services/inbound-follows";
import { receiveUndoInteraction } from "../../services/inbound-interactions";
import { anyRelay } from "../../services/relays";
import type { FederationData } from "../data";
import { onBlock, onFlag, onUndoBlock } from "./blocks-and-reports";
import { after, dropped, embedded, sender } from "./context";
import { onFollow, onFollowAnswer, onUndoFollow } from "./follows";
import { receiveGroupAnnounce } from "./group-posts";
import { onAnnounce, onEmojiReact, onLike, onUndoInteraction } from "./interactions";
import { onCreate, onDeleteNote, onUpdateNote } from "./notes";
import { onQuoteAnswer, onQuoteRequest, onStampDelete } from "./quotes";
import { onInteractionAnswer } from "./approval-answers";
import { onAnnounceRequest, onLikeRequest, onReplyRequest } from "./interaction-requests";
import { onActorDelete, onMove, receiveActorUpdate, receiveFeatured } from "./profiles";
import { receiveRelayAnnounce } from "./relays";

export function registerInbox(builder: FederationBuilder<FederationData> | Federation<FederationData>) {
  builder
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, onFollow)
    .on(Accept, async (ctx, accept) => {
      if (!(await onQuoteAnswer(ctx, accept, true)) && !(await onInteractionAnswer(ctx, accept, true)))
        await onFollowAnswer(ctx, accept, true);
    })
    .on(Reject, async (ctx, reject) => {
      if (!(await onQuoteAnswer(ctx, reject, false)) && !(await onInteractionAnswer(ctx, reject, false)))
        await onFollowAnswer(ctx, reject, false);
    })
    .on(QuoteRequest, onQuoteRequest)
    .on(LikeRequest, onLikeRequest)
    .on(ReplyRequest, onReplyRequest)
    .on(AnnounceRequest, onAnnounceRequest)
    .on(Undo, onUndo)
    .on(Like, onLike)
    .on(EmojiReact, onEmojiReact)
    .on(Create, onCreate)
    .on(Update, async (ctx, update) => {
      const object = await embedded((o) => update.getObject(o));
      // A profile change: the actor's own document (an actor id alone, as the sender's, is refetched).
      if (object && isActor(object)) return receiveActorUpdate(ctx, update, object);
      if (!object && update.objectId && update.objectId.href === update.actorId?.href)
        return receiveActorUpdate(ctx, update, null);
      return onUpdateNote(ctx, update, object);
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
      if (id.href === del.actorId?.href) return onActorDelete(ctx, del);
      // A quote's stamp withdrawn by the author who gave it (FEP-044f), else a post.
      if (!(await onStampDelete(ctx, del, id))) return onDeleteNote(ctx, del, id);
    })
    .on(Move, onMove)
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

/** An `Undo`: of whichever family its embedded object is, or, when it names only an id, of any of the sender's. */
async function onUndo(ctx: InboxContext<FederationData>, undo: Undo): Promise<void> {
  const object = await embedded((o) => undo.getObject(o));
  if (object instanceof Block) return onUndoBlock(ctx, undo, object);
  if (object instanceof Like || object instanceof EmojiReact || object instanceof Announce)
    return onUndoInteraction(ctx, undo, object);
  if (object && !(object instanceof Follow)) return dropped(undo, `Undo(${object.constructor.name})`);
  const from = await sender(ctx, undo);
  if (!from) return;
  if (object instanceof Follow) return onUndoFollow(ctx, from, object);
  if (!undo.objectId) return;
  // Only an id: whichever of the sender's follows, blocks, favourites, reactions or reblogs it names.
  after(ctx, await receiveUndoFollow(ctx.data.d, from, { uri: undo.objectId.href, targetId: null }));
  await receiveUndoBlock(ctx.data.d, from, { uri: undo.objectId.href, targetId: null });
  after(ctx, await receiveUndoInteraction(ctx.data.d, from, undo.objectId.href));
}

/**
 * Fedify remembers each activity it processed (a `fedify_kv` row written, and deleted a day later: six rows
 * written per activity) so that a redelivery is not processed twice. Creates and Announces, most of the inbox's
 * volume (a relay's posts above all), need no such record: a status is stored once per `uri` and a reblog once
 * per (account, status), so a repeated one changes nothing. Nor do Likes and emoji reactions (issue 42): a
 * favourite and a reaction are stored once per `uri` (and per account and status), and their notification only
 * with the row it made (services/inbound-interactions.ts). Every other kind keeps Fedify's per-inbox record.
 */
function idempotencyKey(ctx: InboxContext<FederationData>, activity: Activity): string | null {
  if (
    activity instanceof Create ||
    activity instanceof Announce ||
    activity instanceof Like ||
    activity instanceof EmojiReact
  )
    return null;
  const id = activity.id?.href;
  if (!id) return null;
  return `${ctx.origin}\n${id}\n${ctx.recipient == null ? "sharedInbox" : `inbox\n${ctx.recipient}`}`;
}
