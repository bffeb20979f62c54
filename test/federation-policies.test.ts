/**
 * Federation policies (issue 17, Pleroma's `:mrf_simple`) between two Starling instances: C holds the policies
 * (no other test file uses C, since policies are instance-wide) and B is the remote domain they name.
 * Applied on the way in (C's inbox, resolving) and out (C's delivery expansion).
 */
import { env } from "cloudflare:test";
import { POLICIES } from "../src/services/instance-settings";
import { describe, expect, it } from "vitest";
import { RelationshipSchema } from "../src/schemas/account";
import { InstanceSchema } from "../src/schemas/instance";
import { StatusSchema } from "../src/schemas/status";
import { call, json, PNG_1PX, registerUser, valid, type TestUser } from "./helpers";
import { B, C, federating, type Instance, searchRemote } from "./instances";

const fed = federating([B, C]);
const { settle } = fed;

const ADMIN_SCOPES = "read write follow push admin";

async function adminOnC(): Promise<TestUser> {
  const u = await registerUser({ instance: C, scopes: ADMIN_SCOPES });
  await env.DB_C.prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?").bind(u.id).run();
  return u;
}

/** Sets C's policies for b.example: each named policy gets `[b.example, reason]`, the others are emptied. */
async function policiesOnC(admin: TestUser, named: string[]) {
  const value = POLICIES.map((p) => ({
    tuple: [`:${p}`, named.includes(p) ? [{ tuple: ["b.example", `because ${p}`] }] : []],
  }));
  return json("/api/v1/pleroma/admin/config", {
    instance: C,
    token: admin.token,
    body: { configs: [{ group: ":pleroma", key: ":mrf_simple", value }] },
  });
}

async function post(user: TestUser, inst: Instance, body: Record<string, unknown>) {
  return valid(StatusSchema, await json("/api/v1/statuses", { instance: inst, token: user.token, body }));
}

const homeOf = async (user: TestUser, inst: Instance) =>
  ((await json(`/api/v1/timelines/home?limit=40`, { instance: inst, token: user.token })) as unknown[]).map((s) =>
    valid(StatusSchema, s),
  );

