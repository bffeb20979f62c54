/**
 * Profile activities between two Starling instances (A and B of test/instances.ts) and from Mastodon-shaped
 * payloads (test/fixtures/federation/): Update of actors both ways (and refused for someone else's actor),
 * Update of notes (edits shown and streamed), Add/Remove on the featured collection (pins) both ways, actor
 * Delete removing the content, stale remote accounts refreshed when viewed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { eventSinks, type StreamEvent } from "../src/services/events";
import { runAccountDeletions } from "../src/services/account-deletion";
import { call, json, PNG_1PX, registerUser, valid } from "./helpers";
import { A, B, federating, instanceFetch, type Instance, findRemote } from "./instances";
import { createPeer, type Peer } from "./peer";
import { fill } from "./inbound";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";
import mastodonUpdatePerson from "./fixtures/federation/mastodon-update-person.json";
import mastodonUpdateNote from "./fixtures/federation/mastodon-update-note.json";
import mastodonAdd from "./fixtures/federation/mastodon-add-featured.json";
import mastodonRemove from "./fixtures/federation/mastodon-remove-featured.json";

const q = async <T = Record<string, unknown>>(inst: Instance, sql: string, ...args: unknown[]) =>
  (
    await inst.bindings.DB.prepare(sql)
      .bind(...args)
      .all<T>()
  ).results;

let n = 0;
/** `other` (on `on`) as `user` (on `from`) sees it, resolved by search. */

const account = async (id: string, inst: Instance, token?: string) =>
  valid(AccountSchema, await json(`/api/v1/accounts/${id}`, { instance: inst, token }));
const pinned = async (id: string, inst: Instance, token: string) =>
  ((await json(`/api/v1/accounts/${id}/statuses?pinned=true`, { instance: inst, token })) as unknown[]).map((s) =>
    valid(StatusSchema, s),
  );

