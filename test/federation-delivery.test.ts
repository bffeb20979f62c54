/**
 * Outgoing federation (src/federation/delivery/): outbox rows written with the action, expanded set-based,
 * delivered per host, signed, retried. Remote followers are rows seeded in A's DB on hosts that only a receiver
 * in this test answers; A's own key is fetched from A (routeFetch) to verify signatures. Waking the delivery
 * objects is replaced by a recorder (they run with the pool's bindings, not A's): `drainFederation` delivers.
 */
import { createExecutionContext, env, runDurableObjectAlarm, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { verifyRequest } from "@fedify/fedify";
import worker from "../src/index";
import { A, routeFetch, type Routed } from "./instances";
import { call, json, makeAdmin, uniqueName, valid, type TestUser, registerUser } from "./helpers";
import { countingD1 } from "./d1-counter";
import { deliverHost, PROBE_EVERY_MS, UNREACHABLE_AFTER_MS } from "../src/federation/delivery/deliver";
import { deliveryWake, drainFederation, sweepFederation } from "../src/federation/delivery/wake";
import { HealthcheckSchema } from "../src/schemas/instance";
import { federationContext } from "../src/federation";
import { runScheduled } from "../src/cron";
import { GIVE_UP_MS, outboxWrite } from "../src/services/outbox";
import { closeEndedPolls } from "../src/services/notifications";
import { AUDIENCE, hasAudience, inboxesOf } from "../src/services/audience";
import type { OutboxActivity } from "../src/services/outbox";
import { statement } from "../src/db/client";
import { sql } from "drizzle-orm";
import { db } from "../src/db/client";
import { newId } from "../src/db/ids";
import { signingKey } from "../src/services/credentials";
import { StatusSchema } from "../src/schemas/status";
import { RelationshipSchema } from "../src/schemas/account";

type Received = { host: string; url: string; body: any; req: Request };

/** A public address literal (no DNS needed, so the guard passes it without the development switch). */
const PUBLIC_IP = "93.184.216.34";

let received: Received[] = [];
let answer: (host: string) => number = () => 202;
let woken: string[][] = [];
let routed: Routed;
let previousFetch: typeof fetch;
const realWake = deliveryWake.run;

beforeEach(() => {
  received = [];
  woken = [];
  answer = () => 202;
  previousFetch = globalThis.fetch;
  // The receiver: every `*.test` host (and PUBLIC_IP) answers here and is recorded; a.example is A (routeFetch on top).
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    if (!url.hostname.endsWith(".test") && url.hostname !== PUBLIC_IP) return previousFetch(input, init);
    const copy = req.clone();
    received.push({ host: url.host, url: req.url, body: await req.clone().json(), req: copy });
    return new Response(null, { status: answer(url.host) });
  }) as typeof fetch;
  routed = routeFetch([A]);
  deliveryWake.run = async (_env, hosts) => {
    woken.push([...hosts].sort());
  };
});

afterEach(() => {
  routed.restore();
  globalThis.fetch = previousFetch;
  deliveryWake.run = realWake;
});

const D = () => db(A.bindings);

/** A host only this test uses. */
const host = () => `${uniqueName("h")}.test`;

/** A remote account on `domain` (with its inbox, and the host's shared inbox unless `shared` is false). */
async function remote(domain: string, opts: { shared?: boolean; name?: string } = {}) {
  const id = newId();
  const name = opts.name ?? uniqueName("r");
  const t = Date.now();
  await env.DB.prepare(
    "INSERT INTO accounts (id, username, domain, uri, url, inbox_url, shared_inbox_url, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(
      id,
      name,
      domain,
      `https://${domain}/users/${name}`,
      `https://${domain}/@${name}`,
      `https://${domain}/users/${name}/inbox`,
      opts.shared === false ? null : `https://${domain}/inbox`,
      t,
      t,
    )
    .run();
  return { id, name, domain, uri: `https://${domain}/users/${name}`, inbox: `https://${domain}/users/${name}/inbox` };
}

/** `follower` follows `target` (an accepted follow row, as the inbox will write it). */
async function follows(followerId: string, targetId: string) {
  const id = newId();
  await env.DB.prepare(
    "INSERT INTO follows (id, account_id, target_account_id, created_at, uri) VALUES (?, ?, ?, ?, ?)",
  )
    .bind(id, followerId, targetId, Date.now(), `https://x.test/follows/${id}`)
    .run();
}

const postA = (user: TestUser, body: Record<string, unknown>) =>
  call("/api/v1/statuses", { instance: A, token: user.token, body });

async function statusOf(res: Response) {
  expect(res.status).toBe(200);
  return valid(StatusSchema, await res.json());
}

/** A user of A with followers on two hosts: two on `h1` (one shared inbox), one on `h2` without a shared inbox. */
async function withFollowers() {
  const me = await registerUser({ instance: A });
  const [h1, h2] = [host(), host()];
  const f1 = await remote(h1);
  const f2 = await remote(h1);
  const f3 = await remote(h2, { shared: false });
  for (const f of [f1, f2, f3]) await follows(f.id, me.id);
  return { me, h1, h2, f1, f2, f3 };
}

const inboxes = () => received.map((r) => r.url).sort();
const outboxRows = async (accountId: string) =>
  (await env.DB.prepare("SELECT * FROM federation_outbox WHERE account_id = ?").bind(accountId).all()).results;

