/**
 * What the database keeps (issue 35): old remote statuses nobody here interacted with go, in bounded hourly steps
 * run by the cron, with what hangs on them; everything local or interacted with stays; old notifications go; the
 * database's size is measured against its ceiling, the admins are told near it, and content nobody asked for is
 * refused when it is nearly full while local posting goes on.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { newId } from "../src/db/ids";
import { db } from "../src/db/client";
import { accounts } from "../src/db/schema";
import { eq } from "drizzle-orm";
import { RETENTION_MINUTE } from "../src/cron";
import { DELETE_PER_RUN, pruneRemoteStatuses } from "../src/services/retention";
import { storeRemoteNote, type ParsedNote } from "../src/services/remote-statuses";
import { HealthcheckSchema } from "../src/schemas/instance";
import { StatusSchema } from "../src/schemas/status";
import { json, makeAdmin, post, registerUser, remoteAccount, valid } from "./helpers";
import { failingD1 } from "./failing-d1";
import { measure, meteredEnv } from "../src/lib/meter";

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** A cron run at the retention's minute of the hour after `t`. */
const retentionTime = (t: number) => Math.ceil(t / HOUR) * HOUR + RETENTION_MINUTE * 60_000;

async function runCron(at: number, bindings: Partial<typeof env> = {}) {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: new Date(at), cron: "* * * * *" }),
    { ...env, ...bindings } as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

/** A remote status of `author`, made `ageDays` ago, written as the inbox would have stored it. */
async function remoteStatus(author: { id: string; domain: string }, ageDays: number, text = "far away") {
  const t = Date.now() - ageDays * DAY;
  const id = newId(t);
  await env.DB.prepare(
    `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
     VALUES (?1, ?2, ?2, ?3, ?1, ?2, ?4, '', 'public', 0, ?5)`,
  )
    .bind(id, `https://${author.domain}/statuses/${id}`, author.id, `<p>${text}</p>`, t)
    .run();
  return id;
}

const exists = async (id: string) =>
  !!(await env.DB.prepare("SELECT 1 AS x FROM statuses WHERE id = ?").bind(id).first());

