import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { AccountSchema, RelationshipSchema } from "../src/schemas/account";
import { eventSinks, type StreamEvent } from "../src/services/events";
import { newId } from "../src/db/ids";
import { countingD1 } from "./d1-counter";
import { call, json, registerUser, valid, type TestUser } from "./helpers";

const post = (path: string, user: TestUser, body: Record<string, unknown> = {}, status = 200) =>
  json(path, { method: "POST", token: user.token, body, status });
const rel = async (viewer: TestUser, target: TestUser) =>
  valid(
    RelationshipSchema,
    (await json(`/api/v1/accounts/relationships?id[]=${target.id}`, { token: viewer.token }))[0],
  );
const counts = async (u: TestUser) => {
  const a = await json(`/api/v1/accounts/${u.id}`);
  return { followers: a.followers_count, following: a.following_count };
};

/** Collects what services publish for streams. */
function captureEvents() {
  const seen: StreamEvent[] = [];
  const sink = (events: StreamEvent[]) => void seen.push(...events);
  eventSinks.push(sink);
  afterEach(() => {
    const i = eventSinks.indexOf(sink);
    if (i >= 0) eventSinks.splice(i, 1);
  });
  return seen;
}

async function locked(user: TestUser) {
  await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: user.token, body: { locked: true } });
}

describe("follow and unfollow", () => {
  it("follows at once, keeps counts exact, lists both sides, and unfollows", async () => {
    const events = captureEvents();
    const [a, b] = [await registerUser(), await registerUser()];
    const r = valid(RelationshipSchema, await post(`/api/v1/accounts/${b.id}/follow`, a));
    expect(r).toMatchObject({ id: b.id, following: true, requested: false, showing_reblogs: true, followed_by: false });
    // Following twice changes nothing.
    await post(`/api/v1/accounts/${b.id}/follow`, a);
    expect(await counts(a)).toEqual({ followers: 0, following: 1 });
    expect(await counts(b)).toEqual({ followers: 1, following: 0 });
    expect(await rel(b, a)).toMatchObject({ followed_by: true, following: false });

    const followers = await json(`/api/v1/accounts/${b.id}/followers`, { token: b.token });
    expect(followers.map((x: any) => x.id)).toEqual([a.id]);
    valid(AccountSchema, followers[0]);
    const following = await json(`/api/v1/accounts/${a.id}/following?with_relationships=true`, { token: a.token });
    expect(following[0].id).toBe(b.id);
    expect(following[0].pleroma.relationship).toMatchObject({ id: b.id, following: true, followed_by: false });

    await expect
      .poll(() => events.filter((e) => e.event === "pleroma:follow_relationships_update").length)
      .toBeGreaterThanOrEqual(2);
    const accept = events.find((e) => e.accountId === a.id && e.event === "pleroma:follow_relationships_update");
    expect(accept?.payload).toEqual({
      state: "follow_accept",
      follower: { id: a.id, follower_count: 0, following_count: 1 },
      following: { id: b.id, follower_count: 1, following_count: 0 },
    });

    expect(await post(`/api/v1/accounts/${b.id}/unfollow`, a)).toMatchObject({ following: false });
    expect(await counts(a)).toEqual({ followers: 0, following: 0 });
    expect(await counts(b)).toEqual({ followers: 0, following: 0 });
  });

  it("refuses following yourself, unknown accounts, and accounts that block you", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    expect((await post(`/api/v1/accounts/${a.id}/follow`, a, {}, 400)).error).toBe("Can not follow yourself");
    expect((await post("/api/v1/accounts/01ARZ3NDEKTSV4RRFFQ69G5FAV/follow", a, {}, 404)).error).toBe(
      "Can't find user",
    );
    await post(`/api/v1/accounts/${a.id}/block`, b);
    expect((await post(`/api/v1/accounts/${b.id}/follow`, a, {}, 403)).error).toMatch(/blocked you/);
    expect(await counts(b)).toEqual({ followers: 0, following: 0 });
  });

  it("honours reblogs and notify", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    expect(await post(`/api/v1/accounts/${b.id}/follow`, a, { reblogs: false })).toMatchObject({
      following: true,
      showing_reblogs: false,
      notifying: false,
    });
    expect(await post(`/api/v1/accounts/${b.id}/follow`, a, { reblogs: "true", notify: "true" })).toMatchObject({
      showing_reblogs: true,
      subscribing: true,
      notifying: true,
    });
    expect(await post(`/api/v1/accounts/${b.id}/follow`, a, { notify: false })).toMatchObject({
      subscribing: false,
      notifying: false,
    });
  });

  it("needs the follow or write:follows scope", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const readOnly = await json("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: a.app.client_id,
        client_secret: a.app.client_secret,
        username: a.username,
        password: a.password,
        scope: "read",
      },
    });
    const refused = await json(`/api/v1/accounts/${b.id}/follow`, {
      method: "POST",
      token: readOnly.access_token,
      status: 403,
    });
    expect(refused.error).toBe("Insufficient permissions: follow | write:follows.");
  });
});

