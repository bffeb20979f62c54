/** Background work: isolated cron jobs with heartbeats, scheduled-post retries, collection, races, batched notifications. */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../src/index";
import { newId } from "../src/db/ids";
import { HealthcheckSchema } from "../src/schemas/instance";
import { RelationshipSchema } from "../src/schemas/account";
import { ScheduledStatusSchema, StatusSchema } from "../src/schemas/status";
import { TokenSchema } from "../src/schemas/oauth";
import { sha256 } from "../src/lib/crypto";
import {
  call,
  freshIp,
  json,
  makeAdmin,
  makeApp,
  appToken,
  post,
  registerUser,
  remoteAccount,
  uniqueName,
  upload,
  valid,
} from "./helpers";
import { failingD1 } from "./failing-d1";
import { openSocket } from "./streams";
import { dnsAnswer } from "./outbound";
import { userObject } from "../src/objects/streams";

const DAY = 86_400_000;

async function runCron(at: number, db: D1Database = env.DB) {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: new Date(at), cron: "* * * * *" }),
    { ...env, DB: db } as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

const one = async <T = any>(sql: string, ...args: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...args)
    .first<T>();
const count = async (sql: string, ...args: unknown[]) =>
  (await one<{ n: number }>(`SELECT count(*) AS n FROM ${sql}`, ...args))!.n;

describe("cron isolation and heartbeats", () => {
  it("runs every job when one fails, and the healthcheck shows each job's heartbeat", async () => {
    const a = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: "short-lived" }));
    await env.DB.prepare("UPDATE statuses SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1000, s.id)
      .run();
    const t = Date.now() + 1000;
    // The polls job cannot read its table; the jobs after it (expired statuses) must still run.
    await runCron(t, failingD1(/FROM polls p JOIN statuses/));
    expect(await count("statuses WHERE id = ?", s.id)).toBe(0);
    // What the job said is shown to admins only; anyone else sees that it failed.
    const anonymous = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck"));
    expect((anonymous.job_queue_stats.jobs as Record<string, any>).polls).toMatchObject({
      ok: false,
      last_error: "failed",
    });
    await makeAdmin(a.id);
    const health = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck", { token: a.token }));
    expect(health.healthy).toBe(true);
    expect(health.job_queue_stats.cron_last_run_at).toBe(new Date(t).toISOString());
    const jobs = health.job_queue_stats.jobs as Record<string, any>;
    expect(jobs.polls).toMatchObject({
      last_run_at: new Date(t).toISOString(),
      ok: false,
      last_error_at: new Date(t).toISOString(),
    });
    expect(jobs.polls.last_error).toMatch(/injected failure/);
    expect(jobs.expired_statuses).toMatchObject({
      last_run_at: new Date(t).toISOString(),
      last_success_at: new Date(t).toISOString(),
      ok: true,
    });
    for (const name of [
      "scheduled_statuses",
      "push",
      "collect_media",
      "collect_presence",
      "collect_codes",
      "collect_mail",
      "collect_idempotency_keys",
      "rate_limits",
    ]) {
      expect(jobs[name], name).toMatchObject({ ok: true });
    }
    // The next good run clears the failure; the last error stays visible with its time.
    await runCron(t + 60_000);
    const after = (
      valid(HealthcheckSchema, await json("/api/pleroma/healthcheck")).job_queue_stats.jobs as Record<string, any>
    ).polls;
    expect(after).toMatchObject({
      ok: true,
      last_success_at: new Date(t + 60_000).toISOString(),
      last_error_at: new Date(t).toISOString(),
    });
  });

  it("a job that keeps succeeding writes no heartbeat row of its own, and the healthcheck shows it run with the cron", async () => {
    // Minutes 5 and 6 of the next hour: never the hourly jobs' minute, whatever the wall clock says.
    const t = (Math.floor(Date.now() / 3_600_000) + 1) * 3_600_000 + 5 * 60_000;
    await runCron(t);
    const rows = async () =>
      (await env.DB.prepare("SELECT * FROM job_heartbeats WHERE name <> 'storage' ORDER BY name").all()).results;
    const before = await rows();
    await runCron(t + 60_000);
    // Only the cron's own heartbeat moved (the storage figure is kept when it changes).
    expect(await rows()).toEqual(before);
    const health = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck"));
    const at = new Date(t + 60_000).toISOString();
    expect(health.job_queue_stats.cron_last_run_at).toBe(at);
    const jobs = health.job_queue_stats.jobs as Record<string, { last_run_at: string; last_success_at: string }>;
    for (const name of ["polls", "expired_statuses", "push", "account_moves", "federation", "collect_mail"])
      expect(jobs[name], name).toMatchObject({ last_run_at: at, last_success_at: at, ok: true });
    // A job that failed once keeps its error's time next to the later successes.
    expect(jobs.polls).toMatchObject({ last_error_at: expect.any(String) });
  });

  it("a job failing before the others start does not stop them either", async () => {
    const a = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: "bye" }));
    await env.DB.prepare("UPDATE statuses SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1000, s.id)
      .run();
    // Every clean-up job and the scheduled posts fail: expired statuses are still deleted.
    await runCron(
      Date.now(),
      failingD1(/rate_limits|scheduled_statuses|mail_outbox|idempotency_keys|authorization_codes|stream_presence/),
    );
    expect(await count("statuses WHERE id = ?", s.id)).toBe(0);
  });
});