describe("statuses go to exactly their audience", () => {
  it("public: each follower host once (shared inbox), mentioned accounts too; the Create is the status", async () => {
    const { me, h1, h2, f3 } = await withFollowers();
    const m = await remote(host());
    const s = await statusOf(await postA(me, { status: `hello @${m.name}@${m.domain}`, visibility: "public" }));
    expect(woken.flat().sort()).toEqual([h1, h2, m.domain].sort());
    expect(received).toEqual([]);
    await drainFederation(A.bindings);
    expect(inboxes()).toEqual([`https://${h1}/inbox`, f3.inbox, `https://${m.domain}/inbox`].sort());
    const doc = received[0]!.body;
    expect(doc.type).toBe("Create");
    expect(doc.id).toBe(`${s.uri}/activity`);
    expect(doc.actor).toBe(`${A.origin}/users/${me.username}`);
    expect(doc.object.id).toBe(s.uri);
    expect(doc.object.to).toBe("https://www.w3.org/ns/activitystreams#Public");
    expect(doc.object.cc).toEqual(expect.arrayContaining([`${A.origin}/users/${me.username}/followers`, m.uri]));
    for (const r of received) expect(r.req.headers.get("content-type")).toBe("application/activity+json");
    // Delivered rows are gone; the host's success is recorded.
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM federation_deliveries WHERE host IN (?, ?)")
        .bind(h1, h2)
        .first())!.n,
    ).toBe(0);
    expect(await env.DB.prepare("SELECT * FROM instances WHERE domain = ?").bind(h1).first()).toMatchObject({
      failure_count: 0,
      failing_since: null,
    });
  });

  it("unlisted and private go to followers (and the addressed); direct only to the mentioned; local-only nowhere", async () => {
    const { me, h1, f3 } = await withFollowers();
    const m = await remote(host());
    await statusOf(await postA(me, { status: "unlisted", visibility: "unlisted" }));
    await drainFederation(A.bindings);
    expect(inboxes()).toEqual([`https://${h1}/inbox`, f3.inbox].sort());
    expect(received[0]!.body.object.to).toEqual(`${A.origin}/users/${me.username}/followers`);

    received = [];
    await statusOf(await postA(me, { status: `private @${m.name}@${m.domain}`, visibility: "private" }));
    await drainFederation(A.bindings);
    expect(inboxes()).toEqual([`https://${h1}/inbox`, f3.inbox, `https://${m.domain}/inbox`].sort());
    expect(JSON.stringify(received[0]!.body)).not.toContain("as:Public");

    received = [];
    await statusOf(await postA(me, { status: `secret @${m.name}@${m.domain}`, visibility: "direct" }));
    await drainFederation(A.bindings);
    expect(inboxes()).toEqual([`https://${m.domain}/inbox`]);
    expect(received[0]!.body.object.to).toBe(m.uri);

    received = [];
    woken = [];
    const before = (await outboxRows(me.id)).length;
    await statusOf(await postA(me, { status: `local @${m.name}@${m.domain}`, visibility: "local" }));
    await drainFederation(A.bindings);
    expect(received).toEqual([]);
    expect(woken.flat()).toEqual([]);
    expect((await outboxRows(me.id)).length).toBe(before);
  });

  it("list: only the list's members", async () => {
    const { me, h1 } = await withFollowers();
    const member = await remote(host());
    await follows(me.id, member.id);
    const list = (await (
      await call("/api/v1/lists", { instance: A, token: me.token, body: { title: "l" } })
    ).json()) as { id: string };
    expect(
      (
        await call(`/api/v1/lists/${list.id}/accounts`, {
          instance: A,
          token: me.token,
          body: { account_ids: [member.id] },
        })
      ).status,
    ).toBe(200);
    await statusOf(await postA(me, { status: "for the list", visibility: `list:${list.id}` }));
    await drainFederation(A.bindings);
    expect(inboxes()).toEqual([`https://${member.domain}/inbox`]);
    expect(received[0]!.body.object.to).toBe(member.uri);
    expect(inboxes()).not.toContain(`https://${h1}/inbox`);
  });

  it("an island writes nothing: no remote follower, no remote addressee, no outbox row", async () => {
    const me = await registerUser({ instance: A });
    const fan = await registerUser({ instance: A });
    expect(
      (await call(`/api/v1/accounts/${me.id}/follow`, { instance: A, token: fan.token, method: "POST" })).status,
    ).toBe(200);
    await statusOf(await postA(me, { status: "just us" }));
    expect(await outboxRows(me.id)).toEqual([]);
  });

  it("a host the author blocked gets nothing", async () => {
    const { me, h1, h2, f3 } = await withFollowers();
    // Written straight in: blocking through the API also removes that host's followers.
    await env.DB.prepare("INSERT INTO domain_blocks (id, account_id, domain, created_at) VALUES (?, ?, ?, ?)")
      .bind(newId(), me.id, h1, Date.now())
      .run();
    await statusOf(await postA(me, { status: "not for h1" }));
    await drainFederation(A.bindings);
    expect(inboxes()).toEqual([f3.inbox]);
    expect(received.every((r) => r.host === h2)).toBe(true);
  });

  it("each POST is signed with the author's key, which A's actor publishes", async () => {
    const { me } = await withFollowers();
    await statusOf(await postA(me, { status: "signed" }));
    await drainFederation(A.bindings);
    expect(received.length).toBe(2);
    const ctx = await federationContext(A.bindings, A.origin);
    for (const r of received) {
      expect(r.req.headers.get("signature")).toContain(`keyId="${A.origin}/users/${me.username}#main-key"`);
      const key = await verifyRequest(r.req.clone(), {
        documentLoader: ctx.documentLoader,
        contextLoader: ctx.contextLoader,
      });
      expect(key?.ownerId?.href).toBe(`${A.origin}/users/${me.username}`);
      // A tampered body does not verify.
      const forged = new Request(r.req.url, {
        method: "POST",
        headers: r.req.headers,
        body: JSON.stringify({ ...r.body, id: "https://evil.test/x" }),
      });
      expect(
        await verifyRequest(forged, { documentLoader: ctx.documentLoader, contextLoader: ctx.contextLoader }),
      ).toBeNull();
    }
  });
});

describe("deletes", () => {
  it("deleting a status sends a Delete with a Tombstone to the same inboxes", async () => {
    const { me, h1, f3 } = await withFollowers();
    const s = await statusOf(await postA(me, { status: "soon gone" }));
    await drainFederation(A.bindings);
    received = [];
    expect((await call(`/api/v1/statuses/${s.id}`, { instance: A, token: me.token, method: "DELETE" })).status).toBe(
      200,
    );
    expect(woken.at(-1)).toContain(h1);
    await drainFederation(A.bindings);
    expect(inboxes()).toEqual([`https://${h1}/inbox`, f3.inbox].sort());
    const doc = received[0]!.body;
    expect(doc.type).toBe("Delete");
    expect(doc.object).toMatchObject({ type: "Tombstone", id: s.uri });
  });

  it("an expiring post's Delete goes out from the cron that expires it", async () => {
    const { me, h1 } = await withFollowers();
    const s = await statusOf(await postA(me, { status: "ephemeral", expires_in: 3700 }));
    await drainFederation(A.bindings);
    received = [];
    woken = [];
    const later = Date.now() + 3800_000;
    await runScheduled(A.bindings, later);
    // The cron expanded the Delete and woke its hosts.
    expect(woken.flat()).toContain(h1);
    await drainFederation(A.bindings, later);
    const deletes = received.filter((r) => r.body.type === "Delete" && r.body.object.id === s.uri);
    expect(deletes.map((r) => r.host).sort()).toContain(h1);
  });

  it("deleting a local-only status sends nothing", async () => {
    const { me } = await withFollowers();
    const s = await statusOf(await postA(me, { status: "stays here", visibility: "local" }));
    expect((await call(`/api/v1/statuses/${s.id}`, { instance: A, token: me.token, method: "DELETE" })).status).toBe(
      200,
    );
    expect(await outboxRows(me.id)).toEqual([]);
  });
});

