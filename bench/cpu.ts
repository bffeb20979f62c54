/**
 * CPU time per request of the Worker itself, per route (see bench/README.md), to tell which Workers plan an
 * instance needs (the Free plan allows 10 ms of CPU per request; waiting on D1 does not count).
 *
 *   npm run bench:cpu
 *   BENCH_K=40 npm run bench:cpu            # more requests per route
 *
 * Starts its own `wrangler dev` (state under .wrangler/bench-cpu, made afresh) with the V8 inspector of the user
 * Worker on a free port. For each route: a few warm-up requests, then K requests one after another, each alone in
 * a CPU profile (bench/profile.ts), then K more without the profiler while reading the CPU time of the workerd
 * process from /proc (that process also runs local D1, so it is an upper bound). Sign-ins against stored hashes of
 * 10,000, 50,000 and 100,000 PBKDF2 iterations check that native crypto is attributed and give its cost.
 */
import { pbkdf2Sync, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import jpegJs from "jpeg-js";
import piexif from "piexifjs";
import { base64url } from "../src/lib/crypto";
import { benchId, freePort, percentile, processCpu, processTree, sqlString, startServer, wrangler } from "./harness";
import { busyTime, Inspector, readBundlesFrom, samplingPeriod, type CpuProfile } from "./profile";

const K = Number(process.env.BENCH_K ?? 20);
/** Registration and sign-in run 100,000 PBKDF2 iterations each: fewer of them keep the run short. */
const K_PASSWORD = Math.max(5, Math.round(K / 2));
const WARM_UP = 3;
/** Sampling interval asked of V8, µs. */
const INTERVAL = 100;
/** Time left after each response before the profile stops, so work the request left running (waitUntil) counts. */
const SETTLE_MS = 50;
const PERSIST = ".wrangler/bench-cpu";

let photoBytes: Uint8Array | null = null;
/** A 4000 × 3000 JPEG (jpeg-js) with a phone's EXIF (piexifjs), made once. */
function photo(): Uint8Array {
  if (photoBytes) return photoBytes;
  const width = 4000;
  const height = 3000;
  const data = Buffer.alloc(width * height * 4);
  // Gradients with some noise: about 3.5 MB at quality 85, a phone photo's size.
  for (let i = 0; i < width * height; i++) {
    const x = i % width;
    const y = (i / width) | 0;
    const noise = (((i * 2654435761) >>> 24) & 0x1f) - 16;
    data[i * 4] = (x / 16 + noise) & 0xff;
    data[i * 4 + 1] = (y / 12 + noise) & 0xff;
    data[i * 4 + 2] = ((x + y) / 28 - noise) & 0xff;
    data[i * 4 + 3] = 255;
  }
  const jpeg = jpegJs.encode({ data, width, height }, 85).data;
  const exif = piexif.dump({
    "0th": { [piexif.ImageIFD.Make]: "PhoneMaker", [piexif.ImageIFD.Orientation]: 6 },
    GPS: {
      [piexif.GPSIFD.GPSLatitudeRef]: "N",
      [piexif.GPSIFD.GPSLatitude]: [
        [48, 1],
        [51, 1],
        [0, 1],
      ],
    },
  });
  const binary = piexif.insert(exif, jpeg.toString("latin1"));
  photoBytes = Uint8Array.from(Buffer.from(binary, "latin1"));
  return photoBytes;
}
const PASSWORD = "cpu bench password";
const ITERATIONS = [10_000, 50_000, 100_000];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Accounts whose password is stored with `n` PBKDF2 iterations (the format of src/lib/crypto.ts hashPassword).
 * Returns what node:crypto took here for those hashes, CPU ms per 10,000 iterations.
 */
function seedIterationAccounts(): number {
  const t = Date.now();
  const cpu = process.cpuUsage();
  const rows = ITERATIONS.map((n, i) => {
    const salt = randomBytes(16);
    const hash = `pbkdf2-sha256$${n}$${base64url(salt)}$${base64url(pbkdf2Sync(PASSWORD, salt, n, 32, "sha256"))}`;
    const id = sqlString(benchId(1 + i));
    const name = `iter${n}`;
    return `INSERT INTO accounts (id, username, display_name, uri, url, created_at, updated_at) VALUES (${id}, '${name}', '${name}', 'http://localhost/users/${name}', 'http://localhost/users/${name}', ${t}, ${t});
INSERT INTO users (account_id, email, created_at) VALUES (${id}, '${name}@example.com', ${t});
INSERT INTO credentials (account_id, password_hash) VALUES (${id}, ${sqlString(hash)});`;
  });
  // The same hashes by node:crypto (OpenSSL) here: a reference for what PBKDF2 costs on this machine.
  const used = process.cpuUsage(cpu);
  const file = join(PERSIST, "seed.sql");
  writeFileSync(file, rows.join("\n"));
  wrangler(PERSIST, ["d1", "execute", "DB", "--local", "--yes", "--file", file]);
  return ((used.user + used.system) / 1000 / ITERATIONS.reduce((s, n) => s + n, 0)) * 10_000;
}

/** The workerd process that runs the user Worker (the one with an inspector), among the server's descendants. */
function workerdPid(root: number): number {
  for (const pid of processTree(root)) {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    if (cmd[0]?.endsWith("workerd") && cmd.some((a) => a.startsWith("--inspector-addr"))) return pid;
  }
  throw new Error("no workerd process with an inspector under the server");
}

/**
 * CPU ms so far of every process a request crosses here: the server's tree (wrangler's proxies, local D1, the
 * Worker) and this client. On a machine this busy, throughput is bound by their sum, not by the Worker's alone.
 */
function machineCpu(pids: number[]): number {
  const own = process.cpuUsage();
  return pids.reduce((sum, pid) => sum + processCpu(pid), (own.user + own.system) / 1000);
}

interface Route {
  name: string;
  k: number;
  request: (n: number) => Promise<Response>;
}

interface Measured {
  name: string;
  k: number;
  /** CPU ms of each profiled request. */
  cpu: number[];
  gcMean: number;
  top: string;
  wallP50: number;
  processMean: number;
  /** All processes a request crosses (`machineCpu`), ms per request. */
  machineMean: number;
  /** Bytes of the answer's body. */
  bytes: number;
}

async function measure(inspector: Inspector, pid: number, tree: number[], route: Route): Promise<Measured> {
  let n = 0;
  let bytes = 0;
  const once = async () => {
    const res = await route.request(n++);
    const body = await res.text();
    bytes = Buffer.byteLength(body);
    if (!res.ok) throw new Error(`${route.name}: ${res.status} ${body.slice(0, 200)}`);
  };
  for (let i = 0; i < WARM_UP; i++) await once();

  const profiles: CpuProfile[] = [];
  const walls: number[] = [];
  for (let i = 0; i < route.k; i++) {
    profiles.push(
      await inspector.profile(async () => {
        const t = performance.now();
        await once();
        walls.push(performance.now() - t);
        await sleep(SETTLE_MS);
      }),
    );
  }
  const period = samplingPeriod(profiles, INTERVAL);
  const busy = profiles.map((p) => busyTime(p, period));
  // BENCH_PROFILES=dir keeps each profile (open in Chrome DevTools' Performance panel, or read with jq).
  const dir = process.env.BENCH_PROFILES;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    const slug = route.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 40);
    profiles.forEach((p, i) => writeFileSync(join(dir, `${slug}-${i}.cpuprofile`), JSON.stringify(p)));
  }
  const self = new Map<string, number>();
  for (const b of busy) for (const [f, us] of b.self) self.set(f, (self.get(f) ?? 0) + us);
  const total = busy.reduce((s, b) => s + b.busy, 0);
  const top = [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(process.env.BENCH_TOP ?? 3))
    .map(([f, us]) => `${f} ${((us / total) * 100).toFixed(0)}%`)
    .join(", ");

  // The same requests without the profiler, counted by the kernel for the whole workerd process.
  const before = processCpu(pid);
  const machineBefore = machineCpu(tree);
  for (let i = 0; i < route.k; i++) await once();
  await sleep(SETTLE_MS);
  const processMean = (processCpu(pid) - before) / route.k;
  const machineMean = (machineCpu(tree) - machineBefore) / route.k;

  return {
    name: route.name,
    k: route.k,
    cpu: busy.map((b) => b.busy / 1000),
    gcMean: busy.reduce((s, b) => s + b.gc, 0) / busy.length / 1000,
    top,
    wallP50: percentile(
      [...walls].sort((a, b) => a - b),
      50,
    ),
    processMean,
    machineMean,
    bytes,
  };
}