describe("pruning remote statuses", () => {
  it("deletes old ones nobody here touched, with their feed rows; keeps the local, the recent and the interacted with", async () => {
    const me = await registerUser();
    const far = await remoteAccount();
    const plain = await remoteStatus(far, 40, "nobody cared");
    const inFeed = await remoteStatus(far, 40, "only in a home feed");
    await env.DB.prepare("INSERT INTO home_feed (account_id, status_id, author_id) VALUES (?, ?, ?)")
      .bind(me.id, inFeed, far.id)
      .run();
    const recent = await remoteStatus(far, 5);
    const act = (path: string, body: Record<string, unknown> = {}, method = "POST") =>
      json(path, { method, token: me.token, body });
    const favourited = await remoteStatus(far, 40);
    await act(`/api/v1/statuses/${favourited}/favourite`);
    const bookmarked = await remoteStatus(far, 40);
    await act(`/api/v1/statuses/${bookmarked}/bookmark`);
    const reblogged = await remoteStatus(far, 40);
    await act(`/api/v1/statuses/${reblogged}/reblog`);
    const repliedTo = await remoteStatus(far, 40);
    await post(me, { status: "an answer", in_reply_to_id: repliedTo });
    const reacted = await remoteStatus(far, 40);
    await act(`/api/v1/pleroma/statuses/${reacted}/reactions/${encodeURIComponent("👍")}`, {}, "PUT");
    const addressed = await remoteStatus(far, 40);
    await env.DB.prepare("INSERT INTO status_recipients (status_id, account_id, mention) VALUES (?, ?, 1)")
      .bind(addressed, me.id)
      .run();
    const pinned = await remoteStatus(far, 40);
    await env.DB.prepare("UPDATE statuses SET pinned_at = ? WHERE id = ?").bind(Date.now(), pinned).run();
    const voted = await remoteStatus(far, 40);
    const pollId = newId();
    await env.DB.prepare(
      'INSERT INTO polls (id, status_id, options, multiple, hide_totals, expires_at, created_at) VALUES (?, ?, \'["a","b"]\', 0, 0, ?, ?)',
    )
      .bind(pollId, voted, Date.now() + DAY, Date.now())
      .run();
    await act(`/api/v1/polls/${pollId}/votes`, { choices: [0] });
    const mine = valid(StatusSchema, await post(me, { status: "my own, old" }));
    await env.DB.prepare("UPDATE statuses SET created_at = ? WHERE id = ?")
      .bind(Date.now() - 400 * DAY, mine.id)
      .run();
    // A remote account's boost of my post counts on my post: it stays.
    const boostOfMine = newId(Date.now() - 40 * DAY);
    await env.DB.prepare(
      `INSERT INTO statuses (id, uri, url, account_id, reblog_of_id, thread_id, context, content, text, visibility, local, created_at)
       VALUES (?1, ?2, ?2, ?3, ?4, ?1, '', '', '', 'public', 0, ?5)`,
    )
      .bind(boostOfMine, `https://${far.domain}/boosts/${boostOfMine}`, far.id, mine.id, Date.now() - 40 * DAY)
      .run();

    // Not the retention's minute: nothing happens.
    await runCron(retentionTime(Date.now()) + 60_000);
    expect(await exists(plain)).toBe(true);
    await runCron(retentionTime(Date.now()));
    expect(await exists(plain)).toBe(false);
    expect(await exists(inFeed)).toBe(false);
    const feed = await env.DB.prepare("SELECT count(*) AS n FROM home_feed WHERE status_id = ?").bind(inFeed).first();
    expect(feed).toEqual({ n: 0 });
    for (const kept of [
      recent,
      favourited,
      bookmarked,
      reblogged,
      repliedTo,
      reacted,
      addressed,
      pinned,
      voted,
      boostOfMine,
    ])
      expect(await exists(kept), kept).toBe(true);
    expect(await exists(mine.id)).toBe(true);
    // Gone from the API too, and from search.
    await json(`/api/v1/statuses/${plain}`, { token: me.token, status: 404 });
    const found = await json(`/api/v2/search?q=cared&type=statuses`, { token: me.token });
    expect(found.statuses).toEqual([]);

    // What the job did is in the healthcheck (for everyone: counts only).
    const health = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck"));
    const jobs = health.job_queue_stats.jobs as Record<string, { last_result: { removed: number } | null }>;
    expect(jobs.prune_remote_statuses!.last_result!.removed).toBeGreaterThanOrEqual(2);
  });

  it("works in bounded steps that carry on from where the last stopped, and survives a failed step", async () => {
    const far = await remoteAccount();
    const ids: string[] = [];
    for (let i = 0; i < DELETE_PER_RUN + 30; i++) ids.push(await remoteStatus(far, 60, `bulk ${i}`));
    const d = db(env);
    const t = Date.now();
    // A step whose deletion fails leaves everything as it was (one batch), cursor included.
    await expect(
      pruneRemoteStatuses(db({ ...env, DB: failingD1(/DELETE FROM home_feed/) } as typeof env), t, 30),
    ).rejects.toThrow();
    expect(await exists(ids[0]!)).toBe(true);
    const first = await pruneRemoteStatuses(d, t, 30);
    expect(first.removed).toBe(DELETE_PER_RUN);
    const left = async () => (await Promise.all(ids.map(exists))).filter(Boolean).length;
    expect(await left()).toBe(30);
    let more = await pruneRemoteStatuses(d, t, 30);
    while (more.removed > 0 || (await left()) > 0) {
      if (more.examined === 0 && (await left()) > 0) throw new Error("the walk stopped with statuses left");
      more = await pruneRemoteStatuses(d, t, 30);
    }
    expect(await left()).toBe(0);
    // 0 days: kept forever.
    const keep = await remoteStatus(far, 365);
    expect(await pruneRemoteStatuses(d, t, 0)).toEqual({ examined: 0, removed: 0 });
    expect(await exists(keep)).toBe(true);
  });
});

