/**
 * Resolving remote accounts (federation/fetching/resolve.ts) through the client API: search with resolve=true, account
 * search, accounts/lookup, mentions in posts; fixtures of Mastodon, Pleroma, Misskey and GoToSocial actors
 * served by a fake fediverse (test/fake-fediverse.ts) to instance A; SSRF and cross-origin refusals; staleness;
 * and instance A resolving a user of instance B.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../src/index";
import { afterEach, describe, expect, it } from "vitest";
import { Person } from "@fedify/vocab";
import { db } from "../src/db/client";
import { upsertActor } from "../src/federation/documents/parse-actor";
import { AccountSchema, RelationshipSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";
import { call, json, registerUser, uniqueName, valid, type TestUser } from "./helpers";
import { actorFixture, actorServer, fakeFediverse, type FakeFediverse } from "./fake-fediverse";
import { A, B, routeFetch, type Routed } from "./instances";

let fake: FakeFediverse | undefined;
let routed: Routed | undefined;
afterEach(() => {
  fake?.restore();
  routed?.restore();
  fake = routed = undefined;
});

const host = (name: string) => `${uniqueName(name)}.test`;
const user = () => registerUser({ instance: A });

/** Serves these actors (fixtures moved to hosts of their own) with their collections' counts. */
function serve(...servers: ReturnType<typeof actorServer>[]) {
  fake = fakeFediverse({
    docs: Object.assign({}, ...servers.map((s) => s.docs)),
    handles: Object.assign({}, ...servers.map((s) => s.handles)),
  });
  return fake;
}

async function search(me: TestUser | null, q: string, extra = "&resolve=true") {
  const body = await json(`/api/v2/search?q=${encodeURIComponent(q)}${extra}`, { instance: A, token: me?.token });
  for (const a of body.accounts) valid(AccountSchema, a);
  for (const s of body.statuses) valid(StatusSchema, s);
  return body as { accounts: any[]; statuses: any[]; hashtags: any[] };
}

async function dbRow(uri: string) {
  return env.DB.prepare("SELECT * FROM accounts WHERE uri = ?").bind(uri).first<Record<string, any>>();
}