const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});

/**
 * BENCH_STATE=timelines: the routes of `npm run bench` (bench/timelines.ts), on the database it seeded and left
 * in .wrangler/bench (100,000 statuses, its tokens), so their CPU is read on the same pages it measures.
 */
const TIMELINES = process.env.BENCH_STATE === "timelines";
const TIMELINES_STATE = ".wrangler/bench";

function timelineRoutes(base: string): Route[] {
  const tokens = JSON.parse(readFileSync(join(TIMELINES_STATE, "tokens.json"), "utf8")) as string[];
  // As bench/timelines.ts: token n is user 1 + (n % 99), with its own list and notifications.
  const user = (n: number) => 1 + (n % (tokens.length - 1));
  const get = (path: (n: number) => string) => (n: number) =>
    fetch(`${base}${path(n)}`, { headers: { authorization: `Bearer ${tokens[user(n)]}` } });
  return [
    { name: "trivial (GET /images/avi.png)", k: K, request: () => fetch(`${base}/images/avi.png`) },
    { name: "floor (GET /api/v1/custom_emojis)", k: K, request: () => fetch(`${base}/api/v1/custom_emojis`) },
    { name: "public timeline, limit=1", k: K, request: get(() => "/api/v1/timelines/public?limit=1") },
    { name: "home timeline", k: K, request: get(() => "/api/v1/timelines/home") },
    { name: "public timeline", k: K, request: get(() => "/api/v1/timelines/public") },
    { name: "tag timeline", k: K, request: get(() => "/api/v1/timelines/tag/bench") },
    { name: "list timeline", k: K, request: get((n) => `/api/v1/timelines/list/${benchId(5_000_000 + user(n))}`) },
    {
      name: "account statuses",
      k: K,
      request: get((n) => `/api/v1/accounts/${benchId(1_000_000 + user(n + 1))}/statuses`),
    },
    { name: "notifications", k: K, request: get(() => "/api/v1/notifications") },
    {
      name: "post by bench0 (999 followers)",
      k: K,
      request: (n) =>
        fetch(`${base}/api/v1/statuses`, {
          method: "POST",
          headers: { authorization: `Bearer ${tokens[0]}`, "content-type": "application/json" },
          body: JSON.stringify({ status: `cpu bench post ${n}` }),
        }),
    },
  ];
}

