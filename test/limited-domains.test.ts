/**
 * Mastodon's "limit" (silence) of a domain (issue 48), through the inbox: a silenced domain's posts stay off the
 * federated timeline (Pleroma's `federated_timeline_removal`, as before), and its accounts' follows of local users
 * need approval even when the local account is unlocked. Lifting the silence lifts both. Their notifications fall
 * under the notification policy's `for_limited_accounts` (Mastodon 4.3: filtered by default, unless the recipient
 * follows them).
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { json, makeAdmin, registerUser, valid, type TestUser } from "./helpers";
import { A } from "./instances";
import { drainFederation } from "../src/federation/delivery/wake";
import { expectAccepted, fill, q, remoteId, setup, unroute } from "./inbound";
import { AccountSchema, RelationshipSchema } from "../src/schemas/account";
import { NotificationSchema } from "../src/schemas/social";
import { GroupedNotificationsResultsSchema, NotificationRequestSchema } from "../src/schemas/notification-groups";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";

afterEach(unroute);

async function admin(): Promise<TestUser> {
  const u = await registerUser({ instance: A, scopes: "read write follow push admin" });
  await makeAdmin(u.id);
  return u;
}

const silence = (a: TestUser, domain: string) =>
  json("/api/v1/admin/domain_blocks", {
    instance: A,
    method: "POST",
    token: a.token,
    body: { domain, severity: "silence" },
  });
const lift = (a: TestUser, domain: string) =>
  json(`/api/v1/admin/domain_blocks/${domain}`, { instance: A, method: "DELETE", token: a.token });

const relationship = async (u: TestUser, id: string) =>
  valid(
    RelationshipSchema,
    (await json(`/api/v1/accounts/relationships?id[]=${id}`, { instance: A, token: u.token }))[0],
  );

describe("a silenced (limited) domain", () => {
  it("its follows of an unlocked local user become requests; its public posts stay off the federated timeline", async () => {
    const a = await admin();
    await silence(a, "peer.example");
    try {
      const s = await setup();
      await expectAccepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars)));
      const them = (await remoteId(s.actor))!;
      expect(await q("SELECT count(*) AS n FROM follows WHERE account_id = ?", them)).toEqual([{ n: 0 }]);
      expect(await relationship(s.user, them)).toMatchObject({ followed_by: false });
      const requests = z
        .array(AccountSchema)
        .parse(await json("/api/v1/follow_requests", { instance: A, token: s.user.token }));
      expect(requests.map((r) => r.id)).toEqual([them]);
      const notes = z
        .array(NotificationSchema)
        .parse(await json("/api/v1/notifications", { instance: A, token: s.user.token }));
      // Its notification is set aside by for_limited_accounts (filter by default), as Mastodon 4.3 does.
      expect(notes.map((n) => n.type)).toEqual([]);
      const aside = valid(
        GroupedNotificationsResultsSchema,
        await json("/api/v2/notifications?include_filtered=true", { instance: A, token: s.user.token }),
      );
      expect(aside.notification_groups.map((g) => g.type)).toEqual(["follow_request"]);
      // No Accept went out until the user decided.
      const accepts = () => s.peer.delivered.filter((d) => (d.body as { type?: string } | null)?.type === "Accept");
      await drainFederation(A.bindings);
      expect(accepts()).toEqual([]);
      await json(`/api/v1/follow_requests/${them}/authorize`, { instance: A, method: "POST", token: s.user.token });
      expect(await relationship(s.user, them)).toMatchObject({ followed_by: true });
      await drainFederation(A.bindings);
      expect(accepts()).toHaveLength(1);

      // The older limit holds too: a public post arrives unlisted.
      await expectAccepted(await s.peer.send(s.actor, fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}c` })));
      expect(await q("SELECT visibility FROM statuses WHERE uri = ?", `${s.actor}/statuses/${s.vars.N}c`)).toEqual([
        { visibility: "unlisted" },
      ]);

      // Lifted: the next actor's follow is a follow at once.
      await lift(a, "peer.example");
      const t = await setup();
      await expectAccepted(await t.peer.send(t.actor, fill(mastodonFollow, t.vars)));
      expect(await relationship(t.user, (await remoteId(t.actor))!)).toMatchObject({ followed_by: true });
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies").run();
    }
  });

  it("a silence of another domain changes nothing for this one", async () => {
    const a = await admin();
    await silence(a, "elsewhere.example");
    try {
      const s = await setup();
      await expectAccepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars)));
      expect(await relationship(s.user, (await remoteId(s.actor))!)).toMatchObject({ followed_by: true });
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies").run();
    }
  });

  it("their mentions fall under for_limited_accounts: filtered by default, accepted, dropped, or let through by a follow", async () => {
    const a = await admin();
    await silence(a, "peer.example");
    try {
      const s = await setup();
      const mention = async (n: string) => {
        await expectAccepted(await s.peer.send(s.actor, fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}${n}` })));
        return (
          await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", `${s.actor}/statuses/${s.vars.N}${n}`)
        )[0]?.id;
      };
      const v1 = async () =>
        z
          .array(NotificationSchema)
          .parse(await json("/api/v1/notifications", { instance: A, token: s.user.token }))
          .map((n) => [n.type, n.status?.id]);
      const setPolicy = (value: string) =>
        json("/api/v2/notifications/policy", {
          instance: A,
          method: "PATCH",
          token: s.user.token,
          body: { for_limited_accounts: value },
        });

      // Default (filter): set aside, a request from the sender, back with include_filtered.
      const first = await mention("1");
      expect(first).toBeDefined();
      expect(await v1()).toEqual([]);
      const them = (await remoteId(s.actor))!;
      const reqs = z
        .array(NotificationRequestSchema)
        .parse(await json("/api/v1/notifications/requests", { instance: A, token: s.user.token }));
      expect(reqs.map((r) => [r.account.id, r.notifications_count])).toEqual([[them, "1"]]);
      const filtered = valid(
        GroupedNotificationsResultsSchema,
        await json("/api/v2/notifications?include_filtered=true", { instance: A, token: s.user.token }),
      );
      expect(filtered.notification_groups.map((g) => [g.type, g.status_id])).toEqual([["mention", first]]);

      // Dropped: never created.
      await setPolicy("drop");
      await mention("2");
      expect(await q("SELECT count(*) AS n FROM notifications WHERE account_id = ?", s.user.id)).toEqual([{ n: 1 }]);

      // Accepted: notified as anyone.
      await setPolicy("accept");
      const third = await mention("3");
      expect(await v1()).toEqual([["mention", third]]);

      // Filtered again, but the user follows them: it arrives.
      await setPolicy("filter");
      await env.DB.prepare(
        "INSERT INTO follows (id, account_id, target_account_id, created_at, uri) VALUES (?, ?, ?, ?, ?)",
      )
        .bind(`f${s.vars.N}`, s.user.id, them, Date.now(), `${A.origin}/follows/${s.vars.N}`)
        .run();
      const fourth = await mention("4");
      expect((await v1())[0]).toEqual(["mention", fourth]);
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies").run();
    }
  });

  it("an account of a domain not limited is not filtered by for_limited_accounts", async () => {
    const a = await admin();
    await silence(a, "other.example");
    try {
      const s = await setup();
      await expectAccepted(await s.peer.send(s.actor, fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}m` })));
      const notes = z
        .array(NotificationSchema)
        .parse(await json("/api/v1/notifications", { instance: A, token: s.user.token }));
      expect(notes.map((n) => n.type)).toEqual(["mention"]);
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies").run();
    }
  });
});