describe("follow requests", () => {
  it("a locked account gets requests it can authorize or reject", async () => {
    const events = captureEvents();
    const [owner, fan, other] = [await registerUser(), await registerUser(), await registerUser()];
    await locked(owner);
    expect(await post(`/api/v1/accounts/${owner.id}/follow`, fan)).toMatchObject({ following: false, requested: true });
    await post(`/api/v1/accounts/${owner.id}/follow`, other);
    expect(await counts(owner)).toEqual({ followers: 0, following: 0 });
    const me = await json("/api/v1/accounts/verify_credentials", { token: owner.token });
    expect(me.follow_requests_count).toBe(2);

    const requests = await json("/api/v1/follow_requests", { token: owner.token });
    expect(requests.map((x: any) => x.id).sort()).toEqual([fan.id, other.id].sort());

    expect(await post(`/api/v1/follow_requests/${fan.id}/authorize`, owner)).toMatchObject({
      id: fan.id,
      followed_by: true,
    });
    expect(await rel(fan, owner)).toMatchObject({ following: true, requested: false });
    expect(await counts(owner)).toEqual({ followers: 1, following: 0 });

    expect(await post(`/api/v1/follow_requests/${other.id}/reject`, owner)).toMatchObject({ followed_by: false });
    expect(await rel(other, owner)).toMatchObject({ following: false, requested: false });
    expect(await json("/api/v1/follow_requests", { token: owner.token })).toEqual([]);

    // Nothing pending any more: both actions answer 404.
    await post(`/api/v1/follow_requests/${other.id}/authorize`, owner, {}, 404);
    await post(`/api/v1/follow_requests/${other.id}/reject`, owner, {}, 404);

    await expect
      .poll(() =>
        events
          .map((e) => e.event === "pleroma:follow_relationships_update" && e.accountId === fan.id && e.payload.state)
          .filter(Boolean),
      )
      .toEqual(["follow_pending", "follow_accept"]);
    await expect
      .poll(() =>
        events.some(
          (e) =>
            e.event === "pleroma:follow_relationships_update" &&
            e.accountId === other.id &&
            e.payload.state === "follow_reject",
        ),
      )
      .toBe(true);
  });

  it("unfollowing withdraws a pending request", async () => {
    const [owner, fan] = [await registerUser(), await registerUser()];
    await locked(owner);
    await post(`/api/v1/accounts/${owner.id}/follow`, fan);
    expect(await post(`/api/v1/accounts/${owner.id}/unfollow`, fan)).toMatchObject({ requested: false });
    expect(await json("/api/v1/follow_requests", { token: owner.token })).toEqual([]);
  });
});

