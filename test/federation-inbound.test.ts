/**
 * The inbox (issue 13, part 1): a Fedify-based peer (test/peer.ts) sends signed activities to instance A, as
 * Mastodon, Pleroma and Misskey would (fixtures in test/fixtures/federation/); what they become is checked through
 * A's client API with the entity schemas, and in the rows where the API cannot tell (outbox rows).
 */
import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventSinks, type StreamEvent } from "../src/services/events";
import { call, json, registerUser, valid } from "./helpers";
import { expectAccepted, fill, followPeer, q, remoteId, reroute, setup, unroute } from "./inbound";
import { A, instanceFetch } from "./instances";
import { signRequest } from "@fedify/fedify";
import { CryptographicKey } from "@fedify/vocab";
import { createPeer, rsaKeyPair } from "./peer";
import { openSocket, type WsFrame } from "./streams";
import { StatusSchema } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { RelationshipSchema } from "../src/schemas/account";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";
import pleromaCreate from "./fixtures/federation/pleroma-create-note.json";
import misskeyCreate from "./fixtures/federation/misskey-create-note.json";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";
import mastodonAccept from "./fixtures/federation/mastodon-accept.json";
import mastodonUndo from "./fixtures/federation/mastodon-undo-follow.json";
import mastodonDelete from "./fixtures/federation/mastodon-delete-tombstone.json";

afterEach(unroute);

