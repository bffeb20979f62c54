/**
 * The one paginator: `max_id`/`since_id`/`min_id`/`limit` over a lexically ordered id column, newest first,
 * and the `Link` header that points at the next (older) and previous (newer) pages.
 * For Link-only lists the cursor column is the row of the relation (a follow, a block), not the entity shown.
 * `pageQuery` serves the query builder; `rawPage` is the same page for hand-written SQL (timelines,
 * conversation statuses), so both read a page by the same conditions.
 */
import type { Context } from "hono";
import type { AppEnv } from "../app";
import { and, asc, desc, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { z } from "@hono/zod-openapi";
import { intParam } from "./params";
import { seqCursor } from "../db/ids";

export interface Page {
  max_id?: string;
  since_id?: string;
  min_id?: string;
  limit: number;
}

/** Page parameters; `limit` defaults to `defaultLimit` and is capped at twice that, as Mastodon does. */
export function pageParams(defaultLimit: number) {
  const max = defaultLimit * 2;
  return {
    max_id: z.string().optional(),
    since_id: z.string().optional(),
    min_id: z.string().optional(),
    limit: intParam()
      .optional()
      .transform((n) => (n === undefined || n < 1 ? defaultLimit : Math.min(n, max))),
  };
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

/** A carried-on parameter's value at most (longer ones are left out: a header is no place for them). */
const LINK_VALUE_MAX = 200;
/** Parameters carried on at most (arrays count each value). */
const LINK_PARAMS_MAX = 40;
const CURSORS = new Set(["max_id", "since_id", "min_id"]);

/**
 * Sets `Link: <…max_id=oldest>; rel="next", <…min_id=newest>; rel="prev"` from the cursors of the rows
 * answered (newest first), carrying on the request's other parameters that the route declares (`types[]`,
 * `only_media`, …), each short: never whatever else the query held, so a request cannot make a huge header.
 */
export function setLinkHeader(c: Context<AppEnv>, cursors: string[]): void {
  if (cursors.length === 0) return;
  const request = new URL(c.req.url);
  const known = c.get("paramNames") ?? new Set<string>();
  const url = new URL(request.origin + request.pathname);
  let kept = 0;
  for (const [key, value] of request.searchParams) {
    const name = key.replace(/\[\]$/, "");
    if (CURSORS.has(name) || !known.has(name) || value.length > LINK_VALUE_MAX || kept >= LINK_PARAMS_MAX) continue;
    url.searchParams.append(key, value);
    kept++;
  }
  const next = new URL(url);
  next.searchParams.set("max_id", cursors[cursors.length - 1]);
  const prev = new URL(url);
  prev.searchParams.set("min_id", cursors[0]);
  c.header("Link", `<${next}>; rel="next", <${prev}>; rel="prev"`);
}
