/**
 * Inbound federation benchmark against `wrangler dev` (see bench/README.md).
 *
 *   npm run bench:inbox                                  # 1,000 activities from 100 actors on 25 hosts
 *   BENCH_ACTIVITIES=300 BENCH_CONCURRENCY=10 npm run bench:inbox
 *
 * Remote hosts are HTTP servers on 127.0.0.1 (one port = one host) serving their actors' documents (Person with
 * an RSA `publicKey`, inbox, shared inbox, followers), so that Starling fetches each signer's key and actor as it
 * would from Mastodon. The activities are Mastodon-shaped and signed as Mastodon signs them (draft-cavage HTTP
 * Signatures over `(request-target) host date digest`, RSA-SHA256, `Digest: SHA-256=…`): Creates of Notes that
 * mention the local user (so they concern this instance and are stored), Likes and Announces of its public
 * statuses. All are POSTed to the shared inbox `/inbox` at a fixed concurrency; then every one must be found
 * applied exactly once, through the client API (favourites_count, reblogs_count, notifications) and, after the
 * server stops, in D1 itself (rows and their distinct ids).
 *
 * Starling has no inbox queue (src/federation/federation.ts builds it with none): the listener runs while
 * the sender waits, so a 202 means stored; only streaming, push and the outbox kick follow the response.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { percentile, startServer, wrangler } from "./harness";
import { registerUser } from "./api";
import { remoteActor, remoteHost, signedHeaders, type RemoteActor, type RemoteHost, type Served } from "./remote";

const ACTIVITIES = Number(process.env.BENCH_ACTIVITIES ?? 1000);
const ACTORS = Number(process.env.BENCH_ACTORS ?? 100);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 25);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
/** How long the API may take to show everything after the last response. */
const SETTLE_MS = 60_000;
const REQUEST_TIMEOUT_MS = 60_000;
/** BENCH_KEEPALIVE=1: remote hosts keep connections alive (Node's 5 s idle close races with reuse). */
const KEEPALIVE = process.env.BENCH_KEEPALIVE === "1";
/** Passes that send again what was refused (not 202), 2 s apart. */
const RETRY_PASSES = Number(process.env.BENCH_RETRIES ?? 3);
const PERSIST = ".wrangler/bench-inbox";
/**
 * The instance's DOMAIN: ids are `https://inbox.bench/…` whatever port the server got. Nothing here fetches
 * them (local statuses are found by their id), and the signatures cover the Host the requests really carry.
 */
const DOMAIN = "inbox.bench";
const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

type Kind = "create" | "like" | "announce";
/** Each round, every actor sends one activity: 4 rounds in 10 are Creates, 3 Likes and 3 Announces. */
const ROUND_KINDS: Kind[] = [
  "create",
  "like",
  "announce",
  "create",
  "like",
  "announce",
  "create",
  "like",
  "announce",
  "create",
];

/** What the remote hosts were asked: actor documents (key and actor fetches), anything else, POSTs. */
const served: Served = { actor: 0, other: 0, posts: 0 };

/** HOSTS servers; actor i lives on host i % HOSTS. Each serves its actors and answers POSTs 202. */
async function remoteHosts(): Promise<{ hosts: RemoteHost[]; actors: RemoteActor[] }> {
  const hosts: RemoteHost[] = [];
  // BENCH_KEEPALIVE=1 keeps Node's default keep-alive, to show what transient key-fetch failures do.
  for (let h = 0; h < HOSTS; h++) hosts.push(await remoteHost({ keepAlive: KEEPALIVE, served }));
  const actors = Array.from({ length: ACTORS }, (_, i) =>
    remoteActor(hosts[i % HOSTS]!, `remote${i}`, { displayName: `Remote ${i}` }),
  );
  return { hosts, actors };
}

/** One activity as Mastodon writes it, with what it must become here. */
interface Planned {
  kind: Kind;
  actor: RemoteActor;
  body: string;
  /** The id it is stored under: the Note's (a Create), the Like's or the Announce's. */
  stored: string;
  /** The last answer to it. */
  last?: string;
}

/**
 * The activities: actor `i % ACTORS` in round `floor(i / ACTORS)`; the n-th Like (Announce) round of an actor is
 * of local status n, so no pair repeats. Then shuffled (seeded) into a mix.
 */
