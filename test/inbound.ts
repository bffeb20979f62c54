/**
 * What the inbox tests share (test/federation-inbound.test.ts, test/federation-corpus.test.ts): a Fedify peer
 * routed as the remote server (`setup`), fixtures with their `{{…}}` placeholders filled in (`fill`), a follow of
 * the peer's actor by the local user (`followPeer`), and row reads. A test file calls `afterEach(unroute)`.
 */
import { env } from "cloudflare:test";
import { afterEach, beforeEach, expect } from "vitest";
import { deliveryWake } from "../src/federation/delivery/wake";
import { json, registerUser, type TestUser } from "./helpers";
import { A } from "./instances";
import { createPeer, type Peer } from "./peer";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";
import mastodonAccept from "./fixtures/federation/mastodon-accept.json";

let routed: (() => void) | undefined;
/** Puts the fetch the last `setup` (or `reroute`) replaced back. */
export function unroute() {
  routed?.();
  routed = undefined;
}
/** Replaces the current routing with `route`'s (a test adding peers). */
export function reroute(route: () => () => void) {
  unroute();
  routed = route();
}

let n = 0;
/** A fixture with its placeholders filled in. */
export function fill(fixture: unknown, vars: Record<string, string>): any {
  const text = JSON.stringify(fixture).replace(/\{\{(\w+)\}\}/g, (_m, k: string) => {
    if (!(k in vars)) throw new Error(`fixture placeholder {{${k}}} not given`);
    return vars[k]!;
  });
  return JSON.parse(text);
}

export interface Setup {
  peer: Peer;
  user: TestUser;
  /** The local user's actor id on A. */
  target: string;
  actor: string;
  vars: Record<string, string>;
}

export async function setup(opts: { locked?: boolean } = {}): Promise<Setup> {
  const peer = createPeer();
  reroute(() => peer.route());
  const user = await registerUser({ instance: A });
  if (opts.locked)
    await json("/api/v1/accounts/update_credentials", {
      instance: A,
      token: user.token,
      method: "PATCH",
      body: { locked: true },
    });
  const actor = peer.actor();
  const target = `${A.origin}/users/${user.username}`;
  const name = new URL(actor).pathname.split("/").pop()!;
  return {
    peer,
    user,
    target,
    actor,
    vars: {
      ACTOR: actor,
      ORIGIN: peer.origin,
      TARGET: target,
      TARGET_NAME: user.username,
      NAME: name,
      N: String(Date.now() * 100 + n++),
    },
  };
}

export const q = async <T = Record<string, unknown>>(sql: string, ...args: unknown[]) =>
  (
    await env.DB.prepare(sql)
      .bind(...args)
      .all<T>()
  ).results;
export const remoteId = async (uri: string) =>
  (await q<{ id: string }>("SELECT id FROM accounts WHERE uri = ?", uri))[0]?.id;

export async function expectAccepted(res: Response) {
  const text = await res.text();
  expect(res.status, text).toBe(202);
}

/** The local user follows the peer's actor (the peer accepts), through the client API and the inbox. */
export async function followPeer(s: Setup): Promise<string> {
  const other = await registerUser({ instance: A });
  await expectAccepted(
    await s.peer.send(
      s.actor,
      fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}f`, TARGET: `${A.origin}/users/${other.username}` }),
    ),
  );
  const them = (await remoteId(s.actor))!;
  await json(`/api/v1/accounts/${them}/follow`, { instance: A, token: s.user.token, method: "POST" });
  const [request] = await q<{ uri: string }>(
    "SELECT uri FROM follow_requests WHERE account_id = ? AND target_account_id = ?",
    s.user.id,
    them,
  );
  await expectAccepted(
    await s.peer.send(s.actor, fill(mastodonAccept, { ...s.vars, N: `${s.vars.N}a`, FOLLOW_ID: request!.uri })),
  );
  return them;
}

/**
 * Deliveries drained by the test itself (`drainFederation`), not by the background wake, which does not see the
 * peer and would try them first through the real resolver: a file or a `describe` calls this once.
 */
export function drainDeliveriesByHand(): void {
  const realWake = deliveryWake.run;
  beforeEach(() => {
    deliveryWake.run = async () => {};
  });
  afterEach(() => {
    deliveryWake.run = realWake;
  });
}
