/**
 * Streaming benchmark against `wrangler dev` (see bench/README.md).
 *
 *   npm run bench:streaming                  # seed, start wrangler dev on a spare port, measure, stop
 *   BENCH_LISTENERS=500 BENCH_POSTS=20 npm run bench:streaming
 *
 * Seeds its own local database (under .wrangler/bench-streaming): 1,000 users with a token each, all following
 * bench0. Then two scenarios, each with 1,000 concurrent WebSocket listeners:
 * - anonymous listeners on `public:local` (one TopicStream object holds them all);
 * - signed-in listeners on `user`, one per user (1,000 UserStream objects; each status rendered for each user);
 * bench0 posts BENCH_POSTS statuses one after another, and the delay from sending the post to each listener's
 * `update` frame is measured (p50, p99, and the slowest). The resident memory of the workerd processes is
 * printed idle, with the sockets open, and after the posts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { randomToken, sha256 } from "../src/lib/crypto";
import { benchId as id, percentile, sqlString as q, startServer, wrangler as wranglerIn } from "./harness";

const LISTENERS = Number(process.env.BENCH_LISTENERS ?? 1000);
const POSTS = Number(process.env.BENCH_POSTS ?? 10);
const PERSIST = ".wrangler/bench-streaming";
// Set once the server this run started answers.
let BASE = "";
let WS_BASE = "";

const wrangler = (args: string[]) => wranglerIn(PERSIST, args);

async function seed(): Promise<string[]> {
  const saved = join(PERSIST, "tokens.json");
  if (existsSync(saved)) {
    const tokens = JSON.parse(readFileSync(saved, "utf8")) as string[];
    if (tokens.length >= LISTENERS) return tokens;
  }
  rmSync(PERSIST, { recursive: true, force: true });
  mkdirSync(PERSIST, { recursive: true });
  wrangler(["d1", "migrations", "apply", "DB", "--local"]);
  const t0 = Date.now() - 86400_000;
  const tokens: string[] = [];
  const rows: string[] = [];
  for (let i = 0; i < LISTENERS; i++) {
    const token = randomToken(32);
    tokens.push(token);
    rows.push(
      `(${q(id(9_000_000 + i))}, ${q(await sha256(token))}, NULL, ${q(id(1_000_000 + i))}, 'read write follow push', ${t0}, ${t0 + 10 * 365 * 86400_000})`,
    );
  }
  const sql = `
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${LISTENERS - 1})
INSERT INTO accounts (id, username, display_name, uri, url, created_at, updated_at)
SELECT printf('%026d', 1000000 + i), 'bench' || i, 'Bench ' || i, 'http://localhost/users/bench' || i, 'http://localhost/users/bench' || i, ${t0}, ${t0} FROM n;
INSERT INTO users (account_id, email, created_at) SELECT id, username || '@example.com', ${t0} FROM accounts;
INSERT INTO credentials (account_id, password_hash) SELECT id, 'unused' FROM accounts;
${Array.from({ length: Math.ceil(rows.length / 100) }, (_, c) => `INSERT INTO tokens (id, token_hash, app_id, account_id, scopes, created_at, expires_at) VALUES ${rows.slice(c * 100, (c + 1) * 100).join(",\n")};`).join("\n")}
INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at)
SELECT printf('%026d', 3000000 + i), printf('%026d', 1000000 + i), printf('%026d', 1000000), 1, 0, ${t0}
FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${LISTENERS - 1}) SELECT i FROM n);
UPDATE accounts SET followers_count = (SELECT count(*) FROM follows WHERE target_account_id = accounts.id),
  following_count = (SELECT count(*) FROM follows WHERE account_id = accounts.id);
`;
  const file = join(PERSIST, "seed.sql");
  writeFileSync(file, sql);
  wrangler(["d1", "execute", "DB", "--local", "--yes", "--file", file]);
  writeFileSync(saved, JSON.stringify(tokens));
  return tokens;
}

/** Resident memory of the workerd processes (the Worker, its objects and local D1), in MiB. */
function workerdMemory(): number {
  let kib = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd")) continue;
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) kib += Number(m[1]);
    } catch {
      // gone meanwhile
    }
  }
  return kib / 1024;
}

interface Listener {
  ws: WebSocket;
  /** Post number -> time its update arrived. */
  heard: Map<number, number>;
}

