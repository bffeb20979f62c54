/**
 * Posting and deleting statuses. A post is validated, its references (reply, media, list, conversation,
 * mentioned accounts, idempotency key) are read in one batch, and everything it writes (status, recipients,
 * tags, media, poll, conversation participations, counters, idempotency key) is one batch.
 */
import type { Effects } from "./effects";
import { and, eq, gt, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement, readsWhere } from "../db/client";
import { isId, newId } from "../db/ids";
import {
  accounts,
  conversations,
  idempotencyKeys,
  listAccounts,
  lists,
  mediaAttachments,
  participations,
  polls,
  quotes,
  statusRecipients,
  statuses,
  userColumns,
  users,
  type QuotePolicy,
  type Visibility,
} from "../db/schema";
import { extract, renderContent, type ContentType } from "../content/format";
import { fanOut, indexForSearch, indexOnInteraction, markPulled, nextSearchRowid, pulledByReaders } from "./feeds";
import { notifyMentions, notifySubscribers } from "./notifications";
import type { Config } from "../env";
import { notFound, unprocessable } from "../lib/errors";
import type { AccountRow, AccountWithUser, UserRow } from "./accounts";
import type { Hydrated, MediaRow, PollRow, QuoteRow, StatusRow } from "./hydrate";
import { notSilenced, visibleTo } from "./visibility";
import type { StreamEvent } from "./events";
import { outboxWrite } from "./outbox";
import { createOrAsk } from "./approval-requests";
import { localEmojisNamed, resolveLocalEmojis } from "./emoji";
import { usableUploads } from "./uploads";
import { countLinkedQuotes, linkQuotesTo, prepareQuote, quotedPostQuery, quoteWrites, recountQuotes } from "./quotes";
import { postPolicy, QUOTE_POLICIES } from "../lib/quote-policy";
import { accountsByAcctKey, knownMentions, mentionTargets, shortcodesOf } from "./post-mentions";
import { queueFileDeletions } from "./file-deletions";
import {
  authorCountersStatement,
  conversationStatements,
  mediaStatement,
  recipientsStatement,
  tagsStatement,
} from "./post-writes";

export const IDEMPOTENCY_HOURS = 6;
const MIN_EXPIRY_SECONDS = 3600;

export interface PollInput {
  options: string[];
  expires_in: number;
  multiple?: boolean;
  hide_totals?: boolean;
}

export interface PostInput {
  status?: string;
  in_reply_to_id?: string;
  media_ids?: string[];
  poll?: PollInput;
  sensitive?: boolean;
  spoiler_text?: string;
  visibility?: string;
  /**
   * Without `visibility`: a reply no wider than its parent (the stricter of the parent's and the default scope), as
   * apps offer when replying. Set by the instance's own pages, not an API parameter.
   */
  narrowToParent?: boolean;
  language?: string;
  content_type?: string;
  to?: string[];
  expires_in?: number;
  in_reply_to_conversation_id?: string;
  /** The post it quotes (Mastodon 4.5; Pleroma's `quote_id` is the same). */
  quoted_status_id?: string;
  quote_id?: string;
  /** Who may quote it (Mastodon 4.5's `quote_approval_policy`; unknown values: the author's default). */
  quote_approval_policy?: string;
}

export interface PostContext {
  d: DB;
  cfg: Config;
  base: string;
  host: string;
  author: { account: AccountRow; user: UserRow };
  appId: string | null;
  postFormats: string[];
  /**
   * Finds mentioned remote accounts this instance does not know yet (`federation/fetching/resolve.ts`, bounded in number
   * and time); those it cannot find stay plain text. Absent (e.g. the cron), unknown mentions stay text.
   */
  resolveMentions?: (acctKeys: string[]) => Promise<Map<string, AccountWithUser>>;
}

/** Checks that need no database: the same for posting now, scheduling and previews. */
export function validatePost(ctx: Pick<PostContext, "cfg" | "postFormats">, p: PostInput): void {
  const text = p.status ?? "";
  const media = p.media_ids ?? [];
  if (text.trim() === "" && media.length === 0) throw unprocessable("Validation failed: Text can't be blank");
  if (media.length > ctx.cfg.maxMediaAttachments)
    throw unprocessable(`Cannot attach more than ${ctx.cfg.maxMediaAttachments} files`);
  if (p.poll && media.length > 0) throw unprocessable("Validation failed: Polls can't have media attached");
  if (p.poll && text.trim() === "") throw unprocessable("Validation failed: Text can't be blank");
  if (text.length + (p.spoiler_text ?? "").length > ctx.cfg.maxTootChars)
    throw unprocessable("The status is over the character limit");
  if (p.expires_in !== undefined && p.expires_in <= MIN_EXPIRY_SECONDS) throw unprocessable("Expiry date is too soon");
  if (p.content_type && !ctx.postFormats.includes(p.content_type))
    throw unprocessable(`Unsupported content type: ${p.content_type}`);
  if (p.visibility && !/^(public|unlisted|private|direct|local|list:.+)$/.test(p.visibility))
    throw unprocessable(`Invalid visibility: ${p.visibility}`);
  if (p.poll) validatePoll(ctx.cfg, p.poll);
}

