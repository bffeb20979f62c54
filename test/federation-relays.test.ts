/**
 * Relays (issue 36): Pleroma's relay admin API, the instance actor's Follow of a LitePub relay (its actor) and of a
 * Mastodon-style relay (the public collection, to its inbox), Accept/Reject tracked, what each brings (a LitePub
 * relay's Announce, fetched from the origin; a Mastodon-style relay's forwarded Create, taken by the forwarding
 * rule) on the federated timeline only, local public posts sent to accepted relays, the storage guard, and
 * unfollowing. Fedify test peers play the relays (`relay.example`) and the authors (`peer.example`).
 */
import { signJsonLd, verifyJsonLd } from "@fedify/fedify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deliveryWake, drainFederation } from "../src/federation/delivery/wake";
import { settleRelays } from "../src/federation/fetching/relays";
import { StatusSchema } from "../src/schemas/status";
import { json, makeAdmin, registerUser, valid, type TestUser } from "./helpers";
import { A, instanceFetch } from "./instances";
import { createPeer, type Peer } from "./peer";
import { q } from "./inbound";

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const AS = "https://www.w3.org/ns/activitystreams";
const INSTANCE_ACTOR = "https://a.example/users/internal.fetch";

let peer: Peer;
let relays: Peer;
let unroute: () => void;
let admin: TestUser;
const realWake = deliveryWake.run;

beforeAll(async () => {
  peer = createPeer();
  relays = createPeer("relay.example");
  admin = await registerUser({ instance: A, scopes: "read write follow push admin" });
  await makeAdmin(admin.id);
});
beforeEach(() => {
  unroute = peer.route([relays]);
  deliveryWake.run = async () => {};
});
afterEach(() => {
  unroute();
  deliveryWake.run = realWake;
});
afterAll(() => q("DELETE FROM instance_keys WHERE name = 'storage'"));

const relayApi = (method: "GET" | "POST" | "DELETE", body?: Record<string, unknown>, status = 200) =>
  json("/api/v1/pleroma/admin/relay", { instance: A, token: admin.token, method, body, status });

const federated = async (user: TestUser) =>
  ((await json("/api/v1/timelines/public?remote=true&limit=40", { instance: A, token: user.token })) as unknown[]).map(
    (s) => valid(StatusSchema, s),
  );
const home = async (user: TestUser) =>
  ((await json("/api/v1/timelines/home?limit=40", { instance: A, token: user.token })) as unknown[]).map((s) =>
    valid(StatusSchema, s),
  );

let n = 0;

/** The relay's `Announce` of an object, sent to A's inbox as the relay. */
const announce = (relay: string, object: unknown) =>
  relays.send(relay, { "@context": AS, id: `${relay}#announces/${n++}`, type: "Announce", actor: relay, object });
/** A public note by `author` on the peer, served at its id. */
function servedNote(author: string, extra: Record<string, unknown> = {}) {
  const id = `${author}/notes/${Date.now()}${n++}`;
  const note = {
    "@context": AS,
    id,
    type: "Note",
    attributedTo: author,
    content: `<p>relayed ${id}</p>`,
    published: new Date().toISOString(),
    to: [PUBLIC],
    cc: [`${author}/followers`],
    ...extra,
  };
  peer.objects.set(id, note);
  return note;
}

/** What the relay host received, in order. */
const toRelay = () => relays.delivered.map((x) => x.body as Record<string, any>);