function plan(actors: RemoteActor[], target: { uri: string; username: string }, statusUris: string[]): Planned[] {
  const out: Planned[] = [];
  for (let i = 0; i < ACTIVITIES; i++) {
    const actor = actors[i % ACTORS]!;
    const round = Math.floor(i / ACTORS);
    const kind = ROUND_KINDS[round % ROUND_KINDS.length]!;
    const nth =
      ROUND_KINDS.slice(0, round % ROUND_KINDS.length).filter((k) => k === kind).length +
      Math.floor(round / ROUND_KINDS.length) * 3;
    const id = `${actor.id}/statuses/${i}`;
    const published = new Date().toISOString();
    let activity: Record<string, unknown>;
    if (kind === "create") {
      const mention = `<span class="h-card"><a href="${target.uri}" class="u-url mention">@<span>${target.username}</span></a></span>`;
      const audience = { to: [PUBLIC], cc: [`${actor.id}/followers`, target.uri] };
      activity = {
        "@context": ["https://www.w3.org/ns/activitystreams", { sensitive: "as:sensitive", Hashtag: "as:Hashtag" }],
        id: `${id}/activity`,
        type: "Create",
        actor: actor.id,
        published,
        ...audience,
        object: {
          id,
          type: "Note",
          published,
          url: `${actor.id.replace("/users/", "/@")}/${i}`,
          attributedTo: actor.id,
          ...audience,
          sensitive: false,
          content: `<p>${mention} inbox bench note ${i}</p>`,
          tag: [{ type: "Mention", href: target.uri, name: `@${target.username}@${DOMAIN}` }],
        },
      };
    } else {
      const object = statusUris[nth]!;
      activity =
        kind === "like"
          ? {
              "@context": "https://www.w3.org/ns/activitystreams",
              id: `${actor.id}#likes/${i}`,
              type: "Like",
              actor: actor.id,
              object,
            }
          : {
              "@context": "https://www.w3.org/ns/activitystreams",
              id: `${id}/activity`,
              type: "Announce",
              actor: actor.id,
              published,
              to: [PUBLIC],
              cc: [target.uri, `${actor.id}/followers`],
              object,
            };
    }
    out.push({ kind, actor, body: JSON.stringify(activity), stored: kind === "create" ? id : String(activity.id) });
  }
  // Mulberry32: the same mix every run.
  let seed = 0x5eed;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Every request's status code, its latency, what was refused (to send again) and a few refusals' bodies. */
async function send(inbox: URL, batch: Planned[]) {
  const requests = batch.map((p) => ({ p, headers: signedHeaders(inbox, p.body, p.actor) }));
  const codes = new Map<string, number>();
  const failures: string[] = [];
  const refused: Planned[] = [];
  const latencies: number[] = [];
  let next = 0;
  let ended = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const { p, headers } = requests[next++]!;
        const t = performance.now();
        const res = await fetch(inbox, {
          method: "POST",
          headers,
          body: p.body,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        }).catch((e: Error) => e);
        const code = res instanceof Error ? `failed (${res.name})` : String(res.status);
        const text = res instanceof Error ? res.message : await res.text().catch(() => "");
        ended = performance.now();
        latencies.push(ended - t);
        codes.set(code, (codes.get(code) ?? 0) + 1);
        p.last = code;
        if (code !== "202") {
          refused.push(p);
          if (failures.length < 5) failures.push(`${p.kind} ${code}: ${text.slice(0, 200)}`);
        }
      }
    }),
  );
  return { started, ended, codes, failures, refused, latencies, accepted: codes.get("202") ?? 0 };
}

const codeList = (codes: Map<string, number>) => [...codes].map(([c, n]) => `${c} ×${n}`).join(", ");

/** A statement's rows, through `wrangler d1 execute --json` (only once the server has stopped: one writer). */
function query<T>(sql: string): T[] {
  const out = execFileSync(
    "npx",
    ["wrangler", "d1", "execute", "DB", "--local", "--persist-to", PERSIST, "--json", "--command", sql],
    { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 },
  );
  return (JSON.parse(out.toString()) as { results: T[] }[])[0]!.results;
}