async function main() {
  const persist = TIMELINES ? TIMELINES_STATE : PERSIST;
  if (TIMELINES && !statSync(join(TIMELINES_STATE, "tokens.json"), { throwIfNoEntry: false }))
    throw new Error("BENCH_STATE=timelines reads the database `npm run bench` seeds: run it once first");
  let nodePer10k = 0;
  if (!TIMELINES) {
    rmSync(PERSIST, { recursive: true, force: true });
    mkdirSync(PERSIST, { recursive: true });
    wrangler(PERSIST, ["d1", "migrations", "apply", "DB", "--local"]);
    nodePer10k = seedIterationAccounts();
  }
  const inspectorPort = await freePort();
  // BENCH_PASSWORD_ITERATIONS: the instance's PASSWORD_ITERATIONS for registration (sign-ins use each seeded hash's own count).
  const iterations = process.env.BENCH_PASSWORD_ITERATIONS;
  const server = await startServer(persist, {
    inspectorPort,
    vars: { REGISTRATIONS_PER_IP: "1000000", ...(iterations ? { PASSWORD_ITERATIONS: iterations } : {}) },
  });
  let inspector: Inspector | undefined;
  try {
    const base = server.base;
    const pid = workerdPid(server.process.pid!);
    // wrangler bundles into a fresh .wrangler/tmp/dev-* directory per server: the newest is this one's.
    const tmp = ".wrangler/tmp";
    const dirs = readdirSync(tmp).filter((d) => d.startsWith("dev-"));
    readBundlesFrom(
      join(tmp, dirs.sort((a, b) => statSync(join(tmp, b)).mtimeMs - statSync(join(tmp, a)).mtimeMs)[0] ?? "."),
    );
    inspector = await Inspector.connect(inspectorPort);
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: INTERVAL });

    const app = (await (
      await fetch(
        `${base}/api/v1/apps`,
        form({
          client_name: "cpu bench",
          redirect_uris: "urn:ietf:wg:oauth:2.0:oob",
          scopes: "read write follow push",
        }),
      )
    ).json()) as { client_id: string; client_secret: string };
    const client = { client_id: app.client_id, client_secret: app.client_secret };
    const appToken = (
      (await (await fetch(`${base}/oauth/token`, form({ grant_type: "client_credentials", ...client }))).json()) as {
        access_token: string;
      }
    ).access_token;
    let registered = 0;
    let userToken = "";
    const signIn = (username: string) => () =>
      fetch(`${base}/oauth/token`, form({ grant_type: "password", username, password: PASSWORD, ...client }));
    const asUser =
      (path: string, init: RequestInit = {}) =>
      () =>
        fetch(`${base}${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${userToken}` } });

    const routes: Route[] = [
      { name: "trivial (GET /images/avi.png)", k: K, request: () => fetch(`${base}/images/avi.png`) },
      { name: "instance (GET /api/v1/instance)", k: K, request: () => fetch(`${base}/api/v1/instance`) },
      {
        name: "registration (POST /api/v1/accounts)",
        k: K_PASSWORD,
        request: async () => {
          const n = registered++;
          const res = await fetch(`${base}/api/v1/accounts`, {
            method: "POST",
            headers: { authorization: `Bearer ${appToken}`, "content-type": "application/json" },
            body: JSON.stringify({
              username: `cpu${n}`,
              email: `cpu${n}@example.com`,
              password: PASSWORD,
              agreement: true,
            }),
          });
          if (n === 0 && res.ok) userToken = ((await res.clone().json()) as { access_token: string }).access_token;
          return res;
        },
      },
      { name: "sign-in (POST /oauth/token, password)", k: K_PASSWORD, request: signIn("cpu0") },
      { name: "verify_credentials", k: K, request: asUser("/api/v1/accounts/verify_credentials") },
      {
        name: "post a status (POST /api/v1/statuses)",
        k: K,
        request: (n) =>
          asUser("/api/v1/statuses", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ status: `cpu bench post ${n} #cpu` }),
          })(),
      },
      {
        // A phone photo: 12 megapixels with EXIF (GPS, camera), stripped in the Worker (content/image-metadata.ts);
        // the thumbnail and blurhash are the Images binding's work, not this Worker's CPU.
        name: "upload a 12 MP photo (POST /api/v2/media)",
        k: K_PASSWORD,
        request: () => {
          const form = new FormData();
          form.set("file", new File([photo()], "IMG_0001.jpg"));
          return asUser("/api/v2/media", { method: "POST", body: form })();
        },
      },
      { name: "home timeline", k: K, request: asUser("/api/v1/timelines/home") },
      { name: "public timeline", k: K, request: asUser("/api/v1/timelines/public") },
      ...ITERATIONS.map((n) => ({
        name: `sign-in, hash of ${n.toLocaleString("en")} iterations`,
        k: K_PASSWORD,
        request: signIn(`iter${n}`),
      })),
    ];
    const results: Measured[] = [];
    // BENCH_ONLY=upload measures the routes whose name has that text (registration always runs: it makes the user).
    const only = process.env.BENCH_ONLY;
    const chosen = TIMELINES
      ? timelineRoutes(base).filter((r) => !only || r.name.includes(only))
      : routes.filter((r) => !only || r.name.includes(only) || r.name.startsWith("registration"));
    for (const route of chosen) {
      const r = await measure(inspector, pid, processTree(server.process.pid!), route);
      console.error(`measured ${r.name}`);
      results.push(r);
    }

    const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
    console.log(
      `\nK requests per route, one after another; sampling every ${INTERVAL} µs asked; load average at the end ${load}\n`,
    );
    console.log(
      "| route | K | CPU ms p50 | mean | max | of which GC (mean) | workerd process CPU ms/req (incl. local D1) | all processes CPU ms/req | answer bytes | wall p50 ms | most self time |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|---|");
    for (const r of results) {
      const sorted = [...r.cpu].sort((a, b) => a - b);
      const mean = r.cpu.reduce((s, x) => s + x, 0) / r.cpu.length;
      console.log(
        `| ${r.name} | ${r.k} | ${percentile(sorted, 50).toFixed(2)} | ${mean.toFixed(2)} | ${sorted.at(-1)!.toFixed(2)} | ${r.gcMean.toFixed(2)} | ${r.processMean.toFixed(1)} | ${r.machineMean.toFixed(1)} | ${r.bytes} | ${r.wallP50.toFixed(1)} | ${r.top} |`,
      );
    }
    const byIterations = ITERATIONS.map((n) => results.find((r) => r.name.includes(n.toLocaleString("en"))));
    // (Not when BENCH_ONLY left the sign-in routes out.)
    if (byIterations.every(Boolean)) {
      const mean = (r: Measured) => r.cpu.reduce((s, x) => s + x, 0) / K_PASSWORD;
      const per10k =
        ((mean(byIterations.at(-1)!) - mean(byIterations[0]!)) / (ITERATIONS.at(-1)! - ITERATIONS[0]!)) * 10_000;
      console.log(
        `\nPBKDF2-SHA256: ${per10k.toFixed(2)} ms of CPU per 10,000 iterations (slope between ${ITERATIONS[0]} and ${ITERATIONS.at(-1)} iterations); node:crypto here: ${nodePer10k.toFixed(2)} ms`,
      );
    }
  } finally {
    inspector?.close();
    server.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
