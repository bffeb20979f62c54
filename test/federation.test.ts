/** Federation foundation: Fedify mounted in workerd (discovery, actors, collections, inboxes), its D1 KvStore. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { D1KvStore } from "../src/federation/door/kv";
import { db } from "../src/db/client";
import { BASE, call, json, registerUser } from "./helpers";

const AP = "application/activity+json";
const LD = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"';

async function ap(path: string, accept = AP, status = 200) {
  const res = await call(path, { headers: { Accept: accept } });
  const text = await res.text();
  expect(res.status, `${path} -> ${text.slice(0, 300)}`).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/(activity|ld)\+json/);
  return JSON.parse(text);
}

/** A WebFinger answer: 200 with `application/jrd+json`. */
async function jrd(path: string, opts: Parameters<typeof call>[1] = {}) {
  const res = await call(path, opts);
  const text = await res.text();
  expect(res.status, `${path} -> ${text.slice(0, 300)}`).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/jrd\+json/);
  return JSON.parse(text);
}

async function kvCount() {
  return (await env.DB.prepare("SELECT count(*) AS n FROM fedify_kv").first<{ n: number }>())!.n;
}

describe("WebFinger and host-meta", () => {
  it("finds a local user by acct: and by actor URL", async () => {
    const u = await registerUser();
    const found = await jrd(`/.well-known/webfinger?resource=acct:${u.username}@localhost`);
    expect(found.subject).toBe(`acct:${u.username}@localhost`);
    const self = found.links.find((l: any) => l.rel === "self");
    expect(self).toMatchObject({ type: AP, href: `${BASE}/users/${u.username}` });
    // Nicknames are case-insensitive; the answer names the canonical actor.
    const upper = await jrd(`/.well-known/webfinger?resource=acct:${u.username.toUpperCase()}@localhost`);
    expect(upper.links.find((l: any) => l.rel === "self").href).toBe(`${BASE}/users/${u.username}`);
    const byUrl = await jrd(`/.well-known/webfinger?resource=${encodeURIComponent(`${BASE}/users/${u.username}`)}`);
    expect(byUrl.links.find((l: any) => l.rel === "self").href).toBe(`${BASE}/users/${u.username}`);
  });

  it("answers 404 for unknown, remote and malformed resources", async () => {
    for (const resource of [
      "acct:nobody_here_at_all@localhost",
      "acct:someone@remote.example",
      `${BASE}/users/nobody_here_at_all`,
    ]) {
      const res = await call(`/.well-known/webfinger?resource=${encodeURIComponent(resource)}`);
      expect(res.status, resource).toBe(404);
    }
    expect((await call("/.well-known/webfinger")).status).toBe(400);
  });

  it("serves host-meta as XRD and JSON with an lrdd template", async () => {
    const xml = await call("/.well-known/host-meta");
    expect(xml.status).toBe(200);
    expect(xml.headers.get("content-type")).toMatch(/^application\/xrd\+xml/);
    expect(await xml.text()).toContain(`<Link rel="lrdd" template="${BASE}/.well-known/webfinger?resource={uri}"/>`);
    const viaJson = await call("/.well-known/host-meta.json");
    expect(viaJson.headers.get("content-type")).toMatch(/^application\/jrd\+json/);
    expect(await viaJson.json()).toEqual({
      links: [{ rel: "lrdd", template: `${BASE}/.well-known/webfinger?resource={uri}` }],
    });
    const negotiated = await call("/.well-known/host-meta", { headers: { Accept: "application/json" } });
    expect(((await negotiated.json()) as any).links[0].rel).toBe("lrdd");
  });

  it("uses DOMAIN for ids whatever host was reached", async () => {
    const u = await registerUser();
    const res = await call(`https://other.example/.well-known/webfinger?resource=acct:${u.username}@social.example`, {
      vars: { DOMAIN: "social.example" },
    });
    expect(res.status).toBe(200);
    const answer: any = await res.json();
    expect(answer.links.find((l: any) => l.rel === "self").href).toBe(`https://social.example/users/${u.username}`);
  });

  it("refuses to federate without DOMAIN on a public host, and the client API keeps working", async () => {
    const u = await registerUser();
    for (const [path, init] of [
      [`/.well-known/webfinger?resource=acct:${u.username}@social.example`, {}],
      ["/.well-known/host-meta", {}],
      [`/users/${u.username}`, { headers: { Accept: AP } }],
      ["/inbox", { method: "POST", body: "{}", headers: { "Content-Type": AP } }],
    ] as const) {
      const res = await call(`https://social.example${path}`, { ...init, vars: { DOMAIN: "" } });
      expect(res.status, path).toBe(503);
      expect(((await res.json()) as any).error).toMatch(/DOMAIN/);
    }
    const instance = await call("https://social.example/api/v1/instance", { vars: { DOMAIN: "" } });
    expect(instance.status).toBe(200);
  });
});

