/** What every Fedify callback (dispatchers, inbox listeners) is handed with its context: the request's bindings. */
import type { DB } from "../db/client";
import type { Env } from "../env";

export interface FederationData {
  env: Env;
  d: DB;
  /** The request's execution context (streams and push after the response); absent outside a request. */
  exec?: { waitUntil(p: Promise<unknown>): void };
  /** Set when a signed GET is refused for who signed it (door/authorized-fetch.ts): answered 403, not 401. */
  refused?: boolean;
  /** The key id of another server's HTTP signature that carried an inbox POST (a relay's: listening/relays.ts). */
  relayedBy?: string;
  /** Set by a listener refusing an activity over its sender's inbound limits: answered 429 with this Retry-After. */
  retryAfter?: number;
}
