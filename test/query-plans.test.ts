/**
 * Every statement the list and timeline routes send walks an index. The routes are called as a client calls them
 * (real tokens, a user with data), the D1 binding records each statement with its parameters
 * (test/d1-counter.ts), and `EXPLAIN QUERY PLAN` of each, as bound, must not walk a whole real table.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { countingD1, type SentStatement } from "./d1-counter";
import { BASE, call, json, post, registerUser, upload, type TestUser } from "./helpers";
import { sql } from "drizzle-orm";
import { db, statement } from "../src/db/client";
import { newId } from "../src/db/ids";
import { hasAudience, inboxesOf } from "../src/services/audience";
import type { OutboxActivity } from "../src/services/outbox";
import { deletionState, runAccountDeletions } from "../src/services/account-deletion";

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

/**
 * Real tables a statement may walk whole: small, and bounded by configuration rather than by users or statuses.
 * Empty today: the 30-second settings refresh (`instance_settings`, `federation_policies`) reads through the
 * unwrapped binding (WRAPPED_BINDING in src/lib/meter.ts), so it is never recorded here.
 */
const SMALL_TABLES = new Set<string>([]);

/**
 * Indexes a page may walk from its newest end with no bound: partial indexes holding exactly the timeline's
 * statuses in its order, so the walk stops at the page's limit (the first page of the public timeline).
 */
const PAGE_WALKS = new Set(["statuses_public_tl", "statuses_local_tl"]);

/**
 * Partial indexes small by construction, walked whole: `accounts_home_pull` holds only the accounts whose
 * statuses readers pull (more local followers than FANOUT_INLINE_MAX), a handful on any instance;
 * `account_deletions_pending` the deletions not finished.
 */
const SMALL_INDEXES = new Set(["accounts_home_pull", "account_deletions_pending"]);

/** Words that may follow a table name after FROM or JOIN and are not its alias. */
const NOT_ALIAS = new Set(
  "where on join left right inner outer cross natural using indexed not order group limit union except intersect having window as set values select returning".split(
    " ",
  ),
);

/** Alias (or name) -> table, as written after FROM and JOIN: plans name tables by their alias. */
function tablesByAlias(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const [, table, alias] of text.matchAll(
    /\b(?:FROM|JOIN)\s+"?([A-Za-z_]\w*)"?(?:\s+(?:AS\s+)?"?([A-Za-z_]\w*)"?)?/gi,
  )) {
    map.set(table!.toLowerCase(), table!.toLowerCase());
    if (alias && !NOT_ALIAS.has(alias.toLowerCase())) map.set(alias.toLowerCase(), table!.toLowerCase());
  }
  return map;
}

/**
 * Names of row sources that are not tables: CTEs (`params(me, now) AS (`, `page(id) AS MATERIALIZED (`) and
 * subqueries in FROM (`(SELECT …) rn`). Loose (a column alias after a call matches too), which is harmless:
 * only names that are not real tables are looked up here.
 */
const derivedNames = (text: string) =>
  new Set(
    [
      ...[...text.matchAll(/\b(\w+)\s*(?:\([^()]*\))?\s+AS\s+(?:NOT\s+)?(?:MATERIALIZED\s+)?\(/gi)].map((m) => m[1]!),
      ...[...text.matchAll(/\)\s+(?:AS\s+)?"?([A-Za-z_]\w*)"?/gi)].map((m) => m[1]!),
    ].map((name) => name.toLowerCase()),
  );

let realTables = new Set<string>();

async function planOf(s: SentStatement): Promise<PlanRow[]> {
  return (
    await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
      .bind(...s.params)
      .all<PlanRow>()
  ).results;
}

/**
 * The plan lines that walk a real table whole:
 * - `SCAN t`, or `SCAN t USING [COVERING] INDEX i` (all of the index) unless i is one of PAGE_WALKS. A scanned
 *   name that is neither a real table nor a CTE or subquery of the statement counts too (an alias this reader
 *   did not resolve, e.g. after a comma join), so the check fails rather than passes when unsure;
 * - `SEARCH t USING INDEX i (c=?)` where the statement asks `t.c IS NULL`: an index on a mostly-NULL column
 *   (`statuses_reblog_of`) walked for its NULLs is every row but a few.
 */
