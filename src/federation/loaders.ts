/**
 * Fedify's document loaders, through Starling's SSRF guard (`lib/outbound.ts`): remote actors, objects and
 * keys, plain or signed (authorized fetch), and JSON-LD contexts (the common ones are preloaded and never
 * fetched). Fedify's own loaders use the global `fetch` with their own check; these replace them so that the
 * address policy, the development switch, the timeout and the size cap are Starling's, in one place.
 */
import { createActivityPubRequest, getRemoteDocument, kvCache, preloadedContexts, signRequest } from "@fedify/fedify";
import type { DocumentLoader, GetUserAgentOptions, KvStore, RemoteDocument } from "@fedify/fedify";
import { outboundFetch, OutboundRefused, type OutboundOptions } from "../lib/outbound";

/** A remote ActivityPub document or context: 10 s, 2 MB (Mastodon's own cap on fetched JSON is 1 MB). */
const LIMITS = { timeoutMs: 10_000, maxBytes: 2_000_000, maxRedirects: 3 } as const;

function preloaded(url: string): RemoteDocument | null {
  return url in preloadedContexts ? { contextUrl: null, documentUrl: url, document: preloadedContexts[url] } : null;
}

export function guardedDocumentLoader(allowPrivate: boolean, userAgent: GetUserAgentOptions | string | undefined): DocumentLoader {
  const opts: OutboundOptions = { allowPrivate, ...LIMITS };
  const load: DocumentLoader = async (url, options) => {
    const hit = preloaded(url);
    if (hit) return hit;
    const req = createActivityPubRequest(url, { userAgent });
    const res = await outboundFetch(req, { signal: options?.signal }, opts);
    return getRemoteDocument(url, res, load);
  };
  return load;
}

/** Cached in the KvStore like Fedify's built-in loader (same prefix), so repeated lookups cost no fetch. */
export function cachedDocumentLoader(kv: KvStore, allowPrivate: boolean, userAgent: GetUserAgentOptions | string | undefined): DocumentLoader {
  return kvCache({ loader: guardedDocumentLoader(allowPrivate, userAgent), kv, prefix: ["_fedify", "remoteDocument"] });
}

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
  const load: DocumentLoader = async (url, options) => {
    const hit = preloaded(url);
    if (hit) return hit;
    let current = url;
    for (let hop = 0; ; hop++) {
      const req = await signRequest(createActivityPubRequest(current, { userAgent }), identity.privateKey, identity.keyId, {
        spec: "draft-cavage-http-signatures-12",
      });
      const res = await outboundFetch(req, { signal: options?.signal }, { allowPrivate, ...LIMITS, maxRedirects: 0 });
      const location = res.headers.get("location");
      if (![301, 302, 303, 307, 308].includes(res.status) || !location) return getRemoteDocument(current, res, load);
      await res.body?.cancel().catch(() => {});
      if (hop >= LIMITS.maxRedirects) throw new OutboundRefused(`more than ${LIMITS.maxRedirects} redirects`);
      current = new URL(location, current).href;
    }
  };
  return load;
}
