/** A D1 binding that counts round trips (each statement run or batch sent), for "no query per item" tests. */
import { env } from "cloudflare:test";

export interface CountingD1 {
  db: D1Database;
  count: () => number;
  reset: () => void;
}

const REAL = Symbol("real statement");
const WRAPPED_BINDING = Symbol.for("starling.wrappedBinding");

export function countingD1(real: D1Database = env.DB): CountingD1 {
  let n = 0;
  const wrap = (stmt: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(stmt, {
      get(target, prop) {
        if (prop === REAL) return target;
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (prop === "bind") return (...args: unknown[]) => wrap(value.apply(target, args));
        if (["all", "run", "first", "raw"].includes(prop as string)) {
          return (...args: unknown[]) => {
            n++;
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
  const db = new Proxy(real, {
    get(target, prop) {
      // The same database: run-time settings (src/services/settings.ts) keep one copy per database, read at
      // most once per TTL, not per request, so they are not what these tests count.
      if (prop === WRAPPED_BINDING) return target;
      const value = Reflect.get(target, prop, target);
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query));
      if (prop === "batch") {
        return (stmts: D1PreparedStatement[]) => {
          n++;
          return target.batch(stmts.map((s) => ((s as any)[REAL] ?? s) as D1PreparedStatement));
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, count: () => n, reset: () => (n = 0) };
}
