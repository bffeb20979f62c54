/**
 * Who may speak for an actor (issue 28; src/federation/door/authenticate.ts). An attacker with an https host of its
 * own (`evil.example`) publishes key documents that name the victim (the peer's actor) as their owner and tries
 * each shape that slipped through before: a decoy parameter in the Signature header, a Linked Data signature
 * alone, an Object Integrity Proof with any Signature header. Every forged Create, Delete, Update, Move, Block,
 * Flag and Like is refused and changes nothing. Real servers' shapes still work: Mastodon's and Pleroma's
 * `#main-key`, a key at its own URL on the actor's origin (GoToSocial), an instance actor's key, and a
 * forwarded activity (another server's HTTP signature, the author's LD signature); a forwarded copy without the
 * author's signature is taken only as the author's origin serves it.
 */
import { createProof, signJsonLd, signRequest } from "@fedify/fedify";
import { Activity, CryptographicKey, Multikey } from "@fedify/vocab";
import { afterEach, describe, expect, it } from "vitest";
import { json, valid } from "./helpers";
import { expectAccepted, fill, q, remoteId, reroute, setup, unroute, type Setup } from "./inbound";
import { A, instanceFetch } from "./instances";
import { createPeer, rsaKeyPair, type Peer } from "./peer";
import { StatusSchema } from "../src/schemas/status";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";
import mastodonDelete from "./fixtures/federation/mastodon-delete-tombstone.json";
import mastodonUpdate from "./fixtures/federation/mastodon-update-note.json";
import mastodonBlock from "./fixtures/federation/mastodon-block.json";
import mastodonFlag from "./fixtures/federation/mastodon-flag.json";
import mastodonLike from "./fixtures/federation/mastodon-like.json";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";

afterEach(unroute);

const AP = "application/activity+json";
const unsignedPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  new Request(`${A.origin}${path}`, {
    method: "POST",
    headers: { "Content-Type": AP, ...headers },
    body: JSON.stringify(body),
  });

/** evil.example, with an RSA key and an Ed25519 key whose documents claim the victim (`s.actor`) as owner. */
async function attacker(s: Setup) {
  const evil = createPeer("evil.example");
  const relay = createPeer("relay.example");
  reroute(() => s.peer.route([evil, relay]));
  const rsa = await rsaKeyPair();
  const ed = (await crypto.subtle.generateKey("Ed25519", true, ["sign", "verify"])) as CryptoKeyPair;
  // Key ids of this test's own (keys and documents are cached by id for a while, as on a real server).
  const rsaId = new URL(`https://evil.example/keys/rsa${s.vars.N}`);
  const edId = new URL(`https://evil.example/keys/ed${s.vars.N}`);
  evil.objects.set(
    rsaId.href,
    await new CryptographicKey({ id: rsaId, owner: new URL(s.actor), publicKey: rsa.publicKey }).toJsonLd(),
  );
  evil.objects.set(
    edId.href,
    await new Multikey({ id: edId, controller: new URL(s.actor), publicKey: ed.publicKey }).toJsonLd(),
  );
  // evil.example's own actor, whose HTTP signatures verify (as a forwarder's would).
  const evilActor = evil.actor();
  const post = (req: Request) => instanceFetch(A, req);
  return {
    evil,
    relay,
    /**
     * 1. A decoy parameter whose unclosed quoted value swallows the real `keyId="…"` for a regular expression over
     * the whole header (which then sees the victim's origin), while Fedify, splitting on commas, verifies evil's key.
     */
    async decoy(activity: unknown) {
      const signed = await signRequest(unsignedPost("/inbox", activity), rsa.privateKey, rsaId);
      const headers = new Headers(signed.headers);
      headers.set("Signature", `xkeyId="${s.peer.origin}/,${signed.headers.get("Signature")}`);
      return post(new Request(signed.url, { method: "POST", headers, body: JSON.stringify(activity) }));
    },
    /** 2. A Linked Data signature by evil's key, no HTTP signature. */
    async ldOnly(activity: unknown) {
      const body = await signJsonLd(bare(activity as Record<string, unknown>), rsa.privateKey, rsaId, {});
      return post(unsignedPost("/inbox", body));
    },
    /** 3. An Object Integrity Proof by evil's Ed25519 key, plus a Signature header (garbage, or evil's own). */
    async proofAnd(header: "garbage" | "evil's own", activity: unknown) {
      const parsed = await Activity.fromJsonLd(activity);
      const proof = await createProof(parsed, ed.privateKey, edId);
      const body = await parsed.clone({ proofs: [proof] }).toJsonLd();
      if (header === "evil's own") return evil.send(s.actor, body, { signAs: evilActor });
      const sig = `keyId="${s.actor}#main-key",algorithm="rsa-sha256",headers="(request-target) host date",signature="AAAA"`;
      return post(unsignedPost("/inbox", body, { Signature: sig, Date: new Date().toUTCString() }));
    },
  };
}

