/**
 * Favourites, emoji reactions and reblogs across instances (issue 18): `Like`, `EmojiReact`, `Announce` and the
 * `Undo` of each, between two Starling instances in both directions (test/instances.ts), and as Mastodon,
 * Misskey and Pleroma send them (fixtures, through the signed test peer of test/peer.ts).
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { call, json, registerUser, uniqueName, valid, type TestUser } from "./helpers";
import { A, B, federating, instanceFetch, type Instance, findRemote } from "./instances";
import { fill } from "./inbound";
import { createPeer, type Peer } from "./peer";
import mastodonLike from "./fixtures/federation/mastodon-like.json";
import mastodonUndoLike from "./fixtures/federation/mastodon-undo-like.json";
import mastodonAnnounce from "./fixtures/federation/mastodon-announce.json";
import mastodonUndoAnnounce from "./fixtures/federation/mastodon-undo-announce.json";
import misskeyLike from "./fixtures/federation/misskey-like-reaction.json";
import pleromaReact from "./fixtures/federation/pleroma-emojireact.json";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";
import litepubContext from "./fixtures/federation/actors/litepub-context.json";

const postOn = async (user: TestUser, inst: Instance, body: Record<string, unknown>) =>
  valid(StatusSchema, await json("/api/v1/statuses", { instance: inst, token: user.token, body }));
const statusOn = async (user: TestUser | null, inst: Instance, id: string) =>
  valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { instance: inst, token: user?.token }));
const notificationsOf = async (user: TestUser, inst: Instance) =>
  ((await json("/api/v1/notifications", { instance: inst, token: user.token })) as unknown[]).map((n) =>
    valid(NotificationSchema, n),
  );
const homeOf = async (user: TestUser, inst: Instance) =>
  ((await json("/api/v1/timelines/home?limit=40", { instance: inst, token: user.token })) as unknown[]).map((s) =>
    valid(StatusSchema, s),
  );
const act = async (user: TestUser, inst: Instance, path: string, method = "POST") =>
  valid(StatusSchema, await json(path, { method, instance: inst, token: user.token }));

/** `user` on `inst` finds a status of another instance by its uri (a client's search with resolve=true). */
async function resolveStatus(user: TestUser, inst: Instance, uri: string) {
  const found = await json(`/api/v2/search?q=${encodeURIComponent(uri)}&resolve=true&type=statuses`, {
    instance: inst,
    token: user.token,
  });
  expect(found.statuses).toHaveLength(1);
  return valid(StatusSchema, found.statuses[0]);
}

async function addEmoji(db: D1Database, shortcode: string) {
  await db
    .prepare(
      "INSERT INTO custom_emojis (shortcode, domain, file, url, category, visible_in_picker, created_at) VALUES (?, NULL, ?, NULL, NULL, 1, ?)",
    )
    .bind(shortcode, `emoji/${shortcode}.png`, Date.now())
    .run();
}

const outboxTypes = async (db: D1Database, accountId: string) =>
  (
    await db
      .prepare(
        "SELECT json_extract(activity, '$.type') AS type FROM federation_outbox WHERE account_id = ? ORDER BY id",
      )
      .bind(accountId)
      .all<{ type: string }>()
  ).results.map((r) => r.type);

