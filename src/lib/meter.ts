/**
 * What the Worker costs, counted from the platform's own figures: D1's `meta.rows_read` / `meta.rows_written` of
 * every statement sent, R2 operations, Images transformations, Durable Object calls and Worker invocations.
 *
 * Two views of the same counts:
 * - the isolate's running totals (`isolateUsage()`), which the daily budget meter adds to its day's row now and
 *   then (services/usage-budget.ts): an estimate, since an isolate that is evicted loses what it had not added;
 * - the invocation's own (`measure(fn)`): everything `fn` does, awaited or handed to `waitUntil` inside it, adds
 *   to the `Usage` it returns (AsyncLocalStorage). The cost bench and the budget tests read these.
 *
 * D1's `raw()` and `first()` answer rows without their `meta`: the wrapper sends them as `all()` (the same
 * statement, the same rows read) and shapes the answer as they would, so no statement escapes the count.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface Usage {
  /** Worker invocations: requests, cron runs. */
  requests: number;
  /** D1 statements sent (a batch's statements each). */
  queries: number;
  rowsRead: number;
  rowsWritten: number;
  /** Durable Object requests (RPC calls, fetches, alarms), counted where the object runs. */
  durableObjectRequests: number;
  /** R2 Class A operations (put, list, multipart) and Class B (get, head); deletes are free. */
  r2ClassA: number;
  r2ClassB: number;
  /** Cloudflare Images transformations (each `.output()` asked of the binding). */
  imageTransformations: number;
  /** Outbound `fetch` calls made through lib/outbound.ts (remote servers, link cards, push). */
  subrequests: number;
  /** Workers AI neurons (translation's estimate from the tokens sent and received: services/translation.ts). */
  aiNeurons: number;
}

export type UsageKey = keyof Usage;

export const emptyUsage = (): Usage => ({
  requests: 0,
  queries: 0,
  rowsRead: 0,
  rowsWritten: 0,
  durableObjectRequests: 0,
  r2ClassA: 0,
  r2ClassB: 0,
  imageTransformations: 0,
  subrequests: 0,
  aiNeurons: 0,
});

export const USAGE_KEYS = Object.keys(emptyUsage()) as UsageKey[];

/** One D1 statement and what D1 said it cost (kept by `measure(fn, { statements: true })`). */
export interface StatementCost {
  sql: string;
  rowsRead: number;
  rowsWritten: number;
}

interface Frame {
  usage: Usage;
  statements?: StatementCost[];
}

const isolate = emptyUsage();
/** Never taken: what the cost bench reads (`/__cost`), whatever the budget meter's flushes took. */
const lifetime = emptyUsage();
const current = new AsyncLocalStorage<Frame[]>();

/** Adds to the isolate's totals and to every `measure` around the caller. */
export function count(key: UsageKey, n = 1): void {
  if (!n) return;
  isolate[key] += n;
  lifetime[key] += n;
  for (const f of current.getStore() ?? []) f.usage[key] += n;
}

/** The isolate's totals since it started (or since `takeIsolateUsage`). */
export const isolateUsage = (): Readonly<Usage> => isolate;

/** Everything the isolate counted since it started, never reset (the cost bench's figures). */
export const lifetimeUsage = (): Readonly<Usage> => lifetime;

/** The isolate's totals, reset to zero: what a flush adds to the day's figures. */
export function takeIsolateUsage(): Usage {
  const taken = { ...isolate };
  for (const k of USAGE_KEYS) isolate[k] = 0;
  return taken;
}

/** Puts back what a failed flush took. */
export function returnIsolateUsage(u: Usage): void {
  for (const k of USAGE_KEYS) isolate[k] += u[k];
}

/**
 * Runs `fn`, counting what it (and everything it starts) costs into a fresh Usage, nested measures included; with
 * `statements`, also each D1 statement sent and its rows (to find what costs).
 */
export async function measure<T>(
  fn: () => Promise<T>,
  opts: { statements?: boolean } = {},
): Promise<{ value: T; usage: Usage; statements: StatementCost[] }> {
  const frame: Frame = { usage: emptyUsage(), ...(opts.statements ? { statements: [] } : {}) };
  const value = await current.run([...(current.getStore() ?? []), frame], fn);
  return { value, usage: frame.usage, statements: frame.statements ?? [] };
}

/**
 * An ExecutionContext whose `waitUntil` work is also collected, so that an invocation's cost can be reported once
 * everything it started has settled (`settled()`), work added by that work included.
 */