async function listen(query: (i: number) => string): Promise<Listener[]> {
  const listeners: Listener[] = [];
  for (let start = 0; start < LISTENERS; start += 50) {
    const batch = Array.from({ length: Math.min(50, LISTENERS - start) }, (_, k) => {
      const ws = new WebSocket(`${WS_BASE}/api/v1/streaming?${query(start + k)}`);
      const l: Listener = { ws, heard: new Map() };
      ws.on("message", (data) => {
        const at = performance.now();
        const m = /streambench (\d+) /.exec(data.toString());
        if (m && !l.heard.has(Number(m[1]))) l.heard.set(Number(m[1]), at);
      });
      return new Promise<Listener>((resolve, reject) => {
        // A connection neither opened nor refused in 60 s fails the run rather than hanging it.
        const timer = setTimeout(() => reject(new Error("a listener did not connect within 60 s")), 60_000);
        ws.once("open", () => (clearTimeout(timer), resolve(l)));
        ws.once("error", reject);
        ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      });
    });
    listeners.push(...(await Promise.all(batch)));
  }
  return listeners;
}

async function scenario(name: string, authorToken: string, query: (i: number) => string, run: number) {
  const idle = workerdMemory();
  const opened = performance.now();
  const listeners = await listen(query);
  const openSeconds = (performance.now() - opened) / 1000;
  await new Promise((r) => setTimeout(r, 1000));
  const connected = workerdMemory();
  const delays: number[] = [];
  const answered: number[] = [];
  let missed = 0;
  for (let k = 0; k < POSTS; k++) {
    const sent = performance.now();
    const res = await fetch(`${BASE}/api/v1/statuses`, {
      method: "POST",
      headers: { authorization: `Bearer ${authorToken}`, "content-type": "application/json" },
      body: JSON.stringify({ status: `streambench ${run * 1000 + k} post`, visibility: "public" }),
    });
    if (!res.ok) throw new Error(`post failed: ${res.status} ${await res.text()}`);
    answered.push(performance.now() - sent);
    const deadline = Date.now() + 15_000;
    while (listeners.some((l) => !l.heard.has(run * 1000 + k)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    for (const l of listeners) {
      const at = l.heard.get(run * 1000 + k);
      if (at === undefined) missed++;
      else delays.push(at - sent);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  const after = workerdMemory();
  for (const l of listeners) l.ws.close();
  delays.sort((a, b) => a - b);
  answered.sort((a, b) => a - b);
  return {
    post: percentile(answered, 50),
    name,
    listeners: listeners.length,
    openSeconds,
    events: delays.length,
    missed,
    // ws offers permessage-deflate as browsers do: how many sockets the server accepted it on.
    deflated: listeners.filter((l) => l.ws.extensions.includes("permessage-deflate")).length,
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    max: delays[delays.length - 1] ?? NaN,
    idle,
    connected,
    after,
  };
}

async function main() {
  const tokens = await seed();
  const server = await startServer(PERSIST);
  BASE = server.base;
  WS_BASE = BASE.replace(/^http/, "ws");
  try {
    // Warm the isolate and the statements.
    for (let k = 0; k < 3; k++) {
      await fetch(`${BASE}/api/v1/statuses`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokens[0]}`, "content-type": "application/json" },
        body: JSON.stringify({ status: "warm-up" }),
      });
    }
    const only = process.env.BENCH_SCENARIO;
    const results = [];
    if (!only || only === "anonymous")
      results.push(
        await scenario("anonymous, public:local (1 TopicStream)", tokens[0], () => "stream=public:local", 1),
      );
    if (!only || only === "user")
      results.push(
        await scenario(
          "signed in, user (32 UserStream shards)",
          tokens[0],
          (i) => `stream=user&access_token=${tokens[i]}`,
          2,
        ),
      );
    console.log(`\n${LISTENERS} WebSocket listeners, ${POSTS} posts by bench0 (followed by all) per scenario\n`);
    console.log(
      "| scenario | listeners | deflate | connect s | post answered p50 ms | events | missed | p50 ms | p99 ms | max ms | workerd MiB idle / open / after |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|---|");
    for (const r of results) {
      console.log(
        `| ${r.name} | ${r.listeners} | ${r.deflated} | ${r.openSeconds.toFixed(1)} | ${r.post.toFixed(0)} | ${r.events} | ${r.missed} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ${r.max.toFixed(0)} | ${r.idle.toFixed(0)} / ${r.connected.toFixed(0)} / ${r.after.toFixed(0)} |`,
      );
    }
  } finally {
    server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