/** A fixture as a server sends it (without the `_source` note, which no JSON-LD context defines: signing refuses it). */
function bare<T extends Record<string, unknown>>(x: T): T {
  const { _source: _, ...rest } = x;
  return rest as T;
}

type Forge = Awaited<ReturnType<typeof attacker>>;
const NOT_THE_ACTORS = { error: "The signing key does not belong to the activity's actor" };
/**
 * Every shape; each must be refused (401), and for the reason intended: evil's signatures verify (so the test
 * exercises who owns the key, not a broken signature), except the garbage header's.
 */
async function expectAllRefused(f: Forge, activity: (shape: string) => unknown) {
  for (const [shape, send, why] of [
    ["decoy", (a: unknown) => f.decoy(a), NOT_THE_ACTORS],
    ["ld only", (a: unknown) => f.ldOnly(a), NOT_THE_ACTORS],
    [
      "proof + garbage header",
      (a: unknown) => f.proofAnd("garbage", a),
      { error: "The HTTP signature does not verify" },
    ],
    ["proof + evil's own header", (a: unknown) => f.proofAnd("evil's own", a), NOT_THE_ACTORS],
  ] as const) {
    const res = await send(activity(shape));
    const text = await res.text();
    expect(res.status, `${shape}: ${text}`).toBe(401);
    expect(JSON.parse(text), shape).toEqual(why);
  }
}

const n = (s: Setup, shape: string) => `${s.vars.N}${shape.replace(/\W/g, "")}`;

describe("forged activities in another server's actor's name", () => {
  it("a forged Create is refused in every shape and nothing is stored", async () => {
    const s = await setup();
    const f = await attacker(s);
    const ids: string[] = [];
    await expectAllRefused(f, (shape) => {
      const c = fill(mastodonCreate, { ...s.vars, N: n(s, shape) });
      ids.push(c.object.id);
      return c;
    });
    for (const id of ids) expect(await q("SELECT id FROM statuses WHERE uri = ?", id)).toEqual([]);
    expect(await q("SELECT id FROM accounts WHERE uri = ?", s.actor)).toEqual([]);
  });

  it("a forged Delete, Update, Block, Flag, Like and Move change nothing", async () => {
    const s = await setup();
    // The victim really posted (signed by its own key, through its own server).
    const create = fill(mastodonCreate, s.vars);
    s.peer.objects.set(create.object.id, create.object);
    await expectAccepted(await s.peer.send(s.actor, create));
    const [stored] = await q<{ id: string; content: string }>(
      "SELECT id, content FROM statuses WHERE uri = ?",
      create.object.id,
    );
    expect(stored).toBeDefined();
    const local = await json("/api/v1/statuses", {
      instance: A,
      token: s.user.token,
      body: { status: "a local post", visibility: "public" },
    });
    const localUri = `${A.origin}/objects/${local.id}`;
    const f = await attacker(s);

    await expectAllRefused(f, (shape) => fill(mastodonDelete, { ...s.vars, N: n(s, shape), OBJECT: create.object.id }));
    await expectAllRefused(f, (shape) =>
      fill(mastodonUpdate, {
        ...s.vars,
        N: s.vars.N,
        EDIT: n(s, shape),
        UPDATED: new Date().toISOString(),
        CONTENT: "forged words",
      }),
    );
    expect(await q("SELECT content FROM statuses WHERE id = ?", stored!.id)).toEqual([{ content: stored!.content }]);
    await expectAllRefused(f, (shape) => fill(mastodonBlock, { ...s.vars, N: n(s, shape) }));
    await expectAllRefused(f, (shape) => fill(mastodonFlag, { ...s.vars, N: n(s, shape), STATUS: localUri }));
    await expectAllRefused(f, (shape) => fill(mastodonLike, { ...s.vars, N: n(s, shape), OBJECT: localUri }));
    // A Move to evil's actor, which lists the victim among its aliases.
    const target = f.evil.actor();
    await expectAllRefused(f, (shape) => ({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${s.actor}#moves/${n(s, shape)}`,
      type: "Move",
      actor: s.actor,
      object: s.actor,
      target,
    }));

    const victim = (await remoteId(s.actor))!;
    expect(await q("SELECT id FROM statuses WHERE id = ?", stored!.id)).toHaveLength(1);
    expect(await q("SELECT id FROM blocks WHERE account_id = ?", victim)).toEqual([]);
    expect(await q("SELECT id FROM reports WHERE target_account_id = ?", s.user.id)).toEqual([]);
    expect(await q("SELECT id FROM favourites WHERE account_id = ?", victim)).toEqual([]);
    expect(await q("SELECT moved_to_account_id AS m FROM accounts WHERE id = ?", victim)).toEqual([{ m: null }]);
    const status = valid(
      StatusSchema,
      await json(`/api/v1/statuses/${stored!.id}`, { instance: A, token: s.user.token }),
    );
    expect(status.content).not.toContain("forged");
  });
});

