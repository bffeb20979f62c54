/**
 * A Durable Object class whose calls are counted (lib/meter.ts): each call from outside (an RPC method, `fetch`,
 * `alarm`, a WebSocket event) is one Durable Object request, and its D1, R2 and Images use is counted through the
 * metered bindings, as the Worker's own is.
 */
import type { DurableObject } from "cloudflare:workers";
import { count, meteredEnv } from "../lib/meter";
import { flushUsage } from "../services/usage-budget";
import type { Env } from "../env";

type ObjectClass = new (...args: any[]) => DurableObject<Env>;

/** `Base` with its bindings metered and each of `entries` (the calls that come from outside) counted. */
export function metered<C extends ObjectClass>(Base: C, entries: readonly string[]): C {
  const envs = new WeakMap<object, Env>();
  const Metered = class extends Base {
    constructor(...args: any[]) {
      const env = meteredEnv(args[1] as Env);
      super(args[0] as DurableObjectState, env);
      envs.set(this, env);
    }
  };
  for (const name of entries) {
    const original = (Base.prototype as unknown as Record<string, (...a: unknown[]) => unknown>)[name];
    if (typeof original !== "function") throw new Error(`${Base.name} has no method ${name}`);
    Object.defineProperty(Metered.prototype, name, {
      value: function (this: object, ...a: unknown[]) {
        count("durableObjectRequests");
        const result = original.apply(this, a);
        // The object's isolate adds what it counted to the day's budget too, now and then (services/usage-budget.ts).
        const env = envs.get(this);
        if (env)
          void Promise.resolve(result).then(
            () => flushUsage(env),
            () => flushUsage(env),
          );
        return result;
      },
      writable: true,
      configurable: true,
    });
  }
  Object.defineProperty(Metered, "name", { value: Base.name });
  return Metered;
}