function validatePoll(cfg: Config, poll: PollInput): void {
  const l = cfg.pollLimits;
  if (poll.options.length < 2) throw unprocessable("Poll must contain at least 2 options");
  if (poll.options.length > l.max_options) throw unprocessable(`Poll can't contain more than ${l.max_options} options`);
  if (poll.options.some((o) => o.trim() === "")) throw unprocessable("Poll options can't be blank");
  if (poll.options.some((o) => o.length > l.max_option_chars))
    throw unprocessable(`Poll options cannot be longer than ${l.max_option_chars} characters each`);
  if (new Set(poll.options).size !== poll.options.length) throw unprocessable("Poll options must be unique");
  if (poll.expires_in < Math.max(l.min_expiration, 1)) throw unprocessable("Expiration date is too soon");
  if (poll.expires_in > l.max_expiration) throw unprocessable("Expiration date is too far in the future");
}

interface Prepared {
  status: StatusRow;
  recipients: { accountId: string; mention: boolean }[];
  mentioned: AccountWithUser[];
  addressed: AccountWithUser[];
  tags: string[];
  media: MediaRow[];
  poll: PollRow | null;
  parent: StatusRow | null;
  /** Accounts taking part in a direct conversation (author first); local ones get a participation. */
  participants: string[];
  authorFollowers: number;
  inlineFanoutMax: number;
  /** The quote it makes (services/quotes.ts). */
  quote?: QuoteRow | null;
  /**
   * A remote status written searchable on arrival (services/feeds.ts `indexOnInteraction` says which); a local
   * one always is.
   */
  searchable?: boolean;
}

/** Reads what a post refers to and builds its rows, without writing anything. */
export async function preparePost(ctx: PostContext, p: PostInput, t: number = now()): Promise<Prepared> {
  validatePost(ctx, p);
  const { d, author } = ctx;
  const me = author.account.id;
  const contentType = (p.content_type ?? "text/plain") as ContentType;
  const text = p.status ?? "";
  const found = await extract(text, contentType, ctx.host);
  const explicit = p.to?.map((n) => n.replace(/^@/, "").toLowerCase());
  const listId = p.visibility?.startsWith("list:") ? p.visibility.slice(5) : null;
  const acctKeys = [...new Set([...found.mentions, ...(explicit ?? [])])];
  const mediaIds = [...new Set(p.media_ids ?? [])];
  const shortcodes = await shortcodesOf(ctx.host, found, p.spoiler_text ?? "", p.poll?.options ?? []);
  const refs = await readReferences(d, me, p, { listId, acctKeys, mediaIds, shortcodes });
  const { parent, participation, quoted } = refs;

  let visibility = postVisibility(p, author, parent, participation !== null, listId);
  const { byKey, resolved } = await knownMentions(acctKeys, refs.mentionRows, ctx.resolveMentions);
  const mentioned = [
    ...new Map(found.mentions.flatMap((k) => byKey.get(k) ?? []).map((a) => [a.account.id, a])).values(),
  ];
  const recipients = postRecipients({
    me,
    explicit: explicit?.flatMap((k) => byKey.get(k)?.account.id ?? []),
    mentioned: mentioned.map((a) => a.account.id),
    parentAuthor: parent?.accountId ?? null,
    listMembers: visibility === "list" ? refs.memberRows.map((m) => m.accountId) : [],
    participants: participation?.p.recipients ?? [],
  });
  const content = await renderContent(text, contentType, {
    base: ctx.base,
    localHost: ctx.host,
    mentions: mentionTargets(found.mentions, byKey),
  });

  const id = newId(t);
  const uri = `${ctx.base}/objects/${id}`;
  const quote = quoted ? prepareQuote(me, quoted, { id, uri }, visibility, t) : null;
  if (quote) visibility = quote.visibility;
  const status = newStatusRow(ctx, p, {
    id,
    uri,
    threadId: participation?.threadId ?? parent?.threadId ?? id,
    parent,
    text,
    content,
    contentType,
    visibility,
    listId,
    hasMedia: refs.mediaRows.length > 0,
    cardUrl: found.links[0] ?? null,
    emojis: resolveLocalEmojis(shortcodes, refs.emojiRows),
    t,
  });
  const poll = p.poll ? pollRow(p.poll, id, t) : null;
  const addressedIds = new Set(recipients.keys());
  return {
    status,
    recipients: [...recipients].map(([accountId, mention]) => ({ accountId, mention })),
    mentioned,
    addressed: [...refs.mentionRows, ...resolved]
      .filter((r) => addressedIds.has(r.account.id))
      .concat(refs.replyToRows),
    tags: found.tags,
    media: postMedia(refs.mediaRows, mediaIds, id),
    poll,
    parent,
    participants: visibility === "direct" ? [me, ...addressedIds] : [],
    authorFollowers: author.account.followersCount,
    inlineFanoutMax: ctx.cfg.inlineFanoutMax,
    quote: quote?.row ?? null,
  };
}

