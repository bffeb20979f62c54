/**
 * Timeline and posting benchmark against `wrangler dev` (see bench/README.md).
 *
 *   npm run bench            # seed, start wrangler dev on a spare port, measure, stop
 *   BENCH_SECONDS=20 npm run bench
 *
 * Seeds its own local database (under .wrangler/bench, apart from `npm start`'s): 1,000 users; follows with a
 * long tail (everyone follows bench0; user i follows 5-60 others); 100,000 statuses (80% public, 10% unlisted,
 * 10% private; every 10th tagged #bench) fanned out to home feeds as posting would. Then, at 20 concurrent
 * connections, it measures a trivial route (a built-in image: no D1), two floors (a small one-round-trip read,
 * a public page of one status), home, public, tag and list timelines, an account's statuses, notifications, and
 * posting by bench0 (followed by everyone), and checks that home timelines are never stale: right after each
 * post is answered, a follower's home timeline shows it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashPassword, randomToken, sha256 } from "../src/lib/crypto";
import {
  benchId as id,
  load as loadFor,
  processCpu,
  processTree,
  sqlString as q,
  startServer,
  wrangler as wranglerIn,
  type LoadResult as Result,
} from "./harness";

const USERS = 1000;
const STATUSES = Number(process.env.BENCH_STATUSES ?? 100_000);
const CONCURRENCY = 20;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PERSIST = ".wrangler/bench";
const TOKENS = 100;

const wrangler = (args: string[]) => wranglerIn(PERSIST, args);

interface Measured extends Result {
  /** CPU ms per request of the server's processes (wrangler's node, its proxy's workerd, the Worker's workerd). */
  serverCpu: number;
  /** Of which the workerd process running the Worker and local D1. */
  workerCpu: number;
}

let serverRoot = 0;
/**
 * A route under load, with the CPU its requests cost the server's processes (counted by the kernel): on a shared
 * machine req/s follows the other users' load, CPU per request much less.
 */
async function load(name: string, request: (n: number) => Promise<Response>): Promise<Measured> {
  const pids = processTree(serverRoot);
  const worker = pids.find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--inspector-addr"));
  const cpu = () => pids.reduce((sum, pid) => sum + processCpu(pid), 0);
  const before = [cpu(), worker ? processCpu(worker) : 0];
  const r = await loadFor(name, SECONDS, CONCURRENCY, request);
  const per = (ms: number) => ms / Math.max(1, r.requests);
  return { ...r, serverCpu: per(cpu() - before[0]!), workerCpu: worker ? per(processCpu(worker) - before[1]!) : NaN };
}

