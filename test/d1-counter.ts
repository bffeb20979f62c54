/**
 * A D1 binding that counts round trips (each statement run or batch sent), for "no query per item" tests, and
 * records each statement it sends (text and bound parameters, batches included), for query-plan tests.
 */
import { env } from "cloudflare:test";

export interface SentStatement {
  sql: string;
  params: unknown[];
}

export interface CountingD1 {
  db: D1Database;
  count: () => number;
  /** Every statement sent since the last reset, in order (a batch's statements one by one). */
  statements: () => SentStatement[];
  reset: () => void;
}

const REAL = Symbol("real statement");
const SENT = Symbol("statement text and parameters");
const WRAPPED_BINDING = Symbol.for("starling.wrappedBinding");

export function countingD1(real: D1Database = env.DB): CountingD1 {
  let n = 0;
  let sent: SentStatement[] = [];
  const wrap = (stmt: D1PreparedStatement, seen: SentStatement): D1PreparedStatement =>
    new Proxy(stmt, {
      get(target, prop) {
        if (prop === REAL) return target;
        if (prop === SENT) return seen;
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (prop === "bind")
          return (...args: unknown[]) => wrap(value.apply(target, args), { sql: seen.sql, params: args });
        if (["all", "run", "first", "raw"].includes(prop as string)) {
          return (...args: unknown[]) => {
            n++;
            sent.push(seen);
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
  const db = new Proxy(real, {
    get(target, prop) {
      // The same database: run-time settings (src/services/instance-settings.ts) keep one copy per database, read at
      // most once per TTL, not per request, so they are not what these tests count.
      if (prop === WRAPPED_BINDING) return target;
      const value = Reflect.get(target, prop, target);
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query), { sql: query, params: [] });
      if (prop === "batch") {
        return (stmts: D1PreparedStatement[]) => {
          n++;
          for (const s of stmts) sent.push((s as any)[SENT] ?? { sql: "(statement prepared elsewhere)", params: [] });
          return target.batch(stmts.map((s) => ((s as any)[REAL] ?? s) as D1PreparedStatement));
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    db,
    count: () => n,
    statements: () => sent,
    reset: () => {
      n = 0;
      sent = [];
    },
  };
}
