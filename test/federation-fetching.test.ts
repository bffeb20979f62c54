/**
 * Fetching as strictly as the big servers (issue 49): a fetched document is read only when served as ActivityPub
 * or JSON-LD (`application/activity+json`, `application/ld+json` with or without a profile; JSON served as
 * `application/json` or `text/plain` is refused, as Mastodon and Akkoma refuse it); a signed GET in authorized-fetch
 * mode names its signer by the inbox's rule (the key's owner lists the key), never by a key document's own claim;
 * remote JSON-LD contexts are fetched once and kept in memory; a key rotated under the same key id verifies at once
 * (refetched once after a failed verification).
 */
import { signRequest } from "@fedify/fedify";
import { CryptographicKey, Person } from "@fedify/vocab";
import { afterEach, describe, expect, it } from "vitest";
import { StatusSchema } from "../src/schemas/status";
import { call, json, valid } from "./helpers";
import { expectAccepted, fill, followPeer, q, reroute, setup, unroute, type Setup } from "./inbound";
import { A, instanceFetch, type Instance } from "./instances";
import { createPeer, rsaKeyPair } from "./peer";
import { litepubContext } from "./fake-fediverse";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";
import mastodonLike from "./fixtures/federation/mastodon-like.json";

afterEach(unroute);

let n = 0;
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

/** A public note by the peer's actor, served at its id with `contentType`. */
function serveNote(s: Setup, contentType: string | null, words = `note ${n}`) {
  const id = `${s.peer.origin}/notes/ct${Date.now()}${n++}`;
  const doc = {
    "@context": "https://www.w3.org/ns/activitystreams",
    id,
    type: "Note",
    attributedTo: s.actor,
    content: `<p>${words}</p>`,
    to: [PUBLIC],
    published: new Date().toISOString(),
  };
  s.peer.objects.set(id, () => {
    const headers = new Headers();
    if (contentType !== null) headers.set("Content-Type", contentType);
    return new Response(JSON.stringify(doc), { headers });
  });
  return id;
}

const searchStatus = async (s: Setup, url: string) => {
  const r = await json(`/api/v2/search?q=${encodeURIComponent(url)}&type=statuses&resolve=true`, {
    instance: A,
    token: s.user.token,
  });
  return (r.statuses as unknown[]).map((x) => valid(StatusSchema, x));
};

describe("content types of fetched documents", () => {
  it("application/activity+json and application/ld+json (with or without a profile) are read", async () => {
    const s = await setup();
    for (const type of [
      "application/activity+json",
      "application/activity+json; charset=utf-8",
      'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
      "application/ld+json",
      "Application/LD+JSON; charset=utf-8",
    ]) {
      const url = serveNote(s, type, `typed ${type}`);
      const found = await searchStatus(s, url);
      expect(
        found.map((x) => x.uri),
        type,
      ).toEqual([url]);
    }
  });

  it("hostile: JSON served as text/plain, application/json, without a type, or as an image is refused and nothing stored", async () => {
    const s = await setup();
    for (const type of ["text/plain", "application/json", "application/json; charset=utf-8", null, "image/png"]) {
      const url = serveNote(s, type, `untyped ${type}`);
      expect(await searchStatus(s, url), String(type)).toEqual([]);
      expect(await q("SELECT id FROM statuses WHERE uri = ?", url), String(type)).toEqual([]);
    }
  });

  it("an actor document served as application/json is not an actor: its activities are refused", async () => {
    const s = await setup();
    const host = `plain${Date.now()}.example`;
    const other = createPeer(host);
    reroute(() => s.peer.route([other]));
    const actor = other.actor();
    // Served as the actor's id, with the right body, but as plain JSON (an upload on its own origin, say).
    const doc = await (
      await other.handle(new Request(actor, { headers: { Accept: "application/activity+json" } }))
    ).json();
    other.objects.set(actor, () => Response.json(doc));
    const res = await other.send(
      actor,
      fill(mastodonLike, { ...s.vars, ACTOR: actor, OBJECT: `${A.origin}/objects/x` }),
    );
    expect(res.status).toBe(401);
    expect(await q("SELECT id FROM accounts WHERE uri = ?", actor)).toEqual([]);
  });
});

