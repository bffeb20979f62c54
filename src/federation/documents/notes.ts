/**
 * Local statuses as ActivityStreams objects (Fedify's vocabulary): the `Note` (or `Question` for a poll) of a
 * status, its `Create`, and a reblog's `Announce`. Built from hydrated rows (`services/federated-statuses.ts`),
 * for the object dispatcher and the outbox now and for delivery later. Addressing is `services/addressing.ts`.
 */
import { Announce, Collection, Create, Document, Hashtag, Mention, Note, Question } from "@fedify/vocab";
import { announceApproval, replyApproval } from "./approvals";
import { Temporal } from "@js-temporal/polyfill";
import type { Hydrated, StatusRow } from "../../services/hydrate";
import { addressing } from "../../services/addressing";
import { mediaUrl, type Origins } from "../../lib/media-urls";
import { emojiTag } from "./emoji-tags";
import { interactionPolicy, quoteLinkTag } from "./interaction-policy";

export const instant = (ms: number) => Temporal.Instant.fromEpochMilliseconds(ms);

export interface NoteContext extends Origins {
  /** `https://DOMAIN`: hashtag links hang off it (media off `media` when set). */
  base: string;
  /** The followers collection of a local account, by nickname. */
  followersOf: (username: string) => URL;
}

/**
 * To/cc of a status (null: local-only, never federated). `recipients`: actor ids of a list status's members,
 * which delivery passes (list statuses are never served, so the dispatchers do not load them).
 */
function audience(ctx: NoteContext, h: Hydrated, s: StatusRow, recipients?: string[]) {
  const author = h.accounts.get(s.accountId)!.account;
  const mentioned = (h.mentions.get(s.id) ?? []).flatMap((id) => {
    const a = h.accounts.get(id)?.account;
    return a ? [a.uri] : [];
  });
  // A reply is addressed to the author it answers too (as Pleroma does), mentioned in its text or not, so its
  // server sees it was meant to — but never wider than the status's own audience: a public or unlisted reply,
  // or a direct/list one that really has that author among its recipients (explicit addressing may leave them out).
  const repliedTo =
    s.inReplyToAccountId && s.inReplyToAccountId !== s.accountId
      ? h.accounts.get(s.inReplyToAccountId)?.account
      : undefined;
  if (repliedTo && (s.visibility === "public" || s.visibility === "unlisted" || recipients?.includes(repliedTo.uri)))
    mentioned.push(repliedTo.uri);
  return addressing({
    visibility: s.visibility,
    followers: ctx.followersOf(author.username).href,
    mentioned,
    recipients,
  });
}

const urls = (xs: string[]) => xs.map((x) => new URL(x));

