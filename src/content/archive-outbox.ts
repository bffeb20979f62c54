/**
 * An account archive's `outbox.json` (Mastodon 4's export, Pleroma 2's backup; issue 50) read into the posts an
 * import keeps: the account's own Notes and Questions that start a thread or answer one of its own kept posts,
 * public, unlisted or followers-only, dated no later than now, oldest first. Everything else is counted by reason
 * (`ArchiveSkips`). Plain values in, plain values out: the HTML is sanitised and the media read when imported.
 */

export type ArchiveVisibility = "public" | "unlisted" | "private";

export interface ArchiveMedia {
  /** The zip entry holding the file. */
  entry: string;
  /** The type the archive claims (the bytes decide what is stored; one that disagrees is left out). */
  claimed: string;
  description: string;
  focus: { x: number; y: number } | null;
}

export interface ArchivePoll {
  options: string[];
  counts: number[];
  multiple: boolean;
  voters: number | null;
  /** When it closed (ms). */
  endedAt: number;
}

export interface ArchivePost {
  /** The post's original ActivityPub id: the key of the import (imported once). */
  uri: string;
  /** Its page on the old server (kept as the status's `url`), or "" when the archive names none there. */
  url: string;
  published: number;
  /** The original id of the account's own post it answers. */
  inReplyTo: string | null;
  visibility: ArchiveVisibility;
  summary: string;
  sensitive: boolean;
  /** As the archive has it: sanitised when imported. */
  content: string;
  language: string | null;
  tags: string[];
  media: ArchiveMedia[];
  /** Attachments whose file is not in the archive (Pleroma's backups hold none): left out, never fetched. */
  missingMedia: number;
  poll: ArchivePoll | null;
}

export type SkipReason =
  "announces" | "not_own" | "replies_to_others" | "direct" | "unreadable" | "future" | "over_limit" | "duplicates";
export type ArchiveSkips = Partial<Record<SkipReason, number>>;

export interface ReadOutbox {
  /** Items in the outbox. */
  found: number;
  posts: ArchivePost[];
  skipped: ArchiveSkips;
}

const PUBLIC = new Set(["https://www.w3.org/ns/activitystreams#Public", "as:Public", "Public"]);
/** Per post, what is kept of lists a hostile archive could make long. */
const MAX_TAGS = 40;
const MAX_MEDIA = 20;
const MAX_OPTIONS = 20;
const MAX_TEXT = 100_000;
const MAX_SUMMARY = 1_000;
const MAX_DESCRIPTION = 1_500;
const MAX_OPTION = 200;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
const str = (v: unknown, max = 2048): string | null => (typeof v === "string" && v.length <= max ? v : null);
/** An id given as a string or as an object with an `id` (or a link's `href`). */
const idOf = (v: unknown): string | null => (isObj(v) ? (str(v.id) ?? str(v.href)) : str(v));
const time = (v: unknown): number | null => {
  const s = str(v, 64);
  const t = s ? Date.parse(s) : NaN;
  return Number.isFinite(t) && t > 0 ? t : null;
};
const addresses = (v: unknown) => list(v).flatMap((a) => idOf(a) ?? []);

/** Whether `url` is an http(s) page of the server `actor` lives on (an old post's link points nowhere else). */
function sameServer(url: string, actor: string): boolean {
  try {
    const u = new URL(url);
    return /^https?:$/.test(u.protocol) && u.host === new URL(actor).host;
  } catch {
    return false;
  }
}

/** The account whose archive this is: `actor.json`'s id and followers collection. */
export function archiveActor(actor: unknown): { id: string; followers: string | null } | null {
  if (!isObj(actor)) return null;
  const id = str(actor.id);
  return id ? { id, followers: idOf(actor.followers) } : null;
}

function visibilityOf(to: string[], cc: string[], followers: string | null): ArchiveVisibility | "direct" {
  if (to.some((a) => PUBLIC.has(a))) return "public";
  if (cc.some((a) => PUBLIC.has(a))) return "unlisted";
  const toFollowers = (a: string) => (followers ? a === followers : a.endsWith("/followers"));
  return [...to, ...cc].some(toFollowers) ? "private" : "direct";
}

/** The zip entry a media URL names: Mastodon writes `/media_attachments/files/…`, the path of the file inside. */
function entryOf(url: string, prefix: string, entries: Set<string>): string | null {
  let path = url;
  try {
    path = new URL(url, "https://archive.invalid").pathname;
  } catch {
    return null;
  }
  const candidates = [path.replace(/^\/+/, "")];
  const at = path.indexOf("media_attachments/");
  if (at > 0) candidates.push(path.slice(at));
  for (const c of candidates) {
    let name = c;
    try {
      name = decodeURIComponent(c);
    } catch {
      // kept as written
    }
    for (const n of new Set([prefix + c, prefix + name])) if (entries.has(n)) return n;
  }
  return null;
}

function mediaOf(
  attachments: unknown,
  prefix: string,
  entries: Set<string>,
): { media: ArchiveMedia[]; missing: number } {
  const media: ArchiveMedia[] = [];
  let missing = 0;
  for (const a of list(attachments).slice(0, MAX_MEDIA)) {
    if (!isObj(a)) continue;
    // Mastodon: `url` a string; Pleroma: a list of Link objects (`href`, `mediaType`).
    const link = list(a.url).find((u) => typeof u === "string" || isObj(u));
    const url = typeof link === "string" ? link : isObj(link) ? str(link.href) : null;
    const entry = url ? entryOf(url, prefix, entries) : null;
    if (!entry) {
      missing++;
      continue;
    }
    const claimed = str(a.mediaType, 100) ?? (isObj(link) ? str(link.mediaType, 100) : null) ?? "";
    const fp = Array.isArray(a.focalPoint) ? a.focalPoint : null;
    const focus =
      fp && fp.length === 2 && fp.every((v) => typeof v === "number" && Number.isFinite(v))
        ? { x: clampFocus(fp[0] as number), y: clampFocus(fp[1] as number) }
        : null;
    media.push({ entry, claimed, description: (str(a.name, 100_000) ?? "").slice(0, MAX_DESCRIPTION), focus });
  }
  return { media, missing };
}

