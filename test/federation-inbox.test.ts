/**
 * Inboxes: Fedify verifies signatures; a verified activity of a type Starling has no use for is acknowledged
 * (202) and dropped. (What handled types do: test/federation-inbound.test.ts.)
 */
import { env } from "cloudflare:test";
import { exportSpki, signRequest } from "@fedify/fedify";
import { afterEach, describe, expect, it } from "vitest";
import { BASE, call, registerUser } from "./helpers";
import { rsaKeyPair } from "./peer";

const AP = "application/activity+json";
const refuse = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = refuse;
});

/** A remote actor served by a mocked `fetch`, with its own RSA key. */
async function remoteActor() {
  const id = `https://remote.example/users/eve${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const keys = await rsaKeyPair();
  const doc = {
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
    id,
    type: "Person",
    preferredUsername: "eve",
    inbox: `${id}/inbox`,
    publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem: await exportSpki(keys.publicKey) },
  };
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new Request(input, init).url.replace(/#.*$/, "");
    // Fedify's SSRF guard resolves the host (workerd's node:dns asks DNS over HTTPS): a public address.
    if (url.startsWith("https://cloudflare-dns.com/dns-query?name=remote.example")) {
      const a = url.endsWith("type=A");
      const answer = a ? [{ name: "remote.example", type: 1, TTL: 300, data: "93.184.215.14" }] : [];
      const body = { Status: 0, Question: [{ name: "remote.example", type: a ? 1 : 28 }], Answer: answer };
      return new Response(JSON.stringify(body), { headers: { "Content-Type": "application/dns-json" } });
    }
    if (url === id) return new Response(JSON.stringify(doc), { headers: { "Content-Type": AP } });
    return refuse(input, init);
  }) as typeof fetch;
  return { id, keys };
}

async function rowCounts(accountId: string) {
  const q = (sql: string) => env.DB.prepare(sql).bind(accountId).first<{ n: number }>();
  return {
    requests: (await q("SELECT count(*) AS n FROM follow_requests WHERE target_account_id = ?"))!.n,
    follows: (await q("SELECT count(*) AS n FROM follows WHERE target_account_id = ?"))!.n,
    notifications: (await q("SELECT count(*) AS n FROM notifications WHERE account_id = ?"))!.n,
  };
}

function follow(actor: string, target: string) {
  return JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${actor}/follows/${crypto.randomUUID()}`,
    type: "Follow",
    actor,
    object: target,
  });
}

/** A Like: part 2 of federation (issue 18), not handled yet. */
/** An activity type the inbox does not process (Likes are handled: test/federation-interactions.test.ts). */
function listen(actor: string, object: string) {
  return JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${actor}/listens/${crypto.randomUUID()}`,
    type: "Listen",
    actor,
    object,
  });
}

describe("inbox signatures", () => {
  it("acknowledges (202) a correctly signed activity it does not process, and stores nothing", async () => {
    const u = await registerUser();
    const eve = await remoteActor();
    for (const path of [`/users/${u.username}/inbox`, "/inbox"]) {
      const unsigned = new Request(`${BASE}${path}`, {
        method: "POST",
        headers: { "Content-Type": AP, Accept: AP },
        body: listen(eve.id, `${BASE}/objects/${u.id}`),
      });
      const signed = await signRequest(unsigned, eve.keys.privateKey, new URL(`${eve.id}#main-key`));
      const res = await call(signed.url, {
        method: "POST",
        headers: Object.fromEntries(signed.headers),
        body: await signed.text(),
      });
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBe(202);
    }
    expect(await rowCounts(u.id)).toEqual({ requests: 0, follows: 0, notifications: 0 });
  });

  it("handles a correctly signed Follow (202): the follow is stored", async () => {
    const u = await registerUser();
    const eve = await remoteActor();
    const unsigned = new Request(`${BASE}/inbox`, {
      method: "POST",
      headers: { "Content-Type": AP },
      body: follow(eve.id, `${BASE}/users/${u.username}`),
    });
    const signed = await signRequest(unsigned, eve.keys.privateKey, new URL(`${eve.id}#main-key`));
    const res = await call(signed.url, {
      method: "POST",
      headers: Object.fromEntries(signed.headers),
      body: await signed.text(),
    });
    expect(res.status, await res.text()).toBe(202);
    expect(await rowCounts(u.id)).toEqual({ requests: 0, follows: 1, notifications: 1 });
  });

  it("refuses a signature made with another key than the actor's (401)", async () => {
    const u = await registerUser();
    const eve = await remoteActor();
    const mallory = await rsaKeyPair();
    const unsigned = new Request(`${BASE}/users/${u.username}/inbox`, {
      method: "POST",
      headers: { "Content-Type": AP },
      body: follow(eve.id, `${BASE}/users/${u.username}`),
    });
    const forged = await signRequest(unsigned, mallory.privateKey, new URL(`${eve.id}#main-key`));
    const res = await call(forged.url, {
      method: "POST",
      headers: Object.fromEntries(forged.headers),
      body: await forged.text(),
    });
    expect(res.status).toBe(401);
    expect(await rowCounts(u.id)).toEqual({ requests: 0, follows: 0, notifications: 0 });
  });
});