describe("actors", () => {
  it("renders a local account as a Person with keys, stable across requests", async () => {
    const u = await registerUser();
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: u.token,
      form: true,
      body: {
        display_name: "Ada L",
        note: "Engines & maths",
        locked: "true",
        discoverable: "true",
        "fields_attributes[0][name]": "Home",
        "fields_attributes[0][value]": "https://ada.example",
      } as any,
    });
    const actor = await ap(`/users/${u.username}`);
    const id = `${BASE}/users/${u.username}`;
    expect(actor).toMatchObject({
      id,
      type: "Person",
      preferredUsername: u.username,
      name: "Ada L",
      url: id,
      inbox: `${id}/inbox`,
      followers: `${id}/followers`,
      following: `${id}/following`,
      manuallyApprovesFollowers: true,
      discoverable: true,
      endpoints: { sharedInbox: `${BASE}/inbox` },
    });
    expect(actor.summary).toContain("Engines &amp; maths");
    expect(actor.published).toMatch(/^\d{4}-\d\d-\d\dT/);
    const fields = [actor.attachment].flat();
    expect(fields).toEqual([expect.objectContaining({ type: "PropertyValue", name: "Home" })]);
    expect(fields[0].value).toContain("https://ada.example");
    expect(actor.publicKey).toMatchObject({ id: expect.stringContaining(id), owner: id });
    expect(actor.publicKey.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const multikeys = Array.isArray(actor.assertionMethod) ? actor.assertionMethod : [actor.assertionMethod];
    expect(multikeys.map((k: any) => k.publicKeyMultibase.slice(0, 1))).toEqual(["z", "z"]);
    expect(multikeys.some((k: any) => k.publicKeyMultibase.startsWith("z6Mk"))).toBe(true); // Ed25519
    // The same keys every time (made once, then stored), also through the ld+json form.
    const again = await ap(`/users/${u.username}`, LD);
    expect(again.publicKey.publicKeyPem).toBe(actor.publicKey.publicKeyPem);
    expect(again.assertionMethod).toEqual(actor.assertionMethod);
    // The key is the account's stored public key (the one signing will use).
    const row = await env.DB.prepare("SELECT public_key FROM accounts WHERE id = ?")
      .bind(u.id)
      .first<{ public_key: string }>();
    expect(row!.public_key.trim()).toBe(actor.publicKey.publicKeyPem.trim());
  });

  it("renders a bot as a Service with avatar and header as absolute URLs", async () => {
    const u = await registerUser();
    await env.DB.prepare(
      "UPDATE accounts SET actor_type = 'Service', avatar = 'avatars/a.png', header = 'https://cdn.example/h.png' WHERE id = ?",
    )
      .bind(u.id)
      .run();
    const actor = await ap(`/users/${u.username}`);
    expect(actor.type).toBe("Service");
    expect(actor.icon).toMatchObject({ type: "Image", url: `${BASE}/media/avatars/a.png` });
    expect(actor.image).toMatchObject({ type: "Image", url: "https://cdn.example/h.png" });
  });

  it("answers 410 for a deactivated account and 404 for an unknown one", async () => {
    const u = await registerUser();
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(u.id).run();
    const res = await call(`/users/${u.username}`, { headers: { Accept: AP } });
    expect(res.status).toBe(410);
    expect(((await res.json()) as any).type).toBe("Tombstone");
    const unknown = await call("/users/nobody_here_at_all", { headers: { Accept: AP } });
    expect(unknown.status).toBe(404);
    const wf = await call(`/.well-known/webfinger?resource=acct:${u.username}@localhost`);
    expect(wf.status).toBe(410);
  });

  it("lets a browser's request fall through to the web app", async () => {
    const u = await registerUser();
    // Fedify answers only ActivityPub clients; hono answers the rest (404 JSON today, HTML pages later).
    const res = await call(`/users/${u.username}`, { headers: { Accept: "text/html,application/xhtml+xml" } });
    expect(res.headers.get("content-type") ?? "").not.toMatch(/activity\+json|ld\+json/);
    expect(await res.text()).not.toContain("https://www.w3.org/ns/activitystreams");
    const followers = await call(`/users/${u.username}/followers`, { headers: { Accept: "text/html" } });
    expect(followers.headers.get("content-type") ?? "").not.toMatch(/activity\+json|ld\+json/);
  });

  it("has an instance actor (Application) with keys, found by WebFinger", async () => {
    const actor = await ap("/users/internal.fetch");
    expect(actor).toMatchObject({
      id: `${BASE}/users/internal.fetch`,
      type: "Application",
      preferredUsername: "internal.fetch",
    });
    expect(actor.publicKey.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect((await ap("/users/internal.fetch")).publicKey.publicKeyPem).toBe(actor.publicKey.publicKeyPem);
    const found = await jrd("/.well-known/webfinger?resource=acct:internal.fetch@localhost");
    expect(found.links.find((l: any) => l.rel === "self").href).toBe(actor.id);
  });
});

