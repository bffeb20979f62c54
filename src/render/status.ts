/** The Status entity (and its media, poll, card and reactions) from hydrated rows; no queries here. */
import { iso } from "../lib/iso";
import { htmlToText } from "../content/format";
import { stripRichText } from "../content/rich-text";
import type { BaseStatus, Card, MediaAttachment, Poll, QuotedStatus, Status } from "../schemas/status";
import type { QUOTE_STATES } from "../schemas/status";
import { automaticOf, quoteApproval } from "../lib/quote-policy";
import type { Hydrated, MediaRow, PollRow, StatusRow } from "../services/hydrate";
import type { MediaMeta } from "../db/schema";
import { mediaUrl, thumbnailKey } from "../lib/media-urls";
import { renderAccount, type RenderContext } from "./account";
import type { Account } from "../schemas/account";
import type { AccountWithUser } from "../services/accounts";
import { filterResults } from "./filter";

export interface StatusRenderOptions {
  /** Include `text` (the source), as DELETE and `/source` answers do. */
  withSource?: boolean;
}

export function renderMedia(
  ctx: RenderContext,
  m: Pick<MediaRow, "id" | "type" | "file" | "remoteUrl" | "description" | "mimeType"> & { meta?: MediaMeta | null },
): MediaAttachment {
  const url = mediaUrl(ctx, m.file);
  const o = m.meta?.original;
  const small = m.meta?.small;
  const size = (d: { width: number; height: number }) => ({
    width: d.width,
    height: d.height,
    size: `${d.width}x${d.height}`,
    aspect: Math.round((d.width / d.height) * 1e6) / 1e6,
  });
  // Mastodon's `original` of a video or audio: its size when it has one, frame rate, duration and bit rate.
  const original = (d: NonNullable<MediaMeta["original"]>) => ({
    ...(d.width && d.height ? size({ width: d.width, height: d.height }) : {}),
    ...(d.frameRate ? { frame_rate: d.frameRate } : {}),
    ...(d.duration ? { duration: d.duration } : {}),
    ...(d.bitrate ? { bitrate: d.bitrate } : {}),
  });
  return {
    id: m.id,
    type: m.type,
    url,
    remote_url: m.remoteUrl,
    // The thumbnail timelines show (lib/media-urls.ts), when one was made; else the file itself.
    preview_url: small ? mediaUrl(ctx, thumbnailKey(m.file)) : url,
    text_url: url,
    description: m.description,
    blurhash: m.meta?.blurhash ?? null,
    // Mastodon's shape: apps size the picture before it loads, and crop around the focal point.
    meta:
      o || small || m.meta?.focus
        ? {
            ...(o ? { original: original(o) } : {}),
            ...(small ? { small: size(small) } : {}),
            ...(m.meta?.focus ? { focus: m.meta.focus } : {}),
          }
        : null,
    pleroma: { mime_type: m.mimeType },
  };
}

/** A status's emoji, as resolved when it was written (a remote status's are its server's, never ours by name). */
export function renderStatusEmojis(ctx: RenderContext, emojis: StatusRow["emojis"]) {
  return emojis.map((e) => ({
    shortcode: e.shortcode,
    url: mediaUrl(ctx, e.file),
    static_url: mediaUrl(ctx, e.file),
    visible_in_picker: e.visible_in_picker,
  }));
}

function renderPoll(
  h: Pick<Hydrated, "pollCounts" | "pollVoters" | "ownVotes" | "viewerId">,
  p: PollRow,
  authorId: string,
): Poll {
  const counts = h.pollCounts.get(p.id) ?? new Map<number, number>();
  const expired = p.expiresAt !== null && p.expiresAt <= Date.now();
  // Totals stay hidden until the end when the author asked, except from the author.
  const hidden = p.hideTotals && !expired && h.viewerId !== authorId;
  const votes = [...counts.values()].reduce((a, b) => a + b, 0);
  const own = h.ownVotes.get(p.id) ?? [];
  return {
    id: p.id,
    expires_at: p.expiresAt === null ? null : iso(p.expiresAt),
    expired,
    multiple: p.multiple,
    votes_count: hidden ? 0 : votes,
    voters_count: hidden ? 0 : (h.pollVoters.get(p.id) ?? 0),
    options: p.options.map((title, i) => ({ title, votes_count: hidden ? null : (counts.get(i) ?? 0) })),
    voted: own.length > 0 || h.viewerId === authorId,
    own_votes: own,
    emojis: [],
    pleroma: { non_anonymous: false },
  };
}

export function renderCard(data: Record<string, unknown>): Card {
  const d = data as Partial<Card> & { opengraph?: Record<string, string> };
  return {
    url: String(d.url ?? ""),
    title: String(d.title ?? ""),
    description: String(d.description ?? ""),
    image: (d.image as string | null) ?? null,
    type: (d.type as Card["type"]) ?? "link",
    provider_name: String(d.provider_name ?? ""),
    provider_url: String(d.provider_url ?? ""),
    author_name: String(d.author_name ?? ""),
    author_url: "",
    html: "",
    width: Number(d.width ?? 0),
    height: Number(d.height ?? 0),
    pleroma: { opengraph: d.opengraph ?? {} },
  };
}

