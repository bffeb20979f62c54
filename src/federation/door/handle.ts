/**
 * The Worker's door to federation: which requests Fedify answers (discovery, actors and their documents, the
 * inboxes), and what an inbox POST must pass before Fedify reads it (the body guard, the federation policies,
 * the signature check of door/authenticate.ts). Anything else, and anything Fedify does not answer (or answers
 * only for ActivityPub clients, when a browser asks), falls through to the hono app.
 */
import { refusedAtDoor, throttledResponse } from "../../services/inbound-limits";
import { db } from "../../db/client";
import { config, type Env } from "../../env";
import { wantsActivityJson } from "../../http/negotiate";
import { runEffects } from "../../effects";
import { federationRejected } from "../../services/federation-policies";
import { refreshSettings } from "../../services/instance-settings";
import type { FederationData } from "../data";
import { federationFor } from "../federation";
import { hostMeta } from "../documents/host-meta";
import { servedWithFullPublic } from "../documents/public-audience";
import { authLoaders } from "./auth-loaders";
import { authenticateInbound } from "./authenticate";
import { readInboxPost } from "./inbox-guard";
import { hostSpecs, RFC9421 } from "./signature-specs";

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Paths only federation answers (or answers first): discovery, and the inboxes. */
function isFederationPath(req: Request, url: URL): boolean {
  const p = url.pathname.replace(/\/+$/, "");
  if (p === "/.well-known/webfinger" || p === "/.well-known/host-meta" || p === "/.well-known/host-meta.json")
    return true;
  if (p === "/inbox" || /^\/users\/[^/]+\/inbox$/.test(p)) return req.method === "POST";
  if (isDocumentPath(url)) return wantsActivityJson(req.headers.get("accept"));
  return false;
}

/**
 * Ids are permanent, so without DOMAIN the instance federates only on a local host (development): anywhere
 * else federation answers 503 telling the admin to set it, and the client API keeps working.
 */
function federationRefused(env: Env, url: URL): boolean {
  return !config(env).domain && !LOCAL_HOSTS.has(url.hostname) && !url.hostname.endsWith(".localhost");
}

/** Actors, their collections and objects: ActivityStreams to servers, HTML pages (or 404) to people. */
const isDocumentPath = (url: URL) =>
  /^\/(objects|activities)\/[^/]+\/?$/.test(url.pathname) ||
  /^\/users\/[^/]+(\/followers|\/following|\/outbox|\/collections\/featured|\/(quote|like|reply|announce)_authorizations\/[^/]+)?\/?$/.test(
    url.pathname,
  );

function jsonError(status: number, error: string): Response {
  return new Response(JSON.stringify({ error }), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8" },
  });
}

/** An incoming activity's `actor` (a string or an object with an id). */
function actorId(body: unknown): string | null {
  const actor = (body as { actor?: unknown } | null)?.actor;
  return typeof actor === "string"
    ? actor
    : typeof (actor as { id?: unknown } | null)?.id === "string"
      ? (actor as { id: string }).id
      : null;
}

/** The host of an incoming activity's `actor`. */
function actorHost(body: unknown): string | null {
  const id = actorId(body);
  try {
    return id ? new URL(id).hostname : null;
  } catch {
    return null;
  }
}

const isInboxPath = (url: URL) => /^\/(users\/[^/]+\/)?inbox\/?$/.test(url.pathname);

