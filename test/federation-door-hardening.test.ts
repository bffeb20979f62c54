/**
 * The inbox door against a stranger's cheap requests, from the review of src/federation/ (findings 1, 6, 7):
 * remote JSON-LD contexts (fetched only once the request is signed, 64 KB at most, kept in memory, never in D1);
 * the double knock (a permanent 400 stays a permanent 400); what an inbox POST's HTTP signature must cover.
 */
import { signRequest } from "@fedify/fedify";
import { afterEach, describe, expect, it } from "vitest";
import { drainFederation } from "../src/federation/delivery/wake";
import { AccountSchema } from "../src/schemas/account";
import { json, registerUser, valid } from "./helpers";
import { drainDeliveriesByHand, expectAccepted, fill, q, setup, unroute, type Setup } from "./inbound";
import { A, instanceFetch } from "./instances";
import { createPeer } from "./peer";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";

afterEach(unroute);
drainDeliveriesByHand();

const AP = "application/activity+json";
const unsignedPost = (body: unknown, headers: Record<string, string> = {}) =>
  new Request(`${A.origin}/inbox`, {
    method: "POST",
    headers: { "Content-Type": AP, ...headers },
    body: JSON.stringify(body),
  });

/** A JSON-LD context of about `bytes` bytes (one long term IRI): valid, whatever its size. */
const bigContext = (bytes: number) => ({
  "@context": { pad: `http://pad.example/${"a".repeat(bytes)}`, starling: "http://starling.example/ns#" },
});

/** Serves `doc` at `url` on the peer, counting the requests for it. */
function serve(s: Setup, url: string, doc: unknown, type = "application/ld+json") {
  const served = { count: 0 };
  s.peer.objects.set(url, () => {
    served.count++;
    return new Response(JSON.stringify(doc), { headers: { "Content-Type": type } });
  });
  return served;
}

const kvRows = async () =>
  (await q<{ key: string; size: number }>("SELECT key, length(value) AS size FROM fedify_kv ORDER BY key")).map(
    (r) => `${r.key} ${r.size}`,
  );
const contextRows = async () =>
  q<{ key: string }>("SELECT key FROM fedify_kv WHERE key LIKE ?", `["_fedify","context",%`);

