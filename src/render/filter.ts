/**
 * Filters: Mastodon's v1 Filter as stored, and Mastodon 4's Filter (v2), where a Starling filter is one filter
 * with one keyword, both under the filter's id.
 */
import { iso } from "../lib/iso";
import type { FilterRow } from "../services/filters";

export const renderFilter = (f: FilterRow) => ({
  id: f.id,
  phrase: f.phrase,
  context: f.context,
  whole_word: f.wholeWord,
  irreversible: f.irreversible,
  expires_at: f.expiresAt === null ? null : iso(f.expiresAt),
});

export const renderFilterKeyword = (f: FilterRow) => ({ id: f.id, keyword: f.phrase, whole_word: f.wholeWord });

export function renderFilterV2(f: FilterRow) {
  return {
    id: f.id,
    title: f.phrase,
    context: f.context,
    expires_at: f.expiresAt === null ? null : iso(f.expiresAt),
    // An irreversible filter drops statuses on the server: Mastodon 4 calls that `hide`.
    filter_action: f.irreversible ? ("hide" as const) : f.blur ? ("blur" as const) : ("warn" as const),
    keywords: [renderFilterKeyword(f)],
    statuses: [] as { id: string; status_id: string }[],
  };
}

/**
 * The viewer's filters that match a status's text (content, content warning, poll options, media
 * descriptions), as Mastodon 4 reports them in `Status.filtered`: clients warn (`warn`) or hide (`hide`) in the
 * filter's contexts. A whole-word phrase must stand between word boundaries, as Mastodon matches it.
 */
export function filterResults(list: FilterRow[], text: string) {
  const haystack = text.toLowerCase();
  return list.flatMap((f) => {
    const phrase = f.phrase.toLowerCase();
    if (!phrase) return [];
    const hit = f.wholeWord ? wholeWord(phrase).test(haystack) : haystack.includes(phrase);
    return hit ? [{ filter: renderFilterV2(f), keyword_matches: [f.phrase], status_matches: null }] : [];
  });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Boundaries only where the phrase itself starts or ends with a word character (Mastodon's rule). */
const wholeWord = (phrase: string) =>
  new RegExp(
    `${/^[\p{L}\p{N}_]/u.test(phrase) ? "(?<![\\p{L}\\p{N}_])" : ""}${escape(phrase)}${/[\p{L}\p{N}_]$/u.test(phrase) ? "(?![\\p{L}\\p{N}_])" : ""}`,
    "u",
  );