function fullWalks(s: SentStatement, plan: PlanRow[]): string[] {
  const aliases = tablesByAlias(s.sql);
  const derived = derivedNames(s.sql);
  return plan
    .map((r) => r.detail)
    .filter((detail) => {
      // Keys (sqlite_autoindex_*) are left out: aliases are reused, and `a.id IS NULL` after a LEFT JOIN is common.
      const search = /^SEARCH "?(\w+)"? USING (?:COVERING )?INDEX (?!sqlite_autoindex_)\w+ \((\w+)=\?\)/.exec(detail);
      if (search) return new RegExp(`\\b"?${search[1]}"?\\."?${search[2]}"?\\s+IS\\s+NULL`, "i").test(s.sql);
      const m = /^SCAN "?(\w+)"?(?: USING (?:COVERING )?INDEX (\w+))?/.exec(detail);
      if (!m || / VIRTUAL TABLE /.test(detail) || detail === "SCAN CONSTANT ROW") return false; // json_each, FTS5 MATCH
      const table = aliases.get(m[1]!.toLowerCase()) ?? m[1]!.toLowerCase();
      if (!realTables.has(table)) return !derived.has(table);
      return !SMALL_TABLES.has(table) && !(m[2] && (PAGE_WALKS.has(m[2]) || SMALL_INDEXES.has(m[2])));
    });
}

/**
 * The plan lines under the `page` CTE (`MATERIALIZE page`, or `CO-ROUTINE page` where it is read once): the
 * page's own walk in the one-statement reads (services/hydrate.ts).
 */
function pageWalk(plan: PlanRow[]): string[] {
  const root = plan.find((r) => r.detail === "MATERIALIZE page" || r.detail === "CO-ROUTINE page");
  if (!root) return [];
  const inside = new Set([root.id]);
  const lines: string[] = [];
  for (const r of plan) if (inside.has(r.parent)) (inside.add(r.id), lines.push(r.detail)); // children follow parents
  return lines;
}

interface Explained extends SentStatement {
  plan: PlanRow[];
  walks: string[];
}

/**
 * One recording binding and one bindings object for every call: the Worker caches per bindings object, as in
 * production, so the routes run warm (and the test stays fast).
 */
const recorder = countingD1();
const recorded = { origin: BASE, bindings: { ...env, DB: recorder.db } as typeof env };

/** Calls a route through the recording binding and explains every statement it sent. */
async function explainRoute(route: string, u?: TestUser): Promise<Explained[]> {
  recorder.reset();
  const res = await call(route, { token: u?.token, instance: recorded });
  const body = await res.text();
  expect(res.status, `${route}: ${body.slice(0, 300)}`).toBe(200);
  // The statements are the real ones only if there was something to read.
  const answer = JSON.parse(body) as unknown;
  expect(
    Array.isArray(answer) ? answer.length : Object.values(answer as object).flat().length,
    `${route} answered nothing`,
  ).toBeGreaterThan(0);
  const explained: Explained[] = [];
  for (const s of recorder.statements()) {
    const plan = await planOf(s);
    explained.push({ ...s, plan, walks: fullWalks(s, plan) });
  }
  expect(explained.length, `${route} sent no statement`).toBeGreaterThan(0);
  return explained;
}

const describeStatement = (route: string, s: Explained, problem: string) =>
  `${route}\n  ${problem}\n  sql: ${s.sql.replace(/\s+/g, " ").slice(0, 2000)}\n  params: ${JSON.stringify(s.params)}\n  plan:\n${s.plan.map((r) => `    ${r.id}<${r.parent} ${r.detail}`).join("\n")}`;

const act = (path: string, u: TestUser, body: Record<string, unknown> = {}) =>
  json(path, { method: "POST", token: u.token, body });