describe("blocks, mutes, endorsements, subscriptions", () => {
  it("blocking removes follows both ways and list memberships", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    await post(`/api/v1/accounts/${b.id}/follow`, a);
    await post(`/api/v1/accounts/${a.id}/follow`, b);
    const list = await post("/api/v1/lists", a, { title: "friends" });
    await post(`/api/v1/lists/${list.id}/accounts`, a, { account_ids: [b.id] });
    expect(await post(`/api/v1/accounts/${b.id}/block`, a)).toMatchObject({
      blocking: true,
      following: false,
      followed_by: false,
    });
    expect(await rel(b, a)).toMatchObject({ blocked_by: true, following: false });
    expect(await counts(a)).toEqual({ followers: 0, following: 0 });
    expect(await counts(b)).toEqual({ followers: 0, following: 0 });
    expect(await json(`/api/v1/lists/${list.id}/accounts`, { token: a.token })).toEqual([]);
    const blocked = await json("/api/v1/blocks", { token: a.token });
    expect(blocked.map((x: any) => x.id)).toEqual([b.id]);
    expect(await post(`/api/v1/accounts/${b.id}/unblock`, a)).toMatchObject({ blocking: false });
    expect(await json("/api/v1/blocks", { token: a.token })).toEqual([]);
  });

  it("mutes with notifications and an expiry; an expired mute stops counting", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    expect(await post(`/api/v1/accounts/${b.id}/mute`, a, { notifications: false, expires_in: 3600 })).toMatchObject({
      muting: true,
      muting_notifications: false,
    });
    expect(await post(`/api/v1/accounts/${c.id}/mute`, a)).toMatchObject({ muting: true, muting_notifications: true });
    const muted = await json("/api/v1/mutes", { token: a.token });
    expect(muted.map((x: any) => x.id)).toEqual([c.id, b.id]);
    expect(muted[1].mute_expires_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(muted[0].mute_expires_at).toBeNull();
    await post(`/api/v1/accounts/${b.id}/mute`, a, { expires_in: "abc" }, 400);

    await env.DB.prepare("UPDATE mutes SET expires_at = ? WHERE account_id = ? AND target_account_id = ?")
      .bind(Date.now() - 1000, a.id, b.id)
      .run();
    expect(await rel(a, b)).toMatchObject({ muting: false });
    expect(await post(`/api/v1/accounts/${c.id}/unmute`, a)).toMatchObject({ muting: false });
  });

  it("takes Mastodon's `duration` as well as Pleroma's `expires_in` (seconds, 0 = forever)", async () => {
    const [a, b, c, e] = [await registerUser(), await registerUser(), await registerUser(), await registerUser()];
    const expiryOf = async (target: TestUser) => {
      const muted = (await json("/api/v1/mutes", { token: a.token })) as Record<string, unknown>[];
      const row = muted.find((x) => valid(AccountSchema, x).id === target.id);
      expect(row).toBeDefined();
      return row!.mute_expires_at as string | null;
    };
    const t0 = Date.now();
    valid(RelationshipSchema, await post(`/api/v1/accounts/${b.id}/mute`, a, { duration: 3600 }));
    let at = Date.parse((await expiryOf(b))!);
    expect(at).toBeGreaterThanOrEqual(t0 + 3590_000);
    expect(at).toBeLessThan(Date.now() + 3610_000);
    // As a form's string, and each name alone; 0 is forever.
    const form = new URLSearchParams({ duration: "600" });
    expect((await call(`/api/v1/accounts/${c.id}/mute`, { method: "POST", token: a.token, body: form })).status).toBe(
      200,
    );
    at = Date.parse((await expiryOf(c))!);
    expect(at).toBeGreaterThan(t0 + 590_000);
    expect(at).toBeLessThan(Date.now() + 610_000);
    await post(`/api/v1/accounts/${c.id}/mute`, a, { duration: 0 });
    expect(await expiryOf(c)).toBeNull();
    await post(`/api/v1/accounts/${e.id}/mute`, a, { expires_in: 120 });
    at = Date.parse((await expiryOf(e))!);
    expect(at).toBeLessThan(Date.now() + 130_000);
    // Both given: `duration` first, as Pleroma does.
    await post(`/api/v1/accounts/${e.id}/mute`, a, { duration: 7200, expires_in: 60 });
    expect(Date.parse((await expiryOf(e))!)).toBeGreaterThan(Date.now() + 7000_000);
    // Bad values are refused and change nothing.
    for (const duration of ["abc", -5, 9_000_000_000_000]) {
      const res = await call(`/api/v1/accounts/${b.id}/mute`, { method: "POST", token: a.token, body: { duration } });
      expect(res.status).toBe(400);
      expect(typeof ((await res.json()) as { error?: unknown }).error).toBe("string");
    }
    expect(Date.parse((await expiryOf(b))!)).toBeLessThan(Date.now() + 3610_000);
    expect(await rel(a, b)).toMatchObject({ muting: true });
  });

  it("endorses only followed accounts", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    expect((await post(`/api/v1/accounts/${b.id}/pin`, a, {}, 400)).error).toMatch(/not following/);
    await post(`/api/v1/accounts/${b.id}/follow`, a);
    expect(await post(`/api/v1/accounts/${b.id}/pin`, a)).toMatchObject({ endorsed: true });
    expect((await json("/api/v1/endorsements", { token: a.token })).map((x: any) => x.id)).toEqual([b.id]);
    expect((await json(`/api/v1/pleroma/accounts/${a.id}/endorsements`)).map((x: any) => x.id)).toEqual([b.id]);
    expect(await post(`/api/v1/accounts/${b.id}/unpin`, a)).toMatchObject({ endorsed: false });
    expect(await json("/api/v1/endorsements", { token: a.token })).toEqual([]);
  });

  it("subscribing and notifying change together", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    expect(await post(`/api/v1/pleroma/accounts/${b.id}/subscribe`, a)).toMatchObject({
      subscribing: true,
      notifying: true,
      following: false,
    });
    expect(await post(`/api/pleroma/accounts/${b.id}/unsubscribe`, a)).toMatchObject({
      subscribing: false,
      notifying: false,
    });
    await post(`/api/v1/pleroma/accounts/${a.id}/subscribe`, a, {}, 400);
  });
});

