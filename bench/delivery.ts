/**
 * Delivery benchmark against `wrangler dev` (see bench/README.md).
 *
 *   npm run bench:delivery                     # 1,000 remote followers on 100 hosts
 *   BENCH_FOLLOWERS=200 BENCH_HOSTS=20 npm run bench:delivery
 *   BENCH_SHARED=0 npm run bench:delivery      # no shared inboxes: one POST per follower
 *
 * Starts its own `wrangler dev` on a free port (own local state under .wrangler/bench-delivery, DOMAIN set to
 * it, ALLOW_PRIVATE_ADDRESS=true) and refuses to measure anything else. BENCH_HOSTS receivers listen on
 * 127.0.0.1 (one port each: each is a destination host `127.0.0.1:<port>` with a shared inbox); BENCH_FOLLOWERS
 * remote accounts spread over them follow the poster. It prints the post's response time with and without
 * those followers (median of BENCH_POSTS posts each) and the time from sending a post until every host received
 * its signed Create (one POST per host with shared inboxes, one per follower without), counting signed requests.
 */
import { createServer, type Server } from "node:http";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { registerUser } from "./api";
import { startServer, wrangler as wranglerIn } from "./harness";

const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 1000);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 100);
const POSTS = Number(process.env.BENCH_POSTS ?? 10);
/** BENCH_SHARED=0: followers have no shared inbox, so each follower gets its own POST. */
const SHARED = process.env.BENCH_SHARED !== "0";
const EXPECTED = SHARED ? HOSTS : FOLLOWERS;
const PERSIST = ".wrangler/bench-delivery";

const wrangler = (args: string[]) => wranglerIn(PERSIST, args);

/** Receivers: every POST counted per marker (the status text), signed ones apart. */
const heard = new Map<string, { at: number; host: string }[]>();
let signed = 0;
let unsigned = 0;
async function receivers(): Promise<{ servers: Server[]; ports: number[] }> {
  const servers: Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < HOSTS; i++) {
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const sig = req.headers["signature"];
        if (typeof sig === "string" && sig.includes("keyId=")) signed++;
        else unsigned++;
        const m = /deliverybench-(\d+)/.exec(body);
        if (m)
          heard.set(m[1]!, [...(heard.get(m[1]!) ?? []), { at: performance.now(), host: String(req.headers.host) }]);
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    servers.push(server);
    ports.push((server.address() as { port: number }).port);
  }
  return { servers, ports };
}

async function main() {
  rmSync(PERSIST, { recursive: true, force: true });
  mkdirSync(PERSIST, { recursive: true });
  wrangler(["d1", "migrations", "apply", "DB", "--local"]);
  const { servers, ports } = await receivers();
  const server = await startServer(PERSIST, {
    vars: (port) => ({ DOMAIN: `127.0.0.1:${port}`, ALLOW_PRIVATE_ADDRESS: "true" }),
  });
  const base = server.base;
  try {
    const register = (username: string) => registerUser(base, username);
    const star = await register("star");
    const lonely = await register("lonely");
    // Remote followers, spread over the receivers, each host with a shared inbox.
    const t = Date.now();
    const rows = Array.from({ length: FOLLOWERS }, (_, i) => {
      const h = `127.0.0.1:${ports[i % HOSTS]}`;
      const id = `9${String(i).padStart(25, "0")}`;
      return `('${id}', 'f${i}', '${h}', 'http://${h}/users/f${i}', 'http://${h}/@f${i}', 'http://${h}/users/f${i}/inbox', ${SHARED ? `'http://${h}/inbox'` : "NULL"}, ${t}, ${t})`;
    });
    const sql = [
      ...Array.from(
        { length: Math.ceil(rows.length / 100) },
        (_, c) =>
          `INSERT INTO accounts (id, username, domain, uri, url, inbox_url, shared_inbox_url, created_at, updated_at) VALUES ${rows.slice(c * 100, (c + 1) * 100).join(",\n")};`,
      ),
      `INSERT INTO follows (id, account_id, target_account_id, created_at) SELECT '8' || substr(a.id, 2), a.id, (SELECT id FROM accounts WHERE username = 'star' AND domain IS NULL), ${t} FROM accounts a WHERE a.domain IS NOT NULL;`,
    ].join("\n");
    const file = join(PERSIST, "followers.sql");
    writeFileSync(file, sql);
    wrangler(["d1", "execute", "DB", "--local", "--yes", "--file", file]);

    const postAs = async (token: string, text: string) => {
      const sent = performance.now();
      const res = await fetch(`${base}/api/v1/statuses`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ status: text }),
      });
      if (!res.ok) throw new Error(`post: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
      return { sent, ms: performance.now() - sent };
    };
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Warm-up (keys are made on the first delivery, isolates start).
    await postAs(lonely, "warm up");
    await postAs(star, "deliverybench-0 warm up");
    await new Promise((r) => setTimeout(r, 5000));

    const alone: number[] = [];
    for (let k = 0; k < POSTS; k++) alone.push((await postAs(lonely, `alone ${k}`)).ms);
    const followed: number[] = [];
    const untilAll: number[] = [];
    for (let k = 1; k <= POSTS; k++) {
      const { sent, ms } = await postAs(star, `deliverybench-${k}`);
      followed.push(ms);
      const end = Date.now() + 120_000;
      while ((heard.get(String(k))?.length ?? 0) < EXPECTED && Date.now() < end)
        await new Promise((r) => setTimeout(r, 5));
      const got = heard.get(String(k)) ?? [];
      if (got.length < EXPECTED) console.log(`post ${k}: only ${got.length} of ${EXPECTED} inboxes within 120 s`);
      untilAll.push(Math.max(...got.map((g) => g.at)) - sent);
      // Let the objects' bookkeeping (one D1 batch per host) finish: the next post measures itself, not their
      // writes queued on local D1 (one SQLite file, one writer).
      await new Promise((r) => setTimeout(r, 3000));
    }
    console.log(
      `${FOLLOWERS} remote followers on ${HOSTS} hosts (${SHARED ? "shared inboxes" : "no shared inbox"}), ${POSTS} posts each way`,
    );
    console.log(
      `post response, author without followers: median ${median(alone).toFixed(1)} ms (max ${Math.max(...alone).toFixed(1)})`,
    );
    console.log(
      `post response, author with ${FOLLOWERS} remote followers: median ${median(followed).toFixed(1)} ms (max ${Math.max(...followed).toFixed(1)})`,
    );
    console.log(
      `until all ${EXPECTED} inboxes received the Create: median ${median(untilAll).toFixed(0)} ms (max ${Math.max(...untilAll).toFixed(0)})`,
    );
    console.log(
      `signed requests received: ${signed}, unsigned: ${unsigned} (expected ${EXPECTED * (POSTS + 1)} signed)`,
    );
  } finally {
    server.stop();
    for (const s of servers) s.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