describe("follows", () => {
  it("following a remote account sends Follow; unfollowing sends Undo of that Follow", async () => {
    const me = await registerUser({ instance: A });
    const r = await remote(host());
    const rel = await call(`/api/v1/accounts/${r.id}/follow`, { instance: A, token: me.token, method: "POST" });
    expect(valid(RelationshipSchema, await rel.json()).requested).toBe(true);
    await drainFederation(A.bindings);
    expect(received.map((x) => x.url)).toEqual([r.inbox]);
    const follow = received[0]!.body;
    expect(follow).toMatchObject({ type: "Follow", actor: `${A.origin}/users/${me.username}`, object: r.uri });
    const row = await env.DB.prepare("SELECT uri FROM follow_requests WHERE account_id = ? AND target_account_id = ?")
      .bind(me.id, r.id)
      .first<{ uri: string }>();
    expect(follow.id).toBe(row!.uri);
    // A repeated follow sends nothing new.
    received = [];
    await call(`/api/v1/accounts/${r.id}/follow`, { instance: A, token: me.token, method: "POST" });
    await drainFederation(A.bindings);
    expect(received).toEqual([]);

    expect(
      (await call(`/api/v1/accounts/${r.id}/unfollow`, { instance: A, token: me.token, method: "POST" })).status,
    ).toBe(200);
    await drainFederation(A.bindings);
    expect(received.map((x) => x.body.type)).toEqual(["Undo"]);
    expect(received[0]!.body.object).toMatchObject({ type: "Follow", id: follow.id, object: r.uri });
    // Unfollowing again (nothing left to undo) sends nothing.
    received = [];
    await call(`/api/v1/accounts/${r.id}/unfollow`, { instance: A, token: me.token, method: "POST" });
    await drainFederation(A.bindings);
    expect(received).toEqual([]);
  });

  it("authorizing a remote request sends Accept of their Follow; rejecting sends Reject", async () => {
    const me = await registerUser({ instance: A });
    const [r1, r2] = [await remote(host()), await remote(host())];
    for (const r of [r1, r2]) {
      await env.DB.prepare(
        "INSERT INTO follow_requests (id, account_id, target_account_id, created_at, uri) VALUES (?, ?, ?, ?, ?)",
      )
        .bind(newId(), r.id, me.id, Date.now(), `${r.uri}/follows/1`)
        .run();
    }
    expect(
      (await call(`/api/v1/follow_requests/${r1.id}/authorize`, { instance: A, token: me.token, method: "POST" }))
        .status,
    ).toBe(200);
    expect(
      (await call(`/api/v1/follow_requests/${r2.id}/reject`, { instance: A, token: me.token, method: "POST" })).status,
    ).toBe(200);
    await drainFederation(A.bindings);
    const byType = Object.fromEntries(received.map((x) => [x.body.type, x]));
    expect(byType.Accept!.url).toBe(r1.inbox);
    expect(byType.Accept!.body.object).toMatchObject({
      type: "Follow",
      id: `${r1.uri}/follows/1`,
      actor: r1.uri,
      object: `${A.origin}/users/${me.username}`,
    });
    expect(byType.Reject!.url).toBe(r2.inbox);
    expect(byType.Reject!.body.object.id).toBe(`${r2.uri}/follows/1`);
  });
});