describe("domain blocks", () => {
  it("hides a domain and removes the followers the user has there", async () => {
    const a = await registerUser();
    const domain = `blocked-${Date.now()}.example`;
    const remoteId = newId();
    const t = Date.now();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?, 'troll', ?, ?, ?, ?, ?)",
      ).bind(remoteId, domain, `https://${domain}/users/troll`, `https://${domain}/@troll`, t, t),
      env.DB.prepare(
        "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 1, 0, ?)",
      ).bind(newId(), remoteId, a.id, t),
      env.DB.prepare("UPDATE accounts SET followers_count = 1 WHERE id = ?").bind(a.id),
    ]);
    expect(await post("/api/v1/domain_blocks", a, { domain: domain.toUpperCase() })).toEqual({});
    expect(await json("/api/v1/domain_blocks", { token: a.token })).toEqual([domain]);
    expect(await counts(a)).toEqual({ followers: 0, following: 0 });
    const r = (await json(`/api/v1/accounts/relationships?id[]=${remoteId}`, { token: a.token }))[0];
    expect(r).toMatchObject({ domain_blocking: true, followed_by: false });
    await post("/api/v1/domain_blocks", a, { domain: "not a domain" }, 400);
    expect(await json("/api/v1/domain_blocks", { method: "DELETE", token: a.token, body: { domain } })).toEqual({});
    expect(await json("/api/v1/domain_blocks", { token: a.token })).toEqual([]);
  });
});

describe("followers and following lists", () => {
  it("hide lists and counts from everyone but the owner", async () => {
    const [owner, fan, viewer] = [await registerUser(), await registerUser(), await registerUser()];
    await post(`/api/v1/accounts/${owner.id}/follow`, fan);
    await post(`/api/v1/accounts/${fan.id}/follow`, owner);
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: owner.token,
      body: { hide_followers: true, hide_follows: true, hide_followers_count: true, hide_follows_count: true },
    });
    expect(await json(`/api/v1/accounts/${owner.id}/followers`, { token: viewer.token })).toEqual([]);
    expect(await json(`/api/v1/accounts/${owner.id}/following`, { token: viewer.token })).toEqual([]);
    expect(
      (await json(`/api/v1/accounts/${owner.id}/followers`, { token: owner.token })).map((x: any) => x.id),
    ).toEqual([fan.id]);
    const seen = await json(`/api/v1/accounts/${owner.id}`, { token: viewer.token });
    expect([seen.followers_count, seen.following_count]).toEqual([0, 0]);
    const own = await json("/api/v1/accounts/verify_credentials", { token: owner.token });
    expect([own.followers_count, own.following_count]).toEqual([1, 1]);
    // The lists need a token, as the spec says.
    await json(`/api/v1/accounts/${fan.id}/followers`, { status: 403 });
  });

  it("pages with Link headers, newest first, each follower once", async () => {
    const star = await registerUser();
    const fans = [];
    for (let i = 0; i < 5; i++) {
      const f = await registerUser();
      await post(`/api/v1/accounts/${star.id}/follow`, f);
      fans.push(f.id);
    }
    const seen: string[] = [];
    let url: string | null = `/api/v1/accounts/${star.id}/followers?limit=2`;
    while (url) {
      const res = await call(url, { token: star.token });
      const page = (await res.json()) as { id: string }[];
      if (page.length === 0) break;
      seen.push(...page.map((x) => x.id));
      url = /<([^>]+)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1] ?? null;
    }
    expect(seen).toEqual([...fans].reverse());
  });

  it("costs the same number of D1 round trips for 1 or 6 followers, with relationships", async () => {
    const trips = async (n: number) => {
      const star = await registerUser();
      for (let i = 0; i < n; i++) await post(`/api/v1/accounts/${star.id}/follow`, await registerUser());
      const counter = countingD1();
      const res = await call(`/api/v1/accounts/${star.id}/followers?with_relationships=true`, {
        token: star.token,
        vars: { DB: counter.db } as never,
      });
      expect(((await res.json()) as unknown[]).length).toBe(n);
      return counter.count();
    };
    const one = await trips(1);
    expect(await trips(6)).toBe(one);
    expect(one).toBeLessThanOrEqual(4);
  });
});

