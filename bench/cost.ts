/**
 * Cost benchmark (issue 42) against `wrangler dev` (see bench/README.md): what each everyday action costs in the
 * Workers Free plan's units (D1 rows read and written, D1 queries, Worker and Durable Object requests, R2
 * operations, subrequests), and a day of one, 10 and 100 users against the plan's daily caps.
 *
 *   npm run bench:cost
 *   BENCH_RUNS=5 npm run bench:cost        # more runs per action (the median is shown)
 *
 * The Worker runs with `COST_METER=true` and serves `GET /__cost`: its isolate's running totals (src/lib/meter.ts).
 * Under `wrangler dev` the Worker, its Durable Objects and its cron runs share that isolate, so an action's cost is
 * the difference of two readings: one before it, one after everything it started has settled (the readings stop
 * changing for SETTLE_MS). Each action is done once unmeasured (first contact: key fetches, signing keys, caches),
 * then BENCH_RUNS times measured.
 *
 * The database (set-based SQL, before the server starts): 20,000 remote statuses spread over the last 30 days and an
 * hour, in the home of a reader who follows 300 remote accounts; 200 notifications; a poster with 200 local
 * followers; an accepted LitePub relay. Remote servers are HTTP servers on 127.0.0.1 (bench/remote.ts): they serve
 * their actors and objects, answer deliveries 202, and send activities signed as Mastodon signs them. Nothing
 * reaches beyond 127.0.0.1.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus } from "node:os";
import { join } from "node:path";
import jpeg from "jpeg-js";
import WebSocket from "ws";
import { randomToken, sha256 } from "../src/lib/crypto";
import { sqlString as q, startServer, wrangler as wranglerIn, type Server } from "./harness";
import { remoteActor, remoteHost, rsaKeyPair, signedHeaders, type RemoteActor, type RemoteHost } from "./remote";
import {
  ACTIONS,
  CAP_KEYS,
  COST_KEYS,
  FREE_PLAN,
  SCENARIOS,
  assumptions,
  checkTargets,
  scenarioDay,
  zero,
  type Cost,
  type Day,
  type Figures,
} from "./cost-model";

const PERSIST = ".wrangler/bench-cost";
const DOMAIN = "cost.bench";
const BASE_URL = `https://${DOMAIN}`;
const STATUSES = Number(process.env.BENCH_STATUSES ?? 20_000);
const FOLLOWED = 300;
const FOLLOWERS = 200;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** Readings that stay the same this long mean everything the action started has settled. */
const SETTLE_MS = 500;
const SETTLE_LIMIT_MS = 60_000;
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const AS = "https://www.w3.org/ns/activitystreams";
const HOUR = 3600_000;
const DAY = 24 * HOUR;

const wrangler = (args: string[]) => wranglerIn(PERSIST, args);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ids the seed gives: 26 digits (valid id characters). */
const num = (n: number) => String(n).padStart(26, "0");
const LOCAL = { reader: num(1), quiet: num(2), poster: num(3) };
const followeeId = (i: number) => num(100 + i);
const followerId = (i: number) => num(1000 + i);
const followedId = (i: number) => num(5000 + i);
const remoteTargetId = (i: number) => num(6000 + i);

/** An id of time `ms` (src/db/ids.ts: 10 Crockford base-32 characters of milliseconds), as an SQL expression. */
function sqlIdTime(ms: string): string {
  const alphabet = "'0123456789ABCDEFGHJKMNPQRSTVWXYZ'";
  return Array.from({ length: 10 }, (_, k) => `substr(${alphabet}, ((${ms}) / ${32 ** (9 - k)}) % 32 + 1, 1)`).join(
    " || ",
  );
}

interface World {
  hosts: RemoteHost[];
  /** Followed by the reader (one local follower); its posts are inbound Creates. */
  author: RemoteActor;
  /** Followed by the reader and 9 more local users. */
  author10: RemoteActor;
  liker: RemoteActor;
  booster: RemoteActor;
  replier: RemoteActor;
  relay: RemoteActor;
  /** Writes the posts the relay announces (stored after the first). */
  relayAuthor: RemoteActor;
  /** A key pair for actors that never sign (remote follow targets, new relayed authors). */
  sharedKeys: ReturnType<typeof rsaKeyPair>;
  tokens: { reader: string; quiet: string; poster: string };
  /** Seeded statuses an hour apart (the retention prunes this many at each hourly run). */
  prunedPerHour: number;
}