describe("signatures", () => {
  for (const spec of ["draft-cavage-http-signatures-12", "rfc9421"] as const) {
    {
      it(`accepts a Follow signed with ${spec}`, async () => {
        const s = await setup();
        await expectAccepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars), { spec }));
        const rel = valid(
          RelationshipSchema,
          (
            await json(`/api/v1/accounts/relationships?id[]=${await remoteId(s.actor)}`, {
              instance: A,
              token: s.user.token,
            })
          )[0],
        );
        expect(rel.followed_by).toBe(true);
      });
    }
  }

  it("accepts a Follow carrying an Object Integrity Proof by the actor's Ed25519 key (no HTTP signature)", async () => {
    const s = await setup();
    await expectAccepted(await s.peer.sendWithProof(s.actor, fill(mastodonFollow, s.vars)));
    const rel = valid(
      RelationshipSchema,
      (
        await json(`/api/v1/accounts/relationships?id[]=${await remoteId(s.actor)}`, {
          instance: A,
          token: s.user.token,
        })
      )[0],
    );
    expect(rel.followed_by).toBe(true);
    // A proof made with another actor's key does not make the activity the claimed actor's: refused, nothing stored.
    const t = await setup();
    const mallory = t.peer.actor();
    const relabelled = await t.peer.sendWithProof(mallory, { ...fill(mastodonFollow, t.vars), actor: t.actor });
    expect(relabelled.status).toBe(401);
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", t.user.id)).toEqual([]);
    expect(await q("SELECT id FROM notifications WHERE account_id = ?", t.user.id)).toEqual([]);
  });

  it("refuses an activity whose actor is not the key's owner (401), storing nothing", async () => {
    const s = await setup();
    const mallory = s.peer.actor();
    // Signed by mallory's own valid key, claiming to come from s.actor.
    const res = await s.peer.send(s.actor, fill(mastodonFollow, s.vars), { signAs: mallory });
    expect(res.status).toBe(401);
    const create = fill(mastodonCreate, s.vars);
    expect((await s.peer.send(s.actor, create, { signAs: mallory, spec: "rfc9421" })).status).toBe(401);
    expect(await q("SELECT id FROM follows WHERE uri = ?", `${s.peer.origin}/${s.vars.N}`)).toEqual([]);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", create.object.id)).toEqual([]);
    expect(await q("SELECT id FROM notifications WHERE account_id = ?", s.user.id)).toEqual([]);
  });

  it("refuses a key hosted on another origin that claims the actor as its owner (401), storing nothing", async () => {
    const s = await setup();
    // evil.example publishes a key document "owned" by the peer's actor and signs as that actor with it.
    const evil = createPeer("evil.example");
    reroute(() => s.peer.route([evil]));
    const pair = await rsaKeyPair();
    const keyId = "https://evil.example/keys/1";
    // A key document Fedify reads (it refuses `"type": "Key"`), so the signature verifies and only ownership fails.
    evil.objects.set(
      keyId,
      await new CryptographicKey({ id: new URL(keyId), owner: new URL(s.actor), publicKey: pair.publicKey }).toJsonLd(),
    );
    for (const spec of ["draft-cavage-http-signatures-12", "rfc9421"] as const) {
      const follow = fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}${spec}` });
      const req = new Request(`${A.origin}/users/${s.user.username}/inbox`, {
        method: "POST",
        headers: { "Content-Type": "application/activity+json" },
        body: JSON.stringify(follow),
      });
      const res = await instanceFetch(A, await signRequest(req, pair.privateKey, new URL(keyId), { spec }));
      expect(res.status, spec).toBe(401);
      expect(await res.json()).toEqual({ error: "The signing key does not belong to the activity's actor" });
    }
    expect(await q("SELECT id FROM follows WHERE uri LIKE ?", `${s.peer.origin}/${s.vars.N}%`)).toEqual([]);
    expect(await q("SELECT id FROM accounts WHERE uri = ?", s.actor)).toEqual([]);
  });

  it("refuses unsigned and forged requests (401)", async () => {
    const s = await setup();
    const body = JSON.stringify(fill(mastodonFollow, s.vars));
    const unsigned = await call(`${A.origin}/inbox`, {
      instance: A,
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body,
    });
    expect(unsigned.status).toBe(401);
    const forged = await call(`${A.origin}/inbox`, {
      instance: A,
      method: "POST",
      headers: {
        "Content-Type": "application/activity+json",
        Signature: `keyId="${s.actor}#main-key",algorithm="rsa-sha256",headers="(request-target) host date",signature="AAAA"`,
        Date: new Date().toUTCString(),
      },
      body,
    });
    expect(forged.status).toBe(401);
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", s.user.id)).toEqual([]);
  });

  it("acknowledges (202) and drops an activity type it does not process, storing nothing", async () => {
    const s = await setup();
    // An activity type no listener handles (here ActivityStreams' Arrive): acknowledged, so the sender does not
    // retry it, and dropped (test/federation-corpus.test.ts has extension types and object types).
    const arrive = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${s.actor}#arrive/${s.vars.N}`,
      type: "Arrive",
      actor: s.actor,
      location: { type: "Place", name: "here" },
    };
    const res = await s.peer.send(s.actor, arrive);
    expect(res.status).toBe(202);
    expect(await q("SELECT id FROM statuses WHERE uri LIKE ?", `${s.actor}%`)).toEqual([]);
    // The Undo of an activity Starling has no use for: the same.
    const listen = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${s.actor}#listens/${s.vars.N}`,
      type: "Listen",
      actor: s.actor,
      object: `${A.origin}/objects/x`,
    };
    const undoListen = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${s.actor}#undo/${s.vars.N}`,
      type: "Undo",
      actor: s.actor,
      object: listen,
    };
    expect((await s.peer.send(s.actor, undoListen)).status).toBe(202);
    // Profile updates are handled (test/federation-profile.test.ts), as actor deletes are (test/account-deletion.test.ts).
    const person = { id: s.actor, type: "Person", inbox: `${s.actor}/inbox`, preferredUsername: s.vars.NAME };
    expect(
      (
        await s.peer.send(s.actor, {
          "@context": "https://www.w3.org/ns/activitystreams",
          id: `${s.actor}#update`,
          type: "Update",
          actor: s.actor,
          object: person,
        })
      ).status,
    ).toBe(202);
  });
});

/** Collects what services publish for streams. */
function captureEvents() {
  const seen: StreamEvent[] = [];
  const sink = (events: StreamEvent[]) => void seen.push(...events);
  beforeEach(() => void eventSinks.push(sink));
  afterEach(() => {
    const i = eventSinks.indexOf(sink);
    if (i >= 0) eventSinks.splice(i, 1);
  });
  return seen;
}

