import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { ConversationSchema, NotificationSchema } from "../src/schemas/social";
import { StatusSchema } from "../src/schemas/status";
import { call, json, makeAdmin, post, registerUser, upload, valid, type TestUser } from "./helpers";
import { dispatch } from "../src/services/events";
import { deliverToStreams } from "../src/effects/stream-delivery";
import { countingD1 } from "./d1-counter";
import { encodeConnection, userObject } from "../src/objects/streams";
import { streamObject } from "../src/services/streams";
import {
  expectClientsParse,
  openEventStream,
  openSocket,
  payloads,
  settled,
  type Socket,
  type WsFrame,
} from "./streams";

/** A further token of `user` with exactly `scope` (password grant). */
async function tokenWith(user: TestUser, scope: string): Promise<string> {
  const t = await json("/oauth/token", {
    body: {
      grant_type: "password",
      username: user.username,
      password: user.password,
      client_id: user.app.client_id,
      client_secret: user.app.client_secret,
      scope,
    },
  });
  return t.access_token;
}

const follow = (who: TestUser, target: TestUser) =>
  json(`/api/v1/accounts/${target.id}/follow`, { method: "POST", token: who.token });
const updates = (frames: WsFrame[]) => payloads(frames, "update").map((s) => valid(StatusSchema, s).id);
const isUpdate = (id: string) => (f: WsFrame) => f.event === "update" && JSON.parse(f.payload!).id === id;

describe("streaming: connecting", () => {
  it("answers 401 for a bad token, 404 for an unknown stream, 400 for a missing tag, before any upgrade", async () => {
    const ws = { Upgrade: "websocket" };
    const bad = await call("/api/v1/streaming?stream=public&access_token=nope", { headers: ws });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ error: "Invalid access token" });
    expect(await json("/api/v1/streaming?stream=nonsense", { headers: ws, status: 404 })).toEqual({
      error: "Unknown stream type",
    });
    // Without a stream a WebSocket opens (see "sockets opened without a stream"); an event stream needs one.
    expect(await json("/api/v1/streaming", { status: 400 })).toEqual({ error: "Unknown stream type" });
    expect(await json("/api/v1/streaming?access_token=nope", { headers: ws, status: 401 })).toEqual({
      error: "Invalid access token",
    });
    expect(
      await json("/api/v1/streaming", { headers: { ...ws, "Sec-WebSocket-Protocol": "nope" }, status: 401 }),
    ).toEqual({ error: "Invalid access token" });
    expect(await json("/api/v1/streaming?stream=user", { headers: ws, status: 401 })).toEqual({
      error: "Missing access token",
    });
    expect(await json("/api/v1/streaming?stream=hashtag", { headers: ws, status: 400 })).toEqual({
      error: "No tag for stream provided",
    });
    expect(await json("/api/v1/streaming?stream=public:remote", { headers: ws, status: 400 })).toEqual({
      error: "No instance for stream provided",
    });
  });

  it("checks scopes per stream, and lists belong to their owner", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const ws = { Upgrade: "websocket" };
    const writeOnly = await tokenWith(a, "write");
    expect(await json(`/api/v1/streaming?stream=user&access_token=${writeOnly}`, { headers: ws, status: 401 })).toEqual(
      {
        error: "Insufficient permissions: read:statuses.",
      },
    );
    const notificationsOnly = await tokenWith(a, "read:notifications");
    expect(
      (await json(`/api/v1/streaming?stream=direct&access_token=${notificationsOnly}`, { headers: ws, status: 401 }))
        .error,
    ).toMatch(/read:statuses/);
    const ok = await openSocket(`stream=user:notification&access_token=${notificationsOnly}`);
    await ok.close();
    // Public streams need no scope, whatever the token.
    const pub = await openSocket(`stream=public&access_token=${writeOnly}`);
    await pub.close();
    await follow(b, a);
    const list = await json("/api/v1/lists", { method: "POST", token: b.token, body: { title: "b's" } });
    expect(
      await json(`/api/v1/streaming?stream=list&list=${list.id}&access_token=${a.token}`, { headers: ws, status: 404 }),
    ).toEqual({ error: "Record not found" });
    expect(await json(`/api/v1/streaming?stream=list&list=${list.id}`, { headers: ws, status: 401 })).toEqual({
      error: "Missing access token",
    });
    const own = await openSocket(`stream=list&list=${list.id}&access_token=${b.token}`);
    await own.close();
  });

  it("takes the token from the Authorization header or Sec-WebSocket-Protocol, echoing the protocol", async () => {
    const a = await registerUser();
    const byHeader = await openSocket("stream=user", { Authorization: `Bearer ${a.token}` });
    const byProtocol = await openSocket("stream=user", { "Sec-WebSocket-Protocol": a.token });
    expect(byProtocol.response.headers.get("sec-websocket-protocol")).toBe(a.token);
    const s = await post(a, { status: "both hear it" });
    await byHeader.next(isUpdate(s.id));
    await byProtocol.next(isUpdate(s.id));
    await Promise.all([byHeader.close(), byProtocol.close()]);
  });

  it("declines permessage-deflate, which browsers offer, for every kind of stream", async () => {
    const a = await registerUser();
    const offer = { "Sec-WebSocket-Extensions": "permessage-deflate; client_max_window_bits" };
    for (const [query, headers] of [
      ["stream=public", {}],
      ["stream=user", { Authorization: `Bearer ${a.token}` }],
      ["", {}],
    ] as const) {
      const socket = await openSocket(query, { ...offer, ...headers });
      // The 101 names another extension, so workerd does not take up the client's offer.
      expect(socket.response.headers.get("sec-websocket-extensions")).toBe("none");
      await socket.close();
    }
  });

  it("answers a text ping with pong", async () => {
    const socket = await openSocket("stream=public");
    socket.send("ping");
    await expect.poll(() => socket.texts).toEqual(["pong"]);
    await socket.close();
  });

  it("records who listens while a socket is open, and forgets it once closed", async () => {
    const a = await registerUser();
    const socket = await openSocket(`stream=user&access_token=${a.token}`);
    const rows = () => env.DB.prepare("SELECT stream, arg FROM stream_presence WHERE account_id = ?").bind(a.id).all();
    expect((await rows()).results).toEqual([{ stream: "user", arg: "" }]);
    await socket.close();
    await expect.poll(async () => (await rows()).results).toEqual([]);
  });
});

