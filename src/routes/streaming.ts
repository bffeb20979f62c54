/**
 * Streaming: WebSocket at `/api/v1/streaming` (the stream in `?stream=`, or none: Pleroma-FE and masto.js open
 * it bare and subscribe by message) and server-sent events at `/api/v1/streaming/<stream path>`. The Worker
 * authenticates the request and checks the stream before any upgrade (bad token 401, unknown stream 404,
 * missing tag or list 400), then hands the connection to its Durable Object: the user's `UserStream`, or for
 * anonymous listeners the stream's `TopicStream` (a socket's own one when it names no stream).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { ApiError } from "../lib/errors";
import { bearer, settleToken } from "../http/auth";
import { boolParam, optionalString } from "../http/params";
import { route, type Ctx } from "../http/route";
import {
  CONNECTION_HEADER,
  encodeConnection,
  socketObject,
  topicObject,
  userObject,
  type ConnectionInfo,
} from "../objects/streams";
import {
  ANONYMOUS,
  isRefusal,
  resolveStream,
  streamObject,
  type Listener,
  type Subscription,
} from "../services/streams";
import { findToken } from "../services/tokens";

const StreamParams = z.object({
  stream: optionalString(),
  tag: optionalString(),
  list: optionalString(),
  instance: optionalString(),
  /** Mastodon's event-stream form of the media streams: `/public?only_media=true`. */
  only_media: boolParam().optional(),
  /** Read with the other credentials (`bearer`); declared for the API description. */
  access_token: optionalString(),
});
type StreamParams = z.output<typeof StreamParams>;

/** Event-stream paths, as stream names (`/public/local` is `public:local`). */
const SSE_PATHS = [
  "user",
  "user/notification",
  "public",
  "public/local",
  "public/remote",
  "hashtag",
  "hashtag/local",
  "list",
  "direct",
];

/** The first protocol a WebSocket client offers: masto.js puts the token there. */
const offeredProtocol = (c: Ctx) => c.req.header("sec-websocket-protocol")?.split(",")[0]?.trim() || undefined;

/**
 * The listener behind the request's token (header, query, the WebSocket protocol, or the session cookie, in
 * that order: a token the client names wins over the cookie its browser sends anyway); anonymous without.
 * A stale cookie is no token: the browser sends it unasked, and Pleroma-FE signs in by message afterwards.
 */
async function listener(c: Ctx): Promise<Listener> {
  const named = c.req.header("authorization") || c.req.query("access_token") ? bearer(c) : offeredProtocol(c);
  const token = named ?? bearer(c);
  if (!token) return ANONYMOUS;
  const found = await findToken(db(c.env), token);
  if (!found && !named) return ANONYMOUS;
  if (!found) throw new ApiError(401, "Invalid access token");
  const auth = settleToken(c, found)!;
  // An app-only token listens as nobody in particular.
  return auth.account ? { accountId: auth.account.id, tokenId: auth.tokenId ?? "", scopes: auth.scopes } : ANONYMOUS;
}

async function open(c: Ctx, p: StreamParams, name: string | undefined): Promise<Response> {
  const websocket = c.req.header("upgrade")?.toLowerCase() === "websocket";
  const who = await listener(c);
  if (!websocket && !name) throw new ApiError(400, "Unknown stream type");
  // A WebSocket without a stream opens with no subscription; its messages subscribe it.
  let sub: Subscription | undefined;
  if (name || !websocket) {
    const resolved = await resolveStream(db(c.env), who, name, p);
    if (isRefusal(resolved)) throw new ApiError(resolved.status, resolved.message);
    sub = resolved;
  }
  const object = who.accountId ? userObject(who.accountId) : sub ? topicObject(sub) : socketObject();
  const info: ConnectionInfo = { object, listener: who, subscriptions: sub ? [sub] : [], protocol: offeredProtocol(c) };
  const headers = new Headers({ [CONNECTION_HEADER]: encodeConnection(info) });
  if (websocket) headers.set("upgrade", "websocket");
  const res = await streamObject(c.env, object).fetch(new Request(c.req.url, { headers, signal: c.req.raw.signal }));
  if (!res.webSocket) return res;
  // Declines permessage-deflate, which workerd otherwise accepts from every client offering it (browsers do): a
  // zlib context per socket and a compression per frame per listener doubled fan-out latency and memory. The
  // outermost Worker's 101 decides, from its own incoming request unless the 101 names an extension: a value that
  // is not permessage-deflate declines it (kj negotiates the header itself and never sends this one; "" counts as
  // absent). The `no_web_socket_compression` flag would do it deployed, but not under wrangler dev, whose own
  // workers in front negotiate again.
  const out = new Headers(res.headers);
  out.set("Sec-WebSocket-Extensions", "none");
  return new Response(null, { status: 101, webSocket: res.webSocket, headers: out });
}

export function registerStreamingRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/streaming/health",
    summary: "Whether streaming works",
    tags: ["Streaming"],
    auth: "none",
    produces: "text/plain",
    handler: (c) => c.text("OK"),
  });

  route(app, {
    method: "get",
    path: "/api/v1/streaming",
    summary:
      "WebSocket streaming (stream, tag, list, instance, or none and subscribe by message; token by access_token, Authorization, Sec-WebSocket-Protocol or pleroma:authenticate)",
    tags: ["Streaming"],
    auth: "none",
    params: StreamParams,
    produces: "text/event-stream",
    handler: (c, p) => open(c, p, p.stream),
  });

  for (const path of SSE_PATHS) {
    route(app, {
      method: "get",
      path: `/api/v1/streaming/${path}`,
      summary: `Server-sent events of the ${path.replace("/", ":")} stream`,
      tags: ["Streaming"],
      auth: "none",
      params: StreamParams,
      produces: "text/event-stream",
      handler: (c, p) => {
        const name = path.replace("/", ":");
        return open(c, p, p.only_media && name.startsWith("public") ? `${name}:media` : name);
      },
    });
  }
}
