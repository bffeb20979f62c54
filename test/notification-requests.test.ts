/**
 * Mastodon 4.3's notification policy and notification requests (issue 45): filtered notifications are kept aside
 * (no Web Push, no stream event), counted per sender, and come back when the request is accepted; dropped ones are
 * never created. Web Push goes to a local mock receiver.
 */
import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { call, json, post, registerUser, scopedToken, valid, type TestUser } from "./helpers";
import { pushReceiver, subscribePush } from "./push-receiver";
import {
  GroupedNotificationsResultsSchema,
  NotificationPolicySchema,
  NotificationPolicyV1Schema,
  NotificationRequestSchema,
} from "../src/schemas/notification-groups";

let pushes: string[] = [];

const policy = async (u: TestUser) =>
  valid(NotificationPolicySchema.strict(), await json("/api/v2/notifications/policy", { token: u.token }));
const requests = async (u: TestUser) =>
  (await json("/api/v1/notifications/requests", { token: u.token })).map((r: unknown) =>
    valid(NotificationRequestSchema.strict(), r),
  );
const v1Types = async (u: TestUser) =>
  (await json("/api/v1/notifications", { token: u.token })).map((n: { type: string }) => n.type);

describe("notification policy and requests", () => {
  beforeEach(() => {
    pushes = pushReceiver();
  });
  afterEach(() => vi.restoreAllMocks());

  it("answers the policy in both shapes and changes it; bad values are refused", async () => {
    const me = await registerUser();
    expect(await policy(me)).toEqual({
      for_not_following: "accept",
      for_not_followers: "accept",
      for_new_accounts: "accept",
      for_private_mentions: "accept",
      for_limited_accounts: "filter",
      summary: { pending_requests_count: 0, pending_notifications_count: 0 },
    });
    const changed = valid(
      NotificationPolicySchema.strict(),
      await json("/api/v2/notifications/policy", {
        method: "PATCH",
        token: me.token,
        body: { for_not_following: "filter", for_new_accounts: "drop", for_private_mentions: null },
      }),
    );
    expect(changed).toMatchObject({
      for_not_following: "filter",
      for_new_accounts: "drop",
      for_private_mentions: "accept",
    });
    const bad = await call("/api/v2/notifications/policy", {
      method: "PATCH",
      token: me.token,
      body: { for_not_followers: "explode" },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toHaveProperty("error");
    expect((await policy(me)).for_not_followers).toBe("accept");

    const v1 = valid(
      NotificationPolicyV1Schema.strict(),
      await json("/api/v1/notifications/policy", { token: me.token }),
    );
    expect(v1).toMatchObject({ filter_not_following: true, filter_new_accounts: true, filter_private_mentions: false });
    await json("/api/v1/notifications/policy", {
      method: "PUT",
      token: me.token,
      body: { filter_not_following: false, filter_not_followers: "true" },
    });
    expect(await policy(me)).toMatchObject({
      for_not_following: "accept",
      for_not_followers: "filter",
      for_new_accounts: "drop",
    });
    // Scopes: reading needs read:notifications, changing write:notifications.
    const reader = await scopedToken(me, "read:notifications");
    expect((await call("/api/v2/notifications/policy", { token: reader })).status).toBe(200);
    expect((await call("/api/v2/notifications/policy", { method: "PATCH", token: reader, body: {} })).status).toBe(403);
  });

  it("a stranger's notifications are filtered: not listed, not pushed; the request counts them; accepting brings them back", async () => {
    const me = await registerUser();
    const [stranger, friend] = [await registerUser(), await registerUser()];
    await json(`/api/v1/accounts/${friend.id}/follow`, { method: "POST", token: me.token });
    await subscribePush(me);
    await json("/api/v2/notifications/policy", {
      method: "PATCH",
      token: me.token,
      body: { for_not_following: "filter" },
    });
    const mine = await post(me, { status: "hello" });
    await json(`/api/v1/statuses/${mine.id}/favourite`, { method: "POST", token: stranger.token });
    const mention = await post(stranger, { status: `@${me.username} buy now` });
    expect(pushes).toHaveLength(0);
    await json(`/api/v1/statuses/${mine.id}/favourite`, { method: "POST", token: friend.token });
    expect(pushes).toHaveLength(1);

    expect(await v1Types(me)).toEqual(["favourite"]);
    const v2 = valid(GroupedNotificationsResultsSchema, await json("/api/v2/notifications", { token: me.token }));
    expect(v2.notification_groups.map((g) => g.sample_account_ids)).toEqual([[friend.id]]);
    const all = await json("/api/v1/notifications?include_filtered=true", { token: me.token });
    expect(all.map((n: { account: { id: string } }) => n.account.id).sort()).toEqual(
      [stranger.id, stranger.id, friend.id].sort(),
    );
    expect((await json("/api/v1/notifications/unread_count", { token: me.token })).count).toBe(1);
    const rows = await env.DB.prepare("SELECT pushed FROM notifications WHERE account_id = ? AND filtered = 1")
      .bind(me.id)
      .all<{ pushed: number }>();
    expect(rows.results.map((r) => r.pushed)).toEqual([1, 1]);

    const [req] = await requests(me);
    expect(req).toMatchObject({
      notifications_count: "2",
      account: { id: stranger.id },
      last_status: { id: mention.id },
    });
    expect((await policy(me)).summary).toEqual({ pending_requests_count: 1, pending_notifications_count: 2 });
    valid(
      NotificationRequestSchema.strict(),
      await json(`/api/v1/notifications/requests/${req.id}`, { token: me.token }),
    );
    // Not someone else's to see or accept.
    await json(`/api/v1/notifications/requests/${req.id}`, { token: friend.token, status: 404 });
    await json(`/api/v1/notifications/requests/${req.id}/accept`, { method: "POST", token: friend.token, status: 404 });
    await json(`/api/v1/notifications/requests/accept`, { token: friend.token, body: { id: [req.id] } });
    expect(await requests(me)).toHaveLength(1);

    expect(await json(`/api/v1/notifications/requests/${req.id}/accept`, { method: "POST", token: me.token })).toEqual(
      {},
    );
    expect(await requests(me)).toHaveLength(0);
    expect((await v1Types(me)).sort()).toEqual(["favourite", "favourite", "mention"]);
    // Accepted: no push for what comes back, and the sender's next notification is not filtered.
    expect(pushes).toHaveLength(1);
    await post(stranger, { status: `@${me.username} again` });
    expect(pushes).toHaveLength(2);
    expect(await v1Types(me)).toHaveLength(4);
    expect(await json("/api/v1/notifications/requests/merged", { token: me.token })).toEqual({ merged: true });
  });

  it("dismissing a request deletes its notifications; bulk accept and dismiss take only the user's own", async () => {
    const me = await registerUser();
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    await json("/api/v2/notifications/policy", {
      method: "PATCH",
      token: me.token,
      body: { for_not_followers: "filter" },
    });
    for (const u of [a, b, c]) await post(u, { status: `@${me.username} hey` });
    const list = await requests(me);
    expect(list.map((r: { account: { id: string } }) => r.account.id)).toEqual([c.id, b.id, a.id]);
    const idOf = (u: TestUser) => list.find((r: { account: { id: string } }) => r.account.id === u.id)!.id;

    await json(`/api/v1/notifications/requests/${idOf(a)}/dismiss`, { method: "POST", token: me.token });
    expect(await json("/api/v1/notifications?include_filtered=true", { token: me.token })).toHaveLength(2);
    const other = await registerUser();
    await json("/api/v1/notifications/requests/dismiss", { token: other.token, body: { id: [idOf(b)] } });
    expect(await requests(me)).toHaveLength(2);
    await json("/api/v1/notifications/requests/accept", { token: me.token, body: { id: [idOf(b), "nonsense"] } });
    await json("/api/v1/notifications/requests/dismiss", { token: me.token, body: { id: [idOf(c)] } });
    expect(await requests(me)).toHaveLength(0);
    expect(
      (await json("/api/v1/notifications", { token: me.token })).map((n: { account: { id: string } }) => n.account.id),
    ).toEqual([b.id]);
    // A follower of mine is not filtered by for_not_followers.
    await json(`/api/v1/accounts/${me.id}/follow`, { method: "POST", token: c.token });
    await post(c, { status: `@${me.username} I follow you now` });
    expect((await json("/api/v1/notifications", { token: me.token })).map((n: { type: string }) => n.type)).toContain(
      "mention",
    );
  });

  it("drop: nothing is created, nothing is pushed, the action itself happens", async () => {
    const me = await registerUser();
    const stranger = await registerUser();
    await subscribePush(me);
    await json("/api/v2/notifications/policy", {
      method: "PATCH",
      token: me.token,
      body: { for_not_following: "drop" },
    });
    const mine = await post(me, { status: "drop them" });
    const fav = await json(`/api/v1/statuses/${mine.id}/favourite`, { method: "POST", token: stranger.token });
    expect(fav.favourited).toBe(true);
    const n = await env.DB.prepare("SELECT count(*) AS n FROM notifications WHERE account_id = ?")
      .bind(me.id)
      .first<{ n: number }>();
    expect(n!.n).toBe(0);
    expect(await requests(me)).toHaveLength(0);
    expect(pushes).toHaveLength(0);
  });
});
