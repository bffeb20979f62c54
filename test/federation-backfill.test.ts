/**
 * Backfill on follow (issue 36): a new follow puts the account's latest visible statuses into the follower's home
 * at once (local accounts: in the follow's batch; remote ones: their outbox's first page, fetched after the
 * response), a list fills the same way, and an unfollow still takes them away.
 */
import { afterEach, describe, expect, it } from "vitest";
import { StatusSchema } from "../src/schemas/status";
import { json, registerUser, valid, type TestUser } from "./helpers";
import { A, B, federating, type Instance } from "./instances";
import { expectAccepted, fill, q, remoteId, setup, unroute } from "./inbound";
import mastodonAccept from "./fixtures/federation/mastodon-accept.json";
import { AccountSchema } from "../src/schemas/account";
import { drainFederation } from "../src/federation/delivery/wake";

const timeline = async (user: TestUser, path = "/api/v1/timelines/home", inst: Instance = A) =>
  ((await json(`${path}?limit=40`, { instance: inst, token: user.token })) as unknown[]).map((s) =>
    valid(StatusSchema, s),
  );

const say = (user: TestUser, body: Record<string, unknown>, inst: Instance = A) =>
  json("/api/v1/statuses", { instance: inst, token: user.token, body }).then((s) => valid(StatusSchema, s));

