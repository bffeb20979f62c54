/**
 * Threads between two Starling instances (A and B of test/instances.ts): a reply to a remote status reaches and
 * addresses its author (mention notification there), a stored remote reply's missing ancestors are fetched
 * (bounded), and the `replies` collection of local statuses.
 */
import { describe, expect, it } from "vitest";
import { StatusSchema } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { MAX_ANCESTORS } from "../src/federation/fetching/thread-ancestors";
import { call, json, registerUser, valid, type TestUser } from "./helpers";
import { A, B, federating, instanceFetch, type Instance } from "./instances";
import { createPeer } from "./peer";
import { fetchThreads, MAX_FETCHES } from "../src/federation/fetching/thread-replies";
import { resolveEnv } from "../src/federation/fetching/resolve";

const fed = federating();

const postOn = async (inst: Instance, user: TestUser, body: Record<string, unknown>) =>
  valid(StatusSchema, await json("/api/v1/statuses", { method: "POST", instance: inst, token: user.token, body }));

/** A remote status found by its URL (search with resolve, as a client pastes a link). */
async function resolveStatus(user: TestUser, inst: Instance, uri: string) {
  const found = await json(`/api/v2/search?q=${encodeURIComponent(uri)}&resolve=true&type=statuses`, {
    instance: inst,
    token: user.token,
  });
  expect(found.statuses, `resolving ${uri}`).toHaveLength(1);
  return valid(StatusSchema, found.statuses[0]);
}

async function context(user: TestUser, inst: Instance, id: string) {
  const c = await json(`/api/v1/statuses/${id}/context`, { instance: inst, token: user.token });
  return {
    ancestors: (c.ancestors as unknown[]).map((s) => valid(StatusSchema, s)),
    descendants: (c.descendants as unknown[]).map((s) => valid(StatusSchema, s)),
  };
}

async function posted(host: string) {
  const reqs = fed.routed.requests.filter(
    (r) => r.method === "POST" && r.url.startsWith(`https://${host}/`) && r.url.includes("inbox"),
  );
  return Promise.all(reqs.map(async (r) => ({ url: r.url, body: (await r.clone().json()) as any })));
}

const asJson = (inst: Instance, path: string) =>
  instanceFetch(inst, new Request(`${inst.origin}${path}`, { headers: { Accept: "application/activity+json" } }));

