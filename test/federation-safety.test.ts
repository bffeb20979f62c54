/**
 * Blocks, reports and authorized fetch between two Starling instances (issue 18): `Block` and `Undo{Block}` both
 * ways (follows end both ways, nothing of the blocked author delivered to the blocker any more, until the Undo),
 * `Flag` (a forwarded report, sent and signed by the instance actor) both ways with the `report_removal` policy,
 * and authorized fetch (B answering only signed GETs, which A makes as its instance actor).
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { AccountSchema, RelationshipSchema } from "../src/schemas/account";
import { AdminReportsSchema } from "../src/schemas/admin";
import { NotificationSchema } from "../src/schemas/social";
import { StatusSchema } from "../src/schemas/status";
import { call, json, registerUser, valid, type TestUser } from "./helpers";
import { A, B, federating, instanceFetch, type Instance, findRemote } from "./instances";
import { signRequest } from "@fedify/fedify";
import { instanceSigner } from "../src/federation/door/instance-actor";
import { signingKey } from "../src/services/credentials";
import { db } from "../src/db/client";
import { pemToDer } from "../src/lib/keys";
import { drainFederation } from "../src/federation/delivery/wake";
import { createPeer } from "./peer";
import { drainDeliveriesByHand, fill } from "./inbound";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";
import mastodonAccept from "./fixtures/federation/mastodon-accept.json";
import mastodonBlock from "./fixtures/federation/mastodon-block.json";
import mastodonUndoBlock from "./fixtures/federation/mastodon-undo-block.json";
import mastodonFlag from "./fixtures/federation/mastodon-flag.json";
import pleromaFlag from "./fixtures/federation/pleroma-flag.json";

const ADMIN_SCOPES = "read write follow push admin";

async function relationship(user: TestUser, id: string, inst: Instance) {
  const [r] = await json(`/api/v1/accounts/relationships?id[]=${id}`, { instance: inst, token: user.token });
  return valid(RelationshipSchema, r);
}

const postStatus = async (user: TestUser, inst: Instance, body: Record<string, unknown>) =>
  valid(StatusSchema, await json("/api/v1/statuses", { instance: inst, token: user.token, body }));

/** The JSON bodies of the POSTs routed to `host` since `from` (an index into the routed requests). */
async function postsTo(requests: Request[], host: string, from = 0): Promise<Record<string, any>[]> {
  return Promise.all(
    requests
      .slice(from)
      .filter((r) => r.method === "POST" && new URL(r.url).host === host)
      .map(async (r) => (await r.clone().json()) as Record<string, any>),
  );
}

async function adminOn(inst: Instance): Promise<TestUser> {
  const u = await registerUser({ instance: inst, scopes: ADMIN_SCOPES });
  await inst.bindings.DB.prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?").bind(u.id).run();
  return u;
}

