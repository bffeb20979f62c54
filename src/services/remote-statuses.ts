/**
 * Remote statuses (issue 13, part 1): a `Note` (or `Article`, or `Question`) another server sent becomes a status
 * through the ONE write path of local posts (`writePost`): recipients, mention notifications, tags, conversation
 * participations, home feeds of local followers and the search index in one batch; the remote media rows and the
 * author's reported counter join that batch. Only what concerns this instance is stored (`relevant`). Updates
 * and deletes come only from the author.
 */
import type { Effects } from "./effects";
import { Article, Document, Hashtag, Link, Mention, Note, PUBLIC_COLLECTION, Question } from "@fedify/vocab";
import { LanguageString } from "@fedify/vocab-runtime";
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { newId } from "../db/ids";
import { accounts, follows, mediaAttachments, statuses, type StatusEmoji, type Visibility } from "../db/schema";
import { htmlToText, sanitizeHtml } from "../content/format";
import type { AccountRow } from "./accounts";
import { embedded, href, httpUrl, readEmoji, sameHost, sameOrigin, text } from "./remote-objects";
import type { MediaRow, PollRow, StatusRow } from "./hydrate";
import { writePost } from "./statuses";
import { votersCount } from "./remote-polls";
import { adaptObjectType, type ConvertedObject } from "../federation/object-types";

export type RemoteObject = Note | Article | Question | ConvertedObject;

/** Caps on what one remote object may add (its server decides the rest). */
const MAX_CONTENT = 100_000;
const MAX_SUMMARY = 5_000;
const MAX_TAGS = 32;
const MAX_EMOJIS = 64;
const MAX_MEDIA = 16;
const MAX_RECIPIENTS = 90;
/** The earliest publication date taken as given (2000-01-01). */
const EARLIEST = Date.UTC(2000, 0, 1);
/** Remote mentioned actors fetched per status when not yet known. */
const MAX_MENTION_FETCHES = 5;

const PUBLIC = new Set([PUBLIC_COLLECTION.href, "as:Public", "Public"]);

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
  media: { url: string; mimeType: string; description: string | null }[];
  inReplyTo: string | null;
  context: string | null;
  /** `tallies`: votes per option (`replies.totalItems`, 0 when absent); `voters`: `votersCount` (services/remote-polls.ts). */
  poll: {
    options: string[];
    multiple: boolean;
    expiresAt: number | null;
    tallies: number[];
    voters: number | null;
  } | null;
  counts: { replies: number; reblogs: number; favourites: number };
}

async function totalOf(get: () => Promise<{ totalItems: number | null } | null>): Promise<number> {
  try {
    const n = (await get())?.totalItems;
    return typeof n === "number" && n >= 0 ? Math.min(n, 2 ** 31) : 0;
  } catch {
    return 0;
  }
}

/** The language of the content (`contentMap`'s key), when the object says. */
function language(object: RemoteObject): string | null {
  const tagged = object.contents.find((c): c is LanguageString => c instanceof LanguageString);
  return tagged ? tagged.locale.baseName.slice(0, 16) : null;
}

async function hasAny(items: AsyncIterable<unknown>): Promise<boolean> {
  try {
    for await (const _ of items) return true;
  } catch {
    // Unreadable: none.
  }
  return false;
}

function mediaType(mime: string, isImage: boolean): MediaRow["type"] {
  if (mime.startsWith("image/") || (!mime && isImage)) return mime === "image/gif" ? "gifv" : "image";
  if (mime.startsWith("video/")) return "video";
  if (mime.startsWith("audio/")) return "audio";
  return "unknown";
}

/**
 * Reads a remote object. `author`: its (verified) author, whose followers collection makes it followers-only.
 * Visibility is never wider than the addressing: Public in `to` → public, in `cc` → unlisted, the author's
 * followers → private, else direct.
 */
