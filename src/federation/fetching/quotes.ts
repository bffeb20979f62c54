/**
 * What quotes need fetched (issue 46): a public post another one names (a boost's original, a quote's target)
 * when it is not stored yet, and the stamp (FEP-044f's `QuoteAuthorization`) a quote carries, checked against
 * the quoted post's server before the quote is shown as approved.
 */
import type { Context } from "@fedify/fedify";
import { isActor, QuoteAuthorization } from "@fedify/vocab";
import { config } from "../../env";
import type { AccountRow } from "../../services/accounts";
import { applyNotePolicies, rejectedHost } from "../../services/federation-policies";
import type { ParsedQuote } from "../../services/quotes";
import { accountByUri } from "../../services/remote-accounts";
import { storeRemoteNote } from "../../services/remote-statuses";
import type { FederationData } from "../data";
import { upsertActor } from "../documents/parse-actor";
import { parseNote } from "../documents/parse-note";
import { isPostLike } from "../documents/object-types";

type Ctx = Context<FederationData>;

/**
 * A post not stored yet: fetched from its id (never taken as embedded), its author from its own document, stored
 * through the remote note path, as asked for here or (`quotedBy`) as quoted by a stored post of that account,
 * within its limits. Null when it cannot be had or is not public or unlisted.
 */
export async function fetchPublicPost(ctx: Ctx, uri: string, quotedBy?: AccountRow): Promise<string | null> {
  const d = ctx.data.d;
  const object = await ctx.lookupObject(uri).catch(() => null);
  if (!object || !isPostLike(object) || object.id?.href !== uri) return null;
  const authorId = object.attributionId;
  if (!authorId || authorId.origin !== object.id.origin || rejectedHost(d, authorId.hostname)) return null;
  let author: AccountRow | null = await accountByUri(d, authorId.href);
  if (author && author.domain === null) return null;
  if (!author) {
    const actor = await ctx.lookupObject(authorId.href).catch(() => null);
    if (!actor || !isActor(actor) || actor.id?.href !== authorId.href) return null;
    author = await upsertActor(d, actor);
  }
  if (!author || author.deactivated) return null;
  const note = applyNotePolicies(d, author.domain!, await parseNote(object, author, author.domain!));
  if (note.visibility !== "public" && note.visibility !== "unlisted") return null;
  const stored = await storeRemoteNote(d, author, note, {
    inlineFanoutMax: config(ctx.data.env).inlineFanoutMax,
    base: ctx.canonicalOrigin,
    ...(quotedBy ? { quotedBy } : { requested: true }),
  });
  return stored.stored ? stored.statusId : null;
}

/**
 * Whether a quote's stamp approves this very quote: fetched from its id, on the quoted post's own server,
 * attributed there, naming the quoting post and the quoted one. A stamp of this instance is not fetched: its
 * own rows say what it approved (services/quotes.ts).
 */
export async function verifyStamp(ctx: Ctx, quotingUri: string, q: ParsedQuote): Promise<boolean> {
  const stamp = q.authorization;
  if (!stamp) return false;
  const origin = new URL(q.uri).origin;
  if (new URL(stamp).origin !== origin || origin === new URL(ctx.canonicalOrigin).origin) return false;
  const doc = await ctx.lookupObject(stamp).catch(() => null);
  return (
    doc instanceof QuoteAuthorization &&
    doc.id?.href === stamp &&
    doc.attributionId?.origin === origin &&
    doc.interactingObjectId?.href === quotingUri &&
    doc.interactionTargetId?.href === q.uri
  );
}