describe("streaming: update", () => {
  it("delivers a new public status to an anonymous public listener, as a Status in a JSON string", async () => {
    const a = await registerUser();
    const socket = await openSocket("stream=public");
    const s = await post(a, { status: "hello stream" });
    const frame = await socket.next(isUpdate(s.id));
    expect(frame.stream).toEqual(["public"]);
    expect(typeof frame.payload).toBe("string");
    expect(valid(StatusSchema, JSON.parse(frame.payload!)).content).toContain("hello stream");
    await socket.close();
  });

  it("a user stream gets the user's own posts and followed accounts' posts, nobody else's", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    await follow(a, b);
    const socket = await openSocket(`stream=user&access_token=${a.token}`);
    const mine = await post(a, { status: "mine", visibility: "private" });
    const theirs = await post(b, { status: "theirs", visibility: "private" });
    await post(c, { status: "a stranger's public post" });
    await socket.fence();
    expect(updates(socket.frames).sort()).toEqual([mine.id, theirs.id].sort());
    expect(socket.frames.every((f) => f.stream.join() === "user")).toBe(true);
    await socket.close();
  });

  it("renders the status for the listener (their own relationship to it)", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    await follow(a, b);
    const socket = await openSocket(`stream=user&access_token=${a.token}`);
    const s = await post(b, { status: "boost me" });
    await socket.next(isUpdate(s.id));
    // a reblogs it: the reblog arrives on a's stream with a's flags.
    const r = await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: a.token });
    const frame = await socket.next(isUpdate(r.id));
    const status = valid(StatusSchema, JSON.parse(frame.payload!));
    expect(status.reblog?.id).toBe(s.id);
    expect(status.reblogged).toBe(true);
    await socket.close();
  });

  it("each listener gets the status rendered for them: one's favourite is not another's", async () => {
    const [fan, other, booster, author] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await follow(fan, booster);
    await follow(other, booster);
    const s = await post(author, { status: "worth a boost" });
    await json(`/api/v1/statuses/${s.id}/favourite`, { method: "POST", token: fan.token });
    const fanStream = await openSocket(`stream=user&access_token=${fan.token}`);
    const otherStream = await openSocket(`stream=user&access_token=${other.token}`);
    const r = await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: booster.token });
    const forFan = valid(StatusSchema, JSON.parse((await fanStream.next(isUpdate(r.id))).payload!));
    const forOther = valid(StatusSchema, JSON.parse((await otherStream.next(isUpdate(r.id))).payload!));
    expect([forFan.favourited, forFan.reblog?.favourited, forFan.reblog?.favourites_count]).toEqual([true, true, 1]);
    expect([forOther.favourited, forOther.reblog?.favourited, forOther.reblog?.favourites_count]).toEqual([
      false,
      false,
      1,
    ]);
    await Promise.all([fanStream.close(), otherStream.close()]);
  });

  it("a private status never reaches a stranger's stream, nor anonymous ones; a direct one only its addressees", async () => {
    const [a, b, stranger] = [await registerUser(), await registerUser(), await registerUser()];
    await follow(stranger, b); // follows b only
    const anon = await openSocket("stream=public");
    const strangerUser = await openSocket(`stream=user&access_token=${stranger.token}`);
    const strangerPublic = await openSocket(`stream=public&access_token=${stranger.token}`);
    const bUser = await openSocket(`stream=user&access_token=${b.token}`);
    const priv = await post(a, { status: "followers only", visibility: "private" });
    const dm = await post(a, { status: `@${b.username} just you`, visibility: "direct" });
    const unlisted = await post(a, { status: "quiet public", visibility: "unlisted" });
    await bUser.next(isUpdate(dm.id));
    const fence = await post(b, { status: "everyone" });
    for (const s of [anon, strangerUser, strangerPublic]) await s.next(isUpdate(fence.id));
    for (const s of [anon, strangerUser, strangerPublic, bUser]) await s.fence();
    for (const s of [anon, strangerUser, strangerPublic]) expect(updates(s.frames)).toEqual([fence.id]);
    expect(updates(bUser.frames).sort()).toEqual([dm.id, fence.id].sort());
    expect([priv.id, unlisted.id].some((id) => updates(bUser.frames).includes(id))).toBe(false);
    await Promise.all([anon, strangerUser, strangerPublic, bUser].map((s) => s.close()));
  });

  it("a local-only status reaches signed-in public listeners, never anonymous ones", async () => {
    const a = await registerUser();
    const anon = await openSocket("stream=public:local");
    const signedIn = await openSocket(`stream=public:local&access_token=${a.token}`);
    const local = await post(a, { status: "for this instance", visibility: "local" });
    await signedIn.next(isUpdate(local.id));
    const fence = await post(a, { status: "for all" });
    await anon.next(isUpdate(fence.id));
    await anon.fence();
    expect(updates(anon.frames)).toEqual([fence.id]);
    await Promise.all([anon.close(), signedIn.close()]);
  });

  it("a muted or blocked account's post never reaches the user stream; the mute's notification-only form does not hide it", async () => {
    const [me, muted, blocked, friend] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    for (const t of [muted, blocked, friend]) await follow(me, t);
    await json(`/api/v1/accounts/${muted.id}/mute`, { method: "POST", token: me.token });
    await json(`/api/v1/accounts/${blocked.id}/block`, { method: "POST", token: me.token });
    const user = await openSocket(`stream=user&access_token=${me.token}`);
    const pub = await openSocket(`stream=public&access_token=${me.token}`);
    await post(muted, { status: "muted talk" });
    await post(blocked, { status: "blocked talk" });
    const ok = await post(friend, { status: "friend talk" });
    await user.next(isUpdate(ok.id));
    await pub.next(isUpdate(ok.id));
    await user.fence();
    await pub.fence();
    expect(updates(user.frames)).toEqual([ok.id]);
    expect(updates(pub.frames)).toEqual([ok.id]);
    await Promise.all([user.close(), pub.close()]);
  });

  it("irreversible home filters drop matching statuses from the user stream; others pass", async () => {
    const [me, b] = [await registerUser(), await registerUser()];
    await follow(me, b);
    await json("/api/v1/filters", {
      method: "POST",
      token: me.token,
      body: { phrase: "spoiler", context: ["home"], irreversible: true, whole_word: true },
    });
    const user = await openSocket(`stream=user&access_token=${me.token}`);
    await post(b, { status: "huge spoiler ahead" });
    const ok = await post(b, { status: "nothing to hide" });
    await user.next(isUpdate(ok.id));
    await user.fence();
    expect(updates(user.frames)).toEqual([ok.id]);
    await user.close();
  });

  it("list streams carry posts of the list's members only", async () => {
    const [me, member, other] = [await registerUser(), await registerUser(), await registerUser()];
    await follow(me, member);
    await follow(me, other);
    const list = await json("/api/v1/lists", { method: "POST", token: me.token, body: { title: "close" } });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: me.token,
      body: { account_ids: [member.id] },
    });
    const socket = await openSocket(`stream=list&list=${list.id}&access_token=${me.token}`);
    await post(other, { status: "not on the list" });
    const s = await post(member, { status: "on the list" });
    const frame = await socket.next(isUpdate(s.id));
    expect(frame.stream).toEqual(["list", list.id]);
    await socket.fence();
    expect(updates(socket.frames)).toEqual([s.id]);
    await socket.close();
  });

  it("hashtag, local and media streams carry what their timelines show; reblogs stay off public streams", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const tag = `t${Date.now().toString(36)}`;
    const hashtag = await openSocket(`stream=hashtag&tag=${tag.toUpperCase()}`);
    const localTag = await openSocket(`stream=hashtag:local&tag=${tag}`);
    const media = await openSocket("stream=public:media");
    const local = await openSocket("stream=public:local");
    const tagged = await post(a, { status: `about #${tag}` });
    const m = await upload(a);
    const withMedia = await post(a, { status: "a picture", media_ids: [m.id] });
    await json(`/api/v1/statuses/${tagged.id}/reblog`, { method: "POST", token: b.token });
    const h = await hashtag.next(isUpdate(tagged.id));
    expect(h.stream).toEqual(["hashtag", tag]);
    expect((await localTag.next(isUpdate(tagged.id))).stream).toEqual(["hashtag:local", tag]);
    expect((await media.next(isUpdate(withMedia.id))).stream).toEqual(["public:media"]);
    await local.next(isUpdate(withMedia.id));
    for (const s of [hashtag, localTag, media, local]) await s.fence();
    expect(updates(hashtag.frames)).toEqual([tagged.id]);
    expect(updates(media.frames)).toEqual([withMedia.id]);
    expect(updates(local.frames).sort()).toEqual([tagged.id, withMedia.id].sort());
    await Promise.all([hashtag, localTag, media, local].map((s) => s.close()));
  });

  it("a remote-instance stream hears nothing of local posts", async () => {
    const a = await registerUser();
    const remote = await openSocket("stream=public:remote&instance=example.org");
    const pub = await openSocket("stream=public");
    const s = await post(a, { status: "local news" });
    await pub.next(isUpdate(s.id));
    await remote.fence();
    expect(remote.frames).toEqual([]);
    await Promise.all([remote.close(), pub.close()]);
  });

  it("a revoked token's socket hears nothing more", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    await follow(a, b);
    const extra = await tokenWith(a, "read");
    const revoked = await openSocket(`stream=user&access_token=${extra}`);
    const kept = await openSocket(`stream=user&access_token=${a.token}`);
    await json("/oauth/revoke", {
      body: { client_id: a.app.client_id, client_secret: a.app.client_secret, token: extra },
    });
    const s = await post(b, { status: "after the revocation" });
    await kept.next(isUpdate(s.id));
    await revoked.fence();
    expect(revoked.frames).toEqual([]);
    await Promise.all([revoked.close(), kept.close()]);
  });

  it("a disabled account's sockets hear nothing more", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    await follow(a, b);
    await follow(c, b);
    const disabled = await openSocket(`stream=user&access_token=${a.token}`);
    const other = await openSocket(`stream=user&access_token=${c.token}`);
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(a.id).run();
    const s = await post(b, { status: "after the suspension" });
    await other.next(isUpdate(s.id));
    await disabled.fence();
    expect(disabled.frames).toEqual([]);
    await Promise.all([disabled.close(), other.close()]);
  });
});