describe("resolving a Mastodon actor", () => {
  it("search resolve=true finds user@domain and renders the remote account right", async () => {
    const me = await user();
    const h = host("masto");
    const actor = actorFixture("mastodon", h);
    const net = serve(actorServer(actor, { followers: 351_234, following: 301, outbox: 75_001 }));

    const { accounts } = await search(me, `Gargron@${h}`);
    expect(accounts).toHaveLength(1);
    const a = accounts[0];
    expect(a.username).toBe("Gargron");
    expect(a.acct).toBe(`Gargron@${h}`);
    expect(a.fqn).toBe(`Gargron@${h}`);
    expect(a.url).toBe(`https://${h}/@Gargron`);
    expect(a.display_name).toBe("Eugen Rochko :verified:");
    expect(a.avatar).toBe(`https://files.${h}/accounts/avatars/000/000/001/original/d96d39a0abb45b92.jpg`);
    expect(a.avatar_static).toBe(a.avatar);
    expect(a.header).toBe(`https://files.${h}/accounts/headers/000/000/001/original/c91b871f294ea63e.png`);
    expect(a.header_static).toBe(a.header);
    expect([a.followers_count, a.following_count, a.statuses_count]).toEqual([351_234, 301, 75_001]);
    expect(a.locked).toBe(false);
    expect(a.discoverable).toBe(true);
    expect(a.bot).toBe(false);
    expect(a.created_at).toBe("2016-03-16T00:00:00.000Z");
    expect(a.emojis).toEqual([
      {
        shortcode: "verified",
        url: `https://files.${h}/custom_emojis/images/000/000/001/original/verified.png`,
        static_url: `https://files.${h}/custom_emojis/images/000/000/001/original/verified.png`,
        visible_in_picker: false,
      },
    ]);
    expect(a.fields.map((f: any) => f.name)).toEqual(["Patreon", "Pronouns"]);
    expect(a.fields[0].value).toContain('href="https://www.patreon.com/mastodon"');
    expect(a.fields[1].value).toBe("he/him");
    expect(a.note).toContain("Founder, CEO and lead developer");
    expect(a.note).not.toContain("<script");
    expect(a.pleroma.is_local).toBe(false);
    expect(a.pleroma.ap_id).toBe(`https://${h}/users/Gargron`);
    expect(a.pleroma.also_known_as).toEqual(["https://old.mastodon.test/users/eugen"]);
    // WebFinger, then the actor, then the counters.
    expect(net.fetched[0]).toBe(`https://${h}/.well-known/webfinger?resource=acct%3AGargron%40${h}`);
    expect(net.fetched).toContain(`https://${h}/users/Gargron/followers`);
    const row = await dbRow(`https://${h}/users/Gargron`);
    expect(row).toMatchObject({
      domain: h,
      inbox_url: `https://${h}/users/Gargron/inbox`,
      shared_inbox_url: `https://${h}/inbox`,
    });
    expect(row!.fetched_at).toBeGreaterThan(Date.now() - 60_000);

    // The profile and its (stored) statuses through the client API.
    const shown = valid(AccountSchema, await json(`/api/v1/accounts/${a.id}`, { instance: A, token: me.token }));
    expect(shown).toEqual(a);
    expect(await json(`/api/v1/accounts/${a.id}/statuses`, { instance: A, token: me.token })).toEqual([]);

    // Stored now and fresh: found again without a fetch, with or without resolve, by acct or @acct.
    net.fetched.length = 0;
    expect((await search(me, `@Gargron@${h}`)).accounts.map((x) => x.id)).toEqual([a.id]);
    expect((await search(null, `gargron@${h}`, "")).accounts.map((x) => x.id)).toEqual([a.id]);
    expect(net.fetched).toEqual([]);
  });

  it("an actor URL resolves too, in v2 search and account search", async () => {
    const me = await user();
    const h = host("mastourl");
    const actor = actorFixture("mastodon", h);
    serve(actorServer(actor));
    const { accounts, statuses, hashtags } = await search(me, actor.id);
    expect(accounts.map((a) => a.acct)).toEqual([`Gargron@${h}`]);
    expect([statuses, hashtags]).toEqual([[], []]);
    const byProfile = await json(
      `/api/v1/accounts/search?q=${encodeURIComponent(`https://${h}/@Gargron`)}&resolve=true`,
      { instance: A, token: me.token },
    );
    expect(byProfile.map((a: any) => a.id)).toEqual([accounts[0].id]);
  });

  it("without a token, or without resolve, nothing is fetched", async () => {
    const me = await user();
    const h = host("anon");
    const net = serve(actorServer(actorFixture("mastodon", h)));
    expect((await search(null, `Gargron@${h}`)).accounts).toEqual([]);
    expect((await search(me, `Gargron@${h}`, "&resolve=false")).accounts).toEqual([]);
    expect(await json(`/api/v1/accounts/search?q=Gargron@${h}&resolve=true`, { instance: A })).toEqual([]);
    expect((await call(`/api/v1/accounts/lookup?acct=Gargron@${h}`, { instance: A })).status).toBe(404);
    expect(net.fetched).toEqual([]);
    expect(await dbRow(`https://${h}/users/Gargron`)).toBeNull();
  });

  it("an unknown user or an unreachable server is simply not found", async () => {
    const me = await user();
    const h = host("known");
    serve(actorServer(actorFixture("mastodon", h)));
    expect((await search(me, `nobody@${h}`)).accounts).toEqual([]);
    expect((await search(me, `someone@${host("nowhere")}`)).accounts).toEqual([]);
    expect((await call(`/api/v1/accounts/lookup?acct=nobody@${h}`, { instance: A, token: me.token })).status).toBe(404);
  });
});