export function trackingContext(ctx: ExecutionContext): { ctx: ExecutionContext; settled: () => Promise<void> } {
  const pending: Promise<unknown>[] = [];
  const tracked = Object.create(ctx, {
    waitUntil: {
      value: (p: Promise<unknown>) => {
        pending.push(p);
        ctx.waitUntil(p);
      },
    },
  }) as ExecutionContext;
  return {
    ctx: tracked,
    settled: async () => {
      for (let seen = 0; seen < pending.length;) {
        const batch = pending.slice(seen);
        seen = pending.length;
        await Promise.allSettled(batch);
      }
    },
  };
}

// --- D1 ---------------------------------------------------------------------------------------------------------

interface Meta {
  rows_read?: number;
  rows_written?: number;
}

/**
 * Counts a statement D1 answered (its `meta`); exported for the reads made on the database binding itself, past
 * the wrappers (run-time settings are kept per database, services/instance-settings.ts), so that they are counted all the same.
 */
export function countMeta(sql: string, meta: Meta | undefined) {
  const rowsRead = meta?.rows_read ?? 0;
  const rowsWritten = meta?.rows_written ?? 0;
  count("queries");
  count("rowsRead", rowsRead);
  count("rowsWritten", rowsWritten);
  for (const f of current.getStore() ?? []) f.statements?.push({ sql, rowsRead, rowsWritten });
}

const REAL = Symbol("real statement");
const WRAPPED_BINDING = Symbol.for("starling.wrappedBinding");

/** Set once the runtime's internal send (used by `raw()`) turns out not to work as expected. */
let internalsBroken = false;