/**
 * What a post refers to, read in one round trip (only the reads it needs; a plain post needs none, its author
 * came with the token): its parent and the parent's author, its uploads, its list and the list's members, the
 * conversation it answers, the accounts it names, its emoji and the post it quotes. A reference the author may
 * not use is not found (404), as an unknown one; media not theirs or used already are refused (422).
 */
async function readReferences(
  d: DB,
  me: string,
  p: PostInput,
  {
    listId,
    acctKeys,
    mediaIds,
    shortcodes,
  }: { listId: string | null; acctKeys: string[]; mediaIds: string[]; shortcodes: string[] },
) {
  const replyId = p.in_reply_to_id && isId(p.in_reply_to_id) ? p.in_reply_to_id : null;
  const conversationId = p.in_reply_to_conversation_id ?? null;
  const quotedId = p.quoted_status_id ?? p.quote_id ?? null;
  const [
    parentRows,
    mediaRows,
    listRows,
    memberRows,
    participationRows,
    mentionRows,
    emojiRows,
    replyToRows,
    quotedRows,
  ] = await readsWhere(d, [
    p.in_reply_to_id
      ? d
          .select()
          .from(statuses)
          .where(and(eq(statuses.id, replyId ?? ""), visibleTo(me)))
      : null,
    // A scheduled post being posted takes its own uploads.
    mediaIds.length ? usableUploads(d, me, mediaIds, { scheduled: true }) : null,
    listId !== null
      ? d
          .select()
          .from(lists)
          .where(and(eq(lists.id, listId), eq(lists.accountId, me)))
      : null,
    listId !== null
      ? d.select({ accountId: listAccounts.accountId }).from(listAccounts).where(eq(listAccounts.listId, listId))
      : null,
    conversationId !== null
      ? d
          .select({ p: participations, threadId: conversations.threadId })
          .from(participations)
          .innerJoin(conversations, eq(conversations.id, participations.conversationId))
          .where(and(eq(participations.id, conversationId), eq(participations.accountId, me)))
      : null,
    acctKeys.length ? accountsByAcctKey(d, acctKeys) : null,
    // A local post's `:code:` is this instance's emoji (domain NULL); the resolution is stored with the status.
    shortcodes.length ? localEmojisNamed(d, shortcodes) : null,
    p.in_reply_to_id
      ? d
          .select({ account: accounts, user: userColumns })
          .from(accounts)
          .leftJoin(users, eq(users.accountId, accounts.id))
          .where(sql`${accounts.id} = (SELECT account_id FROM statuses WHERE id = ${p.in_reply_to_id})`)
      : null,
    quotedId !== null ? quotedPostQuery(d, me, quotedId) : null,
  ] as const);

  const parent = parentRows[0] ?? null;
  if (p.in_reply_to_id && !parent) throw notFound();
  if (mediaRows.length !== mediaIds.length)
    throw unprocessable("Invalid media_ids: not found, not yours, or already used");
  if (listId && listRows.length === 0) throw notFound();
  const participation = participationRows[0] ?? null;
  if (p.in_reply_to_conversation_id && !participation) throw notFound();
  const quoted = quotedRows[0] ?? null;
  if (quotedId !== null && !quoted) throw notFound();
  return { parent, mediaRows, memberRows, participation, mentionRows, emojiRows, replyToRows, quoted };
}

