import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { NotificationSchema } from "../src/schemas/social";
import { call, json, makeAdmin, post, registerUser, valid, type TestUser } from "./helpers";

const notes = async (u: TestUser, query = "") => (await json(`/api/v1/notifications${query}`, { token: u.token })).map((n: unknown) => valid(NotificationSchema, n));
const kinds = async (u: TestUser, query = "") => (await notes(u, query)).map((n: any) => [n.type, n.account.id]);
const act = (u: TestUser, path: string, body?: Record<string, unknown>, method = "POST") => json(path, { method, token: u.token, body });

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
      await worker.scheduled(createScheduledController({ scheduledTime: new Date(t), cron: "* * * * *" }), { ...env } as typeof env, ctx);
      await waitOnExecutionContext(ctx);
    }
    expect(await kinds(voter)).toEqual([["poll", author.id]]);
    expect(await kinds(author)).toEqual([["poll", author.id]]);
  });

  it("reports reach moderators, shown only when asked for", async () => {
    const [mod, reporter, target] = [await registerUser(), await registerUser(), await registerUser()];
    await makeAdmin(mod.id);
    await json("/api/v1/reports", { method: "POST", token: reporter.token, body: { account_id: target.id, comment: "bad" } });
    expect(await notes(mod)).toEqual([]);
    const shown = await notes(mod, "?include_types[]=pleroma:report");
    expect(shown.map((n: any) => [n.type, n.account.id, n.report.comment])).toEqual([["pleroma:report", reporter.id, "bad"]]);
  });
});

describe("what suppresses notifications", () => {
  it("blocks, notification mutes, muted threads and block_from_strangers", async () => {
    const [me, blocked, muted, quiet, stranger, friend] = await Promise.all(Array.from({ length: 6 }, () => registerUser()));
    await act(me, `/api/v1/accounts/${blocked.id}/block`);
    await act(me, `/api/v1/accounts/${muted.id}/mute`, { notifications: true });
    await act(me, `/api/v1/accounts/${quiet.id}/mute`, { notifications: false });
    const s = await post(me, { status: "a thread" });
    for (const u of [muted, quiet]) await act(u, `/api/v1/statuses/${s.id}/favourite`);
    await post(blocked, { status: `hey @${me.username}` }, 200);
    const kindsNow = await kinds(me, "?with_muted=true");
    expect(kindsNow).toEqual([["favourite", quiet.id]]);
    expect((await notes(me))).toEqual([]); // quiet is muted (not its notifications): shown only with_muted
    expect((await notes(me, "?with_muted=true"))[0].pleroma.is_muted).toBe(true);

    await act(me, `/api/v1/statuses/${s.id}/mute`);
    await post(friend, { status: `@${me.username} in the muted thread`, in_reply_to_id: s.id });
    expect((await kinds(me, "?with_muted=true")).map((k: any) => k[1])).not.toContain(friend.id);

    expect(await json("/api/v1/pleroma/notification_settings", { method: "PUT", token: me.token, body: { block_from_strangers: true } })).toEqual({ status: "success" });
    expect((await json("/api/v1/accounts/verify_credentials", { token: me.token })).pleroma.notification_settings).toEqual({ block_from_strangers: true, hide_notification_contents: false });
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
    expect((await notes(me, "?exclude_visibilities[]=direct")).map((n: any) => n.status.visibility)).toEqual(["private", "public"]);
    const res = await call("/api/v1/notifications?limit=1", { token: me.token });
    const first = (await res.json()) as any[];
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get("link")!)![1];
    const second = await json(next.replace("http://localhost", ""), { token: me.token });
    expect(second[0].id < first[0].id).toBe(true);
    await json("/api/v1/notifications?exclude_types[]=nonsense", { token: me.token, status: 400 });
  });

  it("read state, unread counts, markers, dismiss, clear and destroy_multiple", async () => {
    const [me, a, other] = [await registerUser(), await registerUser(), await registerUser()];
    for (let i = 0; i < 4; i++) await post(a, { status: `@${me.username} ${i}` });
    const list = await notes(me);
    expect((await json("/api/v1/accounts/verify_credentials", { token: me.token })).pleroma.unread_notifications_count).toBe(4);
    const one = await json("/api/v1/pleroma/notifications/read", { method: "POST", token: me.token, body: { id: list[3].id } });
    expect(one.pleroma.is_seen).toBe(true);
    const upTo = await json("/api/pleroma/notifications/read", { method: "POST", token: me.token, body: { max_id: list[1].id } });
    expect(upTo.map((n: any) => n.id)).toEqual([list[1].id, list[2].id]);
    await json("/api/v1/pleroma/notifications/read", { method: "POST", token: me.token, body: {}, status: 400 });
    expect((await json("/api/v1/accounts/verify_credentials", { token: me.token })).pleroma.unread_notifications_count).toBe(1);

    const marked = await json("/api/v1/markers", { method: "POST", token: me.token, body: { notifications: { last_read_id: list[0].id }, home: { last_read_id: list[0].id } } });
    expect(marked.notifications).toMatchObject({ last_read_id: list[0].id, version: 1, pleroma: { unread_count: 1 } });
    const again = await json("/api/v1/markers", { method: "POST", token: me.token, body: { home: { last_read_id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" } } });
    expect(again.home.version).toBe(2);
    const read = await json("/api/v1/markers?timeline[]=home", { token: me.token });
    expect(Object.keys(read)).toEqual(["home"]);

    expect((await json(`/api/v1/notifications/${list[0].id}`, { token: me.token })).id).toBe(list[0].id);
    await json(`/api/v1/notifications/${list[0].id}`, { token: other.token, status: 404 });
    await json(`/api/v1/notifications/${list[0].id}/dismiss`, { method: "POST", token: other.token, status: 404 });
    expect(await json(`/api/v1/notifications/${list[0].id}/dismiss`, { method: "POST", token: me.token })).toEqual({});
    expect(await json("/api/v1/notifications/destroy_multiple", { method: "DELETE", token: me.token, body: { ids: [list[1].id, list[2].id] } })).toEqual({});
    expect((await notes(me)).map((n: any) => n.id)).toEqual([list[3].id]);
    expect(await json("/api/v1/notifications/clear", { method: "POST", token: me.token })).toEqual({});
    expect(await notes(me)).toEqual([]);
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
    await json("/api/v1/pleroma/notifications/read", { method: "POST", token: me.token, body: { id: n.id }, status: 404 });
    expect(await notes(me)).toEqual([]);
    const conversations = await json("/api/v1/conversations", { token: me.token });
    expect(conversations.every((c: any) => c.last_status === null)).toBe(true);
    expect(JSON.stringify(conversations)).not.toContain("before the block");
  });
});