/** The remote servers and their actors (before the seed: accounts name their ports). */
async function remoteWorld(): Promise<Omit<World, "tokens" | "prunedPerHour">> {
  const hosts = [await remoteHost(), await remoteHost(), await remoteHost()];
  const sharedKeys = rsaKeyPair();
  const [h0, h1, h2] = hosts as [RemoteHost, RemoteHost, RemoteHost];
  // The followed accounts (account i on host i % 3, as seeded): the two that post sign; the others are served
  // (never asked, normally).
  for (let i = 2; i < FOLLOWED; i++) remoteActor(hosts[i % 3]!, `followed${i}`, { keys: sharedKeys });
  for (let i = 0; i <= RUNS; i++) remoteActor(h2, `target${i}`, { keys: sharedKeys });
  return {
    hosts,
    author: remoteActor(h0, "followed0"),
    author10: remoteActor(h1, "followed1"),
    liker: remoteActor(h0, "liker"),
    booster: remoteActor(h1, "booster"),
    replier: remoteActor(h2, "replier"),
    relay: remoteActor(h2, "relay", { type: "Application" }),
    relayAuthor: remoteActor(h1, "relayauthor", { keys: sharedKeys }),
    sharedKeys,
  };
}

/** A local account's columns from `username` to `followers_url` (its actor lives at `cost.bench`). */
function localColumns(username: string) {
  const uri = `${BASE_URL}/users/${username}`;
  return `${q(username)}, NULL, ${q(uri)}, ${q(uri)}, ${q(`${uri}/inbox`)}, ${q(`${BASE_URL}/inbox`)}, ${q(`${uri}/followers`)}`;
}

