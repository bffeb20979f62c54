/**
 * Filters: Mastodon 4's Filter (v2: a title, keywords, statuses), and the v1 Filter, which is one keyword of a
 * filter shown with its filter's context and expiry (under the keyword's id), as Mastodon shows it.
 */
import { iso } from "../lib/iso";
import type { Filter, FilterStatusRow, KeywordRow } from "../services/filters";

const expiresAt = (f: Filter) => (f.expiresAt === null ? null : iso(f.expiresAt));

export const renderFilter = (f: Filter, k: KeywordRow) => ({
  id: k.id,
  phrase: k.keyword,
  context: f.context,
  whole_word: k.wholeWord,
  irreversible: f.irreversible,
  expires_at: expiresAt(f),
});

/** Each keyword of each filter as a v1 filter. */
export const renderFiltersV1 = (list: Filter[]) => list.flatMap((f) => f.keywords.map((k) => renderFilter(f, k)));

export const renderFilterKeyword = (k: KeywordRow) => ({ id: k.id, keyword: k.keyword, whole_word: k.wholeWord });

export const renderFilterStatus = (s: FilterStatusRow) => ({ id: s.id, status_id: s.statusId });

export function renderFilterV2(f: Filter) {
  return {
    id: f.id,
    title: f.title,
    context: f.context,
    expires_at: expiresAt(f),
    // An irreversible filter drops statuses on the server: Mastodon 4 calls that `hide`.
    filter_action: f.irreversible ? ("hide" as const) : f.blur ? ("blur" as const) : ("warn" as const),
    keywords: f.keywords.map(renderFilterKeyword),
    statuses: f.statuses.map(renderFilterStatus),
  };
}

/**
 * The viewer's filters that match a status, as Mastodon 4 reports them in `Status.filtered`: by any keyword
 * found in its text (content, content warning, poll options, media descriptions) or by naming the status.
 * Clients warn, blur or hide in the filter's contexts. A whole-word keyword must stand between word boundaries,
 * as Mastodon matches it.
 */
export function filterResults(list: Filter[], text: string, statusId: string) {
  const haystack = text.toLowerCase();
  return list.flatMap((f) => {
    const keywords = f.keywords.filter((k) => {
      const phrase = k.keyword.toLowerCase();
      if (!phrase) return false;
      return k.wholeWord ? wholeWord(phrase).test(haystack) : haystack.includes(phrase);
    });
    const statuses = f.statuses.filter((s) => s.statusId === statusId);
    if (!keywords.length && !statuses.length) return [];
    return [
      {
        filter: renderFilterV2(f),
        keyword_matches: keywords.length ? keywords.map((k) => k.keyword) : null,
        status_matches: statuses.length ? statuses.map((s) => s.statusId) : null,
      },
    ];
  });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Boundaries only where the phrase itself starts or ends with a word character (Mastodon's rule). */
const wholeWord = (phrase: string) =>
  new RegExp(
    `${/^[\p{L}\p{N}_]/u.test(phrase) ? "(?<![\\p{L}\\p{N}_])" : ""}${escape(phrase)}${/[\p{L}\p{N}_]$/u.test(phrase) ? "(?![\\p{L}\\p{N}_])" : ""}`,
    "u",
  );
