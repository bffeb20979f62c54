/**
 * Aliases and moves (Pleroma's `aliases`, `move_account`; ActivityPub `Move` both ways between two instances).
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { moveFollowers, NOT_ALIASED } from "../src/services/move";
import { HealthcheckSchema } from "../src/schemas/instance";
import { failingD1 } from "./failing-d1";
import { AccountSchema, RelationshipSchema } from "../src/schemas/account";
import { NotificationSchema } from "../src/schemas/social";
import { BASE, call, json, registerUser, valid, type TestUser } from "./helpers";
import { A, B, federating, type Instance, findRemote } from "./instances";

const aliases = (u: TestUser, inst?: Instance) => json("/api/pleroma/aliases", { token: u.token, instance: inst });

async function runCron(at: number) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(at), cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

const pendingMoves = async (originId: string) =>
  (
    await env.DB.prepare("SELECT attempts FROM pending_moves WHERE origin_id = ?")
      .bind(originId)
      .all<{ attempts: number }>()
  ).results;

/** `old` (followed by `followers`) moves to `neu`, which lists it first; the request's bindings may be others. */
async function moveWithFollowers(bindings?: typeof env) {
  const [old, neu] = [await registerUser(), await registerUser()];
  const followers = [await registerUser(), await registerUser()];
  for (const f of followers) await json(`/api/v1/accounts/${old.id}/follow`, { method: "POST", token: f.token });
  await json("/api/pleroma/aliases", { method: "PUT", token: neu.token, body: { alias: old.username } });
  const res = await call("/api/pleroma/move_account", {
    method: "POST",
    token: old.token,
    body: { password: old.password, target_account: neu.username },
    instance: bindings && { origin: BASE, bindings },
  });
  expect([res.status, await res.json()]).toEqual([200, { status: "success" }]);
  return { old, neu, followers };
}

async function relationship(user: TestUser, id: string, instance?: Instance) {
  const [r] = await json(`/api/v1/accounts/relationships?id[]=${id}`, { token: user.token, instance });
  return valid(RelationshipSchema, r);
}

describe("aliases", () => {
  it("lists, adds and removes aliases by nickname, with Pleroma's errors", async () => {
    const [me, other, third] = [await registerUser(), await registerUser(), await registerUser()];
    expect(await aliases(me)).toEqual({ aliases: [] });
    expect(
      await json("/api/pleroma/aliases", { method: "PUT", token: me.token, body: { alias: other.username } }),
    ).toEqual({ status: "success" });
    // Twice is the same; `user@host` names the same local account.
    expect(
      await json("/api/v1/pleroma/aliases", {
        method: "PUT",
        token: me.token,
        body: { alias: `${other.username}@localhost` },
      }),
    ).toEqual({ status: "success" });
    expect(await aliases(me)).toEqual({ aliases: [`${other.username}@localhost`] });
    const mine = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: me.token }));
    expect(mine.pleroma.also_known_as).toEqual([`http://localhost/users/${other.username}`]);
    // Someone else's list is their own.
    expect(await aliases(other)).toEqual({ aliases: [] });

    let res = await call("/api/pleroma/aliases", {
      method: "PUT",
      token: me.token,
      body: { alias: "nobody_here_at_all" },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Target account does not exist." });
    res = await call("/api/pleroma/aliases", { method: "PUT", token: me.token, body: {} });
    expect(res.status).toBe(400);
    expect((await res.json<{ error: string }>()).error).toMatch(/alias/);
    res = await call("/api/pleroma/aliases", { method: "PUT", token: me.token, body: { alias: me.username } });
    expect(res.status).toBe(400);
    res = await call("/api/pleroma/aliases", { method: "DELETE", token: me.token, body: { alias: third.username } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Account has no such alias." });
    expect((await call("/api/pleroma/aliases")).status).toBe(403);

    expect(
      await json("/api/pleroma/aliases", { method: "DELETE", token: me.token, body: { alias: other.username } }),
    ).toEqual({ status: "success" });
    expect(await aliases(me)).toEqual({ aliases: [] });
  });
});

describe("move_account", () => {
  it("refuses a wrong password, an unknown target and a target that does not list the origin", async () => {
    const [me, target] = [await registerUser(), await registerUser()];
    let res = await call("/api/pleroma/move_account", {
      method: "POST",
      token: me.token,
      body: { password: "wrong", target_account: target.username },
    });
    expect([res.status, await res.json()]).toEqual([200, { error: "Invalid password." }]);
    res = await call("/api/pleroma/move_account", {
      method: "POST",
      token: me.token,
      body: { password: me.password, target_account: "no_such_one" },
    });
    expect([res.status, await res.json()]).toEqual([404, { error: "Target account not found." }]);
    // The target has no alias yet.
    res = await call("/api/pleroma/move_account", {
      method: "POST",
      token: me.token,
      body: { password: me.password, target_account: target.username },
    });
    expect([res.status, await res.json()]).toEqual([200, { error: NOT_ALIASED }]);
    // An alias the wrong way round (the origin listing the target) is not enough.
    await json("/api/pleroma/aliases", { method: "PUT", token: me.token, body: { alias: target.username } });
    res = await call("/api/pleroma/move_account", {
      method: "POST",
      token: me.token,
      body: { password: me.password, target_account: target.username },
    });
    expect(await res.json()).toEqual({ error: NOT_ALIASED });
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${me.id}`)).moved).toBeUndefined();
  });

  it("moves: `moved` shown, followers notified, those who allow it follow the target", async () => {
    const [old, neu, mover, stayer] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: stayer.token,
      body: { allow_following_move: false },
    });
    for (const f of [mover, stayer])
      await json(`/api/v1/accounts/${old.id}/follow`, { method: "POST", token: f.token });
    expect(
      await json("/api/pleroma/aliases", { method: "PUT", token: neu.token, body: { alias: old.username } }),
    ).toEqual({ status: "success" });

    expect(
      await json("/api/pleroma/move_account", {
        method: "POST",
        token: old.token,
        body: { password: old.password, target_account: neu.username },
      }),
    ).toEqual({ status: "success" });
    const shown = valid(AccountSchema, await json(`/api/v1/accounts/${old.id}`, { token: mover.token }));
    expect(shown.moved).toMatchObject({ id: neu.id, acct: neu.username });
    valid(AccountSchema, shown.moved);
    expect(
      valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: old.token })).moved,
    ).toMatchObject({ id: neu.id });

    for (const f of [mover, stayer]) {
      const notes = ((await json("/api/v1/notifications", { token: f.token })) as unknown[]).map((n) =>
        valid(NotificationSchema, n),
      );
      const move = notes.find((n) => n.type === "move");
      expect(move?.account.id).toBe(old.id);
      expect((move as any).target.id).toBe(neu.id);
    }
    // The followers move in the background (the cron's job), only those who allow it.
    while ((await moveFollowers((await import("cloudflare:test")).env)) > 0);
    expect(await relationship(mover, neu.id)).toMatchObject({ following: true });
    expect(await relationship(mover, old.id)).toMatchObject({ following: false });
    expect(await relationship(stayer, neu.id)).toMatchObject({ following: false });
    expect(await relationship(stayer, old.id)).toMatchObject({ following: true });
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${neu.id}`)).followers_count).toBe(1);
  });
});

