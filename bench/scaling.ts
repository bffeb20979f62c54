/**
 * Read latency as the data grows (see bench/README.md).
 *
 *   npm run bench:scaling                          # 10k, 100k and 1M statuses: seed, measure, chart
 *   BENCH_SIZES=10000,100000 npm run bench:scaling # a quicker run
 *   BENCH_REUSE=1 npm run bench:scaling            # measure again on databases already seeded
 *
 * For each size it seeds its own local database (.wrangler/bench-scaling-<size>) with set-based SQL: the same
 * 6,000 users at every size (so only the statuses and what hangs off them grow), a power user who follows 5,000
 * accounts, ten celebrities followed by everyone (pulled into home timelines, not fanned out), home feeds as
 * posting writes them, tags, favourites and their notifications. Then it starts `wrangler dev` on that state
 * and measures eight read routes: 200 sequential requests, then a short run at 10 connections. It prints a
 * markdown table and writes bench/scaling.svg (p50 per route against log-scaled size).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashPassword, randomToken, sha256 } from "../src/lib/crypto";
import { benchId, load, percentile, sqlString as q, startServer, wrangler } from "./harness";
import { chart } from "./scaling-chart";

const SIZES = (process.env.BENCH_SIZES ?? "10000,100000,1000000").split(",").map(Number);
const SEQUENTIAL = Number(process.env.BENCH_REQUESTS ?? 200);
const CONCURRENT_SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CHUNK = 200_000; // statuses per `wrangler d1 execute`: one file per chunk keeps each execute bounded

const USERS = 6000;
const CELEBRITIES = 10; // accounts 0-9: followed by everyone, so over the 200-follower fan-out limit
const POWER = 10; // follows accounts 11-5010 and the celebrities
const ORDINARY = 11; // ordinary users 11-60 (tokens); each follows the celebrities and 2-8 others
const ORDINARY_TOKENS = 50;
const LIST_MEMBERS = 50; // the power user's list: accounts 11-60
const account = (n: number) => benchId(1_000_000 + n);
const status = (n: number) => benchId(2_000_000_000 + n);
const LIST = benchId(8_000_000);
const accountSql = (expr: string) => `printf('%026d', 1000000 + ${expr})`;
const statusSql = (expr: string) => `printf('%026d', 2000000000 + ${expr})`;
// Status i: written by a celebrity (i / 50 % 10) when i % 50 = 0, else by one of the other accounts.
const authorOf = `CASE WHEN i % 50 = 0 THEN (i / 50) % ${CELEBRITIES} ELSE ${CELEBRITIES} + (i * 7919) % ${USERS - CELEBRITIES} END`;
// Every fifth status is favourited: a celebrity's by 20 accounts, others' by one.
const favouritesOf = `CASE WHEN i % 50 = 0 THEN 20 WHEN i % 5 = 0 THEN 1 ELSE 0 END`;

interface Tokens {
  power: string;
  celebrity: string;
  ordinary: string[];
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

function execute(persist: string, name: string, sql: string) {
  const file = join(persist, `${name}.sql`);
  writeFileSync(file, sql);
  wrangler(persist, ["d1", "execute", "DB", "--local", "--yes", "--file", file]);
  rmSync(file);
}

/** Accounts, credentials, tokens, follows and the list: the same at every size. */
async function seedGraph(persist: string, t0: number): Promise<Tokens> {
  const hash = await hashPassword("bench password");
  const owners = [POWER, 0, ...Array.from({ length: ORDINARY_TOKENS }, (_, i) => ORDINARY + i)];
  const tokens = await Promise.all(owners.map(async (owner) => ({ owner, token: randomToken(32) })));
  const tokenRows = await Promise.all(
    tokens.map(
      async ({ owner, token }, i) =>
        `(${q(benchId(9_000_000 + i))}, ${q(await sha256(token))}, NULL, ${q(account(owner))}, 'read write follow push', ${t0}, ${t0 + 10 * 365 * 86400_000})`,
    ),
  );
  execute(
    persist,
    "graph",
    `
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${USERS - 1})
INSERT INTO accounts (id, username, display_name, uri, url, created_at, updated_at)
SELECT ${accountSql("i")}, 'bench' || i, 'Bench ' || i, 'http://localhost/users/bench' || i, 'http://localhost/users/bench' || i, ${t0}, ${t0} FROM n;
INSERT INTO users (account_id, email, created_at) SELECT id, username || '@example.com', ${t0} FROM accounts;
INSERT INTO credentials (account_id, password_hash) SELECT id, ${q(hash)} FROM accounts;
INSERT INTO tokens (id, token_hash, app_id, account_id, scopes, created_at, expires_at) VALUES ${tokenRows.join(",\n")};
-- Everyone but the celebrities follows all of them.
WITH RECURSIVE n(i) AS (SELECT ${CELEBRITIES} UNION ALL SELECT i + 1 FROM n WHERE i < ${USERS - 1}), c(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM c WHERE j < ${CELEBRITIES - 1})
INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at)
SELECT printf('%026d', 3000000000 + i * 100 + j), ${accountSql("i")}, ${accountSql("j")}, 1, 0, ${t0} FROM n, c;
-- The power user follows 5,000 accounts.
WITH RECURSIVE k(j) AS (SELECT ${POWER + 1} UNION ALL SELECT j + 1 FROM k WHERE j < ${POWER + 5000})
INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at)
SELECT printf('%026d', 4000000000 + j), ${accountSql(String(POWER))}, ${accountSql("j")}, 1, 0, ${t0} FROM k;
-- Everyone else follows 2 to 8 others (none of them reaches 200 followers).
WITH RECURSIVE n(i) AS (SELECT ${POWER + 1} UNION ALL SELECT i + 1 FROM n WHERE i < ${USERS - 1}), k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 8)
INSERT OR IGNORE INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at)
SELECT printf('%026d', 5000000000 + i * 100 + j), ${accountSql("i")}, ${accountSql(`${CELEBRITIES} + (i * 37 + j * j * 7) % ${USERS - CELEBRITIES}`)}, 1, 0, ${t0}
FROM n, k WHERE j <= 2 + i % 7 AND ${CELEBRITIES} + (i * 37 + j * j * 7) % ${USERS - CELEBRITIES} <> i;
INSERT INTO lists (id, account_id, title, created_at) VALUES (${q(LIST)}, ${q(account(POWER))}, 'bench list', ${t0});
WITH RECURSIVE k(j) AS (SELECT ${ORDINARY} UNION ALL SELECT j + 1 FROM k WHERE j < ${ORDINARY + LIST_MEMBERS - 1})
INSERT INTO list_accounts (id, list_id, account_id, created_at) SELECT printf('%026d', 8100000 + j), ${q(LIST)}, ${accountSql("j")}, ${t0} FROM k;
`,
  );
  const of = (owner: number) => tokens.filter((t) => t.owner === owner).map((t) => t.token);
  return { power: of(POWER)[0], celebrity: of(0)[0], ordinary: tokens.slice(2).map((t) => t.token) };
}

