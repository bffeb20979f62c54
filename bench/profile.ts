/**
 * CPU time of the user Worker from V8's sampling profiler, reached through `wrangler dev --inspector-port`
 * (Chrome DevTools protocol over a WebSocket).
 *
 * What the samples mean in workerd (checked in bench/README.md): V8 records a sample only while the isolate is
 * entered, i.e. while the Worker runs JavaScript or a native call made from it (crypto.subtle included). While
 * a request waits on I/O (D1, a subrequest) the isolate is released and nothing is recorded: the next sample's
 * time delta spans the whole wait. So busy time is counted as samples × the sampler's period, not as the sum of
 * deltas; `(idle)` samples are left out, `(garbage collector)` and `(program)` (V8 outside JS) count.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One DevTools session. wrangler's proxy takes one client at a time. */
export class Inspector {
  private next = 0;
  private pending = new Map<number, (m: { result?: unknown; error?: unknown }) => void>();

  private constructor(private ws: WebSocket) {
    // workerd answers some Profiler methods by echoing the request (no `result`): any message with our id settles it.
    ws.on("message", (data) => {
      const m = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: unknown };
      if (m.id === undefined) return;
      this.pending.get(m.id)?.(m);
      this.pending.delete(m.id);
    });
  }

  static async connect(port: number): Promise<Inspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl: string }[];
    if (!targets[0]) throw new Error(`no inspector target on port ${port}`);
    const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
      ws.once("close", (code, reason) => reject(new Error(`inspector closed: ${code} ${reason}`)));
    });
    return new Inspector(ws);
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer`)), 30_000);
      this.pending.set(id, (m) => {
        clearTimeout(timer);
        if (m.error) reject(new Error(`${method}: ${JSON.stringify(m.error)}`));
        else resolve(m.result as T);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Profiles `run` alone (one request, for per-request figures). */
  async profile(run: () => Promise<void>): Promise<CpuProfile> {
    await this.send("Profiler.start");
    const failed = await run().then(
      () => null,
      (e: unknown) => ({ e }),
    );
    const { profile } = await this.send<{ profile: CpuProfile }>("Profiler.stop");
    if (failed) throw failed.e;
    return profile;
  }

  close() {
    this.ws.close();
  }
}

const IDLE = "(idle)";
const GC = "(garbage collector)";

/**
 * The sampler's actual period: the median delta between consecutive samples inside busy stretches (deltas up to
 * `3 × interval`; longer ones span a wait). On a loaded machine it is longer than the interval asked for.
 */
export function samplingPeriod(profiles: CpuProfile[], interval: number): number {
  const short = profiles
    .flatMap((p) => p.timeDeltas.slice(1).filter((d) => d > 0 && d <= 3 * interval))
    .sort((a, b) => a - b);
  return short[Math.floor(short.length / 2)] ?? interval;
}

/** Where workerd's module names (`index.js`) are found: wrangler's bundle directory of the running server. */
let bundleDir = ".";
export const readBundlesFrom = (dir: string) => (bundleDir = dir);

/** Per bundle file: the line where each module starts (esbuild marks them with a `// path` comment line). */
const bundles = new Map<string, { line: number; module: string }[]>();
function moduleAt(url: string, line: number): string {
  let starts = bundles.get(url);
  if (!starts) {
    starts = [];
    try {
      const lines = readFileSync(url.startsWith("file:") ? fileURLToPath(url) : resolve(bundleDir, url), "utf8").split(
        "\n",
      );
      lines.forEach((text, i) => {
        const m = /^\/\/ (\S+\.[cm]?[jt]s)$/.exec(text);
        if (m) starts!.push({ line: i, module: m[1]!.replace(/^.*node_modules\//, "") });
      });
    } catch {
      // the bundle is gone (wrangler removes it on exit): keep the line number
    }
    bundles.set(url, starts);
  }
  let found = `${url.split("/").pop()}:${line + 1}`;
  for (const s of starts) if (s.line <= line) found = s.module;
  return found;
}

/** `function (module)` for bundled code, the bare name for native code and V8's own nodes. */
const frameName = (f: CallFrame) =>
  f.url ? `${f.functionName || "(anonymous)"} (${moduleAt(f.url, f.lineNumber)})` : f.functionName || "(native)";

export interface Busy {
  /** Busy time, µs. */
  busy: number;
  /** Of which garbage collection, µs. */
  gc: number;
  /** Self time per function, µs. */
  self: Map<string, number>;
}

/** Busy time of one profile, counting each non-idle sample as one `period` (µs). */
export function busyTime(profile: CpuProfile, period: number): Busy {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const out: Busy = { busy: 0, gc: 0, self: new Map() };
  for (const id of profile.samples) {
    const f = frames.get(id);
    if (!f || f.functionName === IDLE) continue;
    out.busy += period;
    if (f.functionName === GC) out.gc += period;
    const name = frameName(f);
    out.self.set(name, (out.self.get(name) ?? 0) + period);
  }
  return out;
}
