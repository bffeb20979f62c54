/**
 * The streaming Durable Objects. A `UserStream` (one of `USER_STREAM_SHARDS`, chosen by the account id) holds
 * every connection made with the tokens of its users: a post to a thousand followers calls a few dozen objects,
 * not a thousand (each call costs more than the sends it makes), and frames name the token they are for; a
 * `TopicStream` (one per public or hashtag stream, named by it) holds the anonymous connections opened on that
 * stream, and an anonymous WebSocket opened without a stream gets a `TopicStream` of
 * its own (named by a random id), so no one object takes every such socket. They all work the same way:
 * - WebSockets are accepted with the Hibernation API: an idle socket costs nothing, its subscriptions live in
 *   its attachment, and a text `ping` is answered `pong` by the runtime without waking the object.
 * - Server-sent event streams cannot hibernate; the object keeps them in memory and an alarm writes the
 *   `:thump` heartbeat every 15 seconds while any is open.
 * - Every change of subscriptions rewrites the object's rows in `stream_presence`, which publishing reads to
 *   choose the objects an event goes to (src/services/stream-delivery.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { StreamMethods } from "./contracts";
import { db } from "../db/client";
import { findToken } from "../services/tokens";
import {
  isRefusal,
  presenceStatements,
  resolveStream,
  sameSubscription,
  streamObject,
  scopesAllow,
  streamField,
  type Listener,
  type PresenceRow,
  type Subscription,
} from "../services/streams";

const HEARTBEAT_MS = 15_000;
/** Header carrying the connection the Worker authorised (objects are reachable only through the Worker). */
export const CONNECTION_HEADER = "x-starling-connection";

// Header values must be ASCII (a tag may be `café` or `日本`): the JSON travels percent-encoded.
export const encodeConnection = (info: ConnectionInfo) => encodeURIComponent(JSON.stringify(info));
const decodeConnection = (header: string | null): ConnectionInfo | null => {
  try {
    return header ? (JSON.parse(decodeURIComponent(header)) as ConnectionInfo) : null;
  } catch {
    return null;
  }
};

/** What the Worker hands an object with a new connection. */
export interface ConnectionInfo {
  object: string;
  listener: Listener;
  subscriptions: Subscription[];
  /** The first `Sec-WebSocket-Protocol` the client offered (its token), echoed on the upgrade as the one chosen. */
  protocol?: string;
}

interface Connection extends Listener {
  object: string;
  subscriptions: Subscription[];
}

/** One event for the connections of one listener (token) subscribed to one stream. */
export interface Frame extends Subscription {
  tokenId: string;
  event: string;
  /** The payload as sent: a JSON document as a string, a status id, or nothing (`filters_changed`). */
  payload?: string;
}

const encoder = new TextEncoder();

const webSocketFrame = (f: Frame) => JSON.stringify({ event: f.event, payload: f.payload, stream: streamField(f) });
// Mastodon writes `data: undefined` for an event without payload. Every SSE payload is JSON (the contract): a
// `delete`'s bare id is JSON-encoded too, so a client that parses every data line reads it (Mastodon's numeric
// ids parse bare; Starling's do not). Over WebSocket the id stays bare, as Mastodon and Pleroma send it.
const sseFrame = (f: Frame) =>
  `event: ${f.event}\ndata: ${f.event === "delete" && f.payload !== undefined ? JSON.stringify(f.payload) : (f.payload ?? "undefined")}\n\n`;
// `stream: []`: masto.js reads `stream` of every frame (a frame without one ends its subscription) and an empty
// one matches none of its subscriptions; Pleroma-FE parses the payload as JSON.
const respond = (type: string, result: "success" | "ignored" | "error", error?: string) =>
  JSON.stringify({
    event: "pleroma:respond",
    payload: JSON.stringify({ result, type, ...(error ? { error } : {}) }),
    stream: [],
  });

/** Sends an answer unless the socket has closed meanwhile (then there is nobody to tell: not an error). */
function answer(ws: WebSocket, text: string): void {
  if (ws.readyState !== WebSocket.OPEN) return;
  try {
    ws.send(text);
  } catch {
    // Closed between the check and the send.
  }
}

const wants = (c: Connection, f: Frame) =>
  c.tokenId === f.tokenId && c.subscriptions.some((s) => sameSubscription(s, f));