describe("scheduled statuses of a disabled account", () => {
  it("are not published (nor delivered) while the account is disabled", async () => {
    const a = await registerUser();
    const at = Date.now() + 10 * 60_000;
    const sch = valid(
      ScheduledStatusSchema,
      await post(a, { status: "from beyond", scheduled_at: new Date(at).toISOString() }),
    );
    expect(
      await json("/api/pleroma/disable_account", { method: "POST", token: a.token, body: { password: a.password } }),
    ).toEqual({ status: "success" });
    await runCron(at + 1000);
    expect(await count("statuses WHERE account_id = ?", a.id)).toBe(0);
    expect(await count("federation_outbox WHERE account_id = ?", a.id)).toBe(0);
    // Kept, unposted, with its attempts untouched (nothing failed).
    expect(await one("SELECT attempts FROM scheduled_statuses WHERE id = ?", sch.id)).toEqual({ attempts: 0 });
  });
});

describe("scheduled statuses that are posted", () => {
  it("are followed by what follows a post through the API: the link card is fetched", async () => {
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      const dns = dnsAnswer(url, { "later.example": ["93.184.215.14"] });
      if (dns) return dns;
      if (url === "https://later.example/page")
        return new Response("<html><head><title>Read later</title></head></html>", {
          headers: { "content-type": "text/html" },
        });
      return new Response("nope", { status: 404 });
    });
    try {
      const a = await registerUser();
      const at = Date.now() + 10 * 60_000;
      await post(a, { status: "see https://later.example/page", scheduled_at: new Date(at).toISOString() });
      await runCron(at + 1000);
      const [posted] = await json(`/api/v1/accounts/${a.id}/statuses`, { token: a.token });
      // The card was fetched after the post's batch, as the API's post does: the status shows it.
      expect(valid(StatusSchema, posted).card).toMatchObject({
        title: "Read later",
        url: "https://later.example/page",
      });
    } finally {
      spy.mockRestore();
    }
  });
});