describe("other servers' actors", () => {
  it("Pleroma: @user@domain in account search, with its own litepub context, locked, emoji, chat", async () => {
    const me = await user();
    const h = host("pleroma");
    const net = serve(actorServer(actorFixture("pleroma", h), { followers: 12, following: 34, outbox: 5678 }));
    const found = await json(`/api/v1/accounts/search?q=@lain@${h}&resolve=true`, { instance: A, token: me.token });
    expect(found).toHaveLength(1);
    const a = valid(AccountSchema, found[0]);
    expect(a).toMatchObject({
      username: "lain",
      acct: `lain@${h}`,
      locked: true,
      discoverable: false,
      url: `https://${h}/users/lain`,
      display_name: "lain :blobcat:",
    });
    expect(a.emojis.map((e) => [e.shortcode, e.url])).toEqual([["blobcat", `https://${h}/emoji/blobcat.png`]]);
    expect(a.avatar).toBe(`https://${h}/media/a1b2c3/avatar.png`);
    expect(a.fields).toEqual([
      { name: "Website", value: expect.stringContaining(`href="https://lain.test"`), verified_at: null },
    ]);
    expect([a.followers_count, a.following_count, a.statuses_count]).toEqual([12, 34, 5678]);
    expect(net.fetched).toContain(`https://${h}/schemas/litepub-0.1.jsonld`);
  });

  it("Misskey: an opaque id with preferredUsername, _misskey_summary and isCat ignored", async () => {
    const me = await user();
    const h = host("misskey");
    const actor = actorFixture("misskey", h);
    serve(actorServer(actor, { followers: 7, following: 8, outbox: 9 }));
    const a = valid(
      AccountSchema,
      await json(`/api/v1/accounts/lookup?acct=syuilo@${h}`, { instance: A, token: me.token }),
    );
    expect(a).toMatchObject({
      username: "syuilo",
      acct: `syuilo@${h}`,
      url: `https://${h}/@syuilo`,
      display_name: "しゅいろ",
      locked: false,
    });
    expect(a.pleroma.ap_id).toBe(`https://${h}/users/9gr8xsm1sa`);
    expect(a.note).toContain("Misskey の開発者です");
    expect(a.fields.map((f) => f.name)).toEqual(["GitHub"]);
    expect(a.avatar).toBe(`https://${h}/files/webpublic-avatar.webp`);
    expect((await dbRow(actor.id))!.shared_inbox_url).toBe(`https://${h}/inbox`);
  });

  it("GoToSocial: no shared inbox, locked, collections refused unsigned (counts stay 0)", async () => {
    const me = await user();
    const h = host("gts");
    const actor = actorFixture("gotosocial", h);
    serve(actorServer(actor, { followers: null, following: null, outbox: null }));
    const a = valid(
      AccountSchema,
      await json(`/api/v1/accounts/lookup?acct=tobi@${h}`, { instance: A, token: me.token }),
    );
    expect(a).toMatchObject({
      username: "tobi",
      acct: `tobi@${h}`,
      locked: true,
      discoverable: true,
      followers_count: 0,
      statuses_count: 0,
      note: "<p>I&#39;m tobi, a GoToSocial sloth.</p>",
    });
    expect(a.pleroma.also_known_as).toEqual(["https://mastodon.test/users/tobi"]);
    const row = await dbRow(actor.id);
    expect([row!.inbox_url, row!.shared_inbox_url]).toEqual([`https://${h}/users/tobi/inbox`, null]);
  });

  it("a server on a non-default port shows as user@host:port", async () => {
    const me = await user();
    const h = `${host("port")}:8443`;
    serve(actorServer(actorFixture("mastodon", h)));
    const { accounts } = await search(me, `Gargron@${h}`);
    expect(accounts.map((a) => [a.acct, a.fqn, a.url])).toEqual([
      [`Gargron@${h}`, `Gargron@${h}`, `https://${h}/@Gargron`],
    ]);
    // Found again by that acct, stored.
    const again = await json(`/api/v1/accounts/lookup?acct=Gargron@${h}`, { instance: A });
    expect(again.id).toBe(accounts[0].id);
  });

  it("oversized names, bios, fields and emoji lists are capped", async () => {
    const me = await user();
    const h = host("huge");
    const actor = actorFixture("mastodon", h);
    actor.name = "N".repeat(5000);
    actor.summary = `<p>${"b".repeat(60_000)}</p>`;
    actor.attachment = Array.from({ length: 100 }, (_, i) => ({
      type: "PropertyValue",
      name: `f${i}${"x".repeat(400)}`,
      value: "v".repeat(10_000),
    }));
    actor.tag = Array.from({ length: 200 }, (_, i) => ({
      type: "Emoji",
      name: `:e${i}:`,
      icon: { type: "Image", url: `https://${h}/e/${i}.png` },
    }));
    serve(actorServer(actor));
    const [a] = (await search(me, `Gargron@${h}`)).accounts;
    expect(a.display_name.length).toBeLessThanOrEqual(200);
    expect(a.note.length).toBeLessThan(25_000);
    expect(a.fields.length).toBe(16);
    expect(a.fields[0].name.length).toBeLessThanOrEqual(255);
    expect(a.fields[0].value.length).toBeLessThanOrEqual(2048);
    expect(a.emojis.length).toBe(64);
  });
});

