/** Filters as Mastodon 4 shows them (`/api/v2/filters`), and what a status carries when one matches it. */
import { z } from "@hono/zod-openapi";

/** Where a filter applies (`account`: profiles, Mastodon 3.1). */
export const FILTER_CONTEXTS = ["home", "notifications", "public", "thread", "account"] as const;

/** Each Starling filter is one with a single keyword. */
export const FilterKeywordSchema = z
  .object({ id: z.string(), keyword: z.string(), whole_word: z.boolean() })
  .openapi("FilterKeyword");
export const FilterV2Schema = z
  .object({
    id: z.string(),
    title: z.string(),
    context: z.array(z.enum(FILTER_CONTEXTS)),
    expires_at: z.string().nullable(),
    filter_action: z.enum(["warn", "hide", "blur"]),
    keywords: z.array(FilterKeywordSchema),
    statuses: z.array(z.object({ id: z.string(), status_id: z.string() })),
  })
  .openapi("FilterV2");

/** A filter of the viewer's that matches a status (`Status.filtered`): clients warn or hide in its contexts. */
export const FilterResultSchema = z
  .object({
    filter: FilterV2Schema,
    keyword_matches: z.array(z.string()).nullable(),
    status_matches: z.array(z.string()).nullable(),
  })
  .openapi("FilterResult");