describe("the walk, caught up", () => {
  it("waits: reads a few rows an hour, looks only at statuses that grew old since, starts over when some arrive", async () => {
    const far = await remoteAccount();
    const ageing = await remoteStatus(far, 29, "not old yet");
    const metered = db(meteredEnv(env));
    const t = Date.now();
    let steps = 0;
    while ((await pruneRemoteStatuses(metered, t, 30)).examined > 0 && steps < 20) steps++;
    expect(await exists(ageing)).toBe(true);
    // An hour later, nothing new: what is kept is not walked again.
    const quiet = await measure(() => pruneRemoteStatuses(metered, t + HOUR, 30));
    expect(quiet.value).toEqual({ examined: 0, removed: 0 });
    expect(quiet.usage.rowsRead).toBeLessThanOrEqual(3);
    // Two days later the status grew old: it alone is looked at, and goes.
    expect(await pruneRemoteStatuses(metered, t + 2 * DAY, 30)).toEqual({ examined: 1, removed: 1 });
    expect(await exists(ageing)).toBe(false);
    // An old status stored now (a fetched one, say) sits behind the walk: it starts over and finds it.
    const late = await remoteStatus(far, 90, "fetched late");
    let removed = 0;
    for (let i = 0; i < 20 && (await exists(late)); i++)
      removed += (await pruneRemoteStatuses(metered, t + 2 * DAY + (i + 1) * HOUR, 30)).removed;
    expect(removed).toBe(1);
    expect(await exists(late)).toBe(false);
  });
});

describe("pruning keeps what is new here, answers us, or was reported", () => {
  it("an old post boosted lately, fetched lately, reported, or answering a local post stays; a race loses nothing", async () => {
    const me = await registerUser();
    const far = await remoteAccount();
    const booster = await remoteAccount();
    const t = Date.now();
    const boosted = await remoteStatus(far, 400);
    await env.DB.prepare(
      `INSERT INTO statuses (id, uri, url, account_id, reblog_of_id, thread_id, context, content, text, visibility, local, created_at)
       VALUES (?1, ?2, ?2, ?3, ?4, ?1, '', '', '', 'public', 0, ?5)`,
    )
      .bind(newId(t), `https://${booster.domain}/boosts/${boosted}`, booster.id, boosted, t)
      .run();
    const fetched = await remoteStatus(far, 400);
    await env.DB.prepare("UPDATE statuses SET stored_at = ? WHERE id = ?").bind(t, fetched).run();
    const reported = await remoteStatus(far, 400);
    await json("/api/v1/reports", {
      token: me.token,
      body: { account_id: far.id, status_ids: [reported], comment: "spam" },
    });
    const mine = valid(StatusSchema, await post(me, { status: "asking" }));
    const answer = await remoteStatus(far, 400);
    await env.DB.prepare("UPDATE statuses SET in_reply_to_id = ? WHERE id = ?").bind(mine.id, answer).run();
    // Someone here favourites a candidate between the look and the deletion: the batch checks again and stops.
    const raced = await remoteStatus(far, 400);
    const racing = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "batch")
          return async (stmts: D1PreparedStatement[]) => {
            await env.DB.prepare(
              "INSERT OR IGNORE INTO favourites (id, account_id, status_id, created_at) VALUES (?, ?, ?, ?)",
            )
              .bind(newId(), me.id, raced, Date.now())
              .run();
            return target.batch(stmts);
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const step = await pruneRemoteStatuses(db({ ...env, DB: racing } as typeof env), t, 30);
    expect(step.removed).toBe(0);
    expect(await exists(raced)).toBe(true);
    const favourite = await env.DB.prepare("SELECT count(*) AS n FROM favourites WHERE status_id = ?")
      .bind(raced)
      .first();
    expect(favourite).toEqual({ n: 1 });
    // And in a quiet run, the rest stays too.
    for (let i = 0; i < 5; i++) await pruneRemoteStatuses(db(env), t, 30);
    for (const id of [boosted, fetched, reported, answer, raced]) expect(await exists(id), id).toBe(true);
  });
});

