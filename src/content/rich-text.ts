/**
 * Pleroma's `no_rich_text` setting: statuses shown to such a user keep only paragraphs, line breaks, links
 * (mentions, hashtags) and h-card spans; every other tag is removed and its text kept (Pleroma's TwitterText
 * scrubber, which `StatusView` applies for that reader).
 * Content is stored already sanitised by our own serialiser (`content/format.ts`: allowlisted tags, every
 * attribute value quoted and escaped, text escaped), so tags are found by their delimiters.
 */
const KEPT = new Set(["p", "br", "a", "span"]);

export function stripRichText(html: string): string {
  return html.replace(/<\/?([A-Za-z][A-Za-z0-9]*)\b[^>]*>/g, (tag, name: string) =>
    KEPT.has(name.toLowerCase()) ? tag : "",
  );
}
