/**
 * Outgoing HTTP signatures (federation/door/signature-specs.ts): the double knock against the test peer set to
 * accept only RFC 9421, or only draft-cavage: deliveries (POST) and signed fetches (GET) are signed in the scheme the
 * host accepted last, once more in the other one when refused (400/401), and the host's choice is kept in
 * `instances.signature_spec`, written only when it changes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { drainFederation } from "../src/federation/delivery/wake";
import { json, registerUser, valid, type TestUser } from "./helpers";
import { A } from "./instances";
import { createPeer, type Peer } from "./peer";
import { drainDeliveriesByHand } from "./inbound";

let unroute: (() => void) | undefined;
drainDeliveriesByHand();
afterEach(() => {
  unroute?.();
  unroute = undefined;
});

let n = 0;
function peerOnItsOwnHost(): Peer {
  const peer = createPeer(`sig${Date.now().toString(36)}${n++}.example`);
  unroute = peer.route();
  return peer;
}

const stored = async (host: string) =>
  (
    await A.bindings.DB.prepare("SELECT signature_spec AS s FROM instances WHERE domain = ?")
      .bind(host)
      .first<{ s: string | null }>()
  )?.s ?? null;

/** `actor` as `user` on A finds it (a signed GET of the actor document, the key fetched along). */
async function resolve(user: TestUser, actor: string) {
  const found = await json(`/api/v2/search?q=${encodeURIComponent(actor)}&resolve=true&type=accounts`, {
    instance: A,
    token: user.token,
  });
  expect(found.accounts).toHaveLength(1);
  return valid(AccountSchema, found.accounts[0]);
}

const follow = (user: TestUser, id: string) =>
  json(`/api/v1/accounts/${id}/follow`, { method: "POST", instance: A, token: user.token });
const unfollow = (user: TestUser, id: string) =>
  json(`/api/v1/accounts/${id}/unfollow`, { method: "POST", instance: A, token: user.token });

const inboxKnocks = (peer: Peer) =>
  peer.knocks.filter((k) => k.method === "POST").map((k) => [k.spec, k.ok] as [string | null, boolean]);
const getKnocks = (peer: Peer, path: string) =>
  peer.knocks.filter((k) => k.method === "GET" && k.path === path).map((k) => [k.spec, k.ok]);

describe("deliveries", () => {
  it("a host accepting only RFC 9421: draft-cavage refused once, then RFC 9421, kept for the next deliveries", async () => {
    const peer = peerOnItsOwnHost();
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    const account = await resolve(user, actor);
    peer.accepts = "rfc9421";
    await follow(user, account.id);
    await drainFederation(A.bindings);
    expect(inboxKnocks(peer)).toEqual([
      ["draft-cavage-http-signatures-12", false],
      ["rfc9421", true],
    ]);
    // Delivered once, verified.
    expect(peer.delivered.map((d) => (d.body as any).type)).toEqual(["Follow"]);
    expect(await stored(peer.host)).toBe("rfc9421");
    // The next activity goes in RFC 9421 straight away.
    peer.knocks.length = 0;
    await unfollow(user, account.id);
    await drainFederation(A.bindings);
    expect(inboxKnocks(peer)).toEqual([["rfc9421", true]]);
    expect(peer.delivered.map((d) => (d.body as any).type)).toEqual(["Follow", "Undo"]);
  });

  it("a host accepting only draft-cavage: one knock; a host that stops accepting RFC 9421 is answered in draft-cavage again", async () => {
    const peer = peerOnItsOwnHost();
    const user = await registerUser({ instance: A });
    const account = await resolve(user, peer.actor());
    peer.accepts = "draft-cavage-http-signatures-12";
    await follow(user, account.id);
    await drainFederation(A.bindings);
    expect(inboxKnocks(peer)).toEqual([["draft-cavage-http-signatures-12", true]]);
    expect(peer.delivered).toHaveLength(1);
    expect(await stored(peer.host)).toBe("draft-cavage-http-signatures-12");

    // Known as an RFC 9421 host, it now refuses RFC 9421: one more knock, and the choice changes back.
    await A.bindings.DB.prepare("UPDATE instances SET signature_spec = 'rfc9421' WHERE domain = ?")
      .bind(peer.host)
      .run();
    peer.knocks.length = 0;
    await unfollow(user, account.id);
    await drainFederation(A.bindings);
    expect(inboxKnocks(peer)).toEqual([
      ["rfc9421", false],
      ["draft-cavage-http-signatures-12", true],
    ]);
    expect(await stored(peer.host)).toBe("draft-cavage-http-signatures-12");
  });

  it("a host refusing both schemes: two knocks, kept for a retry, the stored choice unchanged", async () => {
    const peer = peerOnItsOwnHost();
    const user = await registerUser({ instance: A });
    const account = await resolve(user, peer.actor());
    // The fetch learned draft-cavage (the peer checked nothing then).
    expect(await stored(peer.host)).toBe("draft-cavage-http-signatures-12");
    // A scheme no signer uses: every signature is refused.
    peer.accepts = "none" as never;
    await follow(user, account.id);
    const run = await drainFederation(A.bindings);
    expect(run.attempted).toBeGreaterThan(0);
    expect(inboxKnocks(peer)).toEqual([
      ["draft-cavage-http-signatures-12", false],
      ["rfc9421", false],
    ]);
    expect(peer.delivered).toEqual([]);
    expect(await stored(peer.host)).toBe("draft-cavage-http-signatures-12");
    const [row] = (
      await A.bindings.DB.prepare("SELECT attempts, last_error FROM federation_deliveries WHERE host = ?")
        .bind(peer.host)
        .all<{ attempts: number; last_error: string }>()
    ).results;
    expect(row).toMatchObject({ attempts: 1, last_error: "HTTP 401" });
  });
});