describe("query plans of list and timeline routes", () => {
  let me: TestUser, friend: TestUser;
  const ids: Record<string, string> = {};
  /** route -> its statements explained, filled by the first test. */
  const explained = new Map<string, Explained[]>();

  beforeAll(async () => {
    const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all<{ name: string }>();
    realTables = new Set(tables.results.map((r) => r.name.toLowerCase()));
    const [fan, muted, blocked] = await Promise.all([registerUser(), registerUser(), registerUser()]);
    [me, friend] = await Promise.all([registerUser(), registerUser()]);
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: me.token,
      body: { locked: true, hide_favorites: false },
    });
    await act(`/api/v1/accounts/${friend.id}/follow`, me);
    await act(`/api/v1/accounts/${me.id}/follow`, friend);
    await act(`/api/v1/follow_requests/${friend.id}/authorize`, me);
    await act(`/api/v1/accounts/${me.id}/follow`, fan); // stays a request: me is locked
    await act(`/api/v1/accounts/${muted.id}/mute`, me);
    await act(`/api/v1/accounts/${blocked.id}/block`, me);
    const media = await upload(friend);
    const first = await post(friend, { status: "#plans first", visibility: "public" });
    const withMedia = await post(friend, { status: `#plans picture @${me.username}`, media_ids: [media.id] });
    const reply = await post(me, { status: `@${friend.username} a reply #plans`, in_reply_to_id: first.id });
    const replyToReply = await post(friend, {
      status: `@${me.username} a reply to the reply`,
      in_reply_to_id: reply.id,
    });
    await post(me, { status: `@${friend.username} and down again`, in_reply_to_id: replyToReply.id });
    await post(friend, { status: "followers only", visibility: "private" });
    await post(friend, { status: "quiet", visibility: "unlisted" });
    const dm = await post(friend, { status: `@${me.username} psst`, visibility: "direct" });
    await post(me, { status: `@${friend.username} back`, visibility: "direct", in_reply_to_id: dm.id });
    const mine = await post(me, { status: "pinned #plans searchable" });
    await act(`/api/v1/statuses/${mine.id}/pin`, me);
    await act(`/api/v1/statuses/${first.id}/favourite`, me);
    await act(`/api/v1/statuses/${withMedia.id}/bookmark`, me);
    await act(`/api/v1/statuses/${mine.id}/favourite`, friend);
    await act(`/api/v1/statuses/${mine.id}/reblog`, friend);
    await json(`/api/v1/pleroma/statuses/${first.id}/reactions/${encodeURIComponent("👍")}`, {
      method: "PUT",
      token: me.token,
    });
    const list = await json("/api/v1/lists", { method: "POST", token: me.token, body: { title: "plans" } });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: me.token,
      body: { account_ids: [friend.id] },
    });
    await act("/api/v1/tags/plans/follow", me);
    await act("/api/v1/tags/plans2/follow", me);
    const [newest] = await json("/api/v1/notifications?limit=1", { token: me.token });
    Object.assign(ids, {
      notification: newest.id,
      first: first.id,
      firstUrl: first.url,
      withMedia: withMedia.id,
      reply: reply.id,
      replyToReply: replyToReply.id,
      mine: mine.id,
      list: list.id,
    });
  });

  /** Routes read as `me` (signed in), then anonymously; the page walks of the second list must not sort. */
  const signedIn = () => {
    const { first, withMedia, reply, mine, list } = ids;
    return [
      "/api/v1/timelines/home",
      "/api/v1/timelines/home?with_muted=true",
      "/api/v1/timelines/home?only_media=true",
      "/api/v1/timelines/home?exclude_visibilities[]=direct&exclude_visibilities[]=private",
      `/api/v1/timelines/home?max_id=${withMedia}`,
      `/api/v1/timelines/home?min_id=${first}`,
      `/api/v1/timelines/home?since_id=${first}`,
      `/api/v1/timelines/list/${list}`,
      `/api/v1/timelines/list/${list}?max_id=${mine}`,
      "/api/v1/timelines/public",
      "/api/v1/timelines/public?local=true",
      `/api/v1/timelines/public?max_id=${mine}`,
      `/api/v1/timelines/public?min_id=${first}`,
      `/api/v1/timelines/public?local=true&since_id=${first}`,
      "/api/v1/timelines/tag/plans",
      `/api/v1/timelines/tag/plans?max_id=${mine}`,
      "/api/v1/timelines/direct",
      `/api/v1/accounts/${friend.id}/statuses`,
      `/api/v1/accounts/${friend.id}/statuses?max_id=${withMedia}`,
      `/api/v1/accounts/${me.id}/statuses?pinned=true`,
      `/api/v1/accounts/${me.id}/statuses?exclude_replies=true`,
      `/api/v1/accounts/${friend.id}/statuses?tagged=plans`,
      "/api/v1/notifications",
      "/api/v1/notifications?types[]=mention&types[]=favourite",
      "/api/v1/notifications?exclude_types[]=follow_request&exclude_types[]=reblog",
      `/api/v1/notifications?max_id=${ids.notification}`,
      "/api/v1/favourites",
      "/api/v1/bookmarks",
      "/api/v1/conversations",
      `/api/v1/accounts/${me.id}/followers`,
      `/api/v1/accounts/${me.id}/following`,
      "/api/v1/blocks",
      "/api/v1/mutes",
      "/api/v1/follow_requests",
      "/api/v1/lists",
      `/api/v1/lists/${list}/accounts`,
      `/api/v1/statuses/${reply}/context`,
      "/api/v2/search?q=searchable&type=statuses",
      // A pasted address of a local status: found by `statuses_url_local`, which holds local statuses only.
      `/api/v2/search?q=${encodeURIComponent(ids.firstUrl!)}&resolve=true`,
      `/api/v1/pleroma/accounts/${me.id}/favourites`,
      "/api/v1/tags/plans",
      "/api/v1/followed_tags",
      "/api/v1/pleroma/bluesky_bridge",
    ];
  };
  const unsorted = () => [
    "/api/v1/timelines/public",
    "/api/v1/timelines/public?local=true",
    "/api/v1/timelines/tag/plans",
    `/api/v1/accounts/${friend.id}/statuses`,
  ];

  it("no statement of these routes walks a whole table", async () => {
    for (const route of signedIn()) explained.set(route, await explainRoute(route, me));
    for (const route of unsorted()) explained.set(`${route} (anonymous)`, await explainRoute(route));
    const problems = [...explained].flatMap(([route, statements]) =>
      statements.filter((s) => s.walks.length).map((s) => describeStatement(route, s, `walks: ${s.walks.join("; ")}`)),
    );
    expect(problems.join("\n\n"), "statements that walk a whole table").toBe("");
  });

  it("the page walks of the public, tag and account timelines come in index order, unsorted", async () => {
    const { mine, withMedia } = ids;
    const routes = [
      ...unsorted().flatMap((r) => [r, `${r} (anonymous)`]),
      `/api/v1/timelines/public?max_id=${mine}`,
      `/api/v1/timelines/tag/plans?max_id=${mine}`,
      `/api/v1/accounts/${friend.id}/statuses?max_id=${withMedia}`,
    ];
    const problems = routes.flatMap((route) => {
      const statements = explained.get(route);
      if (!statements) return [`${route}: not read by the first test`];
      const page = statements.find((s) => pageWalk(s.plan).length);
      if (!page) return [`${route}: no statement materialises a page`];
      return pageWalk(page.plan).includes("USE TEMP B-TREE FOR ORDER BY")
        ? [describeStatement(route, page, "the page walk sorts")]
        : [];
    });
    expect(problems.join("\n\n")).toBe("");
  });

  it("a status's context walks the reply index from the status down (services/context.ts names it)", async () => {
    const context = await json(`/api/v1/statuses/${ids.reply}/context`, { token: me.token });
    expect(context.ancestors.map((s: { id: string }) => s.id)).toEqual([ids.first]);
    expect(context.descendants).toHaveLength(2);
    expect(context.descendants[0].id).toBe(ids.replyToReply);
    const plan = explained.get(`/api/v1/statuses/${ids.reply}/context`)!.flatMap((s) => s.plan.map((r) => r.detail));
    expect(plan).toContain("SEARCH r USING INDEX statuses_reply (in_reply_to_id=?)");
  });

  it("the recorder sees each statement with its parameters, batches included", async () => {
    const d1 = countingD1();
    await d1.db.prepare("SELECT id FROM statuses WHERE id = ?").bind("a").first();
    await d1.db.batch([d1.db.prepare("SELECT ?").bind(1), d1.db.prepare("SELECT ?, ?").bind(2, 3)]);
    expect(d1.count()).toBe(2);
    expect(d1.statements()).toEqual([
      { sql: "SELECT id FROM statuses WHERE id = ?", params: ["a"] },
      { sql: "SELECT ?", params: [1] },
      { sql: "SELECT ?, ?", params: [2, 3] },
    ]);
  });

  it("the checker catches full walks (negative control)", async () => {
    const walks = async (text: string, ...params: unknown[]) => {
      const s = { sql: text, params };
      return fullWalks(s, await planOf(s));
    };
    // An unindexed column, named plainly, through an alias, and after a comma join this reader does not resolve.
    expect(await walks("SELECT id FROM statuses WHERE spoiler_text = ?", "x")).toEqual(["SCAN statuses"]);
    expect(await walks("SELECT s.id FROM statuses s WHERE s.spoiler_text = ?", "x")).toEqual(["SCAN s"]);
    expect(
      await walks("SELECT s.id FROM accounts a, statuses s WHERE s.spoiler_text = ? AND a.id = s.account_id", "x"),
    ).toContain("SCAN s");
    // A whole index, and a mostly-NULL column's index walked for its NULLs.
    expect(await walks("SELECT account_id FROM statuses INDEXED BY statuses_account")).toEqual([
      "SCAN statuses USING COVERING INDEX statuses_account",
    ]);
    expect(await walks("SELECT s.id FROM statuses s WHERE s.reblog_of_id IS NULL")).toHaveLength(1);
    // What the routes do is fine: a key look-up, an index range, a CTE, json_each.
    expect(await walks("SELECT id FROM statuses WHERE id = ?", "x")).toEqual([]);
    expect(
      await walks("SELECT id FROM statuses WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT 20", "a", "b"),
    ).toEqual([]);
    expect(
      await walks(
        "WITH page(id) AS MATERIALIZED (SELECT value FROM json_each(?)) SELECT s.id FROM page JOIN statuses s ON s.id = page.id",
        "[]",
      ),
    ).toEqual([]);
    // A page that sorts is caught by the page-walk check.
    const sorted = await planOf({
      sql: "WITH page(id) AS MATERIALIZED (SELECT id FROM statuses WHERE account_id = ? ORDER BY created_at DESC LIMIT 20) SELECT id FROM page",
      params: ["a"],
    });
    expect(pageWalk(sorted)).toContain("USE TEMP B-TREE FOR ORDER BY");
  });
});