describe("relays", () => {
  it("refuses non-admins, and answers 4xx for URLs that are not relays", async () => {
    const user = await registerUser({ instance: A, scopes: "read write follow push admin" });
    await json("/api/v1/pleroma/admin/relay", { instance: A, token: user.token, status: 403 });
    const bad = await relayApi("POST", { relay_url: "not a url" }, 400);
    expect(bad.error).toBeTruthy();
    await relayApi("POST", { relay_url: "https://relay.example/nothing-here" }, 400);
    await relayApi("DELETE", { relay_url: "https://relay.example/unknown" }, 404);
    // Plain http only with the development switch on.
    const production = { ...A, bindings: { ...A.bindings, ALLOW_PRIVATE_ADDRESS: "false" } };
    const plain = await json("/api/v1/pleroma/admin/relay", {
      instance: production,
      token: admin.token,
      method: "POST",
      body: { relay_url: "http://relay.example/inbox" },
      status: 400,
    });
    expect(plain.error).toContain("https");
    expect((await relayApi("GET")).relays).toEqual([]);
  });

  it("a LitePub relay: followed by its actor, accepted, its Announces on the federated timeline (never a boost), posts sent to it", async () => {
    const relay = relays.actor("litepub");
    const reader = await registerUser({ instance: A });
    expect(await relayApi("POST", { relay_url: relay })).toBe(relay);
    expect((await relayApi("GET")).relays).toEqual([{ actor: relay, followed_back: false, state: "pending" }]);
    await drainFederation(A.bindings);
    const follow = toRelay().find((b) => b.type === "Follow" && b.object === relay)!;
    expect(follow).toMatchObject({ actor: INSTANCE_ACTOR, object: relay });
    expect(relays.delivered.find((x) => x.body === follow)?.signed).toBe(true);

    // Someone else's Accept of the Follow changes nothing; the relay's does.
    const stranger = relays.actor();
    await relays.send(stranger, {
      "@context": AS,
      id: `${stranger}#a`,
      type: "Accept",
      actor: stranger,
      object: follow,
    });
    expect((await relayApi("GET")).relays[0].state).toBe("pending");
    // Pending: what the relay forwards under its own signature is not taken as relayed.
    const early = servedNote(peer.actor());
    await relays.send(
      early.attributedTo,
      {
        "@context": AS,
        id: `${early.attributedTo}/activities/${n++}`,
        type: "Create",
        actor: early.attributedTo,
        object: early,
      },
      { signAs: relay },
    );
    expect(await q("SELECT id FROM statuses WHERE uri = ?", early.id)).toEqual([]);
    // Nor is its Announce of a local post a boost (pending, as rejected or being removed).
    const local = await json("/api/v1/statuses", { instance: A, token: reader.token, body: { status: "boost me?" } });
    await announce(relay, local.uri);
    expect(await q("SELECT id FROM statuses WHERE reblog_of_id = ?", local.id)).toEqual([]);
    await relays.send(relay, {
      "@context": AS,
      id: `${relay}#accepts/1`,
      type: "Accept",
      actor: relay,
      object: follow,
    });
    // The relay follows the instance actor back: accepted.
    await relays.send(relay, {
      "@context": AS,
      id: `${relay}#follows/1`,
      type: "Follow",
      actor: relay,
      object: INSTANCE_ACTOR,
    });
    expect((await relayApi("GET")).relays).toEqual([{ actor: relay, followed_back: true, state: "accepted" }]);
    await drainFederation(A.bindings);
    expect(toRelay().find((b) => b.type === "Accept")).toMatchObject({
      actor: INSTANCE_ACTOR,
      object: { id: `${relay}#follows/1`, actor: relay },
    });

    // The relay announces a post by an author nobody here follows, naming it by id: fetched from its origin.
    const author = peer.actor();
    const note = servedNote(author);
    await relays.send(relay, {
      "@context": AS,
      id: `${relay}#announces/${n++}`,
      type: "Announce",
      actor: relay,
      object: note.id,
      to: [`${relay}/followers`],
    });
    // An embedded copy that lies about the content is not believed: the origin's is stored.
    const other = servedNote(author);
    await announce(relay, { ...other, content: "<p>forged by the relay</p>" });
    // Its author is stored the light way: no counters (its followers collection is not read), no pinned posts.
    expect(peer.requests.filter((r) => /^GET \/users\/[^/]+\/(followers|following|outbox|featured)/.test(r))).toEqual(
      [],
    );
    // Announced again (by this relay or another): stored already, nothing fetched.
    const fetchedBefore = [peer.requests.length, relays.requests.length];
    await announce(relay, note.id);
    expect([peer.requests.length, relays.requests.length]).toEqual(fetchedBefore);
    // An unlisted post is shown on no timeline a relay feeds: not taken.
    const unlisted = servedNote(author, { to: [`${author}/followers`], cc: [PUBLIC] });
    await announce(relay, unlisted.id);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", unlisted.id)).toEqual([]);
    const shown = await federated(reader);
    const mine = shown.filter((s) => s.account.url?.startsWith(author) || s.uri.startsWith(author));
    expect(mine.map((s) => s.uri).sort()).toEqual([note.id, other.id].sort());
    expect(mine.every((s) => s.reblog === null)).toBe(true);
    expect(mine.find((s) => s.uri === other.id)!.content).toContain("relayed");
    expect(
      await q(
        "SELECT id FROM statuses WHERE reblog_of_id IS NOT NULL AND account_id IN (SELECT id FROM accounts WHERE uri = ?)",
        relay,
      ),
    ).toEqual([]);
    // Nobody's home: nobody follows the author.
    expect((await home(reader)).filter((s) => s.uri.startsWith(author))).toEqual([]);
    // Unless a hashtag the reader follows matches.
    await json("/api/v1/tags/relaytag/follow", { instance: A, token: reader.token, body: {} });
    const tagged = servedNote(author, {
      "@context": [AS, { Hashtag: "as:Hashtag" }],
      content: "<p>about #relaytag</p>",
      tag: [{ type: "Hashtag", name: "#relaytag", href: "https://peer.example/tags/relaytag" }],
    });
    await announce(relay, tagged.id);
    expect((await home(reader)).filter((s) => s.uri.startsWith(author)).map((s) => s.uri)).toEqual([tagged.id]);

    // Local public posts go to the relay; followers-only ones never.
    const before = relays.delivered.length;
    const pub = await json("/api/v1/statuses", { instance: A, token: reader.token, body: { status: "to the relay" } });
    await json("/api/v1/statuses", {
      instance: A,
      token: reader.token,
      body: { status: "not to the relay", visibility: "private" },
    });
    await drainFederation(A.bindings);
    const sent = toRelay().slice(before);
    expect(sent.map((b) => [b.type, b.object?.id])).toEqual([["Create", pub.uri]]);
    // Signed by its author for the servers the relay hands it to (Mastodon drops a relayed Create without one).
    const readerUri = `https://a.example/users/${reader.username}`;
    expect(sent[0]!.signature).toMatchObject({ type: "RsaSignature2017", creator: `${readerUri}#main-key` });
    const fromA = async (url: string) => {
      const res = await instanceFetch(A, new Request(url, { headers: { Accept: "application/activity+json" } }));
      return { contextUrl: null, documentUrl: url, document: await res.json() };
    };
    expect(await verifyJsonLd(sent[0]!, { documentLoader: fromA })).toBe(true);
    expect(
      await verifyJsonLd(
        { ...sent[0]!, object: { ...sent[0]!.object, content: "changed" } },
        { documentLoader: fromA },
      ),
    ).toBe(false);
    // Relaying off (`allow_relay`, Pleroma's setting): nothing more to the relay, until it is on again.
    const allowRelay = (on: boolean) =>
      json("/api/v1/pleroma/admin/config", {
        instance: A,
        token: admin.token,
        body: { configs: [{ group: ":pleroma", key: ":instance", value: [{ tuple: [":allow_relay", on] }] }] },
      });
    await allowRelay(false);
    const quiet = relays.delivered.length;
    await json("/api/v1/statuses", { instance: A, token: reader.token, body: { status: "relaying is off" } });
    await drainFederation(A.bindings);
    expect(relays.delivered.length).toBe(quiet);
    await allowRelay(true);

    // Near the storage ceiling, relay content is refused.
    await q(
      "INSERT INTO instance_keys (name, value, created_at) VALUES ('storage', ?, 0) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      JSON.stringify({ bytes: 97, limitBytes: 100, at: Date.now(), warnedAt: Date.now() }),
    );
    const refused = servedNote(author);
    await announce(relay, refused.id);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", refused.id)).toEqual([]);
    await q("DELETE FROM instance_keys WHERE name = 'storage'");
    // The same, with room again: taken.
    await announce(relay, refused.id);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", refused.id)).toHaveLength(1);

    // Unfollowed: an Undo of the Follow goes out, and what it announces is no longer taken.
    // Pleroma's admin-fe sends `force` as a JSON boolean.
    expect(await relayApi("DELETE", { relay_url: relay, force: true })).toBe(relay);
    expect((await relayApi("GET")).relays).toEqual([]);
    await drainFederation(A.bindings);
    expect(toRelay().at(-1)).toMatchObject({ type: "Undo", actor: INSTANCE_ACTOR, object: { id: follow.id } });
    const late = servedNote(author);
    await announce(relay, late.id);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", late.id)).toEqual([]);
    const afterUnfollow = relays.delivered.length;
    await json("/api/v1/statuses", { instance: A, token: reader.token, body: { status: "no relay now" } });
    await drainFederation(A.bindings);
    expect(relays.delivered.length).toBe(afterUnfollow);
  });

  it("a Mastodon-style relay: the public collection followed at its inbox; forwarded Creates taken by the forwarding rule", async () => {
    // The relay's actor names the inbox followed as its own (as pub-relay's `/actor` names `/inbox`).
    const relay = relays.actor("mastodonrelay");
    const inbox = `${relay}/inbox`;
    const reader = await registerUser({ instance: A });
    expect(await relayApi("POST", { relay_url: inbox })).toBe(inbox);
    await drainFederation(A.bindings);
    let follow = toRelay()
      .filter((b) => b.type === "Follow")
      .at(-1)!;
    expect(follow).toMatchObject({ actor: INSTANCE_ACTOR, object: PUBLIC });
    expect(relays.delivered.find((x) => x.body === follow)?.url).toBe(inbox);
    // Another actor on the relay's host (its inbox is not the relay's) is not the relay: its Accept is not taken.
    const impostor = relays.actor();
    await relays.send(impostor, {
      "@context": AS,
      id: `${impostor}#accepts/1`,
      type: "Accept",
      actor: impostor,
      object: follow,
    });
    expect((await relayApi("GET")).relays).toEqual([{ actor: inbox, followed_back: false, state: "pending" }]);
    // A Reject is shown as such; then accepted.
    await relays.send(relay, {
      "@context": AS,
      id: `${relay}#rejects/1`,
      type: "Reject",
      actor: relay,
      object: follow.id,
    });
    expect((await relayApi("GET")).relays).toEqual([{ actor: relay, followed_back: false, state: "rejected" }]);
    const rejectedForward = servedNote(peer.actor());
    const forwardedCreate = (o: { id: string; attributedTo: string }) => ({
      "@context": AS,
      id: `${o.attributedTo}/activities/${n++}`,
      type: "Create",
      actor: o.attributedTo,
      object: o,
    });
    // While rejected, what the relay forwards is not taken.
    await relays.send(rejectedForward.attributedTo, forwardedCreate(rejectedForward), { signAs: relay });
    expect(await q("SELECT id FROM statuses WHERE uri = ?", rejectedForward.id)).toEqual([]);
    // Followed again by the admin: a new Follow (the rejected one undone), pending again.
    expect(await relayApi("POST", { relay_url: inbox })).toBe(inbox);
    await drainFederation(A.bindings);
    const [undone, refollow] = toRelay().slice(-2);
    expect(undone).toMatchObject({ type: "Undo", object: { id: follow.id } });
    expect(refollow).toMatchObject({ type: "Follow", actor: INSTANCE_ACTOR, object: PUBLIC });
    expect(refollow!.id).not.toBe(follow.id);
    follow = refollow!;
    expect((await relayApi("GET")).relays).toEqual([{ actor: inbox, followed_back: false, state: "pending" }]);
    await relays.send(relay, {
      "@context": AS,
      id: `${relay}#accepts/2`,
      type: "Accept",
      actor: relay,
      object: follow,
    });
    expect((await relayApi("GET")).relays[0].state).toBe("accepted");
    // Accepted: another actor on the relay's host forwarding is still not the relay.
    const byImpostor = servedNote(peer.actor());
    await relays.send(byImpostor.attributedTo, forwardedCreate(byImpostor), { signAs: impostor });
    expect(await q("SELECT id FROM statuses WHERE uri = ?", byImpostor.id)).toEqual([]);

    // The relay forwards another server's Create under its own signature (no signature of the author's): the
    // note is taken as its origin serves it.
    const author = peer.actor();
    const note = servedNote(author);
    const forwarded = (object: unknown) => ({
      "@context": AS,
      id: `${author}/activities/${n++}`,
      type: "Create",
      actor: author,
      object,
    });
    const res = await relays.send(author, forwarded({ ...note, content: "<p>changed on the way</p>" }), {
      signAs: relay,
    });
    expect(res.status).toBe(202);
    const shown = (await federated(reader)).filter((s) => s.uri === note.id);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.content).toContain("relayed");
    expect(shown[0]!.reblog).toBeNull();
    expect((await home(reader)).filter((s) => s.uri === note.id)).toEqual([]);
    // With the author's Linked Data signature (as Mastodon's relays forward), taken as signed, even though the
    // origin does not serve it.
    const signedNote = servedNote(author);
    peer.objects.delete(signedNote.id);
    const { rsa } = await peer.keys(author);
    const { "@context": _c, ...bareNote } = signedNote;
    const body = await signJsonLd(forwarded(bareNote), rsa.privateKey, new URL(`${author}#main-key`), {});
    expect((await relays.send(author, body, { signAs: relay })).status).toBe(202);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", signedNote.id)).toHaveLength(1);
    // Forwarded again, signed, now mentioning someone unknown here: stored already, so nobody is fetched.
    const stranger = peer.actor();
    const requestsBefore = peer.requests.length;
    const again = await signJsonLd(
      forwarded({ ...bareNote, tag: [{ type: "Mention", href: stranger, name: "@stranger@peer.example" }] }),
      rsa.privateKey,
      new URL(`${author}#main-key`),
      {},
    );
    expect((await relays.send(author, again, { signAs: relay })).status).toBe(202);
    expect(peer.requests.slice(requestsBefore).filter((r) => r === `GET ${new URL(stranger).pathname}`)).toEqual([]);
    // A followers-only post is not taken from a relay.
    const hidden = servedNote(author, { to: [`${author}/followers`], cc: [] });
    await relays.send(author, forwarded(hidden), { signAs: relay });
    expect(await q("SELECT id FROM statuses WHERE uri = ?", hidden.id)).toEqual([]);
    // A server that is not a followed relay forwarding the same way: nothing concerns this instance.
    const notRelay = peer.actor();
    const stray = servedNote(author);
    await peer.send(author, forwarded(stray), { signAs: notRelay });
    expect(await q("SELECT id FROM statuses WHERE uri = ?", stray.id)).toEqual([]);

    await relayApi("DELETE", { relay_url: inbox });
    await drainFederation(A.bindings);
    expect(toRelay().at(-1)).toMatchObject({ type: "Undo", object: { id: follow.id, object: PUBLIC } });
    const after = servedNote(author);
    await relays.send(author, forwarded(after), { signAs: relay });
    expect(await q("SELECT id FROM statuses WHERE uri = ?", after.id)).toEqual([]);
  });

  it("relays added or removed by the command line are followed and unfollowed by the cron", async () => {
    const relay = relays.actor("cli");
    // What `npm run admin -- relay follow <url>` writes.
    await q(
      "INSERT INTO relays (id, url, state, created_at, updated_at) VALUES ('01CLIRELAY0000000000000000', ?, 'pending', 1, 1)",
      relay,
    );
    expect(await settleRelays(A.bindings, A.origin)).toBe(true);
    await drainFederation(A.bindings);
    const follow = toRelay()
      .filter((b) => b.type === "Follow")
      .at(-1)!;
    expect(follow).toMatchObject({ actor: INSTANCE_ACTOR, object: relay });
    // `relay unfollow <url>`.
    await q("UPDATE relays SET state = 'removing' WHERE url = ?", relay);
    await settleRelays(A.bindings, A.origin);
    await drainFederation(A.bindings);
    expect(toRelay().at(-1)).toMatchObject({ type: "Undo", object: { id: follow.id } });
    expect(await q("SELECT id FROM relays WHERE url = ?", relay)).toEqual([]);
  });

  it("the cron unfollows first, backs off relays it cannot look up, and marks them failed after a few tries", async () => {
    const t = Date.now();
    // Ten rows the command line added that lead nowhere, then one it removed (added last).
    await q(
      `WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 9)
       INSERT INTO relays (id, url, state, created_at, updated_at)
       SELECT '01CLIBAD00000000000000000' || i, 'https://relay.example/nowhere/' || i, 'pending', 1, 1 FROM k`,
    );
    await q(
      "INSERT INTO relays (id, url, kind, actor_uri, inbox_url, follow_uri, state, created_at, updated_at) VALUES ('01CLIGONE000000000000000000', 'https://relay.example/users/gone', 'litepub', 'https://relay.example/users/gone', 'https://relay.example/inbox', 'https://a.example/users/internal.fetch#relays/01CLIGONE', 'removing', 2, 2)",
    );
    await settleRelays(A.bindings, A.origin, t);
    expect(await q("SELECT id FROM relays WHERE url = 'https://relay.example/users/gone'")).toEqual([]);
    const tried = await q<{ url: string; attempts: number }>(
      "SELECT url, attempts FROM relays WHERE url LIKE 'https://relay.example/nowhere/%' AND attempts > 0",
    );
    expect(tried.length).toBeGreaterThan(0);
    expect(tried.length).toBeLessThanOrEqual(2);
    // Not tried again before its back-off has passed.
    const requests = relays.requests.length;
    await q("DELETE FROM relays WHERE url LIKE 'https://relay.example/nowhere/%' AND attempts = 0");
    expect(await settleRelays(A.bindings, A.origin, t + 1000)).toBe(false);
    expect(relays.requests.length).toBe(requests);
    await settleRelays(A.bindings, A.origin, t + 5 * 60_000 + 1);
    expect(relays.requests.length).toBeGreaterThan(requests);
    expect(
      (await q<{ attempts: number }>("SELECT attempts FROM relays WHERE url = ?", tried[0]!.url))[0]!.attempts,
    ).toBe(2);
    // After a few tries: failed, shown as such, and no longer tried.
    await q("UPDATE relays SET attempts = 4 WHERE url LIKE 'https://relay.example/nowhere/%'");
    await settleRelays(A.bindings, A.origin, t + 86_400_000);
    expect((await relayApi("GET")).relays.filter((r: { actor: string }) => r.actor.includes("/nowhere/"))).toEqual(
      tried.map((r) => ({ actor: r.url, followed_back: false, state: "failed" })),
    );
    const settled = relays.requests.length;
    expect(await settleRelays(A.bindings, A.origin, t + 10 * 86_400_000)).toBe(false);
    expect(relays.requests.length).toBe(settled);
    await q("DELETE FROM relays WHERE url LIKE 'https://relay.example/nowhere/%'");
  });

  it("a deleted account's Delete goes to the accepted relays too", async () => {
    const relay = relays.actor("deletions");
    await q(
      "INSERT INTO relays (id, url, kind, actor_uri, inbox_url, follow_uri, state, created_at, updated_at) VALUES ('01DELRELAY0000000000000000', ?, 'litepub', ?, 'https://relay.example/inbox', 'https://a.example/users/internal.fetch#relays/01DELRELAY', 'accepted', 1, 1)",
      relay,
      relay,
    );
    try {
      // Nobody follows them: only the relay hears of it.
      const leaving = await registerUser({ instance: A });
      const uri = `https://a.example/users/${leaving.username}`;
      await json("/api/v1/pleroma/admin/users", {
        instance: A,
        token: admin.token,
        method: "DELETE",
        body: { nicknames: [leaving.username] },
      });
      await drainFederation(A.bindings);
      expect(toRelay().filter((b) => b.type === "Delete" && b.object === uri)).toEqual([
        expect.objectContaining({ actor: uri }),
      ]);
    } finally {
      await q("DELETE FROM relays WHERE id = '01DELRELAY0000000000000000'");
    }
  });
});
