/**
 * The inbox door against a stranger's cheap requests, from the review of src/federation/ (findings 1, 6, 7):
 * remote JSON-LD contexts (fetched only once the request is signed, 64 KB at most, kept in memory, never in D1);
 * the double knock (a permanent 400 stays a permanent 400); what an inbox POST's HTTP signature must cover.
 */
import { afterEach, describe, expect, it } from "vitest";
import { expectAccepted, fill, q, setup, unroute, type Setup } from "./inbound";
import { A, instanceFetch } from "./instances";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";

afterEach(unroute);

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
