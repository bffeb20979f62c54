import { sql, type SQL } from "drizzle-orm";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import { SQLiteSyncDialect, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Env } from "../env";
import * as schema from "./schema";

export type DB = DrizzleD1Database<typeof schema> & { $client: D1Database };

const cache = new WeakMap<D1Database, DB>();

/** The drizzle handle over the D1 binding (one per binding). */
export function db(env: Pick<Env, "DB">): DB {
  let handle = cache.get(env.DB);
  if (!handle) {
    handle = drizzle(env.DB, { schema });
    cache.set(env.DB, handle);
  }
  return handle;
}

/** Current time in milliseconds; one place so tests and jobs agree on the clock. */
export const now = () => Date.now();

export const iso = (ms: number) => new Date(ms).toISOString();

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
 * `column IN (the values)` with the whole list bound as ONE JSON parameter (`json_each`), never one parameter per
 * item: D1 allows 100 bound parameters per statement, and the statement text stays the same whatever the length.
 */
export const inJson = (column: SQL | SQLiteColumn, values: readonly unknown[]): SQL =>
  sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
