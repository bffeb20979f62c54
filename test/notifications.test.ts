import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { newId } from "../src/db/ids";
import { NotificationSchema } from "../src/schemas/social";
import { call, json, makeAdmin, post, registerUser, upload, valid, type TestUser } from "./helpers";

const notes = async (u: TestUser, query = "") =>
  (await json(`/api/v1/notifications${query}`, { token: u.token })).map((n: unknown) => valid(NotificationSchema, n));
const kinds = async (u: TestUser, query = "") => (await notes(u, query)).map((n: any) => [n.type, n.account.id]);
const act = (u: TestUser, path: string, body?: Record<string, unknown>, method = "POST") =>
  json(path, { method, token: u.token, body });

describe("notifications by their causes", () => {
  it("mention, follow, follow request, reblog, favourite, reaction; none for your own actions", async () => {
    const [me, a, b] = [await registerUser(), await registerUser(), await registerUser()];
    const s = await post(me, { status: "notice me" });
    await post(a, { status: `hi @${me.username}` });
    await act(a, `/api/v1/accounts/${me.id}/follow`);
    await act(a, `/api/v1/statuses/${s.id}/reblog`);
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    await act(a, `/api/v1/pleroma/statuses/${s.id}/reactions/🔥`, undefined, "PUT");
    await act(me, `/api/v1/statuses/${s.id}/favourite`);
    await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: me.token, body: { locked: true } });
    await act(b, `/api/v1/accounts/${me.id}/follow`);
    const list = await notes(me);
    expect(list.map((n: any) => [n.type, n.account.id])).toEqual([
      ["follow_request", b.id],
      ["pleroma:emoji_reaction", a.id],
      ["favourite", a.id],
      ["reblog", a.id],
      ["follow", a.id],
      ["mention", a.id],
    ]);
    expect(list[1].emoji).toBe("🔥");
    expect(list[2].status.id).toBe(s.id);
    expect(list.every((n: any) => n.pleroma.is_seen === false)).toBe(true);
    // Accepting the request turns it into a follow.
    await act(me, `/api/v1/follow_requests/${b.id}/authorize`);
    expect((await kinds(me))[0]).toEqual(["follow", b.id]);
  });

  it("poll endings reach the author and the voters, once", async () => {
    const [author, voter] = [await registerUser(), await registerUser()];
    const s = await post(author, { status: "vote", poll: { options: ["a", "b"], expires_in: 600 } });
    await json(`/api/v1/polls/${s.poll.id}/votes`, { method: "POST", token: voter.token, body: { choices: [0] } });
    const end = Date.parse(s.poll.expires_at) + 1000;
    for (const t of [end, end + 1000]) {
      const ctx = createExecutionContext();
      await worker.scheduled(
        createScheduledController({ scheduledTime: new Date(t), cron: "* * * * *" }),
        { ...env } as typeof env,
        ctx,
      );
      await waitOnExecutionContext(ctx);
    }
    expect(await kinds(voter)).toEqual([["poll", author.id]]);
    expect(await kinds(author)).toEqual([["poll", author.id]]);
  });

  it("reports reach moderators, shown only when asked for", async () => {
    const [mod, reporter, target] = [await registerUser(), await registerUser(), await registerUser()];
    await makeAdmin(mod.id);
    await json("/api/v1/reports", {
      method: "POST",
      token: reporter.token,
      body: { account_id: target.id, comment: "bad" },
    });
    expect(await notes(mod)).toEqual([]);
    const shown = await notes(mod, "?include_types[]=pleroma:report");
    expect(shown.map((n: any) => [n.type, n.account.id, n.report.comment])).toEqual([
      ["pleroma:report", reporter.id, "bad"],
    ]);
  });
});