describe("scheduled statuses that fail", () => {
  it("keeps a post that failed for a transient reason, with its attempts, and posts it on a later run", async () => {
    const a = await registerUser();
    const [m, m2] = [await upload(a), await upload(a)];
    const at = Date.now() + 10 * 60_000;
    const sch = valid(
      ScheduledStatusSchema,
      await post(a, { status: "eventually", media_ids: [m.id, m2.id], scheduled_at: new Date(at).toISOString() }),
    );
    await runCron(at + 1000, failingD1(/INSERT INTO "statuses"|INSERT INTO statuses/));
    const row = await one<{ attempts: number; last_error: string }>(
      "SELECT attempts, last_error FROM scheduled_statuses WHERE id = ?",
      sch.id,
    );
    expect(row).toMatchObject({ attempts: 1 });
    expect(row!.last_error).toMatch(/injected failure/);
    // Still listed, with its media.
    const kept = valid(ScheduledStatusSchema, await json(`/api/v1/scheduled_statuses/${sch.id}`, { token: a.token }));
    expect(kept.media_attachments.map((x) => x.id)).toEqual([m.id, m2.id]);
    await runCron(at + 61_000);
    await json(`/api/v1/scheduled_statuses/${sch.id}`, { token: a.token, status: 404 });
    const posted = await json(`/api/v1/accounts/${a.id}/statuses`, { token: a.token });
    expect(posted).toHaveLength(1);
    const st = valid(StatusSchema, posted[0]);
    expect(st.content).toContain("eventually");
    expect(st.media_attachments.map((x) => x.id)).toEqual([m.id, m2.id]);
  });

  it("gives up after the attempts allowed, releasing the media", async () => {
    const a = await registerUser();
    const m = await upload(a);
    const at = Date.now() + 10 * 60_000;
    const sch = valid(
      ScheduledStatusSchema,
      await post(a, { status: "never", media_ids: [m.id], scheduled_at: new Date(at).toISOString() }),
    );
    await env.DB.prepare("UPDATE scheduled_statuses SET attempts = 9 WHERE id = ?").bind(sch.id).run();
    await runCron(at + 1000, failingD1(/INSERT INTO "statuses"|INSERT INTO statuses/));
    await json(`/api/v1/scheduled_statuses/${sch.id}`, { token: a.token, status: 404 });
    expect(await count("media_attachments WHERE id = ? AND scheduled_status_id IS NULL", m.id)).toBe(1);
    expect(await json(`/api/v1/accounts/${a.id}/statuses`, { token: a.token })).toEqual([]);
  });

  it("drops at once a post that can never be made (its reply target is gone)", async () => {
    const a = await registerUser();
    const target = valid(StatusSchema, await post(a, { status: "parent" }));
    const m = await upload(a);
    const at = Date.now() + 10 * 60_000;
    const sch = valid(
      ScheduledStatusSchema,
      await post(a, {
        status: "reply",
        in_reply_to_id: target.id,
        media_ids: [m.id],
        scheduled_at: new Date(at).toISOString(),
      }),
    );
    await json(`/api/v1/statuses/${target.id}`, { method: "DELETE", token: a.token });
    await runCron(at + 1000);
    await json(`/api/v1/scheduled_statuses/${sch.id}`, { token: a.token, status: 404 });
    expect(await count("media_attachments WHERE id = ? AND scheduled_status_id IS NULL", m.id)).toBe(1);
    expect(await count("scheduled_statuses WHERE id = ?", sch.id)).toBe(0);
  });
});