async function seed(w: Omit<World, "tokens" | "prunedPerHour">): Promise<Pick<World, "tokens" | "prunedPerHour">> {
  rmSync(PERSIST, { recursive: true, force: true });
  mkdirSync(PERSIST, { recursive: true });
  wrangler(["d1", "migrations", "apply", "DB", "--local"]);
  const now = Date.now();
  const t0 = now - 40 * DAY;
  const tokens = { reader: randomToken(32), quiet: randomToken(32), poster: randomToken(32) };
  const cols = "id, username, domain, uri, url, inbox_url, shared_inbox_url, followers_url, created_at, updated_at";
  const locals: [string, string][] = [
    [LOCAL.reader, "reader"],
    [LOCAL.quiet, "quiet"],
    [LOCAL.poster, "poster"],
    ...Array.from({ length: RUNS + 1 }, (_, i): [string, string] => [followeeId(i), `followee${i}`]),
    ...Array.from({ length: FOLLOWERS }, (_, i): [string, string] => [followerId(i), `follower${i}`]),
  ];
  const remote = (id: string, host: RemoteHost, name: string) => {
    const uri = `${host.origin}/users/${name}`;
    return `(${q(id)}, ${q(name)}, ${q(host.origin.slice("http://".length))}, ${q(uri)}, ${q(`${host.origin}/@${name}`)}, ${q(`${uri}/inbox`)}, ${q(`${host.origin}/inbox`)}, ${q(`${uri}/followers`)}, ${t0}, ${now}, ${now})`;
  };
  const remotes = [
    ...Array.from({ length: FOLLOWED }, (_, i) => remote(followedId(i), w.hosts[i % 3]!, `followed${i}`)),
    ...Array.from({ length: RUNS + 1 }, (_, i) => remote(remoteTargetId(i), w.hosts[2]!, `target${i}`)),
  ];
  // The statuses: evenly from the retention's edge (30 days and an hour before 00:30 UTC yesterday, the first
  // retention run measured) to now, so each hourly run finds an hour's worth past the retention.
  const yesterday = Math.floor(now / DAY) * DAY - DAY;
  const first = yesterday + 30 * 60_000 - 30 * DAY - HOUR;
  const step = Math.floor((now - 60_000 - first) / STATUSES);
  const readerNote = `${BASE_URL}/objects/${num(9)}`;
  const tokenRows = await Promise.all(
    (Object.keys(tokens) as (keyof typeof tokens)[]).map(
      async (who, i) =>
        `(${q(num(900 + i))}, ${q(await sha256(tokens[who]))}, NULL, ${q(LOCAL[who])}, 'read write follow push', ${t0}, ${now + 365 * DAY})`,
    ),
  );
  const sql = `
INSERT INTO accounts (${cols}) VALUES ${locals.map(([id, name]) => `(${q(id)}, ${localColumns(name)}, ${t0}, ${t0})`).join(",\n")};
INSERT INTO users (account_id, email, created_at) SELECT id, username || '@example.com', ${t0} FROM accounts WHERE domain IS NULL;
INSERT INTO credentials (account_id, password_hash) SELECT id, 'unused' FROM accounts WHERE domain IS NULL;
INSERT INTO tokens (id, token_hash, app_id, account_id, scopes, created_at, expires_at) VALUES ${tokenRows.join(",\n")};
INSERT INTO accounts (${cols}, fetched_at) VALUES ${remotes.join(",\n")};
-- The reader follows 300 remote accounts; 9 more local users follow the second; the poster has 200 local followers.
INSERT INTO follows (id, account_id, target_account_id, created_at)
SELECT printf('%026d', 20000 + rowid), ${q(LOCAL.reader)}, id, ${t0} FROM accounts WHERE id BETWEEN ${q(followedId(0))} AND ${q(followedId(FOLLOWED - 1))};
INSERT INTO follows (id, account_id, target_account_id, created_at)
SELECT printf('%026d', 30000 + rowid), id, ${q(followedId(1))}, ${t0} FROM accounts WHERE id BETWEEN ${q(followerId(0))} AND ${q(followerId(8))};
INSERT INTO follows (id, account_id, target_account_id, created_at)
SELECT printf('%026d', 40000 + rowid), id, ${q(LOCAL.poster)}, ${t0} FROM accounts WHERE id BETWEEN ${q(followerId(0))} AND ${q(followerId(FOLLOWERS - 1))};
-- 20,000 public statuses by the followed accounts, ids of their time, in the reader's home.
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${STATUSES - 1}),
  s(i, ms, acct) AS (SELECT i, ${first} + i * ${step}, printf('%026d', 5000 + (i * 7) % ${FOLLOWED}) FROM n)
INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
SELECT ${sqlIdTime("ms")} || printf('%016d', i), a.uri || '/statuses/' || i, a.url || '/' || i, acct,
  ${sqlIdTime("ms")} || printf('%016d', i), a.uri || '/contexts/' || i, '<p>seeded status ' || i || '</p>', '', 'public', 0, ms
FROM s JOIN accounts a ON a.id = s.acct;
INSERT INTO home_feed (account_id, status_id, author_id) SELECT ${q(LOCAL.reader)}, id, account_id FROM statuses;
-- One post of the reader's, favourited by 200 of the followed accounts: the notifications (sequence ids of
-- their time, src/db/ids.ts, as the notification retention compares them).
INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
VALUES (${q(num(9))}, ${q(readerNote)}, ${q(readerNote)}, ${q(LOCAL.reader)}, ${q(num(9))}, ${q(`${BASE_URL}/contexts/${num(9)}`)}, '<p>mine</p>', 'mine', 'public', 1, ${now - 2 * HOUR});
INSERT INTO notifications (id, account_id, from_account_id, type, status_id, pushed, is_seen, created_at)
SELECT printf('%016d', ${(now - HOUR) * 1000} + rowid), ${q(LOCAL.reader)}, id, 'favourite', ${q(num(9))}, 1, 1, ${now - HOUR} FROM accounts
WHERE id BETWEEN ${q(followedId(0))} AND ${q(followedId(FOLLOWERS - 1))};
-- An accepted LitePub relay (its actor on a remote host).
INSERT INTO relays (id, url, kind, actor_uri, inbox_url, follow_uri, state, created_at, updated_at)
VALUES (${q(num(7))}, ${q(w.relay.id)}, 'litepub', ${q(w.relay.id)}, ${q(`${w.relay.id}/inbox`)}, ${q(`${BASE_URL}/users/internal.fetch#relays/${num(7)}`)}, 'accepted', ${t0}, ${t0});
UPDATE accounts SET followers_count = (SELECT count(*) FROM follows WHERE target_account_id = accounts.id),
  following_count = (SELECT count(*) FROM follows WHERE account_id = accounts.id),
  statuses_count = (SELECT count(*) FROM statuses WHERE account_id = accounts.id);
`;
  const file = join(PERSIST, "seed.sql");
  writeFileSync(file, sql);
  const started = Date.now();
  wrangler(["d1", "execute", "DB", "--local", "--yes", "--file", file]);
  console.log(
    `seeded ${STATUSES} statuses and ${locals.length + remotes.length} accounts in ${Date.now() - started} ms`,
  );
  return { tokens, prunedPerHour: HOUR / step };
}

// --- Reading the meter -----------------------------------------------------------------------------------------

let server: Server;
/** `/__cost` readings taken, and what one reading adds to the counters (measured at the start; 0 expected). */
let readings = 0;
let perReading = zero();

async function reading(): Promise<Cost> {
  readings++;
  const res = await fetch(`${server.base}/__cost`);
  if (!res.ok) throw new Error(`/__cost answered ${res.status}: is COST_METER set?`);
  return (await res.json()) as Cost;
}

const same = (a: Cost, b: Cost) => COST_KEYS.every((k) => a[k] === b[k]);
const minus = (a: Cost, b: Cost) => {
  const out = zero();
  for (const k of COST_KEYS) out[k] = a[k] - b[k];
  return out;
};

/** The counters once they have stopped changing for SETTLE_MS. */
async function settled(): Promise<Cost> {
  const deadline = Date.now() + SETTLE_LIMIT_MS;
  let last = await reading();
  let since = Date.now();
  for (;;) {
    await sleep(100);
    const now = await reading();
    if (!same(now, last)) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= SETTLE_MS) return now;
    if (Date.now() > deadline) throw new Error(`the counters did not settle within ${SETTLE_LIMIT_MS} ms`);
  }
}

/** What `fn` costs, everything it started included, less the readings' own cost. */
async function costOf(fn: () => Promise<unknown>): Promise<Cost> {
  const before = await settled();
  const r0 = readings;
  await fn();
  const after = await settled();
  const d = minus(after, before);
  const n = readings - r0;
  for (const k of COST_KEYS) d[k] -= perReading[k] * n;
  if (COST_KEYS.some((k) => d[k] < 0))
    throw new Error(`the counters went down (${JSON.stringify(d)}): something reset the isolate's totals`);
  return d;
}

