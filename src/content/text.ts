/** Plain text to safe HTML: escaped, links made clickable, line breaks kept. */

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!,
  );
}

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"']*[^\s<>"'.,;:!?)\]}]/gi;

/** Escapes `text` and wraps its http(s) URLs in links. */
export function linkify(text: string): string {
  let out = "";
  let last = 0;
  for (const m of text.matchAll(URL_PATTERN)) {
    out += escapeHtml(text.slice(last, m.index));
    const href = escapeHtml(m[0]);
    out += `<a href="${href}" rel="ugc nofollow noopener noreferrer" target="_blank">${href}</a>`;
    last = m.index! + m[0].length;
  }
  return out + escapeHtml(text.slice(last));
}

/** A bio or other multi-line plain text as HTML. */
export function plainTextToHtml(text: string): string {
  return linkify(text.replace(/\r\n?/g, "\n")).replace(/\n/g, "<br/>");
}
