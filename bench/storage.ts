/**
 * What a post costs in bytes, and how long until the database is full (issue 35; see bench/README.md).
 *
 *   npm run bench:storage
 *
 * Starts its own `wrangler dev` on a fresh local database (`.wrangler/bench-storage`), then measures the D1
 * database's size (`meta.size_after`, as the storage guard reads it: the cron's `storage` job, fired through
 * `--test-scheduled`, and the healthcheck) before and after adding each kind of row:
 * - local statuses posted through the API by 20 users who all follow each other (each with a mention, a hashtag,
 *   ~280 characters; every tenth with a poll): their rows, search rows, 19 home-feed rows, a notification;
 * - remote statuses as the inbox stores them (~600 characters of HTML, a hashtag, a search row), written with SQL
 *   while the server is stopped;
 * - home-feed rows and notifications alone.
 * Then it projects a 20-user instance following 500 remote accounts to 500 MB and 10 GB, with and without the
 * 30-day retention of remote posts (services/retention.ts).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { registerUser } from "./api";
import { benchId, sqlString as q, startServer, wrangler, type Server } from "./harness";

const PERSIST = ".wrangler/bench-storage";
const USERS = 20;
const LOCAL_POSTS = Number(process.env.BENCH_LOCAL_POSTS ?? 200);
const REMOTE_STATUSES = Number(process.env.BENCH_REMOTE_STATUSES ?? 2000);
const FEED_ROWS = 20_000;
const NOTIFICATIONS = 5_000;

async function call(s: Server, path: string, token?: string, body?: unknown) {
  const res = await fetch(`${s.base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
}

/** The database's size in bytes, as the storage guard measures it. */
async function size(s: Server): Promise<number> {
  const measured = async () => (await call(s, "/api/v1/pleroma/healthcheck")).job_queue_stats?.storage ?? null;
  const before = (await measured())?.measured_at ?? null;
  // The cron's run finishes after `/__scheduled` answers (its work is waitUntil's): wait for a new measurement.
  const r = await fetch(`${s.base}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
  if (!r.ok) throw new Error(`scheduled: ${r.status}`);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const now = await measured();
    if (now && now.measured_at !== before && typeof now.bytes === "number") return now.bytes as number;
    if (Date.now() > deadline) throw new Error("no new storage figure in the healthcheck");
    await new Promise((done) => setTimeout(done, 250));
  }
}

const start = () =>
  startServer(PERSIST, {
    args: ["--test-scheduled"],
    vars: { STATS_CACHE_SECONDS: "0", REGISTRATIONS_PER_IP: "1000000", PASSWORD_ITERATIONS: "10000" },
  });

function sqlFile(name: string, sql: string) {
  const file = join(PERSIST, `${name}.sql`);
  writeFileSync(file, sql);
  wrangler(PERSIST, ["d1", "execute", "DB", "--local", "--yes", "--file", file]);
  rmSync(file);
}

const words = "the quick brown fox jumps over a lazy dog while starlings sing in the morning light ".repeat(4);
const MB = 1024 * 1024;

async function main() {
  rmSync(PERSIST, { recursive: true, force: true });
  mkdirSync(PERSIST, { recursive: true });
  let s = await start();
  const tokens: string[] = [];
  const ids: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const token = await registerUser(s.base, `store${i}`);
    tokens.push(token);
    ids.push((await call(s, "/api/v1/accounts/verify_credentials", token)).id);
  }
  for (let i = 0; i < USERS; i++)
    for (let j = 0; j < USERS; j++) if (i !== j) await call(s, `/api/v1/accounts/${ids[j]}/follow`, tokens[i], {});
  const s0 = await size(s);
  for (let n = 0; n < LOCAL_POSTS; n++) {
    const author = n % USERS;
    const body: Record<string, unknown> = {
      status: `@store${(author + 1) % USERS} ${words.slice(0, 240)} #bench${n % 7}`,
    };
    if (n % 10 === 0) body.poll = { options: ["yes", "no", "maybe"], expires_in: 86_400 };
    await call(s, "/api/v1/statuses", tokens[author], body);
  }
  const s1 = await size(s);
  const perLocal = (s1 - s0) / LOCAL_POSTS;
  s.stop();

  const t = Date.now();
  const html = `<p>${words.slice(0, 560)}</p>`;
  sqlFile(
    "remote",
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99)
INSERT INTO accounts (id, username, domain, display_name, uri, url, inbox_url, created_at, updated_at)
SELECT printf('%026d', 5000000 + i), 'far' || i, 'remote' || (i % 20) || '.example', 'Far ' || i,
  'https://remote' || (i % 20) || '.example/users/far' || i, 'https://remote' || (i % 20) || '.example/@far' || i,
  'https://remote' || (i % 20) || '.example/users/far' || i || '/inbox', ${t}, ${t} FROM n;`,
  );
  s = await start();
  const s2a = await size(s);
  s.stop();
  sqlFile(
    "remote-statuses",
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${REMOTE_STATUSES - 1})
INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at, search_rowid)
SELECT printf('%026d', 6000000000 + i), 'https://remote' || (i % 20) || '.example/statuses/' || i,
  'https://remote' || (i % 20) || '.example/@far/' || i, printf('%026d', 5000000 + i % 100), printf('%026d', 6000000000 + i),
  'https://remote' || (i % 20) || '.example/contexts/' || i, ${q(html)}, '', 'public', 0, ${t}, 1000000 + i FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${REMOTE_STATUSES - 1})
INSERT INTO statuses_fts (rowid, body) SELECT 1000000 + i, ${q(words.slice(0, 560))} FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${REMOTE_STATUSES - 1})
INSERT INTO status_tags (status_id, tag) SELECT printf('%026d', 6000000000 + i), 'tag' || (i % 50) FROM n;`,
  );
  s = await start();
  const s2 = await size(s);
  const perRemote = (s2 - s2a) / REMOTE_STATUSES;
  s.stop();
  sqlFile(
    "feed",
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${FEED_ROWS - 1})
INSERT OR IGNORE INTO home_feed (account_id, status_id, author_id)
SELECT (SELECT id FROM accounts WHERE username = 'store' || (i / ${REMOTE_STATUSES})), printf('%026d', 6000000000 + i % ${REMOTE_STATUSES}),
  printf('%026d', 5000000 + (i % ${REMOTE_STATUSES}) % 100) FROM n;`,
  );
  s = await start();
  const s3 = await size(s);
  const perFeed = (s3 - s2) / FEED_ROWS;
  s.stop();
  sqlFile(
    "notifications",
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${NOTIFICATIONS - 1})
INSERT INTO notifications (id, account_id, from_account_id, type, status_id, is_seen, created_at)
SELECT printf('%016d', ${t * 1000} + i), (SELECT id FROM accounts WHERE username = 'store' || (i % ${USERS})),
  printf('%026d', 5000000 + i % 100), 'favourite', (SELECT id FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM statuses WHERE local = 1) WHERE k = i % 50), 0, ${t} FROM n;`,
  );
  s = await start();
  const s4 = await size(s);
  const perNotification = (s4 - s3) / NOTIFICATIONS;
  s.stop();

  // The projection: 20 users following 500 remote accounts (each followed by 2 of them on average), which post
  // 2 statuses a day (boosts included, ~Mastodon's median active account); 3 local posts a day per user; 10
  // notifications a day per user.
  const remotePerDay = 500 * 2;
  const daily = {
    remote: remotePerDay * (perRemote + 2 * perFeed),
    local: USERS * 3 * perLocal,
    notifications: USERS * 10 * perNotification,
  };
  const perDay = daily.remote + daily.local + daily.notifications;
  const kept30 = 30 * daily.remote; // what the retention keeps of remote posts (interacted-with ones aside)
  const daysTo = (limit: number, pruned: boolean) => {
    if (!pruned) return (limit - s4) / perDay;
    const grow = daily.local + daily.notifications; // notifications kept 180 days: an upper bound here
    return (limit - s4 - kept30) / grow;
  };
  const fmt = (b: number) => (b >= 1024 ? `${(b / 1024).toFixed(2)} KiB` : `${Math.round(b)} B`);
  const years = (d: number) => (d > 730 ? `${(d / 365).toFixed(0)} years` : `${Math.round(d)} days`);
  console.log(`\n| what | D1 bytes each (with indexes) |\n|---|---|`);
  console.log(
    `| local status (its rows, search row, ${USERS - 1} home-feed rows, 1 notification; 1 in 10 with a poll) | ${fmt(perLocal)} |`,
  );
  console.log(`| remote status (row, search row, a hashtag; ~600 characters of HTML) | ${fmt(perRemote)} |`);
  console.log(`| home-feed row | ${fmt(perFeed)} |`);
  console.log(`| notification | ${fmt(perNotification)} |`);
  console.log(`| media (R2) | the uploaded file as it is (no thumbnails yet: issue 32) |`);
  console.log(
    `\n20 users following 500 remote accounts: ${(perDay / MB).toFixed(2)} MB a day ` +
      `(remote ${(daily.remote / MB).toFixed(2)}, local ${(daily.local / MB).toFixed(2)}, notifications ${(daily.notifications / MB).toFixed(2)}).`,
  );
  console.log(`| ceiling | without pruning | with 30-day retention of remote posts |\n|---|---|---|`);
  for (const [name, limit] of [
    ["500 MB (Free)", 500 * MB],
    ["10 GB (Paid)", 10_000 * MB],
  ] as const)
    console.log(`| ${name} | ${years(daysTo(limit, false))} | ${years(daysTo(limit, true))} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