/**
 * The text filters are matched against: content (`plain`: as text), content warning, poll options and media
 * descriptions.
 */
function filterableText(h: Hydrated, s: StatusRow, plain: string, poll: PollRow | undefined): string {
  const media = (h.media.get(s.id) ?? []).map((m) => m.description ?? "");
  return [s.spoilerText, plain, ...(poll?.options ?? []), ...media].filter(Boolean).join("\n");
}

/**
 * A status's author as rendered, once per request (`ctx`) and account: a page of one author's statuses renders
 * them once. The same object is shared by the statuses that show it; nothing changes it afterwards.
 */
const authors = new WeakMap<AccountWithUser, { ctx: RenderContext; out: Account }>();
function renderAuthor(ctx: RenderContext, a: AccountWithUser): Account {
  const known = authors.get(a);
  if (known?.ctx === ctx) return known.out;
  const out = renderAccount(ctx, a);
  authors.set(a, { ctx, out });
  return out;
}

/**
 * What a status's quote shows the viewer: the quoted post only when the quote stands (accepted) and the viewer
 * may see that post by the one visibility rule (else `unauthorized`; a quoted post gone: `deleted`, by its row).
 */
function quoteOf(
  h: Hydrated,
  s: StatusRow,
): { state: (typeof QUOTE_STATES)[number]; shown: StatusRow | null; uri: string } | null {
  const q = h.quotes.get(s.id);
  if (!q) return null;
  const quoted = q.quotedStatusId ? h.statuses.get(q.quotedStatusId) : undefined;
  // Accepted but not stored here (never fetched): nothing to show but its uri (Pleroma's `quote_url`).
  if (q.state !== "accepted" || q.quotedStatusId === null) return { state: q.state, shown: null, uri: q.quotedUri };
  // Loaded (a page's quote) and visible, or not loaded at all (a quoted post's own quote: by id only).
  if (quoted && !h.visible.has(quoted.id)) return { state: "unauthorized", shown: null, uri: q.quotedUri };
  return { state: "accepted", shown: quoted ?? null, uri: q.quotedUri };
}

function renderQuoted(ctx: RenderContext, h: Hydrated, s: StatusRow, opts: StatusRenderOptions): QuotedStatus | null {
  const base = renderOne(ctx, h, s, opts);
  if (!base) return null;
  const q = quoteOf(h, s);
  return {
    ...base,
    reblog: null,
    quote: q && {
      state: q.state,
      quoted_status_id: q.state === "accepted" ? (h.quotes.get(s.id)?.quotedStatusId ?? null) : null,
    },
    pleroma: { ...base.pleroma, quote: null },
  };
}

/** A status with its quote (the quoted post rendered one level deep). */
function renderWithQuote(ctx: RenderContext, h: Hydrated, s: StatusRow, opts: StatusRenderOptions): BaseStatus | null {
  const base = renderOne(ctx, h, s, opts);
  if (!base) return null;
  const q = quoteOf(h, s);
  const quoted = q?.shown ? renderQuoted(ctx, h, q.shown, opts) : null;
  return {
    ...base,
    reblog: null,
    quote: q && { state: q.state, quoted_status: quoted },
    pleroma: { ...base.pleroma, quote: quoted },
  };
}

type Unquoted = Omit<BaseStatus, "quote" | "pleroma"> & {
  pleroma: Omit<BaseStatus["pleroma"], "quote">;
};

