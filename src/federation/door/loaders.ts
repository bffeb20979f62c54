/**
 * Fedify's document loaders, through Starling's SSRF guard (`lib/outbound.ts`): remote actors, objects and
 * keys, plain or signed (authorized fetch), and JSON-LD contexts (the common ones are preloaded and never
 * fetched; the others kept in memory). Fedify's own loaders use the global `fetch` with their own check; these replace them so that the
 * address policy, the development switch, the timeout and the size cap are Starling's, in one place.
 */
import { createActivityPubRequest, getRemoteDocument, kvCache, preloadedContexts } from "@fedify/fedify";
import type { DocumentLoader, GetUserAgentOptions, KvStore, RemoteDocument } from "@fedify/fedify";
import { db } from "../../db/client";
import type { Env } from "../../env";
import { allowPrivateAddress, outboundFetch, OutboundRefused } from "../../lib/outbound";
import { instanceSigner } from "./instance-actor";
import { hostSpecs, knock, type SpecMemory } from "./signature-specs";

/** A remote ActivityPub document: 10 s, 2 MB (Mastodon's own cap on fetched JSON is 1 MB). */
const LIMITS = { timeoutMs: 10_000, maxBytes: 2_000_000, maxRedirects: 3 } as const;
/** A remote JSON-LD context: real ones are a few kilobytes (Pleroma's litepub schema: 2 KB). */
export const CONTEXT_MAX_BYTES = 64_000;
/**
 * An actor or key document fetched to check a signature: Mastodon's are a few KB, Misskey's and Pleroma's with
 * their emoji and fields some tens of KB; a signature names any URL, so no more is read for it than that.
 */
export const ACTOR_MAX_BYTES = 256_000;
/** What each kind of document may weigh. */
const MAX_BYTES = { document: LIMITS.maxBytes, actor: ACTOR_MAX_BYTES, context: CONTEXT_MAX_BYTES } as const;
type Kind = keyof typeof MAX_BYTES;

function preloaded(url: string): RemoteDocument | null {
  return url in preloadedContexts ? { contextUrl: null, documentUrl: url, document: preloadedContexts[url] } : null;
}

/**
 * Whether a fetched document's `Content-Type` may be read as ActivityPub: `application/activity+json`, or
 * `application/ld+json` with or without a profile (Pleroma's and Akkoma's rule; Mastodon also wants the
 * ActivityStreams profile on the second). Anything else is refused: a server that lets its users upload JSON
 * (served as `application/json` or `text/plain` from its own origin) must not let them pass an actor or a post off
 * as the server's. An HTML page is let through to Fedify, which reads only its `alternate` link and loads that
 * through the same loader (a profile page's URL resolves).
 */
export function activityPubContentType(contentType: string | null): "json-ld" | "html" | null {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/activity+json" || type === "application/ld+json") return "json-ld";
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  return null;
}

export class NotActivityPub extends Error {
  override name = "NotActivityPub";
}

/**
 * Loads a document following redirects by hand, each hop checked by the guard and its request made anew (a
 * signed one signs the new target). The document is taken as coming from the LAST hop: Fedify checks that an
 * object's id shares its document's origin, so naming the first URL would let a redirect pass one server's
 * document off as another's.
 */
async function loadFollowing(
  url: string,
  get: (url: string, send: (req: Request) => Promise<Response>) => Promise<Response>,
  signal: AbortSignal | undefined,
  allowPrivate: boolean,
  load: DocumentLoader,
  kind: Kind = "document",
): Promise<RemoteDocument> {
  const maxBytes = MAX_BYTES[kind];
  const send = (req: Request) => outboundFetch(req, { signal }, { allowPrivate, ...LIMITS, maxBytes, maxRedirects: 0 });
  let current = url;
  for (let hop = 0; ; hop++) {
    const res = await get(current, send);
    const location = res.headers.get("location");
    if (![301, 302, 303, 307, 308].includes(res.status) || !location) {
      // A JSON-LD context is no ActivityPub document (servers serve Pleroma's as `application/json` too).
      if (kind !== "context" && res.ok && !activityPubContentType(res.headers.get("content-type"))) {
        await res.body?.cancel().catch(() => {});
        throw new NotActivityPub(`${current} is served as ${res.headers.get("content-type") ?? "nothing"}`);
      }
      return getRemoteDocument(current, res, load);
    }
    await res.body?.cancel().catch(() => {});
    if (hop >= LIMITS.maxRedirects) throw new OutboundRefused(`more than ${LIMITS.maxRedirects} redirects`);
    current = new URL(location, current).href;
  }
}

/** Who signs a loader's GETs: the instance actor (federation/door/instance-actor.ts), found when first needed. */
export type FetchSigner = () => Promise<{ uri: string; key: CryptoKey }> | null;

/**
 * Remote documents through the guard. With `signer`, every GET is signed as the instance actor (as Mastodon
 * signs its fetches as its representative): servers in authorized-fetch mode answer only signed requests. Signed
 * in the scheme the host accepts (`specs`: door/signature-specs.ts).
 */