describe("an actor named twice", () => {
  it("a body naming the victim as a second actor is never taken as the victim's, even signed by the first", async () => {
    const s = await setup();
    const f = await attacker(s);
    const evilActor = f.evil.actor();
    // Two actors in `actor`: evil.example's own actor signs (a valid signature, its own key).
    const both = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}a` });
    const res = await f.evil.send(evilActor, { ...both, actor: [evilActor, s.actor] });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "The activity has no actor" });
    // The victim under another spelling JSON-LD allows: Fedify reads the one `actor`, evil's; the note attributed
    // to the victim is then not trusted (fetched from the victim's origin, which does not serve it): nothing stored.
    const aliased = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}b` });
    const body = {
      ...aliased,
      "@context": [...aliased["@context"], { alsoActor: "https://www.w3.org/ns/activitystreams#actor" }],
      actor: evilActor,
      alsoActor: s.actor,
    };
    expect([202, 401]).toContain((await f.evil.send(evilActor, body)).status);
    for (const c of [both, aliased]) expect(await q("SELECT id FROM statuses WHERE uri = ?", c.object.id)).toEqual([]);
    expect(await q("SELECT id FROM accounts WHERE uri = ?", s.actor)).toEqual([]);
  });
});

describe("shapes found in review (each was accepted before its fix)", () => {
  it("an inbox reached by another method than POST is not an inbox: nothing unsigned gets through", async () => {
    const s = await setup();
    const follow = bare(fill(mastodonFollow, s.vars));
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      for (const path of ["/inbox", "/inbox/", `/users/${s.user.username}/inbox`]) {
        const res = await instanceFetch(
          A,
          new Request(`${A.origin}${path}`, {
            method,
            headers: { "Content-Type": AP, Accept: AP },
            body: JSON.stringify(follow),
          }),
        );
        expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        await res.body?.cancel();
      }
    }
    expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id)).toEqual([]);
  });

  it("a key URL serving an actor document with the victim's key id is not the victim's key", async () => {
    const s = await setup();
    const f = await attacker(s);
    const victimDoc = await (
      await s.peer.handle(new Request(s.actor, { headers: { Accept: AP } }))
    ).json<{ publicKey: { id: string } }>();
    const rsa = await rsaKeyPair();
    const pem = (await new CryptographicKey({
      id: new URL(victimDoc.publicKey.id),
      owner: new URL(s.actor),
      publicKey: rsa.publicKey,
    }).toJsonLd()) as { publicKeyPem: string };
    // At a key id without a fragment, an actor document with one key: Fedify answers that key, whatever its id.
    const keyUrl = `https://evil.example/k${s.vars.N}`;
    f.evil.objects.set(keyUrl, {
      "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
      id: s.actor,
      type: "Person",
      inbox: `${s.actor}/inbox`,
      publicKey: { id: victimDoc.publicKey.id, owner: s.actor, publicKeyPem: pem.publicKeyPem },
    });
    const follow = bare(fill(mastodonFollow, s.vars));
    const res = await instanceFetch(
      A,
      await signRequest(unsignedPost("/inbox", follow), rsa.privateKey, new URL(keyUrl)),
    );
    expect(res.status).toBe(401);
    expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id)).toEqual([]);
  });

  it("the actor Fedify reads must be the one authenticated: a context term for as:actor that sorts first is refused", async () => {
    const s = await setup();
    const f = await attacker(s);
    const evilActor = f.evil.actor();
    const follow = bare(fill(mastodonFollow, s.vars));
    const body = {
      ...follow,
      "@context": [
        "https://www.w3.org/ns/activitystreams",
        { a: { "@id": "https://www.w3.org/ns/activitystreams#actor", "@type": "@id" } },
      ],
      a: s.actor,
      actor: evilActor,
    };
    const res = await f.evil.send(evilActor, body);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "The activity's actor is not the one its body names" });
    expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id)).toEqual([]);
  });

  it("a relayed copy cannot turn into another type through its context: an 'Update' that means Delete deactivates nobody", async () => {
    const s = await setup();
    const f = await attacker(s);
    await expectAccepted(await s.peer.send(s.actor, bare(fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}f` }))));
    const body = {
      "@context": ["https://www.w3.org/ns/activitystreams", { Update: "https://www.w3.org/ns/activitystreams#Delete" }],
      id: `${s.actor}#updates/${s.vars.N}`,
      type: "Update",
      actor: s.actor,
      object: s.actor,
    };
    await f.relay.send(s.actor, body, { signAs: f.relay.actor() });
    expect(await q("SELECT deactivated FROM accounts WHERE uri = ?", s.actor)).toEqual([{ deactivated: 0 }]);
  });

  it("an activity id on another origin than its actor's is dropped unread: it cannot take the author's next id", async () => {
    const s = await setup();
    const f = await attacker(s);
    const evilActor = f.evil.actor();
    // evil.example's own actor, signing validly, names its Follow with the id the peer's actor will use next.
    const real = bare(fill(mastodonFollow, s.vars));
    const res = await f.evil.send(evilActor, { ...real, actor: evilActor });
    expect(res.status).toBe(202);
    expect(await q("SELECT id FROM follows WHERE uri = ?", real.id)).toEqual([]);
    // The author's own activity with that id is then handled, not taken for a repeat.
    await expectAccepted(await s.peer.send(s.actor, real));
    expect(await q("SELECT target_account_id AS target FROM follows WHERE uri = ?", real.id)).toEqual([
      { target: s.user.id },
    ]);
  });

  it("a remote JSON-LD context is read once per delivery: one served differently later cannot change what was checked", async () => {
    const s = await setup();
    const f = await attacker(s);
    const ctxUrl = `https://evil.example/ctx${s.vars.N}`;
    // The author's own signed Follow (LD signature), as anyone who received it holds it.
    const follow = bare(fill(mastodonFollow, s.vars));
    const { rsa } = await s.peer.keys(s.actor);
    const signed = (await signJsonLd(follow, rsa.privateKey, new URL(`${s.actor}#main-key`), {})) as Record<
      string,
      unknown
    >;
    // Replayed with a context of evil's added: empty when first read (the signature still checks out), then
    // turning the Follow into a Block.
    let served = 0;
    const previous = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (new Request(input, init).url !== ctxUrl) return previous(input, init);
      const context = served++ === 0 ? {} : { Follow: "https://www.w3.org/ns/activitystreams#Block" };
      return new Response(JSON.stringify({ "@context": context }), {
        headers: { "Content-Type": "application/ld+json" },
      });
    }) as typeof fetch;
    try {
      const res = await f.relay.send(
        s.actor,
        { ...signed, "@context": [signed["@context"], ctxUrl].flat() },
        { signAs: f.relay.actor() },
      );
      expect(res.status).toBe(202);
      expect(served).toBe(1);
      // What the author signed happened, and nothing else: a follow, no block.
      expect(await q("SELECT target_account_id AS target FROM follows WHERE uri = ?", follow.id)).toEqual([
        { target: s.user.id },
      ]);
      const victim = (await remoteId(s.actor))!;
      expect(await q("SELECT id FROM blocks WHERE account_id = ?", victim)).toEqual([]);
    } finally {
      globalThis.fetch = previous;
    }
  });
});

