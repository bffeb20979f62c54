import { sql, type SQL } from "drizzle-orm";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import { SQLiteSyncDialect, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Env } from "../env";
import * as schema from "./schema";
import { outboxWatched } from "./outbox-signal";

export type DB = DrizzleD1Database<typeof schema> & { $client: D1Database };

const cache = new WeakMap<D1Database, DB>();

/**
 * The drizzle handle over the D1 binding (one per binding), whose batches are looked at for queued outbox rows
 * (db/outbox-signal.ts).
 */
export function db(env: Pick<Env, "DB">): DB {
  let handle = cache.get(env.DB);
  if (!handle) {
    handle = drizzle(outboxWatched(env.DB), { schema });
    cache.set(env.DB, handle);
  }
  return handle;
}

/** Current time in milliseconds; one place so tests and jobs agree on the clock. */
export const now = () => Date.now();

const dialect = new SQLiteSyncDialect();

/**
 * A hand-written statement (set-based inserts over `json_each`, upserts drizzle cannot express) or a drizzle
 * builder query, as a D1 statement, so that they can share one `d.$client.batch([...])`: drizzle's raw `sql`
 * queries cannot join a drizzle batch.
 */
export function statement(d: DB, query: SQL | { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement {
  const q = "toSQL" in query ? query.toSQL() : dialect.sqlToQuery(query);
  return d.$client.prepare(q.sql).bind(...q.params);
}

/**
 * The reads among `queries` that are wanted (null: not needed by this request) in one round trip, none when none
 * is wanted; each answers its rows, a query not sent answers [].
 */
export async function readsWhere<const Q extends readonly (PromiseLike<unknown[]> | null)[]>(
  d: DB,
  queries: Q,
): Promise<{ [K in keyof Q]: Awaited<NonNullable<Q[K]>> }> {
  const wanted = queries.filter((q) => q !== null);
  const results = wanted.length ? await d.batch(wanted as unknown as Parameters<DB["batch"]>[0]) : [];
  let next = 0;
  return queries.map((q) => (q === null ? [] : results[next++])) as { [K in keyof Q]: Awaited<NonNullable<Q[K]>> };
}

/** A drizzle builder query, as `d.batch` takes them. */
type BuilderQuery = {
  _prepare(): {
    getQuery(): { sql: string; params: unknown[] };
    mapResult(result: unknown, isFromBatch?: boolean): unknown;
  };
};

/**
 * One round trip holding drizzle builder queries and hand-written statements (`notify`, set-based SQL) together:
 * builder queries answer as in `d.batch` (typed, mapped rows), statements as D1 results.
 */
export async function mixedBatch(d: DB, items: (object | D1PreparedStatement)[]): Promise<unknown[]> {
  const prepared = items.map((item) => ("_prepare" in item ? (item as BuilderQuery)._prepare() : null));
  const stmts = items.map((item, i) => {
    const p = prepared[i];
    if (!p) return item as D1PreparedStatement;
    const q = p.getQuery();
    return d.$client.prepare(q.sql).bind(...q.params);
  });
  const results = await d.$client.batch(stmts);
  return results.map((r, i) => (prepared[i] ? prepared[i]!.mapResult(r, true) : r));
}

/**
 * Whether any row matches (`from`: a table and its condition), by one look through an index: a clean-up looks
 * before it deletes, since D1 counts a bounded `DELETE … WHERE id IN (SELECT … LIMIT n)` that finds nothing as two
 * or three rows read and a look as one, and an idle cron minute's reads are the sum of such (test/cron-cost).
 */
export const anyRow = async (d: DB, from: SQL): Promise<boolean> =>
  Boolean(await d.get(sql`SELECT 1 AS x FROM ${from} LIMIT 1`));

/**
 * `column IN (the values)` with the whole list bound as ONE JSON parameter (`json_each`), never one parameter per
 * item: D1 allows 100 bound parameters per statement, and the statement text stays the same whatever the length.
 */
export const inJson = (column: SQL | SQLiteColumn, values: readonly unknown[]): SQL =>
  sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