describe("relationships", () => {
  it("are exact for every field across a matrix of pairs", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    await locked(c);
    await post(`/api/v1/accounts/${b.id}/follow`, a, { reblogs: false }); // a follows b without reblogs
    await post(`/api/v1/accounts/${a.id}/follow`, b); // b follows a
    await post(`/api/v1/accounts/${c.id}/follow`, b); // b requests c
    await post(`/api/v1/accounts/${c.id}/mute`, a, { notifications: false }); // a mutes c, not notifications
    await post(`/api/v1/accounts/${b.id}/mute`, c); // c mutes b with notifications
    await post(`/api/v1/accounts/${b.id}/pin`, a); // a endorses b
    await post(`/api/v1/pleroma/accounts/${a.id}/subscribe`, c); // c subscribes to a
    await post(`/api/v1/accounts/${a.id}/block`, c); // c blocks a (ends c's subscription to a)

    const F = {
      following: false,
      followed_by: false,
      blocking: false,
      blocked_by: false,
      muting: false,
      muting_notifications: false,
      subscribing: false,
      notifying: false,
      requested: false,
      domain_blocking: false,
      showing_reblogs: true,
      endorsed: false,
      note: "",
    };
    const expected: Record<string, Record<string, object>> = {
      [a.id]: {
        [b.id]: { ...F, id: b.id, following: true, followed_by: true, showing_reblogs: false, endorsed: true },
        [c.id]: { ...F, id: c.id, blocked_by: true, muting: true },
      },
      [b.id]: {
        [a.id]: { ...F, id: a.id, following: true, followed_by: true },
        [c.id]: { ...F, id: c.id, requested: true },
      },
      [c.id]: {
        [a.id]: { ...F, id: a.id, blocking: true },
        [b.id]: { ...F, id: b.id, muting: true, muting_notifications: true },
      },
    };
    for (const viewer of [a, b, c]) {
      const others = [a, b, c].filter((u) => u !== viewer);
      const rels = await json(`/api/v1/accounts/relationships?${others.map((o) => `id[]=${o.id}`).join("&")}`, {
        token: viewer.token,
      });
      expect(rels.map((r: object) => valid(RelationshipSchema, r))).toEqual(
        others.map((o) => expected[viewer.id][o.id]),
      );
    }
    expect(await json("/api/v1/accounts/relationships", { token: a.token })).toEqual([]);
  });
});

