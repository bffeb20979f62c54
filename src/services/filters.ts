/**
 * Filters as Mastodon 4 keeps them: a filter has a title, a context, an action, an expiry, keywords and named
 * statuses. The v1 API shows each keyword as a filter of its own (under the keyword's id). Expired filters are
 * left out on read; the cron deletes them.
 */
import type { Effects } from "./effects";
import { and, asc, eq, gt, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { anyRow, now, statement } from "../db/client";
import { newId } from "../db/ids";
import { filterKeywords, filters, filterStatuses, type FilterContext } from "../db/schema";
import { notFound, unprocessable } from "../lib/errors";
import { FILTER_CONTEXTS } from "../schemas/social";

export type FilterRow = typeof filters.$inferSelect;
export type KeywordRow = typeof filterKeywords.$inferSelect;
export type FilterStatusRow = typeof filterStatuses.$inferSelect;
/** A filter with its keywords and statuses, as every reader needs it. */
export type Filter = FilterRow & { keywords: KeywordRow[]; statuses: FilterStatusRow[] };
export { FILTER_CONTEXTS };

/**
 * Bounds: every home read walks the viewer's irreversible keywords per status, and every hydration reads all the
 * viewer's filters, so filters, keywords and named statuses per user are capped (Mastodon sets none).
 */
export const MAX_FILTERS = 100;
export const MAX_KEYWORDS_PER_FILTER = 50;
export const MAX_KEYWORDS = 200;
export const MAX_FILTER_STATUSES = 200;

const live = (t: number) => or(isNull(filters.expiresAt), gt(filters.expiresAt, t));

/** The filters' keywords and statuses, in one round trip with the filters themselves. */
async function withRules(d: DB, where: ReturnType<typeof and>): Promise<Filter[]> {
  const ids = d.select({ id: filters.id }).from(filters).where(where);
  const [rows, keywords, statuses] = await d.batch([
    d.select().from(filters).where(where).orderBy(asc(filters.id)),
    d.select().from(filterKeywords).where(inArray(filterKeywords.filterId, ids)).orderBy(asc(filterKeywords.id)),
    d.select().from(filterStatuses).where(inArray(filterStatuses.filterId, ids)).orderBy(asc(filterStatuses.id)),
  ]);
  return rows.map((f) => ({
    ...f,
    keywords: keywords.filter((k) => k.filterId === f.id),
    statuses: statuses.filter((s) => s.filterId === f.id),
  }));
}

/** The user's filters in force now. */
export const activeFilters = (d: DB, ownerId: string) => withRules(d, and(eq(filters.accountId, ownerId), live(now())));

export async function getFilter(d: DB, ownerId: string, id: string): Promise<Filter> {
  const [row] = await withRules(d, and(eq(filters.id, id), eq(filters.accountId, ownerId), live(now())));
  if (!row) throw notFound();
  return row;
}

/** The user's filter in force that holds a keyword or a named status (by that row's id). */
async function filterHolding(
  d: DB,
  ownerId: string,
  child: typeof filterKeywords | typeof filterStatuses,
  id: string,
): Promise<Filter> {
  const row = await d
    .select({ filterId: child.filterId })
    .from(child)
    .innerJoin(filters, eq(filters.id, child.filterId))
    .where(and(eq(child.id, id), eq(filters.accountId, ownerId), live(now())))
    .get();
  if (!row) throw notFound();
  return getFilter(d, ownerId, row.filterId);
}

/** A keyword of one of the user's filters in force, with its filter (a v1 filter, or `/filter_keywords/:id`). */
export async function getKeyword(
  d: DB,
  ownerId: string,
  keywordId: string,
): Promise<{ filter: Filter; keyword: KeywordRow }> {
  const filter = await filterHolding(d, ownerId, filterKeywords, keywordId);
  const keyword = filter.keywords.find((x) => x.id === keywordId);
  if (!keyword) throw notFound();
  return { filter, keyword };
}

/** A named status of one of the user's filters in force, with its filter. */
export async function getFilterStatus(
  d: DB,
  ownerId: string,
  id: string,
): Promise<{ filter: Filter; status: FilterStatusRow }> {
  const filter = await filterHolding(d, ownerId, filterStatuses, id);
  const status = filter.statuses.find((x) => x.id === id);
  if (!status) throw notFound();
  return { filter, status };
}

export interface KeywordInput {
  keyword: string;
  whole_word?: boolean;
}

/** A change to a filter's keywords (`keywords_attributes`): with an id, change or (`_destroy`) remove it. */
export interface KeywordChange {
  id?: string;
  keyword?: string;
  whole_word?: boolean;
  _destroy?: boolean;
}

export interface FilterInput {
  title?: string;
  context?: FilterContext[];
  irreversible?: boolean;
  /** Mastodon 4.4's `blur`. */
  blur?: boolean;
  /** Seconds from now; null clears the expiry; undefined leaves it (on update) or means none (on create). */
  expires_in?: number | null;
}

const keywordCapFailed = () =>
  unprocessable(
    `Validation failed: Keywords: at most ${MAX_KEYWORDS_PER_FILTER} per filter and ${MAX_KEYWORDS} in all`,
  );

/** How many keywords the account's filters hold (at most MAX_KEYWORDS: a walk of its own rows). */
async function keywordsOf(d: DB, ownerId: string): Promise<number> {
  const row = await d.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM filters f JOIN filter_keywords k ON k.filter_id = f.id WHERE f.account_id = ${ownerId}`,
  );
  return row?.n ?? 0;
}

/** Inserts a keyword unless the filter or the user would pass a cap (counted by the insert: races cannot pass). */
function insertKeyword(d: DB, ownerId: string, filterId: string, k: KeywordInput, t: number, id = newId(t)) {
  return {
    id,
    stmt: statement(
      d,
      sql`INSERT INTO filter_keywords (id, filter_id, keyword, whole_word, created_at)
        SELECT ${id}, ${filterId}, ${k.keyword}, ${k.whole_word === false ? 0 : 1}, ${t}
        WHERE (SELECT count(*) FROM filter_keywords WHERE filter_id = ${filterId}) < ${MAX_KEYWORDS_PER_FILTER}
          AND (SELECT count(*) FROM filters f JOIN filter_keywords k ON k.filter_id = f.id WHERE f.account_id = ${ownerId}) < ${MAX_KEYWORDS}
          AND EXISTS (SELECT 1 FROM filters WHERE id = ${filterId} AND account_id = ${ownerId})`,
    ),
  };
}

const blank = (k: string | undefined) => !k || !k.trim();

/**
 * Creates a filter and its keywords in one batch. `sameId`: the v1 API creates a filter and its one keyword
 * under the same id, so the v1 filter's id is the filter's too.
 */
export async function createFilter(
  d: DB,
  ownerId: string,
  input: FilterInput & { title: string; context: FilterContext[] },
  keywords: KeywordInput[],
  opts: { sameId?: boolean } = {},
): Promise<Filter> {
  if (!input.title.trim()) throw unprocessable("Validation failed: Title can't be blank");
  if (keywords.some((k) => blank(k.keyword))) throw unprocessable("Validation failed: Keywords keyword can't be blank");
  if (keywords.length > MAX_KEYWORDS_PER_FILTER) throw keywordCapFailed();
  const t = now();
  const id = newId(t);
  const expiresAt = input.expires_in ? t + input.expires_in * 1000 : null;
  const inserts = keywords.map((k, i) =>
    insertKeyword(
      d,
      ownerId,
      id,
      { keyword: k.keyword.trim(), whole_word: k.whole_word },
      t,
      i === 0 && opts.sameId ? id : undefined,
    ),
  );
  // Counted by the insert itself: racing requests cannot pass the limit together.
  const results = await d.$client.batch([
    statement(
      d,
      sql`INSERT INTO filters (id, account_id, title, context, irreversible, blur, expires_at, created_at, updated_at)
      SELECT ${id}, ${ownerId}, ${input.title.trim()}, ${JSON.stringify([...new Set(input.context)])}, ${input.irreversible ? 1 : 0}, ${input.blur ? 1 : 0}, ${expiresAt}, ${t}, ${t}
      WHERE (SELECT count(*) FROM filters WHERE account_id = ${ownerId} AND (expires_at IS NULL OR expires_at > ${t})) < ${MAX_FILTERS}`,
    ),
    ...inserts.map((x) => x.stmt),
  ]);
  if (!results[0]!.meta.changes)
    throw unprocessable("Validation failed: You have reached the maximum number of filters");
  if (results.slice(1).some((r) => !r.meta.changes)) {
    // Over the keyword cap: the filter goes again rather than stay half made.
    await d.batch([...filterDeletion(d, sql`SELECT ${id}`), d.delete(filters).where(eq(filters.id, id))]);
    throw keywordCapFailed();
  }
  return getFilter(d, ownerId, id);
}

/** Changes a filter and its keywords (`keywords_attributes`) in one batch. */
export async function updateFilter(
  d: DB,
  ownerId: string,
  id: string,
  input: FilterInput,
  changes: KeywordChange[] = [],
): Promise<Filter> {
  const existing = await getFilter(d, ownerId, id);
  const t = now();
  const mine = new Set(existing.keywords.map((k) => k.id));
  for (const c of changes) {
    if (c.id && !mine.has(c.id)) throw notFound();
    if (!c._destroy && !c.id && blank(c.keyword))
      throw unprocessable("Validation failed: Keywords keyword can't be blank");
    if (!c._destroy && c.id && c.keyword !== undefined && blank(c.keyword))
      throw unprocessable("Validation failed: Keywords keyword can't be blank");
  }
  const removed = new Set(changes.filter((c) => c._destroy && c.id).map((c) => c.id));
  const added = changes.filter((c) => !c._destroy && !c.id);
  if (existing.keywords.length - removed.size + added.length > MAX_KEYWORDS_PER_FILTER) throw keywordCapFailed();
  // The account's cap too, before the batch: an insert it stopped would leave the rest of the edit written under
  // a 422 (the inserts still count, for a race).
  if (added.length && (await keywordsOf(d, ownerId)) - removed.size + added.length > MAX_KEYWORDS)
    throw keywordCapFailed();
  if (input.title !== undefined && !input.title.trim()) throw unprocessable("Validation failed: Title can't be blank");
  const stmts = [
    statement(
      d,
      d
        .update(filters)
        .set({
          title: input.title?.trim() ?? existing.title,
          context: input.context ? [...new Set(input.context)] : existing.context,
          irreversible: input.irreversible ?? existing.irreversible,
          blur: input.blur ?? existing.blur,
          expiresAt:
            input.expires_in === undefined
              ? existing.expiresAt
              : input.expires_in === null
                ? null
                : t + input.expires_in * 1000,
          updatedAt: t,
        })
        .where(eq(filters.id, existing.id)),
    ),
    ...changes
      .filter((c) => c.id)
      .map((c) =>
        c._destroy
          ? statement(
              d,
              d
                .delete(filterKeywords)
                .where(and(eq(filterKeywords.id, c.id!), eq(filterKeywords.filterId, existing.id))),
            )
          : statement(
              d,
              d
                .update(filterKeywords)
                .set({
                  keyword: blank(c.keyword) ? undefined : c.keyword!.trim(),
                  wholeWord: c.whole_word,
                })
                .where(and(eq(filterKeywords.id, c.id!), eq(filterKeywords.filterId, existing.id))),
            ),
      ),
  ];
  const inserts = added.map((c) =>
    insertKeyword(d, ownerId, existing.id, { keyword: c.keyword!.trim(), whole_word: c.whole_word }, t),
  );
  const results = await d.$client.batch([...stmts, ...inserts.map((x) => x.stmt)]);
  const updated = await getFilter(d, ownerId, existing.id);
  if (results.slice(stmts.length).some((r) => !r.meta.changes)) throw keywordCapFailed();
  return updated;
}

/** A filter's rows, keywords and statuses first (the foreign key cascade needs PRAGMA foreign_keys). */
function filterDeletion(d: DB, ids: SQL) {
  return [
    d.delete(filterKeywords).where(sql`${filterKeywords.filterId} IN (${ids})`),
    d.delete(filterStatuses).where(sql`${filterStatuses.filterId} IN (${ids})`),
  ] as const;
}

export async function deleteFilter(d: DB, ownerId: string, id: string): Promise<void> {
  const mine = sql`SELECT id FROM filters WHERE id = ${id} AND account_id = ${ownerId}`;
  const [, , rows] = await d.batch([
    ...filterDeletion(d, mine),
    d
      .delete(filters)
      .where(and(eq(filters.id, id), eq(filters.accountId, ownerId)))
      .returning({ id: filters.id }),
  ]);
  if (rows.length === 0) throw notFound();
}

/** Adds a keyword to one of the user's filters. */
export async function addKeyword(d: DB, ownerId: string, filterId: string, k: KeywordInput): Promise<KeywordRow> {
  const filter = await getFilter(d, ownerId, filterId);
  if (blank(k.keyword)) throw unprocessable("Validation failed: Keyword can't be blank");
  const t = now();
  const ins = insertKeyword(d, ownerId, filter.id, { keyword: k.keyword.trim(), whole_word: k.whole_word }, t);
  const { meta } = await ins.stmt.run();
  if (!meta.changes) throw keywordCapFailed();
  return {
    id: ins.id,
    filterId: filter.id,
    keyword: k.keyword.trim(),
    wholeWord: k.whole_word !== false,
    createdAt: t,
  };
}

/** Changes one keyword of the user's (its own fields only). */
export async function updateKeyword(
  d: DB,
  ownerId: string,
  keywordId: string,
  k: Partial<KeywordInput>,
): Promise<KeywordRow> {
  const { keyword } = await getKeyword(d, ownerId, keywordId);
  if (k.keyword !== undefined && blank(k.keyword)) throw unprocessable("Validation failed: Keyword can't be blank");
  const row = await d
    .update(filterKeywords)
    .set({ keyword: k.keyword?.trim() ?? keyword.keyword, wholeWord: k.whole_word ?? keyword.wholeWord })
    .where(eq(filterKeywords.id, keyword.id))
    .returning()
    .get();
  return row!;
}

/** Removes one keyword of the user's; returns its filter's id. */
export async function deleteKeyword(d: DB, ownerId: string, keywordId: string): Promise<string> {
  const { filter, keyword } = await getKeyword(d, ownerId, keywordId);
  await d.delete(filterKeywords).where(eq(filterKeywords.id, keyword.id));
  return filter.id;
}

/** Deletes filters past their expiry; returns their owners (whose streams learn of the change). */
export async function deleteExpiredFilters(d: DB, t: number, max = 500): Promise<string[]> {
  if (!(await anyRow(d, sql`filters WHERE expires_at < ${t}`))) return [];
  // Bounded per run: a backlog drains over several runs.
  const expired = sql`SELECT id FROM filters WHERE expires_at < ${t} LIMIT ${max}`;
  const [, , rows] = await d.batch([
    ...filterDeletion(d, expired),
    d
      .delete(filters)
      .where(sql`${filters.id} IN (${expired})`)
      .returning({ accountId: filters.accountId }),
  ]);
  return [...new Set(rows.map((r) => r.accountId))];
}

/** What follows any change to the user's filters: `filters_changed` on their streams (clients refetch them). */
export const filtersChanged = (accountId: string): Effects => ({
  events: [{ accountId, event: "filters_changed", payload: null }],
});

/** Context values, checked here to answer 422 as Mastodon does (a generic 400 would say less). */
export function filterContexts(values: string[]): FilterContext[] {
  const bad = values.filter((v) => !(FILTER_CONTEXTS as readonly string[]).includes(v));
  if (values.length === 0) throw unprocessable("Validation failed: Context can't be blank");
  if (bad.length)
    throw unprocessable(
      `Validation failed: Context ${bad.join(", ")} is not a valid context (${FILTER_CONTEXTS.join(", ")})`,
    );
  return values as FilterContext[];
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

/** Names a status in one of the user's filters (Mastodon 4's status filters); the status must exist. */
export async function addFilterStatus(
  d: DB,
  ownerId: string,
  filterId: string,
  statusId: string,
): Promise<FilterStatusRow> {
  const filter = await getFilter(d, ownerId, filterId);
  const had = filter.statuses.find((s) => s.statusId === statusId);
  if (had) return had;
  const t = now();
  const id = newId(t);
  const { meta } = await statement(
    d,
    sql`INSERT OR IGNORE INTO filter_statuses (id, filter_id, status_id, created_at)
      SELECT ${id}, ${filter.id}, ${statusId}, ${t}
      WHERE EXISTS (SELECT 1 FROM statuses WHERE id = ${statusId})
        AND (SELECT count(*) FROM filters f JOIN filter_statuses s ON s.filter_id = f.id WHERE f.account_id = ${ownerId}) < ${MAX_FILTER_STATUSES}`,
  ).run();
  if (!meta.changes) {
    const exists = await anyRow(d, sql`statuses WHERE id = ${statusId}`);
    throw unprocessable(
      exists
        ? `Validation failed: Statuses: at most ${MAX_FILTER_STATUSES} in all`
        : "Validation failed: Status can't be blank",
    );
  }
  return { id, filterId: filter.id, statusId, createdAt: t };
}

/** Removes a named status from one of the user's filters; returns the filter's id. */
export async function deleteFilterStatus(d: DB, ownerId: string, id: string): Promise<string> {
  const { filter, status } = await getFilterStatus(d, ownerId, id);
  await d.delete(filterStatuses).where(eq(filterStatuses.id, status.id));
  return filter.id;
}