async function seed(): Promise<string[]> {
  const saved = join(PERSIST, "tokens.json");
  // BENCH_REUSE=1 measures again on the last seeded database (posts from earlier runs stay in it).
  if (process.env.BENCH_REUSE && existsSync(saved)) return JSON.parse(readFileSync(saved, "utf8"));
  rmSync(PERSIST, { recursive: true, force: true });
  mkdirSync(PERSIST, { recursive: true });
  wrangler(["d1", "migrations", "apply", "DB", "--local"]);
  const hash = await hashPassword("bench password");
  const t0 = Date.now() - STATUSES * 1000;
  const tokens: string[] = [];
  const tokenRows: string[] = [];
  for (let i = 0; i < TOKENS; i++) {
    const token = randomToken(32);
    tokens.push(token);
    tokenRows.push(
      `(${q(id(9_000_000 + i))}, ${q(await sha256(token))}, NULL, ${q(id(1_000_000 + i))}, 'read write follow push', ${t0}, ${t0 + 10 * 365 * 86400_000})`,
    );
  }
  const sql = `
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${USERS - 1})
INSERT INTO accounts (id, username, display_name, uri, url, created_at, updated_at)
SELECT printf('%026d', 1000000 + i), 'bench' || i, 'Bench ' || i, 'http://localhost/users/bench' || i, 'http://localhost/users/bench' || i, ${t0}, ${t0} FROM n;
INSERT INTO users (account_id, email, created_at) SELECT id, username || '@example.com', ${t0} FROM accounts WHERE username LIKE 'bench%';
INSERT INTO credentials (account_id, password_hash) SELECT id, ${q(hash)} FROM accounts WHERE username LIKE 'bench%';
INSERT INTO tokens (id, token_hash, app_id, account_id, scopes, created_at, expires_at) VALUES ${tokenRows.join(",\n")};
-- Everyone follows bench0; user i follows a long tail of 5 to 60 others.
INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at)
SELECT printf('%026d', 3000000 + i), printf('%026d', 1000000 + i), printf('%026d', 1000000), 1, 0, ${t0} FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${USERS - 1}) SELECT i FROM n);
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${USERS - 1}), k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 60)
INSERT OR IGNORE INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at)
SELECT printf('%026d', 4000000 + i * 100 + j), printf('%026d', 1000000 + i), printf('%026d', 1000000 + 1 + (i * 37 + j * j * 7) % ${USERS - 1}), 1, 0, ${t0}
FROM n, k WHERE j <= 5 + (i % 56) AND 1 + (i * 37 + j * j * 7) % ${USERS - 1} <> i;
-- 100,000 statuses over time; bench0 writes one in 250.
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ${STATUSES - 1})
INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, has_media, created_at)
SELECT printf('%026d', 2000000000 + i), 'http://localhost/objects/b' || i, 'http://localhost/notice/b' || i,
  printf('%026d', 1000000 + CASE WHEN i % 250 = 0 THEN 0 ELSE 1 + (i * 7919) % ${USERS - 1} END),
  printf('%026d', 2000000000 + i), 'http://localhost/contexts/b' || i,
  'Status number ' || i || CASE WHEN i % 10 = 0 THEN ' #bench' ELSE '' END, 'Status number ' || i,
  CASE i % 10 WHEN 7 THEN 'unlisted' WHEN 8 THEN 'private' ELSE 'public' END, 1, 0, ${t0} + i * 1000
FROM s;
INSERT INTO status_tags (status_id, tag) SELECT id, 'bench' FROM statuses WHERE content LIKE '%#bench';
-- Fan-out as posting does it: the author and every local follower, except for accounts over the inline limit
-- (200 followers), whose statuses home timelines pull instead.
UPDATE statuses SET home_pull = 1 WHERE account_id IN (SELECT target_account_id FROM follows GROUP BY target_account_id HAVING count(*) > 200);
INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id) SELECT account_id, id, account_id FROM statuses;
INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id)
SELECT f.account_id, s.id, s.account_id FROM statuses s JOIN follows f ON f.target_account_id = s.account_id WHERE s.home_pull = 0;
UPDATE accounts SET followers_count = (SELECT count(*) FROM follows WHERE target_account_id = accounts.id),
  following_count = (SELECT count(*) FROM follows WHERE account_id = accounts.id),
  statuses_count = (SELECT count(*) FROM statuses WHERE account_id = accounts.id);
`;
  const file = join(PERSIST, "seed.sql");
  writeFileSync(file, sql);
  const started = Date.now();
  wrangler(["d1", "execute", "DB", "--local", "--yes", "--file", file]);
  console.log(`seeded ${USERS} users and ${STATUSES} statuses in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  writeFileSync(saved, JSON.stringify(tokens));
  return tokens;
}

/**
 * Lists and notifications for the token users (1,000,000 + i): a list of the accounts each follows, and a
 * favourite notification on each of their newest 200 statuses. Idempotent, so a database seeded by an earlier
 * version of this bench gets them too.
 */
function extras() {
  const sql = `
INSERT OR IGNORE INTO lists (id, account_id, title, created_at)
SELECT printf('%026d', 5000000 + i), printf('%026d', 1000000 + i), 'bench list', ${Date.now()}
FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${TOKENS - 1}) SELECT i FROM n);
INSERT OR IGNORE INTO list_accounts (id, list_id, account_id, created_at)
SELECT printf('%026d', 7000000000 + CAST(f.id AS INTEGER)), printf('%026d', 5000000 + (CAST(f.account_id AS INTEGER) - 1000000)), f.target_account_id, ${Date.now()} FROM follows f
WHERE CAST(f.account_id AS INTEGER) BETWEEN 1000001 AND ${1_000_000 + TOKENS - 1};
INSERT OR IGNORE INTO notifications (id, account_id, from_account_id, type, status_id, is_seen, pushed, created_at)
SELECT printf('%026d', 6000000000 + CAST(s.id AS INTEGER)), s.account_id, printf('%026d', 1000000), 'favourite', s.id, 0, 1, s.created_at
FROM statuses s WHERE CAST(s.account_id AS INTEGER) BETWEEN 1000001 AND ${1_000_000 + TOKENS - 1}
  AND s.id IN (SELECT id FROM statuses s2 WHERE s2.account_id = s.account_id ORDER BY s2.id DESC LIMIT 200);