describe("streaming: statuses from other instances", () => {
  /** A remote account's public status, as federation will store it, published as posting does. */
  async function remoteStatus(domain: string, text: string, media = false) {
    const t = Date.now();
    const suffix = String(Math.floor(Math.random() * 1e9)).padStart(9, "0");
    const account = `0${t}${suffix}`.padEnd(26, "1");
    const id = `0${t}${suffix}`.padEnd(26, "2");
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?, 'far', ?, ?, ?, ?, ?)",
      ).bind(account, domain, `https://${domain}/users/far${suffix}`, `https://${domain}/@far${suffix}`, t, t),
      env.DB.prepare(
        "INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, has_media, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, '', 'public', 0, ?, ?)",
      ).bind(
        id,
        `https://${domain}/objects/${id}`,
        `https://${domain}/notice/${id}`,
        account,
        id,
        `https://${domain}/contexts/${id}`,
        `<p>${text}</p>`,
        media ? 1 : 0,
        t,
      ),
    ]);
    await dispatch(env as never, [{ accountId: null, event: "update", payload: id }], "http://localhost");
    return id;
  }

  it("public:remote streams carry their instance's statuses; domain blocks hold on every stream", async () => {
    const domain = `far${Date.now().toString(36)}.example`;
    const blocker = await registerUser();
    await json("/api/v1/domain_blocks", { method: "POST", token: blocker.token, body: { domain } });
    const remote = await openSocket(`stream=public:remote&instance=${domain.toUpperCase()}`);
    const elsewhere = await openSocket("stream=public:remote&instance=elsewhere.example");
    const local = await openSocket("stream=public:local");
    const blocked = await openSocket(`stream=public&access_token=${blocker.token}`);
    const pub = await openSocket("stream=public");
    const id = await remoteStatus(domain, "from afar");
    expect((await remote.next(isUpdate(id))).stream).toEqual(["public:remote", domain]);
    await pub.next(isUpdate(id));
    for (const s of [elsewhere, local, blocked]) await s.fence();
    for (const s of [elsewhere, local, blocked]) expect(s.frames).toEqual([]);
    await Promise.all([remote, elsewhere, local, blocked, pub].map((s) => s.close()));
  });

  it("beyond STREAM_FANOUT listening objects, delivery goes through relays and still reaches everyone", async () => {
    const author = await registerUser();
    const fans = await Promise.all(Array.from({ length: 5 }, () => registerUser()));
    for (const f of fans) await follow(f, author);
    const sockets = await Promise.all(fans.map((f) => openSocket(`stream=user&access_token=${f.token}`)));
    const res = await call("/api/v1/statuses", {
      method: "POST",
      token: author.token,
      body: { status: "relayed" },
      vars: { STREAM_FANOUT: "2" },
    });
    expect(res.status).toBe(200);
    const s = await res.json<{ id: string }>();
    for (const socket of sockets) await socket.next(isUpdate(s.id));
    await Promise.all(sockets.map((socket) => socket.close()));
  });

  it("publishing costs the same D1 round trips for one listener as for many", async () => {
    const author = await registerUser();
    const fans = await Promise.all(Array.from({ length: 6 }, () => registerUser()));
    for (const f of fans) await follow(f, author);
    const s = await post(author, { status: "counted", visibility: "private" });
    await settled();
    const trips = async (listeners: TestUser[]) => {
      const sockets = await Promise.all(listeners.map((f) => openSocket(`stream=user&access_token=${f.token}`)));
      const d1 = countingD1();
      await deliverToStreams(
        [{ accountId: null, event: "update", payload: s.id }],
        { ...env, DB: d1.db } as never,
        "http://localhost",
      );
      for (const socket of sockets) await socket.next(isUpdate(s.id));
      await Promise.all(sockets.map((socket) => socket.close()));
      return d1.count();
    };
    const one = await trips(fans.slice(0, 1));
    expect(one).toBe(2);
    expect(await trips(fans)).toBe(one);
  });

  it("an event nobody listens for calls no Durable Object; one listener, one call", async () => {
    const gets: string[] = [];
    const counting = <T extends Rpc.DurableObjectBranded | undefined>(ns: DurableObjectNamespace<T>) =>
      new Proxy(ns, {
        get: (target, key) =>
          key === "get"
            ? (id: DurableObjectId) => (gets.push(id.toString()), target.get(id))
            : (Reflect.get(target, key).bind?.(target) ?? Reflect.get(target, key)),
      });
    const counted = { ...env, USER_STREAMS: counting(env.USER_STREAMS), TOPIC_STREAMS: counting(env.TOPIC_STREAMS) };
    const [a, b] = [await registerUser(), await registerUser()];
    await follow(b, a);
    const s = await post(a, { status: "into the void", visibility: "private" });
    await settled();
    await deliverToStreams([{ accountId: null, event: "update", payload: s.id }], counted as never, "http://localhost");
    expect(gets).toEqual([]);
    const socket = await openSocket(`stream=user&access_token=${b.token}`);
    await deliverToStreams([{ accountId: null, event: "update", payload: s.id }], counted as never, "http://localhost");
    expect(gets).toHaveLength(1);
    await socket.next(isUpdate(s.id));
    await socket.close();
  });
});