class MeteredStatement {
  readonly [REAL]: D1PreparedStatement;
  constructor(
    real: D1PreparedStatement,
    readonly sql: string,
  ) {
    this[REAL] = real;
  }
  bind(...values: unknown[]): D1PreparedStatement {
    return new MeteredStatement(this[REAL].bind(...values), this.sql) as unknown as D1PreparedStatement;
  }
  async all<T>(): Promise<D1Result<T>> {
    const r = await this[REAL].all<T>();
    countMeta(this.sql, r.meta);
    return r;
  }
  async run<T>(): Promise<D1Result<T>> {
    const r = await this[REAL].run<T>();
    countMeta(this.sql, r.meta);
    return r;
  }
  async first<T>(column?: string): Promise<T | null> {
    const { results } = await this.all<Record<string, unknown>>();
    const row = results[0];
    if (!row) return null;
    if (column === undefined) return row as T;
    if (!(column in row)) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${column})`);
    return row[column] as T;
  }
  /**
   * Rows as arrays in the statement's column order. `all()` keys rows by column name, which loses a column whose
   * name repeats (drizzle's joins select `id` from two tables), so the statement is sent the way `raw()` sends it
   * (rows and columns) when the binding offers that, and through `raw()` itself, uncounted for its rows, if not.
   */
  async raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    const stmt = this[REAL] as unknown as {
      dbSession?: { _sendOrThrow?: (...a: unknown[]) => Promise<unknown> };
      statement?: string;
      params?: unknown[];
    };
    const send = stmt.dbSession?._sendOrThrow;
    // Only the platform's own statement is sent this way: another wrapper (a test's recorder) keeps its own raw().
    const native = this[REAL].raw === Object.getPrototypeOf(this[REAL])?.raw;
    const plain = async () => {
      count("queries");
      return (await this[REAL].raw(options as { columnNames: true })) as T[];
    };
    if (internalsBroken || !native || typeof send !== "function" || typeof stmt.statement !== "string") return plain();
    let answer: unknown;
    try {
      answer = await send.call(stmt.dbSession, "/query", stmt.statement, stmt.params ?? [], "ROWS_AND_COLUMNS", {
        setAttribute() {},
      });
    } catch (e) {
      // The database's own errors are the statement's; anything else means the runtime's internals changed: the
      // platform's raw() from now on, its rows uncounted, rather than a broken read.
      if (String((e as Error)?.message ?? e).startsWith("D1_")) throw e;
      internalsBroken = true;
      console.error("meter: raw() through the runtime's internals failed; counting without it", e);
      return plain();
    }
    const s = (Array.isArray(answer) ? answer[0] : answer) as {
      meta?: Meta;
      results?: { columns: string[]; rows: unknown[][] } | Record<string, unknown>[];
    };
    countMeta(this.sql, s.meta);
    if (!s.results) return [];
    if (Array.isArray(s.results)) {
      const rows = s.results.map((row) => Object.values(row));
      const names = s.results[0] ? [Object.keys(s.results[0])] : [];
      return (options?.columnNames ? [...names, ...rows] : rows) as T[];
    }
    return (options?.columnNames ? [s.results.columns, ...s.results.rows] : s.results.rows) as T[];
  }
}

class MeteredD1 {
  readonly [WRAPPED_BINDING]: D1Database;
  constructor(real: D1Database) {
    this[WRAPPED_BINDING] = real;
  }
  prepare(query: string): D1PreparedStatement {
    return new MeteredStatement(this[WRAPPED_BINDING].prepare(query), query) as unknown as D1PreparedStatement;
  }
  async batch<T>(stmts: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    const real = stmts.map((s) => (s as unknown as Partial<MeteredStatement>)[REAL] ?? s);
    const results = await this[WRAPPED_BINDING].batch<T>(real);
    results.forEach((r, i) => countMeta((stmts[i] as unknown as Partial<MeteredStatement>).sql ?? "(batch)", r.meta));
    return results;
  }
  async exec(query: string): Promise<D1ExecResult> {
    count("queries");
    return this[WRAPPED_BINDING].exec(query);
  }
  withSession(constraint?: string) {
    return (this[WRAPPED_BINDING] as unknown as { withSession(c?: string): unknown }).withSession(constraint);
  }
  dump() {
    return (this[WRAPPED_BINDING] as unknown as { dump(): Promise<ArrayBuffer> }).dump();
  }
}

/**
 * A D1 binding that counts what D1 says each statement read and wrote. The binding it wraps stays reachable as
 * `Symbol.for("starling.wrappedBinding")` (db/binding.ts), so what is kept per database is kept once.
 */
export function meteredD1(real: D1Database): D1Database {
  // One wrapper per binding: what is kept per database object (keys, prepared handles) stays kept when a caller
  // builds a new bindings object around the same database.
  let wrapped = meteredD1s.get(real);
  if (!wrapped) meteredD1s.set(real, (wrapped = new MeteredD1(real) as unknown as D1Database));
  return wrapped;
}
const meteredD1s = new WeakMap<D1Database, D1Database>();

// --- R2 and Images ----------------------------------------------------------------------------------------------

// Deletes are free (R2 pricing); multipart parts are Class A when uploaded, as puts.
const R2_CLASS_A = new Set(["put", "list", "createMultipartUpload", "resumeMultipartUpload"]);
const R2_CLASS_B = new Set(["get", "head"]);

/** An R2 bucket whose operations are counted by class (what R2 bills). */
export function meteredR2(real: R2Bucket): R2Bucket {
  return new Proxy(real, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const name = String(prop);
      const key: UsageKey | null = R2_CLASS_A.has(name) ? "r2ClassA" : R2_CLASS_B.has(name) ? "r2ClassB" : null;
      return (...args: unknown[]) => {
        if (key) count(key);
        return value.apply(target, args);
      };
    },
  });
}

/** An Images binding whose transformations (each output asked for) are counted. */
export function meteredImages(real: ImagesBinding): ImagesBinding {
  const wrapTransformer = (t: ImageTransformer): ImageTransformer =>
    new Proxy(t, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (prop === "output") count("imageTransformations");
          const r = value.apply(target, args);
          return prop === "transform" || prop === "draw" ? wrapTransformer(r as ImageTransformer) : r;
        };
      },
    });
  return new Proxy(real, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const r = value.apply(target, args);
        return prop === "input" ? wrapTransformer(r as ImageTransformer) : r;
      };
    },
  });
}

// --- The environment --------------------------------------------------------------------------------------------

const meteredEnvs = new WeakMap<object, object>();
const METERED = Symbol.for("starling.meteredEnv");

/**
 * The bindings with D1, R2 and Images counted: one wrapped object per bindings object (the Worker keeps caches per
 * bindings object), and an already metered one is returned as it is.
 */
export function meteredEnv<E extends { DB: D1Database; MEDIA?: R2Bucket; PRIVATE?: R2Bucket; IMAGES?: ImagesBinding }>(
  env: E,
): E {
  if ((env as Record<symbol, unknown>)[METERED]) return env;
  let wrapped = meteredEnvs.get(env) as E | undefined;
  if (!wrapped) {
    wrapped = {
      ...env,
      [METERED]: true,
      DB: meteredD1(env.DB),
      ...(env.MEDIA ? { MEDIA: meteredR2(env.MEDIA) } : {}),
      ...(env.PRIVATE ? { PRIVATE: meteredR2(env.PRIVATE) } : {}),
      ...(env.IMAGES ? { IMAGES: meteredImages(env.IMAGES) } : {}),
    } as E;
    meteredEnvs.set(env, wrapped);
  }
  return wrapped;
}