describe("refusals", () => {
  it("a WebFinger answer pointing at a private address is refused (guard on)", async () => {
    const me = await user();
    const strict = { instance: A, token: me.token, vars: { ALLOW_PRIVATE_ADDRESS: "false" } };
    fake = fakeFediverse({
      dns: { "evil.example": ["93.184.215.21"], "inside.example": ["10.1.2.3"] },
      handles: {
        "mallory@evil.example": "https://inside.example/users/mallory",
        "eve@evil.example": "http://127.0.0.1/users/eve",
      },
      docs: {
        "https://inside.example/users/mallory": actorFixture("mastodon", "inside.example"),
        "http://127.0.0.1/users/eve": actorFixture("mastodon", "127.0.0.1"),
      },
    });
    for (const q of ["mallory@evil.example", "eve@evil.example"]) {
      const body = await json(`/api/v2/search?q=${q}&resolve=true`, strict);
      expect(body.accounts).toEqual([]);
    }
    // WebFinger was asked; the private addresses never were.
    expect(fake.fetched.some((u) => u.startsWith("https://evil.example/.well-known/webfinger"))).toBe(true);
    expect(fake.fetched.filter((u) => u.includes("inside.example") || u.includes("127.0.0.1"))).toEqual([]);
  });

  it("an actor whose id is on another host than where it was fetched is not stored under that id", async () => {
    const me = await user();
    const liar = host("liar");
    const victim = host("victim");
    const forged = actorFixture("mastodon", victim); // id https://victim/users/Gargron
    fake = fakeFediverse({
      handles: { [`Gargron@${liar}`]: `https://${liar}/users/Gargron` },
      docs: { [`https://${liar}/users/Gargron`]: forged },
    });
    expect((await search(me, `Gargron@${liar}`)).accounts).toEqual([]);
    expect((await search(me, `https://${liar}/users/Gargron`)).accounts).toEqual([]);
    expect(await dbRow(`https://${victim}/users/Gargron`)).toBeNull();
    expect(await dbRow(`https://${liar}/users/Gargron`)).toBeNull();
  });
});

