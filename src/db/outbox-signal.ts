/**
 * Whether a batch queued federation outbox rows, seen from the batch itself: `markOutboxWrite` tags the inserts
 * `outboxWrite` makes (services/outbox.ts), every batch sent through the drizzle handle (`db`, db/client.ts) is
 * looked at when it returns, and the effects door takes the mark (`takeOutboxQueued`) and wakes delivery. No
 * action says "federate" by hand: an insert its audience gate kept from writing wakes nothing, and one that wrote
 * cannot be forgotten (scripts/door.test.ts fails on a `federate` flag set anywhere else).
 *
 * The mark is per database and per isolate. A request that takes a mark another request left wakes delivery after
 * that one's rows were committed, and the wake sends every queued row, so nothing is lost by who takes it; work
 * that no door follows (a Durable Object's batch) hands it on in its answer (`outboxEffects`, services/outbox.ts),
 * and the cron's sweep sends what a lost isolate left.
 */
import { bindingOf } from "./binding";

const OUTBOX_WRITES = new WeakSet<D1PreparedStatement>();
const queued = new WeakSet<D1Database>();

/** Tags an outbox insert, so that a batch holding it marks its database when the insert wrote a row. */
export function markOutboxWrite(binding: D1Database, write: D1PreparedStatement): D1PreparedStatement {
  OUTBOX_WRITES.add(write);
  // Sent alone: the same mark.
  const run = write.run.bind(write);
  write.run = (async () => {
    const result = await run();
    if ((result.meta?.changes ?? 0) > 0) queued.add(bindingOf(binding));
    return result;
  }) as D1PreparedStatement["run"];
  return write;
}

/** Whether outbox rows were queued on this database since the last take; takes the mark. */
export function takeOutboxQueued(binding: D1Database): boolean {
  return queued.delete(bindingOf(binding));
}

const WRAPPED_BINDING = Symbol.for("starling.wrappedBinding");

/**
 * The binding as `db` (db/client.ts) uses it: the same database, each batch looked at for tagged outbox inserts
 * that wrote a row. It names what it wraps as the meter's wrapper does (db/binding.ts).
 */
export function outboxWatched(real: D1Database): D1Database {
  const batch = async <T>(stmts: D1PreparedStatement[]): Promise<D1Result<T>[]> => {
    const results = await real.batch<T>(stmts);
    if (stmts.some((s, i) => OUTBOX_WRITES.has(s) && (results[i]?.meta?.changes ?? 0) > 0)) queued.add(bindingOf(real));
    return results;
  };
  return new Proxy(real, {
    get(target, key) {
      if (key === WRAPPED_BINDING) return target;
      if (key === "batch") return batch;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
