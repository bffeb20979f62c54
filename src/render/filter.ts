/**
 * Filters: Mastodon's v1 Filter as stored, and Mastodon 4's Filter (v2), where a Starling filter is one filter
 * with one keyword, both under the filter's id.
 */
import { iso } from "../db/client";
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
    filter_action: f.irreversible ? ("hide" as const) : ("warn" as const),
    keywords: [renderFilterKeyword(f)],
    statuses: [] as { id: string; status_id: string }[],
  };
}