describe("moving followers", () => {
  it("happens at once, after the answer: no cron run needed, nothing left for the cron", async () => {
    const { old, neu, followers } = await moveWithFollowers();
    for (const f of followers) {
      expect(await relationship(f, neu.id)).toMatchObject({ following: true });
      expect(await relationship(f, old.id)).toMatchObject({ following: false });
    }
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${neu.id}`)).followers_count).toBe(2);
    expect(await pendingMoves(old.id)).toEqual([]);
    expect(await moveFollowers(env)).toBe(0);
  });

  it("a pass that failed is retried by the cron, once its time has come; the job's heartbeat shows a failed retry", async () => {
    // The database fails the pass (its look for the followers to move), after the move itself was committed.
    const { old, neu, followers } = await moveWithFollowers({ ...env, DB: failingD1(/allow_following_move = 1/) });
    for (const f of followers) {
      expect(await relationship(f, neu.id)).toMatchObject({ following: false });
      expect(await relationship(f, old.id)).toMatchObject({ following: true });
    }
    expect(await pendingMoves(old.id)).toEqual([{ attempts: 0 }]);
    const t = Date.now();
    // Not before the pass has had its time: the cron leaves it.
    await runCron(t + 60_000);
    expect(await relationship(followers[0]!, neu.id)).toMatchObject({ following: false });
    expect(await pendingMoves(old.id)).toEqual([{ attempts: 0 }]);
    // A retry that fails again is counted and shown in the job's heartbeat; the next one goes through.
    const ctx = createExecutionContext();
    await worker.scheduled(
      createScheduledController({ scheduledTime: new Date(t + 6 * 60_000), cron: "* * * * *" }),
      { ...env, DB: failingD1(/allow_following_move = 1/) },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(await pendingMoves(old.id)).toEqual([{ attempts: 1 }]);
    const failed = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck")).job_queue_stats.jobs as Record<
      string,
      { ok: boolean; last_error: string | null }
    >;
    expect(failed.account_moves).toMatchObject({ ok: false, last_error: "failed" });
    await runCron(t + 30 * 60_000);
    for (const f of followers) {
      expect(await relationship(f, neu.id)).toMatchObject({ following: true });
      expect(await relationship(f, old.id)).toMatchObject({ following: false });
    }
    expect(await pendingMoves(old.id)).toEqual([]);
    const jobs = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck")).job_queue_stats.jobs as Record<
      string,
      { ok: boolean }
    >;
    expect(jobs.account_moves).toMatchObject({ ok: true });
  });
});

describe("Move between two instances", () => {
  const fed = federating();
  const { settle } = fed;

  it("a Move reaches the followers' instance, which checks the target's aliases and moves its local followers", async () => {
    const alice = await registerUser({ instance: A });
    const aliceNew = await registerUser({ instance: B });
    const bob = await registerUser({ instance: B });
    const aliceOnB = await findRemote(bob, B, alice, A);
    await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { instance: B, token: bob.token, body: {} });
    await settle();
    expect(await relationship(bob, aliceOnB.id, B)).toMatchObject({ following: true });

    // The new account (on B) lists the old one (on A), resolved by its nickname there.
    expect(
      await json("/api/pleroma/aliases", {
        instance: B,
        method: "PUT",
        token: aliceNew.token,
        body: { alias: `${alice.username}@a.example` },
      }),
    ).toEqual({ status: "success" });
    // A refetches the target and finds its alias.
    expect(
      await json("/api/pleroma/move_account", {
        instance: A,
        method: "POST",
        token: alice.token,
        body: { password: alice.password, target_account: `${aliceNew.username}@b.example` },
      }),
    ).toEqual({ status: "success" });
    // The actor document says where it went.
    const actorDoc = await (
      await call(`/users/${alice.username}`, { instance: A, headers: { Accept: "application/activity+json" } })
    ).json<{ movedTo: string }>();
    expect(actorDoc.movedTo).toBe(`https://b.example/users/${aliceNew.username}`);
    fed.routed.requests.length = 0;
    await settle();
    const sent = await Promise.all(
      fed.routed.requests
        .filter((r) => r.method === "POST" && new URL(r.url).host === "b.example")
        .map(async (r) => (await r.clone().json()) as Record<string, unknown>),
    );
    expect(sent.find((a) => a.type === "Move")).toMatchObject({
      actor: `https://a.example/users/${alice.username}`,
      object: `https://a.example/users/${alice.username}`,
      target: `https://b.example/users/${aliceNew.username}`,
    });
    // B: Bob is told, and (allowing moves by default) follows the new account once B's job runs.
    const notes = ((await json("/api/v1/notifications", { instance: B, token: bob.token })) as unknown[]).map((n) =>
      valid(NotificationSchema, n),
    );
    expect(notes.find((n) => n.type === "move")).toMatchObject({
      account: { id: aliceOnB.id },
      target: { id: aliceNew.id },
    });
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${aliceOnB.id}`, { instance: B })).moved).toMatchObject({
      id: aliceNew.id,
    });
    // Bob followed the new account on the Move's arrival, without waiting for B's cron.
    expect(await relationship(bob, aliceNew.id, B)).toMatchObject({ following: true });
    while ((await moveFollowers(B.bindings)) > 0);
    await settle();
    expect(await relationship(bob, aliceNew.id, B)).toMatchObject({ following: true });
    expect(await relationship(bob, aliceOnB.id, B)).toMatchObject({ following: false });
  });

  it("an incoming Move to a target that does not list the origin is ignored", async () => {
    const carol = await registerUser({ instance: A });
    const dan = await registerUser({ instance: B });
    const stranger = await registerUser({ instance: B });
    const carolOnB = await findRemote(dan, B, carol, A);
    await json(`/api/v1/accounts/${carolOnB.id}/follow`, { instance: B, token: dan.token, body: {} });
    await settle();
    const strangerOnA = await findRemote(carol, A, stranger, B);
    // A refuses the move (the target lists nobody)...
    const refused = await json("/api/pleroma/move_account", {
      instance: A,
      method: "POST",
      token: carol.token,
      body: { password: carol.password, target_account: `${stranger.username}@b.example` },
    });
    expect(refused).toEqual({ error: NOT_ALIASED });
    // ...so a Move is put in A's outbox by hand, as a server that skipped the check would send it: B checks itself.
    const { env } = await import("cloudflare:test");
    await env.DB.prepare("INSERT INTO federation_outbox (id, account_id, activity, created_at) VALUES (?, ?, ?, ?)")
      .bind(`zz${Date.now()}`, carol.id, JSON.stringify({ type: "Move", targetId: strangerOnA.id }), Date.now())
      .run();
    fed.routed.requests.length = 0;
    await settle();
    const sent = await Promise.all(
      fed.routed.requests
        .filter((r) => r.method === "POST" && new URL(r.url).host === "b.example")
        .map(async (r) => (await r.clone().json()) as Record<string, unknown>),
    );
    expect(sent.map((a) => a.type)).toContain("Move");
    const notes = (await json("/api/v1/notifications", { instance: B, token: dan.token })) as { type: string }[];
    expect(notes.map((n) => n.type)).not.toContain("move");
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${carolOnB.id}`, { instance: B })).moved).toBeUndefined();
    expect(await relationship(dan, carolOnB.id, B)).toMatchObject({ following: true });
  });
});
