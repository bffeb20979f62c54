import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import type { Env } from "../env";
import * as schema from "./schema";

export type DB = DrizzleD1Database<typeof schema>;

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