describe("federation policies between two instances", () => {
  it("media removal and federated timeline removal on the way in; reject in and out; shown in the instance", async () => {
    const admin = await adminOnC();
    const carol = await registerUser({ instance: C });
    const bob = await registerUser({ instance: B });
    try {
      // Carol (C) and Bob (B) follow each other while nothing is refused.
      const [bobOnC] = await searchRemote(carol, C, bob, B);
      const [carolOnB] = await searchRemote(bob, B, carol, C);
      await json(`/api/v1/accounts/${bobOnC!.id}/follow`, { instance: C, token: carol.token, body: {} });
      await json(`/api/v1/accounts/${carolOnB!.id}/follow`, { instance: B, token: bob.token, body: {} });
      await settle();
      const [rel] = await json(`/api/v1/accounts/relationships?id[]=${bobOnC!.id}`, {
        instance: C,
        token: carol.token,
      });
      expect(valid(RelationshipSchema, rel)).toMatchObject({ following: true, followed_by: true });

      // media_removal + federated_timeline_removal + media_nsfw: Bob's public post with a picture reaches Carol
      // without it, unlisted, and stays off C's federated timeline.
      await policiesOnC(admin, ["media_removal", "federated_timeline_removal"]);
      const form = new FormData();
      form.set("file", new File([PNG_1PX], "a.png"));
      const media = await json("/api/v1/media", { instance: B, method: "POST", token: bob.token, body: form });
      const pic = await post(bob, B, { status: "A picture from B", visibility: "public", media_ids: [media.id] });
      expect(pic.media_attachments).toHaveLength(1);
      await settle();
      const onC = (await homeOf(carol, C)).find((s) => s.uri === pic.uri);
      expect(onC).toBeDefined();
      expect(onC!.media_attachments).toEqual([]);
      expect(onC!.visibility).toBe("unlisted");
      const federated = (
        (await json("/api/v1/timelines/public?remote=true&limit=40", { instance: C })) as unknown[]
      ).map((s) => valid(StatusSchema, s));
      expect(federated.map((s) => s.uri)).not.toContain(pic.uri);

      // media_nsfw alone: the picture stays, marked sensitive.
      await policiesOnC(admin, ["media_nsfw"]);
      const media2 = await json("/api/v1/media", { instance: B, method: "POST", token: bob.token, body: form });
      const pic2 = await post(bob, B, { status: "Another picture", visibility: "public", media_ids: [media2.id] });
      await settle();
      const onC2 = (await homeOf(carol, C)).find((s) => s.uri === pic2.uri)!;
      expect(onC2.media_attachments).toHaveLength(1);
      expect(onC2.sensitive).toBe(true);
      expect(onC2.visibility).toBe("public");

      // The instance tells its policies and their reasons, as Pleroma's MRF transparency does.
      // A delivery to B still queued when B is rejected is dropped with the change.
      const queued = `q${Date.now()}`;
      const far = Date.now() + 3600_000;
      await env.DB_C.batch([
        env.DB_C.prepare(
          "INSERT INTO federation_outbox (id, account_id, activity, body, created_at, expanded_at) VALUES (?, ?, '{}', '{}', ?, ?)",
        ).bind(queued, carol.id, far, far),
        env.DB_C.prepare(
          "INSERT INTO federation_deliveries (id, outbox_id, host, inbox, next_at, created_at) VALUES (?, ?, 'b.example', 'https://b.example/inbox', ?, ?)",
        ).bind(queued, queued, far, far),
      ]);
      await policiesOnC(admin, ["reject", "media_removal"]);
      expect(
        await env.DB_C.prepare("SELECT count(*) AS n FROM federation_deliveries WHERE id = ?").bind(queued).first("n"),
      ).toBe(0);
      // The rejection severed the follows both ways, as a Mastodon suspension does, and told Carol so.
      const [cut] = await json(`/api/v1/accounts/relationships?id[]=${bobOnC!.id}`, {
        instance: C,
        token: carol.token,
      });
      expect(valid(RelationshipSchema, cut)).toMatchObject({ following: false, followed_by: false });
      expect(await json("/api/v1/severed_relationships", { instance: C, token: carol.token })).toMatchObject([
        { type: "domain_block", target_name: "b.example", following_count: 1, followers_count: 1 },
      ]);
      await env.DB_C.prepare("DELETE FROM federation_outbox WHERE id = ?").bind(queued).run();
      const info = valid(InstanceSchema, await json("/api/v1/instance", { instance: C }));
      const federation = info.pleroma.metadata.federation;
      expect(federation.mrf_policies).toContain("SimplePolicy");
      expect(federation.mrf_simple.reject).toEqual(["b.example"]);
      expect(federation.mrf_simple.media_removal).toEqual(["b.example"]);
      expect(federation.mrf_simple_info.reject).toEqual({ "b.example": { reason: "because reject" } });
      const nodeinfo = await json("/nodeinfo/2.1.json", { instance: C });
      expect(nodeinfo.metadata.federation.mrf_simple.reject).toEqual(["b.example"]);

      // reject, IN: Bob's next post is dropped at C's inbox (answered 202, nothing stored).
      const before = fed.routed.requests.length;
      const dropped = await post(bob, B, { status: "Rejected on arrival", visibility: "public" });
      await settle();
      const toC = fed.routed.requests
        .slice(before)
        .filter((r) => r.url.startsWith("https://c.example/") && r.method === "POST");
      expect(toC.length).toBeGreaterThan(0);
      expect((await homeOf(carol, C)).map((s) => s.uri)).not.toContain(dropped.uri);
      expect(
        await env.DB_C.prepare("SELECT count(*) AS n FROM statuses WHERE uri = ?").bind(dropped.uri).first("n"),
      ).toBe(0);

      // reject, OUT: Carol's post is not delivered to B at all.
      const sentBefore = fed.routed.requests.length;
      const mine = await post(carol, C, { status: "Not for B", visibility: "public" });
      await settle();
      expect(
        fed.routed.requests
          .slice(sentBefore)
          .some((r) => r.url.startsWith("https://b.example/") && r.method === "POST"),
      ).toBe(false);
      expect((await homeOf(bob, B)).map((s) => s.uri)).not.toContain(mine.uri);
      expect(
        await env.DB_C.prepare("SELECT count(*) AS n FROM federation_deliveries WHERE host = 'b.example'").first("n"),
      ).toBe(0);

      // reject, resolving: a B account not known yet is not fetched.
      const dan = await registerUser({ instance: B });
      const lookups = fed.routed.requests.length;
      expect(await searchRemote(carol, C, dan, B)).toEqual([]);
      expect(fed.routed.requests.slice(lookups).some((r) => r.url.startsWith("https://b.example/"))).toBe(false);

      // accept (allow-list mode): only listed domains federate; B is not listed, so refused too.
      const all = [...POLICIES];
      await json("/api/v1/pleroma/admin/config", {
        instance: C,
        token: admin.token,
        body: {
          configs: [
            {
              group: ":pleroma",
              key: ":mrf_simple",
              value: all.map((p) => ({ tuple: [`:${p}`, p === "accept" ? [{ tuple: ["friends.example", ""] }] : []] })),
            },
          ],
        },
      });
      const notListed = await post(bob, B, { status: "Not on the allow-list", visibility: "public" });
      await settle();
      expect((await homeOf(carol, C)).map((s) => s.uri)).not.toContain(notListed.uri);

      // Lifted: Bob's posts arrive again.
      await json("/api/v1/pleroma/admin/config", {
        instance: C,
        token: admin.token,
        body: { configs: [{ group: ":pleroma", key: ":mrf_simple", delete: true }] },
      });
      // Lifted: Carol follows Bob again, and his posts arrive again.
      await json(`/api/v1/accounts/${bobOnC!.id}/follow`, { instance: C, token: carol.token, body: {} });
      await settle();
      const welcome = await post(bob, B, { status: "Back again", visibility: "public" });
      await settle();
      expect((await homeOf(carol, C)).map((s) => s.uri)).toContain(welcome.uri);

      const log = await env.DB_C.prepare("SELECT action FROM moderation_log WHERE actor_id = ?")
        .bind(admin.id)
        .all<{ action: string }>();
      expect(log.results.length).toBe(5);
      expect(new Set(log.results.map((r) => r.action))).toEqual(new Set(["config_update"]));
    } finally {
      await json("/api/v1/pleroma/admin/config", {
        instance: C,
        token: admin.token,
        body: { configs: [{ group: ":pleroma", key: ":mrf_simple", delete: true }] },
      });
      await settle();
    }
  });

  it("avatar and banner removal apply to remote profiles when they are stored", async () => {
    const admin = await adminOnC();
    const carol = await registerUser({ instance: C });
    const erin = await registerUser({ instance: B });
    const form = new FormData();
    form.set("avatar", new File([PNG_1PX], "a.png"));
    await json("/api/v1/accounts/update_credentials", { instance: B, method: "PATCH", token: erin.token, body: form });
    try {
      await policiesOnC(admin, ["avatar_removal", "banner_removal"]);
      const [erinOnC] = await searchRemote(carol, C, erin, B);
      expect(erinOnC).toBeDefined();
      const stored = await env.DB_C.prepare("SELECT avatar, header FROM accounts WHERE id = ?")
        .bind(erinOnC!.id)
        .first<{ avatar: string | null; header: string | null }>();
      expect(stored).toEqual({ avatar: null, header: null });
      // What B publishes does carry the avatar: C left it out.
      const doc = await (
        await call(`/users/${erin.username}`, { instance: B, headers: { accept: "application/activity+json" } })
      ).json<any>();
      expect(doc.icon?.url).toMatch(/^https:\/\/b\.example\//);
    } finally {
      await json("/api/v1/pleroma/admin/config", {
        instance: C,
        token: admin.token,
        body: { configs: [{ group: ":pleroma", key: ":mrf_simple", delete: true }] },
      });
    }
  });
});