const figures: Figures = {};
const spread: Record<string, { min: Cost; max: Cost }> = {};

function median(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** `fn(0)` unmeasured (first contact), then `fn(1)`…`fn(RUNS)` measured: the median of each counter is kept. */
async function measure(name: string, fn: (run: number) => Promise<unknown>, opts: { warm?: boolean } = {}) {
  if (opts.warm !== false) await fn(0);
  const runs: Cost[] = [];
  for (let i = 1; i <= RUNS; i++) runs.push(await costOf(() => fn(i)));
  const med = zero();
  const min = zero();
  const max = zero();
  for (const k of COST_KEYS) {
    med[k] = median(runs.map((r) => r[k]));
    min[k] = Math.min(...runs.map((r) => r[k]));
    max[k] = Math.max(...runs.map((r) => r[k]));
  }
  figures[name] = med;
  spread[name] = { min, max };
  process.stdout.write(`  ${name}: ${med.rowsRead} read, ${med.rowsWritten} written\n`);
}

// --- Talking to the server -------------------------------------------------------------------------------------

async function api<T = unknown>(token: string | null, path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${server.base}${path}`, {
    ...init,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(typeof init.body === "string" ? { "content-type": "application/json" } : {}),
      ...init.headers,
    },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return (text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text) as T;
}

let sent = 0;
/** An activity signed by `actor`, POSTed to the shared inbox; anything but 202 stops the bench. */
async function deliver(actor: RemoteActor, activity: Record<string, unknown>) {
  const inbox = new URL(`${server.base}/inbox`);
  const body = JSON.stringify(activity);
  const res = await fetch(inbox, { method: "POST", headers: signedHeaders(inbox, body, actor), body });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`inbox: ${activity.type} by ${actor.name}: ${res.status} ${text}`);
}
const unique = () => `${Date.now().toString(36)}${sent++}`;

/** A public post by `author` (Mastodon's shape: to Public, cc followers), with a hashtag. */
function note(author: RemoteActor, extra: Record<string, unknown> = {}) {
  const n = unique();
  const id = `${author.id}/statuses/${n}`;
  const origin = new URL(author.id).origin;
  return {
    id,
    type: "Note",
    published: new Date().toISOString(),
    url: `${origin}/@${author.name}/${n}`,
    attributedTo: author.id,
    to: [PUBLIC],
    cc: [`${author.id}/followers`],
    sensitive: false,
    content: `<p>bench post ${n} <a href="${origin}/tags/bench" class="mention hashtag" rel="tag">#<span>bench</span></a></p>`,
    tag: [{ type: "Hashtag", href: `${origin}/tags/bench`, name: "#bench" }],
    ...extra,
  };
}