describe("streaming: other events", () => {
  it("delete: the id as payload, to those who could have seen the status", async () => {
    const [a, b, stranger] = [await registerUser(), await registerUser(), await registerUser()];
    await follow(b, a);
    const pub = await openSocket("stream=public");
    const bUser = await openSocket(`stream=user&access_token=${b.token}`);
    const strangerUser = await openSocket(`stream=user&access_token=${stranger.token}`);
    const open = await post(a, { status: "public, then gone" });
    const priv = await post(a, { status: "private, then gone", visibility: "private" });
    await bUser.next(isUpdate(priv.id));
    await json(`/api/v1/statuses/${priv.id}`, { method: "DELETE", token: a.token });
    await json(`/api/v1/statuses/${open.id}`, { method: "DELETE", token: a.token });
    expect(await pub.next((f) => f.event === "delete")).toEqual({
      event: "delete",
      payload: open.id,
      stream: ["public"],
    });
    await bUser.next((f) => f.event === "delete" && f.payload === priv.id);
    await strangerUser.next((f) => f.event === "delete" && f.payload === open.id);
    for (const s of [pub, strangerUser]) await s.fence();
    expect(pub.frames.filter((f) => f.event === "delete").map((f) => f.payload)).toEqual([open.id]);
    expect(strangerUser.frames.filter((f) => f.event === "delete").map((f) => f.payload)).toEqual([open.id]);
    await Promise.all([pub, bUser, strangerUser].map((s) => s.close()));
  });

  it("notification: on user and user:notification streams, as a Notification in a JSON string", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const user = await openSocket(`stream=user&access_token=${a.token}`);
    const only = await openSocket(`stream=user:notification&access_token=${a.token}`);
    const s = await post(b, { status: `hey @${a.username}` });
    for (const socket of [user, only]) {
      const frame = await socket.next((f) => f.event === "notification");
      const n = valid(NotificationSchema, JSON.parse(frame.payload!));
      expect(n.type).toBe("mention");
      expect(n.status?.id).toBe(s.id);
      expect(frame.stream).toEqual(socket === user ? ["user"] : ["user:notification"]);
    }
    await only.fence();
    // The notification stream carries notifications only.
    expect(only.frames.map((f) => f.event)).toEqual(["notification"]);
    await Promise.all([user.close(), only.close()]);
  });

  it("moderators hear of a new report at once", async () => {
    const [mod, reporter, troll] = [await registerUser(), await registerUser(), await registerUser()];
    await makeAdmin(mod.id);
    const socket = await openSocket(`stream=user:notification&access_token=${mod.token}`);
    const report = await json("/api/v1/reports", {
      method: "POST",
      token: reporter.token,
      body: { account_id: troll.id, comment: "spam" },
    });
    const n = valid(NotificationSchema, JSON.parse((await socket.next((f) => f.event === "notification")).payload!));
    expect([n.type, n.report?.id, n.account.id]).toEqual(["pleroma:report", report.id, reporter.id]);
    await socket.close();
  });

  it("a favourite from an account the user muted (with notifications) is not streamed", async () => {
    const [a, muted, other] = [await registerUser(), await registerUser(), await registerUser()];
    await json(`/api/v1/accounts/${muted.id}/mute`, { method: "POST", token: a.token, body: { notifications: true } });
    const s = await post(a, { status: "like me" });
    const socket = await openSocket(`stream=user:notification&access_token=${a.token}`);
    await json(`/api/v1/statuses/${s.id}/favourite`, { method: "POST", token: muted.token });
    await json(`/api/v1/statuses/${s.id}/favourite`, { method: "POST", token: other.token });
    const frame = await socket.next((f) => f.event === "notification");
    expect(JSON.parse(frame.payload!).account.id).toBe(other.id);
    await socket.fence();
    expect(socket.frames).toHaveLength(1);
    await socket.close();
  });

  it("filters_changed on the user stream, without payload", async () => {
    const a = await registerUser();
    const socket = await openSocket(`stream=user&access_token=${a.token}`);
    await json("/api/v1/filters", { method: "POST", token: a.token, body: { phrase: "x", context: ["home"] } });
    expect(await socket.next((f) => f.event === "filters_changed")).toEqual({
      event: "filters_changed",
      stream: ["user"],
    });
    await socket.close();
  });

  it("pleroma:follow_relationships_update on the follower's user stream", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const socket = await openSocket(`stream=user&access_token=${a.token}`);
    await follow(a, b);
    const frame = await socket.next((f) => f.event === "pleroma:follow_relationships_update");
    expect(JSON.parse(frame.payload!)).toEqual({
      state: "follow_accept",
      follower: { id: a.id, follower_count: 0, following_count: 1 },
      following: { id: b.id, follower_count: 1, following_count: 0 },
    });
    await socket.close();
  });

  it("conversation on the direct stream of each participant", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    const bDirect = await openSocket(`stream=direct&access_token=${b.token}`);
    const aDirect = await openSocket(`stream=direct&access_token=${a.token}`);
    const cDirect = await openSocket(`stream=direct&access_token=${c.token}`);
    const dm = await post(a, { status: `@${b.username} secret`, visibility: "direct" });
    const frame = await bDirect.next((f) => f.event === "conversation");
    expect(frame.stream).toEqual(["direct"]);
    const conversation = valid(ConversationSchema, JSON.parse(frame.payload!));
    expect(conversation.last_status?.id).toBe(dm.id);
    expect(conversation.unread).toBe(true);
    expect(conversation.accounts.map((x: { id: string }) => x.id)).toEqual([a.id]);
    const own = valid(ConversationSchema, JSON.parse((await aDirect.next((f) => f.event === "conversation")).payload!));
    expect(own.accounts.map((x: { id: string }) => x.id)).toEqual([b.id]);
    await cDirect.fence();
    expect(cDirect.frames).toEqual([]);
    // Public posts never reach a direct stream.
    await post(a, { status: "public" });
    await bDirect.fence();
    expect(bDirect.frames.map((f) => f.event)).toEqual(["conversation"]);
    await Promise.all([aDirect, bDirect, cDirect].map((s) => s.close()));
  });
});

