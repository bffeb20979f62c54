/**
 * The daily budget meter (issue 42, services/usage-budget.ts): the isolate's counts persisted into the day's row
 * (and nothing when nothing was counted), the exact figures from the GraphQL Analytics API against recorded answers
 * (a stand-in fetch, never the internet), the meter in the admin `stats` and the healthcheck (admins only; others a
 * coarse status), and the guards: at 80% of a cap admins are mailed once and relay intake, outbox backfill and thread
 * fetching wait; at 95% unsolicited remote content is refused; local posting goes on at 99%.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import worker from "../src/index";
import { newId } from "../src/db/ids";
import { deliveryWake } from "../src/federation/delivery/wake";
import { measure, meteredEnv, takeIsolateUsage } from "../src/lib/meter";
import { BudgetSchema, BudgetStatusSchema, HealthcheckSchema } from "../src/schemas/instance";
import { StatusSchema } from "../src/schemas/status";
import { GRAPHQL_URL } from "../src/services/usage-analytics";
import { flushUsage, usageFlush } from "../src/services/usage-budget";
import { json, makeAdmin, registerUser, valid, type TestUser } from "./helpers";
import { countingD1 } from "./d1-counter";
import { failingD1 } from "./failing-d1";
import { fill, q } from "./inbound";
import { A } from "./instances";
import { createPeer, type Peer } from "./peer";
import usageFixture from "./fixtures/budget/graphql-usage.json";
import errorFixture from "./fixtures/budget/graphql-error.json";
import badTokenFixture from "./fixtures/budget/bad-token.json";

const AS = "https://www.w3.org/ns/activitystreams";
const PUBLIC = `${AS}#Public`;
const today = () => new Date().toISOString().slice(0, 10);
const monthStart = () => `${today().slice(0, 7)}-01`;

const dayRow = async () =>
  (await q<Record<string, number | string>>("SELECT * FROM usage_days WHERE day = ?", today()))[0];

/** Today's D1 rows written set to `n` (of the Free plan's 100,000 a day), as the estimate would have it. */
async function writtenToday(n: number) {
  await q(
    `INSERT INTO usage_days (day, rows_written, month_rows_written, updated_at) VALUES (?1, ?2, ?2, ?3)
     ON CONFLICT (day) DO UPDATE SET rows_written = excluded.rows_written, month_rows_written = excluded.rows_written`,
    today(),
    n,
    Date.now(),
  );
}

async function runCron(at: number, vars: Record<string, string> = {}) {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: new Date(at), cron: "* * * * *" }),
    { ...env, ...vars } as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

const QUARTER = 15 * 60_000;
/** A cron minute on which the exact figures are due (a quarter hour), and one on which they are not. */
const due = () => Math.floor(Date.now() / QUARTER) * QUARTER;
const notDue = () => due() + 60_000;

let admin: TestUser;
let userToken: string;
const realEvery = usageFlush.everyMs;
const realFetch = globalThis.fetch;

beforeAll(async () => {
  admin = await registerUser({ instance: A, scopes: "read write follow admin" });
  await makeAdmin(admin.id);
  userToken = (await registerUser({ instance: A, scopes: "read write follow admin" })).token;
});
beforeEach(async () => {
  // Every call flushes in this file; each test starts from an empty day.
  usageFlush.everyMs = 0;
  await q("DELETE FROM usage_days");
});
afterEach(() => {
  usageFlush.everyMs = realEvery;
  globalThis.fetch = realFetch;
});
afterAll(() => q("DELETE FROM usage_days"));

const stats = async (token = admin.token) => json("/api/v1/pleroma/admin/stats", { instance: A, token });