/** The Worker's fetch: federation first, then the hono app. */
export async function handleFederated(
  req: Request,
  env: Env,
  ctx: ExecutionContext,
  app: (req: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>,
): Promise<Response> {
  const url = new URL(req.url);
  const redirect = noticeRedirect(req, url);
  if (redirect) return redirect;
  // Most requests (the client API) never build the federation object.
  if (!mayBeFederation(url.pathname)) return app(req, env, ctx);
  await refreshSettings(env);
  if (federationRefused(env, url)) {
    if (!isFederationPath(req, url)) return app(req, env, ctx);
    return jsonError(
      503,
      "Federation is disabled: set DOMAIN to this instance's public host name (see docs/configuration.md)",
    );
  }
  const meta = hostMeta(req, url, config(env).domain ? `https://${config(env).domain}` : url.origin);
  if (meta) return meta;
  const federation = await federationFor(env);
  const fallback = (r: Request) => Promise.resolve(app(r, env, ctx));
  // An actor, collection or status Fedify does not serve (unknown; not public, not local, gone) is a 404 to
  // servers, not the web app's 406; browsers still get the pages.
  const notFound = (r: Request) =>
    isDocumentPath(url) && wantsActivityJson(r.headers.get("accept"))
      ? Promise.resolve(jsonError(404, "Record not found"))
      : fallback(r);
  const data: FederationData = { env, d: db(env), exec: ctx };
  // Fedify verifies no signature itself (`skipSignatureVerification`): every request it could take for an inbox
  // delivery must be authenticated here. So an inbox is reached only by POST (Fedify's shared inbox would take any
  // method), and a POST anywhere else goes to the app, never to Fedify.
  if (req.method !== "POST" && /\/inbox\/?$/i.test(url.pathname)) return app(req, env, ctx);
  if (req.method === "POST") {
    if (!isInboxPath(url)) return app(req, env, ctx);
    const passed = await throughInboxDoor(req, env, federation, data);
    if (passed instanceof Response) return passed;
    req = passed;
  }
  const fetched = await federation.fetch(req, { contextData: data, onNotFound: notFound, onNotAcceptable: fallback });
  const res = await answerOf(req, fetched, data);
  // An accepted activity may have written an answer to the outbox (an Accept, a Reject): the door sees it and
  // sends it now rather than at the next sweep, after the response.
  if (req.method === "POST" && res.status < 300 && isInboxPath(url)) runEffects(env, ctx, url.origin, {});
  return res;
}

/**
 * A status's page URL asked for as ActivityStreams (a server resolving a pasted link) leads to the object, as
 * Pleroma's `/notice/:id` does; people still get the page.
 */
function noticeRedirect(req: Request, url: URL): Response | null {
  const notice = /^\/notice\/([^/]+)\/?$/.exec(url.pathname);
  if (!notice || req.method !== "GET" || !wantsActivityJson(req.headers.get("accept"))) return null;
  return new Response(null, {
    status: 302,
    headers: { Location: new URL(`/objects/${encodeURIComponent(notice[1]!)}`, url).href, Vary: "Accept" },
  });
}

/** Whether a path may be federation's (the rest goes straight to the app, the Federation never built). */
function mayBeFederation(p: string): boolean {
  return (
    p.startsWith("/users/") ||
    p.startsWith("/objects/") ||
    p.startsWith("/activities/") ||
    p.startsWith("/.well-known/webfinger") ||
    p.startsWith("/.well-known/host-meta") ||
    /^\/inbox\/?$/.test(p)
  );
}

/**
 * What an inbox POST must pass before Fedify reads it, in this order: the body guard, the federation policies,
 * the inbound limits, the signatures. Answers the refusal, or the request Fedify reads (the authenticated body).
 */
async function throughInboxDoor(
  req: Request,
  env: Env,
  federation: Awaited<ReturnType<typeof federationFor>>,
  data: FederationData,
): Promise<Response | Request> {
  // Read once, byte for byte (the signature's digest covers these bytes); too large, not JSON, without an
  // actor or nested too deep is refused first (federation/door/inbox-guard.ts).
  const read = await readInboxPost(req);
  if (read instanceof Response) return read;
  const { bytes, body } = read;
  // A rejected domain (federation policy `reject`, or not on the `accept` list) is dropped unread, its key not
  // even fetched; answered as accepted, as Pleroma does, so its server does not retry.
  const host = actorHost(body);
  if (host && federationRejected(env, host)) return new Response(null, { status: 202 });
  // A sender over its inbound limits is answered 429 until its window ends, unread (services/inbound-limits.ts).
  const wait = refusedAtDoor(actorId(body) ?? "");
  if (wait !== null) return throttledResponse(wait);
  const fctx = federation.createContext(req, data);
  const who = await authenticateInbound(
    new Request(req.url, { method: req.method, headers: req.headers, body: bytes }),
    body,
    authLoaders(env, data.d, fctx.contextLoader),
  );
  if (!who.ok) {
    if (who.status !== 202) return jsonError(who.status, who.error);
    console.log(`inbox: dropped (${who.error})`);
    return new Response(null, { status: 202 });
  }
  if (who.relayedBy) data.relayedBy = who.relayedBy;
  // The actor's own RFC 9421 signature verified: its server speaks RFC 9421, so Starling signs to it that way
  // from now on (door/signature-specs.ts; written only when that changes what is stored).
  else if (req.headers.has("signature-input"))
    await Promise.resolve(hostSpecs(data.d).rememberSpec(new URL(actorId(body)!).origin, RFC9421)).catch(() => {});
  // What Fedify reads: the authenticated body (its signatures checked and removed), so its length and digest are new.
  const headers = new Headers(req.headers);
  for (const h of ["content-length", "digest", "content-digest"]) headers.delete(h);
  return new Request(req.url, { method: req.method, headers, body: JSON.stringify(who.body) });
}

/**
 * Fedify's answer as sent: documents with the full Public id, an activity a listener refused over its sender's
 * limits answered 429, a signed GET refused for who signed it 403 (not 401).
 */
async function answerOf(req: Request, res: Response, data: FederationData): Promise<Response> {
  if (req.method === "GET") res = await servedWithFullPublic(res);
  if (data.retryAfter !== undefined && res.status < 300) {
    await res.body?.cancel();
    res = throttledResponse(data.retryAfter);
  }
  if (data.refused && res.status === 401) {
    await res.body?.cancel();
    res = jsonError(403, "Forbidden");
  }
  return res;
}
