/**
 * The mention shield (issue 45): a recorded spam wave — fresh remote accounts, a link and an image, five and
 * more mentions, delivered as signed Creates to the inbox — makes no notification and no Web Push (pushes go to
 * a local mock receiver), while a reply from a followed account and replies in one's own thread all arrive.
 */
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { json, registerUser, valid, type TestUser } from "./helpers";
import { A } from "./instances";
import { expectAccepted, followPeer, setup, unroute, type Setup } from "./inbound";
import { pushReceiver, subscribePush } from "./push-receiver";
import { GroupedNotificationsResultsSchema, NotificationRequestSchema } from "../src/schemas/notification-groups";

const AS = "https://www.w3.org/ns/activitystreams";

let s: Setup;
let victims: TestUser[];
let admin: TestUser;
let pushes: string[] = [];
let n = 0;

/** A signed Create of a public Note by `actor` mentioning `targets`, as a spam wave sends it. */
function create(actor: string, targets: TestUser[], extra: Record<string, unknown> = {}) {
  const id = `${actor}/statuses/${Date.now()}${n++}`;
  const mentions = targets.map((t) => ({
    type: "Mention",
    href: `${A.origin}/users/${t.username}`,
    name: `@${t.username}@a.example`,
  }));
  const links = targets
    .map(
      (t) =>
        `<span class="h-card"><a href="${A.origin}/users/${t.username}" class="u-url mention">@<span>${t.username}</span></a></span>`,
    )
    .join(" ");
  return {
    "@context": AS,
    id: `${id}/activity`,
    type: "Create",
    actor,
    to: [`${AS}#Public`],
    cc: mentions.map((m) => m.href),
    object: {
      id,
      type: "Note",
      attributedTo: actor,
      to: [`${AS}#Public`],
      cc: mentions.map((m) => m.href),
      content: `<p>${links} Free crypto at <a href="https://spam.example/win">spam.example/win</a></p>`,
      tag: mentions,
      attachment: [{ type: "Document", mediaType: "image/png", url: `${s.peer.origin}/media/${id.length}.png` }],
      published: new Date().toISOString(),
      ...extra,
    },
  };
}

const shown = async (u: TestUser) => ({
  v1: await json("/api/v1/notifications", { instance: A, token: u.token }),
  v2: valid(GroupedNotificationsResultsSchema, await json("/api/v2/notifications", { instance: A, token: u.token }))
    .notification_groups,
});

describe("the mention shield", () => {
  beforeAll(async () => {
    s = await setup();
    admin = await registerUser({ instance: A, scopes: "read write follow push admin" });
    await env.DB.prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?").bind(admin.id).run();
    await json("/api/v1/pleroma/admin/config", {
      instance: A,
      token: admin.token,
      body: { configs: [{ group: ":pleroma", key: ":instance", value: [{ tuple: [":mention_shield", true] }] }] },
    });
    victims = [s.user, ...(await Promise.all(Array.from({ length: 5 }, () => registerUser({ instance: A }))))];
    // Web Push to a local receiver; everything else goes where the peer's routing sends it.
    pushes = pushReceiver();
    for (const v of victims) await subscribePush(v, A);
  });
  afterAll(() => {
    vi.restoreAllMocks();
    unroute();
  });

  it("a spam wave of fresh accounts with links, images and 6 mentions: no notification, no push, a request each", async () => {
    const spammers = Array.from({ length: 5 }, () => s.peer.actor());
    for (const spammer of spammers) await expectAccepted(await s.peer.send(spammer, create(spammer, victims)));
    // Stored (the posts exist), but nobody was told.
    const stored = await env.DB.prepare(
      "SELECT count(*) AS n FROM statuses s JOIN accounts a ON a.id = s.account_id WHERE a.uri IN (SELECT value FROM json_each(?))",
    )
      .bind(JSON.stringify(spammers))
      .first<{ n: number }>();
    expect(stored!.n).toBe(5);
    for (const v of victims) {
      const { v1, v2 } = await shown(v);
      expect(v1).toHaveLength(0);
      expect(v2).toHaveLength(0);
      expect((await json("/api/v1/notifications/unread_count", { instance: A, token: v.token })).count).toBe(0);
    }
    expect(pushes).toHaveLength(0);
    // Filtered, not dropped: each victim sees five requests, one per spammer.
    const requests = await json("/api/v1/notifications/requests", { instance: A, token: victims[3].token });
    expect(requests).toHaveLength(5);
    for (const r of requests) valid(NotificationRequestSchema, r);
    // The moderation view counts what the shield set aside.
    const stats = await json("/api/v1/pleroma/admin/stats", { instance: A, token: admin.token });
    expect(stats.notification_requests).toEqual({
      mention_shield: true,
      requests: 30,
      filtered_notifications: 30,
      senders: 5,
    });
  });

  it("a followed account's reply and replies in one's own thread arrive, and are pushed", async () => {
    const me = victims[0];
    await followPeer(s);
    const mine = await json("/api/v1/statuses", { instance: A, token: me.token, body: { status: "my thread" } });
    const uri = (await env.DB.prepare("SELECT uri FROM statuses WHERE id = ?").bind(mine.id).first<{ uri: string }>())!
      .uri;
    expect(uri).toBeTruthy();
    // The followed account, fresh too, with a link, an image and six mentions.
    await expectAccepted(await s.peer.send(s.actor, create(s.actor, victims, { inReplyTo: uri })));
    // A stranger answering my post, and another answering that answer (still my thread).
    const stranger = s.peer.actor();
    const answer = create(stranger, [me], { inReplyTo: uri });
    await expectAccepted(await s.peer.send(stranger, answer));
    const other = s.peer.actor();
    await expectAccepted(await s.peer.send(other, create(other, [me], { inReplyTo: answer.object.id })));
    const { v1 } = await shown(me);
    expect(v1.map((x: { type: string }) => x.type)).toEqual(["mention", "mention", "mention"]);
    expect(pushes.filter((p) => p.endsWith(me.id))).toHaveLength(3);
    // For the others the followed account's post is a stranger's wave: filtered.
    expect((await shown(victims[1])).v1).toHaveLength(0);
  });

  it("turned off by the admin, the same wave notifies", async () => {
    await json("/api/v1/pleroma/admin/config", {
      instance: A,
      token: admin.token,
      body: { configs: [{ group: ":pleroma", key: ":instance", value: [{ tuple: [":mention_shield", false] }] }] },
    });
    const spammer = s.peer.actor();
    await expectAccepted(await s.peer.send(spammer, create(spammer, victims.slice(1))));
    for (const v of victims.slice(1)) expect((await shown(v)).v1).toHaveLength(1);
  });
});
