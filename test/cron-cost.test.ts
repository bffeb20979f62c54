/**
 * What the cron costs an idle instance (issue 42), measured with the meter (src/lib/meter.ts: D1's own
 * `rows_read` / `rows_written` of every statement) on a database of thousands of accounts, follows, statuses,
 * notifications, mutes, rate-limit windows, outbox rows and known instances: an idle minute reads at most 50 rows
 * and writes at most 3, whatever the tables hold, and an idle hour (every minute of it, the hourly jobs included)
 * stays within its 24th of the day's budget (100,000 rows read, 2,000 written).
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../src/index";
import { idFloor } from "../src/db/ids";
import { measure, meteredEnv, type Usage } from "../src/lib/meter";
import { RETENTION_MINUTE } from "../src/cron";
import { HealthcheckSchema } from "../src/schemas/instance";
import { json, post, registerUser, valid } from "./helpers";
import { countingD1 } from "./d1-counter";
import { policies, refreshSettings, SETTINGS_TTL_MS } from "../src/services/instance-settings";
import { flushUsage, usageFlush } from "../src/services/usage-budget";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const N = 3000;

const counting = countingD1();

/**
 * A cron run at `at`, the clock there too: what is cached per isolate for a while (the run-time settings, read again
 * after 30 s) is read again each minute, as in production, not served from the cache the test's speed would keep.
 */
async function runCron(at: number) {
  vi.setSystemTime(at);
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: new Date(at), cron: "* * * * *" }),
    { ...env, DB: counting.db } as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

/**
 * A cron run's cost, from the meter. On a budget overrun the statements the counter saw, with their plans, say
 * where it went (drizzle's array reads reach D1 around the counter, lib/meter.ts `raw`, and are not listed).
 */
/** The statements of the last measured minute that wrote, with their rows (said when a minute is over budget). */
let lastWrites: string[] = [];

async function minute(at: number): Promise<Usage> {
  counting.reset();
  const { usage, statements } = await measure(() => runCron(at), { statements: true });
  lastWrites = statements.filter((x) => x.rowsWritten > 0).map((x) => `${x.rowsWritten}: ${x.sql.slice(0, 120)}`);
  return usage;
}

async function explain(): Promise<string> {
  const lines: string[] = [];
  for (const s of counting.statements()) {
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
      .bind(...s.params)
      .all<{ detail: string }>()
      .then((r) => r.results.map((p) => p.detail).join("; "))
      .catch(() => "");
    lines.push(`${s.sql.replace(/\s+/g, " ").slice(0, 140)}\n    ${plan}`);
  }
  return lines.join("\n");
}

const q = (sql: string, ...args: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...args)
    .run();

// The budget meter's estimate flush (services/usage-budget.ts) runs at most every 5 minutes of the isolate's clock,
// whichever minute that lands in: held off while minutes are measured one by one, and counted on its own below
// (`HOUR / everyMs` an hour), so that no minute's figure depends on where the flush happened to fall.
const realFlushEvery = usageFlush.everyMs;