/** A new local status's row: what the post asked, else the author's defaults; its counters at zero. */
function newStatusRow(
  ctx: PostContext,
  p: PostInput,
  r: {
    id: string;
    uri: string;
    threadId: string;
    parent: StatusRow | null;
    text: string;
    content: string;
    contentType: ContentType;
    visibility: Visibility;
    listId: string | null;
    hasMedia: boolean;
    cardUrl: string | null;
    emojis: StatusRow["emojis"];
    t: number;
  },
): StatusRow {
  const { author } = ctx;
  const spoiler = p.spoiler_text ?? "";
  const asked = QUOTE_POLICIES.find((x) => x === p.quote_approval_policy) ?? author.user.quotePolicy;
  return {
    id: r.id,
    uri: r.uri,
    url: `${ctx.base}/notice/${r.id}`,
    accountId: author.account.id,
    inReplyToId: r.parent?.id ?? null,
    inReplyToAccountId: r.parent?.accountId ?? null,
    reblogOfId: null,
    threadId: r.threadId,
    context: r.parent?.context ?? `${ctx.base}/contexts/${r.threadId}`,
    content: r.content,
    text: r.text,
    contentType: r.contentType,
    spoilerText: spoiler,
    visibility: r.visibility,
    listId: r.listId,
    sensitive: p.sensitive ?? (spoiler !== "" || (r.hasMedia && author.user.sensitive)),
    language: p.language ?? author.user.postingLanguage ?? null,
    appId: ctx.appId,
    local: true,
    hasMedia: r.hasMedia,
    cardUrl: r.cardUrl,
    emojis: r.emojis,
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    pinnedAt: null,
    expiresAt: p.expires_in ? r.t + p.expires_in * 1000 : null,
    createdAt: r.t,
    editedAt: null,
    searchRowid: null,
    homePull: false,
    storedAt: null,
    ...localPolicies(r.visibility, asked),
    quotesCount: 0,
  };
}

/** The uploads a post takes, in the order it names them. */
function postMedia(rows: MediaRow[], mediaIds: string[], statusId: string): MediaRow[] {
  const order = new Map(mediaIds.map((m, i) => [m, i]));
  return rows.map((m) => ({ ...m, statusId, position: order.get(m.id) ?? 0 })).sort((a, b) => a.position - b.position);
}

/** Direct stays direct: a reply in a direct thread, or to a conversation, cannot widen the audience. */
function postVisibility(
  p: PostInput,
  author: PostContext["author"],
  parent: { visibility: Visibility } | null,
  inConversation: boolean,
  listId: string | null,
): Visibility {
  const fallback = author.user.defaultScope as Visibility;
  if (inConversation || parent?.visibility === "direct") return "direct";
  if (listId) return "list";
  if (p.visibility) return p.visibility as Visibility;
  if (p.narrowToParent && parent) return narrower(parent.visibility, fallback);
  return fallback;
}

/**
 * Who a post is addressed to, each with whether it mentions them. Explicit addressing (`to`): only those are
 * addressed, and mentioned (in `mentions`, and notified), as Pleroma lists an object's `to` in its mentions;
 * mentions in the text are then links. Otherwise the mentioned and the parent's author. A list's members and a
 * conversation's participants are addressed without a mention; never the author.
 */
function postRecipients(a: {
  me: string;
  explicit: string[] | undefined;
  mentioned: string[];
  parentAuthor: string | null;
  listMembers: string[];
  participants: string[];
}): Map<string, boolean> {
  const recipients = new Map<string, boolean>();
  for (const id of a.explicit ?? a.mentioned) recipients.set(id, true);
  const unmentioned = [
    ...(a.explicit || a.parentAuthor === null ? [] : [a.parentAuthor]),
    ...a.listMembers,
    ...a.participants,
  ];
  for (const id of unmentioned) if (!recipients.has(id)) recipients.set(id, false);
  recipients.delete(a.me);
  return recipients;
}

/** A new poll's row. */
function pollRow(poll: NonNullable<PostInput["poll"]>, statusId: string, t: number): PollRow {
  return {
    id: newId(t),
    statusId,
    options: poll.options,
    multiple: poll.multiple ?? false,
    hideTotals: poll.hide_totals ?? false,
    expiresAt: t + poll.expires_in * 1000,
    closedAt: null,
    createdAt: t,
    remoteTallies: null,
    remoteVoters: null,
  };
}

/**
 * Writes a prepared post in one batch; `extra` statements (claiming a scheduled post) join it. Answers the
 * author's participation id when the post is direct.
 */
export interface Written {
  /** The author's participation, for a direct post. */
  participationId: string | null;
  /** The author's counters after the post. */
  author: { statusesCount: number; lastStatusAt: number };
  /**
   * What follows the post: `update` on the streams, push when it notified someone, delivery when it wrote an
   * outbox row (it has a remote audience), its link card.
   */
  effects: Effects;
}