describe("retries", () => {
  it("a 5xx is retried with backoff; 410 is dropped; after two days the host is marked failing", async () => {
    const { me, h1, h2 } = await withFollowers();
    answer = (h) => (h === h1 ? 500 : 410);
    await statusOf(await postA(me, { status: "flaky" }));
    const t = Date.now();
    await drainFederation(A.bindings, t);
    expect(received.length).toBe(2);
    const rows = async (h: string) =>
      (await env.DB.prepare("SELECT * FROM federation_deliveries WHERE host = ?").bind(h).all<any>()).results;
    expect(await rows(h2)).toEqual([]);
    const [kept] = await rows(h1);
    expect(kept).toMatchObject({ attempts: 1, next_at: t + 30_000 });
    expect(
      await env.DB.prepare("SELECT failure_count, failing_since FROM instances WHERE domain = ?").bind(h1).first(),
    ).toMatchObject({ failure_count: 1, failing_since: null });
    // Not due yet: nothing is sent.
    received = [];
    await drainFederation(A.bindings, t + 29_000);
    expect(received).toEqual([]);
    // Due: tried again and failing again, 60 s later next.
    await drainFederation(A.bindings, t + 30_000);
    expect(received.map((r) => r.host)).toEqual([h1]);
    expect((await rows(h1))[0]).toMatchObject({ attempts: 2, next_at: t + 90_000 });
    // Two days on, the next failure gives up: the row is dropped and the host marked failing.
    await drainFederation(A.bindings, kept.created_at + GIVE_UP_MS);
    expect(await rows(h1)).toEqual([]);
    expect(await env.DB.prepare("SELECT failing_since FROM instances WHERE domain = ?").bind(h1).first()).toMatchObject(
      { failing_since: kept.created_at + GIVE_UP_MS },
    );
    // A later success clears it (the host, failing for days, is probed 6 h after its last failure).
    answer = () => 202;
    await statusOf(await postA(me, { status: "back" }));
    await drainFederation(A.bindings, Date.now() + GIVE_UP_MS + PROBE_EVERY_MS);
    expect(
      await env.DB.prepare("SELECT failure_count, failing_since FROM instances WHERE domain = ?").bind(h1).first(),
    ).toMatchObject({ failure_count: 0, failing_since: null });
  });

  it("a later activity waits for an earlier one of the same actor to the same host: a Delete never overtakes its Create", async () => {
    const { me, h1, h2 } = await withFollowers();
    let fail = true;
    answer = (h) => (h === h1 && fail ? 503 : 202);
    const s = await statusOf(await postA(me, { status: "soon gone" }));
    const t = Date.now();
    await drainFederation(A.bindings, t);
    expect((await call(`/api/v1/statuses/${s.id}`, { instance: A, token: me.token, method: "DELETE" })).status).toBe(
      200,
    );
    received = [];
    // The Delete is due at once, but h1 still owes the Create: only h2 (which had it) gets the Delete now.
    await drainFederation(A.bindings, t + 1_000);
    expect(received.map((r) => [r.host, r.body.type])).toEqual([[h2, "Delete"]]);
    fail = false;
    received = [];
    await drainFederation(A.bindings, t + 30_000);
    expect(received.map((r) => [r.host, r.body.type])).toEqual([
      [h1, "Create"],
      [h1, "Delete"],
    ]);
  });

  it("a 401 is retried (the receiver may not have our key yet), as Mastodon does; the request names Starling", async () => {
    const { me, h1 } = await withFollowers();
    answer = (h) => (h === h1 ? 401 : 202);
    await statusOf(await postA(me, { status: "who are you" }));
    await drainFederation(A.bindings, Date.now());
    const kept = (await env.DB.prepare("SELECT attempts FROM federation_deliveries WHERE host = ?").bind(h1).all())
      .results;
    expect(kept).toEqual([{ attempts: 1 }]);
    expect(received[0]!.req.headers.get("user-agent")).toBe("Starling/0.1.0 (+https://a.example/)");
    // Once the receiver knows the key, the retry is delivered (and nothing is left for later tests' drains).
    answer = () => 202;
    received = [];
    await drainFederation(A.bindings, Date.now() + 30_000);
    expect(received.map((r) => r.host)).toEqual([h1]);
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM federation_deliveries WHERE host = ?").bind(h1).first())!.n,
    ).toBe(0);
  });

  it("a recovered 5xx is delivered on the retry", async () => {
    const { me, h1 } = await withFollowers();
    let fail = true;
    answer = (h) => (h === h1 && fail ? 503 : 202);
    await statusOf(await postA(me, { status: "eventually" }));
    const t = Date.now();
    await drainFederation(A.bindings, t);
    fail = false;
    received = [];
    await drainFederation(A.bindings, t + 30_000);
    expect(received.map((r) => r.url)).toEqual([`https://${h1}/inbox`]);
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM federation_deliveries WHERE host = ?").bind(h1).first())!.n,
    ).toBe(0);
  });

  it("a host failing for over a day is only probed, one delivery every 6 h, without holding other hosts; a success lets the rest through", async () => {
    const { me, h1, h2 } = await withFollowers();
    const text = (r: Received) => String(r.body.object.content).replace(/<[^>]+>/g, "");
    let down = true;
    answer = (h) => (h === h1 && down ? 503 : 202);
    await statusOf(await postA(me, { status: "first" }));
    const t = Date.now();
    await drainFederation(A.bindings, t);
    const instance = () =>
      env.DB.prepare("SELECT unreachable_since, last_failure_at FROM instances WHERE domain = ?").bind(h1).first();
    expect(await instance()).toMatchObject({ unreachable_since: t, last_failure_at: t });
    const rows = async (h: string) =>
      (
        await env.DB.prepare(
          "SELECT attempts, last_attempt_at, last_error FROM federation_deliveries WHERE host = ? ORDER BY outbox_id",
        )
          .bind(h)
          .all<any>()
      ).results;
    expect(await rows(h1)).toEqual([{ attempts: 1, last_attempt_at: t, last_error: "HTTP 503" }]);

    // A day later, still down, with a second post waiting: one probe (the oldest) goes to h1; h2 gets its post.
    await statusOf(await postA(me, { status: "second" }));
    const day = t + UNREACHABLE_AFTER_MS + 1000;
    received = [];
    await drainFederation(A.bindings, day);
    expect(received.filter((r) => r.host === h1).map((r) => text(r))).toEqual(["first"]);
    expect(received.filter((r) => r.host === h2).map((r) => text(r))).toEqual(["second"]);
    expect((await rows(h1)).map((r) => r.attempts)).toEqual([2, 0]);
    // Until the next probe nothing goes to h1, though its deliveries are due; its object sleeps until then.
    received = [];
    await drainFederation(A.bindings, day + 3600_000);
    expect(received).toEqual([]);
    expect(await deliverHost(A.bindings, h1, day + 3600_000)).toEqual({
      delivered: 0,
      attempted: 0,
      next: day + PROBE_EVERY_MS,
    });
    // Anyone may read the queue's health: these two deliveries are retrying or waiting.
    const stats = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck", { instance: A })).job_queue_stats
      .federation as Record<string, number>;
    expect(stats.retrying_deliveries).toBeGreaterThanOrEqual(1);
    // The probe 6 h on succeeds: the waiting post follows at once, and the host is reachable again.
    down = false;
    await drainFederation(A.bindings, day + PROBE_EVERY_MS);
    expect(received.filter((r) => r.host === h1).map((r) => text(r))).toEqual(["first", "second"]);
    expect(await rows(h1)).toEqual([]);
    expect(await instance()).toMatchObject({ unreachable_since: null });
  });

  it("an unreachable host's waiting deliveries are dropped by the sweep once past the give-up time, and the host marked failing", async () => {
    const { me, h1, h2 } = await withFollowers();
    answer = (h) => (h === h1 ? 503 : 202);
    await statusOf(await postA(me, { status: "one" }));
    const t = Date.now();
    await drainFederation(A.bindings, t);
    await statusOf(await postA(me, { status: "two" }));
    const count = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM federation_deliveries WHERE host = ?")
        .bind(h1)
        .first<{ n: number }>())!.n;
    // A day on: still kept (waiting for probes).
    await sweepFederation(A.bindings, t + UNREACHABLE_AFTER_MS + 1000);
    expect(await count()).toBe(2);
    // Past the give-up time: dropped without a try; the other host's are not touched.
    received = [];
    await sweepFederation(A.bindings, Date.now() + GIVE_UP_MS + 1000);
    expect(await count()).toBe(0);
    expect(received).toEqual([]);
    expect(
      (await env.DB.prepare("SELECT failing_since FROM instances WHERE domain = ?")
        .bind(h1)
        .first<{ failing_since: number | null }>())!.failing_since,
    ).not.toBeNull();
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM instances WHERE domain = ? AND failing_since IS NOT NULL")
        .bind(h2)
        .first(),
    ).toEqual({ n: 0 });
    // h2's second post is still there for its own delivery (and nothing is left for later tests' drains).
    await drainFederation(A.bindings, Date.now());
    expect(received.map((r) => r.host)).toEqual([h2]);
  });
});