`;
  const file = join(PERSIST, "extras.sql");
  writeFileSync(file, sql);
  wrangler(["d1", "execute", "DB", "--local", "--yes", "--file", file]);
}

async function main() {
  const tokens = await seed();
  extras();
  const server = await startServer(PERSIST);
  serverRoot = server.process.pid!;
  const BASE = server.base;
  try {
    const auth = (n: number) => ({ authorization: `Bearer ${tokens[1 + (n % (TOKENS - 1))]}` });
    const celebrity = { authorization: `Bearer ${tokens[0]}`, "content-type": "application/json" };
    // Warm up the isolate and the page cache.
    await load("warm-up", (n) => fetch(`${BASE}/api/v1/timelines/home`, { headers: auth(n) }));

    const results: Measured[] = [];
    results.push(await load("trivial route (GET /images/avi.png)", () => fetch(`${BASE}/images/avi.png`)));
    // Floors: what any read with one D1 round trip costs here (a small batch and a cache look-up, a few hundred
    // bytes), and a timeline's one statement with one status instead of 20 (its fixed cost against its per-row cost).
    results.push(
      await load("floor: one small D1 round trip (GET /api/v1/custom_emojis)", () =>
        fetch(`${BASE}/api/v1/custom_emojis`),
      ),
    );
    results.push(
      await load("public timeline, limit=1", (n) =>
        fetch(`${BASE}/api/v1/timelines/public?limit=1`, { headers: auth(n) }),
      ),
    );
    results.push(await load("home timeline", (n) => fetch(`${BASE}/api/v1/timelines/home`, { headers: auth(n) })));
    results.push(await load("public timeline", (n) => fetch(`${BASE}/api/v1/timelines/public`, { headers: auth(n) })));
    results.push(
      await load("tag timeline (#bench)", (n) => fetch(`${BASE}/api/v1/timelines/tag/bench`, { headers: auth(n) })),
    );
    // Token n is user 1 + (n % 99): its list (5,000,000 + that) and its own notifications; statuses of another user.
    const user = (n: number) => 1 + (n % (TOKENS - 1));
    results.push(
      await load("list timeline", (n) =>
        fetch(`${BASE}/api/v1/timelines/list/${id(5_000_000 + user(n))}`, { headers: auth(n) }),
      ),
    );
    results.push(
      await load("account statuses", (n) =>
        fetch(`${BASE}/api/v1/accounts/${id(1_000_000 + user(n + 1))}/statuses`, { headers: auth(n) }),
      ),
    );
    results.push(await load("notifications", (n) => fetch(`${BASE}/api/v1/notifications`, { headers: auth(n) })));
    let stale = 0;
    let checked = 0;
    results.push(
      await load("post by bench0 (999 followers)", async (n) => {
        const res = await fetch(`${BASE}/api/v1/statuses`, {
          method: "POST",
          headers: celebrity,
          body: JSON.stringify({ status: `bench post ${n}` }),
        });
        if (res.ok && n % 10 === 0) {
          const posted = (await res.clone().json()) as { id: string };
          const home = (await (await fetch(`${BASE}/api/v1/timelines/home?limit=40`, { headers: auth(n) })).json()) as {
            id: string;
          }[];
          checked++;
          if (!home.some((s) => s.id === posted.id)) stale++;
        }
        return res;
      }),
    );
    const trivial = results[0].rps;
    const floor = results[1]!;
    const loadavg = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
    console.log(
      `\n${CONCURRENCY} concurrent connections, ${SECONDS} s per route, ${STATUSES} statuses; load average ${loadavg}\n`,
    );
    console.log(
      "| route | requests | errors | req/s | p50 ms | p99 ms | vs trivial | vs the floor row | server CPU ms/req | of which the Worker's workerd |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    for (const r of results) {
      const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(0)}%`;
      console.log(
        `| ${r.name} | ${r.requests} | ${r.errors} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${pct(r.rps, trivial)} | ${pct(r.rps, floor.rps)} | ${r.serverCpu.toFixed(1)} | ${r.workerCpu.toFixed(1)} |`,
      );
    }
    console.log(`\nhome timelines checked right after a post: ${checked}, stale: ${stale}`);
  } finally {
    server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
