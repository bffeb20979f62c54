/**
 * Rows as JSON, so one statement can return rows of several tables (`UNION ALL` of `json_object`s) and they
 * come back typed exactly as drizzle would give them: column names from the table definition, values mapped
 * by each column (booleans, JSON columns).
 */
import { getTableColumns, getTableName, sql, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";

const objects = new Map<string, SQL>();

/** `json_object('id', alias.id, 'username', alias.username, …)` over the columns of `table`, less `omit`. */
export function jsonObject(table: SQLiteTable, alias: string, omit: string[] = []): SQL {
  const key = `${getTableName(table)} ${alias} ${omit.join(",")}`;
  let made = objects.get(key);
  if (!made) {
    const cols = Object.values(getTableColumns(table)).filter((c) => !omit.includes(c.name));
    made = sql.raw(`json_object(${cols.map((c) => `'${c.name}', ${alias}."${c.name}"`).join(", ")})`);
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
const columnsOf = (table: SQLiteTable) => {
  let list = columnLists.get(table);
  if (!list) columnLists.set(table, (list = Object.entries(getTableColumns(table))));
  return list;
};

/** A row of `table` from the object `jsonObject` made. */
export function fromJson<T extends SQLiteTable>(table: T, obj: Record<string, unknown>): T["$inferSelect"] {
  const out: Record<string, unknown> = {};
  for (const [key, col] of columnsOf(table)) {
    const value = obj[col.name];
    out[key] = value === null || value === undefined ? null : col.mapFromDriverValue(value);
  }
  return out as T["$inferSelect"];
}

/** D1 allows at most 5 terms in one compound SELECT: longer `UNION ALL`s are nested in groups of 5. */
export function unionAll(parts: SQL[]): SQL {
  if (parts.length <= 5) return sql.join(parts, sql` UNION ALL `);
  const groups: SQL[] = [];
  for (let i = 0; i < parts.length; i += 5)
    groups.push(sql`SELECT * FROM (${sql.join(parts.slice(i, i + 5), sql` UNION ALL `)})`);
  return unionAll(groups);
}
