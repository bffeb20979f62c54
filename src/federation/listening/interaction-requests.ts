/**
 * GoToSocial's polite interaction requests of local posts (issue 49; rules: services/interaction-requests.ts):
 * `LikeRequest`, `ReplyRequest` and `AnnounceRequest`, the interaction embedded as `instrument` (GoToSocial's
 * internal/federation/federatingdb/interactionrequest.go). Trusted: the verified sender; the request's id on its
 * origin; an instrument that is the sender's own (its actor, or a reply's `attributedTo`, is the sender, its id on
 * the sender's origin) and interacts with the very post the request names. Anything else is dropped unanswered (a
 * forged instrument is no request to answer); a request for another server's post, or a post not stored here, too.
 * The inbox door caps the body's size and depth before any of this.
 */
import type { InboxContext } from "@fedify/fedify";
import {
  Announce,
  Like,
  type Activity,
  type AnnounceRequest,
  type LikeRequest,
  type ReplyRequest,
} from "@fedify/vocab";
import { config } from "../../env";
import type { AccountRow } from "../../services/accounts";
import { applyNotePolicies } from "../../services/federation-policies";
import { receiveAnnounce, receiveLike } from "../../services/inbound-interactions";
import {
  acceptRequest,
  answerAlone,
  interactionStored,
  requestedPost,
  type InteractionKind,
  type InteractionRequest,
  type RequestedPost,
} from "../../services/interaction-requests";
import { storeRemoteNote } from "../../services/remote-statuses";
import type { FederationData } from "../data";
import { parseNote } from "../documents/parse-note";
import { after, dropped, embedded, sender, sendersPost } from "./context";
import { announcedVisibility } from "./interactions";
import { settleQuote } from "./quotes";

type Ctx = InboxContext<FederationData>;
type PoliteRequest = LikeRequest | ReplyRequest | AnnounceRequest;

interface Read {
  from: AccountRow;
  post: RequestedPost;
  req: InteractionRequest;
}

/** The sender and the local post of a request, or null (not this instance's to answer). */
async function readRequest(ctx: Ctx, request: PoliteRequest, kind: InteractionKind, instrument: URL | null) {
  if (!request.id || !request.objectId || !instrument) return null;
  if (request.objectId.origin !== new URL(ctx.canonicalOrigin).origin) return null;
  const from = await sender(ctx, request);
  if (!from || from.deactivated || request.id.origin !== new URL(from.uri).origin) return null;
  if (instrument.origin !== new URL(from.uri).origin) return null;
  const post = await requestedPost(ctx.data.d, from, kind, request.objectId.href);
  if (!post) return null;
  const req = { kind, uri: request.id.href, objectUri: request.objectId.href, instrument: instrument.href };
  return { from, post, req } satisfies Read;
}

/** The sender's own Like or Announce of the requested post. */
function ownActivity(activity: Activity, from: AccountRow, request: PoliteRequest): boolean {
  return activity.actorId?.href === from.uri && activity.objectId?.href === request.objectId?.href;
}

/**
 * What every request comes to: refused by the rule (a Reject), stored already (its Accept again), or `store`d
 * with its Accept in the same batch.
 */
async function answer(ctx: Ctx, r: Read, store: (accept: D1PreparedStatement) => Promise<void>): Promise<void> {
  const d = ctx.data.d;
  if (!r.post.allowed || (await interactionStored(d, r.post, r.from, r.req)))
    return after(ctx, await answerAlone(d, r.post, r.from, r.req));
  await store(acceptRequest(d, r.post, r.from, r.req));
}

export async function onLikeRequest(ctx: Ctx, request: LikeRequest): Promise<void> {
  const like = await embedded((o) => request.getInstrument(o));
  if (!(like instanceof Like)) return dropped(request, "LikeRequest without its Like");
  const r = await readRequest(ctx, request, "like", like.id);
  if (!r) return;
  if (!ownActivity(like, r.from, request)) return dropped(request, "LikeRequest of someone else's Like");
  await answer(ctx, r, async (accept) =>
    after(ctx, await receiveLike(ctx.data.d, r.from, r.post.status, r.req.instrument, undefined, [accept])),
  );
}

export async function onAnnounceRequest(ctx: Ctx, request: AnnounceRequest): Promise<void> {
  const announce = await embedded((o) => request.getInstrument(o));
  if (!(announce instanceof Announce)) return dropped(request, "AnnounceRequest without its Announce");
  const r = await readRequest(ctx, request, "announce", announce.id);
  if (!r) return;
  if (!ownActivity(announce, r.from, request)) return dropped(request, "AnnounceRequest of someone else's Announce");
  const visibility = announcedVisibility(announce, r.post.status.visibility);
  await answer(ctx, r, async (accept) =>
    after(
      ctx,
      await receiveAnnounce(ctx.data.d, r.from, r.post.status, r.req.instrument, visibility, {
        inlineFanoutMax: config(ctx.data.env).inlineFanoutMax,
        extra: [accept],
      }),
    ),
  );
}

export async function onReplyRequest(ctx: Ctx, request: ReplyRequest): Promise<void> {
  const embeddedReply = await embedded((o) => request.getInstrument(o));
  const r = await readRequest(ctx, request, "reply", embeddedReply?.id ?? request.instrumentId);
  if (!r) return;
  const reply = await sendersPost(ctx, embeddedReply, new URL(r.req.instrument), r.from);
  if (!reply) return dropped(request, "ReplyRequest whose instrument is not the sender's reply to its object");
  const d = ctx.data.d;
  const note = applyNotePolicies(d, r.from.domain!, await parseNote(reply, r.from, r.from.domain!));
  if (note.inReplyTo !== r.req.objectUri) return dropped(request, "ReplyRequest of a reply to another post");
  await answer(ctx, r, async (accept) => {
    const stored = await storeRemoteNote(d, r.from, note, {
      inlineFanoutMax: config(ctx.data.env).inlineFanoutMax,
      base: ctx.canonicalOrigin,
      extra: [accept],
    });
    if (stored.stored) {
      after(ctx, stored.effects);
      await settleQuote(ctx, note, r.from, true);
    }
    // Over the sender's inbound limits: answered 429 (door/handle.ts), so it asks again later.
    else if (stored.reason === "throttled") ctx.data.retryAfter = stored.retryAfter;
  });
}
