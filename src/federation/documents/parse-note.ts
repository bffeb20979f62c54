/**
 * Reading a remote `Note` (or `Article`, `Question`, or a page, video, event… shown as one: object-types.ts) into
 * a `ParsedNote`, the plain value services/remote-statuses.ts stores: every property the rows need, read once as
 * embedded (nothing fetched), capped, and its visibility taken from the addressing.
 */
import { Article, Document, Hashtag, Link, Mention, Note, PUBLIC_COLLECTION, Question } from "@fedify/vocab";
import { LanguageString } from "@fedify/vocab-runtime";
import type { StatusEmoji, Visibility } from "../../db/schema";
import { htmlToText, sanitizeHtml } from "../../content/format";
import type { AccountRow } from "../../services/accounts";
import type { ParsedNote } from "../../services/remote-statuses";
import type { ParsedQuote } from "../../services/quotes";
import { readPolicies } from "./remote-interaction-policy";
import { embedded, href, httpUrl, readEmoji, sameHost, sameOrigin, text } from "./remote-objects";
import { adaptObjectType, type ConvertedObject } from "./object-types";

export type RemoteObject = Note | Article | Question | ConvertedObject;

/** Caps on what one remote object may add (its server decides the rest). */
const MAX_CONTENT = 100_000;
const MAX_SUMMARY = 5_000;
const MAX_TAGS = 32;
const MAX_EMOJIS = 64;
const MAX_MEDIA = 16;
const MAX_RECIPIENTS = 90;

const PUBLIC = new Set([PUBLIC_COLLECTION.href, "as:Public", "Public"]);

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

/**
 * Reads a remote object. `author`: its (verified) author, whose followers collection makes it followers-only.
 * Visibility is never wider than the addressing (`visibilityOf`).
 */
export async function parseNote(object: RemoteObject, author: AccountRow, host: string): Promise<ParsedNote> {
  const to = object.toIds.map((u) => u.href);
  const cc = object.ccIds.map((u) => u.href);
  const followers = author.followersUrl;
  const { mentions, tags, emojis, quoteTags } = await readTags(object, host);
  const media = await readMedia(object);
  const html = text(object.content).slice(0, MAX_CONTENT);
  const quote = readQuote(object, quoteTags);
  const summary = text(object.summary).slice(0, MAX_SUMMARY);
  const poll = object instanceof Question ? await readPoll(object) : null;
  // Pages, videos, events… are shown with their title and link (federation/documents/object-types.ts).
  return adaptObjectType(object, {
    uri: object.id!.href,
    url: sameHost(httpUrl(href(object.url as URL | Link | null)), object.id!) ?? object.id!.href,
    content: await sanitizeHtml(html),
    spoilerText: htmlToText(summary).slice(0, MAX_SUMMARY),
    sensitive: object.sensitive ?? summary !== "",
    language: language(object),
    published: object.published?.epochMilliseconds ?? null,
    updated: object.updated?.epochMilliseconds ?? null,
    visibility: visibilityOf(to, cc, followers),
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
    counts: await readCounts(object),
    quote,
    ...readPolicies(object, author),
  });
}

/**
 * The visibility the addressing gives, never wider: Public in `to` → public, in `cc` → unlisted, the author's
 * followers → private, else direct.
 */
function visibilityOf(to: string[], cc: string[], followers: string | null): Visibility {
  if (to.some((u) => PUBLIC.has(u))) return "public";
  if (cc.some((u) => PUBLIC.has(u))) return "unlisted";
  return followers && [...to, ...cc].includes(followers) ? "private" : "direct";
}

/** What the tags name, capped: mentioned actors, hashtags, the author's server's custom emojis, quote links. */
async function readTags(object: RemoteObject, host: string) {
  const mentions: string[] = [];
  const tags = new Set<string>();
  const emojis: StatusEmoji[] = [];
  const quoteTags: string[] = [];
  try {
    for await (const tag of object.getTags(embedded)) {
      if (tag instanceof Link && !(tag instanceof Mention) && !(tag instanceof Hashtag)) {
        const h = quoteLink(tag);
        if (h) quoteTags.push(h);
      } else if (tag instanceof Mention) {
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
  return { mentions, tags, emojis, quoteTags };
}

/** FEP-e232's object link (Misskey's `_misskey_quote` relation, or any link to an ActivityStreams object). */
function quoteLink(tag: Link): string | null {
  const h = httpUrl(tag.href?.href ?? null);
  const m = text(tag.mediaType);
  const quoting =
    tag.rels.includes("https://misskey-hub.net/ns#_misskey_quote") || /activitystreams|activity\+json/.test(m);
  return h && quoting ? h : null;
}

/** The attached files (http(s) documents), capped, with the size their server gives when sane. */
async function readMedia(object: RemoteObject): Promise<ParsedNote["media"]> {
  const media: ParsedNote["media"] = [];
  try {
    for await (const a of object.getAttachments(embedded)) {
      if (!(a instanceof Document) || media.length >= MAX_MEDIA) continue;
      const url = httpUrl(href(a.url as URL | Link | null));
      if (!url) continue;
      // Its size as its server says (never our own guess), when sane.
      const side = (n: number | null) =>
        typeof n === "number" && Number.isInteger(n) && n > 0 && n <= 100_000 ? n : null;
      const [width, height] = [side(a.width), side(a.height)];
      media.push({
        url,
        mimeType: text(a.mediaType).slice(0, 100),
        description: a.name ? text(a.name).slice(0, 1500) : null,
        ...(width && height ? { width, height } : {}),
      });
    }
  } catch {
    // Same for attachments.
  }
  return media;
}

/** A Question's poll: its options (`anyOf`: several choices, `oneOf`: one) and tallies; null under two options. */
async function readPoll(object: Question): Promise<ParsedNote["poll"]> {
  const options: string[] = [];
  const tallies: number[] = [];
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
  if (options.length < 2) return null;
  const end = object.endTime ?? object.closed;
  return {
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

/** The counts its server gives (replies, shares, likes), as embedded; 0 when absent or unreadable. */
async function readCounts(object: RemoteObject): Promise<ParsedNote["counts"]> {
  return {
    replies: await totalOf(() => object.getReplies(embedded)),
    reblogs: await totalOf(() => object.getShares(embedded)),
    favourites: await totalOf(() => object.getLikes(embedded)),
  };
}

/**
 * The post an object quotes: FEP-044f's `quote` (with its `quoteAuthorization`), else the older forms
 * (`quoteUrl`, `_misskey_quote`, `quoteUri`: Fedify reads all three as `quoteUrl`), else an FEP-e232 link tag.
 * Not verified here: federation/fetching/quote-stamps.ts checks the stamp.
 */
function readQuote(object: RemoteObject, tags: string[]): ParsedQuote | null {
  const quoting = object instanceof Note || object instanceof Article || object instanceof Question ? object : null;
  const modern = httpUrl(quoting?.quoteId?.href ?? null);
  const uri = modern ?? httpUrl(quoting?.quoteUrl?.href ?? null) ?? tags[0] ?? null;
  if (!uri || uri === object.id?.href) return null;
  return {
    uri,
    authorization: modern ? httpUrl(quoting?.quoteAuthorizationId?.href ?? null) : null,
    consentAware: modern !== null,
    verified: false,
  };
}

/** `votersCount` of a Question (a non-negative integer), or null. */
export function votersCount(object: Question): number | null {
  const n = object.voters;
  return typeof n === "number" && Number.isInteger(n) && n >= 0 ? Math.min(n, 2 ** 31) : null;
}
