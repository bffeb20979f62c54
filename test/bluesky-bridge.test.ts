/**
 * "Connect to Bluesky" (issue 49; services/bluesky-bridge.ts, routes/pleroma/bluesky-bridge.ts) against recorded
 * Bridgy Fed documents (test/fixtures/federation/bridgy-*.json, actors/bridgy-*.json) served at bsky.brid.gy by
 * the test peer: the checklist, following the bridge and its Accept, its follow-back (accepted, or a request for a
 * locked account), opting out, a Bluesky user's report as a Flag, and `/.well-known/atproto-did` at a subdomain;
 * and the same through the settings page `/settings/bluesky` (session, CSRF).
 */
import { signRequest } from "@fedify/fedify";
import { CryptographicKey } from "@fedify/vocab";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BridgeStateSchema } from "../src/routes/pleroma/bluesky-bridge";
import { deliveryWake, drainFederation } from "../src/federation/delivery/wake";
import { AdminReportsSchema } from "../src/schemas/admin";
import { RelationshipSchema } from "../src/schemas/account";
import { browser, type Page } from "./browser";
import { call, json, registerUser, valid, type TestUser } from "./helpers";
import { fill } from "./inbound";
import { A, instanceFetch } from "./instances";
import { createPeer, rsaKeyPair, type Peer } from "./peer";
import bridgyActor from "./fixtures/federation/actors/bridgy-fed.json";
import bridgyUser from "./fixtures/federation/actors/bridgy-bluesky-user.json";
import bridgyFollowBack from "./fixtures/federation/bridgy-follow-back.json";
import bridgyAccept from "./fixtures/federation/bridgy-accept.json";
import bridgyFlag from "./fixtures/federation/bridgy-flag.json";

const BRIDGE = "https://bsky.brid.gy/bsky.brid.gy";
const DID = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";
let n = 0;
let unroute: (() => void) | undefined;
const realWake = deliveryWake.run;
let peer: Peer;
let keys: { bridge: CryptoKeyPair; user: CryptoKeyPair };

const pem = async (id: string, owner: string, key: CryptoKey) => {
  const doc = (await new CryptographicKey({ id: new URL(id), owner: new URL(owner), publicKey: key }).toJsonLd()) as
    Record<string, string> | undefined;
  return JSON.stringify(doc!.publicKeyPem ?? doc!["sec:publicKeyPem"]).slice(1, -1);
};

beforeEach(async () => {
  deliveryWake.run = async () => {};
  // Bridgy Fed's host: its documents are served from the recorded fixtures.
  peer = createPeer("bsky.brid.gy");
  unroute = peer.route();
  keys ??= { bridge: await rsaKeyPair(), user: await rsaKeyPair() };
  peer.objects.set(
    BRIDGE,
    fill(bridgyActor, { PUBLIC_KEY_PEM: await pem(`${BRIDGE}#key`, BRIDGE, keys.bridge.publicKey) }),
  );
  const userId = `https://bsky.brid.gy/ap/${DID}`;
  peer.objects.set(
    userId,
    fill(bridgyUser, {
      DID,
      HANDLE: "someone.bsky.social",
      PUBLIC_KEY_PEM: await pem(`${userId}#key`, userId, keys.user.publicKey),
    }),
  );
});
afterEach(() => {
  unroute?.();
  deliveryWake.run = realWake;
});

/** POSTs `activity` to A's shared inbox signed with `#key` of `actor` (the bridge, or the bridged Bluesky user). */
async function fromBridgy(activity: unknown, as: "bridge" | "user" = "bridge") {
  const actor = as === "bridge" ? BRIDGE : `https://bsky.brid.gy/ap/${DID}`;
  const req = new Request(`${A.origin}/inbox`, {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body: JSON.stringify(activity),
  });
  const res = await instanceFetch(A, await signRequest(req, keys[as].privateKey, new URL(`${actor}#key`)));
  expect(res.status, await res.clone().text()).toBe(202);
}

const state = async (u: TestUser, method = "GET") =>
  valid(BridgeStateSchema, await json("/api/v1/pleroma/bluesky_bridge", { instance: A, token: u.token, method }));

/** A user who meets the checklist's account items (a picture, a week old). */
async function readyUser(opts: { locked?: boolean } = {}) {
  const u = await registerUser({ instance: A });
  await A.bindings.DB.prepare("UPDATE accounts SET avatar = 'avatars/x.png', created_at = ?, locked = ? WHERE id = ?")
    .bind(Date.now() - 8 * 24 * 3600_000, opts.locked ? 1 : 0, u.id)
    .run();
  return u;
}