class StreamObject extends DurableObject<Env> implements StreamMethods {
  /** Open event streams: in memory, since they keep the object awake anyway. */
  private readonly sse = new Map<WritableStreamDefaultWriter<Uint8Array>, Connection>();
  /** Per event stream: writes the client has not read yet, and since when it has read nothing. */
  private readonly unread = new Map<WritableStreamDefaultWriter<Uint8Array>, { count: number; since: number }>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  override async fetch(request: Request): Promise<Response> {
    const info = decodeConnection(request.headers.get(CONNECTION_HEADER));
    if (!info) return new Response("Not found", { status: 404 });
    const connection: Connection = { ...info.listener, object: info.object, subscriptions: info.subscriptions };
    if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
      const { 0: client, 1: server } = new WebSocketPair();
      this.ctx.acceptWebSocket(server);
      server.serializeAttachment(connection);
      // Presence is written before the client sees the socket open: whatever it does next reaches it.
      await this.syncPresence(connection.object);
      return new Response(null, {
        status: 101,
        webSocket: client,
        headers: info.protocol ? { "Sec-WebSocket-Protocol": info.protocol } : {},
      });
    }
    const { readable, writable } = new IdentityTransformStream();
    const writer = writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>;
    this.sse.set(writer, connection);
    // The client going away aborts the request (`enable_request_signal`); a client that stopped reading is
    // caught by the heartbeat.
    request.signal.addEventListener("abort", () => this.dropStream(writer));
    writer.closed.catch(() => this.dropStream(writer));
    this.write(writer, ":)\n");
    await this.syncPresence(connection.object);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
    return new Response(readable, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  }

  /** Sends frames to the connections that listen for them. */
  async deliver(object: string, frames: Frame[]): Promise<void> {
    const heard = new Set<Frame>();
    // Encoded once, however many sockets receive it.
    const encoded = new Map<Frame, string>();
    const text = (f: Frame) => encoded.get(f) ?? encoded.set(f, webSocketFrame(f)).get(f)!;
    for (const ws of this.ctx.getWebSockets()) {
      const c = ws.deserializeAttachment() as Connection | null;
      if (!c) continue;
      for (const f of frames) {
        if (!wants(c, f)) continue;
        try {
          ws.send(text(f));
          heard.add(f);
        } catch {
          // Closing: its close handler updates presence.
        }
      }
    }
    for (const [writer, c] of this.sse) {
      const wanted = frames.filter((f) => wants(c, f));
      if (wanted.length === 0) continue;
      wanted.forEach((f) => heard.add(f));
      this.write(writer, wanted.map(sseFrame).join(""));
    }
    // Someone was reported listening who is not here (the object restarted without closing): correct the table.
    if (heard.size < frames.length) await this.syncPresence(object);
  }

  /**
   * Delivers the first batch here and passes the others on, one call each: a post reaching more objects than one
   * invocation may call (the Workers Free plan allows 50 subrequests) fans out through relays.
   */
  async relay(batches: { object: string; frames: Frame[] }[]): Promise<void> {
    const [mine, ...others] = batches;
    await Promise.all([
      this.deliver(mine.object, mine.frames),
      ...others.map((b) =>
        streamObject(this.env, b.object)
          .deliver(b.object, b.frames)
          .catch((e: unknown) => console.error("stream relay", b.object, e)),
      ),
    ]);
  }

  /**
   * Rewrites this object's presence from the connections it really holds (the collector asks objects whose
   * rows were not written for long: an object that died with its sockets leaves rows nobody listens on).
   */
  async refreshPresence(object: string): Promise<void> {
    await this.syncPresence(object);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // Answered after awaits: the client may have closed meanwhile (unsubscribe, then close at once).
    if (typeof message !== "string") return;
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(message);
    } catch {
      return;
    }
    if (!msg || typeof msg !== "object") return;
    const c = ws.deserializeAttachment() as Connection;
    // A list id may come as a number.
    const text = (k: string) =>
      typeof msg[k] === "string" ? (msg[k] as string) : typeof msg[k] === "number" ? String(msg[k]) : undefined;
    const type = text("type");
    if (type === "subscribe" || type === "unsubscribe") {
      const sub = await resolveStream(db(this.env), c, text("stream"), {
        tag: text("tag"),
        list: text("list"),
        instance: text("instance"),
      });
      if (isRefusal(sub)) return answer(ws, respond(type, "error", sub.error));
      const has = c.subscriptions.some((s) => sameSubscription(s, sub));
      if (type === "subscribe" ? has : !has) return answer(ws, respond(type, "ignored"));
      c.subscriptions =
        type === "subscribe" ? [...c.subscriptions, sub] : c.subscriptions.filter((s) => !sameSubscription(s, sub));
      ws.serializeAttachment(c);
      await this.syncPresence(c.object);
      return answer(ws, respond(type, "success"));
    }
    if (type === "pleroma:authenticate") {
      // An anonymous socket may sign in; its later subscriptions are checked against the token.
      const found = text("token") ? await findToken(db(this.env), text("token")!.trim()) : null;
      if (!found?.account || found.account.deactivated || !found.user?.confirmed || found.user.approvalPending)
        return answer(ws, respond(type, "error", "unauthorized"));
      // Signed in as someone else: refused, as Pleroma does. Signed in as the same account (a browser sends its
      // session cookie with the upgrade, then Pleroma-FE authenticates, and closes the socket on any error): the
      // socket takes the new token.
      if (c.accountId && c.accountId !== found.account.id)
        return answer(ws, respond(type, "error", "already_authenticated"));
      Object.assign(c, {
        accountId: found.account.id,
        tokenId: found.token.id,
        scopes: found.token.scopes.split(" "),
      } satisfies Listener);
      // Subscriptions made under the earlier credential keep only what the new token's scopes allow.
      c.subscriptions = c.subscriptions.filter((sub) => scopesAllow(c, sub));
      ws.serializeAttachment(c);
      await this.syncPresence(c.object);
      return answer(ws, respond(type, "success"));
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    const c = ws.deserializeAttachment() as Connection | null;
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {
      // Already closed.
    }
    if (c) await this.syncPresence(c.object, ws);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    const c = ws.deserializeAttachment() as Connection | null;
    if (c) await this.syncPresence(c.object, ws);
  }

