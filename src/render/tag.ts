/** The Tag entity with its history (trends, followed tags, featured tags' URL). */
import type { TrendingTag } from "../services/trends";

export const tagUrl = (base: string, name: string) => `${base}/tag/${encodeURIComponent(name)}`;

export function renderTrendTag(base: string, tag: TrendingTag) {
  return {
    name: tag.name,
    url: tagUrl(base, tag.name),
    // Mastodon sends the figures as strings.
    history: tag.history.map((h) => ({ day: String(h.day), uses: String(h.uses), accounts: String(h.accounts) })),
  };
}
