/**
 * Fedify's document loaders, through Starling's SSRF guard (`lib/outbound.ts`): remote actors, objects and
 * keys, plain or signed (authorized fetch), and JSON-LD contexts (the common ones are preloaded and never
 * fetched). Fedify's own loaders use the global `fetch` with their own check; these replace them so that the
 * address policy, the development switch, the timeout and the size cap are Starling's, in one place.
 */
import { createActivityPubRequest, getRemoteDocument, kvCache, preloadedContexts, signRequest } from "@fedify/fedify";
import type { DocumentLoader, GetUserAgentOptions, KvStore, RemoteDocument } from "@fedify/fedify";
import { outboundFetch, OutboundRefused } from "../../lib/outbound";

/** A remote ActivityPub document or context: 10 s, 2 MB (Mastodon's own cap on fetched JSON is 1 MB). */
const LIMITS = { timeoutMs: 10_000, maxBytes: 2_000_000, maxRedirects: 3 } as const;

function preloaded(url: string): RemoteDocument | null {
  return url in preloadedContexts ? { contextUrl: null, documentUrl: url, document: preloadedContexts[url] } : null;
}

/**
 * Loads a document following redirects by hand, each hop checked by the guard and its request made anew (a
 * signed one signs the new target). The document is taken as coming from the LAST hop: Fedify checks that an
 * object's id shares its document's origin, so naming the first URL would let a redirect pass one server's
 * document off as another's.
 */
async function loadFollowing(
  url: string,
  request: (url: string) => Request | Promise<Request>,
  signal: AbortSignal | undefined,
  allowPrivate: boolean,
  load: DocumentLoader,
): Promise<RemoteDocument> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const res = await outboundFetch(await request(current), { signal }, { allowPrivate, ...LIMITS, maxRedirects: 0 });
    const location = res.headers.get("location");
    if (![301, 302, 303, 307, 308].includes(res.status) || !location) return getRemoteDocument(current, res, load);
    await res.body?.cancel().catch(() => {});
    if (hop >= LIMITS.maxRedirects) throw new OutboundRefused(`more than ${LIMITS.maxRedirects} redirects`);
    current = new URL(location, current).href;
  }
}

/** Who signs a loader's GETs: the instance actor (federation/door/instance-actor.ts), found when first needed. */
export type FetchSigner = () => Promise<{ uri: string; key: CryptoKey }> | null;

/**
 * Remote documents through the guard. With `signer`, every GET is signed as the instance actor (as Mastodon
 * signs its fetches as its representative): servers in authorized-fetch mode answer only signed requests.
 */
export function guardedDocumentLoader(
  allowPrivate: boolean,
  userAgent: GetUserAgentOptions | string | undefined,
  signer?: FetchSigner,
): DocumentLoader {
  const plain = (u: string) => createActivityPubRequest(u, { userAgent });
  const load: DocumentLoader = async (url, options) => {
    const hit = preloaded(url);
    if (hit) return hit;
    const s = signer ? await signer() : null;
    const request = s ? signedGet({ keyId: new URL(`${s.uri}#main-key`), privateKey: s.key }, userAgent) : plain;
    return loadFollowing(url, request, options?.signal, allowPrivate, load);
  };
  return load;
}

/** Cached in the KvStore like Fedify's built-in loader (same prefix), so repeated lookups cost no fetch. */
export function cachedDocumentLoader(
  kv: KvStore,
  allowPrivate: boolean,
  userAgent: GetUserAgentOptions | string | undefined,
  signer?: FetchSigner,
): DocumentLoader {
  return kvCache({
    loader: guardedDocumentLoader(allowPrivate, userAgent, signer),
    kv,
    prefix: ["_fedify", "remoteDocument"],
  });
}

const signedGet =
  (identity: { keyId: URL; privateKey: CryptoKey }, userAgent: GetUserAgentOptions | string | undefined) =>
  (u: string) =>
    signRequest(createActivityPubRequest(u, { userAgent }), identity.privateKey, identity.keyId, {
      spec: "draft-cavage-http-signatures-12",
    });

/**
 * Signed GETs (for servers with authorized fetch), draft-cavage HTTP Signatures, which Mastodon, Pleroma,
 * Misskey and GoToSocial all verify. Redirects are followed here, each hop checked and signed anew (a
 * signature covers the request target).
 */
export function signedDocumentLoader(
  identity: { keyId: URL; privateKey: CryptoKey },
  allowPrivate: boolean,
  userAgent: GetUserAgentOptions | string | undefined,
): DocumentLoader {
  const sign = signedGet(identity, userAgent);
  const load: DocumentLoader = async (url, options) =>
    preloaded(url) ?? loadFollowing(url, sign, options?.signal, allowPrivate, load);
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