describe("follows", () => {
  const seen = captureEvents();

  it("an unlocked account: a follow, recounted, notified, and an Accept in the outbox (Mastodon's Follow)", async () => {
    const s = await setup();
    const follow = fill(mastodonFollow, s.vars);
    await expectAccepted(await s.peer.send(s.actor, follow, { inbox: `/users/${s.user.username}/inbox` }));
    const them = await remoteId(s.actor);
    expect(await q("SELECT uri FROM follows WHERE account_id = ? AND target_account_id = ?", them, s.user.id)).toEqual([
      { uri: follow.id },
    ]);
    const me = await json(`/api/v1/accounts/${s.user.id}`, { instance: A, token: s.user.token });
    expect(me.followers_count).toBe(1);
    const followers = await json(`/api/v1/accounts/${s.user.id}/followers`, { instance: A, token: s.user.token });
    expect(followers.map((a: { acct: string }) => a.acct)).toEqual([`${s.vars.NAME}@peer.example`]);
    const notes = (await json("/api/v1/notifications", { instance: A, token: s.user.token })).map((x: unknown) =>
      valid(NotificationSchema, x),
    ) as any[];
    expect(notes.map((x: any) => [x.type, x.account.acct])).toEqual([["follow", `${s.vars.NAME}@peer.example`]]);
    const outbox = await q<{ activity: string }>(
      "SELECT activity FROM federation_outbox WHERE account_id = ?",
      s.user.id,
    );
    expect(outbox.map((r) => JSON.parse(r.activity))).toEqual([{ type: "Accept", uri: follow.id, followerId: them }]);

    // A repeated Follow (our Accept was lost) is accepted again; nothing else changes.
    const again = { ...follow, id: `${follow.id}-again` };
    await expectAccepted(await s.peer.send(s.actor, again));
    expect((await q("SELECT activity FROM federation_outbox WHERE account_id = ?", s.user.id)).length).toBe(2);
    expect((await json("/api/v1/notifications", { instance: A, token: s.user.token })).length).toBe(1);
    expect((await json(`/api/v1/accounts/${s.user.id}`, { instance: A, token: s.user.token })).followers_count).toBe(1);

    // Undo(Follow) naming the latest Follow: the follow, its notification and the count go.
    await expectAccepted(await s.peer.send(s.actor, fill(mastodonUndo, { ...s.vars, FOLLOW_ID: again.id })));
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", s.user.id)).toEqual([]);
    expect((await json(`/api/v1/accounts/${s.user.id}`, { instance: A, token: s.user.token })).followers_count).toBe(0);
    expect(await json("/api/v1/notifications", { instance: A, token: s.user.token })).toEqual([]);
  });

  it("a locked account: a follow request (their id) and a follow_request notification, no Accept yet", async () => {
    const s = await setup({ locked: true });
    const follow = fill(mastodonFollow, s.vars);
    await expectAccepted(await s.peer.send(s.actor, follow));
    const requests = await json("/api/v1/follow_requests", { instance: A, token: s.user.token });
    expect(requests.map((a: { acct: string }) => a.acct)).toEqual([`${s.vars.NAME}@peer.example`]);
    expect(await q("SELECT uri FROM follow_requests WHERE target_account_id = ?", s.user.id)).toEqual([
      { uri: follow.id },
    ]);
    const notes = (await json("/api/v1/notifications", { instance: A, token: s.user.token })).map((x: unknown) =>
      valid(NotificationSchema, x),
    ) as any[];
    expect(notes.map((x: any) => x.type)).toEqual(["follow_request"]);
    expect(await q("SELECT id FROM federation_outbox WHERE account_id = ?", s.user.id)).toEqual([]);
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", s.user.id)).toEqual([]);
    // Undo withdraws the request and its notification.
    await expectAccepted(await s.peer.send(s.actor, fill(mastodonUndo, { ...s.vars, FOLLOW_ID: follow.id })));
    expect(await json("/api/v1/follow_requests", { instance: A, token: s.user.token })).toEqual([]);
    expect(await json("/api/v1/notifications", { instance: A, token: s.user.token })).toEqual([]);
  });

  it("refuses (Reject in the outbox, nothing else) a Follow from a blocked account or a blocked domain", async () => {
    const s = await setup();
    // Make the peer actor known, then block it.
    const first = fill(mastodonFollow, s.vars);
    await expectAccepted(await s.peer.send(s.actor, first));
    const them = await remoteId(s.actor);
    await json(`/api/v1/accounts/${them}/block`, { instance: A, token: s.user.token, method: "POST" });
    await env.DB.prepare("DELETE FROM federation_outbox WHERE account_id = ?").bind(s.user.id).run();
    const second = { ...first, id: `${first.id}-2` };
    await expectAccepted(await s.peer.send(s.actor, second));
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", s.user.id)).toEqual([]);
    expect(
      (await q<{ activity: string }>("SELECT activity FROM federation_outbox WHERE account_id = ?", s.user.id)).map(
        (r) => JSON.parse(r.activity),
      ),
    ).toEqual([{ type: "Reject", uri: second.id, followerId: them }]);

    const t = await setup();
    await json("/api/v1/domain_blocks", {
      instance: A,
      token: t.user.token,
      method: "POST",
      body: { domain: "peer.example" },
    });
    const f = fill(mastodonFollow, t.vars);
    await expectAccepted(await t.peer.send(t.actor, f));
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", t.user.id)).toEqual([]);
    expect(await q("SELECT id FROM follow_requests WHERE target_account_id = ?", t.user.id)).toEqual([]);
    expect(await json("/api/v1/notifications", { instance: A, token: t.user.token })).toEqual([]);
    expect(
      (await q<{ activity: string }>("SELECT activity FROM federation_outbox WHERE account_id = ?", t.user.id)).map(
        (r) => JSON.parse(r.activity).type,
      ),
    ).toEqual(["Reject"]);
  });

  it("refuses a Follow of a deactivated account (Reject, nothing else)", async () => {
    const s = await setup();
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(s.user.id).run();
    const f = fill(mastodonFollow, s.vars);
    await expectAccepted(await s.peer.send(s.actor, f));
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", s.user.id)).toEqual([]);
    expect(await q("SELECT id FROM notifications WHERE account_id = ?", s.user.id)).toEqual([]);
    expect(
      (await q<{ activity: string }>("SELECT activity FROM federation_outbox WHERE account_id = ?", s.user.id)).map(
        (r) => JSON.parse(r.activity).type,
      ),
    ).toEqual(["Reject"]);
  });

  it("Accept of our follow request starts the follow (Mastodon's Accept with the Follow embedded); Reject ends it", async () => {
    const s = await setup();
    // The peer actor becomes known through a Follow of someone else (its document is fetched then).
    const other = await registerUser({ instance: A });
    await expectAccepted(
      await s.peer.send(s.actor, fill(mastodonFollow, { ...s.vars, TARGET: `${A.origin}/users/${other.username}` })),
    );
    const them = await remoteId(s.actor);
    const rel = valid(
      RelationshipSchema,
      await json(`/api/v1/accounts/${them}/follow`, {
        instance: A,
        token: s.user.token,
        method: "POST",
        body: { notify: true },
      }),
    );
    expect(rel.requested).toBe(true);
    const [request] = await q<{ uri: string }>(
      "SELECT uri FROM follow_requests WHERE account_id = ? AND target_account_id = ?",
      s.user.id,
      them,
    );

    // An Accept from someone else's actor does not accept it.
    const mallory = s.peer.actor();
    await expectAccepted(
      await s.peer.send(mallory, fill(mastodonAccept, { ...s.vars, ACTOR: mallory, FOLLOW_ID: request!.uri })),
    );
    expect((await q("SELECT id FROM follows WHERE account_id = ?", s.user.id)).length).toBe(0);

    seen.length = 0;
    await expectAccepted(await s.peer.send(s.actor, fill(mastodonAccept, { ...s.vars, FOLLOW_ID: request!.uri })));
    // The requester's stream hears of it as of a local accept.
    expect(
      seen
        .filter((e) => e.event === "pleroma:follow_relationships_update")
        .map((e) => [e.accountId, (e.payload as { state: string }).state]),
    ).toEqual([[s.user.id, "follow_accept"]]);
    const after = valid(
      RelationshipSchema,
      (await json(`/api/v1/accounts/relationships?id[]=${them}`, { instance: A, token: s.user.token }))[0],
    );
    expect([after.following, after.requested, after.notifying]).toEqual([true, false, true]);
    expect((await json(`/api/v1/accounts/${s.user.id}`, { instance: A, token: s.user.token })).following_count).toBe(1);

    // Reject by the Follow's id (no embedded object): the follow ends.
    const reject = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${s.actor}#rejects/${s.vars.N}`,
      type: "Reject",
      actor: s.actor,
      object: request!.uri,
    };
    await expectAccepted(await s.peer.send(s.actor, reject));
    const gone = valid(
      RelationshipSchema,
      (await json(`/api/v1/accounts/relationships?id[]=${them}`, { instance: A, token: s.user.token }))[0],
    );
    expect([gone.following, gone.requested]).toEqual([false, false]);
    expect((await json(`/api/v1/accounts/${s.user.id}`, { instance: A, token: s.user.token })).following_count).toBe(0);
  });
});

