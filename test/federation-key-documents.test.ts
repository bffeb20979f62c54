/**
 * Actor and key documents fetched to check a signature (door/auth-loaders.ts): a signature names any URL it likes,
 * so what that URL serves is held in memory until the signature verifies, and only then stored in `fedify_kv`;
 * each is read up to 256 KB. A stranger sending bad signatures that name many large documents writes nothing.
 */
import { signRequest } from "@fedify/fedify";
import { afterEach, describe, expect, it } from "vitest";
import { actorOrKey } from "../src/federation/door/auth-loaders";
import { ACTOR_MAX_BYTES } from "../src/federation/door/loaders";
import { drainDeliveriesByHand, expectAccepted, fill, q, setup, unroute, type Setup } from "./inbound";
import { A, instanceFetch } from "./instances";
import { rsaKeyPair } from "./peer";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";

afterEach(unroute);
drainDeliveriesByHand();

const AS = "https://www.w3.org/ns/activitystreams";
const SECURITY = "https://w3id.org/security/v1";

const kvRows = async () =>
  (await q<{ key: string; size: number }>("SELECT key, length(value) AS size FROM fedify_kv ORDER BY key")).map(
    (r) => `${r.key} ${r.size}`,
  );

async function pem(key: CryptoKey): Promise<string> {
  const der = new Uint8Array((await crypto.subtle.exportKey("spki", key)) as ArrayBuffer);
  const b64 = btoa(String.fromCharCode(...der)).replace(/(.{64})/g, "$1\n");
  return `-----BEGIN PUBLIC KEY-----\n${b64}\n-----END PUBLIC KEY-----\n`;
}

/** An actor document at `id` listing `publicKeyPem` as `#main-key`, padded to about `bytes` bytes. */
const paddedActor = (id: string, publicKeyPem: string, bytes: number) => ({
  "@context": [AS, SECURITY],
  id,
  type: "Person",
  preferredUsername: "pad",
  inbox: `${id}/inbox`,
  summary: "a".repeat(bytes),
  publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem },
});

/** Serves `doc` at `url` on the peer as ActivityPub, counting the requests for it. */
function serve(s: Setup, url: string, doc: unknown) {
  const served = { count: 0 };
  s.peer.objects.set(url, () => {
    served.count++;
    return new Response(JSON.stringify(doc), { headers: { "Content-Type": "application/activity+json" } });
  });
  return served;
}

/** A Follow POSTed to A's inbox with a well-formed draft-cavage signature by `privateKey`, naming `keyId`. */
async function signedBy(body: unknown, privateKey: CryptoKey, keyId: string) {
  const req = new Request(`${A.origin}/inbox`, {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body: JSON.stringify(body),
  });
  return instanceFetch(
    A,
    await signRequest(req, privateKey, new URL(keyId), { spec: "draft-cavage-http-signatures-12" }),
  );
}

