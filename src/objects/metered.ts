/**
 * A Durable Object class whose calls are counted (lib/meter.ts): each call from outside (an RPC method, `fetch`,
 * `alarm`, a WebSocket event) is one Durable Object request, and its D1, R2 and Images use is counted through the
 * metered bindings, as the Worker's own is.
 */
import type { DurableObject } from "cloudflare:workers";
import { count, meteredEnv } from "../lib/meter";
import type { Env } from "../env";

type ObjectClass = new (...args: any[]) => DurableObject<Env>;

/** `Base` with its bindings metered and each of `entries` (the calls that come from outside) counted. */
export function metered<C extends ObjectClass>(Base: C, entries: readonly string[]): C {
  const Metered = class extends Base {
    constructor(...args: any[]) {
      super(args[0] as DurableObjectState, meteredEnv(args[1] as Env));
    }
  };
  for (const name of entries) {
    const original = (Base.prototype as unknown as Record<string, (...a: unknown[]) => unknown>)[name];
    if (typeof original !== "function") throw new Error(`${Base.name} has no method ${name}`);
    Object.defineProperty(Metered.prototype, name, {
      value: function (this: unknown, ...a: unknown[]) {
        count("durableObjectRequests");
        return original.apply(this, a);
      },
      writable: true,
      configurable: true,
    });
  }
  Object.defineProperty(Metered, "name", { value: Base.name });
  return Metered;
}