describe("interactions between two Starling instances", () => {
  const fed = federating();

  /** The activities posted to `inst`'s inboxes so far, with the requests that carried them. */
  async function received(inst: Instance) {
    const reqs = fed.routed.requests.filter(
      (r) => r.method === "POST" && r.url.startsWith(`${inst.origin}/`) && r.url.includes("inbox"),
    );
    return Promise.all(reqs.map(async (req) => ({ req, doc: (await req.clone().json()) as any })));
  }

  it("A favourites, reacts to and reblogs a status on B, then undoes each: B notifies, counts and forgets", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const blob = uniqueName("blob");
    await addEmoji(A.bindings.DB, blob);
    const original = await postOn(bob, B, { status: "React to me", visibility: "public" });
    const onA = await resolveStatus(alice, A, original.uri);
    const aliceUri = `https://a.example/users/${alice.username}`;

    // Favourite: a Like to Bob's inbox alone; B stores the favourite and notifies Bob.
    // A's copy keeps the counts B reported (none yet): B's own counters are B's.
    expect(await act(alice, A, `/api/v1/statuses/${onA.id}/favourite`)).toMatchObject({
      favourited: true,
      favourites_count: 0,
    });
    await fed.settle();
    const likes = (await received(B)).filter((r) => r.doc.type === "Like");
    expect(likes).toHaveLength(1);
    expect(likes[0]!.req.url).toBe(`https://b.example/users/${bob.username}/inbox`);
    expect(likes[0]!.doc).toMatchObject({ actor: aliceUri, object: original.uri });
    expect(likes[0]!.doc.id).toMatch(new RegExp(`^${aliceUri}#likes/`));
    expect(await statusOn(bob, B, original.id)).toMatchObject({ favourites_count: 1 });
    const favouritedBy = (await json(`/api/v1/statuses/${original.id}/favourited_by`, { instance: B })) as unknown[];
    expect(favouritedBy.map((a) => valid(AccountSchema, a).acct)).toEqual([`${alice.username}@a.example`]);
    // Delivered again: nothing more.
    expect((await instanceFetch(B, likes[0]!.req.clone())).status).toBe(202);
    expect(await statusOn(bob, B, original.id)).toMatchObject({ favourites_count: 1 });

    // Reactions, unicode and Alice's custom emoji: EmojiReact to Bob; B shows them (the custom one with its image).
    await act(alice, A, `/api/v1/pleroma/statuses/${onA.id}/reactions/${encodeURIComponent("👍")}`, "PUT");
    await act(alice, A, `/api/v1/pleroma/statuses/${onA.id}/reactions/${encodeURIComponent(`:${blob}:`)}`, "PUT");
    await fed.settle();
    const reacts = (await received(B)).filter((r) => r.doc.type === "EmojiReact");
    expect(reacts.map((r) => r.doc.content)).toEqual(["👍", `:${blob}:`]);
    expect(reacts[1]!.doc.tag).toMatchObject({
      type: "Emoji",
      name: `:${blob}:`,
      icon: { url: `https://a.example/media/emoji/${blob}.png` },
    });
    let onB = await statusOn(bob, B, original.id);
    const aliceOnB = valid(AccountSchema, favouritedBy[0]).id;
    expect(onB.pleroma.emoji_reactions).toEqual([
      { name: "👍", count: 1, me: false, url: null, account_ids: [aliceOnB] },
      {
        name: `${blob}@a.example`,
        count: 1,
        me: false,
        url: `https://a.example/media/emoji/${blob}.png`,
        account_ids: [aliceOnB],
      },
    ]);

    // Reblog: an Announce to Bob (the original's author, not a follower of Alice).
    expect(await act(alice, A, `/api/v1/statuses/${onA.id}/reblog`)).toMatchObject({ reblogged: true });
    await fed.settle();
    const announces = (await received(B)).filter((r) => r.doc.type === "Announce");
    expect(announces).toHaveLength(1);
    expect(announces[0]!.doc).toMatchObject({ actor: aliceUri, object: original.uri });
    expect(["as:Public", "https://www.w3.org/ns/activitystreams#Public"]).toContain(announces[0]!.doc.to);
    expect(announces[0]!.doc.cc).toContain(`https://b.example/users/${bob.username}`);
    expect(await statusOn(bob, B, original.id)).toMatchObject({ reblogs_count: 1, favourites_count: 1 });
    const notes = await notificationsOf(bob, B);
    expect(notes.map((n) => [n.type, n.account.acct, n.status?.id, n.emoji]).sort()).toEqual(
      [
        ["favourite", `${alice.username}@a.example`, original.id, undefined],
        ["pleroma:emoji_reaction", `${alice.username}@a.example`, original.id, "👍"],
        ["pleroma:emoji_reaction", `${alice.username}@a.example`, original.id, `${blob}@a.example`],
        ["reblog", `${alice.username}@a.example`, original.id, undefined],
      ].sort(),
    );

    // Each undone: the Undos name the same activities; B removes the rows, the notifications and the counts.
    expect(await act(alice, A, `/api/v1/statuses/${onA.id}/unfavourite`)).toMatchObject({
      favourited: false,
      favourites_count: 0,
    });
    await act(alice, A, `/api/v1/pleroma/statuses/${onA.id}/reactions/${encodeURIComponent("👍")}`, "DELETE");
    await act(alice, A, `/api/v1/pleroma/statuses/${onA.id}/reactions/${encodeURIComponent(blob)}`, "DELETE");
    expect(await act(alice, A, `/api/v1/statuses/${onA.id}/unreblog`)).toMatchObject({ reblogged: false });
    await fed.settle();
    const undos = (await received(B)).filter((r) => r.doc.type === "Undo").map((r) => r.doc);
    expect(undos.map((u) => [u.object.type, u.object.id]).sort()).toEqual(
      [
        ["Like", likes[0]!.doc.id],
        ["EmojiReact", reacts[0]!.doc.id],
        ["EmojiReact", reacts[1]!.doc.id],
        ["Announce", announces[0]!.doc.id],
      ].sort(),
    );
    onB = await statusOn(bob, B, original.id);
    expect(onB).toMatchObject({ favourites_count: 0, reblogs_count: 0 });
    expect(onB.pleroma.emoji_reactions).toEqual([]);
    expect(await notificationsOf(bob, B)).toEqual([]);
    expect(await statusOn(alice, A, onA.id)).toMatchObject({
      favourites_count: 0,
      reblogs_count: 0,
      favourited: false,
      reblogged: false,
    });
  });

  it("B favourites, reacts to and reblogs a status on A, and reblogs one of its own server: A notifies, counts and shows the reblogs to B's followers", async () => {
    const alice = await registerUser({ instance: A });
    const dave = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const erin = await registerUser({ instance: B });
    // Dave follows Bob (not Erin).
    const bobOnA = await findRemote(dave, A, bob, B);
    await json(`/api/v1/accounts/${bobOnA.id}/follow`, { instance: A, token: dave.token, body: {} });
    await fed.settle();

    const mine = await postOn(alice, A, { status: "From A", visibility: "public" });
    const onB = await resolveStatus(bob, B, mine.uri);
    await act(bob, B, `/api/v1/statuses/${onB.id}/favourite`);
    await act(bob, B, `/api/v1/pleroma/statuses/${onB.id}/reactions/${encodeURIComponent("🎉")}`, "PUT");
    const reblog = await act(bob, B, `/api/v1/statuses/${onB.id}/reblog`);
    const erins = await postOn(erin, B, { status: "Erin's, public", visibility: "public" });
    await act(bob, B, `/api/v1/statuses/${erins.id}/reblog`);
    await fed.settle();

    const seen = await statusOn(alice, A, mine.id);
    expect(seen).toMatchObject({ favourites_count: 1, reblogs_count: 1 });
    expect(seen.pleroma.emoji_reactions).toEqual([
      { name: "🎉", count: 1, me: false, url: null, account_ids: [bobOnA.id] },
    ]);
    const notes = await notificationsOf(alice, A);
    expect(notes.map((n) => [n.type, n.account.acct, n.status?.id]).sort()).toEqual(
      [
        ["favourite", `${bob.username}@b.example`, mine.id],
        ["pleroma:emoji_reaction", `${bob.username}@b.example`, mine.id],
        ["reblog", `${bob.username}@b.example`, mine.id],
      ].sort(),
    );
    // Dave's home shows both of Bob's reblogs: of Alice's status, and of Erin's (fetched from B for it).
    let home = await homeOf(dave, A);
    const reblogs = home.filter((s) => s.reblog).map((s) => [s.account.acct, s.reblog!.uri, s.reblog!.account.acct]);
    expect(reblogs.sort()).toEqual(
      [
        [`${bob.username}@b.example`, mine.uri, alice.username],
        [`${bob.username}@b.example`, erins.uri, `${erin.username}@b.example`],
      ].sort(),
    );
    expect(home.find((s) => s.reblog?.uri === mine.uri)!.uri).toBe(reblog.uri);

    // Bob undoes everything: A forgets it all.
    await act(bob, B, `/api/v1/statuses/${onB.id}/unfavourite`);
    await act(bob, B, `/api/v1/pleroma/statuses/${onB.id}/reactions/${encodeURIComponent("🎉")}`, "DELETE");
    await act(bob, B, `/api/v1/statuses/${onB.id}/unreblog`);
    // The reblog of Erin's status withdrawn by deleting it, as clients also do.
    const bobsReblogOfErin = (
      await json(`/api/v1/accounts/${bob.id}/statuses`, { instance: B, token: bob.token })
    ).find((s: any) => s.reblog?.id === erins.id);
    expect(
      (await call(`/api/v1/statuses/${bobsReblogOfErin.id}`, { method: "DELETE", instance: B, token: bob.token }))
        .status,
    ).toBe(200);
    await fed.settle();
    const after = await statusOn(alice, A, mine.id);
    expect(after).toMatchObject({ favourites_count: 0, reblogs_count: 0 });
    expect(after.pleroma.emoji_reactions).toEqual([]);
    expect(await notificationsOf(alice, A)).toEqual([]);
    home = await homeOf(dave, A);
    expect(home.filter((s) => s.reblog)).toEqual([]);
  });

  it("never announces a private or local-only status, nor sends a Like of a local status", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const aliceOnB = await findRemote(bob, B, alice, A);
    await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { instance: B, token: bob.token, body: {} });
    await fed.settle();
    const priv = await postOn(alice, A, { status: "followers only", visibility: "private" });
    const local = await postOn(alice, A, { status: "local only", visibility: "local" });
    const pub = await postOn(alice, A, { status: "public", visibility: "public" });
    await act(alice, A, `/api/v1/statuses/${priv.id}/reblog`);
    await act(alice, A, `/api/v1/statuses/${local.id}/reblog`);
    await act(alice, A, `/api/v1/statuses/${pub.id}/favourite`);
    await act(alice, A, `/api/v1/statuses/${pub.id}/unreblog`);
    await act(alice, A, `/api/v1/statuses/${priv.id}/unreblog`);
    await fed.settle();
    // Only the Creates of the private and public statuses went to Bob (a follower); no Announce, Like or Undo.
    expect(await outboxTypes(A.bindings.DB, alice.id)).toEqual(["Accept", "Create", "Create"]);
    expect((await received(B)).map((r) => r.doc.type).sort()).toEqual(["Accept", "Create", "Create"]);

    // A public reblog of her own status reaches her follower.
    await act(alice, A, `/api/v1/statuses/${pub.id}/reblog`);
    await fed.settle();
    const home = await homeOf(bob, B);
    expect(home.filter((s) => s.reblog).map((s) => s.reblog!.uri)).toEqual([pub.uri]);
  });
});