describe("kicks", () => {
  it("a scheduled post's Create goes out from the cron that publishes it", async () => {
    const { me, h1 } = await withFollowers();
    const at = Date.now() + 600_000;
    const res = await postA(me, { status: "later, to everyone", scheduled_at: new Date(at).toISOString() });
    expect(res.status).toBe(200);
    await drainFederation(A.bindings);
    expect(received).toEqual([]);
    await runScheduled(A.bindings, at + 1000);
    expect(woken.flat()).toContain(h1);
    await drainFederation(A.bindings, at + 1000);
    expect(
      received
        .filter((r) => r.body.type === "Create" && r.body.object.content.includes("later, to everyone"))
        .map((r) => r.host),
    ).toContain(h1);
  });

  it("a host's delivery object, woken, delivers from its alarm with the Worker's own bindings", async () => {
    const me = await registerUser({ instance: A });
    await signingKey(D(), me.id);
    const t = Date.now();
    const oid = newId();
    const marker = `https://a.example/objects/${oid}`;
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO federation_outbox (id, account_id, activity, body, created_at, expanded_at) VALUES (?, ?, ?, ?, ?, ?)",
      ).bind(
        oid,
        me.id,
        JSON.stringify({ type: "Create", statusId: oid }),
        JSON.stringify({ type: "Create", id: marker }),
        t,
        t,
      ),
      env.DB.prepare(
        "INSERT INTO federation_deliveries (id, outbox_id, host, inbox, attempts, next_at, created_at) VALUES (?, ?, ?, ?, 0, ?, ?)",
      ).bind(`${oid}-1`, oid, PUBLIC_IP, `https://${PUBLIC_IP}/inbox`, t, t),
    ]);
    await realWake(env as never, [PUBLIC_IP]);
    await runDurableObjectAlarm(env.DELIVERY.get(env.DELIVERY.idFromName(PUBLIC_IP)));
    await vi.waitUntil(() => received.some((r) => r.body.id === marker), { timeout: 5000 });
    expect(received.find((r) => r.body.id === marker)!.req.headers.get("signature")).toContain(
      `keyId="${A.origin}/users/${me.username}#main-key"`,
    );
    await vi.waitUntil(
      async () =>
        (await env.DB.prepare("SELECT count(*) AS n FROM federation_deliveries WHERE outbox_id = ?")
          .bind(oid)
          .first<{ n: number }>())!.n === 0,
      { timeout: 5000 },
    );
  });

  it("the cron sweep expands a row nobody kicked and wakes its host", async () => {
    const me = await registerUser({ instance: A });
    const r = await remote(host());
    const t = Date.now();
    await D().$client.batch([
      outboxWrite(
        D(),
        me.id,
        { type: "Follow", uri: `${A.origin}/users/${me.username}#follows/x${t}`, targetId: r.id },
        t,
      ),
    ]);
    await runScheduled(A.bindings, t);
    expect(woken.flat()).toContain(r.domain);
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM federation_deliveries WHERE host = ?").bind(r.domain).first())!
        .n,
    ).toBe(1);
    await drainFederation(A.bindings);
    expect(received.map((x) => x.body.type)).toEqual(["Follow"]);
  });

  it("the post answers before anything is sent, with no more D1 round trips than without remote followers", async () => {
    const { me, h1 } = await withFollowers();
    const lonely = await registerUser({ instance: A });
    // The response: nothing sent, the hosts woken only after it (waitUntil).
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${A.origin}/api/v1/statuses`, {
        method: "POST",
        headers: { Authorization: `Bearer ${me.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ status: "fast" }),
      }),
      A.bindings,
      ctx,
    );
    expect(res.status).toBe(200);
    expect(received).toEqual([]);
    await waitOnExecutionContext(ctx);
    expect(received).toEqual([]);
    expect(woken.flat()).toContain(h1);
    // Round trips of the request itself (DOMAIN unset: the kick after it builds nothing and reads nothing).
    const trips = async (user: TestUser) => {
      const counter = countingD1(env.DB);
      const r = await call("/api/v1/statuses", {
        token: user.token,
        body: { status: "count" },
        vars: { ...A.bindings, DOMAIN: "", DB: counter.db } as never,
      });
      expect(r.status).toBe(200);
      return counter.count();
    };
    const withRemote = await trips(me);
    expect(withRemote).toBe(await trips(lonely));
    expect((await outboxRows(me.id)).some((o: any) => o.expanded_at === null)).toBe(true);
  });

  /** Whether `user`'s request to `path` was followed by a delivery kick (which claims outbox rows to expand). */
  const kickedBy = async (user: TestUser, path: string, body: object = {}, method = "POST") => {
    const counter = countingD1(env.DB);
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${A.origin}${path}`, {
        method,
        headers: { Authorization: `Bearer ${user.token}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      }),
      { ...A.bindings, DB: counter.db },
      ctx,
    );
    expect(res.status).toBe(200);
    await waitOnExecutionContext(ctx);
    // The kick claims outbox rows to expand: an UPDATE of federation_outbox.
    return counter.statements().some((x) => /^\s*UPDATE federation_outbox/i.test(x.sql));
  };

  it("a post with no remote audience makes no delivery kick after it; one with remote followers does", async () => {
    const { me } = await withFollowers();
    const lonely = await registerUser({ instance: A });
    const kicked = (user: TestUser, visibility = "public") =>
      kickedBy(user, "/api/v1/statuses", { status: "kick?", visibility });
    expect(await kicked(lonely)).toBe(false);
    expect(await kicked(me)).toBe(true);
    // Local-only: nothing federates, so no kick either.
    expect(await kicked(me, "local")).toBe(false);
  });

  it("wakes from the outbox rows any action's batch wrote, with no flag set by the action (db/outbox-signal.ts)", async () => {
    const { me } = await withFollowers();
    const lonely = await registerUser({ instance: A });
    const s = await statusOf(await postA(me, { status: "pin me", visibility: "public" }));
    const t = await statusOf(await postA(lonely, { status: "pin me too", visibility: "public" }));
    // A pin is an Add to the featured collection, for the followers' servers; a bookmark is nobody else's.
    expect(await kickedBy(me, `/api/v1/statuses/${s.id}/bookmark`)).toBe(false);
    expect(await kickedBy(me, `/api/v1/statuses/${s.id}/pin`)).toBe(true);
    expect(await kickedBy(me, `/api/v1/statuses/${s.id}/unpin`)).toBe(true);
    // The same action whose audience gate wrote no row (no remote follower) wakes nothing.
    expect(await kickedBy(lonely, `/api/v1/statuses/${t.id}/pin`)).toBe(false);
    // A profile update is an Update of the actor to the followers' servers.
    expect(await kickedBy(me, "/api/v1/accounts/update_credentials", { display_name: "Renamed" }, "PATCH")).toBe(true);
  });
});