export async function parseNote(object: RemoteObject, author: AccountRow, host: string): Promise<ParsedNote> {
  const to = object.toIds.map((u) => u.href);
  const cc = object.ccIds.map((u) => u.href);
  const followers = author.followersUrl;
  const visibility: Visibility = to.some((u) => PUBLIC.has(u))
    ? "public"
    : cc.some((u) => PUBLIC.has(u))
      ? "unlisted"
      : followers && [...to, ...cc].includes(followers)
        ? "private"
        : "direct";
  const mentions: string[] = [];
  const tags = new Set<string>();
  const emojis: StatusEmoji[] = [];
  try {
    for await (const tag of object.getTags(embedded)) {
      if (tag instanceof Mention) {
        const h = tag.href?.href;
        if (h && mentions.length < MAX_RECIPIENTS) mentions.push(h);
      } else if (tag instanceof Hashtag) {
        const name = text(tag.name).replace(/^#/, "").normalize("NFC").toLowerCase();
        if (/^[\p{L}\p{N}_]{1,100}$/u.test(name) && tags.size < MAX_TAGS) tags.add(name);
      } else {
        const emoji = await readEmoji(tag);
        // Keyed by the remote host: a remote `:blob:` is never this instance's `:blob:`.
        if (emoji && emojis.length < MAX_EMOJIS && !emojis.some((e) => e.shortcode === emoji.shortcode)) {
          emojis.push({ shortcode: emoji.shortcode, domain: host, file: emoji.url, visible_in_picker: false });
        }
      }
    }
  } catch {
    // A tag that cannot be read leaves the rest.
  }
  const media: ParsedNote["media"] = [];
  try {
    for await (const a of object.getAttachments(embedded)) {
      if (!(a instanceof Document) || media.length >= MAX_MEDIA) continue;
      const url = httpUrl(href(a.url as URL | Link | null));
      if (!url) continue;
      media.push({
        url,
        mimeType: text(a.mediaType).slice(0, 100),
        description: a.name ? text(a.name).slice(0, 1500) : null,
      });
    }
  } catch {
    // Same for attachments.
  }
  const content = object.content;
  let html = text(content).slice(0, MAX_CONTENT);
  // Misskey's quote (`_misskey_quote`, `quoteUrl`, `quoteUri`): Starling has no quotes yet, so the link is kept
  // in the text as Mastodon shows it ("RE: <url>") unless the content already links it.
  const quote = httpUrl(
    object instanceof Note || object instanceof Article || object instanceof Question ? object.quoteUrl?.href : null,
  );
  if (quote && !html.includes(quote))
    html += `<p class="quote-inline">RE: <a href="${quote.replace(/&/g, "&amp;").replace(/"/g, "&quot;")}">${quote.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</a></p>`;
  const summary = text(object.summary).slice(0, MAX_SUMMARY);
  let poll: ParsedNote["poll"] = null;
  if (object instanceof Question) {
    const options: string[] = [];
    const tallies: number[] = [];
    // `anyOf` (several choices) or `oneOf` (one).
    const multiple = object.inclusiveOptionIds.length > 0 || (await hasAny(object.getInclusiveOptions(embedded)));
    const read = multiple ? object.getInclusiveOptions(embedded) : object.getExclusiveOptions(embedded);
    try {
      for await (const o of read) {
        if (options.length >= 20) break;
        options.push(text(o.name).slice(0, 200));
        tallies.push(await totalOf(() => o.getReplies(embedded)));
      }
    } catch {
      // Unreadable options: no poll.
    }
    const end = object.endTime ?? object.closed;
    if (options.length >= 2)
      poll = {
        options,
        multiple,
        expiresAt:
          end instanceof Object && "epochMilliseconds" in end
            ? (end as { epochMilliseconds: number }).epochMilliseconds
            : null,
        tallies,
        voters: votersCount(object),
      };
  }
  // Pages, videos, events… are shown with their title and link (federation/object-types.ts).
  return adaptObjectType(object, {
    uri: object.id!.href,
    url: sameHost(httpUrl(href(object.url as URL | Link | null)), object.id!) ?? object.id!.href,
    content: await sanitizeHtml(html),
    spoilerText: htmlToText(summary).slice(0, MAX_SUMMARY),
    sensitive: object.sensitive ?? summary !== "",
    language: language(object),
    published: object.published?.epochMilliseconds ?? null,
    updated: object.updated?.epochMilliseconds ?? null,
    visibility,
    addressed: [...new Set([...to, ...cc])].filter((u) => !PUBLIC.has(u) && u !== followers).slice(0, MAX_RECIPIENTS),
    mentions,
    tags: [...tags],
    emojis,
    media,
    inReplyTo: object.replyTargetId?.href ?? null,
    // A conversation id groups a thread only when the author's own server made it: anyone could name another
    // server's (this one's `/contexts/<thread>` included) and slip into a thread it was never part of.
    context: sameOrigin(object.contextIds[0]?.href ?? null, object.id!),
    poll,
    counts: {
      replies: await totalOf(() => object.getReplies(embedded)),
      reblogs: await totalOf(() => object.getShares(embedded)),
      favourites: await totalOf(() => object.getLikes(embedded)),
    },
  });
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

export type StoreResult =
  { stored: false; reason: "exists" | "irrelevant" } | { stored: true; statusId: string; effects: Effects };

/**
 * Stores a remote status if it concerns this instance: its author is followed by a local account, or it
 * addresses or mentions a local account, or it replies to a stored local status, or a local user asked for it
 * (`requested`: a search for its URL). Idempotent by uri.
 */
export async function storeRemoteNote(
  d: DB,
  author: AccountRow,
  note: ParsedNote,
  opts: { inlineFanoutMax: number; base: string; t?: number; requested?: boolean; extra?: D1PreparedStatement[] },
): Promise<StoreResult> {
  const t = opts.t ?? now();
  const uris = JSON.stringify([...new Set([...note.addressed, ...note.mentions])]);
  const [existing, parentRows, recipientRows, followed, contextRows] = await d.batch([
    d.select({ id: statuses.id }).from(statuses).where(eq(statuses.uri, note.uri)),
    d
      .select()
      .from(statuses)
      .where(eq(statuses.uri, note.inReplyTo ?? "")),
    d
      .select({ id: accounts.id, uri: accounts.uri, local: sql<number>`${accounts.domain} IS NULL` })
      .from(accounts)
      .where(and(sql`${accounts.uri} IN (SELECT value FROM json_each(${uris}))`, eq(accounts.deactivated, false))),
    d
      .select({ id: follows.id })
      .from(follows)
      .where(
        and(
          eq(follows.targetAccountId, author.id),
          sql`EXISTS (SELECT 1 FROM accounts fa WHERE fa.id = ${follows.accountId} AND fa.domain IS NULL)`,
        ),
      )
      .limit(1),
    d
      .select({ threadId: statuses.threadId })
      .from(statuses)
      .where(eq(statuses.context, note.context ?? ""))
      .limit(1),
  ]);
  if (existing.length) return { stored: false, reason: "exists" };
  const parent = (parentRows[0] as StatusRow | undefined) ?? null;
  const recipients = new Map<string, boolean>();
  const mentioned = new Set(note.mentions);
  for (const r of recipientRows) if (r.id !== author.id) recipients.set(r.id, mentioned.has(r.uri));
  const localRecipient = recipientRows.some((r) => r.local && r.id !== author.id);
  const relevant =
    opts.requested === true || followed.length > 0 || localRecipient || (parent !== null && parent.local);
  if (!relevant) return { stored: false, reason: "irrelevant" };
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
    ...mediaInserts(d, author.id, id, note.media, t),
    // writePost recounts the author's statuses from local rows; a remote account keeps what its server reports.
    statement(
      d,
      sql`UPDATE accounts SET statuses_count = ${author.statusesCount} WHERE id = ${author.id} AND domain IS NOT NULL`,
    ),
    // The caller's own rows for the new status (a group's followers' home feeds: federation/group-announce.ts).
    ...(opts.extra ?? []),
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
        authorFollowers: author.followersCount,
        inlineFanoutMax: opts.inlineFanoutMax,
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

function mediaInserts(
  d: DB,
  accountId: string,
  statusId: string,
  media: ParsedNote["media"],
  t: number,
): D1PreparedStatement[] {
  return media.map((m, position) =>
    statement(
      d,
      d.insert(mediaAttachments).values({
        id: newId(t),
        accountId,
        statusId,
        file: m.url,
        remoteUrl: m.url,
        mimeType: m.mimeType || "application/octet-stream",
        type: mediaType(m.mimeType, false),
        description: m.description,
        position,
        createdAt: t,
      }),
    ),
  );
}

/**
 * An edit by the author (the caller checked the actor is the status's author): content, content warning,
 * sensitivity, emoji, hashtags and media are replaced, `edited_at` set. Answers the status's id, or null when
 * nothing changed (unknown status, an older or repeated edit).
 */
export async function updateRemoteNote(
  d: DB,
  author: AccountRow,
  note: ParsedNote,
  t: number = now(),
): Promise<string | null> {
  const row = await d
    .select({
      id: statuses.id,
      content: statuses.content,
      spoilerText: statuses.spoilerText,
      sensitive: statuses.sensitive,
      editedAt: statuses.editedAt,
    })
    .from(statuses)
    .where(and(eq(statuses.uri, note.uri), eq(statuses.accountId, author.id)))
    .get();
  if (!row) return null;
  // An edit older than the one shown arrived late, and a re-delivered one changes nothing: both are dropped
  // (no write, no `status.update` streamed again).
  if (note.updated !== null && row.editedAt !== null && note.updated < row.editedAt) return null;
  const same = row.content === note.content && row.spoilerText === note.spoilerText && row.sensitive === note.sensitive;
  if (same && (note.updated === null || note.updated === row.editedAt)) return null;
  await d.$client.batch([
    statement(
      d,
      d
        .update(statuses)
        .set({
          content: note.content,
          spoilerText: note.spoilerText,
          sensitive: note.sensitive,
          emojis: note.emojis,
          hasMedia: note.media.length > 0,
          editedAt: Math.min(note.updated ?? t, t),
        })
        .where(eq(statuses.id, row.id)),
    ),
    statement(d, sql`DELETE FROM status_tags WHERE status_id = ${row.id}`),
    statement(
      d,
      sql`INSERT INTO status_tags (status_id, tag) SELECT ${row.id}, value FROM json_each(${JSON.stringify(note.tags)})`,
    ),
    statement(d, sql`DELETE FROM media_attachments WHERE status_id = ${row.id}`),
    ...mediaInserts(d, author.id, row.id, note.media, t),
    statement(
      d,
      sql`UPDATE statuses_fts SET body = ${[note.spoilerText, htmlToText(note.content)].filter(Boolean).join("\n")} WHERE rowid = (SELECT search_rowid FROM statuses WHERE id = ${row.id})`,
    ),
    ...(note.poll ? pollEditStatements(d, row.id, note.poll) : []),
  ]);
  return row.id;
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