describe("an idle cron", () => {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    usageFlush.everyMs = Number.POSITIVE_INFINITY;
  });
  afterAll(() => {
    vi.useRealTimers();
    usageFlush.everyMs = realFlushEvery;
  });

  it("reads at most 50 rows and writes at most 3 a minute, and an idle hour stays within its share of the day", async () => {
    // The hour the measured runs start: the retention jobs run at its RETENTION_MINUTE.
    const t0 = Math.ceil(Date.now() / HOUR) * HOUR + 2 * HOUR;
    const me = await registerUser();
    const other = await registerUser();
    await post(me, { status: "the last thing anyone said here" });
    const old = t0 - 60 * DAY;
    const prefix = idFloor(old).slice(0, 10);
    // 3,000 remote accounts on 300 servers (known instances, their favicons looked up, some unreachable for long),
    // following
    // `me` and followed by `other`.
    await q(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
       INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at)
       SELECT ?1 || printf('R%015d', i), 'far' || i, 'r' || (i % 300) || '.example', 'https://r' || (i % 300) || '.example/users/far' || i, '', ?2, ?2 FROM n`,
      prefix,
      old,
    );
    await q(
      `INSERT INTO instances (domain, failure_count, last_failure_at, unreachable_since, failing_since, favicon_fetched_at, created_at)
       SELECT DISTINCT domain, 0, NULL, CASE WHEN substr(domain, 2, 1) = '7' THEN ?1 END, CASE WHEN substr(domain, 2, 1) = '7' THEN ?1 END, ?3, ?1
       FROM accounts WHERE id LIKE ?2 || 'R%'`,
      old,
      prefix,
      t0 - DAY,
    );
    await q(
      `INSERT INTO follows (id, account_id, target_account_id, created_at)
       SELECT 'f' || id, id, ?1, ?2 FROM accounts WHERE id LIKE ?3 || 'R%'
       UNION ALL SELECT 'g' || id, ?4, id, ?2 FROM accounts WHERE id LIKE ?3 || 'R%'`,
      me.id,
      old,
      prefix,
      other.id,
    );
    // A move of long ago, its followers moved: nothing left to do.
    await q(`UPDATE accounts SET moved_to_account_id = ?1 WHERE id = ?2 || 'R000000000000001'`, me.id, prefix);
    // Statuses: 3,000 local ones older than the retention (kept for ever), 3,000 remote ones of the last weeks.
    await q(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
       INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
       SELECT ?1 || printf('L%015d', i), 'http://localhost/objects/l' || i, '', ?2, ?1 || printf('L%015d', i), 'c', 'p', 'p', 'public', 1, ?3 FROM n`,
      prefix,
      me.id,
      old,
    );
    const recent = t0 - 10 * DAY;
    await q(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
       INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
       SELECT ?1 || printf('S%015d', i), 'https://r.example/s/' || i, '', ?3 || printf('R%015d', i), ?1 || printf('S%015d', i), 'c', 'p', 'p', 'public', 0, ?2 FROM n`,
      idFloor(recent).slice(0, 10),
      recent,
      prefix,
    );
    // Federation policies (an admin's list of refused servers), read with the settings.
    await q(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
       INSERT INTO federation_policies (domain, policy, reason, created_at) SELECT 'spam' || i || '.example', 'reject', 'spam', ?1 FROM n`,
      old,
    );
    // Notifications (pushed, within their retention), mutes (some to expire later), rate-limit windows and known
    // sign-in addresses (within their keeping), and expanded outbox rows (within theirs).
    await q(
      `INSERT INTO notifications (id, account_id, from_account_id, type, pushed, created_at)
       SELECT printf('%016d', ?2 * 1000 + rowid), ?1, id, 'follow', 1, ?2 FROM accounts WHERE id LIKE ?3 || 'R%'`,
      me.id,
      recent,
      prefix,
    );
    await q(
      `INSERT INTO mutes (id, account_id, target_account_id, created_at, expires_at)
       SELECT 'm' || id, ?1, id, ?2, CASE WHEN rowid % 2 = 0 THEN ?3 END FROM accounts WHERE id LIKE ?4 || 'R%'`,
      other.id,
      old,
      t0 + 30 * DAY,
      prefix,
    );
    await q(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
       INSERT INTO rate_limits (key, window_start, count)
       SELECT CASE WHEN i % 2 = 0 THEN 'login:known:' || ?1 || ':10.0.' || i ELSE 'api:10.1.' || i END,
         CASE WHEN i % 2 = 0 THEN ?2 - 10 * ${DAY} ELSE ?2 - ${HOUR} END, 1 FROM n`,
      me.id,
      t0,
    );
    await q(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
       INSERT INTO federation_outbox (id, account_id, activity, body, created_at, expanded_at)
       SELECT printf('ob%08d', i), ?1, '{}', '{}', ?2, ?2 FROM n`,
      me.id,
      t0 + 3 * HOUR,
    );

    // The cron catches up first: the retention walks what it keeps once, in bounded hourly steps.
    for (let h = -8; h < 0; h++) await runCron(t0 + h * HOUR + RETENTION_MINUTE * MINUTE);
    await runCron(t0 - MINUTE);

    // An idle minute.
    const one = await minute(t0 + MINUTE);
    console.log("idle cron minute:", one.rowsRead, "rows read,", one.rowsWritten, "written,", one.queries, "queries");
    if (one.rowsRead > 50 || one.rowsWritten > 3)
      expect.fail(`an idle minute cost ${JSON.stringify(one)}\n${await explain()}`);

    // An idle hour: every minute of it, the retention's included.
    const hour = { rowsRead: 0, rowsWritten: 0, queries: 0 };
    let worst = { at: 0, usage: one };
    for (let m = 0; m < 60; m++) {
      const at = t0 + HOUR + m * MINUTE;
      const u = await minute(at);
      hour.rowsRead += u.rowsRead;
      hour.rowsWritten += u.rowsWritten;
      hour.queries += u.queries;
      if (m !== RETENTION_MINUTE && (u.rowsRead > 50 || u.rowsWritten > 3))
        expect.fail(
          `minute ${m} of the hour cost ${JSON.stringify(u)}\nwrites:\n${lastWrites.join("\n")}\n${await explain()}`,
        );
      if (u.rowsRead > worst.usage.rowsRead) worst = { at: m, usage: u };
    }
    console.log(
      "idle cron hour:",
      hour.rowsRead,
      "rows read,",
      hour.rowsWritten,
      "written,",
      hour.queries,
      `queries; the dearest minute (${worst.at}):`,
      worst.usage.rowsRead,
      "read,",
      worst.usage.rowsWritten,
      "written",
    );
    // The estimate flush, on its own: at most `HOUR / everyMs` an hour per isolate.
    const flushes = Math.ceil(HOUR / realFlushEvery);
    usageFlush.everyMs = 0;
    const flush = await measure(() => flushUsage(meteredEnv(env)));
    usageFlush.everyMs = Number.POSITIVE_INFINITY;
    console.log("usage flush:", flush.usage.rowsRead, "rows read,", flush.usage.rowsWritten, "written");
    expect(flush.usage.rowsWritten).toBeGreaterThan(0);
    expect(flush.usage.rowsWritten).toBeLessThanOrEqual(3);
    expect(hour.rowsRead + flushes * flush.usage.rowsRead).toBeLessThanOrEqual(100_000 / 24);
    expect(hour.rowsWritten + flushes * flush.usage.rowsWritten).toBeLessThanOrEqual(2_000 / 24);

    // Nothing was lost for it: the healthcheck shows every job run at the last minute, and none failing.
    const last = new Date(t0 + 2 * HOUR - MINUTE).toISOString();
    const health = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck"));
    expect(health.job_queue_stats.cron_last_run_at).toBe(last);
    const jobs = Object.entries(health.job_queue_stats.jobs as Record<string, { last_run_at: string; ok: boolean }>);
    expect(jobs.length).toBeGreaterThan(20);
    for (const [name, job] of jobs) expect(job, name).toMatchObject({ last_run_at: last, ok: true });
  });
});