  override async alarm(): Promise<void> {
    for (const writer of [...this.sse.keys()]) {
      const u = this.unread.get(writer);
      // Nothing read for a whole heartbeat period: the client is gone or stuck.
      if (u && u.count > 0 && Date.now() - u.since >= HEARTBEAT_MS) this.dropStream(writer);
      else this.write(writer, ":thump\n");
    }
    if (this.sse.size > 0) await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
  }

  /** Writes to an event stream without waiting: a client that does not read must not hold up the others. */
  private write(writer: WritableStreamDefaultWriter<Uint8Array>, text: string): void {
    const u = this.unread.get(writer) ?? { count: 0, since: Date.now() };
    if (u.count++ === 0) u.since = Date.now();
    this.unread.set(writer, u);
    writer.write(encoder.encode(text)).then(
      () => {
        u.count--;
        u.since = Date.now();
      },
      () => this.dropStream(writer),
    );
  }

  private dropStream(writer: WritableStreamDefaultWriter<Uint8Array>): void {
    const c = this.sse.get(writer);
    if (!c) return;
    this.sse.delete(writer);
    this.unread.delete(writer);
    writer.abort().catch(() => undefined);
    this.ctx.waitUntil(this.syncPresence(c.object));
  }

  private syncing: Promise<void> = Promise.resolve();

  /**
   * Rewrites the object's presence rows from its open connections (`closing` excluded). Writes run one after
   * another, each reading the connections when it starts, so the last one written is the latest state.
   */
  private syncPresence(object: string, closing?: WebSocket): Promise<void> {
    const run = this.syncing.then(() => this.writePresence(object, closing));
    this.syncing = run.catch(() => undefined);
    return run;
  }

  private async writePresence(object: string, closing?: WebSocket): Promise<void> {
    const open: Connection[] = [...this.sse.values()];
    for (const ws of this.ctx.getWebSockets()) {
      if (ws === closing || ws.readyState > WebSocket.OPEN) continue;
      const c = ws.deserializeAttachment() as Connection | null;
      if (c) open.push(c);
    }
    const rows: PresenceRow[] = open.flatMap((c) =>
      c.subscriptions.map((s) => ({ ...s, accountId: c.accountId, tokenId: c.tokenId })),
    );
    await db(this.env).$client.batch(presenceStatements(db(this.env), object, rows));
  }
}

/** A user's connections, whatever streams they listen to. */
export class UserStream extends StreamObject {}

/** Anonymous connections to one public or hashtag stream. */
export class TopicStream extends StreamObject {}

/** Signed-in connections are spread over this many `UserStream` objects. */
const USER_STREAM_SHARDS = 32;

/** The `UserStream` of an account's connections (FNV-1a of the id: stable across isolates and deployments). */
export function userObject(accountId: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) h = Math.imul(h ^ accountId.charCodeAt(i), 0x01000193);
  return `user:shard-${(h >>> 0) % USER_STREAM_SHARDS}`;
}
export const topicObject = (s: Subscription) => `topic:${streamField(s).join(":")}`;
/** An anonymous WebSocket opened without a stream: an object of its own (no stream name starts with `socket:`). */
export const socketObject = () => `topic:socket:${crypto.randomUUID()}`;