export async function writePost(
  d: DB,
  prepared: Prepared,
  idempotency: { accountId: string; key: string } | null,
  extra: D1PreparedStatement[] = [],
): Promise<Written> {
  const s = prepared.status;
  s.homePull = pulledByReaders(s, prepared.authorFollowers, prepared.inlineFanoutMax);
  const t = s.createdAt;
  const searchable = s.local || prepared.searchable === true;
  const stmts: D1PreparedStatement[] = [
    statement(d, d.insert(statuses).values({ ...s, searchRowid: searchable ? nextSearchRowid : null })),
    ...(s.homePull ? [markPulled(d, s.accountId)] : []),
  ];
  if (prepared.recipients.length) stmts.push(recipientsStatement(d, s.id, prepared.recipients));
  // Its quote (the row, its notification and count, or the request to a remote author), and earlier quotes of
  // this post stored before it was.
  if (prepared.quote) stmts.push(...quoteWrites(d, s, prepared.quote));
  stmts.push(statement(d, linkQuotesTo(s)));
  // Counted: another server's post is stored after its quotes when it is fetched for them (federation/listening/quotes.ts).
  if (!s.local) stmts.push(statement(d, countLinkedQuotes(s.id)));
  // Federation: a Create for remote followers and addressees (none for local-only posts or an island), decided
  // by the statement itself after the status and its recipients are written.
  stmts.push(...(await createOrAsk(d, prepared, t)));
  const notifying = stmts.length;
  if (prepared.recipients.length) stmts.push(...notifyMentions(d, s, prepared.recipients));
  // Subscribers hear of new threads, not of replies (Pleroma 2.7).
  if (!s.inReplyToId) stmts.push(notifySubscribers(d, s));
  const notifyingEnd = stmts.length;
  if (prepared.tags.length) stmts.push(tagsStatement(d, s.id, prepared.tags));
  if (prepared.media.length) stmts.push(mediaStatement(d, s.id, prepared.media));
  if (prepared.poll) stmts.push(statement(d, d.insert(polls).values(prepared.poll)));
  if (idempotency)
    stmts.push(
      statement(d, d.insert(idempotencyKeys).values({ ...idempotency, result: `status:${s.id}`, createdAt: t })),
    );
  if (prepared.participants.length) stmts.push(...conversationStatements(d, s, prepared.participants));
  // The participations are written by the statement right after the conversation.
  const participationsAt = prepared.participants.length ? stmts.length - 1 : -1;
  const counters = stmts.length;
  stmts.push(authorCountersStatement(d, s));
  if (s.inReplyToId) stmts.push(statement(d, recountReplies(s.inReplyToId)));
  stmts.push(fanOut(d, s, s.homePull));
  if (searchable) stmts.push(indexForSearch(d, s));
  // A local user's answer makes the remote status it answers searchable.
  if (s.local && prepared.parent) stmts.push(...indexOnInteraction(d, prepared.parent));
  const results = await d.$client.batch<Record<string, any>>([...stmts, ...extra]);
  return {
    participationId:
      participationsAt >= 0
        ? (results[participationsAt].results.find((r) => r.accountId === s.accountId)?.id ?? null)
        : null,
    author: results[counters].results[0] as Written["author"],
    effects: {
      events: [{ accountId: null, event: "update", payload: s.id }],
      push: results.slice(notifying, notifyingEnd).some((r) => (r.meta?.changes ?? 0) > 0),
      // A local post's card is fetched now; a remote one's when a client asks for it.
      cards: s.cardUrl && s.local ? [s.cardUrl] : [],
    },
  };
}

// Recounts apply to local statuses and accounts only: a remote one keeps the figures its server reports.
const recountReplies = (id: string) =>
  sql`UPDATE statuses SET replies_count = (SELECT count(*) FROM statuses r WHERE r.in_reply_to_id = ${id}) WHERE id = ${id} AND local = 1`;

/** The status an earlier request with this key made, if it is recent. */
export async function findIdempotent(d: DB, accountId: string, key: string): Promise<string | null> {
  const row = await d
    .select()
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.accountId, accountId),
        eq(idempotencyKeys.key, key),
        gt(idempotencyKeys.createdAt, now() - IDEMPOTENCY_HOURS * 3600_000),
      ),
    )
    .get();
  return row?.result ?? null;
}

/**
 * Posts now. With an idempotency key, a retry returns what the first request made; two racing requests
 * are settled by the key's unique index (the loser's whole batch fails and it answers the winner's result).
 */
export type Created = { earlier: string } | ({ prepared: Prepared } & Written);

/** How far a visibility reaches (list and local-only: as followers-only, within their own audiences). */
const REACH: Record<Visibility, number> = { public: 3, unlisted: 2, local: 2, list: 1, private: 1, direct: 0 };

/** A new local post's policy columns: who may quote it; no remote policy, and no approval asked (yet). */
const localPolicies = (visibility: Visibility, asked: QuotePolicy) => ({
  quotePolicy: postPolicy(visibility, asked),
  interactionPolicy: null,
  approval: null,
});