describe("pruning notifications", () => {
  it("deletes those older than the retention, keeps the rest", async () => {
    const me = await registerUser();
    const other = await registerUser();
    await json(`/api/v1/accounts/${me.id}/follow`, { token: other.token, body: {} });
    const oldId = String((Date.now() - 200 * DAY) * 1000).padStart(16, "0");
    await env.DB.prepare(
      "INSERT INTO notifications (id, account_id, from_account_id, type, is_seen, created_at) VALUES (?, ?, ?, 'follow', 0, ?)",
    )
      .bind(oldId, me.id, other.id, Date.now() - 200 * DAY)
      .run();
    const before = (await json("/api/v1/notifications", { token: me.token })) as { id: string }[];
    expect(before.map((n) => n.id)).toContain(oldId);
    await runCron(retentionTime(Date.now()));
    const after = (await json("/api/v1/notifications", { token: me.token })) as { id: string; type: string }[];
    expect(after.map((n) => n.id)).not.toContain(oldId);
    expect(after.map((n) => n.type)).toContain("follow");
  });
});

describe("the storage guard", () => {
  it("measures the database against its ceiling, tells the admins at 80%, refuses unsolicited content at 95%", async () => {
    const admin = await registerUser({ scopes: "read write admin" });
    await makeAdmin(admin.id);
    const small = { DATABASE_LIMIT_MB: "1" } as Partial<typeof env>;
    await runCron(Date.now(), small);
    const health = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck"));
    const storage = health.job_queue_stats.storage as {
      bytes: number;
      limit_bytes: number;
      percent: number;
      refusing_unsolicited: boolean;
    };
    expect(storage.limit_bytes).toBe(1024 * 1024);
    expect(storage.bytes).toBeGreaterThan(1024 * 1024);
    expect(storage.refusing_unsolicited).toBe(true);
    const stats = await json("/api/v1/pleroma/admin/stats", { token: admin.token });
    expect(stats.storage).toMatchObject({ limit_bytes: 1024 * 1024, refusing_unsolicited: true });
    expect(stats.status_visibility).toMatchObject({ public: expect.any(Number), direct: expect.any(Number) });
    // The admins were told: a mail each, and an announcement; once a week, not every run.
    const mails = async () =>
      (await env.DB.prepare(`SELECT count(*) AS n FROM mail_outbox WHERE "to" = ? AND subject LIKE 'Database %'`)
        .bind(
          (await env.DB.prepare("SELECT email FROM users WHERE account_id = ?")
            .bind(admin.id)
            .first<{ email: string }>())!.email,
        )
        .first<{ n: number }>())!.n;
    expect(await mails()).toBe(1);
    const announced = (await json("/api/v1/announcements", { token: admin.token })) as { content: string }[];
    expect(announced.some((a) => a.content.includes("storage is"))).toBe(true);
    await runCron(Date.now() + 60_000, small);
    expect(await mails()).toBe(1);

    // Content nobody here asked for (a fetched post of an account nobody follows) is refused…
    const far = await remoteAccount();
    const row = (await db(env).select().from(accounts).where(eq(accounts.id, far.id)).get())!;
    const note: ParsedNote = {
      uri: `https://${far.domain}/statuses/fetched`,
      url: `https://${far.domain}/statuses/fetched`,
      content: "<p>fetched</p>",
      spoilerText: "",
      sensitive: false,
      language: null,
      published: Date.now(),
      updated: null,
      visibility: "public",
      addressed: [],
      mentions: [],
      tags: [],
      emojis: [],
      media: [],
      inReplyTo: null,
      context: null,
      poll: null,
      counts: { replies: 0, reblogs: 0, favourites: 0 },
      quote: null,
      quotePolicy: null,
      interactionPolicy: null,
    };
    const refused = await storeRemoteNote(db(env), row, note, {
      inlineFanoutMax: 200,
      base: "http://localhost",
      requested: true,
    });
    expect(refused).toEqual({ stored: false, reason: "storage full" });
    // …while local posting goes on.
    valid(StatusSchema, await post(admin, { status: "still posting" }));
    // With room again, it is taken.
    await runCron(Date.now() + 120_000);
    const taken = await storeRemoteNote(db(env), row, note, {
      inlineFanoutMax: 200,
      base: "http://localhost",
      requested: true,
    });
    expect(taken.stored).toBe(true);
  });
});
