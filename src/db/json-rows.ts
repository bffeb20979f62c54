/**
 * Rows as JSON, so one statement can return rows of several tables (`UNION ALL` of `json_object`s) and they
 * come back typed exactly as drizzle would give them: column names from the table definition, values mapped
 * by each column (booleans, JSON columns).
 */
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/** `json_object('id', alias.id, 'username', alias.username, …)` over the columns of `table`, less `omit`. */
export function jsonObject(table: SQLiteTable, alias: string, omit: string[] = []): SQL {
  const cols = Object.values(getTableColumns(table)).filter((c) => !omit.includes(c.name));
  return sql.raw(`json_object(${cols.map((c) => `'${c.name}', ${alias}."${c.name}"`).join(", ")})`);
}

/** A row of `table` from the object `jsonObject` made. */
export function fromJson<T extends SQLiteTable>(table: T, obj: Record<string, unknown>): T["$inferSelect"] {
  const out: Record<string, unknown> = {};
  for (const [key, col] of Object.entries(getTableColumns(table))) {
    const value = obj[col.name];
    out[key] = value === null || value === undefined ? null : col.mapFromDriverValue(value);
  }
  return out as T["$inferSelect"];
}

/** D1 allows at most 5 terms in one compound SELECT: longer `UNION ALL`s are nested in groups of 5. */
export function unionAll(parts: SQL[]): SQL {
  if (parts.length <= 5) return sql.join(parts, sql` UNION ALL `);
  const groups: SQL[] = [];
  for (let i = 0; i < parts.length; i += 5) groups.push(sql`SELECT * FROM (${sql.join(parts.slice(i, i + 5), sql` UNION ALL `)})`);
  return unionAll(groups);
}