describe("threads across instances", () => {
  it("a reply from A to B's status (no follow) is delivered to and addresses its author; with a mention, B notifies", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const original = await postOn(B, bob, { status: "A thought" });
    const followup = await postOn(B, bob, { status: "A second thought", in_reply_to_id: original.id });
    // A reply found by its URL brings its parent (fetched after the search's response).
    const followupOnA = await resolveStatus(alice, A, followup.uri);
    expect((await context(alice, A, followupOnA.id)).ancestors.map((s) => s.uri)).toEqual([original.uri]);
    const onA = await resolveStatus(alice, A, original.uri);

    const withMention = await postOn(A, alice, { status: `@${bob.username}@b.example agreed`, in_reply_to_id: onA.id });
    const plain = await postOn(A, alice, { status: "and another thing", in_reply_to_id: onA.id });
    await fed.settle();

    // Both Creates went to Bob's server, each addressing Bob (cc); the first tags him.
    const creates = (await posted(B.domain)).filter(
      (p) => p.body.type === "Create" && p.body.object?.inReplyTo === original.uri,
    );
    const bobUri = `https://b.example/users/${bob.username}`;
    for (const uri of [withMention.uri, plain.uri]) {
      const c = creates.find((p) => p.body.object.id === uri);
      expect(c, uri).toBeTruthy();
      expect(c!.body.object.cc).toContain(bobUri);
    }
    expect([creates.find((p) => p.body.object.id === withMention.uri)!.body.object.tag].flat()).toContainEqual(
      expect.objectContaining({ type: "Mention", href: bobUri }),
    );

    // On B: both replies in the thread, a mention notification for the first only.
    const ctx = await context(bob, B, original.id);
    expect(ctx.descendants.map((s) => s.uri).sort()).toEqual([followup.uri, withMention.uri, plain.uri].sort());
    const notes = ((await json("/api/v1/notifications", { instance: B, token: bob.token })) as unknown[]).map((n) =>
      valid(NotificationSchema, n),
    );
    expect(notes.map((n) => [n.type, n.status?.uri])).toEqual([["mention", withMention.uri]]);

    // A direct reply explicitly addressed to someone else on B (Pleroma's `to`) does not name Bob: his server
    // would otherwise hand it to him through the shared inbox.
    const carol = await registerUser({ instance: B });
    const found = await json(
      `/api/v2/search?q=${encodeURIComponent(`${carol.username}@b.example`)}&resolve=true&type=accounts`,
      { instance: A, token: alice.token },
    );
    expect(found.accounts).toHaveLength(1);
    const aside = await postOn(A, alice, {
      status: "between us",
      visibility: "direct",
      in_reply_to_id: onA.id,
      to: [`${carol.username}@b.example`],
    });
    await fed.settle();
    const asideCreate = (await posted(B.domain)).find(
      (p) => p.body.type === "Create" && p.body.object?.id === aside.uri,
    );
    expect(asideCreate).toBeTruthy();
    expect([asideCreate!.body.object.to, asideCreate!.body.object.cc].flat()).not.toContain(bobUri);
    expect(((await json("/api/v1/notifications", { instance: B, token: bob.token })) as unknown[]).length).toBe(1);
  });

  it(`a late reply brings its missing ancestors from the other instance (both ways), at most ${MAX_ANCESTORS} levels`, async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const carol = await registerUser({ instance: B });
    // A thread on B seven deep (root and six replies), Alice (on A) mentioned only in the last one.
    const root = await postOn(B, bob, { status: "root" });
    const chain = [root];
    for (let i = 1; i <= 6; i++)
      chain.push(
        await postOn(B, i % 2 ? carol : bob, {
          status: i === 6 ? `@${alice.username}@a.example look at this thread` : `reply ${i}`,
          in_reply_to_id: chain[i - 1]!.id,
        }),
      );
    // A private reply in the thread is never fetched (B does not serve it): the walk stops there, in a second branch.
    const hidden = await postOn(B, bob, { status: "friends only", visibility: "private", in_reply_to_id: root.id });
    const afterHidden = await postOn(B, bob, {
      status: `@${alice.username}@a.example under a private one`,
      in_reply_to_id: hidden.id,
    });
    await fed.settle();

    const home = ((await json("/api/v1/notifications", { instance: A, token: alice.token })) as unknown[]).map((n) =>
      valid(NotificationSchema, n),
    );
    const last = home.find((n) => n.status?.uri === chain[6]!.uri)?.status;
    expect(last, "the mention reached A").toBeTruthy();
    const ctx = await context(alice, A, last!.id);
    // The five closest ancestors, root first; the root itself is past the bound.
    expect(ctx.ancestors.map((s) => s.uri)).toEqual(chain.slice(1, 6).map((s) => s.uri));
    expect(ctx.ancestors[0]!.in_reply_to_id).toBeNull();
    expect(ctx.ancestors.at(-1)!.account.acct).toBe(`${carol.username}@b.example`);
    const last2 = await json(`/api/v1/statuses/${last!.id}`, { instance: A, token: alice.token });
    expect(last2.in_reply_to_id).toBe(ctx.ancestors.at(-1)!.id);

    const other = home.find((n) => n.status?.uri === afterHidden.uri)?.status;
    expect(other).toBeTruthy();
    expect((await context(alice, A, other!.id)).ancestors).toEqual([]);

    // The other way: a thread on A, Bob (on B) mentioned two levels down, gets its root and middle on B.
    const aRoot = await postOn(A, alice, { status: "on A" });
    const aMid = await postOn(A, alice, { status: "still on A", in_reply_to_id: aRoot.id });
    const aLeaf = await postOn(A, alice, {
      status: `@${bob.username}@b.example what do you think`,
      in_reply_to_id: aMid.id,
    });
    await fed.settle();
    const bobNotes = ((await json("/api/v1/notifications", { instance: B, token: bob.token })) as unknown[]).map((n) =>
      valid(NotificationSchema, n),
    );
    const leafOnB = bobNotes.find((n) => n.status?.uri === aLeaf.uri)?.status;
    expect(leafOnB).toBeTruthy();
    expect((await context(bob, B, leafOnB!.id)).ancestors.map((s) => s.uri)).toEqual([aRoot.uri, aMid.uri]);

    // The same late reply delivered again fetches nothing more.
    const before = fed.routed.requests.length;
    const resolved = await resolveStatus(alice, A, chain[6]!.uri);
    expect(resolved.id).toBe(last!.id);
    expect(fed.routed.requests.length).toBe(before);
  });

  it("the replies collection of a local status lists the replies anyone may see, paged", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const dave = await registerUser({ instance: A });
    const original = await postOn(A, alice, { status: "Replies welcome" });
    const onB = await resolveStatus(bob, B, original.uri);
    const remoteReply = await postOn(B, bob, { status: `@${alice.username}@a.example sure`, in_reply_to_id: onB.id });
    const localReply = await postOn(A, dave, { status: "me too", in_reply_to_id: original.id, visibility: "unlisted" });
    const privateReply = await postOn(A, dave, {
      status: "just followers",
      in_reply_to_id: original.id,
      visibility: "private",
    });
    await fed.settle();
    // Bob's reply reached Alice (B → A): a mention notification.
    const notes = ((await json("/api/v1/notifications", { instance: A, token: alice.token })) as unknown[]).map((n) =>
      valid(NotificationSchema, n),
    );
    expect(notes.some((n) => n.type === "mention" && n.status?.uri === remoteReply.uri)).toBe(true);

    // The Note names its collection.
    const note = (await (await asJson(A, `/objects/${original.id}`)).json()) as any;
    expect(note.replies).toMatchObject({
      id: `${original.uri}/replies`,
      type: "Collection",
      first: `${original.uri}/replies?page=true`,
    });

    const res = await asJson(A, `/objects/${original.id}/replies`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/application\/activity\+json/);
    const collection = (await res.json()) as any;
    expect(collection).toMatchObject({
      id: `${original.uri}/replies`,
      type: "Collection",
      first: { type: "CollectionPage", partOf: `${original.uri}/replies` },
    });
    expect([...collection.first.items].sort()).toEqual([remoteReply.uri, localReply.uri].sort());
    expect(collection.first.items).not.toContain(privateReply.uri);
    expect(collection.first.next).toBeUndefined();
    // A page after the first reply holds the rest.
    // (Alice sees the followers-only reply too: it addresses her.)
    const replies = (await context(alice, A, original.id)).descendants.filter((r) => r.uri !== privateReply.uri);
    expect(replies.map((r) => r.uri).sort()).toEqual([remoteReply.uri, localReply.uri].sort());
    const firstId = replies.map((r) => r.id).sort()[0];
    const page = (await (await asJson(A, `/objects/${original.id}/replies?page=true&min_id=${firstId}`)).json()) as any;
    expect(page).toMatchObject({ type: "CollectionPage", partOf: `${original.uri}/replies` });
    expect(page.items).toHaveLength(1);

    // Not served: a followers-only status's replies, an unknown id, a remote status.
    expect((await asJson(A, `/objects/${privateReply.id}/replies`)).status).toBe(404);
    expect((await asJson(A, `/objects/01ZZZZZZZZZZZZZZZZZZZZZZZZ/replies`)).status).toBe(404);
    expect((await call(`/objects/nonsense/replies`, { instance: A })).status).toBe(404);
  });
});