describe("between two Starling instances", () => {
  const fed = federating();

  /** alice on A and bob on B, following each other; each as the other instance sees them. */
  async function pair() {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const bobOnA = await findRemote(alice, A, bob, B);
    const aliceOnB = await findRemote(bob, B, alice, A);
    await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { method: "POST", instance: B, token: bob.token });
    await json(`/api/v1/accounts/${bobOnA.id}/follow`, { method: "POST", instance: A, token: alice.token });
    await fed.settle();
    return { alice, bob, bobOnA, aliceOnB };
  }

  const sent = async (type: string, to: Instance) =>
    Promise.all(
      fed.routed.requests
        .filter((r) => r.method === "POST" && r.url.startsWith(to.origin) && r.url.includes("inbox"))
        .map((r) => r.clone().json() as Promise<any>),
    ).then((docs) => docs.filter((d) => d.type === type));

  it("a profile change reaches the followers' server both ways; a change nobody sees sends nothing", async () => {
    const { alice, bob, bobOnA, aliceOnB } = await pair();
    const form = new FormData();
    form.set("display_name", "Alice Changed");
    form.set("note", "new bio");
    form.set("fields_attributes[0][name]", "Site");
    form.set("fields_attributes[0][value]", "https://alice.example");
    form.set("avatar", new File([PNG_1PX], "a.png", { type: "image/png" }));
    valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", {
        method: "PATCH",
        instance: A,
        token: alice.token,
        body: form,
      }),
    );
    await fed.settle();

    const [update] = await sent("Update", B);
    expect(update).toMatchObject({
      actor: `${A.origin}/users/${alice.username}`,
      object: { type: "Person", id: `${A.origin}/users/${alice.username}`, name: "Alice Changed" },
    });
    expect(JSON.stringify(update.to)).toMatch(/(as:|activitystreams#)Public/);
    expect(Date.parse(update.object.updated)).toBeGreaterThan(Date.now() - 60_000);

    const seen = await account(aliceOnB.id, B, bob.token);
    expect(seen.display_name).toBe("Alice Changed");
    expect(seen.note).toContain("new bio");
    expect(seen.fields.map((f) => [f.name, f.value.includes("https://alice.example")])).toEqual([["Site", true]]);
    expect(seen.avatar).toMatch(/^https:\/\/a\.example\//);
    expect(seen.avatar).toBe((await account(alice.id, A)).avatar);

    // Settings nobody else sees (and a display name set to what it already is) send no Update.
    const before = (await q(A, "SELECT id FROM federation_outbox WHERE account_id = ?", alice.id)).length;
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      instance: A,
      token: alice.token,
      body: { hide_favorites: false, display_name: "Alice Changed", source: { privacy: "unlisted" } },
    });
    expect((await q(A, "SELECT id FROM federation_outbox WHERE account_id = ?", alice.id)).length).toBe(before);

    // B → A, aliases included (Pleroma's alias endpoint).
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      instance: B,
      token: bob.token,
      body: { display_name: "Bob Changed", locked: true },
    });
    await fed.settle();
    let bobSeen = await account(bobOnA.id, A, alice.token);
    expect([bobSeen.display_name, bobSeen.locked]).toEqual(["Bob Changed", true]);
    expect(
      await json("/api/v1/pleroma/aliases", {
        method: "PUT",
        instance: B,
        token: bob.token,
        body: { alias: `${alice.username}@${A.domain}` },
      }),
    ).toEqual({ status: "success" });
    await fed.settle();
    bobSeen = await account(bobOnA.id, A, alice.token);
    expect(bobSeen.pleroma.also_known_as).toEqual([`${A.origin}/users/${alice.username}`]);
  });

  it("pins and unpins travel as Add/Remove both ways; a pinned status not stored yet is fetched", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    // Posted before anyone on B follows alice.
    const early = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        method: "POST",
        instance: A,
        token: alice.token,
        body: { status: "early post" },
      }),
    );
    const { bobOnA, aliceOnB } = await (async () => {
      const bobOnA = await findRemote(alice, A, bob, B);
      const aliceOnB = await findRemote(bob, B, alice, A);
      await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { method: "POST", instance: B, token: bob.token });
      await json(`/api/v1/accounts/${bobOnA.id}/follow`, { method: "POST", instance: A, token: alice.token });
      await fed.settle();
      return { bobOnA, aliceOnB };
    })();
    const later = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        method: "POST",
        instance: A,
        token: alice.token,
        body: { status: "later post" },
      }),
    );
    const secret = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        method: "POST",
        instance: A,
        token: alice.token,
        body: { status: "followers only", visibility: "private" },
      }),
    );
    await fed.settle();
    // Bob's follow brought alice's earlier posts from her outbox (backfill, issue 36): the early one is taken out
    // of B again, to stand for a post B never got.
    await B.bindings.DB.prepare("DELETE FROM home_feed WHERE status_id IN (SELECT id FROM statuses WHERE uri = ?)")
      .bind(early.uri)
      .run();
    await B.bindings.DB.prepare("DELETE FROM statuses WHERE uri = ?").bind(early.uri).run();
    expect(await q(B, "SELECT id FROM statuses WHERE uri = ?", early.uri)).toEqual([]);

    for (const s of [early, later])
      await json(`/api/v1/statuses/${s.id}/pin`, { method: "POST", instance: A, token: alice.token });
    // A private status cannot be pinned, and nothing goes out for it.
    expect(
      (await call(`/api/v1/statuses/${secret.id}/pin`, { method: "POST", instance: A, token: alice.token })).status,
    ).toBe(422);
    await fed.settle();
    const adds = await sent("Add", B);
    expect(adds).toHaveLength(2);
    expect(adds[0]).toMatchObject({
      actor: `${A.origin}/users/${alice.username}`,
      object: early.uri,
      target: `${A.origin}/users/${alice.username}/collections/featured`,
    });
    expect((await pinned(aliceOnB.id, B, bob.token)).map((s) => s.uri).sort()).toEqual([early.uri, later.uri].sort());

    // Pinning again sends nothing more; unpinning sends a Remove.
    await json(`/api/v1/statuses/${later.id}/pin`, { method: "POST", instance: A, token: alice.token });
    await json(`/api/v1/statuses/${early.id}/unpin`, { method: "POST", instance: A, token: alice.token });
    await json(`/api/v1/statuses/${early.id}/unpin`, { method: "POST", instance: A, token: alice.token });
    await fed.settle();
    expect(await sent("Add", B)).toHaveLength(2);
    expect(await sent("Remove", B)).toHaveLength(1);
    expect((await pinned(aliceOnB.id, B, bob.token)).map((s) => s.uri)).toEqual([later.uri]);

    // B → A.
    const bobs = valid(
      StatusSchema,
      await json("/api/v1/statuses", { method: "POST", instance: B, token: bob.token, body: { status: "bob's pin" } }),
    );
    await json(`/api/v1/statuses/${bobs.id}/pin`, { method: "POST", instance: B, token: bob.token });
    await fed.settle();
    expect((await pinned(bobOnA.id, A, alice.token)).map((s) => s.uri)).toEqual([bobs.uri]);
    await json(`/api/v1/statuses/${bobs.id}/unpin`, { method: "POST", instance: B, token: bob.token });
    await fed.settle();
    expect(await pinned(bobOnA.id, A, alice.token)).toEqual([]);
  });

  it("resolving an account reads its featured collection: its pinned statuses are stored and shown pinned", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const shown = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        method: "POST",
        instance: A,
        token: alice.token,
        body: { status: "pinned before" },
      }),
    );
    await json("/api/v1/statuses", { method: "POST", instance: A, token: alice.token, body: { status: "not pinned" } });
    await json(`/api/v1/statuses/${shown.id}/pin`, { method: "POST", instance: A, token: alice.token });
    const aliceOnB = await findRemote(bob, B, alice, A);
    expect((await pinned(aliceOnB.id, B, bob.token)).map((s) => s.uri)).toEqual([shown.uri]);
  });

  it("an actor Delete hides the account at once and the deletion job removes its content; repeated, nothing more", async () => {
    const { alice, bob, bobOnA } = await pair();
    const counters = async () => {
      const me = await account(alice.id, A, alice.token);
      return [me.followers_count, me.following_count];
    };
    expect(await counters()).toEqual([1, 1]);
    const bobs = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        method: "POST",
        instance: B,
        token: bob.token,
        body: { status: `hi @${alice.username}@${A.domain}` },
      }),
    );
    await fed.settle();
    const [onA] = await q<{ id: string }>(A, "SELECT id FROM statuses WHERE uri = ?", bobs.uri);
    expect(onA).toBeTruthy();
    const notes = ((await json("/api/v1/notifications", { instance: A, token: alice.token })) as unknown[]).map((x) =>
      valid(NotificationSchema, x),
    );
    expect(notes.some((x) => x.type === "mention" && x.account.id === bobOnA.id)).toBe(true);

    expect(
      await json("/api/v1/pleroma/delete_account", {
        method: "POST",
        instance: B,
        token: bob.token,
        body: { password: bob.password },
      }),
    ).toEqual({ status: "success" });
    await fed.settle();
    const deletes = await sent("Delete", A);
    expect(deletes.map((x) => x.object)).toContain(`${B.origin}/users/${bob.username}`);

    // Hidden at once: the account, its status.
    expect((await call(`/api/v1/accounts/${bobOnA.id}`, { instance: A, token: alice.token })).status).toBe(404);
    // Alice's counters drop the follows both ways at once (kept by the follows' triggers), and stay exact.
    expect(await counters()).toEqual([0, 0]);
    expect((await call(`/api/v1/statuses/${onA!.id}`, { instance: A, token: alice.token })).status).toBe(404);
    // The job (the cron's) removes its statuses and notifications, and empties the row.
    await runAccountDeletions(A.bindings, Date.now(), 50);
    expect(await q(A, "SELECT id FROM statuses WHERE account_id = ?", bobOnA.id)).toEqual([]);
    expect(await q(A, "SELECT id FROM notifications WHERE from_account_id = ?", bobOnA.id)).toEqual([]);
    expect(
      await q(A, "SELECT deactivated, display_name, statuses_count FROM accounts WHERE id = ?", bobOnA.id),
    ).toEqual([{ deactivated: 1, display_name: "", statuses_count: 0 }]);
    expect(await counters()).toEqual([0, 0]);
    const [job] = await q<{ finished_at: number | null }>(
      A,
      "SELECT finished_at FROM account_deletions WHERE account_id = ?",
      bobOnA.id,
    );
    expect(job!.finished_at).not.toBeNull();
    // Nothing was sent by A about it.
    expect(await q(A, "SELECT id FROM federation_outbox WHERE account_id = ?", bobOnA.id)).toEqual([]);
    // The same Delete again (a retry): acknowledged, the finished job untouched.
    const redelivered = await Promise.all(
      fed.routed.requests
        .filter((r) => r.method === "POST" && r.url.startsWith(A.origin) && r.url.includes("inbox"))
        .map(async (r) => ({ r, doc: (await r.clone().json()) as any })),
    );
    const del = redelivered.find(
      (x) => x.doc.type === "Delete" && x.doc.object === `${B.origin}/users/${bob.username}`,
    )!;
    expect((await instanceFetch(A, del.r.clone())).status).toBeLessThan(300);
    expect(await q(A, "SELECT finished_at FROM account_deletions WHERE account_id = ?", bobOnA.id)).toEqual([
      { finished_at: job!.finished_at },
    ]);
  });

  it("a remote account not fetched for a day is refreshed after it is viewed, once", async () => {
    const { alice, bob, bobOnA } = await pair();
    for (const text of ["one", "two"])
      await json("/api/v1/statuses", { method: "POST", instance: B, token: bob.token, body: { status: text } });
    await fed.settle();
    await A.bindings.DB.prepare(
      "UPDATE accounts SET fetched_at = 0, statuses_count = 0, display_name = 'stale' WHERE id = ?",
    )
      .bind(bobOnA.id)
      .run();
    // This answer is the stored row; the refresh runs after it.
    expect((await account(bobOnA.id, A, alice.token)).display_name).toBe("stale");
    const refreshed = await account(bobOnA.id, A, alice.token);
    expect(refreshed.display_name).not.toBe("stale");
    expect(refreshed.statuses_count).toBe(2);
    // Fresh now: viewing it again fetches nothing.
    const fetches = () =>
      fed.routed.requests.filter((r) => r.method === "GET" && r.url.startsWith(`${B.origin}/users/${bob.username}`))
        .length;
    const before = fetches();
    await account(bobOnA.id, A, alice.token);
    expect(fetches()).toBe(before);
  });
});