describe("remote JSON-LD contexts (finding 1)", () => {
  it("an unsigned POST naming four large remote contexts: 401, none fetched, nothing written to D1", async () => {
    const s = await setup();
    const urls = [1, 2, 3, 4].map((i) => `${s.peer.origin}/ctx${s.vars.N}?${i}`);
    const served = urls.map((u) => serve(s, u, bigContext(1_000_000)));
    const before = await kvRows();
    const follow = fill(mastodonFollow, s.vars);
    follow["@context"] = ["https://www.w3.org/ns/activitystreams", ...urls];
    const res = await instanceFetch(A, unsignedPost(follow));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "The request is not signed" });
    expect(served.map((x) => x.count)).toEqual([0, 0, 0, 0]);
    expect(await kvRows()).toEqual(before);
  });

  it("a POST signed only in its body (or claiming to be) fetches none of its contexts", async () => {
    const s = await setup();
    const urls = [1, 2, 3, 4].map((i) => `${s.peer.origin}/ctx${s.vars.N}?${i}`);
    const served = urls.map((u) => serve(s, u, bigContext(60_000)));
    const follow = fill(mastodonFollow, s.vars);
    follow["@context"] = ["https://www.w3.org/ns/activitystreams", ...urls];
    follow.signature = {};
    const res = await instanceFetch(A, unsignedPost(follow));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: "A request without an HTTP signature may name only well-known JSON-LD contexts",
    });
    expect(served.map((x) => x.count)).toEqual([0, 0, 0, 0]);
  });

  it("a POST with a broken HTTP signature fetches none of its contexts", async () => {
    const s = await setup();
    const url = `${s.peer.origin}/ctx${s.vars.N}`;
    const served = serve(s, url, bigContext(100));
    const follow = fill(mastodonFollow, s.vars);
    follow["@context"] = ["https://www.w3.org/ns/activitystreams", url];
    const sig = `keyId="${s.actor}#main-key",algorithm="rsa-sha256",headers="date",signature="AAAA"`;
    const res = await instanceFetch(A, unsignedPost(follow, { Signature: sig, Date: new Date().toUTCString() }));
    expect(res.status).toBe(401);
    expect(served.count).toBe(0);
  });

  it("a signed POST naming a context over 64 KB: 400, and nothing of it stored", async () => {
    const s = await setup();
    const url = `${s.peer.origin}/ctx${s.vars.N}`;
    const served = serve(s, url, bigContext(1_000_000));
    const follow = fill(mastodonFollow, s.vars);
    follow["@context"] = ["https://www.w3.org/ns/activitystreams", url];
    const res = await s.peer.send(s.actor, follow);
    expect(res.status).toBe(400);
    expect((await res.json<{ error: string }>()).error).toMatch(/contexts could not be loaded/);
    expect(served.count).toBe(1);
    expect(await contextRows()).toEqual([]);
    // No row near the context's size (the actor's document and key are a few KB).
    expect((await kvRows()).every((r) => Number(r.split(" ").pop()) < 64_000)).toBe(true);
    expect(await q("SELECT id FROM follows WHERE uri = ?", follow.id)).toEqual([]);
  });

  it("a document that is no JSON-LD context is refused and not kept: asked again, fetched again", async () => {
    const s = await setup();
    const url = `${s.peer.origin}/notctx${s.vars.N}`;
    const served = serve(s, url, { hello: "world" });
    for (const i of [1, 2]) {
      const follow = fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}n${i}` });
      follow["@context"] = ["https://www.w3.org/ns/activitystreams", url];
      const res = await s.peer.send(s.actor, follow);
      expect(res.status).toBe(400);
    }
    expect(served.count).toBe(2);
    expect(await contextRows()).toEqual([]);
  });

  it("a small real context is fetched once, kept in memory (no D1 row), and the activity taken", async () => {
    const s = await setup();
    const url = `${s.peer.origin}/schemas/small${s.vars.N}.jsonld`;
    const served = serve(s, url, bigContext(1_000), "application/json");
    for (const i of [1, 2]) {
      const follow = fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}s${i}` });
      follow["@context"] = ["https://www.w3.org/ns/activitystreams", url];
      await expectAccepted(await s.peer.send(s.actor, follow));
    }
    expect(served.count).toBe(1);
    expect(await contextRows()).toEqual([]);
  });
});

describe("the double knock (finding 6)", () => {
  it("a 400 to draft-cavage and a 401 to RFC 9421: dropped as a 400, the actor's next delivery sent in the same run", async () => {
    const peer = createPeer(`knock${Date.now().toString(36)}.example`);
    const restore = peer.route();
    try {
      const user = await registerUser({ instance: A });
      const found = await json(`/api/v2/search?q=${encodeURIComponent(peer.actor())}&resolve=true&type=accounts`, {
        instance: A,
        token: user.token,
      });
      const account = valid(AccountSchema, found.accounts[0]);
      // A server speaking only draft-cavage that will never take the Follow (GoToSocial answers 400 to an
      // activity it cannot use, and 401 to a signature scheme it does not know), and takes the Undo.
      const posts: [string, string, number][] = [];
      const handle = peer.handle;
      peer.handle = async (req) => {
        if (req.method !== "POST") return handle(req);
        const type = ((await req.clone().json()) as { type: string }).type;
        const spec = req.headers.has("signature-input") ? "rfc9421" : "cavage";
        const status = spec === "rfc9421" ? 401 : type === "Follow" ? 400 : 202;
        posts.push([type, spec, status]);
        return status === 202 ? handle(req) : Response.json({ error: "no" }, { status });
      };
      const call = (path: string) => json(path, { method: "POST", instance: A, token: user.token });
      await call(`/api/v1/accounts/${account.id}/follow`);
      await call(`/api/v1/accounts/${account.id}/unfollow`);
      await drainFederation(A.bindings);
      expect(posts).toEqual([
        ["Follow", "cavage", 400],
        ["Follow", "rfc9421", 401],
        ["Undo", "cavage", 202],
      ]);
      expect(peer.delivered.map((d) => (d.body as { type: string }).type)).toEqual(["Undo"]);
      expect(await q("SELECT id FROM federation_deliveries WHERE host = ?", peer.host)).toEqual([]);
      // Nothing counted against the host: a 400 is an answer.
      const [host] = await q<{ failing_since: number | null; signature_spec: string | null }>(
        "SELECT failing_since, signature_spec FROM instances WHERE domain = ?",
        peer.host,
      );
      expect(host).toMatchObject({ failing_since: null, signature_spec: "draft-cavage-http-signatures-12" });
    } finally {
      restore();
    }
  });
});

