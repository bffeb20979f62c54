/**
 * Rows as JSON, so one statement can return rows of several tables (`UNION ALL` of JSON values) and they come
 * back typed exactly as drizzle would give them: values mapped by each column (booleans, JSON columns).
 *
 * A row travels as a JSON array of its values in the table definition's column order, not as an object: the
 * column names are neither in the statement's text nor in every row of the answer (about half of both, for a
 * page of statuses), and each layer a row crosses (SQLite, D1, the Worker's parsing) has that much less to do.
 */
import { getTableColumns, getTableName, sql, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";

const objects = new Map<string, SQL>();

/**
 * `json_array(alias.id, alias.username, …)` over the columns of `table` (read back by `fromJson`); the columns
 * in `omit` stay in the database and read back as null.
 */
export function jsonObject(table: SQLiteTable, alias: string, omit: string[] = []): SQL {
  const key = `${getTableName(table)} ${alias} ${omit.join(",")}`;
  let made = objects.get(key);
  if (!made) {
    const values = columnsOf(table).map(([, c]) => (omit.includes(c.name) ? "NULL" : `${alias}."${c.name}"`));
    made = sql.raw(`json_array(${values.join(",")})`);
    objects.set(key, made);
  }
  return made;
}

const dialect = new SQLiteSyncDialect();
const compiled = new Map<string, SQL>();

/**
 * A statement part that is the same text on every request (hydration's parts, a timeline's filters), built by
 * drizzle once per isolate and kept as raw SQL: walking a large `sql` tree costs more CPU than the D1 round
 * trip it is sent in. `key` names every variant the builder can make; the part must bind no parameters (refer
 * to per-request values through the `params` CTE), which is checked when it is first built.
 */
export function precompiled(key: string, build: () => SQL): SQL {
  let made = compiled.get(key);
  if (!made) {
    const q = dialect.sqlToQuery(build());
    if (q.params.length) throw new Error(`precompiled SQL "${key}" binds parameters: ${JSON.stringify(q.params)}`);
    made = sql.raw(q.sql);
    compiled.set(key, made);
  }
  return made;
}

const columnLists = new WeakMap<SQLiteTable, [string, SQLiteColumn][]>();
function columnsOf(table: SQLiteTable) {
  let list = columnLists.get(table);
  if (!list) columnLists.set(table, (list = Object.entries(getTableColumns(table))));
  return list;
}

/** A row of `table` from the array `jsonObject` made. */
export function fromJson<T extends SQLiteTable>(table: T, values: unknown): T["$inferSelect"] {
  const row = values as unknown[];
  const out: Record<string, unknown> = {};
  const cols = columnsOf(table);
  for (let i = 0; i < cols.length; i++) {
    const [key, col] = cols[i]!;
    const value = row[i];
    out[key] = value === null || value === undefined ? null : col.mapFromDriverValue(value);
  }
  return out as T["$inferSelect"];
}

/** The value of one column (by its name in the database) of an array `jsonObject` made, as stored. */
export function columnOf(table: SQLiteTable, values: unknown, name: string): unknown {
  return (values as unknown[])[columnIndex(table, name)];
}

const indexes = new Map<string, number>();
function columnIndex(table: SQLiteTable, name: string): number {
  const key = `${getTableName(table)}.${name}`;
  let i = indexes.get(key);
  if (i === undefined) {
    i = columnsOf(table).findIndex(([, c]) => c.name === name);
    if (i < 0) throw new Error(`no column ${key}`);
    indexes.set(key, i);
  }
  return i;
}

/** D1 allows at most 5 terms in one compound SELECT: longer `UNION ALL`s are nested in groups of 5. */
export function unionAll(parts: SQL[]): SQL {
  if (parts.length <= 5) return sql.join(parts, sql` UNION ALL `);
  const groups: SQL[] = [];
  for (let i = 0; i < parts.length; i += 5)
    groups.push(sql`SELECT * FROM (${sql.join(parts.slice(i, i + 5), sql` UNION ALL `)})`);
  return unionAll(groups);
}
