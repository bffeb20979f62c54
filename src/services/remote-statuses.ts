/**
 * Remote statuses (issue 13, part 1): a `Note` (or `Article`, or `Question`) another server sent, read into a
 * `ParsedNote` by federation/documents/parse-note.ts, becomes a status through the ONE write path of local posts
 * (`writePost`): recipients, mention notifications, tags, conversation participations, home feeds of local
 * followers and the search index in one batch; the remote media rows and the author's reported counter join that
 * batch. Only what concerns this instance is stored (`relevant`). Updates
 * and deletes come only from the author.
 */
import type { Effects } from "./effects";
import { and, asc, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { newId } from "../db/ids";
import {
  accounts,
  follows,
  mediaAttachments,
  polls,
  statuses,
  type InteractionRules,
  type QuotePolicy,
  type StatusEmoji,
  type Visibility,
} from "../db/schema";
import { inboundQuoteRow, notifyQuoters, quotedByUriQuery, type ParsedQuote } from "./quotes";
import { searchBody } from "./feeds";
import type { AccountRow } from "./accounts";
import type { MediaRow, PollRow, StatusRow } from "./hydrate";
import { writePost } from "./statuses";
import { editedMedia, notifyEdit, versionStatements } from "./status-edits";
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

/** The columns an edit of a remote post rewrites (its interaction policy too: GoToSocial lets authors change it). */
const editedColumns = (note: ParsedNote, editedAt: number) => ({
  content: note.content,
  spoilerText: note.spoilerText,
  sensitive: note.sensitive,
  emojis: note.emojis,
  hasMedia: note.media.length > 0,
  interactionPolicy: note.interactionPolicy,
  editedAt,
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
const followedHere = (d: DB, accountId: string) =>
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
 * (`requested`: a search for its URL), or a followed relay brought it (`relayed`, public posts only). Both of the
 * last are refused near the storage ceiling. Idempotent by uri.
 */
export async function storeRemoteNote(
  d: DB,
  author: AccountRow,
  note: ParsedNote,
  opts: {
    inlineFanoutMax: number;
    base: string;
    t?: number;
    requested?: boolean;
    /** Brought by a followed relay (issue 36): relevant when public, as a relay's posts are. */
    relayed?: boolean;
    extra?: D1PreparedStatement[];
  },
): Promise<StoreResult> {
  const t = opts.t ?? now();
  const uris = JSON.stringify([...new Set([...note.addressed, ...note.mentions])]);
  // What a local user asked for is theirs, not the sender's: neither limited nor counted.
  const sender = opts.requested === true ? null : senderOf(author.uri);
  const lt = opts.t ?? limitsClock.now();
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
    followedHere(d, author.id),
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
  if (existing.length) return { stored: false, reason: "exists" };
  const quoted = note.quote ? (quotedRows[0] ?? null) : null;
  const parent = (parentRows[0] as StatusRow | undefined) ?? null;
  const recipients = new Map<string, boolean>();
  const mentioned = new Set(note.mentions);
  for (const r of recipientRows) if (r.id !== author.id) recipients.set(r.id, mentioned.has(r.uri));
  const localRecipient = recipientRows.some((r) => r.local && r.id !== author.id);
  // Public only, as the federation policies left it (an unlisted post would be stored and shown nowhere).
  const relayed = opts.relayed === true && note.visibility === "public";
  // A quote of a local post concerns its author as a reply does.
  const quotesLocal = quoted?.local === true;
  const relevant =
    opts.requested === true ||
    relayed ||
    followed.length > 0 ||
    localRecipient ||
    (parent !== null && parent.local) ||
    quotesLocal;
  if (!relevant) return { stored: false, reason: "irrelevant" };
  const concernsLocal = localRecipient || (parent !== null && parent.local) || quotesLocal;
  // What one actor and one host may make this instance store (services/inbound-limits.ts).
  const item = { bytes: itemBytes(note), followed: followed.length > 0, concernsLocal };
  const verdict: Verdict = sender ? judge(usage, sender, item, lt) : { ok: true, solicitedMention: concernsLocal };
  if (!verdict.ok) {
    await recordRefusal(d, verdict, lt);
    return { stored: false, reason: "throttled", retryAfter: verdict.retryAfter };
  }
  // Near the database's ceiling or the plan's caps, what only a fetch here brought (nobody follows its author,
  // nobody here is addressed, it answers nothing local) is refused first (services/storage.ts); what only a relay
  // brought waits from 80% of a cap already (services/usage-budget.ts). A stranger's mention beyond its small
  // allowance is such content too.
  const unsolicited = followed.length === 0 && !(concernsLocal && verdict.solicitedMention);
  const budget = budgetFrom(day[0], t);
  if (unsolicited && !acceptsUnsolicited(fromRow(storage), budget.level))
    return { stored: false, reason: acceptsUnsolicited(fromRow(storage)) ? "over budget" : "storage full" };
  if (unsolicited && relayed && opts.requested !== true && pausesFetching(budget))
    return { stored: false, reason: "over budget" };
  // A reply reaches the parent's author (as a local reply does), when that author is among the addressed.
  if (
    parent &&
    parent.accountId !== author.id &&
    !recipients.has(parent.accountId) &&
    recipientRows.some((r) => r.id === parent.accountId)
  )
    recipients.set(parent.accountId, false);

  // Remote ids are ordered by their publication (never later than now: a future date cannot pin a status on top).
  // Ids are made from the time: a date before 2000 (or none) is taken as now, so no id is malformed or sorts
  // before everything.
  const published = note.published !== null && note.published >= EARLIEST ? Math.min(note.published, t) : t;
  const id = newId(published);
  const threadId = parent?.threadId ?? contextRows[0]?.threadId ?? id;
  const status: StatusRow = {
    id,
    uri: note.uri,
    url: note.url,
    accountId: author.id,
    inReplyToId: parent?.id ?? null,
    inReplyToAccountId: parent?.accountId ?? null,
    reblogOfId: null,
    threadId,
    context: note.context ?? parent?.context ?? `${opts.base}/contexts/${threadId}`,
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
  const poll: PollRow | null = note.poll
    ? {
        id: newId(t),
        statusId: id,
        options: note.poll.options,
        multiple: note.poll.multiple,
        hideTotals: false,
        expiresAt: note.poll.expiresAt,
        closedAt: null,
        createdAt: t,
        remoteTallies: note.poll.tallies,
        remoteVoters: note.poll.voters,
      }
    : null;
  const extra: D1PreparedStatement[] = [
    ...mediaInserts(d, remoteMedia(author.id, id, note.media, t)),
    // The caller's own rows for the new status (a group's followers' home feeds: federation/listening/group-posts.ts).
    ...(opts.extra ?? []),
    ...(sender ? countStatements(d, sender, item, verdict.solicitedMention, lt) : []),
  ];
  try {
    const written = await writePost(
      d,
      {
        status,
        recipients: [...recipients].map(([accountId, mention]) => ({ accountId, mention })),
        mentioned: [],
        addressed: [],
        tags: note.tags,
        media: [],
        poll,
        parent,
        participants: note.visibility === "direct" ? [author.id, ...recipients.keys()] : [],
        quote: note.quote ? inboundQuoteRow(id, author.id, note.quote, quoted, t) : null,
        authorFollowers: author.followersCount,
        inlineFanoutMax: opts.inlineFanoutMax,
        // Searchable now when it is someone's here; otherwise on a local user's first interaction.
        searchable: localRecipient || parent?.local === true || opts.requested === true,
      },
      null,
      extra,
    );
    return {
      stored: true,
      statusId: id,
      effects: written.effects,
    };
  } catch (e) {
    // A concurrent delivery of the same object stored it first (the uri is unique): nothing more to do.
    if (String(e).includes("statuses.uri") || String(e).includes("UNIQUE")) return { stored: false, reason: "exists" };
    throw e;
  }
}

/** A remote status's attachments as rows (ids made here, so a kept version names the same ones). */
function remoteMedia(accountId: string, statusId: string, media: ParsedNote["media"], t: number): MediaRow[] {
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

const mediaInserts = (d: DB, rows: MediaRow[]) => rows.map((m) => statement(d, d.insert(mediaAttachments).values(m)));

/**
 * An edit by the author (the caller checked the actor is the status's author): content, content warning,
 * sensitivity, emoji, hashtags and media are replaced, `edited_at` set, the version kept (the original too, on the
 * first edit: services/status-edits.ts) and local rebloggers notified. Answers the status's id and what follows,
 * or null when nothing changed (unknown status, an older or repeated edit), or how long to wait when the author or
 * its host has spent its inbound allowance (services/inbound-limits.ts: an edit counts as a post does).
 */
export async function updateRemoteNote(
  d: DB,
  author: AccountRow,
  note: ParsedNote,
  t: number = now(),
): Promise<{ statusId: string; effects: Effects } | { retryAfter: number } | null> {
  const sender = senderOf(author.uri);
  const lt = limitsClock.now();
  const [rows, mediaRows, pollRows, followed, usage] = await d.batch([
    d
      .select()
      .from(statuses)
      .where(and(eq(statuses.uri, note.uri), eq(statuses.accountId, author.id))),
    d
      .select()
      .from(mediaAttachments)
      .where(sql`${mediaAttachments.statusId} = (SELECT id FROM statuses WHERE uri = ${note.uri})`)
      .orderBy(asc(mediaAttachments.position)),
    d
      .select({ options: polls.options })
      .from(polls)
      .where(sql`${polls.statusId} = (SELECT id FROM statuses WHERE uri = ${note.uri})`),
    followedHere(d, author.id),
    usageRows(d, sender, lt),
  ]);
  const row = rows[0];
  if (!row) return null;
  // An edit older than the one shown arrived late, and a re-delivered one changes nothing: both are dropped
  // (no write, no `status.update` streamed again).
  if (note.updated !== null && row.editedAt !== null && note.updated < row.editedAt) return null;
  const same = row.content === note.content && row.spoilerText === note.spoilerText && row.sensitive === note.sensitive;
  if (same && (note.updated === null || note.updated === row.editedAt)) return null;
  const item = { bytes: itemBytes(note), followed: followed.length > 0, concernsLocal: false };
  const verdict = judge(usage, sender, item, lt);
  if (!verdict.ok) {
    await recordRefusal(d, verdict, lt);
    return { retryAfter: verdict.retryAfter };
  }
  const editedAt = Math.min(note.updated ?? t, t);
  const media = remoteMedia(author.id, row.id, note.media, t);
  const stmts = [
    statement(d, d.update(statuses).set(editedColumns(note, editedAt)).where(eq(statuses.id, row.id))),
    statement(d, sql`DELETE FROM status_tags WHERE status_id = ${row.id}`),
    statement(
      d,
      sql`INSERT INTO status_tags (status_id, tag) SELECT ${row.id}, value FROM json_each(${JSON.stringify(note.tags)})`,
    ),
    statement(d, sql`DELETE FROM media_attachments WHERE status_id = ${row.id}`),
    ...mediaInserts(d, media),
    statement(
      d,
      sql`UPDATE statuses_fts SET body = ${searchBody(note)} WHERE rowid = (SELECT search_rowid FROM statuses WHERE id = ${row.id})`,
    ),
    ...(note.poll ? pollEditStatements(d, row.id, note.poll) : []),
    ...versionStatements(
      d,
      row.id,
      {
        content: row.content,
        spoilerText: row.spoilerText,
        sensitive: row.sensitive,
        emojis: row.emojis,
        media: mediaRows.map(editedMedia),
        poll: pollRows[0] ? { options: pollRows[0].options } : null,
        createdAt: row.editedAt ?? row.createdAt,
      },
      {
        content: note.content,
        spoilerText: note.spoilerText,
        sensitive: note.sensitive,
        emojis: note.emojis,
        media: media.map(editedMedia),
        poll: note.poll ? { options: note.poll.options } : null,
        createdAt: editedAt,
      },
    ),
  ];
  stmts.push(...countStatements(d, sender, item, false, lt));
  const notifying = stmts.push(notifyEdit(d, row, t)) - 1;
  const quoters = stmts.push(notifyQuoters(d, row, t)) - 1;
  const results = await d.$client.batch(stmts);
  return {
    statusId: row.id,
    effects: {
      // Shown again, edited, on the streams that show it.
      events: [{ accountId: null, event: "status.update", payload: row.id }],
      push: [notifying, quoters].some((i) => (results[i]!.meta?.changes ?? 0) > 0),
    },
  };
}

/**
 * A poll whose options were edited is a new poll (as Mastodon resets it): the votes here go, and the options, end
 * and tallies are the edit's. Unchanged options leave the poll alone (its tallies are `Update{Question}`'s).
 */
function pollEditStatements(d: DB, statusId: string, poll: NonNullable<ParsedNote["poll"]>): D1PreparedStatement[] {
  const options = JSON.stringify(poll.options);
  const changed = sql`status_id = ${statusId} AND options <> ${options}`;
  return [
    statement(d, sql`DELETE FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE ${changed})`),
    statement(
      d,
      sql`UPDATE polls SET options = ${options}, multiple = ${poll.multiple ? 1 : 0}, expires_at = ${poll.expiresAt}, closed_at = NULL,
        remote_tallies = ${JSON.stringify(poll.tallies)}, remote_voters = ${poll.voters} WHERE ${changed}`,
    ),
  ];
}

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
