/** The Tag entity with its history (trends, followed tags, featured tags' URL). */
import type { TagInfo } from "../services/followed-tags";

const tagUrl = (base: string, name: string) => `${base}/tag/${encodeURIComponent(name)}`;

/** The Tag entity: trends, `/api/v1/tags/:name`, followed tags (`following` only where the viewer is known). */
export function renderTag(base: string, tag: TagInfo) {
  return {
    name: tag.name,
    url: tagUrl(base, tag.name),
    // Mastodon sends the figures as strings.
    history: tag.history.map((h) => ({ day: String(h.day), uses: String(h.uses), accounts: String(h.accounts) })),
    ...(tag.following !== undefined ? { following: tag.following } : {}),
  };
}