describe("streaming: client messages", () => {
  it("subscribe and unsubscribe on an open socket, answered with pleroma:respond", async () => {
    const a = await registerUser();
    const tag = `s${Date.now().toString(36)}`;
    const socket = await openSocket(`stream=user&access_token=${a.token}`);
    const respond = async () => JSON.parse((await socket.next((f) => f.event === "pleroma:respond")).payload!);
    socket.send({ type: "subscribe", stream: "hashtag", tag });
    expect(await respond()).toEqual({ type: "subscribe", result: "success" });
    socket.send({ type: "subscribe", stream: "hashtag", tag });
    expect(await respond()).toEqual({ type: "subscribe", result: "ignored" });
    socket.send({ type: "subscribe", stream: "nonsense" });
    expect(await respond()).toEqual({ type: "subscribe", result: "error", error: "bad_topic" });
    const b = await registerUser();
    const s = await post(b, { status: `#${tag} news` });
    expect((await socket.next(isUpdate(s.id))).stream).toEqual(["hashtag", tag]);
    socket.send({ type: "unsubscribe", stream: "hashtag", tag });
    expect(await respond()).toEqual({ type: "unsubscribe", result: "success" });
    const later = await post(b, { status: `#${tag} more news` });
    const fence = await post(a, { status: "my own" });
    await socket.next(isUpdate(fence.id));
    await socket.fence();
    expect(updates(socket.frames)).not.toContain(later.id);
    await socket.close();
  });

  it("an anonymous socket may not subscribe to user streams until it authenticates", async () => {
    const a = await registerUser();
    const socket = await openSocket("stream=public");
    const respond = async () => JSON.parse((await socket.next((f) => f.event === "pleroma:respond")).payload!);
    socket.send({ type: "subscribe", stream: "user" });
    expect(await respond()).toEqual({ type: "subscribe", result: "error", error: "unauthorized" });
    socket.send({ type: "pleroma:authenticate", token: "wrong" });
    expect(await respond()).toEqual({ type: "pleroma:authenticate", result: "error", error: "unauthorized" });
    socket.send({ type: "pleroma:authenticate", token: a.token });
    expect(await respond()).toEqual({ type: "pleroma:authenticate", result: "success" });
    socket.send({ type: "subscribe", stream: "user:notification" });
    expect(await respond()).toEqual({ type: "subscribe", result: "success" });
    const b = await registerUser();
    await post(b, { status: `@${a.username} found you` });
    const n = await socket.next((f) => f.event === "notification");
    expect(n.stream).toEqual(["user:notification"]);
    await socket.close();
  });
});

describe("streaming: a socket that changes tokens", () => {
  it("keeps only the subscriptions the new token's scopes allow", async () => {
    const a = await registerUser();
    const b = await registerUser();
    const narrow = await json("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: a.app.client_id,
        client_secret: a.app.client_secret,
        username: a.username,
        password: a.password,
        scope: "read:statuses",
      },
    });
    // Signed in with the full token, subscribed to notifications; then the same account signs in with a token
    // that may read statuses only.
    const socket = await openSocket(`stream=user:notification&access_token=${a.token}`);
    socket.send({ type: "subscribe", stream: "user" });
    expect(await responded(socket)).toEqual({ type: "subscribe", result: "success" });
    socket.send({ type: "pleroma:authenticate", token: narrow.access_token });
    expect(await responded(socket)).toEqual({ type: "pleroma:authenticate", result: "success" });
    expect((await presenceOf(a.id)).map((r: any) => r.stream)).toEqual(["user"]);
    await json(`/api/v1/accounts/${a.id}/follow`, { method: "POST", token: b.token });
    const s = await post(b, { status: `@${a.username} still there?` });
    // Statuses still come on `user`; the mention's notification does not come on `user:notification`.
    const update = await socket.next((f) => f.event === "update" && JSON.parse(f.payload!).id === s.id);
    expect(update.stream).toEqual(["user"]);
    await socket.fence();
    expect(socket.frames.filter((f) => f.stream?.[0] === "user:notification")).toEqual([]);
    await socket.close();
  });
});

/** The next `pleroma:respond` frame, checked whole: payload parsed, `stream` empty. */
async function responded(socket: Socket) {
  const frame = await socket.next((f) => f.event === "pleroma:respond");
  expect(frame.stream).toEqual([]);
  expect(Object.keys(frame).sort()).toEqual(["event", "payload", "stream"]);
  return JSON.parse(frame.payload!);
}

const presenceOf = async (accountId: string) =>
  (
    await env.DB.prepare("SELECT object, stream, arg FROM stream_presence WHERE account_id = ? ORDER BY stream")
      .bind(accountId)
      .all()
  ).results;