function create(author: RemoteActor, object: Record<string, unknown>) {
  return {
    "@context": [AS, { sensitive: "as:sensitive", Hashtag: "as:Hashtag" }],
    id: `${object.id}/activity`,
    type: "Create",
    actor: author.id,
    published: object.published,
    to: object.to,
    cc: object.cc,
    object,
  };
}

/** A small JPEG (64×64, a gradient). */
function smallJpeg(): Uint8Array {
  const width = 64;
  const height = 64;
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) data.set([i % 256, (i / 16) % 256, 128, 255], i * 4);
  return jpeg.encode({ data, width, height }, 80).data;
}

/** Runs the cron as Cloudflare would at `time` (miniflare's trigger; wrangler dev offers it). */
async function cron(time: number) {
  const res = await fetch(
    `${server.base}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("* * * * *")}&time=${time}`,
  );
  const text = await res.text();
  if (!res.ok) throw new Error(`scheduled: ${res.status} ${text}`);
}

// --- The actions -----------------------------------------------------------------------------------------------

async function actions(w: World) {
  const { reader, quiet, poster } = w.tokens;
  const readerUri = `${BASE_URL}/users/reader`;

  // Warm: the isolate's first requests read settings and keys.
  await api(reader, "/api/v1/timelines/home?limit=20");
  await api(null, "/api/v1/instance");

  // Local posts for remote accounts to like, boost and reply to (one for each run and the warm-up).
  const mine: { id: string; uri: string }[] = [];
  for (let i = 0; i <= RUNS; i++)
    mine.push(await api(reader, "/api/v1/statuses", { method: "POST", body: JSON.stringify({ status: `post ${i}` }) }));

  console.log("inbound activities");
  await measure(ACTIONS.inboundCreate, () => deliver(w.author, create(w.author, note(w.author))));
  await measure(ACTIONS.inboundCreate10, () => deliver(w.author10, create(w.author10, note(w.author10))));
  const relayAnnounce = async (author: RemoteActor) => {
    const n = note(author);
    w.hosts.find((h) => author.id.startsWith(`${h.origin}/`))!.docs.set(n.id, { "@context": AS, ...n });
    await deliver(w.relay, {
      "@context": AS,
      id: `${w.relay.id}#announces/${unique()}`,
      type: "Announce",
      actor: w.relay.id,
      to: [`${w.relay.id}/followers`],
      object: n.id,
    });
  };
  await measure(ACTIONS.relayKnown, () => relayAnnounce(w.relayAuthor));
  await measure(ACTIONS.relayNew, () =>
    relayAnnounce(remoteActor(w.hosts[0]!, `relayed${unique()}`, { keys: w.sharedKeys })),
  );
  await measure(ACTIONS.inboundLike, (i) =>
    deliver(w.liker, {
      "@context": AS,
      id: `${w.liker.id}#likes/${unique()}`,
      type: "Like",
      actor: w.liker.id,
      object: mine[i]!.uri,
    }),
  );
  await measure(ACTIONS.inboundBoost, (i) =>
    deliver(w.booster, {
      "@context": AS,
      id: `${w.booster.id}/statuses/${unique()}/activity`,
      type: "Announce",
      actor: w.booster.id,
      published: new Date().toISOString(),
      to: [PUBLIC],
      cc: [readerUri, `${w.booster.id}/followers`],
      object: mine[i]!.uri,
    }),
  );
  await measure(ACTIONS.inboundReply, (i) => {
    const mention = `<span class="h-card"><a href="${readerUri}" class="u-url mention">@<span>reader</span></a></span>`;
    const reply = note(w.replier, {
      inReplyTo: mine[i]!.uri,
      cc: [`${w.replier.id}/followers`, readerUri],
      content: `<p>${mention} a reply</p>`,
      tag: [{ type: "Mention", href: readerUri, name: `@reader@${DOMAIN}` }],
    });
    return deliver(w.replier, create(w.replier, reply));
  });

  console.log("cron");
  // Yesterday (UTC), in order: the retention's cursor moves forward as it would.
  const yesterday = Math.floor(Date.now() / DAY) * DAY - DAY;
  const minute = 60_000;
  await cron(yesterday - minute); // warm: the first run reads settings, writes every heartbeat
  // Run once each: 00:00 and 00:30 happen once a day (BENCH_RUNS of them would be BENCH_RUNS days).
  figures[ACTIONS.cronMidnight] = await costOf(() => cron(yesterday));
  figures[ACTIONS.cronMidnightHourly] = await costOf(() => cron(yesterday + 30 * minute));
  await measure(ACTIONS.cronIdle, (i) => cron(yesterday + HOUR + (6 + i) * minute), { warm: false });
  await measure(ACTIONS.cronHourly, (i) => cron(yesterday + i * HOUR + 30 * minute), { warm: false });
  // The same hour's run again: the retention is caught up, as every hourly run of an instance nothing arrives at.
  await measure(ACTIONS.cronHourlyIdle, () => cron(yesterday + (RUNS - 1) * HOUR + 30 * minute), { warm: false });
  // Pruning one status: what an hourly run's pruning of its hour's seeded statuses cost, per status.
  const prune = zero();
  for (const k of COST_KEYS)
    prune[k] = (figures[ACTIONS.cronHourly]![k] - figures[ACTIONS.cronHourlyIdle]![k]) / w.prunedPerHour;
  figures[ACTIONS.prune] = prune;

  console.log("reads");
  const home = await api<{ id: string }[]>(reader, "/api/v1/timelines/home?limit=20");
  const notifications = await api<{ id: string }[]>(reader, "/api/v1/notifications?limit=20");
  if (home.length !== 20 || notifications.length !== 20)
    throw new Error(`the reader's pages hold ${home.length} statuses and ${notifications.length} notifications`);
  await measure(ACTIONS.homePage, () => api(reader, "/api/v1/timelines/home?limit=20"));
  await measure(ACTIONS.homePoll, () => api(reader, `/api/v1/timelines/home?since_id=${home[0]!.id}`));
  await measure(ACTIONS.notificationsPage, () => api(reader, "/api/v1/notifications?limit=20"));
  await measure(ACTIONS.notificationsPoll, () => api(reader, `/api/v1/notifications?since_id=${notifications[0]!.id}`));
  await measure(ACTIONS.publicPage, () => api(reader, "/api/v1/timelines/public?limit=20"));
  await measure(ACTIONS.frontPage, () => api(null, "/", { headers: { accept: "text/html" } }));

  console.log("writes");
  const post = (token: string, status: string) =>
    api<{ id: string }>(token, "/api/v1/statuses", { method: "POST", body: JSON.stringify({ status }) });
  await measure(ACTIONS.post0, (i) => post(quiet, `quiet post ${i}`));
  await measure(ACTIONS.post200, (i) => post(poster, `post to 200 followers ${i}`));
  // The author's posts (the inbound Creates above): favourited and boosted, each delivered to its host.
  const authorPosts = await api<{ id: string }[]>(reader, `/api/v1/accounts/${followedId(0)}/statuses?limit=40`);
  if (authorPosts.length < 2 * (RUNS + 1)) throw new Error(`only ${authorPosts.length} posts of the author`);
  await measure(ACTIONS.favourite, (i) =>
    api(reader, `/api/v1/statuses/${authorPosts[i]!.id}/favourite`, { method: "POST" }),
  );
  await measure(ACTIONS.boost, (i) =>
    api(reader, `/api/v1/statuses/${authorPosts[RUNS + 1 + i]!.id}/reblog`, { method: "POST" }),
  );
  await measure("follow (local)", (i) => api(reader, `/api/v1/accounts/${followeeId(i)}/follow`, { method: "POST" }));
  await measure("follow (remote)", (i) =>
    api(reader, `/api/v1/accounts/${remoteTargetId(i)}/follow`, { method: "POST" }),
  );

  console.log("streaming and media");
  // A session: open, the user's own post arrives as an update, close. The post's own cost is taken out below.
  const wsBase = server.base.replace(/^http/, "ws");
  const sessions: Cost[] = [];
  const session = async (i: number) => {
    const ws = new WebSocket(`${wsBase}/api/v1/streaming?access_token=${quiet}&stream=user`);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const update = new Promise<void>((resolve) =>
      ws.on("message", (m) => {
        if ((JSON.parse(String(m)) as { event?: string }).event === "update") resolve();
      }),
    );
    await post(quiet, `streamed ${i}`);
    await Promise.race([update, sleep(10_000).then(() => Promise.reject(new Error("no update on the stream")))]);
    ws.close();
    await new Promise((r) => ws.once("close", r));
  };
  await session(0);
  for (let i = 1; i <= RUNS; i++) sessions.push(await costOf(() => session(i)));
  const streaming = zero();
  for (const k of COST_KEYS) streaming[k] = median(sessions.map((s) => s[k])) - figures[ACTIONS.post0]![k];
  figures["streaming session (open, one update, close), its post not counted"] = streaming;

  // Translation (issue 47): a reader translates a post of quiet's into German, then asks again (from the store).
  // The backend is a LibreTranslate stand-in on 127.0.0.1 (`translator()`): Workers AI cannot run here, and both
  // backends read and write the same rows (the Workers AI one adds its neurons to the day's figure, as this one adds
  // 0; test/budgets.test.ts measures it with a stand-in binding).
  const toTranslate: { id: string }[] = [];
  for (let i = 0; i <= RUNS; i++)
    toTranslate.push(
      await api(quiet, "/api/v1/statuses", {
        method: "POST",
        body: JSON.stringify({ status: `Bonjour à tous, voici le message ${i}`, language: "fr" }),
      }),
    );
  const translate = (i: number) =>
    api(reader, `/api/v1/statuses/${toTranslate[i]!.id}/translate`, {
      method: "POST",
      body: JSON.stringify({ lang: "de" }),
    });
  await measure(ACTIONS.translate, translate);
  await measure(ACTIONS.translateCached, translate, { warm: false });

  const image = smallJpeg();
  await measure("media upload (small JPEG)", (i) => {
    const form = new FormData();
    form.set("file", new Blob([image], { type: "image/jpeg" }), `bench${i}.jpg`);
    return api(quiet, "/api/v2/media", { method: "POST", body: form });
  });
}