describe("collection", () => {
  it("deletes uploads left unattached for a day, with their files, and nothing attached", async () => {
    const a = await registerUser();
    const [loose, fresh, onStatus, onScheduled] = [await upload(a), await upload(a), await upload(a), await upload(a)];
    await post(a, { status: "with media", media_ids: [onStatus.id] });
    await post(a, {
      status: "later",
      media_ids: [onScheduled.id],
      scheduled_at: new Date(Date.now() + 3 * DAY).toISOString(),
    });
    const old = Date.now() - 2 * DAY;
    for (const m of [loose, onStatus, onScheduled])
      await env.DB.prepare("UPDATE media_attachments SET created_at = ? WHERE id = ?").bind(old, m.id).run();
    const file = async (id: string) =>
      (await one<{ file: string }>("SELECT file FROM media_attachments WHERE id = ?", id))!.file;
    const looseKey = await file(loose.id);
    const keptKeys = [await file(fresh.id), await file(onStatus.id), await file(onScheduled.id)];
    expect(await env.MEDIA.head(looseKey)).not.toBeNull();
    await runCron(Date.now());
    expect(await count("media_attachments WHERE id = ?", loose.id)).toBe(0);
    expect(await env.MEDIA.head(looseKey)).toBeNull();
    for (const m of [fresh, onStatus, onScheduled]) expect(await count("media_attachments WHERE id = ?", m.id)).toBe(1);
    for (const k of keptKeys) expect(await env.MEDIA.head(k)).not.toBeNull();
    // The client sees it gone.
    await json(`/api/v1/media/${loose.id}`, { token: a.token, status: 404 });
    // Running again deletes nothing more.
    await runCron(Date.now());
    for (const m of [fresh, onStatus, onScheduled]) expect(await count("media_attachments WHERE id = ?", m.id)).toBe(1);
  });

  it("deletes expired idempotency keys, used or expired codes, spent captchas and old outbox mail", async () => {
    const a = await registerUser();
    const t = Date.now();
    const oldKey = uniqueName("k");
    const newKey = uniqueName("k");
    await post(a, { status: "once" }, 200, { "Idempotency-Key": oldKey });
    await post(a, { status: "twice" }, 200, { "Idempotency-Key": newKey });
    await env.DB.prepare("UPDATE idempotency_keys SET created_at = ? WHERE account_id = ? AND key = ?")
      .bind(t - 7 * 3600_000, a.id, oldKey)
      .run();
    const code = (used: number | null, expires: number) =>
      env.DB.prepare(
        "INSERT INTO authorization_codes (id, code_hash, app_id, account_id, scopes, redirect_uri, used_at, created_at, expires_at) VALUES (?, ?, (SELECT id FROM apps WHERE client_id = ?), ?, 'read', 'urn:ietf:wg:oauth:2.0:oob', ?, ?, ?) RETURNING id",
      )
        .bind(newId(), crypto.randomUUID(), a.app.client_id, a.id, used, t, expires)
        .first<{ id: string }>();
    const [used, expired, live] = [
      await code(t - 1000, t + 600_000),
      await code(null, t - 1000),
      await code(null, t + 600_000),
    ];
    const captcha = uniqueName("c");
    const liveCaptcha = uniqueName("c");
    await env.DB.batch([
      env.DB.prepare("INSERT INTO used_captchas (token, expires_at) VALUES (?, ?)").bind(captcha, t - 1000),
      env.DB.prepare("INSERT INTO used_captchas (token, expires_at) VALUES (?, ?)").bind(liveCaptcha, t + 600_000),
    ]);
    const mail = (at: number) =>
      env.DB.prepare(
        "INSERT INTO mail_outbox (id, \"to\", \"from\", subject, text, html, created_at) VALUES (?, 'x@example.com', 'y@example.com', 's', 't', 'h', ?) RETURNING id",
      )
        .bind(newId(), at)
        .first<{ id: string }>();
    const [oldMail, newMail] = [await mail(t - 8 * DAY), await mail(t - DAY)];
    await runCron(t);
    expect(await count("idempotency_keys WHERE account_id = ? AND key = ?", a.id, oldKey)).toBe(0);
    expect(await count("idempotency_keys WHERE account_id = ? AND key = ?", a.id, newKey)).toBe(1);
    expect(await count("authorization_codes WHERE id IN (?, ?)", used!.id, expired!.id)).toBe(0);
    expect(await count("authorization_codes WHERE id = ?", live!.id)).toBe(1);
    expect(await count("used_captchas WHERE token = ?", captcha)).toBe(0);
    expect(await count("used_captchas WHERE token = ?", liveCaptcha)).toBe(1);
    expect(await count("mail_outbox WHERE id = ?", oldMail!.id)).toBe(0);
    expect(await count("mail_outbox WHERE id = ?", newMail!.id)).toBe(1);
    // The key still answers within its window.
    await post(a, { status: "twice" }, 200, { "Idempotency-Key": newKey });
    expect(await json(`/api/v1/accounts/${a.id}/statuses`, { token: a.token })).toHaveLength(2);
  });

  it("removes presence rows of connections that died with their object, and keeps live ones", async () => {
    const a = await registerUser();
    const socket = await openSocket(`stream=user&access_token=${a.token}`);
    const deadObject = `user:${newId()}`;
    await env.DB.prepare(
      "INSERT INTO stream_presence (object, account_id, token_id, stream, arg, created_at, seen_at) VALUES (?, ?, 'gone', 'user', '', 0, 0)",
    )
      .bind(deadObject, a.id)
      .run();
    // The live connection's rows look as old as the dead ones.
    await env.DB.prepare("UPDATE stream_presence SET seen_at = 0 WHERE account_id = ?").bind(a.id).run();
    // Its object (a shard) may hold other users' connections too: count a's rows.
    const live = await count("stream_presence WHERE object = ? AND account_id = ?", userObject(a.id), a.id);
    expect(live).toBeGreaterThan(0);
    const t = Date.now();
    await runCron(t);
    expect(await count("stream_presence WHERE object = ?", deadObject)).toBe(0);
    expect(await count("stream_presence WHERE object = ? AND account_id = ?", userObject(a.id), a.id)).toBe(live);
    expect(
      await count(
        "stream_presence WHERE object = ? AND account_id = ? AND seen_at >= ?",
        userObject(a.id),
        a.id,
        t - 60_000,
      ),
    ).toBe(live);
    // The connection still hears its events.
    const b = await registerUser();
    await json(`/api/v1/accounts/${a.id}/follow`, { method: "POST", token: b.token });
    expect((await socket.next((f) => f.event === "notification")).event).toBe("notification");
    await socket.close();
  });
});

