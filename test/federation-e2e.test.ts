/**
 * Two Starling instances federating end to end (issue 13, "Done means"): A (https://a.example) and B
 * (https://b.example), each the Worker with its own D1, outbound fetches routed to the other (test/instances.ts).
 * Everything goes through the client API of each side; deliveries are drained with `drainFederation` (the
 * delivery objects run with the pool's bindings, so waking them is replaced by a no-op and each instance's
 * queue is drained with its own bindings).
 */
import { describe, expect, it } from "vitest";
import { drainFederation } from "../src/federation/delivery/wake";
import { AccountSchema, RelationshipSchema } from "../src/schemas/account";
import { StatusEditSchema, StatusSchema } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { call, json, PNG_1PX, registerUser, valid, type TestUser } from "./helpers";
import { A, B, federating, type Instance, findRemote } from "./instances";

// Outbound fetches routed between A and B, background delivery off: `settle()` delivers everything queued.
const fed = federating();
const { settle } = fed;

/** `user` on `from` finds `other` (who lives on `on`) by WebFinger, as a client's search with resolve=true. */

async function relationship(user: TestUser, inst: Instance, id: string) {
  const [r] = await json(`/api/v1/accounts/relationships?id[]=${id}`, { instance: inst, token: user.token });
  return valid(RelationshipSchema, r);
}

const homeOf = async (user: TestUser, inst: Instance) =>
  ((await json(`/api/v1/timelines/home?limit=40`, { instance: inst, token: user.token })) as unknown[]).map((s) =>
    valid(StatusSchema, s),
  );

async function post(user: TestUser, inst: Instance, body: Record<string, unknown>) {
  return valid(StatusSchema, await json("/api/v1/statuses", { instance: inst, token: user.token, body }));
}

