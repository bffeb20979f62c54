/**
 * What every benchmark shares: a free port, its own `wrangler dev` (own local state), proof that the server it
 * measures is the one it started (a run marker served as the instance description), load loops and percentiles,
 * and the CPU time of the server's processes.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer as netServer } from "node:net";

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = netServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** `wrangler <args> --persist-to <persist>`, output hidden but errors shown. */
export function wrangler(persist: string, args: string[]) {
  execFileSync("npx", ["wrangler", ...args, "--persist-to", persist], {
    stdio: ["ignore", "ignore", "inherit"],
    maxBuffer: 1 << 26,
  });
}

export interface Server {
  base: string;
  port: number;
  process: ChildProcess;
  stop: () => void;
}

/**
 * Starts `wrangler dev` on a free port with its own state and waits until it answers with this run's marker:
 * a server already listening there (or anything else) is refused, never measured.
 */
export async function startServer(
  persist: string,
  opts: {
    vars?: Record<string, string> | ((port: number) => Record<string, string>);
    inspectorPort?: number;
    log?: boolean;
    /** More `wrangler dev` arguments (`--test-scheduled`, say). */
    args?: string[];
  } = {},
): Promise<Server> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const marker = `bench-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  // Vars may name the port (a `DOMAIN` of 127.0.0.1:<port>, for benches where other servers call back).
  const vars = { ...(typeof opts.vars === "function" ? opts.vars(port) : opts.vars), INSTANCE_DESCRIPTION: marker };
  const args = ["wrangler", "dev", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", persist];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  args.push("--inspector-port", String(opts.inspectorPort ?? (await freePort())), ...(opts.args ?? []));
  const child = spawn("npx", args, {
    stdio: ["ignore", opts.log || process.env.BENCH_SERVER_LOG ? "inherit" : "ignore", "inherit"],
    detached: true,
  });
  const stop = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  };
  // A run stopped by Ctrl-C or a time limit stops its server too.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      stop();
      process.exit(130);
    });
  }
  process.once("exit", stop);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ok = await fetch(`${base}/api/v1/instance`)
      .then((r) => r.json() as Promise<{ description?: string }>)
      .then(
        (j) => j.description === marker,
        () => false,
      );
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      stop();
      throw new Error("wrangler dev did not start (or another server answers on its port): nothing measured");
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { base, port, process: child, stop };
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export interface LoadResult {
  name: string;
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
}

/** `concurrency` loops sending `request(n)` for `seconds`; a non-2xx answer or a failed fetch is an error. */
export async function load(
  name: string,
  seconds: number,
  concurrency: number,
  request: (n: number) => Promise<Response>,
): Promise<LoadResult> {
  const deadline = Date.now() + seconds * 1000;
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const t = performance.now();
        const res = await request(n++).catch(() => null);
        if (!res || !res.ok) errors++;
        await res?.arrayBuffer().catch(() => null);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** A 26-character id of digits: valid id characters that sort by value. */
export const benchId = (n: number) => String(n).padStart(26, "0");

/** The server's process and all its descendants (wrangler's node, the workerd processes). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

const CLOCK_TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));
/** User + system CPU time of a process so far, ms. */
export function processCpu(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return 0; // exited meanwhile
  }
  const fields = stat.split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
}