describe("Block between two instances", () => {
  const fed = federating();
  const { settle } = fed;

  /**
   * `blocker` (on `bi`) and `blocked` (on `di`) follow each other; the block ends both follows on both sides and
   * stops the blocked author's deliveries to the blocker; the Undo lifts it.
   */
  async function roundTrip(bi: Instance, di: Instance) {
    const blocker = await registerUser({ instance: bi });
    const blocked = await registerUser({ instance: di });
    const blockedThere = await findRemote(blocker, bi, blocked, di);
    const blockerThere = await findRemote(blocked, di, blocker, bi);
    await json(`/api/v1/accounts/${blockedThere.id}/follow`, { instance: bi, token: blocker.token, body: {} });
    await json(`/api/v1/accounts/${blockerThere.id}/follow`, { instance: di, token: blocked.token, body: {} });
    await settle();
    expect(await relationship(blocker, blockedThere.id, bi)).toMatchObject({ following: true, followed_by: true });

    let mark = fed.routed.requests.length;
    const rel = valid(
      RelationshipSchema,
      await json(`/api/v1/accounts/${blockedThere.id}/block`, { instance: bi, token: blocker.token, body: {} }),
    );
    expect(rel).toMatchObject({ blocking: true, following: false, followed_by: false });
    await settle();
    const sent = await postsTo(fed.routed.requests, di.domain, mark);
    const blockerUri = `${bi.origin}/users/${blocker.username}`;
    const blockedUri = `${di.origin}/users/${blocked.username}`;
    const block = sent.find((a) => a.type === "Block");
    // Mastodon's shape: the block's own id (kept for the Undo), the blocked actor as object.
    expect(block).toMatchObject({ actor: blockerUri, object: blockedUri });
    expect(block!.id).toMatch(new RegExp(`^${blockerUri}#blocks/`));
    // The Reject and Undo of the follows still go with it.
    expect(sent.map((a) => a.type)).toEqual(expect.arrayContaining(["Reject", "Undo", "Block"]));

    // The blocked side: both follows gone, `blocked_by`, following again refused, the blocker's count recounted.
    expect(await relationship(blocked, blockerThere.id, di)).toMatchObject({
      following: false,
      followed_by: false,
      blocked_by: true,
      blocking: false,
    });
    const refused = await call(`/api/v1/accounts/${blockerThere.id}/follow`, {
      instance: di,
      token: blocked.token,
      body: {},
    });
    expect(refused.status).toBe(403);
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${blocked.id}`, { instance: di })).followers_count).toBe(
      0,
    );
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${blocker.id}`, { instance: bi })).followers_count).toBe(
      0,
    );

    // Nothing of the blocked author reaches the blocker's server any more, not even a mention or a DM.
    mark = fed.routed.requests.length;
    await postStatus(blocked, di, { status: `hello @${blocker.username}@${bi.domain}`, visibility: "public" });
    await postStatus(blocked, di, { status: `psst @${blocker.username}@${bi.domain}`, visibility: "direct" });
    await settle();
    expect(await postsTo(fed.routed.requests, bi.domain, mark)).toEqual([]);

    // Unblock: Undo{Block} embedding the same Block; the blocked side is free again and its mentions arrive.
    mark = fed.routed.requests.length;
    valid(
      RelationshipSchema,
      await json(`/api/v1/accounts/${blockedThere.id}/unblock`, { instance: bi, token: blocker.token, body: {} }),
    );
    await settle();
    const undo = (await postsTo(fed.routed.requests, di.domain, mark)).find((a) => a.type === "Undo");
    expect(undo).toMatchObject({
      actor: blockerUri,
      object: { type: "Block", id: block!.id, actor: blockerUri, object: blockedUri },
    });
    expect(await relationship(blocked, blockerThere.id, di)).toMatchObject({ blocked_by: false });
    // A second unblock sends nothing (there is no block to undo).
    mark = fed.routed.requests.length;
    await json(`/api/v1/accounts/${blockedThere.id}/unblock`, { instance: bi, token: blocker.token, body: {} });
    await settle();
    expect(await postsTo(fed.routed.requests, di.domain, mark)).toEqual([]);
    await postStatus(blocked, di, { status: `hi again @${blocker.username}@${bi.domain}`, visibility: "public" });
    await settle();
    expect((await postsTo(fed.routed.requests, bi.domain, mark)).map((a) => a.type)).toContain("Create");
    const notes = ((await json("/api/v1/notifications", { instance: bi, token: blocker.token })) as unknown[]).map(
      (n) => valid(NotificationSchema, n),
    );
    expect(notes.filter((n) => n.type === "mention").map((n) => n.status?.content)).toEqual([
      expect.stringContaining("hi again"),
    ]);
  }

  it("A blocks B's user, then unblocks", () => roundTrip(A, B));
  it("B blocks A's user, then unblocks", () => roundTrip(B, A));

  it("a repeated Block is idempotent, and only the blocker undoes its block", async () => {
    const blocker = await registerUser({ instance: A });
    const blocked = await registerUser({ instance: B });
    const other = await registerUser({ instance: A });
    const blockedOnA = await findRemote(blocker, A, blocked, B);
    const blockerOnB = await findRemote(blocked, B, blocker, A);
    const mark = fed.routed.requests.length;
    await json(`/api/v1/accounts/${blockedOnA.id}/block`, { instance: A, token: blocker.token, body: {} });
    await settle();
    const delivery = fed.routed.requests
      .slice(mark)
      .find((r) => r.method === "POST" && new URL(r.url).host === "b.example");
    expect(delivery).toBeDefined();
    // The very same signed request again: acknowledged, one block still.
    const res = await instanceFetch(B, delivery!.clone());
    expect(res.status).toBe(202);
    const rows = await env.DB_B.prepare(
      "SELECT count(*) AS n FROM blocks b JOIN accounts a ON a.id = b.account_id WHERE a.uri = ?",
    )
      .bind(`https://a.example/users/${blocker.username}`)
      .first<{ n: number }>();
    expect(rows!.n).toBe(1);
    // Blocking again on A sends no second Block.
    const mark2 = fed.routed.requests.length;
    await json(`/api/v1/accounts/${blockedOnA.id}/block`, { instance: A, token: blocker.token, body: {} });
    await settle();
    expect((await postsTo(fed.routed.requests, "b.example", mark2)).map((a) => a.type)).not.toContain("Block");
    // Someone else (another user of A) cannot undo it: their Undo names a block that is not theirs.
    const block = (await postsTo(fed.routed.requests, "b.example", mark)).find((a) => a.type === "Block")!;
    await env.DB.prepare("INSERT INTO federation_outbox (id, account_id, activity, created_at) VALUES (?, ?, ?, ?)")
      .bind(
        `zz${Date.now()}`,
        other.id,
        JSON.stringify({ type: "UndoBlock", uri: block.id, targetId: blockedOnA.id }),
        Date.now(),
      )
      .run();
    await settle();
    expect(await relationship(blocked, blockerOnB.id, B)).toMatchObject({ blocked_by: true });
  });
});