describe("what suppresses notifications", () => {
  it("blocks, notification mutes, muted threads and block_from_strangers", async () => {
    const [me, blocked, muted, quiet, stranger, friend] = await Promise.all(
      Array.from({ length: 6 }, () => registerUser()),
    );
    await act(me, `/api/v1/accounts/${blocked.id}/block`);
    await act(me, `/api/v1/accounts/${muted.id}/mute`, { notifications: true });
    await act(me, `/api/v1/accounts/${quiet.id}/mute`, { notifications: false });
    const s = await post(me, { status: "a thread" });
    for (const u of [muted, quiet]) await act(u, `/api/v1/statuses/${s.id}/favourite`);
    await post(blocked, { status: `hey @${me.username}` }, 200);
    const kindsNow = await kinds(me, "?with_muted=true");
    expect(kindsNow).toEqual([["favourite", quiet.id]]);
    expect(await notes(me)).toEqual([]); // quiet is muted (not its notifications): shown only with_muted
    expect((await notes(me, "?with_muted=true"))[0].pleroma.is_muted).toBe(true);

    await act(me, `/api/v1/statuses/${s.id}/mute`);
    await post(friend, { status: `@${me.username} in the muted thread`, in_reply_to_id: s.id });
    expect((await kinds(me, "?with_muted=true")).map((k: any) => k[1])).not.toContain(friend.id);

    expect(
      await json("/api/v1/pleroma/notification_settings", {
        method: "PUT",
        token: me.token,
        body: { block_from_strangers: true },
      }),
    ).toEqual({ status: "success" });
    expect(
      (await json("/api/v1/accounts/verify_credentials", { token: me.token })).pleroma.notification_settings,
    ).toEqual({ block_from_strangers: true, hide_notification_contents: false });
    await act(me, `/api/v1/accounts/${friend.id}/follow`);
    await post(stranger, { status: `@${me.username} hello stranger` });
    await post(friend, { status: `@${me.username} hello friend` });
    const after = (await kinds(me)).map((k: any) => k[1]);
    expect(after).toContain(friend.id);
    expect(after).not.toContain(stranger.id);
  });

  it("undoing the action removes its notification", async () => {
    const [me, a] = [await registerUser(), await registerUser()];
    const s = await post(me, { status: "undo me" });
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    await act(a, `/api/v1/statuses/${s.id}/reblog`);
    await act(a, `/api/v1/pleroma/statuses/${s.id}/reactions/👍`, undefined, "PUT");
    await act(a, `/api/v1/accounts/${me.id}/follow`);
    const mention = await post(a, { status: `@${me.username} soon deleted` });
    expect((await kinds(me)).length).toBe(5);
    await act(a, `/api/v1/statuses/${s.id}/unfavourite`);
    await act(a, `/api/v1/statuses/${s.id}/unreblog`);
    await act(a, `/api/v1/pleroma/statuses/${s.id}/reactions/👍`, undefined, "DELETE");
    await act(a, `/api/v1/accounts/${me.id}/unfollow`);
    await json(`/api/v1/statuses/${mention.id}`, { method: "DELETE", token: a.token });
    expect(await kinds(me)).toEqual([]);
  });
});