export function guardedDocumentLoader(
  allowPrivate: boolean,
  userAgent: GetUserAgentOptions | string | undefined,
  signer?: { signer: FetchSigner; specs: SpecMemory },
  kind: "document" | "actor" = "document",
): DocumentLoader {
  const load: DocumentLoader = async (url, options) => {
    const hit = preloaded(url);
    if (hit) return hit;
    const s = signer ? await signer.signer() : null;
    const get = s
      ? signedGet({ keyId: new URL(`${s.uri}#main-key`), privateKey: s.key }, userAgent, signer!.specs)
      : plainGet(userAgent);
    return loadFollowing(url, get, options?.signal, allowPrivate, load, kind);
  };
  return load;
}

/** Cached in the KvStore like Fedify's built-in loader (same prefix), so repeated lookups cost no fetch. */
export function cachedDocumentLoader(
  kv: KvStore,
  allowPrivate: boolean,
  userAgent: GetUserAgentOptions | string | undefined,
  signer?: { signer: FetchSigner; specs: SpecMemory },
  kind: "document" | "actor" = "document",
): DocumentLoader {
  return kvCache({
    loader: guardedDocumentLoader(allowPrivate, userAgent, signer, kind),
    kv,
    prefix: ["_fedify", "remoteDocument"],
  });
}

/**
 * Remote documents as their servers serve them now (no cache), through the SSRF guard, signed as the instance
 * actor: for refreshing what a cached copy may have outdated (resolving, an actor's keys, a relayed object).
 */
export const freshDocumentLoader = (env: Env) =>
  guardedDocumentLoader(allowPrivateAddress(env), USER_AGENT, {
    signer: () => instanceSigner(env),
    specs: hostSpecs(db(env)),
  });

/** Remote JSON-LD contexts are kept a day (Pleroma's litepub schema is named by every delivery of its servers). */
export const CONTEXT_TTL_MS = 24 * 3600_000;
/** Contexts one isolate keeps: at most this many (64 KB each at most), the least recently used dropped first. */
const CONTEXTS_KEPT = 64;
const contexts = new Map<string, { doc: RemoteDocument; until: number }>();

/** Whether a loaded document is a JSON-LD context (an object with `@context`): nothing else is kept or used. */
const isContext = (doc: RemoteDocument) =>
  doc.document !== null && typeof doc.document === "object" && "@context" in (doc.document as object);

/**
 * Remote JSON-LD contexts, unsigned, through the guard, at most `CONTEXT_MAX_BYTES`, kept in this isolate's memory
 * for a day (`CONTEXT_TTL_MS`), never in D1: an unsigned inbox POST names the contexts it likes, so a stored cache
 * let anyone write megabytes a request into the database. The common ones are preloaded. What a body's contexts
 * say is still pinned per request (door/authenticate.ts).
 */
export function contextLoader(
  allowPrivate: boolean,
  userAgent: GetUserAgentOptions | string | undefined,
): DocumentLoader {
  const get = plainGet(userAgent);
  const fetchContext: DocumentLoader = async (url, options) => {
    const doc = await loadFollowing(url, get, options?.signal, allowPrivate, load, "context");
    if (!isContext(doc)) throw new Error(`${url} is not a JSON-LD context`);
    return doc;
  };
  const load: DocumentLoader = async (url, options) => {
    const hit = preloaded(url);
    if (hit) return hit;
    const kept = contexts.get(url);
    contexts.delete(url);
    if (kept && kept.until > Date.now()) {
      contexts.set(url, kept);
      return kept.doc;
    }
    const doc = await fetchContext(url, options);
    if (contexts.size >= CONTEXTS_KEPT) contexts.delete(contexts.keys().next().value!);
    contexts.set(url, { doc, until: Date.now() + CONTEXT_TTL_MS });
    return doc;
  };
  return load;
}

const plainGet =
  (userAgent: GetUserAgentOptions | string | undefined) => (u: string, send: (req: Request) => Promise<Response>) =>
    send(createActivityPubRequest(u, { userAgent }));

const signedGet =
  (
    identity: { keyId: URL; privateKey: CryptoKey },
    userAgent: GetUserAgentOptions | string | undefined,
    specs: SpecMemory,
  ) =>
  (u: string, send: (req: Request) => Promise<Response>) =>
    knock(createActivityPubRequest(u, { userAgent }), identity, specs, send);

/**
 * Signed GETs (for servers with authorized fetch) as `identity`, in the scheme the host accepts (draft-cavage
 * HTTP Signatures, which Mastodon, Pleroma, Misskey and GoToSocial all verify, unless it refused them; then RFC
 * 9421). Redirects are followed here, each hop checked and signed anew (a signature covers the request target).
 */
export function signedDocumentLoader(
  identity: { keyId: URL; privateKey: CryptoKey },
  allowPrivate: boolean,
  userAgent: GetUserAgentOptions | string | undefined,
  specs: SpecMemory,
): DocumentLoader {
  const get = signedGet(identity, userAgent, specs);
  const load: DocumentLoader = async (url, options) =>
    preloaded(url) ?? loadFollowing(url, get, options?.signal, allowPrivate, load);
  return load;
}

/**
 * A loader that loads nothing: what an object embeds is read, anything it only links to is not fetched (reading
 * a remote document must not turn into one request per icon, emoji, option or counter it names).
 */
export const embeddedOnly = async (url: string): Promise<never> => {
  throw new Error(`not embedded: ${url}`);
};

/** How Starling's fetches of ActivityPub documents name themselves (Fedify builds the User-Agent from it). */
export const USER_AGENT: GetUserAgentOptions = { software: "Starling" };