/**
 * Statuses [from, to) with what posting and favouriting would have written: tags, home feeds (author and
 * followers, except the celebrities' statuses, marked home_pull), favourites and their notifications. Only the
 * newest notifications are unseen: the notifications_marker trigger scans an account's unseen ones per insert.
 */
function seedStatuses(persist: string, t0: number, from: number, to: number, total: number) {
  const range = `s.id >= ${q(status(from))} AND s.id < ${q(status(to))}`;
  execute(
    persist,
    `statuses-${from}`,
    `
WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to - 1})
INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, has_media, home_pull, favourites_count, created_at)
SELECT ${statusSql("i")}, 'http://localhost/objects/b' || i, 'http://localhost/notice/b' || i, ${accountSql(authorOf)},
  ${statusSql("i")}, 'http://localhost/contexts/b' || i,
  'Status number ' || i || CASE WHEN i % 10 = 0 THEN ' #bench' ELSE '' END, 'Status number ' || i,
  CASE i % 10 WHEN 7 THEN 'unlisted' WHEN 8 THEN 'private' ELSE 'public' END, 1, 0,
  CASE WHEN i % 50 = 0 THEN 1 ELSE 0 END, ${favouritesOf}, ${t0} + i * 1000
FROM n;
INSERT INTO status_tags (status_id, tag) SELECT s.id, 'bench' FROM statuses s WHERE ${range} AND s.content LIKE '%#bench';
INSERT INTO home_feed (account_id, status_id, author_id) SELECT s.account_id, s.id, s.account_id FROM statuses s WHERE ${range};
INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id)
SELECT f.account_id, s.id, s.account_id FROM statuses s JOIN follows f ON f.target_account_id = s.account_id WHERE ${range} AND s.home_pull = 0;
WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to - 1}), k(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM k WHERE j < 19)
INSERT INTO favourites (id, account_id, status_id, created_at)
SELECT printf('%026d', 6000000000 + i * 20 + j), ${accountSql(`${CELEBRITIES} + (i * 13 + j * 97) % ${USERS - CELEBRITIES}`)}, ${statusSql("i")}, ${t0} + i * 1000 + j
FROM n, k WHERE j < ${favouritesOf};
INSERT INTO notifications (id, account_id, from_account_id, type, status_id, is_seen, created_at)
SELECT fv.id, s.account_id, fv.account_id, 'favourite', s.id, CASE WHEN s.id < ${q(status(total - 2000))} THEN 1 ELSE 0 END, fv.created_at
FROM favourites fv JOIN statuses s ON s.id = fv.status_id WHERE ${range} AND fv.account_id <> s.account_id;
`,
  );
}