describe("shapes found in the second review", () => {
  const AS = "https://www.w3.org/ns/activitystreams#";

  it("a context a term scopes (remote, served differently later) cannot name another actor: Fedify reads it as pinned", async () => {
    const s = await setup();
    await expectAccepted(await s.peer.send(s.actor, bare(fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}f` }))));
    const f = await attacker(s);
    const evilActor = f.evil.actor();
    const ctxUrl = `https://evil.example/ctx-scoped${s.vars.N}`;
    let served = 0;
    const previous = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (new Request(input, init).url !== ctxUrl) return previous(input, init);
      const context =
        served++ === 0 ? {} : { actor: "https://evil.example/ns#x", zzz: { "@id": `${AS}actor`, "@type": "@id" } };
      return new Response(JSON.stringify({ "@context": context }), {
        headers: { "Content-Type": "application/ld+json" },
      });
    }) as typeof fetch;
    try {
      const body = {
        "@context": ["https://www.w3.org/ns/activitystreams", { Delete: { "@id": `${AS}Delete`, "@context": ctxUrl } }],
        id: `${evilActor}#delete-${s.vars.N}`,
        type: "Delete",
        actor: evilActor,
        zzz: s.actor,
        object: s.actor,
      };
      // Taken as what it said when checked (evil deleting something of the victim's: nothing happens), because
      // Fedify never loads the context: only the check did, once, and wrote it into the body.
      expect((await f.evil.send(evilActor, body)).status).toBe(202);
      expect(served).toBe(1);
    } finally {
      globalThis.fetch = previous;
    }
    expect(await q("SELECT deactivated FROM accounts WHERE uri = ?", s.actor)).toEqual([{ deactivated: 0 }]);
  });

  it("an unsigned body listing many proofs by URL fetches none of them, and is refused", async () => {
    const s = await setup();
    const seen: string[] = [];
    const previous = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const r = new Request(input, init);
      if (new URL(r.url).host === "target.example") seen.push(r.url);
      return previous(input, init);
    }) as typeof fetch;
    try {
      const body = {
        "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/data-integrity/v1"],
        id: `${s.actor}#x${s.vars.N}`,
        type: "Follow",
        actor: s.actor,
        object: s.target,
        proof: Array.from({ length: 40 }, (_, i) => `https://target.example/p${s.vars.N}/${i}`),
      };
      const res = await instanceFetch(A, unsignedPost("/inbox", body));
      expect(res.status).toBe(401);
      // And embedded ones: at most a couple are read, each fetching only its key.
      const embedded = {
        ...body,
        proof: Array.from({ length: 40 }, (_, i) => ({
          type: "DataIntegrityProof",
          cryptosuite: "eddsa-jcs-2022",
          proofPurpose: "assertionMethod",
          verificationMethod: `https://target.example/k${i}`,
          proofValue: "zAAAA",
          created: "2024-01-01T00:00:00Z",
        })),
      };
      expect((await instanceFetch(A, unsignedPost("/inbox", embedded))).status).toBe(401);
    } finally {
      globalThis.fetch = previous;
    }
    expect(seen.filter((u) => u.includes("/p"))).toEqual([]);
    expect(seen.length).toBeLessThanOrEqual(2);
  });
});