// --- Printing --------------------------------------------------------------------------------------------------

const fmt = (n: number) => (Number.isInteger(n) ? n.toLocaleString("en-US") : n.toFixed(1));
const pct = (n: number) => `${n < 10 ? n.toFixed(2) : n.toFixed(1)}%`;

function printFigures() {
  console.log(`\n## Per action (median of ${RUNS} runs; cron 00:00 and 00:30: one run)\n`);
  console.log(
    "| action | rows read | rows written | D1 queries | Worker requests | DO requests | subrequests | R2 A / B | Images |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const [name, c] of Object.entries(figures)) {
    const s = spread[name];
    const range = (k: keyof Cost) => (s && s.min[k] !== s.max[k] ? ` (${fmt(s.min[k])}–${fmt(s.max[k])})` : "");
    console.log(
      `| ${name} | ${fmt(c.rowsRead)}${range("rowsRead")} | ${fmt(c.rowsWritten)}${range("rowsWritten")} | ${fmt(c.queries)} | ${fmt(c.requests)} | ${fmt(c.durableObjectRequests)} | ${fmt(c.subrequests)} | ${fmt(c.r2ClassA)} / ${fmt(c.r2ClassB)} | ${fmt(c.imageTransformations)} |`,
    );
  }
}

function printModel() {
  console.log("\n## A day, against the Workers Free plan's daily caps\n");
  console.log(
    `Caps: ${fmt(FREE_PLAN.rowsRead)} rows read, ${fmt(FREE_PLAN.rowsWritten)} rows written (developers.cloudflare.com/d1/platform/pricing/), ${fmt(FREE_PLAN.requests)} Worker requests (developers.cloudflare.com/workers/platform/limits/), ${fmt(FREE_PLAN.durableObjectRequests)} Durable Object requests (developers.cloudflare.com/durable-objects/platform/pricing/).\n`,
  );
  console.log("Assumptions:");
  for (const a of assumptions()) console.log(`- ${a}`);
  const days: Record<string, Day> = {};
  for (const s of SCENARIOS) {
    const d = scenarioDay(figures, s);
    days[s.key] = d;
    console.log(`\n### ${s.title}\n`);
    console.log("| what | a day | rows read | rows written | Worker requests | DO requests |");
    console.log("|---|---|---|---|---|---|");
    for (const l of d.lines)
      console.log(
        `| ${l.what} | ${fmt(l.perDay)} | ${fmt(Math.round(l.total.rowsRead))} | ${fmt(Math.round(l.total.rowsWritten))} | ${fmt(Math.round(l.total.requests))} | ${fmt(Math.round(l.total.durableObjectRequests))} |`,
      );
    console.log(
      `| **total** | | ${fmt(Math.round(d.total.rowsRead))} | ${fmt(Math.round(d.total.rowsWritten))} | ${fmt(Math.round(d.total.requests))} | ${fmt(Math.round(d.total.durableObjectRequests))} |`,
    );
    console.log(`| **% of the Free cap** | | ${CAP_KEYS.map((k) => pct(d.percent[k])).join(" | ")} |`);
  }
  console.log("\n## Issue 42's targets\n");
  for (const c of checkTargets(days))
    console.log(
      `- ${SCENARIOS.find((s) => s.key === c.target.scenario)!.title}, ${c.cap}: ${pct(c.percent)} (target ≤ ${c.target.max}%): ${c.met ? "met" : "NOT MET"}`,
    );
}