const clampFocus = (v: number) => Math.round(Math.min(1, Math.max(-1, v)) * 100) / 100;

function pollOf(o: Obj, published: number): ArchivePoll | null {
  if (o.type !== "Question") return null;
  const multiple = Array.isArray(o.anyOf);
  const options = list(multiple ? o.anyOf : o.oneOf)
    .slice(0, MAX_OPTIONS)
    .flatMap((x) => (isObj(x) && typeof x.name === "string" ? [x] : []));
  if (options.length === 0) return null;
  const count = (x: Obj) => {
    const n = isObj(x.replies) ? x.replies.totalItems : 0;
    return typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : 0;
  };
  const voters = typeof o.votersCount === "number" && Number.isSafeInteger(o.votersCount) ? o.votersCount : null;
  return {
    options: options.map((x) => (x.name as string).slice(0, MAX_OPTION)),
    counts: options.map(count),
    multiple,
    voters: voters !== null && voters >= 0 ? voters : null,
    endedAt: Math.min(time(o.endTime) ?? time(o.closed) ?? published, Date.now()),
  };
}

function tagsOf(tag: unknown): string[] {
  const names = new Set<string>();
  for (const t of list(tag)) {
    const name = typeof t === "string" ? t : isObj(t) && t.type === "Hashtag" ? str(t.name, 200) : null;
    if (name) names.add(name.replace(/^#/, ""));
    if (names.size >= MAX_TAGS) break;
  }
  return [...names];
}

function languageOf(o: Obj): string | null {
  const keys = isObj(o.contentMap) ? Object.keys(o.contentMap) : [];
  return keys.length === 1 && /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$/.test(keys[0]!) ? keys[0]! : null;
}

/**
 * The posts to import from `outbox` (the parsed `outbox.json`), as the account `owner` wrote them; `prefix` is
 * the folder the archive's files sit in ("" at its root), `entries` its file names; at most `maxPosts` (the newest).
 */
export function readOutbox(
  outbox: unknown,
  owner: { id: string; followers: string | null },
  prefix: string,
  entries: Set<string>,
  maxPosts: number,
  t: number,
): ReadOutbox {
  const items = isObj(outbox) ? list(outbox.orderedItems ?? outbox.items) : [];
  const skipped: ArchiveSkips = {};
  const skip = (r: SkipReason, n = 1) => (skipped[r] = (skipped[r] ?? 0) + n);
  const candidates: (ArchivePost & { replyTo: string | null })[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (!isObj(item)) {
      skip("unreadable");
      continue;
    }
    if (item.type === "Announce") {
      skip("announces");
      continue;
    }
    const o = item.object;
    if (item.type !== "Create" || !isObj(o) || (o.type !== "Note" && o.type !== "Question" && o.type !== "Article")) {
      skip("unreadable");
      continue;
    }
    const author = idOf(list(o.attributedTo)[0]) ?? idOf(item.actor);
    if (author !== owner.id || (item.actor !== undefined && idOf(item.actor) !== owner.id)) {
      skip("not_own");
      continue;
    }
    const uri = str(o.id);
    const published = time(o.published) ?? time(item.published);
    const content = typeof o.content === "string" ? o.content : "";
    if (!uri || published === null || content.length > MAX_TEXT) {
      skip("unreadable");
      continue;
    }
    if (seen.has(uri)) {
      skip("duplicates");
      continue;
    }
    seen.add(uri);
    // A minute of leeway for clocks; a post dated ahead would stay on top of the profile.
    if (published > t + 60_000) {
      skip("future");
      continue;
    }
    const visibility = visibilityOf(addresses(o.to ?? item.to), addresses(o.cc ?? item.cc), owner.followers);
    if (visibility === "direct") {
      skip("direct");
      continue;
    }
    const { media, missing } = mediaOf(o.attachment, prefix, entries);
    const url = idOf(list(o.url).find((u) => typeof u === "string" || isObj(u)));
    candidates.push({
      uri,
      url: [url, uri].find((u) => u && sameServer(u, owner.id)) ?? "",
      published,
      inReplyTo: null,
      replyTo: idOf(o.inReplyTo),
      visibility,
      summary: (typeof o.summary === "string" ? o.summary : "").slice(0, MAX_SUMMARY),
      sensitive: o.sensitive === true,
      content,
      language: languageOf(o),
      tags: tagsOf(o.tag),
      media,
      missingMedia: missing,
      poll: pollOf(o, published),
    });
  }
  candidates.sort((a, b) => a.published - b.published || (a.uri < b.uri ? -1 : 1));
  const kept = candidates.slice(Math.max(0, candidates.length - maxPosts));
  if (kept.length < candidates.length) skip("over_limit", candidates.length - kept.length);
  // Oldest first: a self-reply is kept when the post it answers was (a thread cut by the limit stays cut).
  const keptIds = new Set<string>();
  const posts: ArchivePost[] = [];
  for (const { replyTo, ...p } of kept) {
    if (replyTo && !keptIds.has(replyTo)) {
      skip("replies_to_others");
      continue;
    }
    keptIds.add(p.uri);
    posts.push({ ...p, inReplyTo: replyTo });
  }
  return { found: items.length, posts, skipped };
}