describe("real servers' keys and forwarding still work", () => {
  /** A hand-made actor document on the peer's origin with the given key id and document for its key. */
  async function handMadeActor(
    peer: Peer,
    name: string,
    keyId: (actor: string) => string,
    opts: { type?: string; keyAtOwnUrl?: boolean } = {},
  ) {
    const actor = `${peer.origin}/${name}`;
    const rsa = await rsaKeyPair();
    const pem = await new CryptographicKey({
      id: new URL(keyId(actor)),
      owner: new URL(actor),
      publicKey: rsa.publicKey,
    }).toJsonLd();
    const doc = {
      "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
      id: actor,
      type: opts.type ?? "Person",
      preferredUsername: name.replace(/\W/g, ""),
      inbox: `${actor}/inbox`,
      publicKey: { id: keyId(actor), owner: actor, publicKeyPem: (pem as { publicKeyPem: string }).publicKeyPem },
    };
    peer.objects.set(actor, doc);
    // GoToSocial serves a stub of the actor, with its key, at the key's own URL.
    if (opts.keyAtOwnUrl) peer.objects.set(keyId(actor), doc);
    return { actor, rsa };
  }

  it("accepts Pleroma's #main-key, a key at its own URL on the actor's origin, and an instance actor's key", async () => {
    const s = await setup();
    const shapes = [
      ["Pleroma", await handMadeActor(s.peer, `users/pl${s.vars.N}`, (a) => `${a}#main-key`)],
      [
        "GoToSocial",
        await handMadeActor(s.peer, `users/gts${s.vars.N}`, (a) => `${a}/main-key`, { keyAtOwnUrl: true }),
      ],
      [
        "instance actor",
        await handMadeActor(s.peer, `actor${s.vars.N}`, (a) => `${a}#main-key`, { type: "Application" }),
      ],
    ] as const;
    for (const [name, { actor, rsa }] of shapes) {
      const follow = fill(mastodonFollow, { ...s.vars, ACTOR: actor, N: `${s.vars.N}${name.replace(/\W/g, "")}` });
      const keyId = (s.peer.objects.get(actor) as { publicKey: { id: string } }).publicKey.id;
      const res = await instanceFetch(
        A,
        await signRequest(unsignedPost(`/users/${s.user.username}/inbox`, follow), rsa.privateKey, new URL(keyId)),
      );
      expect(res.status, `${name}: ${await res.clone().text()}`).toBe(202);
      expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id), name).toHaveLength(1);
    }
  });

  it("a key on the actor's origin that the actor does not list speaks for nobody", async () => {
    const s = await setup();
    const { rsa } = await handMadeActor(s.peer, `users/m${s.vars.N}`, (a) => `${a}#main-key`);
    // The peer's own actor, signed with a key at a URL of the same origin that its document does not name.
    const stray = `${s.peer.origin}/uploads/key${s.vars.N}`;
    s.peer.objects.set(
      stray,
      await new CryptographicKey({ id: new URL(stray), owner: new URL(s.actor), publicKey: rsa.publicKey }).toJsonLd(),
    );
    const follow = fill(mastodonFollow, s.vars);
    const res = await instanceFetch(
      A,
      await signRequest(unsignedPost("/inbox", follow), rsa.privateKey, new URL(stray)),
    );
    expect(res.status).toBe(401);
    expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id)).toEqual([]);
  });

  it("a forwarded reply: another server's HTTP signature, the author's LD signature: stored as the author's", async () => {
    const s = await setup();
    const f = await attacker(s);
    const create = fill(mastodonCreate, s.vars);
    const { rsa } = await s.peer.keys(s.actor);
    const body = await signJsonLd(bare(create), rsa.privateKey, new URL(`${s.actor}#main-key`), {});
    // relay.example forwards it, signing the request as its own actor; the origin does not serve the note.
    const forwarder = f.relay.actor();
    await expectAccepted(await f.relay.send(s.actor, body, { signAs: forwarder }));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", create.object.id)).toHaveLength(1);
    // The same forwarded with the content changed: the author's signature no longer verifies, the origin does not
    // serve it: refused.
    const tampered = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}t` });
    const signed = await signJsonLd(bare(tampered), rsa.privateKey, new URL(`${s.actor}#main-key`), {});
    (signed as any).object.content = "<p>words the author never wrote</p>";
    const res = await f.relay.send(s.actor, signed, { signAs: forwarder });
    expect(res.status).toBe(401);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", tampered.object.id)).toEqual([]);
  });

  it("a forwarded copy without the author's signature is taken as the author's origin serves it", async () => {
    const s = await setup();
    const f = await attacker(s);
    const create = fill(mastodonCreate, s.vars);
    s.peer.objects.set(create.object.id, {
      "@context": create["@context"],
      ...create.object,
      content: "<p>what the author wrote</p>",
    });
    const copy = {
      ...create,
      object: { ...create.object, content: "<p>what the forwarder says the author wrote</p>" },
    };
    await expectAccepted(await f.relay.send(s.actor, copy, { signAs: f.relay.actor() }));
    const [row] = await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", create.object.id);
    const status = valid(StatusSchema, await json(`/api/v1/statuses/${row!.id}`, { instance: A, token: s.user.token }));
    expect(status.content).toContain("what the author wrote");
    expect(status.content).not.toContain("forwarder");
    // A relayed Follow (or anything else that cannot be fetched again) is refused.
    const follow = fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}r` });
    expect((await f.relay.send(s.actor, follow, { signAs: f.relay.actor() })).status).toBe(401);
    expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id)).toEqual([]);
  });
});