function commit() {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"]).toString().trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"]).toString().trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return "unknown";
  }
}

/** A LibreTranslate stand-in on 127.0.0.1: French and English, each into the other and German. */
async function translator() {
  const http = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      if (req.method === "GET" && req.url === "/languages")
        return res.end(
          JSON.stringify([
            { code: "fr", targets: ["de", "en"] },
            { code: "en", targets: ["de", "fr"] },
          ]),
        );
      if (req.method === "POST" && req.url === "/translate") {
        const { q, target } = JSON.parse(body) as { q: string[]; target: string };
        return res.end(JSON.stringify({ translatedText: q.map((t) => `[${target}] ${t}`) }));
      }
      res.statusCode = 404;
      res.end("{}");
    });
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, close: () => http.close() };
}

async function main() {
  const started = Date.now();
  const world = await remoteWorld();
  const libre = await translator();
  const closeHosts = () => {
    world.hosts.forEach((h) => h.close());
    libre.close();
  };
  const seeded = await seed(world);
  server = await startServer(PERSIST, {
    vars: { DOMAIN, ALLOW_PRIVATE_ADDRESS: "true", COST_METER: "true", LIBRE_TRANSLATE_ENDPOINT: libre.url },
  });
  try {
    // What reading the counters costs (nothing, as src/index.ts answers before counting): measured, not assumed.
    const a = await reading();
    for (let i = 0; i < 9; i++) await reading();
    const b = await reading();
    for (const k of COST_KEYS) perReading[k] = (b[k] - a[k]) / 10;
    await actions({ ...world, ...seeded });
  } finally {
    server.stop();
    closeHosts();
  }
  console.log(
    `\n${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? "?"}, Node ${process.version}, commit ${commit()}; ${STATUSES} statuses; ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  console.log(
    `a /__cost reading itself added ${
      COST_KEYS.filter((k) => perReading[k])
        .map((k) => `${perReading[k]} ${k}`)
        .join(", ") || "nothing"
    } to the counters`,
  );
  printFigures();
  printModel();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