describe("the outbox audience's statements (issue 30)", () => {
  it("the write's gate and the expansion walk indexes only, whatever the number of followers", async () => {
    const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all<{ name: string }>();
    realTables = new Set(tables.results.map((r) => r.name.toLowerCase()));
    const me = await registerUser();
    const t = Date.now();
    const stmts = [];
    for (let i = 0; i < 30; i++) {
      const id = newId();
      const host = `plan${i % 3}.example`;
      stmts.push(
        env.DB.prepare(
          "INSERT INTO accounts (id, username, domain, uri, url, inbox_url, shared_inbox_url, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ).bind(
          id,
          `f${i}`,
          host,
          `https://${host}/u/f${i}`,
          `https://${host}/@f${i}`,
          `https://${host}/u/f${i}/inbox`,
          `https://${host}/inbox`,
          t,
          t,
        ),
        env.DB.prepare("INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)").bind(
          newId(),
          id,
          me.id,
          t,
        ),
      );
    }
    await env.DB.batch(stmts);
    const s = await post(me, { status: "to my followers" });
    const activity: OutboxActivity = { type: "Create", statusId: s.id };
    const recorder = countingD1();
    const d = db({ DB: recorder.db } as never);
    await statement(d, sql`SELECT ${hasAudience(me.id, activity)} AS yes`).first();
    const rows = await statement(d, inboxesOf(me.id, activity)).all<{ inbox: string }>();
    expect(rows.results.map((r) => r.inbox).sort()).toEqual([
      "https://plan0.example/inbox",
      "https://plan1.example/inbox",
      "https://plan2.example/inbox",
    ]);
    const problems: string[] = [];
    for (const sent of recorder.statements()) {
      const walks = fullWalks(sent, await planOf(sent));
      if (walks.length) problems.push(`${sent.sql.slice(0, 200)}: ${walks.join("; ")}`);
    }
    expect(problems).toEqual([]);
  });
});