describe("staleness", () => {
  it("a stale row is refreshed; when its server fails the stored row is kept", async () => {
    const me = await user();
    const h = host("stale");
    const actor = actorFixture("mastodon", h);
    const net = serve(actorServer(actor, { followers: 1, following: 1, outbox: 1 }));
    const [first] = (await search(me, `Gargron@${h}`)).accounts;
    const age = () =>
      env.DB.prepare("UPDATE accounts SET fetched_at = ? WHERE uri = ?")
        .bind(Date.now() - 3 * 24 * 3600_000, actor.id)
        .run();

    await age();
    net.docs.set(actor.id, { ...actor, name: "Renamed" });
    net.fetched.length = 0;
    const refreshed = valid(
      AccountSchema,
      await json(`/api/v1/accounts/lookup?acct=Gargron@${h}`, { instance: A, token: me.token }),
    );
    expect(refreshed.id).toBe(first.id);
    expect(refreshed.display_name).toBe("Renamed");
    // A known account is refreshed from its id: no WebFinger.
    expect(net.fetched[0]).toBe(actor.id);

    await age();
    net.docs.set(actor.id, () => new Response("down", { status: 503 }));
    const kept = valid(
      AccountSchema,
      await json(`/api/v1/accounts/lookup?acct=Gargron@${h}`, { instance: A, token: me.token }),
    );
    expect([kept.id, kept.display_name]).toEqual([first.id, "Renamed"]);
    expect((await search(me, `Gargron@${h}`)).accounts.map((a) => a.id)).toEqual([first.id]);
  });

  /** A request's answer and how long the client waited for it (the work after the answer not counted). */
  async function timed(path: string, token: string, vars: Record<string, string>) {
    const ctx = createExecutionContext();
    const started = Date.now();
    const res = await worker.fetch(
      new Request(`${A.origin}${path}`, { headers: { Authorization: `Bearer ${token}` } }),
      { ...A.bindings, ...vars } as typeof env,
      ctx,
    );
    const waited = Date.now() - started;
    await waitOnExecutionContext(ctx);
    return { res, waited };
  }

  it("a server that never answers does not hold the request for long (RESOLVE_TIMEOUT_MS), nor the work after it", async () => {
    const me = await user();
    const h = host("slow");
    fake = fakeFediverse({
      handles: { [`sloth@${h}`]: `https://${h}/users/sloth` },
      docs: { [`https://${h}/users/sloth`]: () => new Promise<Response>(() => {}) },
    });
    const started = Date.now();
    const { res, waited } = await timed(`/api/v1/accounts/lookup?acct=sloth@${h}`, me.token, {
      RESOLVE_TIMEOUT_MS: "300",
    });
    expect(res.status).toBe(404);
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(2_000);
    // The look-up went on after the answer, and gave up too (three times the budget in all).
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("a server slower than the budget is not taken for nonexistent: the look-up goes on, and asking again finds it", async () => {
    const me = await user();
    const h = host("late");
    const actor = actorFixture("mastodon", h);
    const server = actorServer(actor);
    const doc = server.docs[actor.id];
    // The actor document comes 600 ms late (a new server making its keys on its first fetch, say).
    server.docs[actor.id] = () =>
      new Promise<Response>((resolve) =>
        setTimeout(
          () =>
            resolve(new Response(JSON.stringify(doc), { headers: { "Content-Type": "application/activity+json" } })),
          600,
        ),
      );
    serve(server);
    const q = encodeURIComponent(`Gargron@${h}`);
    const first = await timed(`/api/v2/search?q=${q}&resolve=true&type=accounts`, me.token, {
      RESOLVE_TIMEOUT_MS: "300",
    });
    expect(first.res.status).toBe(200);
    expect((await first.res.json<{ accounts: unknown[] }>()).accounts).toEqual([]);
    expect(first.waited).toBeLessThan(600);
    // It was stored after the answer: the same search finds it, with no wait.
    expect(await dbRow(actor.id)).not.toBeNull();
    const again = await search(me, `Gargron@${h}`);
    expect(again.accounts.map((a) => a.acct)).toEqual([`Gargron@${h}`]);
  });
});

describe("mentions", () => {
  it("an unknown remote mention is resolved, addressed, linked and listed; an unresolvable one stays text", async () => {
    const me = await user();
    const h = host("mention");
    const actor = actorFixture("mastodon", h);
    serve(actorServer(actor));
    const gone = host("gone");
    const s = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        instance: A,
        token: me.token,
        body: { status: `hi @Gargron@${h} and @nobody@${gone}`, visibility: "direct" },
      }),
    );
    const account = await dbRow(actor.id);
    expect(account).not.toBeNull();
    expect(s.mentions).toEqual([
      { id: account!.id, username: "Gargron", acct: `Gargron@${h}`, url: `https://${h}/@Gargron` },
    ]);
    expect(s.content).toContain(
      `<a class="u-url mention" data-user="${account!.id}" href="https://${h}/@Gargron" rel="ugc">@<span>Gargron@${h}</span></a>`,
    );
    expect(s.content).toContain(`@nobody@${gone}`);
    expect(s.content).not.toContain(`href="https://${gone}`);
    const rcpt = await env.DB.prepare("SELECT account_id, mention FROM status_recipients WHERE status_id = ?")
      .bind(s.id)
      .all();
    expect(rcpt.results).toEqual([{ account_id: account!.id, mention: 1 }]);
  });

  it("resolves at most a handful of unknown mentions per post", async () => {
    const me = await user();
    const hosts = Array.from({ length: 8 }, () => host("many"));
    const net = serve(...hosts.map((h) => actorServer(actorFixture("mastodon", h))));
    const text = hosts.map((h) => `@Gargron@${h}`).join(" ");
    const s = valid(
      StatusSchema,
      await json("/api/v1/statuses", { instance: A, token: me.token, body: { status: text } }),
    );
    expect(s.mentions.map((m) => m.acct)).toEqual(hosts.slice(0, 5).map((h) => `Gargron@${h}`));
    expect(net.fetched.filter((u) => u.includes("/.well-known/webfinger")).length).toBe(5);
  });
});