describe("streaming: sockets opened without a stream (Pleroma-FE, masto.js)", () => {
  it("Pleroma-FE 2.7: bare socket, pleroma:authenticate, then subscribe by message; events arrive as it parses them", async () => {
    const [me, friend, member] = [await registerUser(), await registerUser(), await registerUser()];
    await follow(me, friend);
    await follow(me, member);
    const list = await json("/api/v1/lists", { method: "POST", token: me.token, body: { title: "fe" } });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: me.token,
      body: { account_ids: [member.id] },
    });
    // `new WebSocket(new URL("/api/v1/streaming", "wss://…"))`: no stream, no token.
    const socket = await openSocket("");
    expect(socket.response.headers.get("sec-websocket-protocol")).toBeNull();
    await socket.fence();
    expect(socket.frames).toEqual([]);
    // On open it sends the token, and subscribes once told success.
    socket.send({ type: "pleroma:authenticate", token: me.token });
    expect(await responded(socket)).toEqual({ type: "pleroma:authenticate", result: "success" });
    for (const [stream, args] of [
      ["user", {}],
      ["user:notification", {}],
      ["direct", {}],
      ["list", { list: list.id }],
    ] as const) {
      socket.send({ type: "subscribe", stream, ...args });
      expect(await responded(socket)).toEqual({ type: "subscribe", result: "success" });
    }
    const s = await post(friend, { status: "for my followers", visibility: "private" });
    expect((await socket.next(isUpdate(s.id))).stream).toEqual(["user"]);
    const onList = await post(member, { status: "list news" });
    await socket.next((f) => isUpdate(onList.id)(f) && f.stream.join() === `list,${list.id}`);
    const dm = await post(friend, { status: `@${me.username} psst`, visibility: "direct" });
    // The conversation and the notification come by deliveries of their own, in either order (one was once
    // missed by waiting for them in a fixed order under load): wait until everything under way has arrived.
    await socket.fence();
    const conversation = socket.frames.find((f) => f.event === "conversation");
    expect(conversation, "a conversation frame").toBeDefined();
    expect(valid(ConversationSchema, JSON.parse(conversation!.payload!)).last_status?.id).toBe(dm.id);
    const n = socket.frames.find((f) => f.event === "notification" && f.stream.join() === "user:notification");
    expect(n, "a notification frame").toBeDefined();
    expect(valid(NotificationSchema, JSON.parse(n!.payload!)).status?.id).toBe(dm.id);
    await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: friend.token });
    // Pleroma-FE special-cases `delete`: its payload is the plain id.
    expect(await socket.next((f) => f.event === "delete")).toEqual({
      event: "delete",
      payload: s.id,
      stream: ["user"],
    });
    await socket.fence();
    expectClientsParse(socket.frames);
    // The socket was anonymous when it opened, so it lives in an object of its own; presence follows it exactly.
    const rows = await presenceOf(me.id);
    expect(rows.map((r) => [r.stream, r.arg])).toEqual([
      ["direct", ""],
      ["list", list.id],
      ["user", ""],
      ["user:notification", ""],
    ]);
    expect(new Set(rows.map((r) => r.object)).size).toBe(1);
    expect(String(rows[0].object)).toMatch(/^topic:socket:/);
    await socket.close();
    await expect.poll(() => presenceOf(me.id)).toEqual([]);
  });

  it("masto.js 8: bare socket with the token as its protocol, subscribe by message", async () => {
    const [me, friend] = [await registerUser(), await registerUser()];
    await follow(me, friend);
    const tag = `mj${Date.now().toString(36)}`;
    // `new WebSocket("wss://…/api/v1/streaming", [accessToken])`
    const socket = await openSocket("", { "Sec-WebSocket-Protocol": me.token });
    expect(socket.response.headers.get("sec-websocket-protocol")).toBe(me.token);
    // Signed in from the start: the user's own object, listening to nothing yet.
    expect(await presenceOf(me.id)).toEqual([]);
    socket.send({ type: "subscribe", stream: "user" });
    expect(await responded(socket)).toEqual({ type: "subscribe", result: "success" });
    socket.send({ type: "subscribe", stream: "hashtag", tag });
    expect(await responded(socket)).toEqual({ type: "subscribe", result: "success" });
    expect(await presenceOf(me.id)).toEqual([
      { object: userObject(me.id), stream: "hashtag", arg: tag },
      { object: userObject(me.id), stream: "user", arg: "" },
    ]);
    const s = await post(friend, { status: `#${tag} for everyone` });
    // masto.js keeps a frame for subscribe("hashtag", { tag }) when its stream includes "hashtag" and the tag.
    await socket.next((f) => isUpdate(s.id)(f) && f.stream.includes("hashtag") && f.stream.includes(tag));
    await socket.next((f) => isUpdate(s.id)(f) && f.stream.join() === "user");
    socket.send({ type: "unsubscribe", stream: "hashtag", tag });
    expect(await responded(socket)).toEqual({ type: "unsubscribe", result: "success" });
    await socket.fence();
    expectClientsParse(socket.frames);
    await socket.close();
    await expect.poll(() => presenceOf(me.id)).toEqual([]);
  });

  it("a token in the query or header and no stream: the user's object, no subscriptions until asked", async () => {
    const [me, friend] = [await registerUser(), await registerUser()];
    await follow(me, friend);
    const byQuery = await openSocket(`access_token=${me.token}`);
    const byHeader = await openSocket("", { Authorization: `Bearer ${me.token}` });
    const before = await post(friend, { status: "nobody subscribed yet" });
    await settled();
    for (const socket of [byQuery, byHeader]) {
      await socket.fence();
      expect(socket.frames).toEqual([]);
    }
    expect(await presenceOf(me.id)).toEqual([]);
    byQuery.send({ type: "subscribe", stream: "user" });
    expect(await responded(byQuery)).toEqual({ type: "subscribe", result: "success" });
    expect(await presenceOf(me.id)).toEqual([{ object: userObject(me.id), stream: "user", arg: "" }]);
    const after = await post(friend, { status: "now it is" });
    await byQuery.next(isUpdate(after.id));
    await byHeader.fence();
    expect(byHeader.frames).toEqual([]);
    expect(updates(byQuery.frames)).toEqual([after.id]);
    expect(updates(byQuery.frames)).not.toContain(before.id);
    await Promise.all([byQuery.close(), byHeader.close()]);
    await expect.poll(() => presenceOf(me.id)).toEqual([]);
  });

  it("an anonymous bare socket may subscribe to public streams only; each lives in an object of its own", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const tag = `an${Date.now().toString(36)}`;
    const [one, two] = [await openSocket(""), await openSocket("")];
    for (const [stream, args] of [
      ["user", {}],
      ["user:notification", {}],
      ["direct", {}],
      ["list", { list: "1" }],
      ["user:pleroma_chat", {}],
    ] as const) {
      one.send({ type: "subscribe", stream, ...args });
      expect(await responded(one)).toEqual({ type: "subscribe", result: "error", error: "unauthorized" });
    }
    const socketRows = async (where: string, arg = "") =>
      (
        await env.DB.prepare(`SELECT object FROM stream_presence WHERE object LIKE 'topic:socket:%' AND ${where}`)
          .bind(arg)
          .all()
      ).results.map((r) => String(r.object));
    const publicBefore = await socketRows("stream = 'public' AND ? = ''");
    one.send({ type: "subscribe", stream: "public" });
    expect(await responded(one)).toEqual({ type: "subscribe", result: "success" });
    const [oneObject] = (await socketRows("stream = 'public' AND ? = ''")).filter((o) => !publicBefore.includes(o));
    two.send({ type: "subscribe", stream: "hashtag", tag });
    expect(await responded(two)).toEqual({ type: "subscribe", result: "success" });
    const [twoObject] = await socketRows("arg = ?", tag);
    expect([oneObject, twoObject].every((o) => o?.startsWith("topic:socket:"))).toBe(true);
    expect(oneObject).not.toBe(twoObject);
    // Nothing private reaches them; public posts do, as the public timeline shows them.
    const priv = await post(a, { status: `@${b.username} #${tag} private`, visibility: "private" });
    const pub = await post(a, { status: `#${tag} public` });
    await one.next(isUpdate(pub.id));
    await two.next(isUpdate(pub.id));
    for (const s of [one, two]) {
      await s.fence();
      expect(updates(s.frames)).toEqual([pub.id]);
      expect(updates(s.frames)).not.toContain(priv.id);
      expectClientsParse(s.frames);
    }
    await Promise.all([one.close(), two.close()]);
    // Closed: no row of theirs is left.
    const left = async () =>
      (
        await env.DB.prepare("SELECT object FROM stream_presence WHERE object IN (?, ?)")
          .bind(oneObject, twoObject)
          .all()
      ).results;
    await expect.poll(left).toEqual([]);
  });

  it("pleroma:authenticate answers as Pleroma does: bad token, another account, then the socket's scopes are the token's", async () => {
    const [me, other] = [await registerUser(), await registerUser()];
    const notificationsOnly = await tokenWith(me, "read:notifications");
    const socket = await openSocket("");
    socket.send({ type: "pleroma:authenticate", token: "not a token" });
    expect(await responded(socket)).toEqual({ type: "pleroma:authenticate", result: "error", error: "unauthorized" });
    socket.send({ type: "pleroma:authenticate" });
    expect(await responded(socket)).toEqual({ type: "pleroma:authenticate", result: "error", error: "unauthorized" });
    socket.send({ type: "pleroma:authenticate", token: notificationsOnly });
    expect(await responded(socket)).toEqual({ type: "pleroma:authenticate", result: "success" });
    socket.send({ type: "subscribe", stream: "user" });
    expect(await responded(socket)).toEqual({ type: "subscribe", result: "error", error: "unauthorized" });
    socket.send({ type: "pleroma:authenticate", token: other.token });
    expect(await responded(socket)).toEqual({
      type: "pleroma:authenticate",
      result: "error",
      error: "already_authenticated",
    });
    socket.send({ type: "subscribe", stream: "user:notification" });
    expect(await responded(socket)).toEqual({ type: "subscribe", result: "success" });
    // Still me, not the other account: the other's notifications never arrive.
    await post(me, { status: `@${other.username} hi` });
    const mention = await post(other, { status: `@${me.username} hello` });
    const n = await socket.next((f) => f.event === "notification");
    expect(valid(NotificationSchema, JSON.parse(n.payload!)).status?.id).toBe(mention.id);
    await socket.fence();
    expect(socket.frames.filter((f) => f.event === "notification")).toHaveLength(1);
    expectClientsParse(socket.frames);
    await socket.close();
  });

  it("a socket signed in by its browser's cookie or URL takes a later pleroma:authenticate of the same account (Pleroma-FE closes on any error)", async () => {
    const [me, friend] = [await registerUser(), await registerUser()];
    await follow(me, friend);
    const other = await tokenWith(me, "read");
    const socket = await openSocket("", { Cookie: `_pleroma_key=${other}` });
    socket.send({ type: "pleroma:authenticate", token: me.token });
    expect(await responded(socket)).toEqual({ type: "pleroma:authenticate", result: "success" });
    socket.send({ type: "subscribe", stream: "user" });
    expect(await responded(socket)).toEqual({ type: "subscribe", result: "success" });
    // Listening under the token it authenticated with: revoking the cookie's token silences nothing.
    await json("/oauth/revoke", {
      body: { client_id: me.app.client_id, client_secret: me.app.client_secret, token: other },
    });
    const s = await post(friend, { status: "still heard" });
    await socket.next(isUpdate(s.id));
    await socket.close();
  });

  it("a stale session cookie leaves the bare socket anonymous (it may still sign in); a bad token the client names is 401", async () => {
    const me = await registerUser();
    const socket = await openSocket("", { Cookie: "_pleroma_key=long-gone" });
    socket.send({ type: "subscribe", stream: "user" });
    expect(await responded(socket)).toEqual({ type: "subscribe", result: "error", error: "unauthorized" });
    socket.send({ type: "pleroma:authenticate", token: me.token });
    expect(await responded(socket)).toEqual({ type: "pleroma:authenticate", result: "success" });
    socket.send({ type: "subscribe", stream: "user" });
    expect(await responded(socket)).toEqual({ type: "subscribe", result: "success" });
    await socket.close();
    const ws = { Upgrade: "websocket", Cookie: `_pleroma_key=${me.token}` };
    expect(await json("/api/v1/streaming?access_token=long-gone", { headers: ws, status: 401 })).toEqual({
      error: "Invalid access token",
    });
    expect(
      await json("/api/v1/streaming", { headers: { ...ws, "Sec-WebSocket-Protocol": "long-gone" }, status: 401 }),
    ).toEqual({ error: "Invalid access token" });
  });
});

