/**
 * A D1 binding that fails like an unavailable database for statements matching a pattern: the failure comes
 * when the statement is run, or when the batch holding it is sent (the whole batch fails, as D1 rolls it back).
 */
import { env } from "cloudflare:test";

const REAL = Symbol("real statement");
const SQL = Symbol("sql");

export function failingD1(pattern: RegExp, real: D1Database = env.DB): D1Database {
  const fail = (sql: string) => {
    if (pattern.test(sql)) throw new Error(`D1_ERROR: injected failure (${pattern})`);
  };
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement =>
    new Proxy(stmt, {
      get(target, prop) {
        if (prop === REAL) return target;
        if (prop === SQL) return sql;
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (prop === "bind") return (...args: unknown[]) => wrap(value.apply(target, args), sql);
        if (["all", "run", "first", "raw"].includes(prop as string)) {
          return async (...args: unknown[]) => {
            fail(sql);
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
  return new Proxy(real, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query), query);
      if (prop === "batch") {
        return async (stmts: D1PreparedStatement[]) => {
          for (const s of stmts) fail(((s as any)[SQL] as string) ?? "");
          return target.batch(stmts.map((s) => ((s as any)[REAL] ?? s) as D1PreparedStatement));
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