describe("two Starling instances", () => {
  it("follow, accept, post (by visibility), delete and unfollow across instances", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const carol = await registerUser({ instance: B });
    const dave = await registerUser({ instance: A });

    // Alice finds Bob on B and follows him: a request until B answers.
    const bobOnA = await findRemote(alice, A, bob, B);
    expect(bobOnA.url).toBe(`https://b.example/users/${bob.username}`);
    const requested = valid(
      RelationshipSchema,
      await json(`/api/v1/accounts/${bobOnA.id}/follow`, { instance: A, token: alice.token, body: {} }),
    );
    expect(requested).toMatchObject({ following: false, requested: true });

    await settle();
    // B stored Alice as Bob's follower (and told Bob); A got B's Accept.
    expect(await relationship(alice, A, bobOnA.id)).toMatchObject({ following: true, requested: false });
    const followersOnB = (
      (await json(`/api/v1/accounts/${bob.id}/followers`, { instance: B, token: bob.token })) as unknown[]
    ).map((a) => valid(AccountSchema, a));
    expect(followersOnB.map((a) => a.acct)).toEqual([`${alice.username}@a.example`]);
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${bob.id}`, { instance: B })).followers_count).toBe(1);
    const bobNotes = ((await json(`/api/v1/notifications`, { instance: B, token: bob.token })) as unknown[]).map((n) =>
      valid(NotificationSchema, n),
    );
    expect(bobNotes.map((n) => [n.type, n.account.acct])).toEqual([["follow", `${alice.username}@a.example`]]);

    // Bob posts: public and followers-only reach Alice's home on A; a direct post to Carol does not leave B.
    const pub = await post(bob, B, { status: "Hello from B #federation", visibility: "public" });
    const priv = await post(bob, B, { status: "Only for my followers", visibility: "private" });
    const dm = await post(bob, B, { status: `@${carol.username} just between us`, visibility: "direct" });
    const local = await post(bob, B, { status: "Stays on B", visibility: "local" });
    await settle();

    const home = await homeOf(alice, A);
    const byUri = new Map(home.map((s) => [s.uri, s]));
    expect(byUri.get(pub.uri)).toMatchObject({ visibility: "public", account: { acct: `${bob.username}@b.example` } });
    expect(byUri.get(pub.uri)!.content).toContain("Hello from B");
    expect(byUri.get(pub.uri)!.tags.map((t) => t.name)).toEqual(["federation"]);
    expect(byUri.get(priv.uri)).toMatchObject({ visibility: "private" });
    expect(byUri.has(dm.uri)).toBe(false);
    expect(byUri.has(local.uri)).toBe(false);
    // The public post is on A's federated timeline; the followers-only one is not, nor visible to Dave.
    const remote = ((await json(`/api/v1/timelines/public?remote=true&limit=40`, { instance: A })) as unknown[]).map(
      (s) => valid(StatusSchema, s),
    );
    expect(remote.map((s) => s.uri)).toContain(pub.uri);
    expect(remote.map((s) => s.uri)).not.toContain(priv.uri);
    const privOnA = byUri.get(priv.uri)!;
    expect((await call(`/api/v1/statuses/${privOnA.id}`, { instance: A, token: dave.token })).status).toBe(404);
    expect((await call(`/api/v1/statuses/${privOnA.id}`, { instance: A, token: alice.token })).status).toBe(200);
    // Nothing of the direct or local-only post went to A at all.
    const sent = await Promise.all(
      fed.routed.requests
        .filter((r) => r.url.startsWith("https://a.example/") && r.method === "POST")
        .map((r) => r.clone().text()),
    );
    expect(sent.some((b) => b.includes(dm.uri) || b.includes(local.uri))).toBe(false);

    // Bob deletes the public post: gone from A.
    expect((await call(`/api/v1/statuses/${pub.id}`, { instance: B, token: bob.token, method: "DELETE" })).status).toBe(
      200,
    );
    await settle();
    const pubOnA = byUri.get(pub.uri)!;
    expect((await call(`/api/v1/statuses/${pubOnA.id}`, { instance: A, token: alice.token })).status).toBe(404);
    expect((await homeOf(alice, A)).map((s) => s.uri)).not.toContain(pub.uri);

    // Alice unfollows: B forgets her as a follower.
    expect(
      valid(
        RelationshipSchema,
        await json(`/api/v1/accounts/${bobOnA.id}/unfollow`, { instance: A, token: alice.token, body: {} }),
      ),
    ).toMatchObject({ following: false, requested: false });
    await settle();
    expect(await json(`/api/v1/accounts/${bob.id}/followers`, { instance: B, token: bob.token })).toEqual([]);
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${bob.id}`, { instance: B })).followers_count).toBe(0);
    // And Bob's next post no longer reaches A.
    const after = await post(bob, B, { status: "Anyone still there?", visibility: "public" });
    await settle();
    expect((await homeOf(alice, A)).map((s) => s.uri)).not.toContain(after.uri);
  });

  it("a locked account on A approves a follower from B, whose home then shows the posts and mentions notify", async () => {
    const alice = await registerUser({ instance: A });
    await json("/api/v1/accounts/update_credentials", {
      instance: A,
      token: alice.token,
      method: "PATCH",
      body: { locked: true },
    });
    const bob = await registerUser({ instance: B });

    const aliceOnB = await findRemote(bob, B, alice, A);
    expect(aliceOnB.locked).toBe(true);
    expect(
      valid(
        RelationshipSchema,
        await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { instance: B, token: bob.token, body: {} }),
      ),
    ).toMatchObject({ requested: true });
    await settle();
    // A holds a follow request; B still waits.
    const requests = ((await json("/api/v1/follow_requests", { instance: A, token: alice.token })) as unknown[]).map(
      (a) => valid(AccountSchema, a),
    );
    expect(requests.map((a) => a.acct)).toEqual([`${bob.username}@b.example`]);
    expect(await relationship(bob, B, aliceOnB.id)).toMatchObject({ following: false, requested: true });

    await json(`/api/v1/follow_requests/${requests[0]!.id}/authorize`, { instance: A, token: alice.token, body: {} });
    await settle();
    expect(await relationship(bob, B, aliceOnB.id)).toMatchObject({ following: true, requested: false });

    // Alice posts to her followers and mentions Bob: Bob sees it at home and is notified.
    const mention = await post(alice, A, { status: `Welcome @${bob.username}@b.example!`, visibility: "private" });
    expect(mention.mentions.map((m) => m.acct)).toEqual([`${bob.username}@b.example`]);
    await settle();
    const home = await homeOf(bob, B);
    const onB = home.find((s) => s.uri === mention.uri);
    expect(onB).toMatchObject({ visibility: "private", account: { acct: `${alice.username}@a.example` } });
    expect(onB!.mentions.map((m) => m.id)).toEqual([bob.id]);
    const notes = (
      (await json("/api/v1/notifications?types[]=mention", { instance: B, token: bob.token })) as unknown[]
    ).map((n) => valid(NotificationSchema, n));
    expect(notes.map((n) => n.status?.uri)).toEqual([mention.uri]);
  });

  it("a post made right after accepting reaches the new follower: the Accept is not overtaken by the Create", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const bobOnA = await findRemote(alice, A, bob, B);
    await json(`/api/v1/accounts/${bobOnA.id}/follow`, { instance: A, token: alice.token, body: {} });
    // Only A delivers: B now holds Alice as a follower and an Accept for her personal inbox, not yet sent.
    await drainFederation(A.bindings);
    const first = await post(bob, B, { status: "First post for my new follower", visibility: "public" });
    // One run of B's deliveries to a.example carries both: the Accept (personal inbox) and the Create (shared).
    await settle();
    expect(await relationship(alice, A, bobOnA.id)).toMatchObject({ following: true });
    expect((await homeOf(alice, A)).map((s) => s.uri)).toContain(first.uri);
  });

  it("blocking a follower on B ends the follow on both sides: her followers-only posts stop reaching his server", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const carol = await registerUser({ instance: B });
    const aliceOnB = await findRemote(bob, B, alice, A);
    const aliceOnBForCarol = await findRemote(carol, B, alice, A);
    await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { instance: B, token: bob.token, body: {} });
    await json(`/api/v1/accounts/${aliceOnBForCarol.id}/follow`, { instance: B, token: carol.token, body: {} });
    await settle();
    expect(await relationship(bob, B, aliceOnB.id)).toMatchObject({ following: true });
    // Alice follows Bob too; then blocks him.
    const bobOnA = await findRemote(alice, A, bob, B);
    await json(`/api/v1/accounts/${bobOnA.id}/follow`, { instance: A, token: alice.token, body: {} });
    await settle();
    expect(await relationship(alice, A, bobOnA.id)).toMatchObject({ following: true });
    await json(`/api/v1/accounts/${bobOnA.id}/block`, { instance: A, token: alice.token, body: {} });
    await settle();
    // B was told both: Bob no longer follows Alice, and Alice no longer follows Bob.
    expect(await relationship(bob, B, aliceOnB.id)).toMatchObject({ following: false, followed_by: false });
    expect(await json(`/api/v1/accounts/${bob.id}/followers`, { instance: B, token: bob.token })).toEqual([]);
    // Her next followers-only post still reaches Carol on B, never Bob.
    const secret = await post(alice, A, { status: "for followers", visibility: "private" });
    await settle();
    expect((await homeOf(carol, B)).map((s) => s.uri)).toContain(secret.uri);
    expect((await homeOf(bob, B)).map((s) => s.uri)).not.toContain(secret.uri);
  });

  it("a direct reply that mentions nobody still reaches the conversation's remote participant, addressed to them", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    await findRemote(bob, B, alice, A);
    const dm = await post(bob, B, { status: `@${alice.username}@a.example psst`, visibility: "direct" });
    await settle();
    const [conversation] = (await json("/api/v1/conversations", { instance: A, token: alice.token })) as any[];
    expect(conversation.last_status.uri).toBe(dm.uri);
    const reply = await post(alice, A, {
      status: "got it",
      visibility: "direct",
      in_reply_to_id: conversation.last_status.id,
    });
    expect(reply.mentions).toEqual([]);
    await settle();
    const create = fed.routed.requests.find((r) => r.url.startsWith("https://b.example/") && r.method === "POST");
    expect(create).toBeDefined();
    const onB = (await json("/api/v1/conversations", { instance: B, token: bob.token })) as any[];
    expect(onB.map((c) => c.last_status.uri)).toContain(reply.uri);
    expect(onB.find((c) => c.last_status.uri === reply.uri).last_status.visibility).toBe("direct");
  });

  it("a rejected request from B leaves nothing behind on either side", async () => {
    const alice = await registerUser({ instance: A });
    await json("/api/v1/accounts/update_credentials", {
      instance: A,
      token: alice.token,
      method: "PATCH",
      body: { locked: true },
    });
    const bob = await registerUser({ instance: B });
    const aliceOnB = await findRemote(bob, B, alice, A);
    await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { instance: B, token: bob.token, body: {} });
    await settle();
    const [request] = (await json("/api/v1/follow_requests", { instance: A, token: alice.token })) as { id: string }[];
    await json(`/api/v1/follow_requests/${request!.id}/reject`, { instance: A, token: alice.token, body: {} });
    await settle();
    expect(await relationship(bob, B, aliceOnB.id)).toMatchObject({ following: false, requested: false });
    expect(await json("/api/v1/follow_requests", { instance: A, token: alice.token })).toEqual([]);
  });

  it("an edit travels both ways as an Update: the copy changes, its history is on both sides, rebloggers hear", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const bobOnA = await findRemote(alice, A, bob, B);
    const aliceOnB = await findRemote(bob, B, alice, A);
    await json(`/api/v1/accounts/${bobOnA.id}/follow`, { instance: A, token: alice.token, body: {} });
    await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { instance: B, token: bob.token, body: {} });
    await settle();
    const versions = async (user: TestUser, inst: Instance, id: string) =>
      ((await json(`/api/v1/statuses/${id}/history`, { instance: inst, token: user.token })) as unknown[]).map(
        (e) => valid(StatusEditSchema, e).content,
      );
    const copyOf = async (user: TestUser, inst: Instance, uri: string) => {
      const found = (await homeOf(user, inst)).find((x) => x.uri === uri);
      expect(found, `${uri} in the home of ${user.username}`).toBeDefined();
      return found!;
    };

    // B to A: Bob edits a post Alice reblogged on A.
    const s = await post(bob, B, { status: "first draft", visibility: "public" });
    await settle();
    const onA = await copyOf(alice, A, s.uri);
    await json(`/api/v1/statuses/${onA.id}/reblog`, { instance: A, token: alice.token, body: {} });
    await settle();
    await json(`/api/v1/statuses/${s.id}`, {
      instance: B,
      method: "PUT",
      token: bob.token,
      body: { status: "final draft" },
    });
    await settle();
    const editedOnA = valid(
      StatusSchema,
      await json(`/api/v1/statuses/${onA.id}`, { instance: A, token: alice.token }),
    );
    expect(editedOnA.content).toContain("final draft");
    expect(editedOnA.edited_at).not.toBeNull();
    expect(await versions(alice, A, onA.id)).toEqual([onA.content, editedOnA.content]);
    expect(await versions(bob, B, s.id)).toEqual(["first draft", "final draft"]);
    const updates = ((await json("/api/v1/notifications", { instance: A, token: alice.token })) as unknown[])
      .map((n) => valid(NotificationSchema, n))
      .filter((n) => n.type === "update");
    expect(updates.map((n) => n.status!.id)).toEqual([onA.id]);

    // A to B: Alice edits a followers-only post; Bob's copy follows, its history too.
    const p = await post(alice, A, { status: "for followers", visibility: "private" });
    await settle();
    const onB = await copyOf(bob, B, p.uri);
    await json(`/api/v1/statuses/${p.id}`, {
      instance: A,
      method: "PUT",
      token: alice.token,
      body: { status: "for followers, edited", spoiler_text: "cw added" },
    });
    await settle();
    const editedOnB = valid(StatusSchema, await json(`/api/v1/statuses/${onB.id}`, { instance: B, token: bob.token }));
    expect(editedOnB).toMatchObject({ spoiler_text: "cw added", visibility: "private" });
    expect(editedOnB.content).toContain("for followers, edited");
    expect(await versions(bob, B, onB.id)).toEqual([onB.content, editedOnB.content]);

    // A local-only post's edit does not leave A (nothing to update on B, nothing queued).
    const local = await post(alice, A, { status: "stays home", visibility: "local" });
    await json(`/api/v1/statuses/${local.id}`, {
      instance: A,
      method: "PUT",
      token: alice.token,
      body: { status: "stays home!" },
    });
    const queued = await A.bindings.DB.prepare(
      "SELECT count(*) AS n FROM federation_outbox WHERE json_extract(activity, '$.statusId') = ?",
    )
      .bind(local.id)
      .first();
    expect(queued).toEqual({ n: 0 });
  });

  it("a picture's size travels with it (Document width and height), never guessed on the other side", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const bobOnA = await findRemote(alice, A, bob, B);
    await json(`/api/v1/accounts/${bobOnA.id}/follow`, { instance: A, token: alice.token, body: {} });
    await settle();
    const form = new FormData();
    form.set("file", new File([PNG_1PX], "dot.png"));
    const m = await json("/api/v2/media", { instance: B, method: "POST", token: bob.token, body: form });
    expect(m.meta.original).toMatchObject({ width: 1, height: 1 });
    const s = await post(bob, B, { status: "a dot", media_ids: [m.id] });
    await settle();
    const copy = (await homeOf(alice, A)).find((x) => x.uri === s.uri);
    expect(copy?.media_attachments[0]).toMatchObject({
      meta: { original: { width: 1, height: 1, size: "1x1", aspect: 1 } },
      blurhash: null,
    });
  });
});