describe("signed GETs in authorized-fetch mode", () => {
  /** A in authorized-fetch mode (the same database: only the switch differs). */
  const AS: Instance = { ...A, bindings: { ...A.bindings, AUTHORIZED_FETCH: "true" } };
  const ap = "application/activity+json";

  async function signedGet(url: string, key: CryptoKey, keyId: URL) {
    const req = new Request(url, { headers: { Accept: ap } });
    return instanceFetch(AS, await signRequest(req, key, keyId));
  }

  it("the signer is the key's owner only when the owner's document lists the key; a key document's claim alone is nobody", async () => {
    const s = await setup();
    const evil = createPeer(`evil${Date.now()}.example`);
    reroute(() => s.peer.route([evil]));
    const status = await json("/api/v1/statuses", {
      instance: A,
      method: "POST",
      token: s.user.token,
      body: { status: "for signed fetches", visibility: "public" },
    });
    const path = new URL(status.uri).pathname;
    // The author blocks evil's domain.
    await json("/api/v1/domain_blocks", {
      instance: A,
      method: "POST",
      token: s.user.token,
      body: { domain: evil.host },
    });
    // evil's own actor: refused (403), its domain is blocked.
    const evilActor = evil.actor();
    const evilKeys = await evil.keys(evilActor);
    expect(
      (await signedGet(`${A.origin}${path}`, evilKeys.rsa.privateKey, new URL(`${evilActor}#main-key`))).status,
    ).toBe(403);
    // A key on evil's host whose document claims the (unblocked) peer actor as owner: not the peer's (401).
    const rsa = await rsaKeyPair();
    const keyId = new URL(`${evil.origin}/keys/claim${n++}`);
    evil.objects.set(
      keyId.href,
      await new CryptographicKey({ id: keyId, owner: new URL(s.actor), publicKey: rsa.publicKey }).toJsonLd(),
    );
    expect((await signedGet(`${A.origin}${path}`, rsa.privateKey, keyId)).status).toBe(401);
    // A document at evil's key URL that is an actor claiming the peer actor's id and listing evil's key (Fedify's
    // key-owner claim took that for the peer's actor): not the peer's either.
    const keyId2 = new URL(`${evil.origin}/keys/actor${n++}`);
    evil.objects.set(
      keyId2.href,
      await new Person({
        id: new URL(s.actor),
        inbox: new URL(`${s.actor}/inbox`),
        publicKey: new CryptographicKey({ id: keyId2, owner: new URL(s.actor), publicKey: rsa.publicKey }),
      }).toJsonLd(),
    );
    expect((await signedGet(`${A.origin}${path}`, rsa.privateKey, keyId2)).status).toBe(401);
    // The peer's actor with its own listed key: served.
    const peerKeys = await s.peer.keys(s.actor);
    const ok = await signedGet(`${A.origin}${path}`, peerKeys.rsa.privateKey, new URL(`${s.actor}#main-key`));
    expect(ok.status).toBe(200);
    expect((await ok.json<{ id: string }>()).id).toBe(status.uri);
    // Unsigned: 401.
    expect((await call(path, { instance: AS, headers: { Accept: ap } })).status).toBe(401);
  });
});

describe("remote JSON-LD contexts", () => {
  it("Pleroma's litepub context is fetched once for many deliveries and kept in memory, not in D1", async () => {
    const s = await setup();
    await followPeer(s);
    const contextUrl = `${s.peer.origin}/schemas/litepub-0.1.jsonld`;
    let served = 0;
    s.peer.objects.set(contextUrl, () => {
      served++;
      return new Response(JSON.stringify(litepubContext), { headers: { "Content-Type": "application/json" } });
    });
    for (let i = 0; i < 3; i++) {
      const create = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}c${i}` });
      create["@context"] = ["https://www.w3.org/ns/activitystreams", contextUrl];
      await expectAccepted(await s.peer.send(s.actor, create));
      expect(await q("SELECT id FROM statuses WHERE uri = ?", create.object.id), `delivery ${i}`).toHaveLength(1);
    }
    expect(served).toBe(1);
    // Kept by the isolate (an unsigned POST names whatever contexts it likes: none of it is written to D1).
    expect(
      await q("SELECT key FROM fedify_kv WHERE key = ?", JSON.stringify(["_fedify", "context", contextUrl])),
    ).toEqual([]);
  });
});

describe("a key rotated under the same key id", () => {
  it("verifies at once: the key is fetched again after a failed verification; a forged signature is still refused", async () => {
    const s = await setup();
    await followPeer(s);
    const post = async (i: string) => {
      const create = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}k${i}` });
      const res = await s.peer.send(s.actor, create);
      return { res, uri: create.object.id as string };
    };
    const first = await post("1");
    await expectAccepted(first.res);
    await s.peer.rotate(s.actor);
    const second = await post("2");
    expect(second.res.status, await second.res.clone().text()).toBe(202);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", second.uri)).toHaveLength(1);
    // Signed by a key the actor does not publish, under its key id: refused, nothing stored.
    const stranger = await rsaKeyPair();
    const create = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}k3` });
    const req = new Request(`${A.origin}/inbox`, {
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body: JSON.stringify(create),
    });
    const forged = await signRequest(req, stranger.privateKey, new URL(`${s.actor}#main-key`));
    expect((await instanceFetch(A, forged)).status).toBe(401);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", create.object.id)).toEqual([]);
  });
});