describe("from Mastodon-shaped payloads", () => {
  let peer: Peer;
  let unroute: () => void;
  const events: StreamEvent[] = [];
  const sink = (e: StreamEvent[]) => void events.push(...e);
  beforeEach(() => {
    peer = createPeer();
    unroute = peer.route();
    eventSinks.push(sink);
    events.length = 0;
  });
  afterEach(() => {
    unroute();
    eventSinks.splice(eventSinks.indexOf(sink), 1);
  });

  /** A local user on A followed by a new peer actor (so that A stores the actor). */
  async function setup(opts: { featured?: boolean } = {}) {
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    if (opts.featured) {
      // The actor's document names its featured collection (as Mastodon's does), from the first fetch on.
      const doc = await (
        await peer.handle(new Request(actor, { headers: { Accept: "application/activity+json" } }))
      ).json<Record<string, unknown>>();
      peer.objects.set(actor, { ...doc, featured: `${actor}/collections/featured` });
    }
    const target = `${A.origin}/users/${user.username}`;
    const name = new URL(actor).pathname.split("/").pop()!;
    const vars = {
      ACTOR: actor,
      ORIGIN: peer.origin,
      TARGET: target,
      TARGET_NAME: user.username,
      NAME: name,
      N: String(Date.now() * 100 + n++),
    };
    expect((await peer.send(actor, fill(mastodonFollow, vars))).status).toBe(202);
    const [row] = await q<{ id: string }>(A, "SELECT id FROM accounts WHERE uri = ?", actor);
    return { user, actor, vars, remoteId: row!.id };
  }

  it("a Move whose target cannot be fetched yet is answered 500 (the sender retries) and applied once the target answers", async () => {
    const s = await setup();
    const targetName = `moved${s.vars.N}`;
    const target = peer.actor(targetName);
    const doc = await (
      await peer.handle(new Request(target, { headers: { Accept: "application/activity+json" } }))
    ).json<Record<string, unknown>>();
    const move = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${s.actor}#moves/${s.vars.N}`,
      type: "Move",
      actor: s.actor,
      object: s.actor,
      target,
    };
    const movedTo = async () =>
      (await q<{ m: string | null }>(A, "SELECT moved_to_account_id AS m FROM accounts WHERE id = ?", s.remoteId))[0]!
        .m;
    // The target's server is down (or too slow on its first fetch): not a refusal, a retry.
    const routed = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) =>
      new Request(input, init).url === target
        ? new Response("down", { status: 503 })
        : routed(input, init)) as typeof fetch;
    try {
      expect((await peer.send(s.actor, move)).status).toBe(500);
    } finally {
      globalThis.fetch = routed;
    }
    expect(await movedTo()).toBeNull();
    // The sender's retry, once the target answers (listing the mover among its aliases): the move is followed.
    peer.objects.set(target, { ...doc, alsoKnownAs: [s.actor] });
    expect((await peer.send(s.actor, move)).status).toBe(202);
    const [targetRow] = await q<{ id: string }>(A, "SELECT id FROM accounts WHERE uri = ?", target);
    expect(await movedTo()).toBe(targetRow!.id);
  });

  it("Update(Person) by the actor refreshes its profile (name, bio, emoji, fields, images); of someone else's actor it is ignored", async () => {
    const s = await setup();
    const other = await setup();
    // Someone else's actor: acknowledged, nothing changes.
    const forged = fill(mastodonUpdatePerson, { ...s.vars, N: `${s.vars.N}0`, OBJECT_ACTOR: other.actor });
    expect((await peer.send(s.actor, forged)).status).toBe(202);
    expect((await account(other.remoteId, A, other.user.token)).display_name).toBe(`Peer ${other.vars.NAME}`);

    expect((await peer.send(s.actor, fill(mastodonUpdatePerson, { ...s.vars, OBJECT_ACTOR: s.actor }))).status).toBe(
      202,
    );
    const seen = await account(s.remoteId, A, s.user.token);
    expect(seen.display_name).toBe("Renamed :blobcat:");
    expect(seen.note).toContain("New bio");
    expect(seen.emojis.map((e) => [e.shortcode, e.url])).toEqual([
      ["blobcat", `${peer.origin}/system/custom_emojis/images/blobcat.png`],
    ]);
    expect(seen.fields.map((f) => f.name)).toEqual(["Website", "Pronouns"]);
    expect(seen.avatar).toBe(`${peer.origin}/system/accounts/avatars/${s.vars.N}/original/new.png`);
    expect(seen.header).toBe(`${peer.origin}/system/accounts/headers/${s.vars.N}/original/new.png`);
    expect([seen.locked, seen.discoverable]).toEqual([true, true]);
    // An actor nobody here knows is not stored by its Update.
    const stranger = peer.actor();
    expect(
      (await peer.send(stranger, fill(mastodonUpdatePerson, { ...s.vars, ACTOR: stranger, OBJECT_ACTOR: stranger })))
        .status,
    ).toBe(202);
    expect(await q(A, "SELECT id FROM accounts WHERE uri = ?", stranger)).toEqual([]);
  });

  it("Update(Note) replaces the content, is streamed as status.update, and a repeated or older edit changes nothing", async () => {
    const s = await setup();
    expect((await peer.send(s.actor, fill(mastodonCreate, s.vars))).status).toBe(202);
    const [row] = await q<{ id: string }>(
      A,
      "SELECT id FROM statuses WHERE uri = ?",
      `${s.actor}/statuses/${s.vars.N}`,
    );
    events.length = 0;
    const edit = fill(mastodonUpdateNote, {
      ...s.vars,
      EDIT: "2",
      UPDATED: "2024-05-02T10:00:00Z",
      CONTENT: "edited text",
    });
    expect((await peer.send(s.actor, edit)).status).toBe(202);
    const shown = valid(StatusSchema, await json(`/api/v1/statuses/${row!.id}`, { instance: A, token: s.user.token }));
    expect([shown.content, shown.spoiler_text, shown.sensitive, shown.edited_at]).toEqual([
      "<p>edited text</p>",
      "edited cw",
      true,
      "2024-05-02T10:00:00.000Z",
    ]);
    expect(events.filter((e) => e.event === "status.update")).toEqual([
      { accountId: null, event: "status.update", payload: row!.id },
    ]);

    events.length = 0;
    expect((await peer.send(s.actor, edit)).status).toBe(202);
    const older = fill(mastodonUpdateNote, {
      ...s.vars,
      EDIT: "1",
      UPDATED: "2024-05-01T12:00:00Z",
      CONTENT: "older text",
    });
    expect((await peer.send(s.actor, older)).status).toBe(202);
    expect(events).toEqual([]);
    expect(
      valid(StatusSchema, await json(`/api/v1/statuses/${row!.id}`, { instance: A, token: s.user.token })).content,
    ).toBe("<p>edited text</p>");
    // Another actor's Update of that note is not an edit (the object is fetched from its id and is not theirs).
    const other = await setup();
    const hijack = fill(mastodonUpdateNote, {
      ...s.vars,
      ACTOR: other.actor,
      EDIT: "3",
      UPDATED: "2024-05-03T10:00:00Z",
      CONTENT: "hijacked",
    });
    hijack.object.attributedTo = other.actor;
    expect((await peer.send(other.actor, hijack)).status).toBe(202);
    expect(
      valid(StatusSchema, await json(`/api/v1/statuses/${row!.id}`, { instance: A, token: s.user.token })).content,
    ).toBe("<p>edited text</p>");
  });

  it("Add/Remove on the actor's featured collection pin its statuses (fetched when new); other targets and others' statuses are dropped", async () => {
    const s = await setup({ featured: true });
    const other = await setup();
    const featured = `${s.actor}/collections/featured`;
    // A note not delivered before, served at its id.
    const noteId = `${s.actor}/statuses/${s.vars.N}`;
    const create = fill(mastodonCreate, s.vars);
    peer.objects.set(noteId, { "@context": create["@context"], ...create.object });
    // The other actor's stored status.
    expect((await peer.send(other.actor, fill(mastodonCreate, other.vars))).status).toBe(202);
    const othersNote = `${other.actor}/statuses/${other.vars.N}`;

    // Wrong target, and someone else's status: dropped.
    expect(
      (
        await peer.send(
          s.actor,
          fill(mastodonAdd, { ...s.vars, OBJECT: noteId, COLLECTION: `${s.actor}/collections/tags` }),
        )
      ).status,
    ).toBe(202);
    expect(
      (await peer.send(s.actor, fill(mastodonAdd, { ...s.vars, OBJECT: othersNote, COLLECTION: featured }))).status,
    ).toBe(202);
    expect(await q(A, "SELECT id FROM statuses WHERE uri = ?", noteId)).toEqual([]);
    expect(await q(A, "SELECT id FROM statuses WHERE uri = ? AND pinned_at IS NOT NULL", othersNote)).toEqual([]);

    expect(
      (await peer.send(s.actor, fill(mastodonAdd, { ...s.vars, OBJECT: noteId, COLLECTION: featured }))).status,
    ).toBe(202);
    expect((await pinned(s.remoteId, A, s.user.token)).map((x) => x.uri)).toEqual([noteId]);
    expect(
      (await peer.send(s.actor, fill(mastodonRemove, { ...s.vars, OBJECT: noteId, COLLECTION: featured }))).status,
    ).toBe(202);
    expect(await pinned(s.remoteId, A, s.user.token)).toEqual([]);
  });
});
