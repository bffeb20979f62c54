/** Keyword filters (Mastodon v1). Expired filters are left out on read; the cron deletes them. */
import type { Effects } from "./effects";
import { and, asc, eq, gt, isNull, or, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { anyRow, now, statement } from "../db/client";
import { newId } from "../db/ids";
import { filters, type FilterContext } from "../db/schema";
import { notFound, unprocessable } from "../lib/errors";
import { FILTER_CONTEXTS } from "../schemas/social";

export type FilterRow = typeof filters.$inferSelect;
export { FILTER_CONTEXTS };

const live = (t: number) => or(isNull(filters.expiresAt), gt(filters.expiresAt, t));

/** The user's filters in force now. */
export function activeFilters(d: DB, ownerId: string) {
  return d
    .select()
    .from(filters)
    .where(and(eq(filters.accountId, ownerId), live(now())))
    .orderBy(asc(filters.id));
}

export async function getFilter(d: DB, ownerId: string, id: string): Promise<FilterRow> {
  const row = await d
    .select()
    .from(filters)
    .where(and(eq(filters.id, id), eq(filters.accountId, ownerId), live(now())))
    .get();
  if (!row) throw notFound();
  return row;
}

export interface FilterInput {
  phrase: string;
  context: FilterContext[];
  irreversible?: boolean;
  /** Mastodon 4.4's `blur` (v2 only; a v1 change leaves it). */
  blur?: boolean;
  whole_word?: boolean;
  /** Seconds from now; null clears the expiry; undefined leaves it (on update) or means none (on create). */
  expires_in?: number | null;
}

/** Filters in force per user: every read and every status checks them, so they are bounded. */
const MAX_FILTERS = 100;

export async function createFilter(d: DB, ownerId: string, input: FilterInput): Promise<FilterRow> {
  const t = now();
  const row: FilterRow = {
    id: newId(t),
    accountId: ownerId,
    phrase: input.phrase,
    context: [...new Set(input.context)],
    irreversible: input.irreversible ?? false,
    blur: input.blur ?? false,
    wholeWord: input.whole_word ?? true,
    expiresAt: input.expires_in ? t + input.expires_in * 1000 : null,
    createdAt: t,
    updatedAt: t,
  };
  // Counted by the insert itself: racing requests cannot pass the limit together.
  const { meta } = await statement(
    d,
    sql`INSERT INTO filters (id, account_id, phrase, context, irreversible, blur, whole_word, expires_at, created_at, updated_at)
      SELECT ${row.id}, ${ownerId}, ${row.phrase}, ${JSON.stringify(row.context)}, ${row.irreversible ? 1 : 0}, ${row.blur ? 1 : 0}, ${row.wholeWord ? 1 : 0}, ${row.expiresAt}, ${t}, ${t}
      WHERE (SELECT count(*) FROM filters WHERE account_id = ${ownerId} AND (expires_at IS NULL OR expires_at > ${t})) < ${MAX_FILTERS}`,
  ).run();
  if (!meta.changes) throw unprocessable("Validation failed: You have reached the maximum number of filters");
  return row;
}

export async function updateFilter(d: DB, ownerId: string, id: string, input: FilterInput): Promise<FilterRow> {
  const existing = await getFilter(d, ownerId, id);
  const t = now();
  const row = await d
    .update(filters)
    .set({
      phrase: input.phrase,
      context: [...new Set(input.context)],
      irreversible: input.irreversible ?? existing.irreversible,
      blur: input.blur ?? existing.blur,
      wholeWord: input.whole_word ?? existing.wholeWord,
      expiresAt:
        input.expires_in === undefined
          ? existing.expiresAt
          : input.expires_in === null
            ? null
            : t + input.expires_in * 1000,
      updatedAt: t,
    })
    .where(eq(filters.id, existing.id))
    .returning()
    .get();
  return row!;
}

export async function deleteFilter(d: DB, ownerId: string, id: string): Promise<void> {
  const rows = await d
    .delete(filters)
    .where(and(eq(filters.id, id), eq(filters.accountId, ownerId)))
    .returning({ id: filters.id });
  if (rows.length === 0) throw notFound();
}

/** Deletes filters past their expiry; returns their owners (whose streams learn of the change). */
export async function deleteExpiredFilters(d: DB, t: number, max = 500): Promise<string[]> {
  if (!(await anyRow(d, sql`filters WHERE expires_at < ${t}`))) return [];
  // Bounded per run: a backlog drains over several runs.
  const rows = await d
    .delete(filters)
    .where(sql`${filters.id} IN (SELECT id FROM filters WHERE expires_at < ${t} LIMIT ${max})`)
    .returning({ accountId: filters.accountId });
  return [...new Set(rows.map((r) => r.accountId))];
}

/** What follows any change to the user's filters: `filters_changed` on their streams (clients refetch them). */
export const filtersChanged = (accountId: string): Effects => ({
  events: [{ accountId, event: "filters_changed", payload: null }],
});

/** Context values, checked here to answer 422 as Mastodon does (a generic 400 would say less). */
export function filterContexts(values: string[]): FilterInput["context"] {
  const bad = values.filter((v) => !(FILTER_CONTEXTS as readonly string[]).includes(v));
  if (values.length === 0) throw unprocessable("Validation failed: Context can't be blank");
  if (bad.length)
    throw unprocessable(
      `Validation failed: Context ${bad.join(", ")} is not a valid context (${FILTER_CONTEXTS.join(", ")})`,
    );
  return values as FilterInput["context"];
}

/**
 * A v2 `filter_action` as the flags Starling keeps: `hide` drops (irreversible), `blur` (Mastodon 4.4) shows the
 * post with its media blurred, `warn` neither. Unknown or absent: nothing changes.
 */
export function actionFlags(action: string | undefined): Pick<FilterInput, "irreversible" | "blur"> {
  if (action === "hide") return { irreversible: true, blur: false };
  if (action === "blur") return { irreversible: false, blur: true };
  if (action === "warn") return { irreversible: false, blur: false };
  return {};
}

/** The one keyword a v2 request leaves (Starling filters hold exactly one), or null when it names none. */
export function singleKeyword<K extends { _destroy?: boolean }>(entries: K[] | undefined): K | null {
  const all = entries ?? [];
  const kept = all.filter((k) => !k._destroy);
  if (kept.length > 1 || (kept.length === 0 && all.length > 0))
    throw unprocessable("Validation failed: Keywords: a filter holds one keyword on this server");
  return kept[0] ?? null;
}