describe("signed fetches (authorized fetch)", () => {
  it("a host accepting only RFC 9421 answers the second knock; its next fetches are signed in RFC 9421 at once", async () => {
    const peer = peerOnItsOwnHost();
    peer.accepts = "rfc9421";
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    const path = new URL(actor).pathname;
    const account = await resolve(user, actor);
    expect(account.acct).toBe(`${path.split("/").pop()}@${peer.host}`);
    expect(getKnocks(peer, path).slice(0, 2)).toEqual([
      ["draft-cavage-http-signatures-12", false],
      ["rfc9421", true],
    ]);
    expect(await stored(peer.host)).toBe("rfc9421");
    // Another actor of the same host: no refused knock.
    const other = peer.actor();
    await resolve(user, other);
    const otherPath = new URL(other).pathname;
    expect(getKnocks(peer, otherPath)[0]).toEqual(["rfc9421", true]);
    expect(getKnocks(peer, otherPath).filter(([, ok]) => !ok)).toEqual([]);
  });

  it("a host accepting only draft-cavage: every fetch in one knock", async () => {
    const peer = peerOnItsOwnHost();
    peer.accepts = "draft-cavage-http-signatures-12";
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    await resolve(user, actor);
    const knocks = getKnocks(peer, new URL(actor).pathname);
    expect(knocks.length).toBeGreaterThan(0);
    expect(knocks.every(([spec, ok]) => spec === "draft-cavage-http-signatures-12" && ok)).toBe(true);
    expect(await stored(peer.host)).toBe("draft-cavage-http-signatures-12");
  });

  it("an inbound POST from an RFC 9421-only host: its key is fetched in the scheme it accepts", async () => {
    const peer = peerOnItsOwnHost();
    peer.accepts = "rfc9421";
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    const res = await peer.send(
      actor,
      {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${actor}#follow-${n++}`,
        type: "Follow",
        actor,
        object: `${A.origin}/users/${user.username}`,
      },
      { spec: "rfc9421" },
    );
    expect(res.status, await res.text()).toBe(202);
    const followers = await json(`/api/v1/accounts/${user.id}/followers`, { instance: A, token: user.token });
    expect(followers.map((f: { acct: string }) => f.acct)).toEqual([`${actor.split("/").pop()}@${peer.host}`]);
    // Its own RFC 9421 signature verified: the host is answered in RFC 9421 from now on, the Accept included.
    expect(await stored(peer.host)).toBe("rfc9421");
    await drainFederation(A.bindings);
    expect(inboxKnocks(peer)).toEqual([["rfc9421", true]]);
    expect(peer.delivered.map((d) => (d.body as any).type)).toEqual(["Accept"]);
  });

  it("a host signing its own POSTs in RFC 9421 is answered in RFC 9421; one signing in draft-cavage changes nothing", async () => {
    const peer = peerOnItsOwnHost();
    const user = await registerUser({ instance: A });
    const follow = (actor: string) => ({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${actor}#follow-${n++}`,
      type: "Follow",
      actor,
      object: `${A.origin}/users/${user.username}`,
    });
    const first = peer.actor();
    expect((await peer.send(first, follow(first))).status).toBe(202);
    // The key fetch learned draft-cavage (the peer checks nothing); a draft-cavage POST adds nothing.
    expect(await stored(peer.host)).toBe("draft-cavage-http-signatures-12");
    const second = peer.actor();
    expect((await peer.send(second, follow(second), { spec: "rfc9421" })).status).toBe(202);
    expect(await stored(peer.host)).toBe("rfc9421");
    // Both Accepts go in RFC 9421 (the peer now checks it), with no refused knock.
    peer.accepts = "rfc9421";
    await drainFederation(A.bindings);
    expect(inboxKnocks(peer)).toEqual([
      ["rfc9421", true],
      ["rfc9421", true],
    ]);
  });
});