describe("Flag (forwarded reports) between two instances", () => {
  const fed = federating();
  const { settle } = fed;

  async function reportsOn(inst: Instance, admin: TestUser) {
    return valid(
      AdminReportsSchema,
      await json("/api/v1/pleroma/admin/reports?page_size=100", { instance: inst, token: admin.token }),
    ).reports;
  }

  /** `reporter` (on `ri`) reports `target` (on `ti`) and its status, forwarded; `ti`'s admin sees the report. */
  async function forward(ri: Instance, ti: Instance) {
    const admin = await adminOn(ti);
    const reporter = await registerUser({ instance: ri });
    const target = await registerUser({ instance: ti });
    const status = await postStatus(target, ti, { status: "something reportable", visibility: "public" });
    const targetThere = await findRemote(reporter, ri, target, ti);
    const found = await json(`/api/v2/search?q=${encodeURIComponent(status.uri)}&resolve=true&type=statuses`, {
      instance: ri,
      token: reporter.token,
    });
    const statusThere = valid(StatusSchema, found.statuses[0]);

    const mark = fed.routed.requests.length;
    await json("/api/v1/reports", {
      instance: ri,
      token: reporter.token,
      body: { account_id: targetThere.id, status_ids: [statusThere.id], comment: "spam, forwarded", forward: true },
    });
    await settle();
    const posts = fed.routed.requests
      .slice(mark)
      .filter((r) => r.method === "POST" && new URL(r.url).host === ti.domain);
    expect(posts).toHaveLength(1);
    // To the shared inbox, by the instance actor: signed with its key, the reporter not named anywhere.
    const instanceActor = `${ri.origin}/users/internal.fetch`;
    expect(new URL(posts[0]!.url).pathname).toBe("/inbox");
    expect(posts[0]!.headers.get("signature")).toContain(`keyId="${instanceActor}#main-key"`);
    const flag = (await posts[0]!.clone().json()) as Record<string, any>;
    expect(flag).toMatchObject({
      type: "Flag",
      actor: instanceActor,
      content: "spam, forwarded",
      object: [`${ti.origin}/users/${target.username}`, status.uri],
    });
    expect(JSON.stringify(flag)).not.toContain(reporter.username);

    const mine = (await reportsOn(ti, admin)).filter((r) => r.account.id === target.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      content: "spam, forwarded",
      state: "open",
      actor: { nickname: `internal.fetch@${ri.domain}` },
    });
    expect(mine[0]!.statuses.map((s) => s.id)).toEqual([status.id]);
    const notes = (
      (await json("/api/v1/notifications?include_types[]=pleroma:report", {
        instance: ti,
        token: admin.token,
      })) as unknown[]
    ).map((n) => valid(NotificationSchema, n));
    expect(notes.filter((n) => n.type === "pleroma:report")).toHaveLength(1);

    // Delivered again (the same signed request): no second report, no second notification.
    expect((await instanceFetch(ti, posts[0]!.clone())).status).toBe(202);
    expect((await reportsOn(ti, admin)).filter((r) => r.account.id === target.id)).toHaveLength(1);
    const notesAgain = (await json("/api/v1/notifications?include_types[]=pleroma:report", {
      instance: ti,
      token: admin.token,
    })) as { type: string }[];
    expect(notesAgain.filter((n) => n.type === "pleroma:report")).toHaveLength(1);

    // A report of a local account asks to be forwarded in vain: there is no other server to tell.
    const neighbour = await registerUser({ instance: ri });
    const rows = async () =>
      (await ri.bindings.DB.prepare("SELECT count(*) AS n FROM federation_outbox WHERE account_id = ?")
        .bind(reporter.id)
        .first<{ n: number }>())!.n;
    const before = await rows();
    await json("/api/v1/reports", {
      instance: ri,
      token: reporter.token,
      body: { account_id: neighbour.id, comment: "local", forward: true },
    });
    expect(await rows()).toBe(before);

    // Not forwarded: nothing leaves; the reporter's own instance keeps it.
    const mark2 = fed.routed.requests.length;
    await json("/api/v1/reports", {
      instance: ri,
      token: reporter.token,
      body: { account_id: targetThere.id, comment: "kept here" },
    });
    await settle();
    expect(await postsTo(fed.routed.requests, ti.domain, mark2)).toEqual([]);
    return { admin, reporter, target, targetThere };
  }

  it("A forwards a report to B", () => forward(A, B));

  it("B forwards a report to A; A's report_removal for b.example drops B's Flags", async () => {
    const { admin, reporter, target, targetThere } = await forward(B, A);
    const policy = (list: string[]) =>
      json("/api/v1/pleroma/admin/config", {
        instance: A,
        token: admin.token,
        body: {
          configs: [
            {
              group: ":pleroma",
              key: ":mrf_simple",
              value: [{ tuple: [":report_removal", list.map((d) => ({ tuple: [d, "no reports"] }))] }],
            },
          ],
        },
      });
    await policy(["b.example"]);
    try {
      const mark = fed.routed.requests.length;
      await json("/api/v1/reports", {
        instance: B,
        token: reporter.token,
        body: { account_id: targetThere.id, comment: "dropped", forward: true },
      });
      await settle();
      // Sent and acknowledged, but no report comes of it.
      expect((await postsTo(fed.routed.requests, "a.example", mark)).map((a) => a.type)).toEqual(["Flag"]);
      const reports = (await reportsOn(A, admin)).filter((r) => r.account.id === target.id);
      expect(reports.map((r) => r.content)).toEqual(["spam, forwarded"]);
    } finally {
      await json("/api/v1/pleroma/admin/config", {
        instance: A,
        token: admin.token,
        body: { configs: [{ group: ":pleroma", key: ":mrf_simple", delete: true }] },
      });
    }
  });
});