/** A reply's visibility: the narrower of the parent's and the one asked (a list's parent: followers-only). */
function narrower(parent: Visibility, wanted: Visibility): Visibility {
  if (REACH[parent] >= REACH[wanted]) return wanted;
  return parent === "list" ? "private" : parent;
}

export async function createStatus(ctx: PostContext, p: PostInput, idempotencyKey?: string): Promise<Created> {
  const me = ctx.author.account.id;
  if (idempotencyKey) {
    const earlier = await findIdempotent(ctx.d, me, idempotencyKey);
    if (earlier) return { earlier };
  }
  const prepared = await preparePost(ctx, p);
  try {
    const written = await writePost(ctx.d, prepared, idempotencyKey ? { accountId: me, key: idempotencyKey } : null);
    return { prepared, ...written };
  } catch (e) {
    if (idempotencyKey && String(e).includes("idempotency_keys")) {
      const earlier = await findIdempotent(ctx.d, me, idempotencyKey);
      if (earlier) return { earlier };
    }
    throw e;
  }
}

/** What a preview (or the answer to a post) renders: the prepared rows in the shape hydration gives. */
export function previewHydrated(prepared: Prepared, author: AccountWithUser): Hydrated {
  const s = prepared.status;
  return {
    viewerId: s.accountId,
    page: [],
    visible: new Set([s.id]),
    statuses: new Map([[s.id, s]]),
    // The author last: its row (with the post's counters) wins over an older copy among the addressed.
    accounts: new Map([
      ...prepared.mentioned.map((a) => [a.account.id, a] as const),
      ...prepared.addressed.map((a) => [a.account.id, a] as const),
      [author.account.id, author],
    ]),
    mentions: new Map([[s.id, prepared.recipients.filter((r) => r.mention).map((r) => r.accountId)]]),
    tags: new Map([[s.id, prepared.tags]]),
    media: new Map([[s.id, prepared.media]]),
    polls: prepared.poll ? new Map([[s.id, prepared.poll]]) : new Map(),
    pollCounts: new Map(),
    pollVoters: new Map(),
    ownVotes: new Map(),
    favourited: new Set(),
    bookmarked: new Set(),
    reblogged: new Set(),
    mutedThreads: new Set(),
    reactions: new Map(),
    apps: new Map(),
    cards: new Map(),
    visibleParents: new Set(prepared.parent ? [prepared.parent.id] : []),
    // Filters never apply to the viewer's own posts.
    filters: [],
    participations: new Map(),
    // Only reactions use these; a preview has none (its own emoji are in the status row).
    emojis: new Map(),
    quotes: prepared.quote ? new Map([[s.id, prepared.quote]]) : new Map(),
    followsAuthor: new Set(),
    plainText: author.user?.noRichText ?? false,
    extra: new Map(),
  };
}

// ---- deleting ----

/**
 * Deletes statuses and everything hanging off them (reblogs of them, recipients, tags, media rows, polls,
 * favourites, bookmarks, filters' named statuses, reactions) and recounts the counters they contributed to, in one batch. Deleting a
 * status that is already gone does nothing, so repeated or overlapping runs are harmless.
 * `extra` statements join the batch. Returns the ids deleted (reblogs included), the R2 keys of media files to
 * remove, the stream events, and all of it as the deletion's `effects` (with the delivery of its Deletes).
 */
export async function deleteStatuses(
  d: DB,
  ids: string[],
  opts: {
    /** No Delete nor Undo is sent for them (an account being deleted sends one Delete of its actor instead). */
    silent?: boolean;
    extra?: D1PreparedStatement[];
    /**
     * A statement before the deletion's own (after its outbox writes) that fails, rolling the whole batch back,
     * when the deletion must not happen after all.
     */
    guard?: D1PreparedStatement;
  } = {},
): Promise<{ deleted: string[]; files: string[]; events: StreamEvent[]; effects: Effects }> {
  const extra = opts.extra ?? [];
  if (ids.length === 0) return { deleted: [], files: [], events: [], effects: {} };
  const { rows, media, addressed, quotedRows } = await readDeletion(d, ids);
  if (rows.length === 0) return { deleted: [], files: [], events: [], effects: {} };
  // An account being deleted sends one Delete of its actor instead (services/account-deletion.ts).
  const federation = opts.silent ? [] : deletionActivities(d, ids, rows, addressed);
  const files = media.map((m) => m.file).filter((f) => !/^https?:/.test(f));
  await d.$client.batch([
    ...federation,
    ...(opts.guard ? [opts.guard] : []),
    ...deletionStatements(d, rows),
    ...deletionRecounts(d, rows, quotedRows),
    // Deleted by the door after the answer, and by the cron if that fails (services/file-deletions.ts).
    ...(files.length ? [queueFileDeletions(d, files, Date.now())] : []),
    // The caller's own writes (a moderation-log entry) go in the same batch.
    ...extra,
  ]);
  const events: StreamEvent[] = rows.map((r) => ({
    accountId: null,
    event: "delete",
    payload: r.id,
    audience: {
      authorId: r.accountId,
      visibility: r.visibility,
      recipients: addressed.filter((a) => a.statusId === r.id).map((a) => a.accountId),
    },
  }));
  return {
    deleted: rows.map((r) => r.id),
    files,
    events,
    effects: { events, files },
  };
}

