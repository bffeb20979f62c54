/**
 * Grouped notifications (Mastodon 4.3, issue 45): `/api/v2/notifications` and its group endpoints, the unread
 * counts, and v1 unchanged beside them. Every answer is checked against the schemas written from Mastodon's docs.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { call, json, post, registerUser, scopedToken, valid, type TestUser } from "./helpers";
import { GroupedNotificationsResultsSchema, PartialAccountWithAvatarSchema } from "../src/schemas/notification-groups";
import { AccountSchema } from "../src/schemas/account";
import { NotificationSchema } from "../src/schemas/social";

const Results = GroupedNotificationsResultsSchema.strict();
const grouped = async (user: TestUser, query = "") =>
  valid(Results, await json(`/api/v2/notifications${query}`, { token: user.token }));

let me: TestUser;
let other: TestUser;
let fans: TestUser[];
let mine: { id: string };

describe("grouped notifications", () => {
  beforeAll(async () => {
    me = await registerUser();
    other = await registerUser();
    fans = await Promise.all(Array.from({ length: 10 }, () => registerUser()));
    mine = await post(me, { status: "favourite me" });
    // 10 favourites, 3 reblogs, 2 reactions (one fan reacts twice), 2 follows, a mention: in that order.
    for (const f of fans) await json(`/api/v1/statuses/${mine.id}/favourite`, { method: "POST", token: f.token });
    for (const f of fans.slice(0, 3))
      await json(`/api/v1/statuses/${mine.id}/reblog`, { method: "POST", token: f.token });
    for (const e of ["🔥", "👍"])
      await json(`/api/v1/pleroma/statuses/${mine.id}/reactions/${encodeURIComponent(e)}`, {
        method: "PUT",
        token: fans[0].token,
      });
    await json(`/api/v1/pleroma/statuses/${mine.id}/reactions/${encodeURIComponent("🔥")}`, {
      method: "PUT",
      token: fans[1].token,
    });
    for (const f of fans.slice(0, 2))
      await json(`/api/v1/accounts/${me.id}/follow`, { method: "POST", token: f.token });
    await post(fans[9], { status: `@${me.username} hello` });
  });

  it("groups favourites, reblogs, reactions and follows; a mention stands alone; v1 is unchanged", async () => {
    const r = await grouped(me);
    const byType = Object.fromEntries(r.notification_groups.map((g) => [g.type, g]));
    expect(r.notification_groups.map((g) => g.type)).toEqual([
      "mention",
      "follow",
      "pleroma:emoji_reaction",
      "reblog",
      "favourite",
    ]);
    const fav = byType.favourite;
    expect(fav.notifications_count).toBe(10);
    expect(fav.group_key).toMatch(new RegExp(`^favourite-${mine.id}-\\d+$`));
    expect(fav.status_id).toBe(mine.id);
    expect(fav.sample_account_ids).toHaveLength(8);
    // Newest first: the last fan to favourite leads.
    expect(fav.sample_account_ids[0]).toBe(fans[9].id);
    expect(byType.reblog.notifications_count).toBe(3);
    // Three reactions by two accounts: counted as notifications, each account named once.
    expect(byType["pleroma:emoji_reaction"].notifications_count).toBe(3);
    expect(byType["pleroma:emoji_reaction"].sample_account_ids.sort()).toEqual([fans[0].id, fans[1].id].sort());
    expect(byType.follow.notifications_count).toBe(2);
    expect(byType.follow.group_key).toMatch(/^follow-\d+$/);
    expect(byType.mention.group_key).toBe(`ungrouped-${byType.mention.most_recent_notification_id}`);
    expect(byType.mention.notifications_count).toBe(1);
    // Every named account and status is beside the groups, once.
    const accountIds = r.accounts.map((a) => a.id);
    expect(new Set(accountIds).size).toBe(accountIds.length);
    for (const g of r.notification_groups) for (const id of g.sample_account_ids) expect(accountIds).toContain(id);
    expect(r.statuses.map((s) => s.id)).toContain(mine.id);
    expect(r.partial_accounts).toBeUndefined();
    for (const g of r.notification_groups) {
      expect(g.page_min_id! <= g.page_max_id!).toBe(true);
      expect(g.latest_page_notification_at).toMatch(/^\d{4}-/);
    }
    // v1 still lists each notification.
    const v1 = await json("/api/v1/notifications?limit=40", { token: me.token });
    for (const n of v1) valid(NotificationSchema, n);
    expect(v1.filter((n: { type: string }) => n.type === "favourite")).toHaveLength(10);
    expect(v1).toHaveLength(19);
  });

  it("pages by groups with Link headers, each notification in one page only", async () => {
    // As Mastodon pages: a group's older notifications may show it again on a later page (clients merge groups
    // by key), but no notification is in two pages.
    const ranges: Record<string, [string, string][]> = {};
    const firstCount: Record<string, number> = {};
    let url: string | null = "/api/v2/notifications?limit=2";
    let pages = 0;
    while (url && pages < 10) {
      const res = await call(url, { token: me.token });
      expect(res.status).toBe(200);
      const r = valid(Results, await res.json());
      if (r.notification_groups.length === 0) break;
      expect(r.notification_groups.length).toBeLessThanOrEqual(2);
      for (const g of r.notification_groups) {
        firstCount[g.group_key] ??= g.notifications_count;
        (ranges[g.group_key] ??= []).push([g.page_min_id!, g.page_max_id!]);
      }
      const link = res.headers.get("link")!;
      expect(link).toMatch(/rel="next"/);
      expect(link).toContain("limit=2");
      url = /<([^>]+)>; rel="next"/.exec(link)![1].replace("http://localhost", "");
      pages++;
    }
    expect(pages).toBeLessThan(10);
    expect(Object.keys(ranges)).toHaveLength(5);
    const fav = Object.keys(ranges).find((k) => k.startsWith("favourite-"))!;
    expect(firstCount[fav]).toBe(10);
    for (const list of Object.values(ranges))
      for (let i = 1; i < list.length; i++) expect(list[i][1] < list[i - 1][0]).toBe(true);
    // Going back from the second page's cursor answers the first page's groups.
    const first = await grouped(me, "?limit=2");
    const back = await grouped(me, `?limit=2&min_id=${first.notification_groups[1].page_min_id}`);
    expect(back.notification_groups.map((g) => g.group_key)).toEqual([first.notification_groups[0].group_key]);
  });

  it("grouped_types, types, exclude_types, partial avatars; unknown types are ignored", async () => {
    const r = await grouped(me, "?grouped_types[]=reblog&grouped_types[]=nonsense&types[]=favourite&types[]=reblog");
    expect(r.notification_groups.filter((g) => g.type === "favourite")).toHaveLength(10);
    for (const g of r.notification_groups.filter((g) => g.type === "favourite")) {
      expect(g.group_key).toBe(`ungrouped-${g.most_recent_notification_id}`);
      expect(g.notifications_count).toBe(1);
    }
    expect(r.notification_groups.filter((g) => g.type === "reblog")).toHaveLength(1);
    const ex = await grouped(me, "?exclude_types[]=favourite&exclude_types[]=mention&exclude_types[]=bogus");
    expect(ex.notification_groups.map((g) => g.type)).toEqual(["follow", "pleroma:emoji_reaction", "reblog"]);
    const partial = await grouped(me, "?types[]=favourite&expand_accounts=partial_avatars");
    const [fav] = partial.notification_groups;
    expect(partial.accounts.map((a) => a.id)).toEqual([fav.sample_account_ids[0]]);
    expect(partial.partial_accounts!.map((a) => a.id).sort()).toEqual(fav.sample_account_ids.slice(1).sort());
    for (const a of partial.partial_accounts!) valid(PartialAccountWithAvatarSchema.strict(), a);
  });

  it("one group, its accounts, and dismissing it; nobody else's", async () => {
    const { notification_groups: gs } = await grouped(me);
    const fav = gs.find((g) => g.type === "favourite")!;
    const one = await grouped(me, `/${fav.group_key}`);
    expect(one.notification_groups).toHaveLength(1);
    expect(one.notification_groups[0]).toMatchObject({ group_key: fav.group_key, notifications_count: 10 });
    expect(one.notification_groups[0].page_min_id).toBeUndefined();
    const mention = gs.find((g) => g.type === "mention")!;
    expect((await grouped(me, `/${mention.group_key}`)).notification_groups[0].type).toBe("mention");

    const accounts = await json(`/api/v2/notifications/${fav.group_key}/accounts`, { token: me.token });
    expect(accounts.map((a: { id: string }) => a.id)).toEqual(fans.map((f) => f.id).reverse());
    for (const a of accounts) valid(AccountSchema, a);

    // Someone else's group is not there for them, and they cannot dismiss it.
    await json(`/api/v2/notifications/${fav.group_key}`, { token: other.token, status: 404 });
    await json(`/api/v2/notifications/${mention.group_key}`, { token: other.token, status: 404 });
    await json(`/api/v2/notifications/${fav.group_key}/accounts`, { token: other.token, status: 404 });
    await json(`/api/v2/notifications/${mention.group_key}/dismiss`, { method: "POST", token: other.token });
    await json(`/api/v2/notifications/nonsense-key`, { token: me.token, status: 404 });
    expect((await grouped(me)).notification_groups).toHaveLength(5);

    expect(await json(`/api/v2/notifications/${fav.group_key}/dismiss`, { method: "POST", token: me.token })).toEqual(
      {},
    );
    const after = await grouped(me);
    expect(after.notification_groups.map((g) => g.type)).not.toContain("favourite");
    await json(`/api/v2/notifications/${fav.group_key}`, { token: me.token, status: 404 });
  });

  it("unread counts (v1 notifications, v2 groups) follow the marker", async () => {
    const u = await registerUser();
    const p = await post(u, { status: "count me" });
    for (const f of fans.slice(0, 4))
      await json(`/api/v1/statuses/${p.id}/favourite`, { method: "POST", token: f.token });
    await post(fans[5], { status: `@${u.username} hi` });
    const Count = z.object({ count: z.number().int() }).strict();
    const v1 = valid(Count, await json("/api/v1/notifications/unread_count", { token: u.token }));
    const v2 = valid(Count, await json("/api/v2/notifications/unread_count", { token: u.token }));
    expect([v1.count, v2.count]).toEqual([5, 2]);
    expect((await json("/api/v1/notifications/unread_count?limit=3", { token: u.token })).count).toBe(3);
    expect((await json("/api/v2/notifications/unread_count?types[]=mention", { token: u.token })).count).toBe(1);
    expect((await json("/api/v2/notifications/unread_count?grouped_types[]=reblog", { token: u.token })).count).toBe(5);
    const [newest] = await json("/api/v1/notifications", { token: u.token });
    await json("/api/v1/markers", {
      method: "POST",
      token: u.token,
      body: { notifications: { last_read_id: newest.id } },
    });
    expect((await json("/api/v2/notifications/unread_count", { token: u.token })).count).toBe(0);
  });

  it("needs read:notifications; bad paging input is refused with 400", async () => {
    const narrow = await scopedToken(me, "read:statuses");
    const res = await call("/api/v2/notifications", { token: narrow });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/Insufficient permissions/);
    expect((await call("/api/v2/notifications")).status).toBe(403);
    expect((await call("/api/v2/notifications/unread_count", { token: narrow })).status).toBe(403);
    const write = await scopedToken(me, "read:notifications");
    expect((await call("/api/v2/notifications/x/dismiss", { method: "POST", token: write })).status).toBe(403);
    const bad = await call("/api/v2/notifications?limit=lots", { token: me.token });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toHaveProperty("error");
    // A huge limit is capped (80 groups).
    expect((await call("/api/v2/notifications?limit=100000", { token: me.token })).status).toBe(200);
  });

  it("a group key comes from the row: the same for every page and client", async () => {
    const rows = (
      await env.DB.prepare("SELECT DISTINCT group_key FROM notifications WHERE account_id = ? AND type = 'reblog'")
        .bind(me.id)
        .all<{ group_key: string }>()
    ).results;
    expect(rows).toHaveLength(1);
    expect(rows[0].group_key).toMatch(new RegExp(`^reblog-${mine.id}-\\d+$`));
  });
});

describe("a group's count (issue 42: kept by the notifications' triggers)", () => {
  it("counts up to the page's top, follows deletions and filtering, and leaves nothing behind", async () => {
    const owner = await registerUser();
    const likers = await Promise.all(Array.from({ length: 5 }, () => registerUser()));
    const status = await post(owner, { status: "count me" });
    for (const f of likers) await json(`/api/v1/statuses/${status.id}/favourite`, { method: "POST", token: f.token });
    const count = async (query = "") => {
      const r = await grouped(owner, query);
      return r.notification_groups.find((g) => g.type === "favourite")?.notifications_count;
    };
    expect(await count()).toBe(5);
    const ids = valid(
      z.array(NotificationSchema),
      await json("/api/v1/notifications?types[]=favourite", { token: owner.token }),
    ).map((n) => n.id);
    expect(ids).toHaveLength(5);
    // Below the third newest: the group as it stood then (Mastodon counts up to the page's top).
    expect(await count(`?max_id=${ids[2]}`)).toBe(2);
    // A dismissed notification leaves the count.
    await json(`/api/v1/notifications/${ids[0]}/dismiss`, { method: "POST", token: owner.token });
    expect(await count()).toBe(4);
    // A filtered one counts only with include_filtered; unfiltered, it counts again.
    await env.DB.prepare("UPDATE notifications SET filtered = 1 WHERE id = ?").bind(ids[4]).run();
    expect(await count()).toBe(3);
    expect(await count("?include_filtered=true")).toBe(4);
    await env.DB.prepare("UPDATE notifications SET filtered = 0 WHERE id = ?").bind(ids[4]).run();
    expect(await count()).toBe(4);
    // Nothing of this group shows to anyone else.
    const key = (await grouped(owner)).notification_groups[0].group_key;
    expect((await grouped(likers[0])).notification_groups.map((g) => g.group_key)).not.toContain(key);
    await json(`/api/v2/notifications/${key}/dismiss`, { method: "POST", token: owner.token });
    const left = await env.DB.prepare("SELECT count(*) AS n FROM notification_group_counts WHERE account_id = ?")
      .bind(owner.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });
});