function finishSeed(persist: string) {
  execute(
    persist,
    "counts",
    `
UPDATE accounts SET followers_count = (SELECT count(*) FROM follows WHERE target_account_id = accounts.id),
  following_count = (SELECT count(*) FROM follows WHERE account_id = accounts.id),
  statuses_count = (SELECT count(*) FROM statuses WHERE account_id = accounts.id),
  last_status_at = (SELECT max(created_at) FROM statuses WHERE account_id = accounts.id);
`,
  );
}

async function seed(size: number): Promise<Tokens> {
  const persist = `.wrangler/bench-scaling-${size}`;
  const saved = join(persist, "tokens.json");
  if (process.env.BENCH_REUSE && existsSync(saved)) return JSON.parse(readFileSync(saved, "utf8"));
  rmSync(persist, { recursive: true, force: true });
  mkdirSync(persist, { recursive: true });
  const started = Date.now();
  wrangler(persist, ["d1", "migrations", "apply", "DB", "--local"]);
  const t0 = Date.now() - size * 1000;
  const tokens = await seedGraph(persist, t0);
  for (let from = 0; from < size; from += CHUNK) {
    const chunk = Date.now();
    seedStatuses(persist, t0, from, Math.min(size, from + CHUNK), size);
    console.log(`  statuses ${from}-${Math.min(size, from + CHUNK) - 1}: ${seconds(chunk)}`);
  }
  finishSeed(persist);
  console.log(`seeded ${size} statuses in ${seconds(started)}`);
  writeFileSync(saved, JSON.stringify(tokens));
  return tokens;
}

interface Route {
  name: string;
  path: string;
  token: (n: number) => string;
}

function routes(size: number, t: Tokens): Route[] {
  const ordinary = (n: number) => t.ordinary[n % t.ordinary.length];
  return [
    { name: "home, power user (follows 5,000)", path: "/api/v1/timelines/home", token: () => t.power },
    { name: "home, ordinary user", path: "/api/v1/timelines/home", token: ordinary },
    { name: "public", path: "/api/v1/timelines/public", token: ordinary },
    { name: "tag (#bench)", path: "/api/v1/timelines/tag/bench", token: ordinary },
    { name: "account statuses (celebrity)", path: `/api/v1/accounts/${account(0)}/statuses`, token: ordinary },
    { name: "notifications (celebrity)", path: "/api/v1/notifications", token: () => t.celebrity },
    {
      name: `list (${LIST_MEMBERS} of the power user's follows)`,
      path: `/api/v1/timelines/list/${LIST}`,
      token: () => t.power,
    },
    {
      name: "public, deep page (max_id at 10%)",
      path: `/api/v1/timelines/public?max_id=${status(Math.floor(size / 10))}`,
      token: ordinary,
    },
  ];
}