describe("whole threads (issue 36)", () => {
  it("opening a remote status's context fetches its thread's replies after the response (once an hour); the next load shows them", async () => {
    const alice = await registerUser({ instance: A });
    const [bob, carol, dave] = [
      await registerUser({ instance: B }),
      await registerUser({ instance: B }),
      await registerUser({ instance: B }),
    ];
    const root = await postOn(B, bob, { status: "a question for everyone" });
    const r1 = await postOn(B, carol, { status: "an answer", in_reply_to_id: root.id });
    const r2 = await postOn(B, dave, { status: "another answer", in_reply_to_id: root.id });
    const r11 = await postOn(B, bob, { status: "thanks", in_reply_to_id: r1.id });
    await postOn(B, dave, { status: "a private aside", in_reply_to_id: root.id, visibility: "private" });
    // Alice finds the middle of the thread: its ancestor comes with it (as before), no replies yet.
    const onA = await resolveStatus(alice, A, r1.uri);
    const first = await context(alice, A, onA.id);
    expect(first.ancestors.map((s) => s.uri)).toEqual([root.uri]);
    // That load asked for the thread after its response: the next one shows every reply anyone may see.
    const second = await context(alice, A, onA.id);
    expect(second.descendants.map((s) => s.uri)).toEqual([r11.uri]);
    const rootOnA = second.ancestors[0]!;
    const whole = await context(alice, A, rootOnA.id);
    expect(whole.descendants.map((s) => s.uri).sort()).toEqual([r1.uri, r11.uri, r2.uri].sort());
    // Not again within the hour, however many open it.
    const later = await postOn(B, carol, { status: "a late answer", in_reply_to_id: root.id });
    await context(alice, A, rootOnA.id);
    expect((await context(alice, A, rootOnA.id)).descendants.map((s) => s.uri)).not.toContain(later.uri);
    // An hour on, it is fetched again; what it stored goes to the streams, and the opened status is updated.
    const effects = await fetchThreads(resolveEnv(A.bindings, A.origin, A.domain), [rootOnA.id], Date.now() + 3600_001);
    expect(effects.events).toContainEqual({ accountId: null, event: "status.update", payload: rootOnA.id });
    expect(effects.events?.filter((e) => e.event === "update")).toHaveLength(1);
    expect((await context(alice, A, rootOnA.id)).descendants.map((s) => s.uri)).toContain(later.uri);
  });

  it("a Mastodon-shaped replies collection (first page embedded, then next): only replies to the status, bounded", async () => {
    const peer = createPeer();
    const unrouteP = peer.route();
    try {
      const alice = await registerUser({ instance: A });
      const author = peer.actor();
      const other = peer.actor();
      const note = (id: string, inReplyTo: string | null, by = author, extra: Record<string, unknown> = {}) => ({
        "@context": "https://www.w3.org/ns/activitystreams",
        id,
        type: "Note",
        attributedTo: by,
        content: `<p>${id}</p>`,
        inReplyTo,
        published: new Date().toISOString(),
        to: ["https://www.w3.org/ns/activitystreams#Public"],
        ...extra,
      });
      const rootId = `${author}/statuses/1`;
      const self = `${author}/statuses/2`;
      const theirs = `${other}/statuses/3`;
      const unrelated = `${other}/statuses/4`;
      peer.objects.set(
        rootId,
        note(rootId, null, author, {
          replies: {
            id: `${rootId}/replies`,
            type: "Collection",
            first: {
              type: "CollectionPage",
              next: `${rootId}/replies?page=2`,
              partOf: `${rootId}/replies`,
              items: [self],
            },
          },
        }),
      );
      peer.objects.set(`${rootId}/replies?page=2`, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${rootId}/replies?page=2`,
        type: "CollectionPage",
        partOf: `${rootId}/replies`,
        items: [theirs, unrelated],
      });
      peer.objects.set(self, note(self, rootId));
      peer.objects.set(theirs, note(theirs, rootId, other));
      // Listed, but a reply to something else: not part of this thread.
      peer.objects.set(unrelated, note(unrelated, null, other));
      const onA = await resolveStatus(alice, A, rootId);
      await context(alice, A, onA.id);
      expect((await context(alice, A, onA.id)).descendants.map((s) => s.uri).sort()).toEqual([self, theirs].sort());
      expect(await A.bindings.DB.prepare("SELECT id FROM statuses WHERE uri = ?").bind(unrelated).first()).toBeNull();
      // Anonymous readers ask for nothing (a thread nobody here has opened yet); a signed-in reader's load does.
      const fresh = `${author}/statuses/5`;
      const freshReply = `${other}/statuses/6`;
      peer.objects.set(
        fresh,
        note(fresh, null, author, {
          replies: {
            id: `${fresh}/replies`,
            type: "Collection",
            first: { type: "CollectionPage", items: [freshReply] },
          },
        }),
      );
      peer.objects.set(freshReply, note(freshReply, fresh, other));
      const freshOnA = await resolveStatus(alice, A, fresh);
      const before = peer.requests.length;
      await json(`/api/v1/statuses/${freshOnA.id}/context`, { instance: A });
      expect(peer.requests.length).toBe(before);
      await context(alice, A, freshOnA.id);
      expect(peer.requests.slice(before)).toContain(`GET ${new URL(freshReply).pathname}`);
    } finally {
      unrouteP();
    }
  });

  it(`a replies collection listing hundreds of ids is tried at most ${MAX_FETCHES} fetches`, async () => {
    const peer = createPeer();
    const unrouteP = peer.route();
    try {
      const alice = await registerUser({ instance: A });
      const author = peer.actor();
      const rootId = `${author}/statuses/big`;
      const ids = (from: number) => Array.from({ length: 300 }, (_, i) => `${author}/statuses/missing${from + i}`);
      peer.objects.set(rootId, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: rootId,
        type: "Note",
        attributedTo: author,
        content: "<p>a popular post</p>",
        published: new Date().toISOString(),
        to: ["https://www.w3.org/ns/activitystreams#Public"],
        replies: {
          id: `${rootId}/replies`,
          type: "Collection",
          first: { type: "CollectionPage", next: `${rootId}/replies?page=2`, items: ids(0) },
        },
      });
      peer.objects.set(`${rootId}/replies?page=2`, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${rootId}/replies?page=2`,
        type: "CollectionPage",
        next: `${rootId}/replies?page=3`,
        items: ids(300),
      });
      peer.objects.set(`${rootId}/replies?page=3`, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${rootId}/replies?page=3`,
        type: "CollectionPage",
        items: ids(600),
      });
      const onA = await resolveStatus(alice, A, rootId);
      const before = peer.requests.length;
      await context(alice, A, onA.id);
      const tried = peer.requests.slice(before);
      expect(tried.filter((r) => r.includes("/statuses/missing")).length).toBeGreaterThan(0);
      expect(tried.length, tried.join("\n")).toBeLessThanOrEqual(MAX_FETCHES);
      // The top status is read once (for its parent and its replies).
      expect(tried.filter((r) => r === `GET ${new URL(rootId).pathname}`)).toHaveLength(1);
    } finally {
      unrouteP();
    }
  });
});