describe("interactions as other servers send them", () => {
  let unroute: (() => void) | undefined;
  afterEach(() => {
    unroute?.();
    unroute = undefined;
  });
  let n = 0;
  const q = async <T = Record<string, unknown>>(sql: string, ...args: unknown[]) =>
    (
      await env.DB.prepare(sql)
        .bind(...args)
        .all<T>()
    ).results;

  async function setup(): Promise<{
    peer: Peer;
    user: TestUser;
    actor: string;
    acct: string;
    vars: (extra?: Record<string, string>) => Record<string, string>;
  }> {
    const peer = createPeer();
    unroute = peer.route();
    peer.objects.set(`${peer.origin}/schemas/litepub-0.1.jsonld`, litepubContext);
    const user = await registerUser({ instance: A });
    const actor = peer.actor();
    const target = `${A.origin}/users/${user.username}`;
    const vars = (extra: Record<string, string> = {}) => ({
      ACTOR: actor,
      ORIGIN: peer.origin,
      TARGET: target,
      OBJECT_AUTHOR: target,
      N: String(Date.now() * 100 + n++),
      ...extra,
    });
    return { peer, user, actor, acct: `${actor.split("/").pop()}@${peer.host}`, vars };
  }
  const accepted = async (res: Response) => expect(res.status, await res.text()).toBe(202);

  it("Mastodon's Like and Undo(Like): a favourite and its notification, once; gone with the Undo", async () => {
    const s = await setup();
    const status = await postOn(s.user, A, { status: "like me", visibility: "public" });
    const vars = s.vars({ OBJECT: status.uri });
    const like = fill(mastodonLike, vars);
    await accepted(await s.peer.send(s.actor, like));
    await accepted(await s.peer.send(s.actor, like));
    expect(await statusOn(s.user, A, status.id)).toMatchObject({ favourites_count: 1 });
    const notes = await notificationsOf(s.user, A);
    expect(notes.map((x) => [x.type, x.account.acct])).toEqual([["favourite", s.acct]]);
    // Someone else cannot undo it.
    const mallory = s.peer.actor();
    await accepted(
      await s.peer.send(mallory, { ...fill(mastodonUndoLike, { ...vars, ACTOR: mallory }), object: like }),
    );
    expect(await statusOn(s.user, A, status.id)).toMatchObject({ favourites_count: 1 });
    await accepted(await s.peer.send(s.actor, fill(mastodonUndoLike, vars)));
    expect(await statusOn(s.user, A, status.id)).toMatchObject({ favourites_count: 0 });
    expect(await notificationsOf(s.user, A)).toEqual([]);
  });

  it("a Like of a private status by a non-follower, of a local-only status, or with an id on another origin is dropped", async () => {
    const s = await setup();
    const priv = await postOn(s.user, A, { status: "followers only", visibility: "private" });
    const local = await postOn(s.user, A, { status: "local only", visibility: "local" });
    const pub = await postOn(s.user, A, { status: "public", visibility: "public" });
    await accepted(await s.peer.send(s.actor, fill(mastodonLike, s.vars({ OBJECT: priv.uri }))));
    await accepted(await s.peer.send(s.actor, fill(mastodonLike, s.vars({ OBJECT: local.uri }))));
    await accepted(
      await s.peer.send(s.actor, {
        ...fill(mastodonLike, s.vars({ OBJECT: pub.uri })),
        id: `https://elsewhere.example/likes/${n++}`,
      }),
    );
    await accepted(
      await s.peer.send(s.actor, fill(mastodonLike, s.vars({ OBJECT: `${A.origin}/objects/nonexistent` }))),
    );
    expect(await q("SELECT id FROM favourites WHERE status_id IN (?, ?, ?)", priv.id, local.id, pub.id)).toEqual([]);
    expect(await notificationsOf(s.user, A)).toEqual([]);
    // Once a follower, the private status may be liked.
    await accepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars())));
    await accepted(await s.peer.send(s.actor, fill(mastodonLike, s.vars({ OBJECT: priv.uri }))));
    expect(await statusOn(s.user, A, priv.id)).toMatchObject({ favourites_count: 1 });
    // Blocked by the author: its Likes, reactions and boosts are dropped.
    const [{ id: peerId }] = await q<{ id: string }>("SELECT id FROM accounts WHERE uri = ?", s.actor);
    await json(`/api/v1/accounts/${peerId}/block`, { method: "POST", instance: A, token: s.user.token });
    await accepted(await s.peer.send(s.actor, fill(mastodonLike, s.vars({ OBJECT: pub.uri }))));
    await accepted(await s.peer.send(s.actor, { ...fill(misskeyLike, s.vars({ OBJECT: pub.uri })), content: "👍" }));
    await accepted(await s.peer.send(s.actor, fill(mastodonAnnounce, s.vars({ OBJECT: pub.uri }))));
    expect(await statusOn(s.user, A, pub.id)).toMatchObject({
      favourites_count: 0,
      reblogs_count: 0,
      pleroma: { emoji_reactions: [] },
    });
  });

  it("Misskey's reaction Like and Pleroma's EmojiReact become emoji reactions with the remote emoji; Undo removes them", async () => {
    const s = await setup();
    const status = await postOn(s.user, A, { status: "react", visibility: "unlisted" });
    const mk = fill(misskeyLike, s.vars({ OBJECT: status.uri }));
    const unicode = {
      ...fill(misskeyLike, s.vars({ OBJECT: status.uri })),
      content: "👍",
      _misskey_reaction: "👍",
      tag: [],
    };
    const pl = fill(pleromaReact, s.vars({ OBJECT: status.uri }));
    for (const activity of [mk, unicode, pl, pl]) await accepted(await s.peer.send(s.actor, activity));
    // A custom emoji without its tag cannot be shown: dropped.
    await accepted(
      await s.peer.send(s.actor, { ...fill(pleromaReact, s.vars({ OBJECT: status.uri })), content: ":nothere:" }),
    );
    const host = s.peer.host;
    const seen = await statusOn(s.user, A, status.id);
    expect(seen.favourites_count).toBe(0);
    const notes = await notificationsOf(s.user, A);
    const sender = notes[0]!.account.id;
    expect(seen.pleroma.emoji_reactions).toEqual([
      {
        name: `misskey_cat@${host}`,
        count: 1,
        me: false,
        url: `${s.peer.origin}/files/misskey_cat.png`,
        account_ids: [sender],
      },
      { name: "👍", count: 1, me: false, url: null, account_ids: [sender] },
      {
        name: `blobfox@${host}`,
        count: 1,
        me: false,
        url: `${s.peer.origin}/emoji/blobfox.png`,
        account_ids: [sender],
      },
    ]);
    // Pleroma's reactions endpoint shows the remote emoji's image too.
    const listed = (await json(`/api/v1/pleroma/statuses/${status.id}/reactions`, {
      instance: A,
      token: s.user.token,
    })) as { name: string; url: string | null }[];
    expect(listed.find((r) => r.name === `blobfox@${host}`)).toMatchObject({
      url: `${s.peer.origin}/emoji/blobfox.png`,
    });
    expect(notes.map((x) => [x.type, x.emoji]).sort()).toEqual(
      [
        ["pleroma:emoji_reaction", `misskey_cat@${host}`],
        ["pleroma:emoji_reaction", "👍"],
        ["pleroma:emoji_reaction", `blobfox@${host}`],
      ].sort(),
    );
    // A local user joins the remote reaction by the name shown (Pleroma-FE does); an unknown remote one is refused.
    const other = await registerUser({ instance: A });
    const joined = await act(
      other,
      A,
      `/api/v1/pleroma/statuses/${status.id}/reactions/${encodeURIComponent(`blobfox@${host}`)}`,
      "PUT",
    );
    expect(joined.pleroma.emoji_reactions.find((r) => r.name === `blobfox@${host}`)).toEqual({
      name: `blobfox@${host}`,
      count: 2,
      me: true,
      url: `${s.peer.origin}/emoji/blobfox.png`,
      account_ids: [sender, other.id],
    });
    expect(
      (
        await call(`/api/v1/pleroma/statuses/${status.id}/reactions/${encodeURIComponent(`nothere@${host}`)}`, {
          method: "PUT",
          instance: A,
          token: other.token,
        })
      ).status,
    ).toBe(400);
    await act(
      other,
      A,
      `/api/v1/pleroma/statuses/${status.id}/reactions/${encodeURIComponent(`blobfox@${host}`)}`,
      "DELETE",
    );
    // Undo by id only (as Misskey sends it) and with the object embedded (as Pleroma does).
    await accepted(
      await s.peer.send(s.actor, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${mk.id}/undo`,
        type: "Undo",
        actor: s.actor,
        object: mk.id,
      }),
    );
    await accepted(
      await s.peer.send(s.actor, {
        "@context": pl["@context"],
        id: `${pl.id}/undo`,
        type: "Undo",
        actor: s.actor,
        object: pl,
      }),
    );
    expect((await statusOn(s.user, A, status.id)).pleroma.emoji_reactions).toEqual([
      { name: "👍", count: 1, me: false, url: null, account_ids: [sender] },
    ]);
    expect((await notificationsOf(s.user, A)).map((x) => x.emoji)).toEqual(["👍"]);
  });

  it("Mastodon's Announce of a local status: a reblog and its notification, not of a private one; Undo(Announce) removes it", async () => {
    const s = await setup();
    const pub = await postOn(s.user, A, { status: "boost me", visibility: "public" });
    const priv = await postOn(s.user, A, { status: "not me", visibility: "private" });
    await accepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars())));
    const vars = s.vars({ OBJECT: pub.uri });
    const announce = fill(mastodonAnnounce, vars);
    await accepted(await s.peer.send(s.actor, announce));
    await accepted(await s.peer.send(s.actor, announce));
    await accepted(await s.peer.send(s.actor, fill(mastodonAnnounce, s.vars({ OBJECT: priv.uri }))));
    expect(await statusOn(s.user, A, pub.id)).toMatchObject({ reblogs_count: 1 });
    expect(await statusOn(s.user, A, priv.id)).toMatchObject({ reblogs_count: 0 });
    const rebloggedBy = (await json(`/api/v1/statuses/${pub.id}/reblogged_by`, { instance: A })) as unknown[];
    expect(rebloggedBy.map((a) => valid(AccountSchema, a).acct)).toEqual([s.acct]);
    expect((await notificationsOf(s.user, A)).map((x) => [x.type, x.status?.id])).toEqual([
      ["reblog", pub.id],
      ["follow", undefined],
    ]);
    // Nobody else can undo it, embedded or by id.
    const mallory = s.peer.actor();
    await accepted(
      await s.peer.send(mallory, { ...fill(mastodonUndoAnnounce, { ...vars, ACTOR: mallory }), object: announce }),
    );
    await accepted(
      await s.peer.send(mallory, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${mallory}#undo/${n++}`,
        type: "Undo",
        actor: mallory,
        object: announce.id,
      }),
    );
    expect(await statusOn(s.user, A, pub.id)).toMatchObject({ reblogs_count: 1 });
    await accepted(await s.peer.send(s.actor, fill(mastodonUndoAnnounce, vars)));
    expect(await statusOn(s.user, A, pub.id)).toMatchObject({ reblogs_count: 0 });
    expect((await notificationsOf(s.user, A)).map((x) => x.type)).toEqual(["follow"]);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", announce.id)).toEqual([]);

    // An Announce of another server's status by an actor nobody here follows: nothing fetched, nothing stored.
    const stranger = s.peer.actor();
    const elsewhere = `${s.peer.origin}/notes/${n++}`;
    await accepted(
      await s.peer.send(
        stranger,
        fill(mastodonAnnounce, s.vars({ ACTOR: stranger, OBJECT: elsewhere, OBJECT_AUTHOR: s.actor })),
      ),
    );
    expect(s.peer.requests).not.toContain(`GET ${new URL(elsewhere).pathname}`);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", elsewhere)).toEqual([]);
  });
});