describe("followers and following collections", () => {
  it("lists the real followers and follows with counts, in pages", async () => {
    const owner = await registerUser();
    const fans = [await registerUser(), await registerUser()];
    for (const f of fans) await json(`/api/v1/accounts/${owner.id}/follow`, { method: "POST", token: f.token });
    await json(`/api/v1/accounts/${fans[0]!.id}/follow`, { method: "POST", token: owner.token });
    const coll = await ap(`/users/${owner.username}/followers`);
    expect(coll).toMatchObject({
      type: "OrderedCollection",
      totalItems: 2,
      id: `${BASE}/users/${owner.username}/followers`,
    });
    const page = await ap(coll.first);
    expect(page.type).toBe("OrderedCollectionPage");
    expect([...page.orderedItems].sort()).toEqual(fans.map((f) => `${BASE}/users/${f.username}`).sort());
    const following = await ap(`/users/${owner.username}/following`);
    expect(following.totalItems).toBe(1);
    expect((await ap(following.first)).orderedItems).toEqual([`${BASE}/users/${fans[0]!.username}`]);
  });

  it("hides the items or the count as the owner chose", async () => {
    const owner = await registerUser();
    const fan = await registerUser();
    await json(`/api/v1/accounts/${owner.id}/follow`, { method: "POST", token: fan.token });
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: owner.token,
      body: { hide_followers: true, hide_followers_count: true },
    });
    const coll = await ap(`/users/${owner.username}/followers`);
    expect(coll.totalItems).toBeUndefined();
    const page = await ap(coll.first);
    expect(page.orderedItems ?? []).toEqual([]);
    expect((await call(`/users/nobody_here_at_all/followers`, { headers: { Accept: AP } })).status).toBe(404);
  });
});

describe("inboxes", () => {
  it("refuse an unsigned activity with 401 and store nothing", async () => {
    const u = await registerUser();
    const before = await kvCount();
    const activity = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: "https://remote.example/activities/1",
      type: "Follow",
      actor: "https://remote.example/users/mallory",
      object: `${BASE}/users/${u.username}`,
    };
    for (const path of [`/users/${u.username}/inbox`, "/inbox"]) {
      const res = await call(path, { method: "POST", body: JSON.stringify(activity), headers: { "Content-Type": AP } });
      expect(res.status, path).toBe(401);
    }
    expect(await kvCount()).toBe(before);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM follow_requests WHERE target_account_id = ?")
      .bind(u.id)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });
});

describe("D1 KvStore", () => {
  const kv = () => new D1KvStore(db(env));

  it("gets, sets, deletes and lists by prefix", async () => {
    const p = `t${Date.now()}${Math.random()}`;
    const store = kv();
    await store.set([p, "a"], { x: 1 });
    await store.set([p, "a", "b"], [1, 2]);
    await store.set([p, "ab"], "other");
    await store.set([`${p}x`, "a"], "elsewhere");
    expect(await store.get([p, "a"])).toEqual({ x: 1 });
    expect(await store.get([p, "missing"])).toBeUndefined();
    const listed = [];
    for await (const e of store.list([p, "a"])) listed.push(e);
    listed.sort((x, y) => x.key.length - y.key.length);
    expect(listed).toEqual([
      { key: [p, "a"], value: { x: 1 } },
      { key: [p, "a", "b"], value: [1, 2] },
    ]);
    const all = [];
    for await (const e of store.list([p])) all.push(e.key);
    expect(all).toHaveLength(3);
    await store.delete([p, "a"]);
    expect(await store.get([p, "a"])).toBeUndefined();
  });

  it("expires entries after their ttl and swaps atomically", async () => {
    const p = `e${Date.now()}${Math.random()}`;
    const store = kv();
    const { Temporal: T } = await import("@js-temporal/polyfill");
    await store.set([p, "short"], 1, { ttl: T.Duration.from({ milliseconds: 1 }) });
    await store.set([p, "long"], 2, { ttl: T.Duration.from({ hours: 1 }) });
    await new Promise((r) => setTimeout(r, 5));
    expect(await store.get([p, "short"])).toBeUndefined();
    expect(await store.get([p, "long"])).toBe(2);
    const keys = [];
    for await (const e of store.list([p])) keys.push(e.key[1]);
    expect(keys).toEqual(["long"]);
    // cas: absent -> set (an expired entry counts as absent), mismatch -> refused, match -> swapped.
    expect(await store.cas!([p, "short"], undefined, "new")).toBe(true);
    expect(await store.cas!([p, "short"], undefined, "again")).toBe(false);
    expect(await store.cas!([p, "short"], "wrong", "x")).toBe(false);
    expect(await store.cas!([p, "short"], "new", { v: 3 })).toBe(true);
    expect(await store.get([p, "short"])).toEqual({ v: 3 });
  });
});