describe("authorized fetch", () => {
  /** B in authorized-fetch mode (the same database: only the switch differs). */
  const BS: Instance = { ...B, bindings: { ...B.bindings, AUTHORIZED_FETCH: "true" } };
  const fed = federating([A, BS]);
  const { settle } = fed;
  const ap = { Accept: "application/activity+json" };

  it("B answers unsigned GETs 401 (actors: only their key), A's signed fetches work, domain blocks are refused 403", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: BS });
    await json("/api/v1/accounts/update_credentials", {
      instance: BS,
      token: bob.token,
      method: "PATCH",
      body: { display_name: "Bob Secure" },
    });
    const status = await postStatus(bob, BS, { status: "only for signed fetches", visibility: "public" });

    // Unsigned: the status and the collections are refused; the actor shows only what verifies signatures.
    expect((await call(new URL(status.uri).pathname, { instance: BS, headers: ap })).status).toBe(401);
    expect((await call(`${new URL(status.uri).pathname}/replies`, { instance: BS, headers: ap })).status).toBe(401);
    for (const c of ["followers", "following", "outbox", "collections/featured"]) {
      expect((await call(`/users/${bob.username}/${c}`, { instance: BS, headers: ap })).status, c).toBe(401);
    }
    const bare = await call(`/users/${bob.username}`, { instance: BS, headers: ap });
    expect(bare.status).toBe(200);
    const doc = await bare.json<Record<string, any>>();
    expect(doc.publicKey.id).toBe(`https://b.example/users/${bob.username}#main-key`);
    expect(doc.name).toBeUndefined();
    expect(doc.outbox).toBeUndefined();
    // The instance actor and WebFinger stay open.
    const instanceActor = await call("/users/internal.fetch", { instance: BS, headers: ap });
    expect(instanceActor.status).toBe(200);
    expect((await instanceActor.json<Record<string, any>>()).publicKey).toBeDefined();
    expect(
      (await call(`/.well-known/webfinger?resource=acct:${bob.username}@b.example`, { instance: BS })).status,
    ).toBe(200);

    // A resolves Bob and his status: its GETs are signed by its instance actor, and B answers them in full.
    const mark = fed.routed.requests.length;
    const bobOnA = await findRemote(alice, A, bob, BS);
    expect(bobOnA.display_name).toBe("Bob Secure");
    const found = await json(`/api/v2/search?q=${encodeURIComponent(status.uri)}&resolve=true&type=statuses`, {
      instance: A,
      token: alice.token,
    });
    expect(valid(StatusSchema, found.statuses[0]).content).toContain("only for signed fetches");
    const gets = fed.routed.requests
      .slice(mark)
      .filter((r) => r.method === "GET" && new URL(r.url).host === "b.example" && !r.url.includes("webfinger"));
    expect(gets.length).toBeGreaterThan(0);
    for (const g of gets)
      expect(g.headers.get("signature")).toContain('keyId="https://a.example/users/internal.fetch#main-key"');

    // Signed deliveries both ways still verify (B fetches A's keys, A fetches B's with a signed GET).
    await json(`/api/v1/accounts/${bobOnA.id}/follow`, { instance: A, token: alice.token, body: {} });
    await settle();
    expect(await relationship(alice, bobOnA.id, A)).toMatchObject({ following: true });

    // A signed GET as A's instance actor: answered in full; once Bob blocks a.example, refused (403) and his
    // actor shows only its key. A forged signature counts as none (401).
    const signer = (await instanceSigner(A.bindings))!;
    const signedGet = (url: string) =>
      signRequest(new Request(url, { headers: ap }), signer.key, new URL(`${signer.uri}#main-key`), {
        spec: "draft-cavage-http-signatures-12",
      });
    expect((await instanceFetch(BS, await signedGet(status.uri))).status).toBe(200);
    const full = await (
      await instanceFetch(BS, await signedGet(`https://b.example/users/${bob.username}`))
    ).json<Record<string, any>>();
    expect(full.name).toBe("Bob Secure");
    const forged = await signedGet(status.uri);
    const tampered = new Request(forged, {
      headers: new Headers(
        [...forged.headers].map(([k, v]) => [
          k,
          k === "signature" ? v.replace(/signature="[^"]{8}/, 'signature="AAAAAAAA') : v,
        ]),
      ),
    });
    expect((await instanceFetch(BS, tampered)).status).toBe(401);

    // Signed by Alice herself: served, until Bob blocks her (the one visibility rule's block, at the door).
    const pem = (await signingKey(db(A.bindings), alice.id))!.privateKey;
    const aliceKey = await crypto.subtle.importKey(
      "pkcs8",
      pemToDer(pem),
      { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
      true,
      ["sign"],
    );
    const asAlice = (url: string) =>
      signRequest(
        new Request(url, { headers: ap }),
        aliceKey,
        new URL(`https://a.example/users/${alice.username}#main-key`),
        { spec: "draft-cavage-http-signatures-12" },
      );
    expect((await instanceFetch(BS, await asAlice(status.uri))).status).toBe(200);
    const aliceOnB = await findRemote(bob, BS, alice, A);
    await json(`/api/v1/accounts/${aliceOnB.id}/block`, { instance: BS, token: bob.token, body: {} });
    expect((await instanceFetch(BS, await asAlice(status.uri))).status).toBe(403);
    expect((await instanceFetch(BS, await asAlice(`https://b.example/users/${bob.username}/followers`))).status).toBe(
      403,
    );
    expect((await instanceFetch(BS, await signedGet(status.uri))).status).toBe(200);

    await json("/api/v1/domain_blocks", { instance: BS, token: bob.token, body: { domain: "a.example" } });
    const refused = await instanceFetch(BS, await signedGet(status.uri));
    expect(refused.status).toBe(403);
    expect((await instanceFetch(BS, await signedGet(`https://b.example/users/${bob.username}/outbox`))).status).toBe(
      403,
    );
    const keyOnly = await instanceFetch(BS, await signedGet(`https://b.example/users/${bob.username}`));
    expect(keyOnly.status).toBe(200);
    expect((await keyOnly.json<Record<string, any>>()).name).toBeUndefined();
  });
});

