/**
 * The one paginator's queries: `max_id`/`since_id`/`min_id`/`limit` over a lexically ordered id column, newest
 * first. For Link-only lists the cursor column is the row of the relation (a follow, a block), not the entity
 * shown. `pageQuery` serves the query builder; `rawPage` is the same page for hand-written SQL (timelines,
 * conversation statuses), so both read a page by the same conditions. The request side (parameters, the `Link`
 * header) is src/http/pagination.ts.
 */
import { and, asc, desc, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { seqCursor } from "./ids";

export interface Page {
  max_id?: string;
  since_id?: string;
  min_id?: string;
  limit: number;
}

/** A page over sequence ids (`seqIds`): cursors clients kept from before, ULIDs, taken as their moment. */
export function seqPage(page: Page): Page {
  return {
    ...page,
    max_id: seqCursor(page.max_id),
    since_id: seqCursor(page.since_id),
    min_id: seqCursor(page.min_id),
  };
}

export interface PageQuery {
  where: SQL | undefined;
  orderBy: SQL;
  limit: number;
  /** With `min_id` rows are read oldest first; reverse them before answering. */
  reversed: boolean;
}

/** Conditions and order for one page over `column` (a table column, or a column of hand-written SQL). */
export function pageQuery(column: SQLiteColumn | SQL, page: Page): PageQuery {
  const conds: SQL[] = [];
  if (page.max_id) conds.push(sql`${column} < ${page.max_id}`);
  if (page.min_id) conds.push(sql`${column} > ${page.min_id}`);
  else if (page.since_id) conds.push(sql`${column} > ${page.since_id}`);
  const reversed = Boolean(page.min_id);
  return {
    where: conds.length ? and(...conds) : undefined,
    orderBy: reversed ? asc(column) : desc(column),
    limit: page.limit,
    reversed,
  };
}

export interface RawPage {
  /** The cursor conditions (`1` when there are none). */
  where: SQL;
  order: SQL;
  /** The limit as SQL text: statements stay constant per page size, far below D1's bound-parameter limit. */
  limit: SQL;
  reversed: boolean;
}

/** The same page for hand-written SQL: `WHERE ${where} ORDER BY ${order} LIMIT ${limit}`. */
export function rawPage(column: SQL, page: Page): RawPage {
  const q = pageQuery(column, page);
  return {
    where: q.where ?? sql`1`,
    order: q.orderBy,
    limit: sql.raw(String(Math.trunc(q.limit))),
    reversed: q.reversed,
  };
}

/** Rows of a page in the answer's order (newest first). */
export function inOrder<T>(rows: T[], q: PageQuery): T[] {
  return q.reversed ? rows.slice().reverse() : rows;
}