describe("the run-time settings, read again every minute", () => {
  it("cost one row while unchanged; a change made elsewhere (any writer) is read after the TTL", async () => {
    const t = Date.now() + DAY;
    await refreshSettings(env, true, t);
    const quiet = await measure(() => refreshSettings(env, false, t + SETTINGS_TTL_MS + 1));
    expect(quiet.usage.rowsRead).toBeLessThanOrEqual(1);
    expect(quiet.usage.queries).toBe(1);
    // Another isolate (or the command line, or a hand-written statement) refuses a server.
    await q(
      "INSERT INTO federation_policies (domain, policy, reason, created_at) VALUES ('elsewhere.example', 'reject', '', ?)",
      t,
    );
    expect(policies(env).some((p) => p.domain === "elsewhere.example")).toBe(false);
    await refreshSettings(env, false, t + 2 * SETTINGS_TTL_MS + 2);
    expect(policies(env).some((p) => p.domain === "elsewhere.example")).toBe(true);
    // A setting changed by hand too.
    await q(
      "INSERT INTO instance_settings (key, value, updated_at) VALUES ('name', '\"Renamed elsewhere\"', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      t,
    );
    await refreshSettings(env, false, t + 3 * SETTINGS_TTL_MS + 3);
    expect((await json("/api/v1/instance")).title).toBe("Renamed elsewhere");
  });
});