const delivered = (type: string) =>
  peer.delivered.filter((d) => (d.body as { type?: string }).type === type && d.url === `${BRIDGE}/inbox`);

const atprotoDid = (host: string) =>
  instanceFetch(A, new Request(`https://${host}/.well-known/atproto-did`, { redirect: "manual" }));

describe("Connect to Bluesky", () => {
  it("a new account: what the checklist misses; needs a user token", async () => {
    const u = await registerUser({ instance: A });
    const s = await state(u);
    expect(s).toMatchObject({
      connected: false,
      pending: false,
      followed_back: false,
      bridge: "bsky.brid.gy@bsky.brid.gy",
    });
    expect(s.bluesky_handle).toBe(`${u.username.toLowerCase()}.a.example.ap.brid.gy`);
    expect(s.missing).toEqual(["avatar", "account_age", "follow_back"]);
    // A bio opting out, followers-only by default: both named.
    await json("/api/v1/accounts/update_credentials", {
      instance: A,
      token: u.token,
      method: "PATCH",
      body: { note: "please #NoBridge", source: { privacy: "private" } },
    });
    expect((await state(u)).missing).toEqual(["avatar", "account_age", "public_posts", "no_nobridge", "follow_back"]);
    expect((await call("/api/v1/pleroma/bluesky_bridge", { instance: A })).status).toBe(403);
    // Nothing was fetched or sent for a look.
    expect(peer.requests).toEqual([]);
  });

  // Before any test has stored the bridge's account (a stored one is not fetched again for a day).
  it("the bridge unreachable: 404 with an error, nothing written", async () => {
    const u = await readyUser();
    peer.objects.set(BRIDGE, () => new Response("down", { status: 503 }));
    const res = await call("/api/v1/pleroma/bluesky_bridge", { instance: A, token: u.token, method: "POST" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/could not be reached/) });
    expect(await state(u)).toMatchObject({ connected: false, pending: false });
  });

  it("connect: follows the bridge, its Accept and follow-back (auto-accepted), then a subdomain handle; disconnect unfollows", async () => {
    const u = await readyUser();
    const before = await state(u, "POST");
    expect(before).toMatchObject({ connected: false, pending: true });
    await drainFederation(A.bindings);
    const [follow] = delivered("Follow");
    expect(follow!.body).toMatchObject({ type: "Follow", object: BRIDGE, actor: `${A.origin}/users/${u.username}` });
    // Bridgy accepts and follows back.
    const target = `${A.origin}/users/${u.username}`;
    await fromBridgy(fill(bridgyAccept, { FOLLOW_ID: (follow!.body as { id: string }).id, TARGET: target }));
    await fromBridgy(fill(bridgyFollowBack, { TARGET: target, N: String(n++) }));
    await drainFederation(A.bindings);
    expect(delivered("Accept").map((d) => (d.body as any).object?.actor ?? (d.body as any).object)).toContain(BRIDGE);
    const after = await state(u);
    expect(after).toMatchObject({ connected: true, pending: false, followed_back: true, missing: [] });

    // The handle at a subdomain: Bridgy's redirect, for this account only.
    const res = await atprotoDid(`${u.username.toLowerCase()}.a.example`);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(
      `https://bsky.brid.gy/.well-known/atproto-did?protocol=ap&id=${encodeURIComponent(target)}`,
    );
    const other = await registerUser({ instance: A });
    for (const host of [`${other.username.toLowerCase()}.a.example`, "a.example", "nobody.a.example", "x.y.a.example"])
      expect((await atprotoDid(host)).status, host).toBe(404);

    // Opting out: an Undo of the Follow, and the subdomain says nothing any more.
    const out = await state(u, "DELETE");
    expect(out).toMatchObject({ connected: false, pending: false });
    await drainFederation(A.bindings);
    expect(delivered("Undo").map((d) => (d.body as any).object?.object)).toEqual([BRIDGE]);
    expect((await atprotoDid(`${u.username.toLowerCase()}.a.example`)).status).toBe(404);
    // Disconnecting again changes nothing and is no error.
    expect(await state(u, "DELETE")).toMatchObject({ connected: false });
  });

  it("a locked account: the follow-back is a request the user accepts (the checklist says so)", async () => {
    const u = await readyUser({ locked: true });
    await state(u, "POST");
    await drainFederation(A.bindings);
    const [follow] = delivered("Follow");
    const target = `${A.origin}/users/${u.username}`;
    await fromBridgy(fill(bridgyAccept, { FOLLOW_ID: (follow!.body as { id: string }).id, TARGET: target }));
    await fromBridgy(fill(bridgyFollowBack, { TARGET: target, N: String(n++) }));
    const s = await state(u);
    expect(s).toMatchObject({ connected: true, followed_back: false, missing: ["follow_back"] });
    expect(s.checklist.find((i) => i.key === "follow_back")!.message).toMatch(/Accept the bridge's follow request/);
    const requests = await json("/api/v1/follow_requests", { instance: A, token: u.token });
    expect(requests.map((a: { acct: string }) => a.acct)).toEqual(["bsky.brid.gy@bsky.brid.gy"]);
    valid(
      RelationshipSchema,
      await json(`/api/v1/follow_requests/${requests[0].id}/authorize`, {
        instance: A,
        token: u.token,
        method: "POST",
      }),
    );
    expect(await state(u)).toMatchObject({ followed_back: true, missing: [] });
  });
});

