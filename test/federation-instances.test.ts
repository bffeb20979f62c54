/** The two-instance harness (test/instances.ts): A finds B's user and fetches B's actor, signed, through routed fetch. */
import { env } from "cloudflare:test";
import { verifyRequest } from "@fedify/fedify";
import { CryptographicKey, Person } from "@fedify/vocab";
import { afterEach, describe, expect, it } from "vitest";
import { federationContext } from "../src/federation";
import { call, json, registerUser } from "./helpers";
import { A, B, routeFetch, type Routed } from "./instances";

let routed: Routed | undefined;
afterEach(() => {
  routed?.restore();
  routed = undefined;
});

describe("two instances", () => {
  it("keep their data apart", async () => {
    const bob = await registerUser({ instance: B });
    const own = await json(`/api/v1/accounts/lookup?acct=${bob.username}`, { instance: B });
    expect(own.id).toBe(bob.id);
    expect((await call(`/api/v1/accounts/lookup?acct=${bob.username}`, { instance: A })).status).toBe(404);
    expect((await call(`/api/v1/accounts/lookup?acct=${bob.username}`)).status).toBe(404);
    const inB = await env.DB_B.prepare("SELECT count(*) AS n FROM accounts WHERE id = ?")
      .bind(bob.id)
      .first<{ n: number }>();
    const inA = await env.DB.prepare("SELECT count(*) AS n FROM accounts WHERE id = ?")
      .bind(bob.id)
      .first<{ n: number }>();
    expect([inB?.n, inA?.n]).toEqual([1, 0]);
  });

  it("A resolves acct:bob@b.example by WebFinger to B's actor, with its key, and A's signed GET reaches B", async () => {
    const bob = await registerUser({ instance: B });
    routed = routeFetch();
    const a = await federationContext(A.bindings, A.origin);

    const actor = await a.lookupObject(`acct:${bob.username}@b.example`);
    expect(actor).toBeInstanceOf(Person);
    const actorUrl = `https://b.example/users/${bob.username}`;
    expect(actor!.id?.href).toBe(actorUrl);
    expect((actor as Person).inboxId?.href).toBe(`${actorUrl}/inbox`);
    // The key B publishes for Bob, owned by Bob's actor: what A will verify Bob's signatures with.
    const key = await (actor as Person).getPublicKey({ documentLoader: a.documentLoader });
    expect(key).toBeInstanceOf(CryptographicKey);
    expect(key!.ownerId?.href).toBe(actorUrl);
    expect(key!.publicKey?.algorithm.name).toBe("RSASSA-PKCS1-v1_5");
    // It really went over the routed fetch: WebFinger on B, then the actor on B.
    const urls = routed.requests.map((r) => r.url);
    expect(urls[0]).toBe(`https://b.example/.well-known/webfinger?resource=acct%3A${bob.username}%40b.example`);
    expect(urls).toContain(actorUrl);

    // A signed GET from A's instance actor to Bob's actor URL.
    routed.requests.length = 0;
    const signed = await a.getDocumentLoader({ identifier: "internal.fetch" });
    const doc = await signed(actorUrl);
    expect((doc.document as { id: string }).id).toBe(actorUrl);
    const get = routed.requests.find((r) => r.url === actorUrl)!;
    expect(get.headers.get("signature")).toMatch(/keyId="https:\/\/a\.example\/users\/internal\.fetch#main-key"/);
    // B can verify it: B fetches A's instance-actor key from A, over the routed fetch.
    const b = await federationContext(B.bindings, B.origin);
    const verified = await verifyRequest(get, { documentLoader: b.documentLoader, contextLoader: b.contextLoader });
    expect(verified?.ownerId?.href).toBe("https://a.example/users/internal.fetch");
    expect(routed.requests.some((r) => r.url.startsWith("https://a.example/users/internal.fetch"))).toBe(true);
  });

  it("without the development switch the guard refuses them (the names resolve nowhere)", async () => {
    const bob = await registerUser({ instance: B });
    routed = routeFetch();
    const strict = await federationContext({ ...A.bindings, ALLOW_PRIVATE_ADDRESS: undefined }, A.origin);
    expect(await strict.lookupObject(`https://b.example/users/${bob.username}`)).toBeNull();
    expect(routed.requests).toEqual([]);
  });
});
