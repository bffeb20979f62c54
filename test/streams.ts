/**
 * Streaming clients for tests: real WebSockets and event streams opened through `SELF.fetch`, with helpers to
 * wait for a frame and to prove one never came (every delivery under way finished, then a ping/pong round trip
 * on the socket, which arrives after anything sent before it).
 */
import { SELF } from "cloudflare:test";
import { expect, vi } from "vitest";
import { eventSinks, type EventSink } from "../src/services/events";
import { BASE } from "./helpers";

export interface WsFrame {
  event: string;
  payload?: string;
  stream: string[];
}

/** Deliveries under way (every sink call is counted, including those started after the response). */
const pending = new Set<Promise<unknown>>();
const tracked = new WeakSet<EventSink>();
function track() {
  eventSinks.forEach((sink, i) => {
    if (tracked.has(sink)) return;
    const wrapped: EventSink = (events, env, base) => {
      const p = Promise.resolve(sink(events, env, base));
      pending.add(p);
      p.finally(() => pending.delete(p)).catch(() => undefined);
      return p;
    };
    tracked.add(wrapped);
    eventSinks[i] = wrapped;
  });
}

/** Waits until no delivery is under way (including ones that start meanwhile). */
export async function settled(): Promise<void> {
  // Notification deliveries start after a claim query: give them the chance to begin.
  for (let quiet = 0; quiet < 3;) {
    if (pending.size) {
      quiet = 0;
      await Promise.allSettled([...pending]);
    } else {
      quiet++;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

export interface Socket {
  ws: WebSocket;
  response: Response;
  frames: WsFrame[];
  /** Text frames that were not JSON (`pong`). */
  texts: string[];
  /** The next frame (after those already taken) matching `match`. */
  next(match?: (f: WsFrame) => boolean, timeout?: number): Promise<WsFrame>;
  /** Everything delivered so far has arrived: afterwards, `frames` is complete. */
  fence(): Promise<void>;
  send(message: unknown): void;
  close(): Promise<void>;
}

/** Opens a WebSocket at `/api/v1/streaming?<query>` (bare `/api/v1/streaming` for ""); expects the upgrade. */
export async function openSocket(query: string, headers: Record<string, string> = {}): Promise<Socket> {
  track();
  const response = await SELF.fetch(`${BASE}/api/v1/streaming${query ? `?${query}` : ""}`, {
    headers: { Upgrade: "websocket", ...headers },
  });
  expect(response.status, await (response.status === 101 ? "" : response.clone().text())).toBe(101);
  const ws = response.webSocket!;
  ws.accept();
  const frames: WsFrame[] = [];
  const texts: string[] = [];
  ws.addEventListener("message", (e) => {
    const data = typeof e.data === "string" ? e.data : "";
    try {
      frames.push(JSON.parse(data));
    } catch {
      texts.push(data);
    }
  });
  let taken = 0;
  const socket: Socket = {
    ws,
    response,
    frames,
    texts,
    // Waits for the frame itself; the bound is only there to end a test whose frame never comes, so it is wide:
    // a busy machine (two test files at once, 2 cores) may take seconds to deliver.
    async next(match = () => true, timeout = 20_000) {
      let found: WsFrame | undefined;
      await vi.waitUntil(
        () => {
          const i = frames.findIndex((f, j) => j >= taken && match(f));
          if (i < 0) return false;
          found = frames[i];
          taken = i + 1;
          return true;
        },
        { timeout, interval: 10 },
      );
      return found!;
    },
    async fence() {
      await settled();
      const pongs = texts.filter((t) => t === "pong").length;
      ws.send("ping");
      await vi.waitUntil(() => texts.filter((t) => t === "pong").length > pongs, { timeout: 20_000, interval: 5 });
    },
    send(message) {
      ws.send(typeof message === "string" ? message : JSON.stringify(message));
    },
    async close() {
      ws.close(1000, "done");
      await settled();
    },
  };
  return socket;
}

/**
 * Fails unless every frame parses as the clients parse it: masto.js 8 throws on a frame with an `error` field and
 * reads `stream` (an array) of every frame; it and Pleroma-FE parse every payload but `delete`'s as JSON.
 */
export function expectClientsParse(frames: WsFrame[]): void {
  for (const f of frames) {
    expect(f, JSON.stringify(f)).not.toHaveProperty("error");
    expect(Array.isArray(f.stream), JSON.stringify(f)).toBe(true);
    expect(typeof f.event).toBe("string");
    if (f.event === "delete") expect(typeof f.payload).toBe("string");
    else if (f.payload !== undefined) expect(() => JSON.parse(f.payload!), JSON.stringify(f)).not.toThrow();
  }
}

/** `frames` of an event, their payloads parsed. */
export const payloads = (frames: WsFrame[], event: string) =>
  frames.filter((f) => f.event === event).map((f) => (f.payload === undefined ? undefined : JSON.parse(f.payload)));

export interface EventStream {
  response: Response;
  /** Everything read so far. */
  text(): string;
  /** Reads until the text read so far satisfies `until`. */
  read(until: (text: string) => boolean, timeout?: number): Promise<string>;
  close(): Promise<void>;
}

/** Opens a server-sent event stream at `path`; expects 200 and the event-stream type. */
export async function openEventStream(path: string, token?: string): Promise<EventStream> {
  track();
  const response = await SELF.fetch(`${BASE}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  expect(response.status, response.status === 200 ? "" : await response.clone().text()).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let reading: Promise<void> | null = null;
  const pump = () =>
    (reading ??= reader.read().then(({ value, done }) => {
      reading = null;
      if (!done && value) buffer += decoder.decode(value, { stream: true });
    }));
  return {
    response,
    text: () => buffer,
    async read(until, timeout = 20_000) {
      const deadline = Date.now() + timeout;
      while (!until(buffer)) {
        if (Date.now() > deadline) throw new Error(`event stream: condition not met; read so far:\n${buffer}`);
        await Promise.race([pump(), new Promise((r) => setTimeout(r, 50))]);
      }
      return buffer;
    },
    async close() {
      await reader.cancel().catch(() => undefined);
      await settled();
    },
  };
}