describe("remove from followers, account notes", () => {
  const rel = async (me: TestUser, id: string, action: string, body?: Record<string, unknown>, status = 200) =>
    json(`/api/v1/accounts/${id}/${action}`, { method: "POST", token: me.token, body: body ?? {}, status });

  it("remove_from_followers ends the follower's follow (counted), sends a remote one's server a Reject, and needs follow", async () => {
    const [me, fan] = [await registerUser(), await registerUser()];
    await rel(fan, me.id, "follow");
    expect(valid(RelationshipSchema, await rel(me, fan.id, "remove_from_followers"))).toMatchObject({
      followed_by: false,
      following: false,
    });
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${me.id}`, { token: me.token })).followers_count).toBe(0);
    expect(
      valid(RelationshipSchema, (await json(`/api/v1/accounts/relationships?id[]=${me.id}`, { token: fan.token }))[0])
        .following,
    ).toBe(false);
    // A local follower: nothing to send.
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM federation_outbox WHERE account_id = ?")
        .bind(me.id)
        .first<{ n: number }>())!.n,
    ).toBe(0);
    // A remote follower: a Reject of its Follow goes to its server.
    const farId = newId();
    const domain = `far${Date.now()}.example`;
    const t = Date.now();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO accounts (id, username, domain, uri, url, inbox_url, created_at, updated_at) VALUES (?, 'far', ?, ?, ?, ?, ?, ?)",
      ).bind(
        farId,
        domain,
        `https://${domain}/users/far`,
        `https://${domain}/@far`,
        `https://${domain}/users/far/inbox`,
        t,
        t,
      ),
      env.DB.prepare(
        "INSERT INTO follows (id, account_id, target_account_id, created_at, uri) VALUES (?, ?, ?, ?, ?)",
      ).bind(newId(), farId, me.id, t, `https://${domain}/follows/1`),
    ]);
    await rel(me, farId, "remove_from_followers");
    const rows = (
      await env.DB.prepare("SELECT activity FROM federation_outbox WHERE account_id = ?")
        .bind(me.id)
        .all<{ activity: string }>()
    ).results;
    expect(rows.map((r) => JSON.parse(r.activity))).toEqual([
      expect.objectContaining({ type: "Reject", uri: `https://${domain}/follows/1`, followerId: farId }),
    ]);
    expect(await env.DB.prepare("SELECT id FROM follows WHERE account_id = ?").bind(farId).first()).toBeNull();
    // Not a follower (any more): nothing changes, nothing is sent.
    await rel(me, farId, "remove_from_followers");
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM federation_outbox WHERE account_id = ?")
        .bind(me.id)
        .first<{ n: number }>())!.n,
    ).toBe(1);
    // Scopes, and oneself.
    const readOnly = await registerUser({ scopes: "read" });
    expect(
      (await call(`/api/v1/accounts/${me.id}/remove_from_followers`, { method: "POST", token: readOnly.token })).status,
    ).toBe(403);
    expect(
      (await call(`/api/v1/accounts/${me.id}/remove_from_followers`, { method: "POST", token: me.token })).status,
    ).toBe(400);
  });

  it("a private note on an account shows in the author's relationship only; empty removes it; too long is 422", async () => {
    const [me, them, other] = [await registerUser(), await registerUser(), await registerUser()];
    const set = valid(RelationshipSchema, await rel(me, them.id, "note", { comment: "met at the café" }));
    expect(set.note).toBe("met at the café");
    expect(
      valid(RelationshipSchema, (await json(`/api/v1/accounts/relationships?id[]=${them.id}`, { token: me.token }))[0])
        .note,
    ).toBe("met at the café");
    // Nobody else sees it, not even its subject.
    expect(
      valid(
        RelationshipSchema,
        (await json(`/api/v1/accounts/relationships?id[]=${them.id}`, { token: other.token }))[0],
      ).note,
    ).toBe("");
    expect(
      valid(RelationshipSchema, (await json(`/api/v1/accounts/relationships?id[]=${me.id}`, { token: them.token }))[0])
        .note,
    ).toBe("");
    // Form-encoded, as Pleroma-FE sends it; then emptied.
    expect(
      (
        await json(`/api/v1/accounts/${them.id}/note`, {
          method: "POST",
          token: me.token,
          body: { comment: "second" },
          form: true,
        })
      ).note,
    ).toBe("second");
    expect((await rel(me, them.id, "note", { comment: "" })).note).toBe("");
    expect(
      await env.DB.prepare("SELECT comment FROM account_notes WHERE account_id = ?").bind(me.id).first(),
    ).toBeNull();
    expect(await rel(me, them.id, "note", { comment: "x".repeat(2_001) }, 422)).toHaveProperty("error");
    const readOnly = await registerUser({ scopes: "read follow" });
    expect(
      (
        await call(`/api/v1/accounts/${them.id}/note`, {
          method: "POST",
          token: readOnly.token,
          body: { comment: "hi" },
        })
      ).status,
    ).toBe(403);
    expect(
      (await call(`/api/v1/accounts/${newId()}/note`, { method: "POST", token: me.token, body: { comment: "hi" } }))
        .status,
    ).toBe(404);
  });
});