describe("what an inbox POST's HTTP signature must cover (finding 7)", () => {
  /** A draft-cavage POST of `body` signed by hand over `names` (a correct `Digest` sent whether covered or not). */
  async function cavagePost(s: Setup, body: unknown, names: string[]) {
    const text = JSON.stringify(body);
    const digest = btoa(
      String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))),
    );
    const headers: Record<string, string> = {
      Host: new URL(A.origin).host,
      Date: new Date().toUTCString(),
      Digest: `SHA-256=${digest}`,
    };
    const line = (n: string) =>
      n === "(request-target)" ? "(request-target): post /inbox" : `${n}: ${new Headers(headers).get(n)}`;
    const { rsa } = await s.peer.keys(s.actor);
    const sig = new Uint8Array(
      await crypto.subtle.sign(
        "RSASSA-PKCS1-v1_5",
        rsa.privateKey,
        new TextEncoder().encode(names.map(line).join("\n")),
      ),
    );
    const signature = `keyId="${s.actor}#main-key",algorithm="rsa-sha256",headers="${names.join(" ")}",signature="${btoa(String.fromCharCode(...sig))}"`;
    return instanceFetch(A, unsignedPost(body, { ...headers, Signature: signature }));
  }

  const follows = (uri: string) => q("SELECT id FROM follows WHERE uri = ?", uri);

  it("draft-cavage (already Fedify's rule): refused without digest or date, taken with Mastodon's set", async () => {
    const s = await setup();
    const follow = (n: string) => fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}${n}` });
    const bare = follow("a");
    const res = await cavagePost(s, bare, ["(request-target)", "host", "date"]);
    expect(res.status).toBe(401);
    // Fedify's own rule for draft-cavage (verifyRequestDraft: `(request-target)`, `date`, and `digest` with a body).
    expect(await res.json()).toEqual({ error: "The HTTP signature does not verify" });
    expect(await follows(bare.id)).toEqual([]);
    const undated = follow("b");
    expect((await cavagePost(s, undated, ["(request-target)", "host", "digest"])).status).toBe(401);
    // Mastodon's own set.
    const full = follow("c");
    await expectAccepted(await cavagePost(s, full, ["(request-target)", "host", "date", "digest"]));
    expect(await follows(full.id)).toHaveLength(1);
  });

  it("RFC 9421: a signature covering only @authority is refused whatever the body; Fedify's usual one is taken", async () => {
    const s = await setup();
    const follow = fill(mastodonFollow, s.vars);
    const { rsa } = await s.peer.keys(s.actor);
    const signed = await signRequest(
      new Request(`${A.origin}/inbox`, { method: "POST", headers: { "Content-Type": AP } }),
      rsa.privateKey,
      new URL(`${s.actor}#main-key`),
      { spec: "rfc9421", body: null, rfc9421: { components: [{ value: "@authority", params: {} }] } },
    );
    const swapped = new Request(signed.url, { method: "POST", headers: signed.headers, body: JSON.stringify(follow) });
    const res = await instanceFetch(A, swapped);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "The HTTP signature must cover @method and @target-uri" });
    expect(await follows(follow.id)).toEqual([]);
    // The same covering the method and target but not the body.
    const noDigest = await signRequest(
      new Request(`${A.origin}/inbox`, { method: "POST", headers: { "Content-Type": AP } }),
      rsa.privateKey,
      new URL(`${s.actor}#main-key`),
      {
        spec: "rfc9421",
        body: null,
        rfc9421: {
          components: [
            { value: "@method", params: {} },
            { value: "@target-uri", params: {} },
          ],
        },
      },
    );
    const res2 = await instanceFetch(
      A,
      new Request(noDigest.url, { method: "POST", headers: noDigest.headers, body: JSON.stringify(follow) }),
    );
    expect(res2.status).toBe(401);
    expect(await res2.json()).toEqual({ error: "The HTTP signature must cover Content-Digest" });
    await expectAccepted(await s.peer.send(s.actor, follow, { spec: "rfc9421" }));
    expect(await follows(follow.id)).toHaveLength(1);
  });
});