describe("the estimate", () => {
  it("adds the isolate's counts to the day's row after the response, with the month's total; idle adds nothing", async () => {
    // Idle: nothing counted, nothing sent to D1.
    takeIsolateUsage();
    const counting = countingD1();
    await flushUsage({ ...env, DB: counting.db });
    expect(counting.count()).toBe(0);
    expect(await dayRow()).toBeUndefined();

    // The month so far, from an earlier day's row (unless today is the first).
    const first = today() === monthStart();
    if (!first)
      await q(
        "INSERT INTO usage_days (day, rows_written, month_rows_written, month_requests, updated_at) VALUES (?, 7, 5000, 300, 0)",
        monthStart(),
      );
    for (let i = 0; i < 3; i++) await json("/api/v1/instance", { instance: A });
    const row = (await dayRow())!;
    expect(row.requests).toBe(3);
    expect(row.rows_read).toBeGreaterThan(0);
    // The flushes' own upserts are written, and counted by the flush after them.
    expect(row.rows_written).toBeGreaterThan(0);
    expect(row.month_requests).toBe((first ? 0 : 300) + 3);
    expect(row.month_rows_written).toBe((first ? 0 : 5000) + (row.rows_written as number));

    // At most once per interval per isolate: within it, a call is counted but not written…
    usageFlush.everyMs = 3_600_000;
    await json("/api/v1/instance", { instance: A });
    expect((await dayRow())!.requests).toBe(3);
    // …and a flush that fails puts what it took back: the next one writes it.
    usageFlush.everyMs = 0;
    await flushUsage({ ...env, DB: failingD1(/usage_days/) });
    expect((await dayRow())!.requests).toBe(3);
    await json("/api/v1/instance", { instance: A });
    expect((await dayRow())!.requests).toBe(5);

    // What a flush itself costs, D1's own figures: one statement, one row written, a few read by key (the month's
    // latest row, the day's, their index entries): no walk, whatever the number of days kept.
    usageFlush.everyMs = 3_600_000;
    await json("/api/v1/instance", { instance: A });
    usageFlush.everyMs = 0;
    await q(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
       INSERT INTO usage_days (day, updated_at) SELECT date('2000-01-01', '+' || i || ' days'), 0 FROM n`,
    );
    const { usage } = await measure(() => flushUsage(meteredEnv(env)));
    expect(usage.queries).toBe(1);
    expect(usage.rowsWritten).toBe(1);
    expect(usage.rowsRead).toBeLessThanOrEqual(6);
    expect((await dayRow())!.requests).toBe(6);
  });

  it("the cron's invocations are counted too, and its runs write no more than the flush", async () => {
    takeIsolateUsage();
    await runCron(notDue());
    const row = (await dayRow())!;
    expect(row.requests).toBe(1);
    expect(row.rows_read).toBeGreaterThan(0);
    expect(row.exact).toBeNull();
  });
});

describe("exact figures (GraphQL Analytics API, recorded answers)", () => {
  const vars = { CF_ANALYTICS_TOKEN: "test-token", CF_ACCOUNT_ID: "0123456789abcdef0123456789abcdef" };
  /** A stand-in fetch answering the API with `answer`; records what was asked. */
  function answer(body: unknown, status = 200) {
    const asked: Request[] = [];
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      if (req.url !== GRAPHQL_URL) return realFetch(input, init);
      asked.push(req.clone());
      return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
    }) as typeof fetch;
    return asked;
  }
  const filled = () => fill(usageFixture, { TODAY: today(), MONTH_START: monthStart() });

  it("every 15 minutes the cron asks for the month so far, and admins see the account's figures", async () => {
    const asked = answer(filled());
    await runCron(notDue(), vars);
    expect(asked).toHaveLength(0);
    await runCron(due(), vars);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.method).toBe("POST");
    expect(asked[0]!.headers.get("authorization")).toBe("Bearer test-token");
    const sent = (await asked[0]!.json()) as { query: string; variables: Record<string, string> };
    expect(sent.variables).toEqual({ account: vars.CF_ACCOUNT_ID, from: monthStart(), to: today() });
    for (const dataset of [
      "workersInvocationsAdaptive",
      "d1AnalyticsAdaptiveGroups",
      "durableObjectsInvocationsAdaptiveGroups",
      "r2OperationsAdaptiveGroups",
      "imagesUniqueTransformations",
    ])
      expect(sent.query).toContain(dataset);

    const budget = valid(BudgetSchema, (await stats()).budget);
    const first = today() === monthStart();
    expect(budget).toMatchObject({ source: "exact", plan: "free", day: today(), exact_error: null });
    // Daily caps from today's figures; monthly ones (R2, Images) from the month's. Deletes are free in R2.
    expect(budget.caps.requests).toEqual({
      used: first ? 52345 : 12345,
      limit: 100_000,
      period: "day",
      percent: first ? 52.3 : 12.3,
    });
    expect(budget.caps.rows_read.used).toBe(first ? 2_400_000 : 1_500_000);
    expect(budget.caps.rows_written.used).toBe(first ? 50_000 : 30_000);
    expect(budget.caps.durable_object_requests.used).toBe(2500);
    expect(budget.caps.r2_class_a).toEqual({ used: 1000, limit: 1_000_000, period: "month", percent: 0.1 });
    expect(budget.caps.r2_class_b).toEqual({ used: 3500, limit: 10_000_000, period: "month", percent: 0 });
    expect(budget.caps.image_transformations.used).toBe(120);
    expect(budget.percent).toBe(first ? 52.3 : 30);
    expect(budget.pausing_fetches).toBe(false);

    // On Paid every cap is the month's included amount.
    const paid = valid(
      BudgetSchema,
      (await json("/api/v1/pleroma/admin/stats", { instance: A, token: admin.token, vars: { PLAN: "paid" } })).budget,
    );
    expect(paid.plan).toBe("paid");
    expect(paid.caps.requests).toMatchObject({ used: 52345, limit: 10_000_000, period: "month" });
    expect(paid.caps.rows_read).toMatchObject({ used: 2_400_000, limit: 25_000_000_000, period: "month" });
  });

  it("an error answer or a bad token is shown to admins, the estimate used, nothing answers 500", async () => {
    const asked = answer(errorFixture);
    await runCron(due(), vars);
    expect(asked).toHaveLength(1);
    let budget = valid(BudgetSchema, (await stats()).budget);
    expect(budget.source).toBe("estimate");
    expect(budget.exact_error).toBe("not authorized for that account");
    // The estimate goes on counting.
    expect(budget.caps.requests.used).toBeGreaterThan(0);

    answer(badTokenFixture, 403);
    await runCron(due() + QUARTER, vars);
    budget = valid(BudgetSchema, (await stats()).budget);
    expect(budget.source).toBe("estimate");
    expect(budget.exact_error).toBe("HTTP 403: Authentication error");

    answer("<html>502 Bad Gateway</html>", 502);
    await runCron(due() + 2 * QUARTER, vars);
    expect(valid(BudgetSchema, (await stats()).budget).exact_error).toMatch(/^HTTP 502/);
    // Unreachable.
    globalThis.fetch = (async () => {
      throw new Error("network down");
    }) as typeof fetch;
    await runCron(due() + 3 * QUARTER, vars);
    expect(valid(BudgetSchema, (await stats()).budget).exact_error).toContain("network down");
    globalThis.fetch = realFetch;
    valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck", { instance: A, token: admin.token }));
  });
});

describe("who sees the meter", () => {
  it("admins see the figures in `stats` and the healthcheck; others a coarse status at most", async () => {
    await writtenToday(85_000);
    const budget = valid(BudgetSchema, (await stats()).budget);
    expect(budget).toMatchObject({ status: "warning", source: "estimate", pausing_fetches: true });
    expect(budget.refusing_unsolicited).toBe(false);
    expect(budget.caps.rows_written.used).toBeGreaterThanOrEqual(85_000);
    expect(budget.percent).toBeGreaterThanOrEqual(85);

    // Not an admin: no stats at all.
    await json("/api/v1/pleroma/admin/stats", { instance: A, token: userToken, status: 403 });
    const anonymous = await json("/api/v1/pleroma/admin/stats", { instance: A, status: 403 });
    expect(anonymous.error).toBeTruthy();

    const health = async (token?: string) =>
      valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck", { instance: A, token }))
        .job_queue_stats as Record<string, unknown>;
    expect(valid(BudgetStatusSchema, (await health()).budget)).toEqual({ status: "warning" });
    expect(valid(BudgetStatusSchema, (await health(userToken)).budget)).toEqual({ status: "warning" });
    expect(valid(BudgetSchema, (await health(admin.token)).budget).caps.rows_written.limit).toBe(100_000);
    await writtenToday(0);
    expect((await health()).budget).toEqual({ status: "ok" });
  });
});

describe("the guards", () => {
  let peer: Peer;
  let relays: Peer;
  let unroute: () => void;
  let n = 0;
  beforeAll(() => {
    peer = createPeer();
    relays = createPeer("relay.example");
  });
  beforeEach(() => {
    unroute = peer.route([relays]);
    deliveryWake.run = async () => {};
  });
  const realWake = deliveryWake.run;
  afterEach(() => {
    unroute();
    deliveryWake.run = realWake;
  });

  /** A public note by `author` on the peer, served at its id. */
  function servedNote(author: string) {
    const id = `${author}/notes/${Date.now()}${n++}`;
    const note = {
      "@context": AS,
      id,
      type: "Note",
      attributedTo: author,
      content: `<p>note ${id}</p>`,
      published: new Date().toISOString(),
      to: [PUBLIC],
      cc: [`${author}/followers`],
    };
    peer.objects.set(id, note);
    return note;
  }
  const stored = async (uri: string) => (await q("SELECT id FROM statuses WHERE uri = ?", uri)).length > 0;
  const asked = (path: string) => peer.requests.filter((r) => r === `GET ${path}`).length;

  it("at 80%: admins are mailed once; a relay's Announce is not taken, backfill and thread fetching wait", async () => {
    const mails = async () =>
      (
        await q<{ n: number }>(
          `SELECT count(*) AS n FROM mail_outbox WHERE "to" = (SELECT email FROM users WHERE account_id = ?)
            AND subject LIKE 'Cloudflare usage:%'`,
          admin.id,
        )
      )[0]!.n;
    const before = await mails();
    await writtenToday(85_000);
    await json("/api/v1/instance", { instance: A });
    expect(await mails()).toBe(before + 1);
    const [mail] = await q<{ subject: string; text: string }>(
      `SELECT subject, text FROM mail_outbox WHERE subject LIKE 'Cloudflare usage:%' ORDER BY created_at DESC LIMIT 1`,
    );
    expect(mail!.subject).toContain("D1 rows written");
    expect(mail!.text).toContain("of 100,000 a day");
    // Once a day per cap.
    await json("/api/v1/instance", { instance: A });
    expect(await mails()).toBe(before + 1);

    // An accepted LitePub relay's Announce: nothing fetched, nothing stored…
    const relay = relays.actor("litepub");
    await q(
      `INSERT INTO relays (id, url, kind, actor_uri, inbox_url, follow_uri, state, created_at, updated_at)
       VALUES (?1, ?2, 'litepub', ?2, ?2 || '/inbox', ?2 || '#follow', 'accepted', 0, 0)`,
      newId(),
      relay,
    );
    const author = peer.actor();
    const note = servedNote(author);
    const announce = () =>
      relays.send(relay, {
        "@context": AS,
        id: `${relay}#announces/${n++}`,
        type: "Announce",
        actor: relay,
        object: note.id,
      });
    expect((await announce()).status).toBe(202);
    expect(await stored(note.id)).toBe(false);
    expect(asked(new URL(note.id).pathname)).toBe(0);

    // A remote account with an outbox, followed: its outbox is not read. Opening one of its posts' context: its
    // thread is not fetched.
    const name = `far${n++}`;
    const uri = `${peer.origin}/users/${name}`;
    const accountId = newId();
    await q(
      `INSERT INTO accounts (id, username, domain, uri, url, inbox_url, outbox_url, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?4, ?4 || '/inbox', ?4 || '/outbox', 0, 0)`,
      accountId,
      name,
      peer.host,
      uri,
    );
    const statusId = newId();
    const statusUri = `${uri}/statuses/1`;
    await q(
      `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
       VALUES (?1, ?2, ?2, ?3, ?1, ?2, '<p>far</p>', '', 'public', 0, ?4)`,
      statusId,
      statusUri,
      accountId,
      Date.now(),
    );
    const reader = await registerUser({ instance: A, scopes: "read write follow" });
    await json(`/api/v1/accounts/${accountId}/follow`, { instance: A, token: reader.token, body: {} });
    await json(`/api/v1/statuses/${statusId}/context`, { instance: A, token: reader.token });
    expect(asked(`/users/${name}/outbox`)).toBe(0);
    expect(asked(`/users/${name}/statuses/1`)).toBe(0);

    // Below 80% again, each goes ahead (nothing was claimed while paused).
    await writtenToday(0);
    expect((await announce()).status).toBe(202);
    expect(await stored(note.id)).toBe(true);
    await json(`/api/v1/accounts/${accountId}/unfollow`, { instance: A, token: reader.token, body: {} });
    await json(`/api/v1/accounts/${accountId}/follow`, { instance: A, token: reader.token, body: {} });
    expect(asked(`/users/${name}/outbox`)).toBe(1);
    await json(`/api/v1/statuses/${statusId}/context`, { instance: A, token: reader.token });
    expect(asked(`/users/${name}/statuses/1`)).toBeGreaterThan(0);
  });

  it("at 95% a post nobody here asked for is refused; local users still post at 99%", async () => {
    const me = await registerUser({ instance: A, scopes: "read write" });
    const note = servedNote(peer.actor());
    const search = async () =>
      (
        await json(`/api/v2/search?q=${encodeURIComponent(note.id)}&resolve=true&type=statuses`, {
          instance: A,
          token: me.token,
        })
      ).statuses as unknown[];
    await writtenToday(96_000);
    expect(valid(BudgetSchema, (await stats()).budget)).toMatchObject({
      status: "critical",
      refusing_unsolicited: true,
    });
    expect(await search()).toEqual([]);
    expect(await stored(note.id)).toBe(false);

    await writtenToday(99_000);
    const posted = valid(
      StatusSchema,
      await json("/api/v1/statuses", { instance: A, token: me.token, body: { status: "still posting at 99%" } }),
    );
    expect(posted.content).toContain("still posting");

    // With room again, the same post is taken.
    await writtenToday(0);
    expect(await search()).toHaveLength(1);
    expect(await stored(note.id)).toBe(true);
  });
});

