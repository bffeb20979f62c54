/**
 * Inbound quote traffic (issue 46; FEP-044f as Mastodon 4.5 speaks it; rules: services/quotes.ts): another
 * server's `QuoteRequest` of a local post, the `Accept` or `Reject` of a local quote's request, the `Delete` of a
 * stamp; and what a received post's quote needs once it is stored (its target fetched when unknown, its stamp
 * verified on the quoted post's server).
 */
import type { InboxContext } from "@fedify/fedify";
import { QuoteRequest, type Accept, type Delete, type Reject } from "@fedify/vocab";
import { config } from "../../env";
import type { AccountRow } from "../../services/accounts";
import { applyNotePolicies } from "../../services/federation-policies";
import { storedStatus } from "../../services/inbound-interactions";
import {
  approveVerified,
  quoteRequested,
  receiveQuoteAnswer,
  receiveQuoteRequest,
  receiveStampDeletion,
  recheckQuote,
} from "../../services/quotes";
import { storeRemoteNote, type ParsedNote } from "../../services/remote-statuses";
import type { FederationData } from "../data";
import { parseNote } from "../documents/parse-note";
import { fetchPublicPost, verifyStamp } from "../fetching/quotes";
import { after, embedded, sender, sendersPost } from "./context";

type Ctx = InboxContext<FederationData>;

/** A `QuoteRequest` of a local post, by the sender's own post (its `instrument`). */
export async function onQuoteRequest(ctx: Ctx, request: QuoteRequest): Promise<void> {
  if (!request.id || !request.objectId) return;
  if (request.objectId.origin !== new URL(ctx.canonicalOrigin).origin) return;
  const from = await sender(ctx, request);
  if (!from || from.deactivated || request.id.origin !== new URL(from.uri).origin) return;
  const quoting = await quotingPost(ctx, request, from);
  // Over the sender's inbound limits: answered 429 (door/handle.ts), so it asks again later; no answer meanwhile.
  if (quoting === "throttled") return;
  const answered = await receiveQuoteRequest(ctx.data.d, from, request.id.href, request.objectId.href, quoting);
  if (answered) after(ctx, answered);
}

/**
 * The post a request asks for: stored already (the sender's), or the sender's own embedded one on its origin, or
 * fetched from its id; stored with its quote (which it must make of the requested post: services/quotes.ts).
 * Null when it cannot be had as the sender's; "throttled" when the sender is over its inbound limits (then
 * `ctx.data.retryAfter` is set).
 */
async function quotingPost(
  ctx: Ctx,
  request: QuoteRequest,
  from: AccountRow,
): Promise<{ id: string; uri: string } | "throttled" | null> {
  const d = ctx.data.d;
  const embeddedPost = await embedded((o) => request.getInstrument(o));
  const id = embeddedPost?.id ?? request.instrumentId;
  if (!id || id.origin !== new URL(from.uri).origin) return null;
  const known = await storedStatus(d, id.href);
  if (known) return known.accountId === from.id ? { id: known.id, uri: known.uri } : null;
  const object = await sendersPost(ctx, embeddedPost, id, from);
  if (!object) return null;
  const note = applyNotePolicies(d, from.domain!, await parseNote(object, from, from.domain!));
  const stored = await storeRemoteNote(d, from, note, {
    inlineFanoutMax: config(ctx.data.env).inlineFanoutMax,
    base: ctx.canonicalOrigin,
  });
  if (stored.stored) {
    after(ctx, stored.effects);
    return { id: stored.statusId, uri: note.uri };
  }
  if (stored.reason === "throttled") {
    ctx.data.retryAfter = stored.retryAfter;
    return "throttled";
  }
  // Stored meanwhile (its Create, sent at the same time, won the race): read again.
  const raced = stored.reason === "exists" ? await storedStatus(d, id.href) : undefined;
  return raced?.accountId === from.id ? { id: raced.id, uri: raced.uri } : null;
}

/**
 * The `Accept` (with its stamp as `result`) or `Reject` of a local quote's request. False when the answer is of
 * no such request (a follow's, then).
 */
export async function onQuoteAnswer(ctx: Ctx, answer: Accept | Reject, accepted: boolean): Promise<boolean> {
  const object = await embedded((o) => answer.getObject(o));
  if (object && !(object instanceof QuoteRequest)) return false;
  const requestUri = (object?.id ?? answer.objectId)?.href;
  if (!requestUri?.endsWith("#quote-request") || !requestUri.startsWith(`${new URL(ctx.canonicalOrigin).origin}/`))
    return false;
  const from = await sender(ctx, answer);
  if (!from) return true;
  const q = await quoteRequested(ctx.data.d, from, requestUri);
  if (!q) return true;
  let stamp: string | null = null;
  if (accepted) {
    stamp = answer.resultId?.href ?? null;
    const quote = { uri: q.quotedUri, authorization: stamp, consentAware: true, verified: false };
    // Approved only by a stamp its server serves and that names this quote; else the quote stays pending.
    if (!stamp || !(await verifyStamp(ctx, requestUri.replace(/#quote-request$/, ""), quote))) return true;
  }
  const effects = await receiveQuoteAnswer(ctx.data.d, from, requestUri, stamp);
  if (effects) after(ctx, effects);
  return true;
}

/** The `Delete` of a stamp by the author who gave it: the quote it approved is revoked. False: no such stamp. */
export async function onStampDelete(ctx: Ctx, del: Delete, id: URL): Promise<boolean> {
  const effects = await receiveStampDeletion(ctx.data.d, del.actorId!.href, id.href);
  if (effects) after(ctx, effects);
  return effects !== null;
}

/**
 * A received post's quote, once the post is stored (so what concerns nobody here, or comes over its sender's
 * limits, costs no fetch): the quoted post fetched when not stored yet (public ones, counted to the quoting
 * author) and the quote's state decided again against it, then the stamp checked; a verified stamp approves the
 * quote. `fetch`: false for what only a relay brought.
 */
export async function settleQuote(ctx: Ctx, note: ParsedNote, from: AccountRow, fetch: boolean): Promise<void> {
  const q = note.quote;
  if (!q) return;
  const local = new URL(q.uri).origin === new URL(ctx.canonicalOrigin).origin;
  if (fetch && !local && !(await storedStatus(ctx.data.d, q.uri)) && (await fetchPublicPost(ctx, q.uri, from)))
    // Stored as shown while its target was unknown: its target's policy now decides.
    await recheckQuote(ctx.data.d, note.uri, from.id, q);
  await quoteOfUpdate(ctx, note);
}

/** A stored post's quote carrying a stamp (an `Update` may bring it): verified, it approves the pending quote. */
export async function quoteOfUpdate(ctx: Ctx, note: ParsedNote): Promise<void> {
  const q = note.quote;
  if (!q?.authorization) return;
  q.verified = await verifyStamp(ctx, note.uri, q);
  const approved = await approveVerified(ctx.data.d, note.uri, q);
  if (approved) after(ctx, approved);
}
