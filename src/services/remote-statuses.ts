/**
 * Remote statuses (issue 13, part 1): a `Note` (or `Article`, or `Question`) another server sent, read into a
 * `ParsedNote` by federation/documents/parse-note.ts, becomes a status through the ONE write path of local posts
 * (`writePost`): recipients, mention notifications, tags, conversation participations, home feeds of local
 * followers and the search index in one batch; the remote media rows and the author's reported counter join that
 * batch. Only what concerns this instance is stored (`tiesHere`). Updates (services/remote-status-edits.ts) and
 * deletes come only from the author.
 */
import type { Effects } from "./effects";
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { newId } from "../db/ids";
import {
  accounts,
  follows,
  mediaAttachments,
  statuses,
  type InteractionRules,
  type QuotePolicy,
  type StatusEmoji,
  type Visibility,
} from "../db/schema";
import { inboundQuoteRow, quotedByUriQuery, type ParsedQuote } from "./quotes";
import type { AccountRow } from "./accounts";
import type { MediaRow, PollRow, StatusRow } from "./hydrate";
import { writePost } from "./statuses";
import { acceptsUnsolicited, fromRow, storageRow } from "./storage";
import { budgetFrom, budgetRow, pausesFetching } from "./usage-budget";
import {
  countStatements,
  itemBytes,
  judge,
  limitsClock,
  recordRefusal,
  senderOf,
  usageRows,
  type Sender,
  type Verdict,
} from "./inbound-limits";

/** The earliest publication date taken as given (2000-01-01). */
const EARLIEST = Date.UTC(2000, 0, 1);
/** Remote mentioned actors fetched per status when not yet known. */
const MAX_MENTION_FETCHES = 5;

/** What a remote object says, read once (every property the rows need), before anything is stored. */
export interface ParsedNote {
  uri: string;
  url: string;
  content: string;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  published: number | null;
  updated: number | null;
  visibility: Visibility;
  /** Actor ids in to/cc (not collections), and the hrefs of `Mention` tags. */
  addressed: string[];
  mentions: string[];
  tags: string[];
  emojis: StatusEmoji[];
  media: { url: string; mimeType: string; description: string | null; width?: number; height?: number }[];
  inReplyTo: string | null;
  context: string | null;
  /** `tallies`: votes per option (`replies.totalItems`, 0 when absent); `voters`: `votersCount` (federation/documents/parse-note.ts). */
  poll: {
    options: string[];
    multiple: boolean;
    expiresAt: number | null;
    tallies: number[];
    voters: number | null;
  } | null;
  counts: { replies: number; reblogs: number; favourites: number };
  /** The post it quotes, in whichever form it says so (services/quotes.ts). */
  quote: ParsedQuote | null;
  /** Who may quote it, from its `interactionPolicy` (null: it says nothing). */
  quotePolicy: QuotePolicy | null;
  /** Who may reply, like and boost, from the same (null: anyone may). */
  interactionPolicy: InteractionRules | null;
}

/** The columns a stored remote post takes from its policies (and none of a local interaction's approval). */
const policyColumns = (note: ParsedNote) => ({
  quotePolicy: note.quotePolicy,
  interactionPolicy: note.interactionPolicy,
  approval: null,
});

function mediaType(mime: string, isImage: boolean): MediaRow["type"] {
  if (mime.startsWith("image/") || (!mime && isImage)) return mime === "image/gif" ? "gifv" : "image";
  if (mime.startsWith("video/")) return "video";
  if (mime.startsWith("audio/")) return "audio";
  return "unknown";
}