describe("streaming: non-ASCII hashtags", () => {
  it("#café and #日本 over WebSocket (by URL and by message) and event stream open and receive their posts", async () => {
    const a = await registerUser();
    const suffix = Date.now().toString(36).replace(/\d/g, "");
    const [cafe, nihon] = [`café${suffix}`, `日本${suffix}`];
    const byUrl = await openSocket(`stream=hashtag&tag=${encodeURIComponent(cafe)}`);
    // Decomposed (NFD) as some keyboards type it: the same tag.
    const decomposed = await openSocket(
      `stream=hashtag&tag=${encodeURIComponent(`#${cafe.normalize("NFD").toUpperCase()}`)}`,
    );
    const byMessage = await openSocket("");
    byMessage.send({ type: "subscribe", stream: "hashtag", tag: nihon });
    expect(await responded(byMessage)).toEqual({ type: "subscribe", result: "success" });
    const sse = await openEventStream(`/api/v1/streaming/hashtag?tag=${encodeURIComponent(nihon)}`);
    const signedIn = await openEventStream(`/api/v1/streaming/hashtag/local?tag=${encodeURIComponent(cafe)}`, a.token);
    const s = await post(a, { status: `#${cafe} #${nihon}` });
    expect((await byUrl.next(isUpdate(s.id))).stream).toEqual(["hashtag", cafe]);
    expect((await decomposed.next(isUpdate(s.id))).stream).toEqual(["hashtag", cafe]);
    expect((await byMessage.next(isUpdate(s.id))).stream).toEqual(["hashtag", nihon]);
    for (const stream of [sse, signedIn]) {
      const text = await stream.read((t) => t.includes("event: update"));
      expect(valid(StatusSchema, JSON.parse(/event: update\ndata: (.+)\n\n/.exec(text)![1])).id).toBe(s.id);
    }
    expectClientsParse([...byUrl.frames, ...decomposed.frames, ...byMessage.frames]);
    // Local workerd lets a non-ASCII header through with a warning, where the Fetch standard throws: the
    // connection header the objects receive is plain ASCII.
    const info = {
      object: `topic:hashtag:${nihon}`,
      listener: { accountId: "", tokenId: "", scopes: [] },
      subscriptions: [{ stream: "hashtag" as const, arg: nihon }],
    };
    expect(encodeConnection(info)).toMatch(/^[\x21-\x7e]+$/);
    expect(JSON.parse(decodeURIComponent(encodeConnection(info)))).toEqual(info);
    await Promise.all([byUrl.close(), decomposed.close(), byMessage.close(), sse.close(), signedIn.close()]);
    const rows = async () =>
      (await env.DB.prepare("SELECT arg FROM stream_presence WHERE arg IN (?, ?)").bind(cafe, nihon).all()).results;
    await expect.poll(rows).toEqual([]);
  });
});