function renderOne(ctx: RenderContext, h: Hydrated, s: StatusRow, opts: StatusRenderOptions): Unquoted | null {
  const author = h.accounts.get(s.accountId);
  if (!author) return null;
  const replyTo = s.inReplyToAccountId ? h.accounts.get(s.inReplyToAccountId) : undefined;
  const poll = h.polls.get(s.id);
  const card = s.cardUrl ? h.cards.get(s.cardUrl) : undefined;
  const emoji = (shortcode: string) => {
    const e = h.emojis.get(shortcode);
    return (
      e && {
        shortcode,
        url: mediaUrl(ctx, e.file),
        static_url: mediaUrl(ctx, e.file),
        visible_in_picker: e.visibleInPicker,
      }
    );
  };
  const muted = h.mutedThreads.has(s.threadId);
  const plain = htmlToText(s.content);
  return {
    id: s.id,
    uri: s.uri,
    url: s.url,
    account: renderAuthor(ctx, author),
    in_reply_to_id: s.inReplyToId,
    in_reply_to_account_id: s.inReplyToAccountId,
    reblog: null,
    content: h.plainText ? stripRichText(s.content) : s.content,
    text: opts.withSource ? s.text : null,
    created_at: iso(s.createdAt),
    edited_at: s.editedAt === null ? null : iso(s.editedAt),
    emojis: renderStatusEmojis(ctx, s.emojis),
    replies_count: s.repliesCount,
    reblogs_count: s.reblogsCount,
    favourites_count: s.favouritesCount,
    quotes_count: s.quotesCount,
    quote_approval: {
      automatic: automaticOf(s.visibility === "public" || s.visibility === "unlisted" ? s.quotePolicy : null),
      manual: [],
      current_user: quoteApproval(s, h.viewerId, h.followsAuthor.has(s.id)),
    },
    reblogged: h.reblogged.has(s.id),
    favourited: h.favourited.has(s.id),
    muted,
    bookmarked: h.bookmarked.has(s.id),
    pinned: s.pinnedAt !== null,
    sensitive: s.sensitive,
    spoiler_text: s.spoilerText,
    visibility: s.visibility,
    media_attachments: (h.media.get(s.id) ?? []).map((m) => renderMedia(ctx, m)),
    mentions: (h.mentions.get(s.id) ?? []).flatMap((id) => {
      const a = h.accounts.get(id)?.account;
      return a
        ? [{ id: a.id, username: a.username, acct: a.domain ? `${a.username}@${a.domain}` : a.username, url: a.url }]
        : [];
    }),
    tags: (h.tags.get(s.id) ?? []).map((name) => ({ name, url: `${ctx.base}/tag/${encodeURIComponent(name)}` })),
    card: card ? renderCard(card) : null,
    poll: poll ? renderPoll(h, poll, s.accountId) : null,
    application: s.appId ? (h.apps.get(s.appId) ?? null) : null,
    language: s.language,
    // Only for a signed-in viewer, and never on their own posts (the text only when there are filters to match).
    ...(h.viewerId && h.viewerId !== s.accountId
      ? { filtered: h.filters.length ? filterResults(h.filters, filterableText(h, s, plain, poll), s.id) : [] }
      : {}),
    pleroma: {
      local: s.local,
      conversation_id: s.threadId,
      context: s.context,
      direct_conversation_id: h.participations.get(s.threadId) ?? null,
      in_reply_to_account_acct: replyTo
        ? replyTo.account.domain
          ? `${replyTo.account.username}@${replyTo.account.domain}`
          : replyTo.account.username
        : null,
      content: { "text/plain": plain },
      spoiler_text: { "text/plain": s.spoilerText },
      // Only the author learns when a post will disappear.
      expires_at: s.expiresAt !== null && h.viewerId === s.accountId ? iso(s.expiresAt) : null,
      thread_muted: muted,
      // Pleroma 2.6's shape: a custom emoji's image as `url` (null for Unicode), the reactors' ids.
      emoji_reactions: (h.reactions.get(s.id) ?? []).map((r) => ({
        name: r.name,
        count: r.count,
        me: r.me,
        url: emoji(r.name)?.url ?? null,
        account_ids: r.accountIds,
      })),
      parent_visible: s.inReplyToId === null || h.visibleParents.has(s.inReplyToId),
      pinned_at: s.pinnedAt === null ? null : iso(s.pinnedAt),
      approval_state: s.approval,
      ...pleromaQuote(h, s),
    },
  };
}

/** Pleroma's quote fields: the quoted post's id and uri, and whether the viewer may see it. */
function pleromaQuote(h: Hydrated, s: StatusRow) {
  const q = quoteOf(h, s);
  const visible = q?.state === "accepted";
  return {
    quote_id: visible ? (h.quotes.get(s.id)?.quotedStatusId ?? null) : null,
    quote_url: q?.uri ?? null,
    quote_visible: visible,
  };
}

/**
 * Statuses in the order of `ids`; reblogs carry their original. Statuses the viewer may not see (or that could
 * not be loaded) are left out, whatever the caller asked for: callers filter pages, this is the last guard.
 */
export function renderStatuses(
  ctx: RenderContext,
  h: Hydrated,
  ids: string[],
  opts: StatusRenderOptions = {},
): Status[] {
  const out: Status[] = [];
  for (const id of ids) {
    const s = h.statuses.get(id);
    if (!s || !h.visible.has(id)) continue;
    const base = renderWithQuote(ctx, h, s, opts);
    if (!base) continue;
    if (s.reblogOfId) {
      const original = h.visible.has(s.reblogOfId) ? h.statuses.get(s.reblogOfId) : undefined;
      const inner = original && renderWithQuote(ctx, h, original, opts);
      if (!inner) continue;
      // A reblog shows the original's flags and counts, as Mastodon does.
      out.push({
        ...base,
        reblog: inner,
        reblogged: inner.reblogged,
        favourited: inner.favourited,
        bookmarked: inner.bookmarked,
        content: "",
        emojis: [],
        mentions: [],
        tags: [],
        media_attachments: [],
        poll: null,
        card: null,
        quote: null,
        pleroma: { ...base.pleroma, quote: null, quote_id: null, quote_url: null, quote_visible: false },
        filtered: inner.filtered,
      });
    } else out.push(base);
  }
  return out;
}