async function main() {
  rmSync(PERSIST, { recursive: true, force: true });
  mkdirSync(PERSIST, { recursive: true });
  wrangler(PERSIST, ["d1", "migrations", "apply", "DB", "--local"]);
  const { hosts, actors } = await remoteHosts();
  const server = await startServer(PERSIST, { vars: { DOMAIN, ALLOW_PRIVATE_ADDRESS: "true" } });
  const closeHosts = () => hosts.forEach((h) => h.close());
  // Interrupted (Ctrl-C, a timeout): the server started here goes too.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => (server.stop(), process.exit(130)));
  let expected: Record<Kind, number>;
  let planned: Planned[] = [];
  try {
    const { base } = server;
    const token = await registerUser(base, "star");
    const api = async <T>(path: string, init: RequestInit = {}): Promise<{ body: T; headers: Headers }> => {
      const res = await fetch(`${base}${path}`, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        ...init,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers },
      });
      if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${await res.text()}`);
      return { body: (await res.json()) as T, headers: res.headers };
    };
    const target = { uri: `https://${DOMAIN}/users/star`, username: "star" };
    const statuses: { id: string; uri: string }[] = [];
    // One local status per Like (Announce) round of an actor: 3 a cycle of 10 rounds.
    const rounds = Math.ceil(ACTIVITIES / ACTORS);
    const wanted = Math.ceil(rounds / ROUND_KINDS.length) * ROUND_KINDS.filter((k) => k === "like").length;
    for (let n = 0; n < wanted; n++)
      statuses.push(
        (
          await api<{ id: string; uri: string }>("/api/v1/statuses", {
            method: "POST",
            body: JSON.stringify({ status: `local status ${n}` }),
          })
        ).body,
      );
    planned = plan(
      actors,
      target,
      statuses.map((s) => s.uri),
    );
    expected = { create: 0, like: 0, announce: 0 };
    for (const p of planned) expected[p.kind]++;

    // Signed before each pass's clock starts: the figures are the server's, not this process's RSA signing.
    const inbox = new URL(`${base}/inbox`);
    const firstPass = await send(inbox, planned);
    const started = firstPass.started;
    let lastResponse = firstPass.ended;
    const latencies = firstPass.latencies.sort((a, b) => a - b);
    const postSeconds = (firstPass.ended - started) / 1000;
    console.log(
      `${ACTIVITIES} activities (${expected.create} Create{Note}, ${expected.like} Like, ${expected.announce} Announce) from ${ACTORS} actors on ${HOSTS} hosts, ${CONCURRENCY} concurrent POSTs to /inbox`,
    );
    console.log(`responses: ${codeList(firstPass.codes)}`);
    for (const f of firstPass.failures) console.log(`  e.g. ${f}`);
    console.log(
      `accepted: ${(firstPass.accepted / postSeconds).toFixed(1)}/s (${firstPass.accepted} in ${postSeconds.toFixed(2)} s), response p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies[latencies.length - 1]!.toFixed(1)} ms`,
    );
    // What was refused (not 202) is sent again, as Mastodon's delivery retries 401, 408, 429 and 5xx.
    let refused = firstPass.refused;
    for (let pass = 2; pass <= RETRY_PASSES + 1 && refused.length > 0; pass++) {
      await new Promise((r) => setTimeout(r, 2000));
      const again = await send(inbox, refused);
      lastResponse = again.ended;
      console.log(`pass ${pass}: ${refused.length} sent again: ${codeList(again.codes)}`);
      for (const f of again.failures) console.log(`  e.g. ${f}`);
      refused = again.refused;
    }
    if (refused.length) console.log(`still refused after ${RETRY_PASSES} more passes: ${refused.length}`);

    // Applied, as the client API shows it: counts of the local statuses, and the user's notifications.
    const notificationsOf = async (type: string) => {
      let n = 0;
      let maxId = "";
      for (;;) {
        const page = (
          await api<{ id: string }[]>(
            `/api/v1/notifications?types[]=${type}&limit=80${maxId ? `&max_id=${maxId}` : ""}`,
          )
        ).body;
        if (page.length === 0) return n;
        n += page.length;
        maxId = page[page.length - 1]!.id;
      }
    };
    const applied = async () => {
      const counts = await Promise.all(
        statuses.map(
          async (s) =>
            (await api<{ favourites_count: number; reblogs_count: number }>(`/api/v1/statuses/${s.id}`)).body,
        ),
      );
      return {
        create: await notificationsOf("mention"),
        like: counts.reduce((a, c) => a + c.favourites_count, 0),
        announce: counts.reduce((a, c) => a + c.reblogs_count, 0),
        notified: { favourite: await notificationsOf("favourite"), reblog: await notificationsOf("reblog") },
      };
    };
    const complete = (a: Record<Kind, number>) =>
      a.create >= expected.create && a.like >= expected.like && a.announce >= expected.announce;
    let seen = await applied();
    let appliedAt = performance.now();
    const checks = { count: 1, completeAtFirst: complete(seen) };
    while (!complete(seen) && performance.now() - lastResponse < SETTLE_MS) {
      await new Promise((r) => setTimeout(r, 1000));
      seen = await applied();
      appliedAt = performance.now();
      checks.count++;
    }
    const endToEnd = (appliedAt - started) / 1000;

    console.log(
      `applied (API): ${seen.create} mentions, ${seen.like} favourites, ${seen.announce} reblogs; notifications ${seen.notified.favourite} favourite, ${seen.notified.reblog} reblog`,
    );
    console.log(
      `complete at the first check after the last response: ${checks.completeAtFirst ? "yes" : `no (${checks.count} checks)`}`,
    );
    console.log(
      `end to end (first POST to everything shown by the API): ${endToEnd.toFixed(2)} s, ${(ACTIVITIES / endToEnd).toFixed(1)} activities/s`,
    );
    console.log(
      `remote hosts served: ${served.actor} actor/key documents (${ACTORS} actors), ${served.other} other GETs, ${served.posts} POSTs`,
    );
  } finally {
    server.stop();
    closeHosts();
  }
  // Wait for workerd to let go of the database, then count the rows themselves: exactly once each.
  await new Promise((r) => setTimeout(r, 2000));
  const remote = "(SELECT id FROM accounts WHERE domain LIKE '127.0.0.1:%')";
  const [rows] = query<Record<string, number>>(
    `SELECT
      (SELECT count(*) FROM statuses WHERE reblog_of_id IS NULL AND account_id IN ${remote}) AS creates,
      (SELECT count(DISTINCT uri) FROM statuses WHERE reblog_of_id IS NULL AND account_id IN ${remote}) AS create_uris,
      (SELECT count(*) FROM favourites WHERE account_id IN ${remote}) AS likes,
      (SELECT count(DISTINCT account_id || status_id) FROM favourites WHERE account_id IN ${remote}) AS like_pairs,
      (SELECT count(*) FROM statuses WHERE reblog_of_id IS NOT NULL AND account_id IN ${remote}) AS announces,
      (SELECT count(DISTINCT account_id || reblog_of_id) FROM statuses WHERE reblog_of_id IS NOT NULL AND account_id IN ${remote}) AS announce_pairs,
      (SELECT count(*) FROM notifications WHERE type = 'mention' AND from_account_id IN ${remote}) AS mention_notes,
      (SELECT count(*) FROM notifications WHERE type = 'favourite' AND from_account_id IN ${remote}) AS favourite_notes,
      (SELECT count(*) FROM notifications WHERE type = 'reblog' AND from_account_id IN ${remote}) AS reblog_notes,
      (SELECT count(*) FROM accounts WHERE domain LIKE '127.0.0.1:%') AS remote_accounts`,
  );
  const r = rows!;
  const lost = {
    create: expected!.create - r.create_uris!,
    like: expected!.like - r.like_pairs!,
    announce: expected!.announce - r.announce_pairs!,
  };
  const dup = r.creates! - r.create_uris! + (r.likes! - r.like_pairs!) + (r.announces! - r.announce_pairs!);
  console.log(
    `D1: ${r.creates} statuses (${r.create_uris} distinct), ${r.likes} favourites, ${r.announces} reblogs, ${r.remote_accounts} remote accounts; notifications ${r.mention_notes} mention, ${r.favourite_notes} favourite, ${r.reblog_notes} reblog`,
  );
  console.log(
    `not applied: ${lost.create + lost.like + lost.announce} (Create ${lost.create}, Like ${lost.like}, Announce ${lost.announce}), applied twice: ${dup}`,
  );
  // Each activity by the id it is stored under: lost = answered 202 yet not stored (the sender will not retry).
  const storedIds = new Set(
    query<{ uri: string }>(
      `SELECT uri FROM statuses WHERE account_id IN ${remote} UNION ALL SELECT uri FROM favourites WHERE account_id IN ${remote}`,
    ).map((x) => x.uri),
  );
  const lostIds = planned.filter((p) => p.last === "202" && !storedIds.has(p.stored));
  const refusedNotStored = planned.filter((p) => p.last !== "202" && !storedIds.has(p.stored)).length;
  const refusedButStored = planned.filter((p) => p.last !== "202" && storedIds.has(p.stored)).length;
  console.log(
    `lost (202 but not stored): ${lostIds.length}; last answer not 202 and not stored: ${refusedNotStored}; last answer not 202 yet stored: ${refusedButStored}`,
  );
  for (const p of lostIds.slice(0, 5)) console.log(`  lost: ${p.kind} ${p.stored}`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
