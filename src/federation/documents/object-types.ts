/**
 * Object types other than notes that other servers post (issue 18): Lemmy/Mbin threads (`Page`), PeerTube
 * videos (`Video`), Mobilizon events (`Event`), Funkwhale tracks (`Audio`), bare `Image`s. Each becomes a status
 * as Mastodon shows these "converted" types: its name linked to its page, then its description; the media
 * it attaches as usual. A `summary` here is a description, not a content warning.
 */
import {
  Article,
  Audio,
  Event,
  Image,
  Link,
  Note,
  Page,
  Question,
  Video,
  type Object as APObject,
} from "@fedify/vocab";
import { embedded, href, httpUrl, sameHost, text } from "./remote-objects";
import { escapeHtml, plainTextToHtml } from "../../content/text";
import type { ParsedNote } from "../../services/remote-statuses";

/** The types shown as statuses with a title and a link. */
export type ConvertedObject = Page | Video | Image | Event | Audio;

const MAX_TITLE = 500;
const MAX_BODY = 100_000;

const isConverted = (o: unknown): o is ConvertedObject =>
  o instanceof Page || o instanceof Video || o instanceof Image || o instanceof Event || o instanceof Audio;

/** Every object type the inbox stores as a status. */
export const isPostLike = (o: unknown): o is Note | Article | Question | ConvertedObject =>
  o instanceof Note || o instanceof Article || o instanceof Question || isConverted(o);

/** The object's type name for logs (`Video`, …), from its class. */
export const typeName = (o: APObject | null): string => (o ? o.constructor.name : "nothing");

/**
 * The page a person opens for the object: among its `url`s the HTML one (PeerTube lists the watch page next to
 * the video files), else the first, kept only on the object's own host (else the id).
 */
function pageUrl(object: ConvertedObject): string {
  const urls = object.urls;
  const html = urls.find((u) => u instanceof Link && text(u.mediaType).startsWith("text/html"));
  const first =
    html ??
    urls.find((u) => u instanceof URL || (u instanceof Link && !text(u.mediaType).match(/^(video|audio|image)\//)));
  return sameHost(httpUrl(href(first as URL | Link | null)), object.id!) ?? object.id!.href;
}

/** The title as a link to `url` when it is an http(s) URL (anything else is not made clickable). */
const titleLink = (url: string, title: string, strong = false) => {
  const inner = strong ? `<strong>${escapeHtml(title)}</strong>` : escapeHtml(title);
  return httpUrl(url) ? `<a href="${escapeHtml(url)}">${inner}</a>` : inner;
};

/** A Markdown or plain text description (PeerTube's) as escaped paragraphs, links clickable; HTML was sanitized. */
function bodyHtml(object: ConvertedObject, parsed: ParsedNote): string {
  const type = text(object.mediaType);
  if (type === "text/markdown" || type === "text/plain") {
    const raw = text(object.content).slice(0, MAX_BODY).replace(/\r\n?/g, "\n").trim();
    return raw
      ? raw
          .split(/\n{2,}/)
          .map((p) => `<p>${plainTextToHtml(p)}</p>`)
          .join("")
      : "";
  }
  return parsed.content;
}

/**
 * A parsed object adapted to its type: an article gets its title; for a converted type, the title (its `name`) linked to its page heads the
 * content, an event says when and where, links attached (Lemmy's link posts) follow the body, and the summary is
 * part of the text rather than a content warning. Notes, articles and questions are left as they are.
 */
export async function adaptObjectType(object: unknown, parsed: ParsedNote): Promise<ParsedNote> {
  // A blog post (WriteFreely, Plume) keeps its HTML and content warning; its title heads it.
  if (object instanceof Article) {
    const title = text(object.name).trim().slice(0, MAX_TITLE);
    return title ? { ...parsed, content: `<p>${titleLink(parsed.url, title, true)}</p>${parsed.content}` } : parsed;
  }
  if (!isConverted(object)) return parsed;
  const url = pageUrl(object);
  const name = text(object.name).trim().slice(0, MAX_TITLE);
  const parts: string[] = [`<p>${titleLink(url, name || url)}</p>`];
  if (object instanceof Event) {
    // When and where (a place embedded with its name; a linked one is not fetched).
    const place = await object.getLocation(embedded).catch(() => null);
    const where = place ? text(place.name).trim().slice(0, MAX_TITLE) : "";
    const when = object.startTime ? object.startTime.toString() : "";
    if (when || where) parts.push(`<p>${escapeHtml([when, where].filter(Boolean).join(" · "))}</p>`);
  }
  const summary = parsed.spoilerText.trim();
  if (summary && summary !== name) parts.push(`<p>${escapeHtml(summary)}</p>`);
  const body = bodyHtml(object, parsed);
  if (body) parts.push(body);
  for (const link of await attachedLinks(object))
    if (link !== url) parts.push(`<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`);
  return { ...parsed, url, content: parts.join(""), spoilerText: "", sensitive: object.sensitive ?? false };
}

/** Links (not media) a converted object attaches, read as embedded. */
async function attachedLinks(object: ConvertedObject): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const a of object.getAttachments(embedded)) {
      const u = a instanceof Link ? httpUrl(a.href?.href) : null;
      if (u && out.length < 4 && !out.includes(u)) out.push(u);
    }
  } catch {
    // Unreadable attachments: none.
  }
  return out;
}