describe("a poll's final tallies (issue 30: the gate agrees with the expansion)", () => {
  it("reach a remote account that only reblogged the poll: the outbox row is written and delivered to it", async () => {
    const me = await registerUser({ instance: A });
    const booster = await remote(host());
    const s = await statusOf(
      await postA(me, { status: "vote", visibility: "public", poll: { options: ["a", "b"], expires_in: 3600 } }),
    );
    // The remote reblog, as the inbox stores an Announce.
    await env.DB.prepare(
      "INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, reblog_of_id, created_at) VALUES (?1, ?2, ?2, ?3, ?1, 'ctx', '', '', 'public', 0, ?4, ?5)",
    )
      .bind(newId(), `${booster.uri}/statuses/boost`, booster.id, s.id, Date.now())
      .run();
    await env.DB.prepare("UPDATE polls SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1000, s.poll!.id)
      .run();
    expect(await closeEndedPolls(D(), Date.now())).toBe(1);
    const kinds = (await outboxRows(me.id)).map((o: any) => JSON.parse(o.activity).type);
    expect(kinds).toContain("UpdatePoll");
    await drainFederation(A.bindings);
    const update = received.find((r) => r.body.type === "Update");
    expect(update?.url).toBe(`https://${booster.domain}/inbox`);
    expect(update?.body.object.type).toBe("Question");
  });
});

describe("one audience rule per activity kind (issue 30): the gate and the expansion read the same set", () => {
  it("every kind reaches exactly its audience, and writes a row exactly when it reaches someone", async () => {
    const me = await registerUser({ instance: A });
    const lonely = await registerUser({ instance: A });
    const [fan, other] = [await remote(host()), await remote(host())];
    await follows(fan.id, me.id);
    const shared = (r: { domain: string }) => `https://${r.domain}/inbox`;
    // A public status of mine addressing `other`; a remote public status of `other` I voted in and reblogged.
    const mine = await statusOf(await postA(me, { status: "to all", visibility: "public" }));
    const quiet = await statusOf(await postA(lonely, { status: "nobody hears", visibility: "public" }));
    await env.DB.prepare("INSERT INTO status_recipients (status_id, account_id, mention) VALUES (?, ?, 1)")
      .bind(mine.id, other.id)
      .run();
    const theirs = newId();
    await env.DB.prepare(
      "INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at) VALUES (?1, ?2, ?2, ?3, ?1, 'ctx', '<p>far</p>', '', 'public', 0, ?4)",
    )
      .bind(theirs, `${other.uri}/statuses/${theirs}`, other.id, Date.now())
      .run();
    const [pollId, voteId] = [newId(), newId()];
    await env.DB.batch([
      env.DB.prepare(
        'INSERT INTO polls (id, status_id, options, multiple, hide_totals, created_at) VALUES (?, ?, \'["a","b"]\', 0, 0, ?)',
      ).bind(pollId, theirs, Date.now()),
      env.DB.prepare(
        "INSERT INTO poll_votes (id, poll_id, account_id, choice, created_at) VALUES (?, ?, ?, 0, ?)",
      ).bind(voteId, pollId, me.id, Date.now()),
    ]);
    const boost = (await json(`/api/v1/statuses/${theirs}/reblog`, {
      method: "POST",
      instance: A,
      token: me.token,
    })) as { id: string };
    const t = { targetId: other.id, uri: "https://a.example/x", objectUri: `${other.uri}/statuses/${theirs}` };
    const react = { ...t, emoji: "🔥", emojiFile: null };
    const kinds: { [K in keyof typeof AUDIENCE]: [OutboxActivity, string[]] } = {
      Create: [{ type: "Create", statusId: mine.id }, [shared(fan), shared(other)]],
      Update: [{ type: "Update", statusId: mine.id }, [shared(fan), shared(other)]],
      Delete: [
        { type: "Delete", statusId: mine.id, uri: mine.uri, visibility: "public", recipients: [other.id] },
        [shared(fan), shared(other)],
      ],
      Follow: [{ type: "Follow", uri: t.uri, targetId: other.id }, [other.inbox]],
      Undo: [{ type: "Undo", object: "Follow", uri: t.uri, targetId: other.id }, [other.inbox]],
      Accept: [{ type: "Accept", uri: t.uri, followerId: fan.id }, [fan.inbox]],
      Reject: [{ type: "Reject", uri: t.uri, followerId: fan.id }, [fan.inbox]],
      UpdateActor: [{ type: "UpdateActor" }, [shared(fan)]],
      Move: [{ type: "Move", targetId: other.id }, [shared(fan)]],
      AddFeatured: [{ type: "AddFeatured", statusId: mine.id, uri: mine.uri }, [shared(fan)]],
      RemoveFeatured: [{ type: "RemoveFeatured", statusId: mine.id, uri: mine.uri }, [shared(fan)]],
      ChatMessage: [{ type: "ChatMessage", messageId: newId(), recipientId: other.id }, [other.inbox]],
      DeleteChatMessage: [{ type: "DeleteChatMessage", messageId: newId(), recipientId: other.id }, [other.inbox]],
      DeleteActor: [{ type: "DeleteActor" }, [shared(fan)]],
      Vote: [{ type: "Vote", voteId }, [other.inbox]],
      UpdatePoll: [{ type: "UpdatePoll", statusId: mine.id }, [shared(fan), shared(other)]],
      Block: [{ type: "Block", uri: t.uri, targetId: other.id }, [other.inbox]],
      UndoBlock: [{ type: "UndoBlock", uri: t.uri, targetId: other.id }, [other.inbox]],
      Flag: [{ type: "Flag", reportId: newId(), targetId: other.id, objectUris: [], comment: "" }, [shared(other)]],
      Like: [{ type: "Like", ...t }, [other.inbox]],
      UndoLike: [{ type: "UndoLike", ...t }, [other.inbox]],
      EmojiReact: [{ type: "EmojiReact", ...react }, [other.inbox]],
      UndoEmojiReact: [{ type: "UndoEmojiReact", ...react }, [other.inbox]],
      Announce: [{ type: "Announce", statusId: boost.id }, [shared(fan), shared(other)]],
      UndoAnnounce: [
        { type: "UndoAnnounce", uri: t.uri, objectUri: t.objectUri, visibility: "public", originalAuthorId: other.id },
        [shared(fan), shared(other)],
      ],
      // FEP-044f's exchanges (issue 46): one inbox each.
      QuoteRequest: [
        { type: "QuoteRequest", uri: t.uri, statusId: mine.id, objectUri: t.objectUri, targetId: other.id },
        [other.inbox],
      ],
      // GoToSocial's interaction requests (issue 49): to the post's author alone.
      InteractionRequest: [
        { type: "InteractionRequest", kind: "like", ...t, statusId: null, likeUri: `${t.uri}#like` },
        [other.inbox],
      ],
      QuoteAccept: [
        {
          type: "QuoteAccept",
          uri: t.uri,
          objectUri: mine.uri,
          instrument: t.objectUri,
          requesterId: fan.id,
          result: t.uri,
        },
        [fan.inbox],
      ],
      QuoteReject: [
        {
          type: "QuoteReject",
          uri: t.uri,
          objectUri: mine.uri,
          instrument: t.objectUri,
          requesterId: fan.id,
          result: null,
        },
        [fan.inbox],
      ],
      DeleteQuoteAuthorization: [{ type: "DeleteQuoteAuthorization", uri: t.uri, targetId: other.id }, [other.inbox]],
      // GoToSocial's polite requests answered (issue 49): to the requester's inbox.
      InteractionAccept: [
        {
          type: "InteractionAccept",
          request: "LikeRequest",
          uri: t.uri,
          requestUri: t.uri,
          objectUri: mine.uri,
          instrument: t.objectUri,
          requesterId: fan.id,
        },
        [fan.inbox],
      ],
      InteractionReject: [
        {
          type: "InteractionReject",
          request: "ReplyRequest",
          uri: t.uri,
          requestUri: t.uri,
          objectUri: mine.uri,
          instrument: t.objectUri,
          requesterId: fan.id,
        },
        [fan.inbox],
      ],
      // A relay's inbox is named by the activity (issue 36): it reaches it whoever sends it.
      RelayFollow: [{ type: "RelayFollow", uri: t.uri, inbox: shared(other), object: other.uri }, [shared(other)]],
      RelayUndo: [{ type: "RelayUndo", uri: t.uri, inbox: shared(other), object: other.uri }, [shared(other)]],
      RelayAccept: [{ type: "RelayAccept", uri: t.uri, inbox: shared(other), actor: other.uri }, [shared(other)]],
    };
    const relayKinds = new Set(["RelayFollow", "RelayUndo", "RelayAccept"]);
    const gate = async (actor: string, a: OutboxActivity) =>
      Boolean((await statement(D(), sql`SELECT ${hasAudience(actor, a)} AS yes`).first<{ yes: number }>())!.yes);
    const sent = async (actor: string, a: OutboxActivity) =>
      (await statement(D(), inboxesOf(actor, a)).all<{ inbox: string }>()).results.map((r) => r.inbox).sort();
    for (const [kind, [activity, expected]] of Object.entries(kinds)) {
      expect(await sent(me.id, activity), kind).toEqual([...expected].sort());
      expect(await gate(me.id, activity), kind).toBe(true);
      if (relayKinds.has(kind)) continue;
      // The same kind from an account nobody remote follows, about local or unknown subjects: no one, no row.
      const local = JSON.parse(
        JSON.stringify(activity)
          .replaceAll(mine.id, quiet.id)
          .replaceAll(other.id, lonely.id)
          .replaceAll(fan.id, lonely.id)
          .replaceAll(voteId, newId())
          .replaceAll(boost.id, quiet.id),
      );
      expect(await sent(lonely.id, local), `${kind}, nobody`).toEqual([]);
      expect(await gate(lonely.id, local), `${kind}, nobody`).toBe(false);
    }
  });
});

describe("the audience of a status by its visibility and the actor's blocks (issue 30)", () => {
  it("private: followers and those addressed; direct and list: only those addressed; local-only: nobody; blocked hosts never", async () => {
    const me = await registerUser({ instance: A });
    const [fan, addressed, blocker, walledOff, rejected] = [
      await remote(host()),
      await remote(host()),
      await remote(host()),
      await remote(host()),
      await remote(host()),
    ];
    for (const f of [fan, blocker, walledOff, rejected]) await follows(f.id, me.id);
    // `blocker` blocks me; I block `walledOff`'s domain; the instance rejects `rejected`'s.
    await env.DB.batch([
      env.DB.prepare("INSERT INTO blocks (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)").bind(
        newId(),
        blocker.id,
        me.id,
        Date.now(),
      ),
      env.DB.prepare("INSERT INTO domain_blocks (id, account_id, domain, created_at) VALUES (?, ?, ?, ?)").bind(
        newId(),
        me.id,
        walledOff.domain,
        Date.now(),
      ),
      env.DB.prepare("INSERT INTO federation_policies (domain, policy, created_at) VALUES (?, 'reject', ?)").bind(
        rejected.domain,
        Date.now(),
      ),
    ]);
    try {
      const shared = (r: { domain: string }) => `https://${r.domain}/inbox`;
      const sentFor = async (visibility: string) => {
        const s = await statusOf(await postA(me, { status: `to whom? (${visibility})`, visibility }));
        await env.DB.prepare(
          "INSERT OR IGNORE INTO status_recipients (status_id, account_id, mention) VALUES (?, ?, 1)",
        )
          .bind(s.id, addressed.id)
          .run();
        const a: OutboxActivity = { type: "Create", statusId: s.id };
        const rows = (await statement(D(), inboxesOf(me.id, a)).all<{ inbox: string }>()).results
          .map((r) => r.inbox)
          .sort();
        const gate = (await statement(D(), sql`SELECT ${hasAudience(me.id, a)} AS yes`).first<{ yes: number }>())!.yes;
        expect(Boolean(gate), visibility).toBe(rows.length > 0);
        return rows;
      };
      expect(await sentFor("public")).toEqual([shared(fan), shared(addressed)].sort());
      expect(await sentFor("private")).toEqual([shared(fan), shared(addressed)].sort());
      expect(await sentFor("direct")).toEqual([shared(addressed)]);
      expect(await sentFor("local")).toEqual([]);
      // Blocks hold for a one-account audience too: a rejected server gets not even a Follow.
      const follow: OutboxActivity = { type: "Follow", uri: "https://a.example/f", targetId: rejected.id };
      expect((await statement(D(), inboxesOf(me.id, follow)).all()).results).toEqual([]);
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies WHERE domain = ?").bind(rejected.domain).run();
    }
  });
});

describe("federation policies hold for hosts on any port (issue 30)", () => {
  it("a rejected domain gets nothing at its non-default port, as its activities from there are refused", async () => {
    const me = await registerUser({ instance: A });
    const name = host();
    const onPort = await remote(`${name}:8443`);
    const plain = await remote(host());
    for (const f of [onPort, plain]) await follows(f.id, me.id);
    await env.DB.prepare("INSERT INTO federation_policies (domain, policy, created_at) VALUES (?, 'reject', ?)")
      .bind(name, Date.now())
      .run();
    try {
      await statusOf(await postA(me, { status: "not for them", visibility: "public" }));
      await drainFederation(A.bindings);
      // (Earlier tests' rows may be drained here too: only these two hosts are looked at.)
      const ours = received.map((r) => r.host).filter((h) => h === onPort.domain || h === plain.domain);
      expect(ours).toEqual([plain.domain]);
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies WHERE domain = ?").bind(name).run();
    }
  });
});

describe("every action that writes outbox rows wakes delivery at once (issue 30)", () => {
  it("unblocking and a forwarded report too (they waited for the cron)", async () => {
    const { me } = await withFollowers();
    const other = await remote(host());
    const kickedBy = async (path: string, body: Record<string, unknown> = {}, method = "POST", token = me.token) => {
      const counter = countingD1(env.DB);
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request(`${A.origin}${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify(body),
        }),
        { ...A.bindings, DB: counter.db },
        ctx,
      );
      expect(res.status, await res.clone().text()).toBe(200);
      await waitOnExecutionContext(ctx);
      return counter.statements().some((x) => /^\s*UPDATE federation_outbox/i.test(x.sql));
    };
    expect(await kickedBy(`/api/v1/accounts/${other.id}/block`)).toBe(true);
    expect(await kickedBy(`/api/v1/accounts/${other.id}/unblock`)).toBe(true);
    expect(await kickedBy("/api/v1/reports", { account_id: other.id, comment: "spam", forward: true })).toBe(true);
    // Both activities were written: the kick had something to send.
    const kinds = (await outboxRows(me.id)).map((o: any) => JSON.parse(o.activity).type);
    expect(kinds).toEqual(expect.arrayContaining(["UndoBlock", "Flag"]));
    // An admin deleting a user: its actor's Delete goes out at once too.
    const admin = await registerUser({ instance: A, scopes: "read write admin" });
    await makeAdmin(admin.id);
    expect(await kickedBy("/api/v1/pleroma/admin/users", { nicknames: [me.username] }, "DELETE", admin.token)).toBe(
      true,
    );
    expect((await outboxRows(me.id)).map((o: any) => JSON.parse(o.activity).type)).toContain("DeleteActor");
  });
});

describe("the public collection, named in full", () => {
  /** Whether a document names the public collection in a compact form anywhere (`as:Public`, `Public`). */
  const compactPublic = (doc: unknown) => /"(as:)?Public"/.test(JSON.stringify(doc));

  it("every activity kind Starling sends, and the documents it serves, say https://www.w3.org/ns/activitystreams#Public", async () => {
    const { me } = await withFollowers();
    const other = await remote(host());
    // A remote status to favourite, react to and reblog (stored as the inbox stores one).
    const remoteStatus = newId();
    await env.DB.prepare(
      `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
       VALUES (?1, ?2, ?2, ?3, ?1, 'ctx', '<p>far</p>', '', 'public', 0, ?4)`,
    )
      .bind(remoteStatus, `https://${other.domain}/statuses/${remoteStatus}`, other.id, Date.now())
      .run();
    await env.DB.prepare("UPDATE accounts SET accepts_chat_messages = 1 WHERE id = ?").bind(other.id).run();
    const act = async (path: string, body?: Record<string, unknown>, method = "POST") => {
      const res = await call(path, { instance: A, token: me.token, method, body });
      expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(200);
      return res.json() as Promise<any>;
    };
    const pub = await act("/api/v1/statuses", {
      status: `public @${other.name}@${other.domain}`,
      visibility: "public",
    });
    const unlisted = await act("/api/v1/statuses", { status: "unlisted", visibility: "unlisted" });
    await act("/api/v1/statuses", {
      status: "a poll",
      visibility: "public",
      poll: { options: ["a", "b"], expires_in: 3600 },
    });
    await act(`/api/v1/statuses/${pub.id}/pin`);
    await act(`/api/v1/statuses/${pub.id}/unpin`);
    await act(`/api/v1/statuses/${unlisted.id}/reblog`);
    await act(`/api/v1/statuses/${unlisted.id}/unreblog`);
    await act(`/api/v1/statuses/${remoteStatus}/reblog`);
    await act(`/api/v1/statuses/${remoteStatus}/favourite`);
    await act(`/api/v1/statuses/${remoteStatus}/unfavourite`);
    await act(`/api/v1/pleroma/statuses/${remoteStatus}/reactions/🐦`, undefined, "PUT");
    await act(`/api/v1/pleroma/statuses/${remoteStatus}/reactions/🐦`, undefined, "DELETE");
    await act("/api/v1/accounts/update_credentials", { display_name: "Renamed" }, "PATCH");
    const chat = await act(`/api/v1/pleroma/chats/by-account-id/${other.id}`);
    await act(`/api/v1/pleroma/chats/${chat.id}/messages`, { content: "hi" });
    await act(`/api/v1/accounts/${other.id}/follow`);
    await act(`/api/v1/accounts/${other.id}/unfollow`);
    await act("/api/v1/reports", { account_id: other.id, status_ids: [remoteStatus], comment: "spam", forward: true });
    await act(`/api/v1/accounts/${other.id}/block`);
    await act(`/api/v1/accounts/${other.id}/unblock`);
    await act(`/api/v1/statuses/${unlisted.id}`, undefined, "DELETE");
    // Follow requests from two remote accounts: one authorized (Accept), one rejected (Reject).
    const [asker1, asker2] = [await remote(host()), await remote(host())];
    for (const r of [asker1, asker2]) {
      await env.DB.prepare(
        "INSERT INTO follow_requests (id, account_id, target_account_id, created_at, uri) VALUES (?, ?, ?, ?, ?)",
      )
        .bind(newId(), r.id, me.id, Date.now(), `${r.uri}/follows/1`)
        .run();
    }
    await act(`/api/v1/follow_requests/${asker1.id}/authorize`);
    await act(`/api/v1/follow_requests/${asker2.id}/reject`);
    await drainFederation(A.bindings);

    const kinds = new Set(received.map((r) => `${r.body.type}${r.body.object?.type ? `(${r.body.object.type})` : ""}`));
    for (const kind of [
      "Create(Note)",
      "Create(Question)",
      "Create(ChatMessage)",
      "Add",
      "Remove",
      "Announce",
      "Undo(Announce)",
      "Like",
      "Undo(Like)",
      "EmojiReact",
      "Undo(EmojiReact)",
      "Update(Person)",
      "Follow",
      "Undo(Follow)",
      "Accept(Follow)",
      "Reject(Follow)",
      "Flag",
      "Block",
      "Undo(Block)",
      "Delete(Tombstone)",
    ]) {
      expect([...kinds], kind).toContain(kind);
    }
    for (const r of received) expect(compactPublic(r.body), JSON.stringify(r.body).slice(0, 400)).toBe(false);
    // The public ones say it in full.
    const create = received.find((r) => r.body.type === "Create" && r.body.object.id === pub.uri)!.body;
    expect(create.to).toContain("https://www.w3.org/ns/activitystreams#Public");
    expect(create.object.to).toContain("https://www.w3.org/ns/activitystreams#Public");

    // Served documents: the status at its id, the outbox page, the featured collection, the actor.
    const AP = { Accept: "application/activity+json" };
    for (const path of [
      `/objects/${pub.id}`,
      `/users/${me.username}/outbox?cursor=first`,
      `/users/${me.username}/outbox`,
      `/users/${me.username}/collections/featured`,
      `/users/${me.username}`,
    ]) {
      const res = await call(path, { instance: A, headers: AP });
      expect(res.status, path).toBe(200);
      const doc = await res.json();
      expect(compactPublic(doc), `${path}: ${JSON.stringify(doc).slice(0, 400)}`).toBe(false);
    }
    const note = await (await call(`/objects/${pub.id}`, { instance: A, headers: AP })).json<any>();
    expect(note.to).toContain("https://www.w3.org/ns/activitystreams#Public");

    // Last, the account's own deletion: a Delete of the actor to its followers.
    received = [];
    expect(
      (
        await call("/api/pleroma/delete_account", {
          instance: A,
          method: "POST",
          token: me.token,
          body: { password: me.password },
        })
      ).status,
    ).toBe(200);
    await drainFederation(A.bindings);
    expect(received.map((r) => r.body.type)).toContain("Delete");
    for (const r of received) expect(compactPublic(r.body), JSON.stringify(r.body).slice(0, 400)).toBe(false);
  });
});