describe("reading notifications", () => {
  it("filters by type, account and visibility, and pages with Link headers", async () => {
    const [me, a, b] = [await registerUser(), await registerUser(), await registerUser()];
    const s = await post(me, { status: "x" });
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    await post(b, { status: `@${me.username} private`, visibility: "private" });
    await post(b, { status: `@${me.username} direct`, visibility: "direct" });
    expect(await kinds(me, "?exclude_types[]=mention")).toEqual([["favourite", a.id]]);
    expect(await kinds(me, "?include_types[]=favourite")).toEqual([["favourite", a.id]]);
    expect((await kinds(me, `?account_id=${b.id}`)).length).toBe(2);
    expect((await notes(me, "?exclude_visibilities[]=direct")).map((n: any) => n.status.visibility)).toEqual([
      "private",
      "public",
    ]);
    const res = await call("/api/v1/notifications?limit=1", { token: me.token });
    const first = (await res.json()) as any[];
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get("link")!)![1];
    const second = await json(next.replace("http://localhost", ""), { token: me.token });
    expect(second[0].id < first[0].id).toBe(true);
    // Types this server does not know are ignored (clients send newer servers' types), known ones still apply.
    expect(await kinds(me, "?exclude_types[]=nonsense&exclude_types[]=mention")).toEqual([["favourite", a.id]]);
  });

  it("read state, unread counts, markers, dismiss, clear and destroy_multiple", async () => {
    const [me, a, other] = [await registerUser(), await registerUser(), await registerUser()];
    for (let i = 0; i < 4; i++) await post(a, { status: `@${me.username} ${i}` });
    const list = await notes(me);
    expect(
      (await json("/api/v1/accounts/verify_credentials", { token: me.token })).pleroma.unread_notifications_count,
    ).toBe(4);
    const one = await json("/api/v1/pleroma/notifications/read", {
      method: "POST",
      token: me.token,
      body: { id: list[3].id },
    });
    expect(one.pleroma.is_seen).toBe(true);
    const upTo = await json("/api/pleroma/notifications/read", {
      method: "POST",
      token: me.token,
      body: { max_id: list[1].id },
    });
    expect(upTo.map((n: any) => n.id)).toEqual([list[1].id, list[2].id]);
    await json("/api/v1/pleroma/notifications/read", { method: "POST", token: me.token, body: {}, status: 400 });
    expect(
      (await json("/api/v1/accounts/verify_credentials", { token: me.token })).pleroma.unread_notifications_count,
    ).toBe(1);

    const marked = await json("/api/v1/markers", {
      method: "POST",
      token: me.token,
      body: { notifications: { last_read_id: list[0].id }, home: { last_read_id: list[0].id } },
    });
    expect(marked.notifications).toMatchObject({ last_read_id: list[0].id, version: 1, pleroma: { unread_count: 1 } });
    const again = await json("/api/v1/markers", {
      method: "POST",
      token: me.token,
      body: { home: { last_read_id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" } },
    });
    expect(again.home.version).toBe(2);
    const read = await json("/api/v1/markers?timeline[]=home", { token: me.token });
    expect(Object.keys(read)).toEqual(["home"]);

    expect((await json(`/api/v1/notifications/${list[0].id}`, { token: me.token })).id).toBe(list[0].id);
    await json(`/api/v1/notifications/${list[0].id}`, { token: other.token, status: 404 });
    await json(`/api/v1/notifications/${list[0].id}/dismiss`, { method: "POST", token: other.token, status: 404 });
    expect(await json(`/api/v1/notifications/${list[0].id}/dismiss`, { method: "POST", token: me.token })).toEqual({});
    expect(
      await json("/api/v1/notifications/destroy_multiple", {
        method: "DELETE",
        token: me.token,
        body: { ids: [list[1].id, list[2].id] },
      }),
    ).toEqual({});
    expect((await notes(me)).map((n: any) => n.id)).toEqual([list[3].id]);
    expect(await json("/api/v1/notifications/clear", { method: "POST", token: me.token })).toEqual({});
    expect(await notes(me)).toEqual([]);
  });
});

describe("a page of notifications in one statement", () => {
  it("renders every kind as the single notification does, newest first, in one D1 round trip", async () => {
    const [me, a, b] = [await registerUser(), await registerUser(), await registerUser()];
    await makeAdmin(me.id);
    const s = await post(me, { status: "x" });
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    await act(a, `/api/v1/accounts/${me.id}/follow`);
    await post(b, { status: `@${me.username} hi`, visibility: "direct" });
    await act(b, "/api/v1/reports", { account_id: a.id, comment: "spam" });
    const chat = await act(a, `/api/v1/pleroma/chats/by-account-id/${me.id}`);
    await act(a, `/api/v1/pleroma/chats/${chat.id}/messages`, {
      content: "hello <there>",
      media_id: (await upload(a)).id,
    });
    const all =
      "?include_types[]=pleroma:chat_mention&include_types[]=pleroma:report&include_types[]=mention&include_types[]=favourite&include_types[]=follow";
    const page = await notes(me, all);
    expect(page.map((n: any) => n.type)).toEqual([
      "pleroma:chat_mention",
      "pleroma:report",
      "mention",
      "follow",
      "favourite",
    ]);
    expect(page[0].chat_message.attachment).not.toBeNull();
    expect(page[1].report.comment).toBe("spam");
    expect(page[2].status.visibility).toBe("direct");
    for (const n of page) expect(await json(`/api/v1/notifications/${n.id}`, { token: me.token })).toEqual(n);
    // min_id pages answer newest first too.
    expect((await notes(me, `${all}&min_id=${page[4].id}&limit=2`)).map((n: any) => n.id)).toEqual([
      page[2].id,
      page[3].id,
    ]);
    // Nobody else's, whatever they ask for; the token in the query works as in a header; scopes hold.
    expect(await notes(b, all)).toEqual([]);
    expect((await json(`/api/v1/notifications${all}&access_token=${me.token}`)).map((n: any) => n.id)).toEqual(
      page.map((n: any) => n.id),
    );
    await json("/api/v1/notifications", { token: "not-a-token", status: 403 });
    await json("/api/v1/notifications", { status: 403 });
    const { countingD1 } = await import("./d1-counter");
    const counter = countingD1(env.DB);
    const res = await call(`/api/v1/notifications${all}`, { token: me.token, vars: { DB: counter.db } as never });
    expect(res.status).toBe(200);
    expect(counter.count()).toBe(1);
  });
});

describe("after the author blocks you", () => {
  it("the status of an earlier mention can no longer be read through the notification or the conversation", async () => {
    const [author, me] = [await registerUser(), await registerUser()];
    const dm = await post(author, { status: `@${me.username} before the block`, visibility: "direct" });
    const [n] = await notes(me);
    expect(n.status.id).toBe(dm.id);
    await act(author, `/api/v1/accounts/${me.id}/block`);
    await json(`/api/v1/notifications/${n.id}`, { token: me.token, status: 404 });
    await json("/api/v1/pleroma/notifications/read", {
      method: "POST",
      token: me.token,
      body: { id: n.id },
      status: 404,
    });
    expect(await notes(me)).toEqual([]);
    const conversations = await json("/api/v1/conversations", { token: me.token });
    expect(conversations.every((c: any) => c.last_status === null)).toBe(true);
    expect(JSON.stringify(conversations)).not.toContain("before the block");
  });
});

describe("what real clients send and need (issue 11)", () => {
  // Pleroma-FE 2.7's notifications panel: its visible types, including ones this server does not have.
  const PLEROMA_FE =
    "/api/v1/notifications?with_muted=true&limit=20" +
    [
      "mention",
      "status",
      "favourite",
      "reblog",
      "follow",
      "follow_request",
      "move",
      "pleroma:emoji_reaction",
      "pleroma:report",
      "poll",
      "update",
      "admin.sign_up",
    ]
      .map((t) => `&include_types[]=${encodeURIComponent(t)}`)
      .join("");

  it("Pleroma-FE's include_types[] with unknown types answers 200 with the known types", async () => {
    const [me, a] = [await registerUser(), await registerUser()];
    const s = await post(me, { status: "hello" });
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    await post(a, { status: `@${me.username} hi`, visibility: "direct" });
    expect(await kinds(me, PLEROMA_FE.slice("/api/v1/notifications".length))).toEqual([
      ["mention", a.id],
      ["favourite", a.id],
    ]);
    // Mastodon 3.5's `types[]` and unknown values in every list filter: dropped, the rest applies.
    expect(await kinds(me, "?types[]=favourite&types[]=admin.report")).toEqual([["favourite", a.id]]);
    // Only types this server does not know: "only these" still holds, so none (as Mastodon answers).
    expect(await kinds(me, "?types[]=admin.sign_up&include_types[]=severed_relationships")).toEqual([]);
    expect(await kinds(me, "?exclude_types[]=severed_relationships&exclude_types[]=favourite")).toEqual([
      ["mention", a.id],
    ]);
    expect(await kinds(me, "?exclude_visibilities[]=public&exclude_visibilities[]=everyone")).toEqual([
      ["mention", a.id],
    ]);
    const markers = await json("/api/v1/markers?timeline[]=notifications&timeline[]=compose", { token: me.token });
    expect(Object.keys(markers)).toEqual(["notifications"]);
  });

  it("the notifications marker exists as soon as the user has a notification", async () => {
    const [me, a] = [await registerUser(), await registerUser()];
    expect(await json("/api/v1/markers?timeline[]=notifications", { token: me.token })).toEqual({});
    await act(a, `/api/v1/accounts/${me.id}/follow`);
    const m = await json("/api/v1/markers?timeline[]=notifications", { token: me.token });
    expect(m.notifications).toMatchObject({ last_read_id: "", version: 0, pleroma: { unread_count: 1 } });
    expect(Date.parse(m.notifications.updated_at)).toBeGreaterThan(Date.now() - 60_000);
    // A marker the user set is theirs: later notifications do not move it.
    const [n] = await notes(me);
    await json("/api/v1/markers", { method: "POST", token: me.token, body: { notifications: { last_read_id: n.id } } });
    await post(a, { status: `@${me.username} again` });
    const after = await json("/api/v1/markers", { token: me.token });
    expect(after.notifications).toMatchObject({ last_read_id: n.id, version: 1, pleroma: { unread_count: 2 } });
    expect(after.home).toBeUndefined();
  });
});

describe("subscriptions notify of new posts (type status)", () => {
  it("subscribe or follow with notify=true: a status notification for each new visible post, not replies or reblogs", async () => {
    const [author, sub, fan, other] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    // Pleroma-FE subscribes through the Pleroma endpoint; Mastodon clients follow with notify=true (form-encoded).
    const rel = await json(`/api/v1/pleroma/accounts/${author.id}/subscribe`, { method: "POST", token: sub.token });
    expect(rel.subscribing).toBe(true);
    const rel2 = await json(`/api/v1/accounts/${author.id}/follow`, {
      method: "POST",
      token: fan.token,
      body: { notify: "true", reblogs: "true" },
      form: true,
    });
    expect(rel2).toMatchObject({ following: true, notifying: true });

    const pub = await post(author, { status: "first post" });
    for (const u of [sub, fan]) {
      const [n] = await notes(u, "?include_types[]=status");
      expect([n.type, n.account.id, n.status.id]).toEqual(["status", author.id, pub.id]);
    }
    const others = await post(other, { status: "other thread" });
    await post(author, { status: "a reply", in_reply_to_id: others.id });
    await post(author, { status: "a reply to myself", in_reply_to_id: pub.id });
    await act(author, `/api/v1/statuses/${others.id}/reblog`);
    const priv = await post(author, { status: "followers only", visibility: "private" });
    const dm = await post(author, { status: `@${sub.username} just you`, visibility: "direct" });
    const mention = await post(author, { status: `@${fan.username} public mention` });
    // The follower sees the private post, the mere subscriber does not; the mentioned get the mention only.
    expect((await notes(sub)).map((n: any) => [n.type, n.status.id])).toEqual([
      ["status", mention.id],
      ["mention", dm.id],
      ["status", pub.id],
    ]);
    expect((await notes(fan)).map((n: any) => [n.type, n.status.id])).toEqual([
      ["mention", mention.id],
      ["status", priv.id],
      ["status", pub.id],
    ]);
    expect(await kinds(other)).toEqual([["reblog", author.id]]);
    expect(await kinds(sub, "?exclude_types[]=status")).toEqual([["mention", author.id]]);

    // Unsubscribing (or following with notify=false) ends it; blocks suppress it.
    await json(`/api/v1/pleroma/accounts/${author.id}/unsubscribe`, { method: "POST", token: sub.token });
    await json(`/api/v1/accounts/${author.id}/follow`, { method: "POST", token: fan.token, body: { notify: false } });
    await post(author, { status: "nobody hears" });
    expect((await notes(sub)).length).toBe(3);
    expect((await notes(fan)).length).toBe(3);
  });

  it("a follow request with notify=true subscribes only once accepted, and unfollowing ends it", async () => {
    const [author, rejected, accepted] = [await registerUser(), await registerUser(), await registerUser()];
    await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: author.token, body: { locked: true } });
    for (const u of [rejected, accepted]) {
      const rel = await json(`/api/v1/accounts/${author.id}/follow`, {
        method: "POST",
        token: u.token,
        body: { notify: true },
      });
      expect(rel).toMatchObject({ following: false, requested: true });
    }
    // Pending: nobody hears yet.
    await post(author, { status: "while pending" });
    for (const u of [rejected, accepted]) expect(await notes(u, "?types[]=status")).toEqual([]);
    await json(`/api/v1/follow_requests/${rejected.id}/reject`, { method: "POST", token: author.token });
    await json(`/api/v1/follow_requests/${accepted.id}/authorize`, { method: "POST", token: author.token });
    const after = await post(author, { status: "after the answer" });
    expect(await notes(rejected, "?types[]=status")).toEqual([]);
    expect((await notes(accepted, "?types[]=status")).map((n: any) => n.status.id)).toEqual([after.id]);
    expect(await json(`/api/v1/accounts/relationships?id[]=${author.id}`, { token: accepted.token })).toMatchObject([
      { following: true, notifying: true },
    ]);
    // Unfollowing ends the subscription that came with the follow.
    const rel = await json(`/api/v1/accounts/${author.id}/unfollow`, { method: "POST", token: accepted.token });
    expect(rel).toMatchObject({ following: false, notifying: false, subscribing: false });
    await post(author, { status: "after the unfollow" });
    expect((await notes(accepted, "?types[]=status")).length).toBe(1);
  });

  it("is streamed on user:notification at once", async () => {
    const { openSocket } = await import("./streams");
    const [author, sub] = [await registerUser(), await registerUser()];
    await json(`/api/v1/pleroma/accounts/${author.id}/subscribe`, { method: "POST", token: sub.token });
    const socket = await openSocket(`stream=user:notification&access_token=${sub.token}`);
    const s = await post(author, { status: "live" });
    const n = valid(NotificationSchema, JSON.parse((await socket.next((f) => f.event === "notification")).payload!));
    expect([n.type, n.account.id, n.status?.id]).toEqual(["status", author.id, s.id]);
    await socket.close();
  });

  it("what an action causes is delivered at once even behind a backlog of undelivered notifications", async () => {
    const { openSocket } = await import("./streams");
    const [author, crowd, reader] = [await registerUser(), await registerUser(), await registerUser()];
    // A backlog larger than one delivery run (as a post to thousands of subscribers leaves), older than the mention.
    const backlog = Array.from({ length: 60 }, (_, i) =>
      `01A${String(i).padStart(2, "0")}${crowd.id.slice(5)}`.slice(0, 26),
    );
    await env.DB.batch(
      backlog.map((id) =>
        env.DB.prepare(
          "INSERT INTO notifications (id, account_id, from_account_id, type, is_seen, pushed, created_at) VALUES (?, ?, ?, 'follow', 0, 0, ?)",
        ).bind(id, crowd.id, author.id, Date.now()),
      ),
    );
    try {
      const socket = await openSocket(`stream=user:notification&access_token=${reader.token}`);
      const s = await post(author, { status: `@${reader.username} are you there?` });
      const n = valid(NotificationSchema, JSON.parse((await socket.next((f) => f.event === "notification")).payload!));
      expect([n.type, n.status?.id]).toEqual(["mention", s.id]);
      await socket.close();
    } finally {
      await env.DB.prepare(`UPDATE notifications SET pushed = 1 WHERE account_id = ?`).bind(crowd.id).run();
    }
  });

  it("no status notification from an account the subscriber blocks or mutes with notifications, or that blocks them", async () => {
    const [author, muter, blocked] = [await registerUser(), await registerUser(), await registerUser()];
    for (const u of [muter, blocked])
      await json(`/api/v1/pleroma/accounts/${author.id}/subscribe`, { method: "POST", token: u.token });
    await act(muter, `/api/v1/accounts/${author.id}/mute`, { notifications: true });
    await act(author, `/api/v1/accounts/${blocked.id}/block`);
    await post(author, { status: "anyone?" });
    expect(await notes(muter, "?with_muted=true")).toEqual([]);
    expect(await notes(blocked)).toEqual([]);
  });

  it("posting costs the same D1 round trips for one subscriber as for many", async () => {
    const { countingD1 } = await import("./d1-counter");
    const author = await registerUser();
    const counts: number[] = [];
    const subs: TestUser[] = [];
    for (const n of [1, 5]) {
      while (subs.length < n) {
        const u = await registerUser();
        await json(`/api/v1/pleroma/accounts/${author.id}/subscribe`, { method: "POST", token: u.token });
        subs.push(u);
      }
      const counter = countingD1(env.DB);
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request("http://localhost/api/v1/statuses", {
          method: "POST",
          headers: { Authorization: `Bearer ${author.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ status: `post ${n}` }),
        }),
        { ...env, DB: counter.db } as typeof env,
        ctx,
      );
      expect(res.status).toBe(200);
      counts.push(counter.count());
      await waitOnExecutionContext(ctx);
    }
    expect(counts[1]).toBe(counts[0]);
    for (const u of subs) expect((await kinds(u, "?types[]=status")).length).toBeGreaterThanOrEqual(1);
  });
});

describe("ids Pleroma-FE reads with parseInt (issue 29)", () => {
  // Pleroma-FE 2.8: `output.id = parseInt(data.id)` for notifications, and `parseInt` on the Link header's
  // cursors of notifications and bookmarks; it then sends those numbers back as since_id, max_id and id.
  const asPleromaFe = (id: string) => String(parseInt(id, 10));
  const linkCursor = (res: Response, rel: string, name: string) => {
    const url = new RegExp(`<([^>]+)>; rel="${rel}"`).exec(res.headers.get("link") ?? "")?.[1];
    return url ? new URL(url).searchParams.get(name)! : null;
  };

  it("notification ids are fixed-width decimal, safe integers, increasing, unique in one set-based insert", async () => {
    const [author, a, b, c] = [await registerUser(), await registerUser(), await registerUser(), await registerUser()];
    // One statement notifies three recipients at once; each gets its own id.
    await post(author, { status: `hi @${a.username} @${b.username} @${c.username}` });
    const ids = [];
    for (const u of [a, b, c]) ids.push(...(await notes(u)).map((n: any) => n.id));
    expect(new Set(ids).size).toBe(3);
    await act(author, `/api/v1/accounts/${a.id}/follow`);
    const [follow, mention] = await notes(a);
    for (const id of [follow.id, mention.id]) {
      expect(id).toMatch(/^\d{16}$/);
      expect(Number.isSafeInteger(parseInt(id, 10))).toBe(true);
      expect(asPleromaFe(id)).toBe(id);
    }
    expect(parseInt(follow.id, 10)).toBeGreaterThan(parseInt(mention.id, 10));
  });

  it("Pleroma-FE lists every notification, polls since the newest, marks one and all read with its numbers", async () => {
    const [me, ...others] = [await registerUser(), await registerUser(), await registerUser(), await registerUser()];
    const s = await post(me, { status: "notice me" });
    for (const o of others) await act(o, `/api/v1/statuses/${s.id}/favourite`);
    const first = await notes(me);
    expect(new Set(first.map((n: any) => asPleromaFe(n.id))).size).toBe(3);
    const newest = asPleromaFe(first[0].id);
    // Polling since the newest finds nothing; a new one appears alone.
    expect(await notes(me, `?since_id=${newest}`)).toEqual([]);
    await act(others[0], `/api/v1/accounts/${me.id}/follow`);
    expect((await notes(me, `?since_id=${newest}`)).map((n: any) => n.type)).toEqual(["follow"]);
    // Older pages through the Link header, read as numbers.
    const res = await call("/api/v1/notifications?limit=2", { token: me.token });
    const older = linkCursor(res, "next", "max_id")!;
    expect(asPleromaFe(older)).toBe(older);
    expect((await notes(me, `?max_id=${asPleromaFe(older)}`)).length).toBe(2);
    // Mark one read by its number, then all up to the newest.
    const one = await json("/api/v1/pleroma/notifications/read", {
      method: "POST",
      token: me.token,
      body: { id: asPleromaFe(first[2].id) },
    });
    expect([one.id, one.pleroma.is_seen]).toEqual([first[2].id, true]);
    const all = (await notes(me))[0].id;
    const marked = await json("/api/v1/pleroma/notifications/read", {
      method: "POST",
      token: me.token,
      body: { max_id: asPleromaFe(all) },
    });
    expect(marked.length).toBe(3);
    expect((await notes(me)).every((n: any) => n.pleroma.is_seen)).toBe(true);
  });

  it("bookmarks' Link cursors are numbers too, and page correctly read as numbers", async () => {
    const me = await registerUser();
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await post(me, { status: `keep ${i}` }));
    for (const s of made) await act(me, `/api/v1/statuses/${s.id}/bookmark`);
    const res = await call("/api/v1/bookmarks?limit=2", { token: me.token });
    expect(((await res.json()) as any[]).map((s) => s.id)).toEqual([made[2].id, made[1].id]);
    const next = linkCursor(res, "next", "max_id")!;
    expect(next).toMatch(/^\d{16}$/);
    const rest = await json(`/api/v1/bookmarks?max_id=${asPleromaFe(next)}`, { token: me.token });
    expect(rest.map((s: any) => s.id)).toEqual([made[0].id]);
    // Bookmarking twice keeps one.
    await act(me, `/api/v1/statuses/${made[0].id}/bookmark`);
    expect((await json("/api/v1/bookmarks", { token: me.token })).length).toBe(3);
  });

  it("existing ULID notifications, bookmarks and markers are rewritten in order; old cursors still work", async () => {
    const [me, other] = [await registerUser(), await registerUser()];
    const s = await post(other, { status: "old" });
    // Rows as they were before migration 0031: ULID ids, two in the same millisecond.
    const t = Date.now() - 3_600_000;
    const [u1, u2, u3] = [newId(t - 1000), newId(t), newId(t)];
    await env.DB.batch([
      ...[u1, u2, u3].map((id, i) =>
        env.DB.prepare(
          "INSERT INTO notifications (id, account_id, from_account_id, type, status_id, is_seen, created_at) VALUES (?, ?, ?, 'favourite', ?, ?, ?)",
        ).bind(id, me.id, other.id, s.id, i === 0 ? 1 : 0, t),
      ),
      env.DB.prepare(
        "INSERT INTO markers (account_id, timeline, last_read_id, version, updated_at) VALUES (?, 'notifications', ?, 1, ?) ON CONFLICT DO UPDATE SET last_read_id = excluded.last_read_id",
      ).bind(me.id, u2, t),
      env.DB.prepare("INSERT INTO bookmarks (id, account_id, status_id, created_at) VALUES (?, ?, ?, ?)").bind(
        newId(t),
        me.id,
        s.id,
        t,
      ),
    ]);
    // A client still holding the old newest id as a cursor, before the rewrite runs.
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0031"))!;
    await env.DB.batch(migration.queries.map((q) => env.DB.prepare(q)));
    const list = await notes(me);
    expect(list.length).toBe(3);
    const ids = list.map((n: any) => n.id);
    expect(ids.every((id: string) => /^\d{16}$/.test(id))).toBe(true);
    expect([...ids].sort().reverse()).toEqual(ids);
    // The two of one millisecond: that millisecond times 1000, then one more.
    expect(ids.slice(0, 2).map((id: string) => parseInt(id, 10))).toEqual([t * 1000 + 1, t * 1000]);
    expect(parseInt(ids[2], 10)).toBe((t - 1000) * 1000);
    // The marker moved to the rewritten id of what it named.
    const markers = await json("/api/v1/markers?timeline[]=notifications", { token: me.token });
    expect(markers.notifications.last_read_id).toBe(ids[1]);
    // Old cursors: max_id of the newest ULID leaves the older millisecond; since_id of the oldest, the newer.
    expect((await notes(me, `?max_id=${u2}`)).map((n: any) => n.id)).toEqual([ids[2]]);
    expect((await notes(me, `?since_id=${u1}`)).map((n: any) => n.id)).toEqual(ids.slice(0, 2));
    // A new notification sorts after them all; bookmarks were rewritten too.
    await act(other, `/api/v1/accounts/${me.id}/follow`);
    expect((await notes(me))[0].type).toBe("follow");
    const bookmark = await env.DB.prepare("SELECT id FROM bookmarks WHERE account_id = ?")
      .bind(me.id)
      .first<{ id: string }>();
    expect(bookmark!.id).toBe(String(t * 1000).padStart(16, "0"));
  });
});