/** Remote hrefs of mentions not stored yet (the caller may fetch a few of them as actors before storing). */
export async function unknownMentions(d: DB, note: ParsedNote, localOrigin: string): Promise<string[]> {
  // Actor ids only (an `acct:` href would mean a WebFinger look-up), and never this instance's.
  const remote = note.mentions.filter((u) => /^https?:\/\//i.test(u) && !u.startsWith(`${localOrigin}/`));
  if (remote.length === 0) return [];
  const known = await d
    .select({ uri: accounts.uri })
    .from(accounts)
    .where(sql`${accounts.uri} IN (SELECT value FROM json_each(${JSON.stringify(remote)}))`);
  const have = new Set(known.map((k) => k.uri));
  return remote.filter((u) => !have.has(u)).slice(0, MAX_MENTION_FETCHES);
}

/** A local account follows `accountId` (one row at most), as a query that can join a batch. */
export const followedHere = (d: DB, accountId: string) =>
  d
    .select({ id: follows.id })
    .from(follows)
    .where(
      and(
        eq(follows.targetAccountId, accountId),
        sql`EXISTS (SELECT 1 FROM accounts fa WHERE fa.id = ${follows.accountId} AND fa.domain IS NULL)`,
      ),
    )
    .limit(1);

export type StoreResult =
  | { stored: false; reason: "exists" | "irrelevant" | "storage full" | "over budget" }
  /** Over the author's or its host's inbound limits (services/inbound-limits.ts): answered 429 for `retryAfter` s. */
  | { stored: false; reason: "throttled"; retryAfter: number }
  | { stored: true; statusId: string; effects: Effects };

/**
 * Stores a remote status if it concerns this instance: its author is followed by a local account, or it
 * addresses or mentions a local account, or it replies to a stored local status, or a local user asked for it
 * (`requested`: a search for its URL), or a stored post quotes it (`quotedBy`), or a followed relay brought it
 * (`relayed`, public posts only). What only these last brought is refused near the storage ceiling. Idempotent by uri.
 */
export async function storeRemoteNote(
  d: DB,
  author: AccountRow,
  note: ParsedNote,
  opts: StoreOptions,
): Promise<StoreResult> {
  const t = opts.t ?? now();
  // What a local user asked for is theirs, not the sender's: neither limited nor counted. A quoted post fetched
  // for a stored post is its quoting author's doing: counted to them (and judged by whether they are followed).
  const counted = opts.quotedBy ?? author;
  const sender = opts.requested === true ? null : senderOf(counted.uri);
  const lt = opts.t ?? limitsClock.now();
  const found = await surroundings(d, author, note, sender, t, lt, counted.id);
  if (found.existing) return { stored: false, reason: "exists" };
  const ties = tiesHere(author, note, found, opts);
  if (!ties.relevant) return { stored: false, reason: "irrelevant" };
  // What one actor and one host may make this instance store (services/inbound-limits.ts).
  const item = { bytes: itemBytes(note), followed: found.followed, concernsLocal: ties.concernsLocal };
  const verdict: Verdict = sender
    ? judge(found.usage, sender, item, lt)
    : { ok: true, solicitedMention: ties.concernsLocal };
  if (!verdict.ok) {
    await recordRefusal(d, verdict, lt);
    return { stored: false, reason: "throttled", retryAfter: verdict.retryAfter };
  }
  const refused = overCeiling(found, ties, verdict.solicitedMention, opts, t);
  if (refused) return { stored: false, reason: refused };
  const status = remoteStatusRow(author, note, found, opts.base, t);
  const poll = note.poll ? remotePollRow(status.id, note.poll, t) : null;
  const extra: D1PreparedStatement[] = [
    ...mediaInserts(d, remoteMedia(author.id, status.id, note.media, t)),
    // The caller's own rows for the new status (a group's followers' home feeds: federation/listening/group-posts.ts).
    ...(opts.extra ?? []),
    ...(sender ? countStatements(d, sender, item, verdict.solicitedMention, lt) : []),
  ];
  return writeRemotePost(d, { author, note, status, poll, found, ties, opts, extra, t });
}

export interface StoreOptions {
  inlineFanoutMax: number;
  base: string;
  t?: number;
  requested?: boolean;
  /** Fetched because a stored post of this account quotes it: relevant, and counted to that account's limits. */
  quotedBy?: AccountRow;
  /** Brought by a followed relay (issue 36): relevant when public, as a relay's posts are. */
  relayed?: boolean;
  extra?: D1PreparedStatement[];
}

/** What is stored already around the note (itself, its parent, thread, addressees, quoted post) and the limits. */
type Surroundings = Awaited<ReturnType<typeof surroundings>>;

/** Everything storing a note reads first, in one batch: what it touches here and the limits it must pass. */
async function surroundings(
  d: DB,
  author: AccountRow,
  note: ParsedNote,
  sender: Sender | null,
  t: number,
  lt: number,
  countedId: string,
) {
  const uris = JSON.stringify([...new Set([...note.addressed, ...note.mentions])]);
  const [existing, parentRows, recipientRows, followed, contextRows, storage, day, usage, quotedRows] = await d.batch([
    d.select({ id: statuses.id }).from(statuses).where(eq(statuses.uri, note.uri)),
    d
      .select()
      .from(statuses)
      .where(eq(statuses.uri, note.inReplyTo ?? "")),
    d
      .select({ id: accounts.id, uri: accounts.uri, local: sql<number>`${accounts.domain} IS NULL` })
      .from(accounts)
      .where(and(sql`${accounts.uri} IN (SELECT value FROM json_each(${uris}))`, eq(accounts.deactivated, false))),
    followedHere(d, countedId),
    d
      .select({ threadId: statuses.threadId })
      .from(statuses)
      .where(eq(statuses.context, note.context ?? ""))
      .limit(1),
    storageRow(d),
    budgetRow(d, t),
    usageRows(d, sender ?? { actor: "", host: "" }, lt),
    quotedByUriQuery(d, note.quote?.uri ?? "", author.id),
  ]);
  return {
    existing: existing.length > 0,
    parent: (parentRows[0] as StatusRow | undefined) ?? null,
    recipientRows,
    followed: followed.length > 0,
    /** The thread of a stored status of the same conversation (`context`). */
    contextThreadId: contextRows[0]?.threadId ?? null,
    storage,
    day,
    usage,
    quoted: note.quote ? (quotedRows[0] ?? null) : null,
  };
}

/** How the note concerns this instance: the local accounts it reaches (id → mentioned) and whether it is kept. */
function tiesHere(author: AccountRow, note: ParsedNote, found: Surroundings, opts: StoreOptions) {
  const { parent, recipientRows } = found;
  const recipients = new Map<string, boolean>();
  const mentioned = new Set(note.mentions);
  for (const r of recipientRows) if (r.id !== author.id) recipients.set(r.id, mentioned.has(r.uri));
  // A reply reaches the parent's author (as a local reply does), when that author is among the addressed.
  if (
    parent &&
    parent.accountId !== author.id &&
    !recipients.has(parent.accountId) &&
    recipientRows.some((r) => r.id === parent.accountId)
  )
    recipients.set(parent.accountId, false);
  const localRecipient = recipientRows.some((r) => r.local && r.id !== author.id);
  // Public only, as the federation policies left it (an unlisted post would be stored and shown nowhere).
  const relayed = opts.relayed === true && note.visibility === "public";
  // A quote of a local post concerns its author as a reply does.
  const concernsLocal = localRecipient || (parent !== null && parent.local) || found.quoted?.local === true;
  const relevant = opts.requested === true || opts.quotedBy !== undefined || relayed || found.followed || concernsLocal;
  return { recipients, localRecipient, relayed, concernsLocal, relevant };
}

/**
 * Near the database's ceiling or the plan's caps, what only a fetch here brought (nobody follows its author,
 * nobody here is addressed, it answers nothing local) is refused first (services/storage.ts); what only a relay
 * brought waits from 80% of a cap already (services/usage-budget.ts). A stranger's mention beyond its small
 * allowance is such content too. Answers the refusal, or null.
 */
function overCeiling(
  found: Surroundings,
  ties: ReturnType<typeof tiesHere>,
  solicitedMention: boolean,
  opts: StoreOptions,
  t: number,
): "storage full" | "over budget" | null {
  const unsolicited = !found.followed && !(ties.concernsLocal && solicitedMention);
  const budget = budgetFrom(found.day[0], t);
  if (unsolicited && !acceptsUnsolicited(fromRow(found.storage), budget.level))
    return acceptsUnsolicited(fromRow(found.storage)) ? "over budget" : "storage full";
  if (unsolicited && ties.relayed && opts.requested !== true && pausesFetching(budget)) return "over budget";
  return null;
}

/**
 * The status row of a remote note. Remote ids are ordered by their publication (never later than now: a future
 * date cannot pin a status on top). Ids are made from the time: a date before 2000 (or none) is taken as now, so
 * no id is malformed or sorts before everything.
 */
function remoteStatusRow(
  author: AccountRow,
  note: ParsedNote,
  found: Surroundings,
  base: string,
  t: number,
): StatusRow {
  const { parent } = found;
  const published = note.published !== null && note.published >= EARLIEST ? Math.min(note.published, t) : t;
  const id = newId(published);
  const threadId = parent?.threadId ?? found.contextThreadId ?? id;
  return {
    id,
    uri: note.uri,
    url: note.url,
    accountId: author.id,
    inReplyToId: parent?.id ?? null,
    inReplyToAccountId: parent?.accountId ?? null,
    reblogOfId: null,
    threadId,
    context: note.context ?? parent?.context ?? `${base}/contexts/${threadId}`,
    content: note.content,
    text: "",
    contentType: "text/html",
    spoilerText: note.spoilerText,
    visibility: note.visibility,
    listId: null,
    sensitive: note.sensitive,
    language: note.language,
    appId: null,
    local: false,
    hasMedia: note.media.length > 0,
    cardUrl: null,
    emojis: note.emojis,
    repliesCount: note.counts.replies,
    reblogsCount: note.counts.reblogs,
    favouritesCount: note.counts.favourites,
    pinnedAt: null,
    expiresAt: null,
    createdAt: published,
    editedAt: null,
    searchRowid: null,
    homePull: false,
    storedAt: t,
    ...policyColumns(note),
    quotesCount: 0,
  };
}

/** A remote poll's row: its tallies are its server's (`remoteTallies`), votes here add to them. */
function remotePollRow(statusId: string, poll: NonNullable<ParsedNote["poll"]>, t: number): PollRow {
  return {
    id: newId(t),
    statusId,
    options: poll.options,
    multiple: poll.multiple,
    hideTotals: false,
    expiresAt: poll.expiresAt,
    closedAt: null,
    createdAt: t,
    remoteTallies: poll.tallies,
    remoteVoters: poll.voters,
  };
}

/** The rows of a remote status (writePost's one batch, the caller's `extra` in it), or "exists" if one raced. */
async function writeRemotePost(
  d: DB,
  w: {
    author: AccountRow;
    note: ParsedNote;
    status: StatusRow;
    poll: PollRow | null;
    found: Surroundings;
    ties: ReturnType<typeof tiesHere>;
    opts: StoreOptions;
    extra: D1PreparedStatement[];
    t: number;
  },
): Promise<StoreResult> {
  const { author, note, status, found, ties, opts } = w;
  const { parent } = found;
  try {
    const written = await writePost(
      d,
      {
        status,
        recipients: [...ties.recipients].map(([accountId, mention]) => ({ accountId, mention })),
        mentioned: [],
        addressed: [],
        tags: note.tags,
        media: [],
        poll: w.poll,
        parent,
        participants: note.visibility === "direct" ? [author.id, ...ties.recipients.keys()] : [],
        quote: note.quote ? inboundQuoteRow(status.id, author.id, note.quote, found.quoted, w.t) : null,
        authorFollowers: author.followersCount,
        inlineFanoutMax: opts.inlineFanoutMax,
        // Searchable now when it is someone's here; otherwise on a local user's first interaction.
        searchable: ties.localRecipient || parent?.local === true || opts.requested === true,
      },
      null,
      w.extra,
    );
    return { stored: true, statusId: status.id, effects: written.effects };
  } catch (e) {
    // A concurrent delivery of the same object stored it first (the uri is unique): nothing more to do.
    if (String(e).includes("statuses.uri") || String(e).includes("UNIQUE")) return { stored: false, reason: "exists" };
    throw e;
  }
}

/** A remote status's attachments as rows (ids made here, so a kept version names the same ones). */
export function remoteMedia(accountId: string, statusId: string, media: ParsedNote["media"], t: number): MediaRow[] {
  return media.map((m, position) => ({
    id: newId(t),
    accountId,
    statusId,
    scheduledStatusId: null,
    file: m.url,
    remoteUrl: m.url,
    mimeType: m.mimeType || "application/octet-stream",
    type: mediaType(m.mimeType, false),
    description: m.description,
    size: 0,
    position,
    createdAt: t,
    chatMessageId: null,
    removedByEdit: false,
    pending: null,
    meta: m.width && m.height ? { original: { width: m.width, height: m.height } } : null,
  }));
}

export const mediaInserts = (d: DB, rows: MediaRow[]) =>
  rows.map((m) => statement(d, d.insert(mediaAttachments).values(m)));

/** The stored status with this uri if the actor `authorUri` wrote it (null: unknown, or someone else's). */
export async function authoredStatus(d: DB, uri: string, authorUri: string): Promise<string | null> {
  const row = await d
    .select({ id: statuses.id })
    .from(statuses)
    .innerJoin(accounts, eq(accounts.id, statuses.accountId))
    .where(and(eq(statuses.uri, uri), eq(accounts.uri, authorUri), sql`${accounts.domain} IS NOT NULL`))
    .get();
  return row?.id ?? null;
}
