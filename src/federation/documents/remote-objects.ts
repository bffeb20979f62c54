/**
 * Reading what another server's documents say, the same way for actors (parse-actor.ts) and notes
 * (parse-note.ts): values as text, links as http(s) URLs, links kept only where the document's own id lives,
 * custom emoji tags; everything read as embedded, nothing fetched.
 */
import { Emoji, Link } from "@fedify/vocab";
import { embeddedOnly } from "../door/loaders";

/** Options for Fedify's getters: what a document embeds is read, anything it only links to is not fetched. */
export const embedded = { documentLoader: embeddedOnly };

export const text = (v: unknown): string => (v == null ? "" : String(v));
export const href = (v: URL | Link | null | undefined): string | null =>
  v instanceof URL ? v.href : v instanceof Link ? (v.href?.href ?? null) : null;
export const httpUrl = (u: string | null | undefined): string | null => (u && /^https?:\/\//i.test(u) ? u : null);

function sameBy(part: "host" | "origin", url: string | null, id: URL): string | null {
  if (!url) return null;
  try {
    return new URL(url)[part].toLowerCase() === id[part].toLowerCase() ? url : null;
  } catch {
    return null;
  }
}

/**
 * A profile or page URL as given, when it is on the host of the object's id. Elsewhere it could name another
 * server's account or post, and search by URL would answer with this one instead.
 */
export const sameHost = (url: string | null, id: URL) => sameBy("host", url, id);
/** A URL (a conversation id, say) only when it is on the origin of the object's id. */
export const sameOrigin = (url: string | null, id: URL) => sameBy("origin", url, id);

/** A custom emoji tag as its shortcode and image URL; null when it is not one Starling can show. */
export async function readEmoji(tag: unknown): Promise<{ shortcode: string; url: string } | null> {
  if (!(tag instanceof Emoji)) return null;
  const shortcode = text(tag.name).replace(/^:|:$/g, "");
  const icon = await tag.getIcon(embedded).catch(() => null);
  const url = httpUrl(href(icon?.url as URL | Link | null));
  return /^[a-zA-Z0-9_]{1,64}$/.test(shortcode) && url ? { shortcode, url } : null;
}