describe("limits hold under concurrency", () => {
  it("10 parallel pins: exactly 5 succeed", async () => {
    const a = await registerUser();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(valid(StatusSchema, await post(a, { status: `pin me ${i}` })).id);
    const results = await Promise.all(
      ids.map((id) => call(`/api/v1/statuses/${id}/pin`, { method: "POST", token: a.token })),
    );
    const codes = results.map((r) => r.status).sort();
    expect(codes).toEqual([200, 200, 200, 200, 200, 422, 422, 422, 422, 422]);
    for (const r of results.filter((r) => r.status === 422))
      expect(((await r.json()) as any).error).toBe("You have already pinned the maximum number of statuses");
    for (const r of results.filter((r) => r.status === 200))
      expect(valid(StatusSchema, await r.json()).pinned).toBe(true);
    expect(await count("statuses WHERE account_id = ? AND pinned_at IS NOT NULL", a.id)).toBe(5);
    expect(await json(`/api/v1/accounts/${a.id}/statuses?pinned=true`, { token: a.token })).toHaveLength(5);
    // Pinning the same status 10 times at once pins it once, all succeed.
    const b = await registerUser();
    const s = valid(StatusSchema, await post(b, { status: "one" }));
    const same = await Promise.all(
      Array.from({ length: 10 }, () => call(`/api/v1/statuses/${s.id}/pin`, { method: "POST", token: b.token })),
    );
    expect(same.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(await count("statuses WHERE account_id = ? AND pinned_at IS NOT NULL", b.id)).toBe(1);
  });

  it("10 parallel endorsements with 2 places left: exactly 2 succeed", async () => {
    const a = await registerUser();
    const targets = await Promise.all(Array.from({ length: 28 }, async () => (await remoteAccount()).id));
    const t = Date.now();
    await env.DB.batch(
      targets.flatMap((id, i) => [
        env.DB.prepare(
          "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 1, 0, ?)",
        ).bind(newId(), a.id, id, t),
        ...(i < 18
          ? [
              env.DB.prepare(
                "INSERT INTO endorsements (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)",
              ).bind(newId(), a.id, id, t),
            ]
          : []),
      ]),
    );
    const results = await Promise.all(
      targets.slice(18).map((id) => call(`/api/v1/accounts/${id}/pin`, { method: "POST", token: a.token })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(2);
    for (const r of ok) expect(valid(RelationshipSchema, await r.json()).endorsed).toBe(true);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error).toBe("You have already pinned the maximum number of users");
    }
    expect(await count("endorsements WHERE account_id = ?", a.id)).toBe(20);
  });

  it("10 parallel schedules with 2 places left in the day: exactly 2 succeed", async () => {
    const a = await registerUser();
    const day = Math.floor((Date.now() + 3 * DAY) / DAY) * DAY;
    await env.DB.batch(
      Array.from({ length: 48 }, (_, i) =>
        env.DB.prepare(
          "INSERT INTO scheduled_statuses (id, account_id, scheduled_at, params, created_at) VALUES (?, ?, ?, ?, ?)",
        ).bind(
          newId(),
          a.id,
          day + 3600_000 + i * 1000,
          JSON.stringify({ status: "seed", base: "http://localhost", host: "localhost", idempotency: null }),
          Date.now(),
        ),
      ),
    );
    const at = new Date(day + 12 * 3600_000).toISOString();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call("/api/v1/statuses", { method: "POST", token: a.token, body: { status: `s${i}`, scheduled_at: at } }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(2);
    for (const r of ok) valid(ScheduledStatusSchema, await r.json());
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(422);
      expect(((await r.json()) as any).error).toBe("daily limit exceeded");
    }
    expect(await count("scheduled_statuses WHERE account_id = ?", a.id)).toBe(50);
    // Moving one into the full day is refused too, and nothing moves.
    const other = valid(
      ScheduledStatusSchema,
      await post(a, { status: "elsewhere", scheduled_at: new Date(day + 2 * DAY).toISOString() }),
    );
    const moved = await json(`/api/v1/scheduled_statuses/${other.id}`, {
      method: "PUT",
      token: a.token,
      body: { scheduled_at: at },
      status: 422,
    });
    expect(moved.error).toBe("daily limit exceeded");
    expect(
      (await one<{ scheduled_at: number }>("SELECT scheduled_at FROM scheduled_statuses WHERE id = ?", other.id))!
        .scheduled_at,
    ).toBe(day + 2 * DAY);
  });

  it("10 parallel registrations on an invite for 3: exactly 3 accounts", async () => {
    const app = await makeApp();
    const tok = await appToken(app);
    const vars = { REGISTRATIONS_OPEN: "false" };
    const invite = `invite-${crypto.randomUUID()}`;
    const inviteId = newId();
    await env.DB.prepare("INSERT INTO invites (id, token_hash, max_uses, uses, created_at) VALUES (?, ?, 3, 0, ?)")
      .bind(inviteId, await sha256(invite), Date.now())
      .run();
    const names = Array.from({ length: 10 }, () => uniqueName("inv"));
    const results = await Promise.all(
      names.map((username) =>
        call("/api/v1/accounts", {
          token: tok,
          vars,
          headers: { "cf-connecting-ip": freshIp() },
          body: {
            username,
            email: `${username}@example.com`,
            password: "correct horse battery",
            agreement: true,
            token: invite,
          },
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(3);
    for (const r of ok) valid(TokenSchema, await r.json());
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error).toBe("Expired token");
    }
    expect((await one<{ uses: number }>("SELECT uses FROM invites WHERE id = ?", inviteId))!.uses).toBe(3);
    expect(await count("users WHERE invite_id = ?", inviteId)).toBe(3);
    // No half-made accounts from the losers.
    expect(await count(`accounts WHERE username IN (${names.map(() => "?").join(",")})`, ...names)).toBe(3);
  });
});

describe("notifications written with their action", () => {
  it("a follow and its notification are one write: when the notification cannot be written, nothing is", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const broken = failingD1(/INSERT INTO notifications/);
    const res = await call(`/api/v1/accounts/${b.id}/follow`, {
      method: "POST",
      token: a.token,
      vars: { DB: broken } as never,
    });
    expect(res.status).toBe(500);
    expect(await count("follows WHERE account_id = ? AND target_account_id = ?", a.id, b.id)).toBe(0);
    // Done again with a working database: one follow, one notification, however often it is repeated at once.
    const rels = await Promise.all(
      Array.from({ length: 5 }, () => json(`/api/v1/accounts/${b.id}/follow`, { method: "POST", token: a.token })),
    );
    for (const r of rels) expect(valid(RelationshipSchema, r).following).toBe(true);
    expect(
      await count("notifications WHERE account_id = ? AND from_account_id = ? AND type = 'follow'", b.id, a.id),
    ).toBe(1);
  });

  it("a follow request to a locked account notifies once, in the same write", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: b.token, body: { locked: true } });
    const res = await call(`/api/v1/accounts/${b.id}/follow`, {
      method: "POST",
      token: a.token,
      vars: { DB: failingD1(/INSERT INTO notifications/) } as never,
    });
    expect(res.status).toBe(500);
    expect(await count("follow_requests WHERE account_id = ? AND target_account_id = ?", a.id, b.id)).toBe(0);
    await Promise.all(
      Array.from({ length: 3 }, () => json(`/api/v1/accounts/${b.id}/follow`, { method: "POST", token: a.token })),
    );
    expect(
      await count("notifications WHERE account_id = ? AND from_account_id = ? AND type = 'follow_request'", b.id, a.id),
    ).toBe(1);
  });

  it("a reaction and its notification are one write, and a repeated reaction notifies once", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = valid(StatusSchema, await post(b, { status: "react to me" }));
    const path = `/api/v1/pleroma/statuses/${s.id}/reactions/${encodeURIComponent("👍")}`;
    const res = await call(path, {
      method: "PUT",
      token: a.token,
      vars: { DB: failingD1(/INSERT INTO notifications/) } as never,
    });
    expect(res.status).toBe(500);
    expect(await count("emoji_reactions WHERE status_id = ?", s.id)).toBe(0);
    await Promise.all(Array.from({ length: 3 }, () => json(path, { method: "PUT", token: a.token })));
    expect(await count("emoji_reactions WHERE status_id = ?", s.id)).toBe(1);
    expect(
      await count(
        "notifications WHERE account_id = ? AND type = 'pleroma:emoji_reaction' AND status_id = ?",
        b.id,
        s.id,
      ),
    ).toBe(1);
  });

  it("repeated or racing favourites notify once; an accepted request notifies one follow however often it is accepted", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = valid(StatusSchema, await post(b, { status: "fave me" }));
    await Promise.all(
      Array.from({ length: 5 }, () => json(`/api/v1/statuses/${s.id}/favourite`, { method: "POST", token: a.token })),
    );
    expect(await count("notifications WHERE account_id = ? AND type = 'favourite' AND status_id = ?", b.id, s.id)).toBe(
      1,
    );
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`, { token: b.token })).favourites_count).toBe(1);
    await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: b.token, body: { locked: true } });
    await json(`/api/v1/accounts/${b.id}/follow`, { method: "POST", token: a.token });
    const accepted = await Promise.all(
      Array.from({ length: 3 }, () =>
        call(`/api/v1/follow_requests/${a.id}/authorize`, { method: "POST", token: b.token }),
      ),
    );
    expect(accepted.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(
      await count("notifications WHERE account_id = ? AND from_account_id = ? AND type = 'follow'", b.id, a.id),
    ).toBe(1);
    expect(
      await count("notifications WHERE account_id = ? AND from_account_id = ? AND type = 'follow_request'", b.id, a.id),
    ).toBe(0);
  });

  it("undoing a reblog removes its notification in the reblog's delete batch", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = valid(StatusSchema, await post(b, { status: "share me" }));
    await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: a.token });
    expect(await count("notifications WHERE account_id = ? AND type = 'reblog' AND status_id = ?", b.id, s.id)).toBe(1);
    // The reblog and its notification go together or not at all.
    const res = await call(`/api/v1/statuses/${s.id}/unreblog`, {
      method: "POST",
      token: a.token,
      vars: { DB: failingD1(/DELETE FROM notifications WHERE rowid IN/) } as never,
    });
    expect(res.status).toBe(500);
    expect(await count("statuses WHERE reblog_of_id = ? AND account_id = ?", s.id, a.id)).toBe(1);
    const un = valid(StatusSchema, await json(`/api/v1/statuses/${s.id}/unreblog`, { method: "POST", token: a.token }));
    expect(un.reblogged).toBe(false);
    expect(await count("notifications WHERE account_id = ? AND type = 'reblog' AND status_id = ?", b.id, s.id)).toBe(0);
    expect(await count("statuses WHERE reblog_of_id = ?", s.id)).toBe(0);
  });
});