describe("status URLs", () => {
  it("a stored status is found by its uri or url, under the visibility rules", async () => {
    const [author, other] = await Promise.all([user(), user()]);
    const pub = valid(
      StatusSchema,
      await json("/api/v1/statuses", { instance: A, token: author.token, body: { status: "public words" } }),
    );
    const priv = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        instance: A,
        token: author.token,
        body: { status: "private words", visibility: "private" },
      }),
    );
    expect((await search(other, pub.url!)).statuses.map((s) => s.id)).toEqual([pub.id]);
    expect((await search(other, pub.uri)).statuses.map((s) => s.id)).toEqual([pub.id]);
    expect((await search(null, pub.uri)).statuses.map((s) => s.id)).toEqual([pub.id]);
    expect((await search(other, priv.uri)).statuses).toEqual([]);
    expect((await search(author, priv.uri)).statuses.map((s) => s.id)).toEqual([priv.id]);
  });
});

describe("what a remote server cannot claim", () => {
  it("a profile URL on another host is not kept (search by it must not answer this actor)", async () => {
    const me = await user();
    const h = host("claims");
    const actor: Record<string, any> = { ...actorFixture("mastodon", h), url: "https://famous.example/@someone" };
    serve(actorServer(actor));
    const { accounts } = await search(me, `Gargron@${h}`);
    expect(accounts).toHaveLength(1);
    expect(accounts[0].url).toBe(actor.id);
    expect((await search(me, "https://famous.example/@someone", "")).accounts).toEqual([]);
  });

  it("an actor document claiming a local account's id never rewrites the local account", async () => {
    const [me, victim] = await Promise.all([user(), user()]);
    const h = host("takeover");
    const localId = `${A.origin}/users/${victim.username}`;
    // WebFinger on h names the local actor's id; the document served there claims to be it.
    const forged = { ...actorFixture("mastodon", h), id: localId, preferredUsername: "evil", name: "Not the victim" };
    serve({ docs: { [localId]: forged }, handles: { [`evil@${h}`]: localId } });
    await search(me, `evil@${h}`);
    const row = await dbRow(localId);
    expect(row).toMatchObject({ domain: null, username: victim.username });
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${victim.id}`, { instance: A })).display_name).not.toBe(
      "Not the victim",
    );
  });

  it("a second actor claiming a stored user@host under a new id is not stored, and storing it does not throw (the inbox would 500)", async () => {
    const h = host("recreated");
    const person = (path: string) =>
      new Person({
        id: new URL(`https://${h}/users/${path}`),
        preferredUsername: "Gargron",
        inbox: new URL(`https://${h}/users/${path}/inbox`),
      });
    expect(await upsertActor(db(env), person("Gargron"))).toMatchObject({ username: "Gargron", domain: h });
    expect(await upsertActor(db(env), person("Gargron2"))).toBeNull();
    expect(await dbRow(`https://${h}/users/Gargron2`)).toBeNull();
  });
});