/** The object of status `id` (not a reblog): a `Note`, or a `Question` when it has a poll. */
export function statusObject(
  ctx: NoteContext,
  h: Hydrated,
  parentUris: Map<string, string>,
  id: string,
  recipients?: string[],
): Note | Question | null {
  const s = h.statuses.get(id);
  const author = s && h.accounts.get(s.accountId)?.account;
  if (!s || !author || s.reblogOfId) return null;
  const to = audience(ctx, h, s, recipients);
  if (!to) return null;
  const mentions = (h.mentions.get(s.id) ?? []).flatMap((mid) => {
    const a = h.accounts.get(mid)?.account;
    return a
      ? [new Mention({ href: new URL(a.uri), name: `@${a.username}@${a.domain ?? new URL(ctx.base).host}` })]
      : [];
  });
  const hashtags = (h.tags.get(s.id) ?? []).map(
    (name) => new Hashtag({ href: new URL(`${ctx.base}/tag/${encodeURIComponent(name)}`), name: `#${name}` }),
  );
  const emojis = s.emojis.map((e) => emojiTag(ctx, e.shortcode, e.file));
  const attachments = (h.media.get(s.id) ?? []).map(
    (m) =>
      new Document({
        mediaType: m.mimeType,
        url: new URL(mediaUrl(ctx, m.file)),
        name: m.description || null,
        // Its size (read at upload), so other servers lay it out before it loads.
        width: m.meta?.original?.width ?? null,
        height: m.meta?.original?.height ?? null,
      }),
  );
  const parent = s.inReplyToId ? parentUris.get(s.inReplyToId) : undefined;
  // Its quote (FEP-044f's `quote`, and the older forms Fedify writes with `quoteUrl`: `_misskey_quote`,
  // `quoteUri`, plus FEP-e232's tag), with the stamp once the quoted author approved it.
  const quote = h.quotes.get(s.id);
  const common = {
    id: new URL(s.uri),
    url: new URL(s.url),
    attribution: new URL(author.uri),
    content: s.content,
    summary: s.spoilerText || null,
    sensitive: s.sensitive,
    published: instant(s.createdAt),
    updated: s.editedAt === null ? null : instant(s.editedAt),
    replyTarget: parent ? new URL(parent) : null,
    tags: [...mentions, ...hashtags, ...emojis, ...(quote ? [quoteLinkTag(quote.quotedUri)] : [])],
    attachments,
    tos: urls(to.to),
    ccs: urls(to.cc),
    // Its replies seen by anyone (routes/replies.ts), first page by URL as Mastodon's consumers follow it.
    replies: new Collection({ id: new URL(`${s.uri}/replies`), first: new URL(`${s.uri}/replies?page=true`) }),
    interactionPolicy: interactionPolicy(s.quotePolicy, author.uri, ctx.followersOf(author.username)),
    quote: quote ? new URL(quote.quotedUri) : null,
    quoteUrl: quote ? new URL(quote.quotedUri) : null,
    quoteAuthorization: quote?.state === "accepted" && quote.authorizationUri ? new URL(quote.authorizationUri) : null,
    ...replyApproval(h, s.id),
  };
  const poll = h.polls.get(s.id);
  if (!poll) return new Note(common);
  const counts = h.pollCounts.get(poll.id);
  const closed = poll.expiresAt !== null && poll.expiresAt <= Date.now();
  // A poll that hides its totals shows no counts until it ends (as the client API does).
  const showCounts = !poll.hideTotals || closed;
  const options = poll.options.map(
    (name, i) => new Note({ name, replies: showCounts ? new Collection({ totalItems: counts?.get(i) ?? 0 }) : null }),
  );
  return new Question({
    ...common,
    ...(poll.multiple ? { inclusiveOptions: options } : { exclusiveOptions: options }),
    endTime: poll.expiresAt === null ? null : instant(poll.expiresAt),
    closed: closed ? instant(poll.expiresAt!) : null,
    voters: showCounts ? (h.pollVoters.get(poll.id) ?? 0) : null,
  });
}

/** The `Create` of a status: id `<uri>/activity`, as Mastodon names it; same audience as the object. */
export function createActivity(
  ctx: NoteContext,
  h: Hydrated,
  parentUris: Map<string, string>,
  id: string,
  recipients?: string[],
): Create | null {
  const object = statusObject(ctx, h, parentUris, id, recipients);
  if (!object) return null;
  return new Create({
    id: new URL(`${object.id!.href}/activity`),
    actor: object.attributionId,
    published: object.published,
    tos: object.toIds,
    ccs: object.ccIds,
    object,
  });
}

/** A reblog's `Announce` of its original (by uri), at the reblog's own uri (`/activities/<id>`). */
export function announceActivity(ctx: NoteContext, h: Hydrated, id: string): Announce | null {
  const s = h.statuses.get(id);
  const author = s && h.accounts.get(s.accountId)?.account;
  const original = s?.reblogOfId ? h.statuses.get(s.reblogOfId) : undefined;
  const originalAuthor = original && h.accounts.get(original.accountId)?.account;
  if (!s || !author || !original || !originalAuthor) return null;
  const to = addressing({
    visibility: s.visibility,
    followers: ctx.followersOf(author.username).href,
    mentioned: [originalAuthor.uri],
  });
  if (!to) return null;
  return new Announce({
    id: new URL(s.uri),
    actor: new URL(author.uri),
    published: instant(s.createdAt),
    object: new URL(original.uri),
    tos: urls(to.to),
    ccs: urls(to.cc),
    ...announceApproval(h, s.id),
  });
}

/** What an outbox shows for a status: its `Create`, or a reblog's `Announce`. */
export function outboxActivity(
  ctx: NoteContext,
  h: Hydrated,
  parentUris: Map<string, string>,
  id: string,
): Create | Announce | null {
  return h.statuses.get(id)?.reblogOfId ? announceActivity(ctx, h, id) : createActivity(ctx, h, parentUris, id);
}