describe("the dashboard's statuses by visibility", () => {
  it("are counted fresh on a small instance, and kept an hour at the edge once there are many (counting walks them all)", async () => {
    const cached = { STATS_CACHE_SECONDS: "60" };
    const counts = async (vars = cached) =>
      (await json("/api/v1/pleroma/admin/stats", { instance: A, token: admin.token, vars }))
        .status_visibility as Record<string, number>;
    const addStatuses = (n: number, tag: string) =>
      q(
        `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})
         SELECT printf('0VIS${tag}%016d', i), 'http://localhost/objects/vis${tag}' || i, 'http://localhost/notice/vis${tag}' || i,
                ?1, printf('0VIS${tag}%016d', i), 'http://localhost/contexts/vis${tag}' || i, 'x', 'x', 'unlisted', 1, ?2 FROM n`,
        admin.id,
        Date.now(),
      );
    const small = await counts();
    expect(Object.values(small).reduce((a, b) => a + b, 0)).toBeLessThan(1000);
    await addStatuses(1, "a");
    // Small: fresh even with the cache on.
    expect((await counts()).unlisted).toBe(small.unlisted + 1);
    await addStatuses(1000, "b");
    const grown = await counts();
    expect(grown.unlisted).toBe(small.unlisted + 1001);
    await addStatuses(1, "c");
    // Kept: the figures of the last count (the rest of the dashboard is read fresh).
    expect(await counts()).toEqual(grown);
    expect(valid(BudgetSchema, (await stats()).budget).status).toBeDefined();
    // Without the cache (STATS_CACHE_SECONDS=0), counted every time.
    expect((await counts({ STATS_CACHE_SECONDS: "0" })).unlisted).toBe(grown.unlisted + 1);
  });
});