describe("the account deletion job's statements (review of services/)", () => {
  it("every step's statements walk indexes only: no SCAN of notifications, poll_votes or any other table", async () => {
    const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all<{ name: string }>();
    realTables = new Set(tables.results.map((r) => r.name.toLowerCase()));
    const [gone, friend] = await Promise.all([registerUser(), registerUser()]);
    await act(`/api/v1/accounts/${gone.id}/follow`, friend);
    await act(`/api/v1/accounts/${friend.id}/follow`, gone);
    await post(gone, { status: "soon gone" });
    expect(await act("/api/pleroma/delete_account", gone, { password: gone.password })).toEqual({ status: "success" });
    const recorder = countingD1();
    // The whole job, through the recording binding: every stage's statements, the end's included.
    await runAccountDeletions({ ...env, DB: recorder.db } as typeof env, Date.now(), 50);
    expect(await deletionState(db(env), gone.id)).toBe("done");
    const sent = recorder.statements();
    // The per-table deletes are all there (one per table of OWN_ROWS at least once).
    expect(sent.filter((s) => /^DELETE FROM \w+ WHERE \([\w, ]+\) IN/.test(s.sql)).length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const s of sent) {
      const plan = await planOf(s);
      // The outbox is a queue (rows go an hour after expansion): walking it while the actor's Delete is delivered
      // costs less than an index written with every activity sent.
      const walks = fullWalks(s, plan).filter((w) => !/^SCAN (federation_outbox|o)\b/.test(w));
      if (walks.length) problems.push(describeStatement("account deletion", { ...s, plan, walks }, walks.join("; ")));
    }
    expect(problems.join("\n\n"), "statements that walk a whole table").toBe("");
  });
});
