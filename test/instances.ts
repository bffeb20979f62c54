/**
 * Two Starling instances in one test: A (`https://a.example`, the pool's `DB`) and B (`https://b.example`, its
 * own D1 `DB_B`, migrated below). Each is the Worker called with its own bindings object (its
 * `DOMAIN`, its database, the SSRF development switch on since neither name resolves); R2 and the Durable
 * Object namespaces are shared. `routeFetch()` replaces the global `fetch` so that a request for
 * `https://a.example/…` is handled by A and `https://b.example/…` by B; anything else goes to the fetch it
 * replaced (in tests: a refusal). Call `restore()` (afterEach) to put it back.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { upgradeAtOnce } from "../src/db/schema-upgrade";
import { afterEach, beforeEach, expect } from "vitest";
import { deliveryWake, drainFederation } from "../src/federation/delivery/wake";
import worker from "../src/index";
import { AccountSchema } from "../src/schemas/account";
import { json, valid, type TestUser } from "./helpers";

export interface Instance {
  domain: string;
  origin: string;
  bindings: typeof env;
}

function instance(domain: string, db: D1Database): Instance {
  return {
    domain,
    origin: `https://${domain}`,
    bindings: { ...env, DB: db, DOMAIN: domain, ALLOW_PRIVATE_ADDRESS: "true" },
  };
}

export const A = instance("a.example", env.DB);
export const B = instance("b.example", env.DB_B);
/** Instances only the tests of federation policies (C) and of run-time settings (D) use, since they change them. */
export const C = instance("c.example", env.DB_C);
export const D = instance("d.example", env.DB_D);

// Their databases get the same migrations as A's (test/setup.ts), here so that only the files using them pay.
await Promise.all([env.DB_B, env.DB_C, env.DB_D].map((db) => upgradeAtOnce(db)));

/** One request handled by `inst`'s Worker, background work (waitUntil) included. */
export async function instanceFetch(inst: Instance, req: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(req, inst.bindings, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

export interface Routed {
  /** Every request routed to an instance, in order (clones: their bodies can still be read). */
  requests: Request[];
  restore(): void;
}

export function routeFetch(instances: Instance[] = [A, B]): Routed {
  const previous = globalThis.fetch;
  const requests: Request[] = [];
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const target = instances.find((i) => url.protocol === "https:" && url.host === i.domain);
    if (!target) return previous(input, init);
    requests.push(req.clone());
    return instanceFetch(target, req);
  }) as typeof fetch;
  return {
    requests,
    restore() {
      globalThis.fetch = previous;
    },
  };
}

/**
 * For a file or a describe block whose instances talk to each other: outbound fetches routed between them and the
 * background delivery wake switched off, so that `settle()` delivers everything queued (answers included, such as
 * an Accept sent while handling a Follow) before the test looks.
 */
export function federating(instances: Instance[] = [A, B]): { settle: () => Promise<void>; readonly routed: Routed } {
  let routed: Routed;
  const realWake = deliveryWake.run;
  beforeEach(() => {
    routed = routeFetch(instances);
    deliveryWake.run = async () => {};
  });
  afterEach(() => {
    routed.restore();
    deliveryWake.run = realWake;
  });
  async function settle() {
    for (let round = 0; round < 5; round++) {
      let attempted = 0;
      for (const i of instances) attempted += (await drainFederation(i.bindings)).attempted;
      if (attempted === 0) return;
    }
    throw new Error("federation did not settle in 5 rounds");
  }
  return {
    settle,
    get routed() {
      return routed;
    },
  };
}

/** The accounts `user` (on `from`) finds searching `other`'s handle on `on`, resolved over federation. */
export async function searchRemote(user: TestUser, from: Instance, other: { username: string }, on: Instance) {
  const found = await json(
    `/api/v2/search?q=${encodeURIComponent(`@${other.username}@${on.domain}`)}&resolve=true&type=accounts`,
    { instance: from, token: user.token },
  );
  return (found.accounts as unknown[]).map((a) => valid(AccountSchema, a));
}

/** `other` (on `on`) as `user` (on `from`) knows it: the one account its search finds, with `other`'s handle. */
export async function findRemote(user: TestUser, from: Instance, other: { username: string }, on: Instance) {
  const accounts = await searchRemote(user, from, other, on);
  expect(accounts).toHaveLength(1);
  expect(accounts[0]!.acct).toBe(`${other.username}@${on.domain}`);
  return accounts[0]!;
}