/** What a deletion reads in one round trip: the statuses and their reblogs, their media files, their addressees. */
async function readDeletion(d: DB, ids: string[]) {
  const json = JSON.stringify(ids);
  const targets = sql`(SELECT value FROM json_each(${json}) UNION SELECT id FROM statuses WHERE reblog_of_id IN (SELECT value FROM json_each(${json})))`;
  const [rows, media, addressed, quotedRows] = await d.batch([
    d
      .select({
        id: statuses.id,
        uri: statuses.uri,
        local: statuses.local,
        accountId: statuses.accountId,
        visibility: statuses.visibility,
        inReplyToId: statuses.inReplyToId,
        reblogOfId: statuses.reblogOfId,
        // A reblog's original, for the Undo of its Announce (the outer table named in full: drizzle leaves
        // columns unqualified in a single-table select).
        reblogOf: sql<
          string | null
        >`(SELECT json_object('uri', o.uri, 'accountId', o.account_id) FROM statuses o WHERE o.id = statuses.reblog_of_id)`,
      })
      .from(statuses)
      .where(sql`${statuses.id} IN ${targets}`),
    d
      .select({ file: mediaAttachments.file })
      .from(mediaAttachments)
      .where(sql`${mediaAttachments.statusId} IN (SELECT value FROM json_each(${json}))`),
    // A reblog reached those its original addressed.
    d
      .select({ statusId: statuses.id, accountId: statusRecipients.accountId, domain: accounts.domain })
      .from(statuses)
      .innerJoin(statusRecipients, sql`${statusRecipients.statusId} = coalesce(${statuses.reblogOfId}, ${statuses.id})`)
      .innerJoin(accounts, eq(accounts.id, statusRecipients.accountId))
      .where(sql`${statuses.id} IN ${targets}`),
    d
      .select({ id: sql<string>`${quotes.quotedStatusId}` })
      .from(quotes)
      .where(
        sql`${quotes.statusId} IN (SELECT value FROM json_each(${json})) AND ${quotes.quotedStatusId} IS NOT NULL`,
      ),
  ]);
  return { rows, media, addressed, quotedRows };
}

type DeletedRows = Awaited<ReturnType<typeof readDeletion>>;

/** The statements that delete the statuses' rows and everything hanging off them. */
function deletionStatements(d: DB, rows: DeletedRows["rows"]): D1PreparedStatement[] {
  const all = JSON.stringify(rows.map((r) => r.id));
  const inAll = (col: string) => sql`${sql.identifier(col)} IN (SELECT value FROM json_each(${all}))`;
  return [
    statement(d, sql`DELETE FROM home_feed WHERE ${inAll("status_id")}`),
    statement(
      d,
      sql`DELETE FROM statuses_fts WHERE rowid IN (SELECT search_rowid FROM statuses WHERE ${inAll("id")} AND search_rowid IS NOT NULL)`,
    ),
    statement(d, sql`DELETE FROM status_recipients WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM status_tags WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM status_edits WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM media_attachments WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE ${inAll("status_id")})`),
    statement(d, sql`DELETE FROM polls WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM favourites WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM bookmarks WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM filter_statuses WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM emoji_reactions WHERE ${inAll("status_id")}`),
    statement(d, sql`DELETE FROM notifications WHERE ${inAll("status_id")}`),
    // Quotes they make go; quotes of them stay, shown as of a deleted post (their counts recounted below).
    statement(d, sql`DELETE FROM quotes WHERE ${inAll("status_id")}`),
    statement(
      d,
      sql`UPDATE quotes SET quoted_status_id = NULL, state = CASE WHEN state = 'accepted' THEN 'deleted' ELSE state END WHERE ${inAll("quoted_status_id")}`,
    ),
    // A reblog going takes its `reblog` notification (about the original) with it, in the same batch.
    statement(
      d,
      sql`DELETE FROM notifications WHERE rowid IN (SELECT n.rowid FROM statuses r JOIN notifications n ON n.from_account_id = r.account_id
        AND n.status_id = r.reblog_of_id AND n.type = 'reblog' WHERE r.id IN (SELECT value FROM json_each(${all})) AND r.reblog_of_id IS NOT NULL)`,
    ),
    statement(d, sql`DELETE FROM statuses WHERE ${inAll("id")}`),
  ];
}