interface Measure {
  route: string;
  size: number;
  items: number;
  p50: number;
  p99: number;
  rps: number;
  cp50: number;
  cp99: number;
  errors: number;
}

async function measure(size: number, tokens: Tokens): Promise<Measure[]> {
  const server = await startServer(`.wrangler/bench-scaling-${size}`);
  try {
    const get = (r: Route, n: number) =>
      fetch(server.base + r.path, { headers: { authorization: `Bearer ${r.token(n)}` } });
    const out: Measure[] = [];
    for (const r of routes(size, tokens)) {
      // A route that answers fast with nothing would prove nothing: count what its page holds.
      const first = await get(r, 0);
      if (!first.ok) throw new Error(`${r.name}: HTTP ${first.status} ${await first.text()}`);
      const items = ((await first.json()) as unknown[]).length;
      for (let n = 0; n < 20; n++) await (await get(r, n)).arrayBuffer(); // warm-up
      const latencies: number[] = [];
      let errors = 0;
      for (let n = 0; n < SEQUENTIAL; n++) {
        const started = performance.now();
        const res = await get(r, n);
        if (!res.ok) errors++;
        await res.arrayBuffer();
        latencies.push(performance.now() - started);
      }
      latencies.sort((a, b) => a - b);
      const c = await load(r.name, CONCURRENT_SECONDS, 10, (n) => get(r, n));
      const m = {
        route: r.name,
        size,
        items,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        rps: c.rps,
        cp50: c.p50,
        cp99: c.p99,
        errors: errors + c.errors,
      };
      console.log(
        `  ${r.name}: ${items} items, p50 ${m.p50.toFixed(1)} / p99 ${m.p99.toFixed(1)} ms; at 10 connections ${m.rps.toFixed(0)} req/s, p50 ${m.cp50.toFixed(1)} / p99 ${m.cp99.toFixed(1)} ms; errors ${m.errors}`,
      );
      out.push(m);
    }
    return out;
  } finally {
    server.stop();
  }
}

const fmt = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

function table(results: Measure[]) {
  const names = [...new Set(results.map((r) => r.route))];
  const cell = (name: string, size: number, f: (m: Measure) => string) => {
    const m = results.find((r) => r.route === name && r.size === size);
    return m ? f(m) : "";
  };
  const head = (title: string) =>
    `| route | ${SIZES.map((s) => `${fmt(s)} ${title}`).join(" | ")} |\n|---|${SIZES.map(() => "---").join("|")}|`;
  const rows = (f: (m: Measure) => string) =>
    names.map((n) => `| ${n} | ${SIZES.map((s) => cell(n, s, f)).join(" | ")} |`).join("\n");
  console.log(`\n${SEQUENTIAL} sequential requests per route:\n`);
  console.log(head("p50 / p99 ms"));
  console.log(rows((m) => `${m.p50.toFixed(1)} / ${m.p99.toFixed(1)}`));
  console.log(`\n10 connections, ${CONCURRENT_SECONDS} s per route:\n`);
  console.log(head("req/s, p50 / p99 ms"));
  console.log(
    rows(
      (m) =>
        `${m.rps.toFixed(0)}, ${m.cp50.toFixed(1)} / ${m.cp99.toFixed(1)}${m.errors ? ` (${m.errors} errors)` : ""}`,
    ),
  );
}

async function main() {
  const results: Measure[] = [];
  for (const size of SIZES) {
    console.log(`\n== ${fmt(size)} statuses`);
    const tokens = await seed(size);
    results.push(...(await measure(size, tokens)));
  }
  table(results);
  writeFileSync(
    "bench/scaling.svg",
    chart(
      SIZES,
      [...new Set(results.map((r) => r.route))].map((route) => ({
        name: route,
        points: results.filter((r) => r.route === route).map((r) => ({ x: r.size, y: r.p50 })),
      })),
    ),
  );
  console.log("\nwrote bench/scaling.svg");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