describe("backfill on follow, local accounts", () => {
  it("puts the followed account's latest visible statuses into the home at once, in order; unfollow removes them", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: A });
    const carol = await registerUser({ instance: A });
    const first = await say(bob, { status: "one", visibility: "public" });
    const second = await say(bob, { status: "two (followers only)", visibility: "private" });
    await say(bob, { status: `@${carol.username} just for carol`, visibility: "direct" });
    const third = await say(bob, { status: "three", visibility: "unlisted" });
    expect((await timeline(alice)).map((s) => s.id)).toEqual([]);

    await json(`/api/v1/accounts/${bob.id}/follow`, { instance: A, token: alice.token, body: {} });
    // Followers-only is visible now that she follows; the direct status to someone else never is.
    expect((await timeline(alice)).map((s) => s.id)).toEqual([third.id, second.id, first.id]);

    await json(`/api/v1/accounts/${bob.id}/unfollow`, { instance: A, token: alice.token, body: {} });
    expect(await timeline(alice)).toEqual([]);
  });

  it("takes at most the latest 20; a locked account's are backfilled when the request is authorized", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: A });
    await json("/api/v1/accounts/update_credentials", {
      instance: A,
      token: bob.token,
      method: "PATCH",
      body: { locked: true },
    });
    // 25 statuses, seeded in one statement.
    await A.bindings.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25)
       INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, content_type, visibility, local, created_at, stored_at)
       SELECT printf('01BACKFILL%016d', i), 'https://a.example/objects/bf' || i || ?1, '', ?1, printf('01BACKFILL%016d', i), '', 'post ' || i, '', 'text/plain', 'public', 1, 1700000000000 + i, 1700000000000
       FROM n`,
    )
      .bind(bob.id)
      .run();
    await json(`/api/v1/accounts/${bob.id}/follow`, { instance: A, token: alice.token, body: {} });
    expect(await timeline(alice)).toEqual([]);
    await json(`/api/v1/follow_requests/${alice.id}/authorize`, { instance: A, token: bob.token, body: {} });
    const home = await timeline(alice);
    expect(home).toHaveLength(20);
    expect(home[0]!.content).toContain("post 25");
    expect(home[19]!.content).toContain("post 6");
  });

  it("adding an account to a list fills the list", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: A });
    const s = await say(bob, { status: "for the list" });
    await json(`/api/v1/accounts/${bob.id}/follow`, { instance: A, token: alice.token, body: {} });
    // A follow from before backfill existed: nothing of Bob's in Alice's feed.
    await q("DELETE FROM home_feed WHERE account_id = ?", alice.id);
    const list = await json("/api/v1/lists", { instance: A, token: alice.token, body: { title: "friends" } });
    expect(await timeline(alice, `/api/v1/timelines/list/${list.id}`)).toEqual([]);
    await json(`/api/v1/lists/${list.id}/accounts`, {
      instance: A,
      token: alice.token,
      body: { account_ids: [bob.id] },
    });
    expect((await timeline(alice, `/api/v1/timelines/list/${list.id}`)).map((x) => x.id)).toEqual([s.id]);
  });
});

describe("backfill on follow, a remote account's outbox", () => {
  afterEach(unroute);

  it("fetches the first page of the outbox after the response; shown once the follow is accepted", async () => {
    const s = await setup();
    const { peer, actor } = s;
    const outbox = `${actor}/outbox`;
    const note = (n: number, extra: Record<string, unknown> = {}) => ({
      id: `${actor}/notes/${n}`,
      type: "Note",
      attributedTo: actor,
      content: `<p>outbox post ${n}</p>`,
      published: new Date(Date.UTC(2026, 0, n)).toISOString(),
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      cc: [`${actor}/followers`],
      ...extra,
    });
    const create = (object: unknown, n: number) => ({
      id: `${actor}/notes/${n}/activity`,
      type: "Create",
      actor,
      object,
    });
    // Newest first, as outboxes are: two embedded posts, one by id only, one claiming someone else's authorship,
    // one by another server, and a boost (skipped).
    peer.objects.set(`${actor}/notes/2`, { "@context": "https://www.w3.org/ns/activitystreams", ...note(2) });
    peer.objects.set(outbox, {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: outbox,
      type: "OrderedCollection",
      totalItems: 6,
      first: `${outbox}?page=true`,
    });
    peer.objects.set(`${outbox}?page=true`, {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${outbox}?page=true`,
      type: "OrderedCollectionPage",
      partOf: outbox,
      orderedItems: [
        create(note(4), 4),
        { id: `${actor}/boost/1`, type: "Announce", actor, object: "https://elsewhere.example/notes/1" },
        create(note(6, { attributedTo: "https://peer.example/users/someoneelse" }), 6),
        create(note(7, { id: "https://elsewhere.example/notes/7" }), 7),
        create(`${actor}/notes/2`, 2),
        create(note(1), 1),
      ],
    });
    // Alice follows the peer's actor (found by its id): a request, and the outbox is read after the response.
    const found = await json(`/api/v2/search?q=${encodeURIComponent(actor)}&resolve=true&type=accounts`, {
      instance: A,
      token: s.user.token,
    });
    const them = valid(AccountSchema, found.accounts[0]).id;
    await json(`/api/v1/accounts/${them}/follow`, { instance: A, token: s.user.token, body: {} });
    const stored = await q<{ uri: string }>("SELECT uri FROM statuses WHERE account_id = ? ORDER BY id", them);
    expect(stored.map((r) => r.uri)).toEqual([`${actor}/notes/1`, `${actor}/notes/2`, `${actor}/notes/4`]);
    // Not shown before the follow is accepted (a request is not a follow).
    expect(await timeline(s.user)).toEqual([]);
    const [request] = await q<{ uri: string }>(
      "SELECT uri FROM follow_requests WHERE account_id = ? AND target_account_id = ?",
      s.user.id,
      them,
    );
    await expectAccepted(
      await peer.send(actor, fill(mastodonAccept, { ...s.vars, N: `${s.vars.N}a`, FOLLOW_ID: request!.uri })),
    );
    expect((await timeline(s.user)).map((x) => x.uri)).toEqual([
      `${actor}/notes/4`,
      `${actor}/notes/2`,
      `${actor}/notes/1`,
    ]);
    expect(await remoteId(actor)).toBe(them);

    // Throttled: a repeated request, another reader's follow, a new list membership within the hour read nothing.
    const outboxReads = () => peer.requests.filter((r) => r === `GET ${new URL(outbox).pathname}`).length;
    const reads = outboxReads();
    const bea = await registerUser({ instance: A });
    await json(`/api/v1/accounts/${them}/follow`, { instance: A, token: bea.token, body: {} });
    await json(`/api/v1/accounts/${them}/follow`, { instance: A, token: bea.token, body: {} });
    const list = await json("/api/v1/lists", { instance: A, token: s.user.token, body: { title: "peers" } });
    const addToList = () =>
      json(`/api/v1/lists/${list.id}/accounts`, { instance: A, token: s.user.token, body: { account_ids: [them] } });
    await addToList();
    expect(outboxReads()).toBe(reads);
    // An hour on, a new ask reads it again; but asking again for a membership that exists is no new ask.
    await q("UPDATE rate_limits SET window_start = window_start - 3600000 WHERE key = ?", `outbox:${them}`);
    await addToList();
    expect(outboxReads()).toBe(reads);
    await q("DELETE FROM list_accounts WHERE list_id = ?", list.id);
    await addToList();
    expect(outboxReads()).toBeGreaterThan(reads);
  });
});

describe("backfill across two Starling instances", () => {
  const { settle } = federating([A, B]);

  it("following an account on B brings its recent public posts into the home on A", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const p1 = await say(bob, { status: "before the follow 1" }, B);
    await say(bob, { status: "followers only, not in the outbox", visibility: "private" }, B);
    const p2 = await say(bob, { status: "before the follow 2", visibility: "unlisted" }, B);
    await settle();
    const handle = `${bob.username}@${B.domain}`;
    const found = await json(`/api/v2/search?q=${encodeURIComponent("@" + handle)}&resolve=true&type=accounts`, {
      instance: A,
      token: alice.token,
    });
    const bobOnA = valid(AccountSchema, found.accounts[0]);
    await json(`/api/v1/accounts/${bobOnA.id}/follow`, { instance: A, token: alice.token, body: {} });
    await settle();
    const home = await timeline(alice);
    expect(home.map((x) => x.content)).toEqual([
      expect.stringContaining("before the follow 2"),
      expect.stringContaining("before the follow 1"),
    ]);
    expect(home.map((x) => x.uri)).toEqual([p2.uri, p1.uri]);
    await drainFederation(A.bindings);
  });
});