describe("status URLs of other servers", () => {
  it("A fetches and stores a public status of B named by its URL; a followers-only one stays unknown", async () => {
    const [me, bob] = await Promise.all([user(), registerUser({ instance: B })]);
    const pub = valid(
      StatusSchema,
      await json("/api/v1/statuses", { instance: B, token: bob.token, body: { status: "a post worth finding" } }),
    );
    const priv = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        instance: B,
        token: bob.token,
        body: { status: "followers only", visibility: "private" },
      }),
    );
    routed = routeFetch();
    const found = (await search(me, pub.uri)).statuses;
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      uri: pub.uri,
      visibility: "public",
      account: { acct: `${bob.username}@b.example` },
    });
    expect(found[0]!.content).toContain("a post worth finding");
    // Stored: found again without fetching, by anyone, and readable through the API.
    routed.requests.length = 0;
    expect((await search(null, pub.uri)).statuses.map((s) => s.id)).toEqual([found[0]!.id]);
    expect(routed.requests).toEqual([]);
    valid(StatusSchema, await json(`/api/v1/statuses/${found[0]!.id}`, { instance: A, token: me.token }));
    // B does not serve a followers-only status to anyone: nothing found, nothing stored.
    expect((await search(me, priv.uri)).statuses).toEqual([]);
    // Its page URL (`/notice/<id>`, HTML naming the object as its alternate) finds it too.
    const paged = valid(
      StatusSchema,
      await json("/api/v1/statuses", { instance: B, token: bob.token, body: { status: "found by its page" } }),
    );
    expect((await search(me, paged.url!)).statuses.map((s) => s.uri)).toEqual([paged.uri]);
    // Without a token nothing is fetched.
    const other = valid(
      StatusSchema,
      await json("/api/v1/statuses", { instance: B, token: bob.token, body: { status: "another one" } }),
    );
    routed.requests.length = 0;
    expect((await search(null, other.uri)).statuses).toEqual([]);
    expect(routed.requests).toEqual([]);
  });
});

describe("two instances", () => {
  it("A finds B's user by user@b.example with B's counts, and following it makes a pending request", async () => {
    const [me, bob] = await Promise.all([user(), registerUser({ instance: B })]);
    await json("/api/v1/statuses", { instance: B, token: bob.token, body: { status: "hello from B" } });
    routed = routeFetch();
    const { accounts } = await search(me, `${bob.username}@b.example`);
    expect(accounts).toHaveLength(1);
    const a = accounts[0];
    expect(a).toMatchObject({
      acct: `${bob.username}@b.example`,
      url: `https://b.example/users/${bob.username}`,
      statuses_count: 1,
      followers_count: 0,
    });
    expect(a.pleroma.is_local).toBe(false);
    const rel = valid(
      RelationshipSchema,
      await json(`/api/v1/accounts/${a.id}/follow`, { instance: A, token: me.token, method: "POST" }),
    );
    expect(rel).toMatchObject({ id: a.id, following: false, requested: true });
  });
});