/**
 * Federation: a Delete of each local status (reblogs get the Undo of their Announce) to the audience it had,
 * written before the rows go (the statement reads the author's remote followers; addressees are listed).
 */
function deletionActivities(
  d: DB,
  ids: string[],
  rows: DeletedRows["rows"],
  addressed: DeletedRows["addressed"],
): D1PreparedStatement[] {
  const t = now();
  const stmts: D1PreparedStatement[] = [];
  for (const r of rows) {
    if (!r.local || r.reblogOfId || r.visibility === "local") continue;
    const recipients = addressed.filter((a) => a.statusId === r.id && a.domain !== null).map((a) => a.accountId);
    stmts.unshift(
      outboxWrite(
        d,
        r.accountId,
        { type: "Delete", statusId: r.id, uri: r.uri, visibility: r.visibility, recipients },
        t,
      ),
    );
  }
  // A local reblog withdrawn (not because its original is deleted): the Undo of its Announce, if one was sent.
  for (const r of rows) {
    if (!r.local || !r.reblogOfId || !r.reblogOf || ids.includes(r.reblogOfId)) continue;
    const original = JSON.parse(r.reblogOf) as { uri: string; accountId: string };
    stmts.unshift(
      outboxWrite(
        d,
        r.accountId,
        {
          type: "UndoAnnounce",
          uri: r.uri,
          objectUri: original.uri,
          visibility: r.visibility,
          originalAuthorId: original.accountId,
        },
        t,
      ),
    );
  }
  return stmts;
}

/** The counters the deleted statuses counted in: their authors' statuses, their parents' replies, reblogs. */
function deletionRecounts(
  d: DB,
  rows: DeletedRows["rows"],
  quotedRows: DeletedRows["quotedRows"],
): D1PreparedStatement[] {
  const stmts: D1PreparedStatement[] = [];
  for (const accountId of new Set(rows.map((r) => r.accountId))) {
    stmts.push(
      statement(
        d,
        sql`UPDATE accounts SET statuses_count = (SELECT count(*) FROM statuses WHERE account_id = ${accountId} AND reblog_of_id IS NULL) WHERE id = ${accountId} AND domain IS NULL`,
      ),
    );
  }
  for (const parent of new Set(rows.flatMap((r) => (r.inReplyToId ? [r.inReplyToId] : []))))
    stmts.push(statement(d, recountReplies(parent)));
  for (const original of new Set(rows.flatMap((r) => (r.reblogOfId ? [r.reblogOfId] : []))))
    stmts.push(statement(d, recountReblogs(original)));
  // The posts they quoted count them no more.
  for (const q of new Set(quotedRows.map((r) => r.id))) stmts.push(statement(d, recountQuotes(q)));
  return stmts;
}

export const recountReblogs = (id: string) =>
  sql`UPDATE statuses SET reblogs_count = (SELECT count(*) FROM statuses r WHERE r.reblog_of_id = ${id}) WHERE id = ${id} AND local = 1`;
export const recountFavourites = (id: string) =>
  // Written only when the count changed: a repeated favourite (a redelivered Like) writes no row.
  sql`UPDATE statuses SET favourites_count = c.n FROM (SELECT count(*) AS n FROM favourites f WHERE f.status_id = ${id}) AS c
    WHERE statuses.id = ${id} AND statuses.local = 1 AND statuses.favourites_count <> c.n`;

/** A status the viewer may see, or 404. */
export async function visibleStatus(d: DB, id: string, viewerId: string | null): Promise<StatusRow> {
  const row = isId(id)
    ? await d
        .select()
        .from(statuses)
        .where(and(eq(statuses.id, id), visibleTo(viewerId)))
        .get()
    : undefined;
  if (!row) throw notFound();
  return row;
}

/** Of the given ids, those the viewer may see, without authors they block or on domains they block (muted authors stay: asked for by id). */
export async function visibleAmong(d: DB, ids: string[], viewerId: string | null): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await d
    .select({ id: statuses.id })
    .from(statuses)
    .where(
      and(
        sql`${statuses.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
        visibleTo(viewerId),
        notSilenced(viewerId, true),
      ),
    );
  return new Set(rows.map((r) => r.id));
}

/** The status of a poll, when the viewer may see it (404 otherwise, as for the status itself). */
export async function visiblePollStatus(d: DB, pollId: string, viewerId: string | null): Promise<StatusRow> {
  const poll = await d.select({ statusId: polls.statusId }).from(polls).where(eq(polls.id, pollId)).get();
  if (!poll) throw notFound();
  return visibleStatus(d, poll.statusId, viewerId);
}