describe("Flags from the bridge", () => {
  it("a Bluesky user's report of a bridged post becomes a report for A's moderators", async () => {
    const u = await readyUser();
    const status = await json("/api/v1/statuses", {
      instance: A,
      token: u.token,
      method: "POST",
      body: { status: "bridged and reported", visibility: "public" },
    });
    const admin = await registerUser({ instance: A, scopes: "read write follow push admin" });
    await A.bindings.DB.prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?").bind(admin.id).run();
    await fromBridgy(
      fill(bridgyFlag, { DID, N: String(n++), TARGET: `${A.origin}/users/${u.username}`, STATUS: status.uri }),
      "user",
    );
    const reports = valid(
      AdminReportsSchema,
      await json("/api/v1/pleroma/admin/reports?page_size=200", { instance: A, token: admin.token }),
    ).reports.filter((r) => r.account.id === u.id);
    expect(reports).toHaveLength(1);
    expect(reports[0]!.content).toContain("spam from the bridge");
    expect(reports[0]!.statuses.map((x) => x.id)).toEqual([status.id]);
  });
});

describe("Connect to Bluesky, the settings page", () => {
  const PAGE = `${A.origin}/settings/bluesky`;
  const outbox = async (u: TestUser) =>
    (
      await A.bindings.DB.prepare("SELECT activity FROM federation_outbox WHERE account_id = ? ORDER BY id")
        .bind(u.id)
        .all<{ activity: string }>()
    ).results.map((r) => JSON.parse(r.activity) as { type: string; targetId?: string });
  const bridgeId = async () =>
    (await A.bindings.DB.prepare("SELECT id FROM accounts WHERE uri = ?").bind(BRIDGE).first<{ id: string }>())?.id;

  /** A browser signed in as `u` on A, on the settings page. */
  async function signedIn(u: TestUser) {
    const b = browser({ instances: [A] });
    const form = await b.send(`${A.origin}/auth/sign_in?return_to=%2Fsettings%2Fbluesky`);
    const done = await b.submit(form, "/auth/sign_in", { username: u.username, password: u.password });
    expect(done.res.headers.get("location")).toBe("/settings/bluesky");
    return { b, page: await b.send(PAGE) };
  }
  const csrfOf = (p: Page) => /name="csrf_token" value="([^"]+)"/.exec(p.text)![1]!;

  it("signed out: to the sign-in page, and a POST changes nothing", async () => {
    const b = browser({ instances: [A] });
    const res = await b.send(PAGE);
    expect(res.res.status).toBe(302);
    expect(res.res.headers.get("location")).toBe("/auth/sign_in?return_to=%2Fsettings%2Fbluesky");
    const post = await b.send(PAGE, { method: "POST", body: "decision=connect&csrf_token=x" });
    expect(post.res.status).toBe(303);
    expect(post.res.headers.get("location")).toBe("/auth/sign_in?return_to=%2Fsettings%2Fbluesky");
    // An API token is no session: the page does not take it.
    const u = await registerUser({ instance: A });
    const withToken = await call(PAGE, { instance: A, token: u.token, headers: { accept: "text/html" } });
    expect(withToken.status).toBe(302);
    expect(peer.requests).toEqual([]);
  });

  it("a user without a picture: the checklist says what is missing; the page is linked from the other settings pages", async () => {
    const u = await registerUser({ instance: A });
    const { b, page } = await signedIn(u);
    expect(page.res.status).toBe(200);
    expect(page.res.headers.get("x-frame-options")).toBe("DENY");
    expect(page.res.headers.get("cache-control")).toBe("no-store");
    expect(page.text).toContain("<h1>Connect to Bluesky</h1>");
    expect(page.text).toContain('data-item="avatar" data-ok="no"');
    expect(page.text).toContain("Add a profile picture.");
    expect(page.text).toContain('data-item="account_age" data-ok="no"');
    expect(page.text).toContain('data-item="public_posts" data-ok="yes"');
    expect(page.text).toContain('data-item="follow_back" data-ok="no"');
    expect(page.text).toContain(
      "Missing: a profile picture, an account at least a week old, the bridge follows you back.",
    );
    expect(page.text).toContain('data-connected="no"');
    expect(page.text).toContain('value="connect"');
    expect(page.text).not.toContain('value="disconnect"');
    expect(page.text).toContain(`Signed in as @${u.username}`);
    // What the API says, the page says (one rule).
    expect((await state(u)).missing).toEqual(["avatar", "account_age", "follow_back"]);
    // Found from the other settings page and from the sign-in page of a signed-in browser.
    for (const path of ["/settings/import", "/auth/sign_in"]) {
      const other = await b.send(`${A.origin}${path}`);
      expect(other.text, path).toContain('<a href="/settings/bluesky">Connect to Bluesky</a>');
    }
    expect(page.text).toContain('<a href="/settings/import">Import your posts</a>');
  });

  it("opting in queues the Follow to the bridge; opting out its Undo", async () => {
    const u = await readyUser();
    const { b, page } = await signedIn(u);
    expect(page.text).toContain('data-item="avatar" data-ok="yes"');
    const sent = await b.submit(page, "/settings/bluesky", { decision: "connect" });
    expect(sent.res.status).toBe(303);
    expect(sent.res.headers.get("location")).toBe("/settings/bluesky?done=connected");
    const bridge = await bridgeId();
    expect(await outbox(u)).toEqual([expect.objectContaining({ type: "Follow", targetId: bridge })]);
    const after = await b.follow(sent);
    expect(after.text).toContain("Your follow of the bridge is sent.");
    expect(after.text).toContain('data-connected="pending"');
    expect(after.text).toContain('value="disconnect"');
    expect(await state(u)).toMatchObject({ pending: true, connected: false });

    // The bridge accepts: connected, and the page says what is left (its follow-back).
    await drainFederation(A.bindings);
    const [follow] = delivered("Follow");
    expect(follow!.body).toMatchObject({ type: "Follow", object: BRIDGE, actor: `${A.origin}/users/${u.username}` });
    const target = `${A.origin}/users/${u.username}`;
    await fromBridgy(fill(bridgyAccept, { FOLLOW_ID: (follow!.body as { id: string }).id, TARGET: target }));
    const connected = await b.send(PAGE);
    expect(connected.text).toContain('data-connected="yes"');
    expect(connected.text).toContain('data-item="follow_back" data-ok="no"');

    const out = await b.submit(connected, "/settings/bluesky", { decision: "disconnect" });
    expect(out.res.status).toBe(303);
    expect(out.res.headers.get("location")).toBe("/settings/bluesky?done=disconnected");
    expect((await outbox(u)).map((a) => a.type)).toEqual(["Follow", "Undo"]);
    expect(await state(u)).toMatchObject({ connected: false, pending: false });
    const gone = await b.follow(out);
    expect(gone.text).toContain("no longer bridged");
    expect(gone.text).toContain('value="connect"');
    // An unknown decision is refused on the page, nothing sent.
    const odd = await b.submit(gone, "/settings/bluesky", { decision: "maybe" });
    expect(odd.res.status).toBe(400);
    expect((await outbox(u)).map((a) => a.type)).toEqual(["Follow", "Undo"]);
  });

  it("refuses a form without its CSRF token, or with another browser's", async () => {
    const u = await readyUser();
    const { b, page } = await signedIn(u);
    const cookie = [...b.jar("a.example")].map(([k, v]) => `${k}=${v}`).join("; ");
    const post = (body: string) =>
      call(PAGE, {
        instance: A,
        method: "POST",
        body,
        headers: { cookie, accept: "text/html", "content-type": "application/x-www-form-urlencoded" },
      });
    const other = await signedIn(await registerUser({ instance: A }));
    for (const body of ["decision=connect", `decision=connect&csrf_token=${csrfOf(other.page)}`]) {
      const res = await post(body);
      expect(res.status, body).toBe(403);
      expect(await res.text()).toContain("The form expired");
    }
    expect(await outbox(u)).toEqual([]);
    expect(await state(u)).toMatchObject({ connected: false, pending: false });
    // With the page's own token it goes through.
    expect((await post(`decision=connect&csrf_token=${csrfOf(page)}`)).status).toBe(303);
    expect(await outbox(u)).toEqual([expect.objectContaining({ type: "Follow" })]);
  });
});