describe("streaming: server-sent events", () => {
  it("health answers OK", async () => {
    const res = await call("/api/v1/streaming/health");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("OK");
  });

  it("public: event and data lines; the heartbeat comment every 15 seconds", async () => {
    const a = await registerUser();
    const stream = await openEventStream("/api/v1/streaming/public/local");
    // Browser clients on other origins read it too.
    expect(stream.response.headers.get("access-control-allow-origin")).toBe("*");
    expect(stream.response.headers.get("cache-control")).toBe("no-store");
    const s = await post(a, { status: "over SSE" });
    const text = await stream.read((t) => t.includes("event: update"));
    const m = /event: update\ndata: (.+)\n\n/.exec(text);
    expect(m, text).not.toBeNull();
    expect(valid(StatusSchema, JSON.parse(m![1])).id).toBe(s.id);
    const topic = env.TOPIC_STREAMS.get(env.TOPIC_STREAMS.idFromName("public:local"));
    expect(await runDurableObjectAlarm(topic)).toBe(true);
    await stream.read((t) => t.includes(":thump\n"));
    await stream.close();
  });

  it("delete: the id JSON-encoded, as every SSE payload (the contract's events)", async () => {
    const a = await registerUser();
    const stream = await openEventStream("/api/v1/streaming/public/local");
    const s = await post(a, { status: "soon gone" });
    await stream.read((t) => t.includes("event: update"));
    await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: a.token });
    const text = await stream.read((t) => t.includes("event: delete"));
    const data = /event: delete\ndata: (.+)\n\n/.exec(text)![1]!;
    expect(data).toBe(`"${s.id}"`);
    expect(JSON.parse(data)).toBe(s.id);
    await stream.close();
  });

  it("a client that went away is forgotten by the next heartbeat at the latest", async () => {
    const tag = `gone${Date.now().toString(36)}`;
    const stream = await openEventStream(`/api/v1/streaming/hashtag?tag=${tag}`);
    const rows = async () =>
      (await env.DB.prepare("SELECT object FROM stream_presence WHERE arg = ?").bind(tag).all()).results;
    expect(await rows()).toEqual([{ object: `topic:hashtag:${tag}` }]);
    await stream.close();
    const topic = env.TOPIC_STREAMS.get(env.TOPIC_STREAMS.idFromName(`hashtag:${tag}`));
    await runDurableObjectAlarm(topic);
    await expect.poll(rows).toEqual([]);
  });

  it("user: notifications, filters_changed with an undefined payload; errors as JSON", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const stream = await openEventStream("/api/v1/streaming/user", a.token);
    await json(`/api/v1/accounts/${a.id}/follow`, { method: "POST", token: b.token });
    const text = await stream.read((t) => t.includes("event: notification"));
    const n = valid(NotificationSchema, JSON.parse(/event: notification\ndata: (.+)\n\n/.exec(text)![1]));
    expect(n.type).toBe("follow");
    valid(AccountSchema, n.account);
    await json("/api/v1/filters", { method: "POST", token: a.token, body: { phrase: "y", context: ["home"] } });
    await stream.read((t) => t.includes("event: filters_changed\ndata: undefined\n\n"));
    await stream.close();
    expect(await json("/api/v1/streaming/user", { status: 401 })).toEqual({ error: "Missing access token" });
    expect(await json("/api/v1/streaming/hashtag", { status: 400 })).toEqual({ error: "No tag for stream provided" });
  });

  it("hashtag and list streams by query parameter", async () => {
    const [me, member] = [await registerUser(), await registerUser()];
    await follow(me, member);
    const list = await json("/api/v1/lists", { method: "POST", token: me.token, body: { title: "l" } });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: me.token,
      body: { account_ids: [member.id] },
    });
    const tag = `e${Date.now().toString(36)}`;
    const tagStream = await openEventStream(`/api/v1/streaming/hashtag?tag=${tag}`);
    const listStream = await openEventStream(`/api/v1/streaming/list?list=${list.id}`, me.token);
    const s = await post(member, { status: `#${tag}` });
    for (const stream of [tagStream, listStream]) {
      const text = await stream.read((t) => t.includes("event: update"));
      expect(JSON.parse(/event: update\ndata: (.+)\n\n/.exec(text)![1]).id).toBe(s.id);
    }
    await Promise.all([tagStream.close(), listStream.close()]);
    await settled();
  });
});

describe("streaming: a socket closed while its message is answered", () => {
  it("unsubscribing and closing at once is answered by nobody, without an error (Pleroma-FE closes right after)", async () => {
    const me = await registerUser();
    // The object's own handler, called as the runtime calls it for a message that arrives as the client closes:
    // the socket is closed by the time the answer is ready. It must resolve, not throw "send() after close()".
    // (Typed loosely: the stub's RPC types are too deep for the checker here.)
    const inObject = runInDurableObject as unknown as (
      stub: unknown,
      run: (instance: any, state: DurableObjectState) => Promise<void>,
    ) => Promise<void>;
    await inObject(streamObject(env, userObject(me.id)), async (instance, state) => {
      const pair = new WebSocketPair();
      const server = pair[1];
      state.acceptWebSocket(server);
      server.serializeAttachment({
        object: userObject(me.id),
        accountId: null,
        tokenId: null,
        scopes: [],
        subscriptions: [],
      });
      server.close(1000, "bye");
      for (const message of [
        { type: "subscribe", stream: "public" },
        { type: "unsubscribe", stream: "public" },
        { type: "subscribe", stream: "nonsense" },
        { type: "pleroma:authenticate", token: me.token },
      ]) {
        await expect(
          instance.webSocketMessage(server, JSON.stringify(message)),
          JSON.stringify(message),
        ).resolves.toBeUndefined();
      }
    });
  });
});