describe("blocks and reports as Mastodon and Pleroma send them", () => {
  let unroute: (() => void) | undefined;
  drainDeliveriesByHand();
  afterEach(() => {
    unroute?.();
    unroute = undefined;
  });

  let n = 0;

  async function setup() {
    const peer = createPeer();
    unroute = peer.route();
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    const target = `${A.origin}/users/${user.username}`;
    return {
      peer,
      user,
      actor,
      target,
      vars: { ACTOR: actor, ORIGIN: peer.origin, TARGET: target, N: String(Date.now() * 100 + n++) },
    };
  }
  const remoteId = async (uri: string) =>
    (await env.DB.prepare("SELECT id FROM accounts WHERE uri = ?").bind(uri).first<{ id: string }>())?.id;
  const accepted = async (res: Response) => expect(res.status, await res.text()).toBe(202);

  it("Mastodon's Block ends the follows both ways (the local one undone at the blocker's server); its Undo lifts it", async () => {
    const s = await setup();
    // The peer's actor follows the user, and the user follows the peer's actor (accepted by the peer).
    await accepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars)));
    const peerId = (await remoteId(s.actor))!;
    await json(`/api/v1/accounts/${peerId}/follow`, { instance: A, token: s.user.token, body: {} });
    const request = await env.DB.prepare("SELECT uri FROM follow_requests WHERE account_id = ?")
      .bind(s.user.id)
      .first<{ uri: string }>();
    await accepted(await s.peer.send(s.actor, fill(mastodonAccept, { ...s.vars, FOLLOW_ID: request!.uri })));
    expect(await relationship(s.user, peerId, A)).toMatchObject({ following: true, followed_by: true });

    const block = fill(mastodonBlock, s.vars);
    await accepted(await s.peer.send(s.actor, block));
    await accepted(await s.peer.send(s.actor, block));
    expect(await relationship(s.user, peerId, A)).toMatchObject({
      following: false,
      followed_by: false,
      blocked_by: true,
    });
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${s.user.id}`, { instance: A })).followers_count).toBe(0);
    const notes = (await json("/api/v1/notifications", { instance: A, token: s.user.token })) as { type: string }[];
    expect(notes.map((x) => x.type)).not.toContain("follow");
    await drainFederation(A.bindings);
    const undoFollow = s.peer.delivered.map((x) => x.body as Record<string, any>).find((b) => b.type === "Undo");
    expect(undoFollow).toMatchObject({ actor: s.target, object: { type: "Follow", object: s.actor } });
    // Blocked: following again is refused, and the user's mentions of the blocker are not delivered to it.
    expect(
      (await call(`/api/v1/accounts/${peerId}/follow`, { instance: A, token: s.user.token, body: {} })).status,
    ).toBe(403);
    const before = s.peer.delivered.length;
    await postStatus(s.user, A, {
      status: `@${new URL(s.actor).pathname.split("/").pop()}@peer.example hello`,
      visibility: "public",
    });
    await drainFederation(A.bindings);
    expect(s.peer.delivered.slice(before)).toEqual([]);

    // Someone else's Undo of that Block (embedding it) changes nothing; the blocker's own lifts it.
    const other = s.peer.actor();
    await accepted(await s.peer.send(other, fill(mastodonUndoBlock, { ...s.vars, ACTOR: other, N: s.vars.N })));
    const forged = fill(mastodonUndoBlock, s.vars);
    forged.actor = other;
    forged.id = `${other}#x`;
    await accepted(await s.peer.send(other, forged));
    expect(await relationship(s.user, peerId, A)).toMatchObject({ blocked_by: true });
    await accepted(await s.peer.send(s.actor, fill(mastodonUndoBlock, s.vars)));
    expect(await relationship(s.user, peerId, A)).toMatchObject({ blocked_by: false });

    // Blocked again, and undone by the Block's id alone (an Undo that does not embed it).
    await accepted(await s.peer.send(s.actor, fill(mastodonBlock, { ...s.vars, N: `${s.vars.N}2` })));
    expect(await relationship(s.user, peerId, A)).toMatchObject({ blocked_by: true });
    await accepted(
      await s.peer.send(s.actor, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${s.actor}#undo2`,
        type: "Undo",
        actor: s.actor,
        object: `${s.actor}#blocks/${s.vars.N}2`,
      }),
    );
    expect(await relationship(s.user, peerId, A)).toMatchObject({ blocked_by: false });

    // A Block of someone who is not here, or without an object, is acknowledged and dropped.
    await accepted(
      await s.peer.send(s.actor, {
        ...fill(mastodonBlock, s.vars),
        id: `${s.actor}#b3`,
        object: "https://elsewhere.example/users/x",
      }),
    );
    await accepted(
      await s.peer.send(s.actor, { ...fill(mastodonBlock, s.vars), id: `${s.actor}#b4`, object: undefined }),
    );
    expect(await relationship(s.user, peerId, A)).toMatchObject({ blocked_by: false });
  });

  it("Mastodon's and Pleroma's Flags become reports for A's moderators (local statuses only); junk is dropped", async () => {
    const s = await setup();
    const admin = await adminOn(A);
    const status = await postStatus(s.user, A, { status: "reported here", visibility: "public" });
    const other = await postStatus(await registerUser({ instance: A }), A, {
      status: "someone else's",
      visibility: "public",
    });
    const reportsOf = async (id: string) =>
      valid(
        AdminReportsSchema,
        await json("/api/v1/pleroma/admin/reports?page_size=200", { instance: A, token: admin.token }),
      ).reports.filter((r) => r.account.id === id);

    // Mastodon: by its instance actor.
    const instanceActor = s.peer.actor("actor");
    await accepted(
      await s.peer.send(instanceActor, fill(mastodonFlag, { ...s.vars, ACTOR: instanceActor, STATUS: status.uri })),
    );
    let mine = await reportsOf(s.user.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      content: "misinfo: it's not a good morning",
      actor: { nickname: "actor@peer.example" },
    });
    expect(mine[0]!.statuses.map((x) => x.id)).toEqual([status.id]);

    // Pleroma: by the reporting user; the litepub context served by its host. Its status list also names a
    // status of someone else here: that account gets its own report with it.
    s.peer.objects.set(`${s.peer.origin}/schemas/litepub-0.1.jsonld`, {
      "@context": [
        "https://www.w3.org/ns/activitystreams",
        "https://w3id.org/security/v1",
        { litepub: "http://litepub.social/ns#", directMessage: "litepub:directMessage" },
      ],
    });
    const pleroma = fill(pleromaFlag, { ...s.vars, STATUS: status.uri });
    pleroma.object.push(other.uri, "https://peer.example/objects/not-ours");
    await accepted(await s.peer.send(s.actor, pleroma));
    await accepted(await s.peer.send(s.actor, pleroma));
    mine = await reportsOf(s.user.id);
    expect(mine.map((r) => r.content).sort()).toEqual(["Harassment, see the post", "misinfo: it's not a good morning"]);
    const theirs = await reportsOf(other.account.id);
    expect(theirs).toHaveLength(1);
    expect(theirs[0]!.statuses.map((x) => x.id)).toEqual([other.id]);
    const notes = (await json("/api/v1/notifications?include_types[]=pleroma:report", {
      instance: A,
      token: admin.token,
    })) as { type: string }[];
    expect(notes.filter((x) => x.type === "pleroma:report")).toHaveLength(3);

    // Older Pleroma sent the reported statuses embedded (id, content, actor): the ids are what count.
    const embedded = fill(pleromaFlag, { ...s.vars, N: `${s.vars.N}e`, STATUS: status.uri });
    embedded.object = [
      s.target,
      { id: status.uri, type: "Note", content: "reported here", published: "2024-05-01T12:00:00.000Z" },
    ];
    embedded.content = "<p>embedded &amp; <b>HTML</b></p>";
    await accepted(await s.peer.send(s.actor, embedded));
    const withEmbedded = (await reportsOf(s.user.id)).find((r) => r.content === "embedded & HTML");
    expect(withEmbedded?.statuses.map((x) => x.id)).toEqual([status.id]);

    // A Flag without an id, delivered twice, is still one report.
    const { id: _, ...anonymous } = {
      ...fill(mastodonFlag, { ...s.vars, ACTOR: instanceActor, STATUS: status.uri }),
      content: "no id, twice",
    };
    for (let i = 0; i < 2; i++) await accepted(await s.peer.send(instanceActor, anonymous));
    expect((await reportsOf(s.user.id)).filter((r) => r.content === "no id, twice")).toHaveLength(1);

    // Naming nobody here, naming nothing, or naming the sender itself: acknowledged, no report.
    const total = (await json("/api/v1/pleroma/admin/reports?page_size=1", { instance: A, token: admin.token })).total;
    await accepted(
      await s.peer.send(s.actor, {
        ...fill(mastodonFlag, { ...s.vars, STATUS: status.uri }),
        id: `${s.peer.origin}/f1`,
        object: ["https://peer.example/users/someone"],
      }),
    );
    await accepted(
      await s.peer.send(s.actor, {
        ...fill(mastodonFlag, { ...s.vars, STATUS: status.uri }),
        id: `${s.peer.origin}/f2`,
        object: undefined,
        content: undefined,
      }),
    );
    await accepted(
      await s.peer.send(s.actor, {
        ...fill(mastodonFlag, { ...s.vars, STATUS: status.uri }),
        id: `${s.peer.origin}/f3`,
        object: s.actor,
      }),
    );
    expect((await json("/api/v1/pleroma/admin/reports?page_size=1", { instance: A, token: admin.token })).total).toBe(
      total,
    );
  });
});