describe("key documents named by a signature", () => {
  it("bad signatures naming 4 large actor documents: 401 each, every one fetched, no fedify_kv row written", async () => {
    const s = await setup();
    const [served, signer] = [[] as { count: number }[], await rsaKeyPair()];
    const published = await pem((await rsaKeyPair()).publicKey);
    const before = await kvRows();
    for (const [i, bytes] of [100_000, 200_000, ACTOR_MAX_BYTES - 2_000, 1_500_000].entries()) {
      const id = `${s.peer.origin}/evil${s.vars.N}x${i}`;
      served.push(serve(s, id, paddedActor(id, published, bytes)));
      const follow = fill(mastodonFollow, { ...s.vars, ACTOR: id, N: `${s.vars.N}e${i}` });
      // Signed well, by a key other than the one the document lists: the document must be fetched to tell.
      const res = await signedBy(follow, signer.privateKey, `${id}#main-key`);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "The HTTP signature does not verify" });
      expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id)).toEqual([]);
    }
    // Each was fetched (once, and once more to see whether its key was rotated, but the one over the cap).
    expect(served.map((x) => x.count >= 1)).toEqual([true, true, true, true]);
    expect(await kvRows()).toEqual(before);
    expect(await q("SELECT id FROM accounts WHERE uri LIKE ?", `${s.peer.origin}/evil${s.vars.N}%`)).toEqual([]);
  });

  it("a document over 256 KB is not read as the signer's, even when its key signed", async () => {
    const s = await setup();
    const pair = await rsaKeyPair();
    const id = `${s.peer.origin}/big${s.vars.N}`;
    const served = serve(s, id, paddedActor(id, await pem(pair.publicKey), ACTOR_MAX_BYTES + 10_000));
    const before = await kvRows();
    const follow = fill(mastodonFollow, { ...s.vars, ACTOR: id });
    const res = await signedBy(follow, pair.privateKey, `${id}#main-key`);
    expect(res.status).toBe(401);
    expect(served.count).toBe(1);
    expect(await kvRows()).toEqual(before);
  });

  it("a key rotated into a document over 256 KB: fetched again, not read, 401", async () => {
    const s = await setup();
    const [old, rotated] = [await rsaKeyPair(), await rsaKeyPair()];
    const id = `${s.peer.origin}/rot${s.vars.N}`;
    const docs = [
      paddedActor(id, await pem(old.publicKey), 1_000),
      paddedActor(id, await pem(rotated.publicKey), 1_000_000),
    ];
    let served = 0;
    s.peer.objects.set(id, () => {
      const doc = docs[Math.min(served++, 1)];
      return new Response(JSON.stringify(doc), { headers: { "Content-Type": "application/activity+json" } });
    });
    const before = await kvRows();
    const follow = fill(mastodonFollow, { ...s.vars, ACTOR: id });
    const res = await signedBy(follow, rotated.privateKey, `${id}#main-key`);
    expect(res.status).toBe(401);
    // The first (its old key), then once more to see whether the key was rotated: too big to be read.
    expect(served).toBe(2);
    expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id)).toEqual([]);
    expect(await kvRows()).toEqual(before);
  });

  it("a document that is no actor or key, named by a signature: 401, nothing stored", async () => {
    const s = await setup();
    const pair = await rsaKeyPair();
    const url = `${s.peer.origin}/notes/n${s.vars.N}`;
    const served = serve(s, url, { "@context": AS, id: url, type: "Note", content: "x".repeat(50_000) });
    const before = await kvRows();
    const res = await signedBy(fill(mastodonFollow, s.vars), pair.privateKey, url);
    expect(res.status).toBe(401);
    expect(served.count).toBeGreaterThanOrEqual(1);
    expect(await kvRows()).toEqual(before);
  });

  it("a good signature: taken, its actor and key stored, and reused by the next delivery (no fetch)", async () => {
    const s = await setup();
    const actorFetches = () => s.peer.requests.filter((r) => r === `GET ${new URL(s.actor).pathname}`).length;
    const first = fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}a` });
    await expectAccepted(await s.peer.send(s.actor, first));
    expect(await q("SELECT id FROM follows WHERE uri = ?", first.id)).toHaveLength(1);
    const fetched = actorFetches();
    expect(fetched).toBeGreaterThanOrEqual(1);
    const stored = (await kvRows()).filter((r) => r.includes(JSON.stringify(s.actor).slice(1, -1)));
    // The actor's document (at its id and at its key's id) and its key, each a few KB.
    expect(stored.some((r) => r.startsWith(`["_fedify","publicKey","${s.actor}#main-key"]`))).toBe(true);
    expect(stored.some((r) => r.startsWith(`["_fedify","remoteDocument","${s.actor}"]`))).toBe(true);
    expect(stored.every((r) => Number(r.split(" ").pop()) < 10_000)).toBe(true);
    const second = fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}b` });
    await expectAccepted(await s.peer.send(s.actor, second));
    expect(actorFetches()).toBe(fetched);
  });
});

describe("which fetched documents are worth keeping", () => {
  it("actors and keys by their type, an untyped key by its PEM; nothing else", () => {
    for (const type of ["Person", "Service", "Application", "Group", "Organization", "Key", "CryptographicKey"])
      expect(actorOrKey({ type }), type).toBe(true);
    expect(actorOrKey({ type: ["Person", "http://example.com/x"] })).toBe(true);
    expect(actorOrKey({ id: "https://x.example/k", publicKeyPem: "-----BEGIN" })).toBe(true);
    for (const doc of [null, "Person", [], {}, { type: "Note" }, { type: "Note", publicKeyPem: "x" }, { type: 3 }])
      expect(actorOrKey(doc), JSON.stringify(doc)).toBe(false);
  });
});