/** The peer actor followed by the local user (Follow → our Accept is simulated by the peer's Accept). */

describe("statuses", () => {
  it("a note dated before 2000 (or in the future) is dated now: its id stays well-formed and it pages with the rest", async () => {
    const s = await setup();
    const before = Date.now();
    for (const published of ["1960-01-01T00:00:00Z", "2999-01-01T00:00:00Z"]) {
      const create = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}${published.slice(0, 4)}` });
      create.object.id = `${create.object.id}-${published.slice(0, 4)}`;
      create.object.published = published;
      await expectAccepted(await s.peer.send(s.actor, create));
    }
    const notes = (await json("/api/v1/notifications", { instance: A, token: s.user.token })).map((x: unknown) =>
      valid(NotificationSchema, x),
    ) as any[];
    expect(notes).toHaveLength(2);
    for (const n of notes) {
      expect(n.status.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(Date.parse(n.status.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(n.status.created_at)).toBeLessThanOrEqual(Date.now());
      expect((await call(`/api/v1/statuses/${n.status.id}`, { instance: A, token: s.user.token })).status).toBe(200);
    }
  });

  it("Mastodon's Create(Note) mentioning a local user: status, mention, tag, remote emoji, image, notification, timelines", async () => {
    const s = await setup();
    const create = fill(mastodonCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, create, { spec: "rfc9421" }));
    const notes = (await json("/api/v1/notifications", { instance: A, token: s.user.token })).map((x: unknown) =>
      valid(NotificationSchema, x),
    ) as any[];
    expect(notes.map((x: any) => x.type)).toEqual(["mention"]);
    const status = valid(StatusSchema, notes[0]!.status);
    expect(status.uri).toBe(create.object.id);
    expect(status.url).toBe(create.object.url);
    expect(status.visibility).toBe("public");
    expect(status.account.acct).toBe(`${s.vars.NAME}@peer.example`);
    expect(status.content).not.toMatch(/<script/);
    expect(status.content).toMatch(/look :blobcat:/);
    expect(status.language).toBe("en");
    expect(status.mentions.map((m) => m.id)).toEqual([s.user.id]);
    expect(status.tags.map((t) => t.name)).toEqual(["fediverse"]);
    expect(status.emojis).toEqual([
      {
        shortcode: "blobcat",
        url: `${s.peer.origin}/system/custom_emojis/images/blobcat.png`,
        static_url: `${s.peer.origin}/system/custom_emojis/images/blobcat.png`,
        visible_in_picker: false,
      },
    ]);
    expect(status.media_attachments.map((m) => [m.type, m.url, m.remote_url, m.description])).toEqual([
      ["image", create.object.attachment[0].url, create.object.attachment[0].url, "A cat on a keyboard"],
    ]);
    expect([status.favourites_count, status.reblogs_count]).toEqual([3, 2]);
    expect(status.created_at).toBe("2024-05-01T10:00:00.000Z");
    // The same by id, anonymously (public), and in the federated timeline but not the local one.
    valid(StatusSchema, await json(`/api/v1/statuses/${status.id}`, { instance: A }));
    const remote = await json("/api/v1/timelines/public?remote=true&limit=40", { instance: A });
    expect(remote.map((x: { id: string }) => x.id)).toContain(status.id);
    const local = await json("/api/v1/timelines/public?local=true&limit=40", { instance: A });
    expect(local.map((x: { id: string }) => x.id)).not.toContain(status.id);
    // In the mentioned user's home.
    const home = await json("/api/v1/timelines/home", { instance: A, token: s.user.token });
    expect(home.map((x: { id: string }) => x.id)).toContain(status.id);
    // The hashtag timeline.
    const tag = await json("/api/v1/timelines/tag/fediverse?limit=40", { instance: A });
    expect(tag.map((x: { id: string }) => x.id)).toContain(status.id);

    // Delivered again: nothing new.
    await expectAccepted(await s.peer.send(s.actor, { ...create, id: `${create.id}/again` }));
    expect((await q("SELECT id FROM statuses WHERE uri = ?", create.object.id)).length).toBe(1);
    expect((await json("/api/v1/notifications", { instance: A, token: s.user.token })).length).toBe(1);
    // A local `:blobcat:` is not the remote one: the status keeps the remote host's image.
    const row = await q<{ emojis: string }>("SELECT emojis FROM statuses WHERE id = ?", status.id);
    expect(JSON.parse(row[0]!.emojis)[0].domain).toBe("peer.example");
  });

  it("reaches the public:remote stream of its host and the mentioned user's stream (an update frame, and a notification)", async () => {
    const s = await setup();
    const remote = await openSocket("stream=public:remote&instance=peer.example");
    const user = await openSocket(`stream=user&access_token=${s.user.token}`);
    const create = fill(mastodonCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, create));
    const id = (await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", create.object.id))[0]!.id;
    const isUpdate = (f: WsFrame) => f.event === "update" && JSON.parse(f.payload!).id === id;
    expect((await remote.next(isUpdate)).stream).toEqual(["public:remote", "peer.example"]);
    valid(StatusSchema, JSON.parse((await user.next(isUpdate)).payload!));
    const note = await user.next((f) => f.event === "notification");
    expect(valid(NotificationSchema, JSON.parse(note.payload!)).type).toBe("mention");
    await Promise.all([remote.close(), user.close()]);
  });

  it("resolves a mention of an unknown remote actor (fetched, stored) and honours the recipient's domain block", async () => {
    const s = await setup();
    const blocker = await registerUser({ instance: A });
    await json("/api/v1/domain_blocks", {
      instance: A,
      token: blocker.token,
      method: "POST",
      body: { domain: "peer.example" },
    });
    const friend = s.peer.actor();
    const create = fill(mastodonCreate, s.vars);
    const blockerUri = `${A.origin}/users/${blocker.username}`;
    create.object.cc = [...create.object.cc, blockerUri, friend];
    create.object.tag.push(
      { type: "Mention", href: friend, name: "@friend@peer.example" },
      { type: "Mention", href: blockerUri, name: `@${blocker.username}` },
    );
    await expectAccepted(await s.peer.send(s.actor, create));
    const id = (await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", create.object.id))[0]!.id;
    const status = valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token }));
    const friendId = await remoteId(friend);
    expect(friendId).toBeTruthy();
    expect(status.mentions.map((m) => m.id).sort()).toEqual([s.user.id, blocker.id, friendId].sort());
    // The user who blocks the sender's domain hears nothing of it.
    expect(await json("/api/v1/notifications", { instance: A, token: blocker.token })).toEqual([]);
    expect((await json("/api/v1/notifications", { instance: A, token: s.user.token })).length).toBe(1);
  });

  it("a Question (Mastodon's poll) mentioning a local user is stored with its poll", async () => {
    const s = await setup();
    const create = fill(mastodonCreate, s.vars);
    create.object.type = "Question";
    create.object.endTime = "2099-01-01T00:00:00Z";
    create.object.oneOf = [
      { type: "Note", name: "yes", replies: { type: "Collection", totalItems: 4 } },
      { type: "Note", name: "no", replies: { type: "Collection", totalItems: 1 } },
    ];
    create["@context"] = [...create["@context"], { oneOf: "as:oneOf", endTime: "as:endTime" }];
    await expectAccepted(await s.peer.send(s.actor, create));
    const id = (await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", create.object.id))[0]!.id;
    const status = valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token }));
    expect(status.poll?.options.map((o) => o.title)).toEqual(["yes", "no"]);
    expect([status.poll?.multiple, status.poll?.expires_at]).toEqual([false, "2099-01-01T00:00:00.000Z"]);
  });

  it("stores nothing that concerns nobody here (not followed, no local recipient, no local parent)", async () => {
    const s = await setup();
    const create = fill(mastodonCreate, s.vars);
    const nobody = `${A.origin}/users/nobody_${s.vars.N}`;
    for (const o of [create, create.object]) {
      o.cc = [`${s.actor}/followers`];
    }
    create.object.tag = create.object.tag.filter((t: { type: string }) => t.type !== "Mention");
    create.object.content = "<p>hello world</p>";
    create.object.cc.push(nobody);
    await expectAccepted(await s.peer.send(s.actor, create));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", create.object.id)).toEqual([]);
  });

  it("a followed author's followers-only post reaches followers' home, not public timelines; a direct one only its recipient", async () => {
    const s = await setup();
    await followPeer(s);
    const stranger = await registerUser({ instance: A });
    const create = fill(mastodonCreate, s.vars);
    for (const o of [create, create.object]) {
      o.to = [`${s.actor}/followers`];
      o.cc = [];
    }
    create.object.tag = [];
    create.object.content = "<p>for followers</p>";
    await expectAccepted(await s.peer.send(s.actor, create));
    const home = await json("/api/v1/timelines/home", { instance: A, token: s.user.token });
    const got = valid(
      StatusSchema,
      home.find((x: { uri: string }) => x.uri === create.object.id),
    );
    expect(got.visibility).toBe("private");
    expect((await call(`/api/v1/statuses/${got.id}`, { instance: A, token: stranger.token })).status).toBe(404);
    expect((await call(`/api/v1/statuses/${got.id}`, { instance: A })).status).toBe(404);
    const pub = await json("/api/v1/timelines/public?limit=40", { instance: A });
    expect(pub.map((x: { id: string }) => x.id)).not.toContain(got.id);

    // Direct to the local user: a conversation, a mention notification; nobody else sees it.
    const dm = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}9` });
    for (const o of [dm, dm.object]) {
      o.to = [s.target];
      o.cc = [];
    }
    await expectAccepted(await s.peer.send(s.actor, dm));
    const convs = await json("/api/v1/conversations", { instance: A, token: s.user.token });
    expect(convs.map((c: { last_status: { uri: string } }) => c.last_status.uri)).toContain(dm.object.id);
    const dmId = (await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", dm.object.id))[0]!.id;
    expect((await json(`/api/v1/statuses/${dmId}`, { instance: A, token: s.user.token })).visibility).toBe("direct");
    expect((await call(`/api/v1/statuses/${dmId}`, { instance: A, token: stranger.token })).status).toBe(404);
  });

  it("a note naming this instance's conversation id (and replying to nothing) does not slip into that thread", async () => {
    const s = await setup();
    const parent = await json("/api/v1/statuses", {
      instance: A,
      token: s.user.token,
      method: "POST",
      body: { status: "my thread" },
    });
    const localContext = (await q<{ context: string }>("SELECT context FROM statuses WHERE id = ?", parent.id))[0]!
      .context;
    s.peer.objects.set(`${s.peer.origin}/schemas/litepub-0.1.jsonld`, {
      "@context": [
        "https://www.w3.org/ns/activitystreams",
        "https://w3id.org/security/v1",
        { litepub: "http://litepub.social/ns#", directMessage: "litepub:directMessage", sensitive: "as:sensitive" },
      ],
    });
    const create = fill(pleromaCreate, { ...s.vars, CONTEXT: "x", IN_REPLY_TO: parent.uri });
    delete create.object.inReplyTo;
    create.context = create.object.context = create.object.conversation = localContext;
    await expectAccepted(await s.peer.send(s.actor, create));
    const stored = await q<{ id: string; context: string; thread_id: string }>(
      "SELECT id, context, thread_id FROM statuses WHERE uri = ?",
      create.object.id,
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.context).not.toBe(localContext);
    expect(stored[0]!.thread_id).toBe(stored[0]!.id);
    const ctx = await json(`/api/v1/statuses/${parent.id}/context`, { instance: A, token: s.user.token });
    expect(ctx.descendants).toEqual([]);
  });

  it("Pleroma's Create(Note): an unlisted reply to a local status, in its thread, counted, notified", async () => {
    const s = await setup();
    const parent = await json("/api/v1/statuses", {
      instance: A,
      token: s.user.token,
      method: "POST",
      body: { status: "a local post" },
    });
    s.peer.objects.set(`${s.peer.origin}/schemas/litepub-0.1.jsonld`, {
      "@context": [
        "https://www.w3.org/ns/activitystreams",
        "https://w3id.org/security/v1",
        { litepub: "http://litepub.social/ns#", directMessage: "litepub:directMessage", sensitive: "as:sensitive" },
      ],
    });
    const create = fill(pleromaCreate, { ...s.vars, CONTEXT: `ctx${s.vars.N}`, IN_REPLY_TO: parent.uri });
    await expectAccepted(await s.peer.send(s.actor, create));
    const ctx = await json(`/api/v1/statuses/${parent.id}/context`, { instance: A, token: s.user.token });
    expect(ctx.descendants.length).toBe(1);
    const reply = valid(StatusSchema, ctx.descendants[0]);
    expect([reply.visibility, reply.in_reply_to_id, reply.in_reply_to_account_id]).toEqual([
      "unlisted",
      parent.id,
      s.user.id,
    ]);
    expect(reply.content).toMatch(/<b>unlisted<\/b>/);
    expect((await json(`/api/v1/statuses/${parent.id}`, { instance: A, token: s.user.token })).replies_count).toBe(1);
    const notes = await json("/api/v1/notifications", { instance: A, token: s.user.token });
    expect(notes.map((x: { type: string; status: { id: string } }) => [x.type, x.status.id])).toEqual([
      ["mention", reply.id],
    ]);
    expect((await q<{ context: string }>("SELECT context FROM statuses WHERE id = ?", reply.id))[0]!.context).toBe(
      create.object.context,
    );
  });

  it("Misskey's Create(Note): content (not the MFM source), the quote shown as one, emoji and a non-Latin hashtag", async () => {
    const s = await setup();
    const create = fill(misskeyCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, create));
    const notes = await json("/api/v1/notifications", { instance: A, token: s.user.token });
    const status = valid(StatusSchema, notes[0].status);
    expect(status.content).toMatch(/にゃーん/);
    // A quote (issue 46) of a note its server does not serve here: by its url, not as an `RE:` link.
    expect(status.content).not.toContain("RE:");
    expect(status.quote?.state).toBe("accepted");
    expect(status.pleroma.quote_url).toBe(`${s.peer.origin}/notes/quoted${s.vars.N}`);
    expect(status.tags.map((t) => t.name)).toEqual(["猫"]);
    expect(status.emojis.map((e) => e.shortcode)).toEqual(["misskey_cat"]);
  });

  it("Update by the author edits; Delete (Tombstone) by anyone else is ignored, by the author deletes", async () => {
    const s = await setup();
    const create = fill(mastodonCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, create));
    const id = (await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", create.object.id))[0]!.id;

    const update = {
      "@context": create["@context"],
      id: `${create.object.id}#updates/1`,
      type: "Update",
      actor: s.actor,
      object: {
        ...create.object,
        content: "<p>edited</p>",
        summary: "cw",
        tag: [],
        attachment: [],
        updated: "2024-05-01T11:00:00Z",
      },
    };
    await expectAccepted(await s.peer.send(s.actor, update));
    const edited = valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token }));
    expect([edited.content, edited.spoiler_text, edited.media_attachments.length, edited.tags.length]).toEqual([
      "<p>edited</p>",
      "cw",
      0,
      0,
    ]);
    expect(edited.edited_at).toBe("2024-05-01T11:00:00.000Z");

    // Mallory (another actor, even on the same server) cannot edit or delete it.
    const mallory = s.peer.actor();
    await expectAccepted(
      await s.peer.send(mallory, {
        ...update,
        id: `${update.id}x`,
        actor: mallory,
        object: { ...update.object, content: "<p>pwned</p>" },
      }),
    );
    await expectAccepted(
      await s.peer.send(mallory, fill(mastodonDelete, { ...s.vars, ACTOR: mallory, OBJECT: create.object.id })),
    );
    expect((await json(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token })).content).toBe("<p>edited</p>");

    await expectAccepted(await s.peer.send(s.actor, fill(mastodonDelete, { ...s.vars, OBJECT: create.object.id })));
    expect((await call(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token })).status).toBe(404);
    expect(await json("/api/v1/notifications", { instance: A, token: s.user.token })).toEqual([]);
  });

  it("an embedded object attributed to someone else is not trusted: it is fetched from its id", async () => {
    const s = await setup();
    const victim = s.peer.actor();
    const create = fill(mastodonCreate, s.vars);
    // s.actor claims a note of `victim` that says something else than the real one.
    const realId = `${victim}/statuses/${s.vars.N}`;
    const real = { ...create.object, id: realId, attributedTo: victim, content: "<p>the real words</p>" };
    s.peer.objects.set(realId, { "@context": create["@context"], ...real });
    const forged = { ...create, object: { ...real, content: "<p>forged words</p>" } };
    await expectAccepted(await s.peer.send(s.actor, forged));
    // The object was fetched from its id, found to be the victim's, and nothing was stored.
    expect(s.peer.requests).toContain(`GET ${new URL(realId).pathname}`);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", realId)).toEqual([]);
    expect(await q("SELECT id FROM statuses WHERE content LIKE '%forged words%'")).toEqual([]);
  });
});
