/**
 * Who speaks for an actor (issue 28): every inbox POST is authenticated here, before Fedify reads it as an
 * activity. Fedify's own check is not enough: it takes a key's owner from the key document's own claim (`owner`,
 * `controller`), so a key hosted anywhere that names `https://victim.example/users/vic` as its owner would speak
 * for vic; and it stops at the first mechanism that verifies (a Linked Data signature, else an Object Integrity
 * Proof, else the HTTP signature), so checking only the one a request seems to use misses the others.
 *
 * The rule, whatever mechanism signed: a key speaks for an actor only when the key verified the request (Fedify's
 * own verification functions), the key that verified is the very one the signature names (Fedify may answer
 * another key found in the document at that URL), the key is on the actor's origin, AND the actor's own document,
 * fetched from the actor's id, lists that key id (`publicKey` or `assertionMethod`). Then:
 * - the actor's HTTP signature, or the actor's own LD signature or proof on the body: the activity is the
 *   actor's;
 * - an HTTP signature by someone else (a server forwarding a reply to its followers, a relay) and no valid
 *   signature of the actor on the body: unauthenticated. As Mastodon does, the copy is not trusted: a Create or
 *   Update is taken only with its object fetched again from its origin (and attributed to the actor there),
 *   in a body of Starling's own making; any other activity is refused;
 * - no verifiable signature at all (unsigned, broken, an LD signature or proof alone by a key the actor does not
 *   list): refused. The HTTP signature is verified before the body's remote contexts are loaded, and a request
 *   with no signature of either kind is refused before anything is fetched: a stranger cannot make Starling
 *   fetch the contexts it names.
 * What is checked is what Fedify will read: the body is parsed here as Fedify parses it, its JSON-LD contexts
 * loaded once and written into the body (a remote context served differently the next time cannot change its
 * meaning after the check); its one actor must be the actor authenticated, and its id on that actor's origin.
 * Fedify then handles the activity without verifying again (`skipSignatureVerification`, set only because every
 * POST that reaches it has passed here: door/handle.ts); the signatures are removed from the body it reads.
 */
import {
  preloadedContexts,
  verifyProof,
  verifyRequestDetailed,
  verifySignature,
  type DocumentLoader,
  type KeyCache,
  type KvStore,
  type RemoteDocument,
} from "@fedify/fedify";
import { Activity, Create, CryptographicKey, isActor, Multikey, Object as APObject, Update } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import { decodeDict } from "structured-field-values";
import { embeddedOnly } from "./loaders";
import { weakPostSignature } from "./signature-strength";

export interface AuthLoaders {
  /** Actor and key documents (KV-cached, through the SSRF guard). */
  documentLoader: DocumentLoader;
  /** The same without the cache: an actor or key document read again (a key not yet listed, a key rotated). */
  freshLoader: DocumentLoader;
  /** A relayed object as its origin serves it now (no cache; an object, not held to an actor's size). */
  objectLoader: DocumentLoader;
  contextLoader: DocumentLoader;
  /** Where keys are cached; what the loaders and it fetched is held there until `keep` (door/auth-loaders.ts). */
  kv: KvStore;
  /** Called once the request is authenticated: what was fetched for it may now be stored. */
  keep: () => Promise<void>;
}

export type Authenticated =
  /**
   * The body Fedify may handle as the actor's (signatures removed, or the object as its origin serves it);
   * `relayedBy`: the key of another server's HTTP signature that carried it (a relay, a forwarded reply).
   */
  | { ok: true; body: Record<string, unknown>; relayedBy?: string }
  /** Refused (400, 401), or acknowledged and dropped unread (202: nothing a retry would change). */
  | { ok: false; status: 202 | 400 | 401; error: string };

const NOT_THE_ACTORS_KEY = "The signing key does not belong to the activity's actor";
const refused = (error: string, status: 202 | 400 | 401 = 401): Authenticated => ({ ok: false, status, error });

const idOf = (v: unknown): string | null =>
  typeof v === "string"
    ? v
    : v && typeof v === "object" && typeof (v as { id?: unknown }).id === "string"
      ? (v as { id: string }).id
      : null;

function parseUrl(u: string | null | undefined): URL | null {
  if (!u) return null;
  try {
    const url = new URL(u);
    return url.protocol === "https:" || url.protocol === "http:" ? url : null;
  } catch {
    return null;
  }
}

/** Fedify's key cache (same KV entries as its own `KvKeyCache`), so a key is fetched once for many deliveries. */
function kvKeyCache(kv: KvStore): KeyCache {
  const prefix = ["_fedify", "publicKey"] as const;
  return {
    async get(keyId) {
      const stored = await kv.get<Record<string, unknown> | null>([...prefix, keyId.href]);
      if (stored === undefined) return undefined;
      if (stored === null) return null;
      return (
        (await CryptographicKey.fromJsonLd(stored).catch(() => null)) ??
        (await Multikey.fromJsonLd(stored).catch(() => undefined))
      );
    },
    async set(keyId, key) {
      if (key === null) return kv.set([...prefix, keyId.href], null, { ttl: Temporal.Duration.from({ minutes: 10 }) });
      await kv.set([...prefix, keyId.href], await key.toJsonLd());
    },
  };
}

// ---- what Fedify will read ----

/** Remote contexts one body may name (a real one names one or two: Pleroma's litepub schema). */
const REMOTE_CONTEXTS_MAX = 4;

/** A context loader that loads each URL once for this request, at most `REMOTE_CONTEXTS_MAX` of them. */
function onceLoader(load: DocumentLoader): DocumentLoader {
  const seen = new Map<string, Promise<RemoteDocument>>();
  return (url, options) => {
    let hit = seen.get(url);
    if (!hit) {
      if (
        !(url in preloadedContexts) &&
        [...seen.keys()].filter((u) => !(u in preloadedContexts)).length >= REMOTE_CONTEXTS_MAX
      ) {
        return Promise.reject(new Error(`more than ${REMOTE_CONTEXTS_MAX} remote JSON-LD contexts`));
      }
      hit = load(url, options);
      seen.set(url, hit);
    }
    return hit;
  };
}

/**
 * The value with every remote `@context` URL replaced by the context it loads to (preloaded ones stay URLs),
 * wherever a context may name one: the document's and its embedded objects' `@context`, and inside a context, a
 * term's own (scoped) `@context`. What is checked here and what Fedify reads then have one meaning, whatever the
 * context's server answers later: Fedify's own loader is never asked for anything but preloaded contexts
 * (`onlyPreloaded` refuses a body where any other reference is left, such as an `@import`).
 */
async function pinContexts(value: unknown, load: DocumentLoader, depth = 0): Promise<unknown> {
  if (depth > 40 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return Promise.all(value.map((v) => pinContexts(v, load, depth + 1)));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === "@context" ? await pinContext(v, load) : await pinContexts(v, load, depth + 1);
  }
  return out;
}

async function pinContext(ctx: unknown, load: DocumentLoader, depth = 0): Promise<unknown> {
  if (depth > 4) throw new Error("JSON-LD contexts nested too deep");
  // A loaded context may itself be a list (Pleroma's litepub schema is): its entries join the list it stood in,
  // as JSON-LD has no lists of lists there.
  if (Array.isArray(ctx)) return (await Promise.all(ctx.map((c) => pinContext(c, load, depth)))).flat();
  if (typeof ctx === "string") {
    if (ctx in preloadedContexts) return ctx;
    const doc = (await load(ctx)).document as { "@context"?: unknown } | null;
    if (!doc || typeof doc !== "object" || !("@context" in doc)) throw new Error(`${ctx} is not a JSON-LD context`);
    return pinContext(doc["@context"], load, depth + 1);
  }
  if (ctx === null || typeof ctx !== "object") return ctx;
  // A context object: its terms' own (scoped) contexts are pinned too.
  const out: Record<string, unknown> = {};
  for (const [term, def] of Object.entries(ctx)) {
    out[term] =
      def !== null && typeof def === "object" && !Array.isArray(def) && "@context" in def
        ? { ...def, "@context": await pinContext((def as Record<string, unknown>)["@context"], load, depth + 1) }
        : def;
  }
  return out;
}

/** Whether every context the value names, anywhere (`@context`, `@import`), is one Fedify has preloaded. */
function onlyPreloaded(value: unknown, depth = 0): boolean {
  if (depth > 60) return false;
  if (value === null || typeof value !== "object") return true;
  if (Array.isArray(value)) return value.every((v) => onlyPreloaded(v, depth + 1));
  return Object.entries(value).every(([k, v]) =>
    k === "@context" ? contextPreloaded(v, depth + 1) : onlyPreloaded(v, depth + 1),
  );
}

/** A context value: URLs preloaded; in a context object, `@import` too, and each term's scoped context. */
function contextPreloaded(ctx: unknown, depth: number): boolean {
  if (depth > 60) return false;
  if (typeof ctx === "string") return ctx in preloadedContexts;
  if (Array.isArray(ctx)) return ctx.every((c) => contextPreloaded(c, depth + 1));
  if (ctx === null || typeof ctx !== "object") return true;
  return Object.entries(ctx).every(([term, def]) => {
    if (term === "@import") return typeof def === "string" && def in preloadedContexts;
    if (def !== null && typeof def === "object" && !Array.isArray(def) && "@context" in def)
      return contextPreloaded((def as Record<string, unknown>)["@context"], depth + 1);
    return true;
  });
}

// ---- keys ----

/**
 * The key id an HTTP signature names, read as Fedify reads it: draft-cavage's `Signature` header split on commas
 * into `name="value"` pairs (the last `keyId` wins), or RFC 9421's one signature of `Signature-Input` (Fedify takes
 * the first of several that verifies, which could not be told apart here: more than one is refused).
 */
function headerKeyId(headers: Headers): string | null {
  const input = headers.get("signature-input");
  if (input) {
    let dict: ReturnType<typeof decodeDict>;
    try {
      dict = decodeDict(input);
    } catch {
      return null;
    }
    const labels = Object.values(dict).filter(
      (item) =>
        Array.isArray(item.value) && typeof item.params?.keyid === "string" && typeof item.params?.created === "number",
    );
    return labels.length === 1 ? (labels[0]!.params.keyid as string) : null;
  }
  const header = headers.get("signature");
  if (!header) return null;
  const values = Object.fromEntries(
    header
      .split(",")
      .map((pair) => pair.match(/^\s*([A-Za-z]+)=(?:"([^"]*)"|(\d+))\s*$/))
      .filter((m): m is RegExpMatchArray => m !== null)
      .map((m) => [m[1], m[2] ?? m[3]]),
  );
  return typeof values.keyId === "string" ? values.keyId : null;
}

/** Whether a key that verified is the one named (by URL, as the signature wrote it). */
const isNamed = (
  key: { id: URL | null } | null | undefined,
  named: string | URL | null | undefined,
): key is { id: URL } =>
  !!key?.id && !!named && key.id.href === (typeof named === "string" ? parseUrl(named)?.href : named.href);

/**
 * Keys found listed by their actor, remembered by this isolate for as long as the loader caches the actor's
 * document (an actor's deliveries come in runs: no document read and parse for each). Only positive answers.
 */
const LISTED_MS = 5 * 60_000;
const LISTED_MAX = 2_000;
const listed = new Map<string, number>();

/** Whether the actor's own document, loaded from its id on its origin, lists `keyId`. */
async function actorLists(actorId: URL, keyId: URL, loaders: AuthLoaders): Promise<boolean> {
  if (keyId.origin !== actorId.origin) return false;
  const memo = `${actorId.href} ${keyId.href}`;
  const seen = listed.get(memo);
  if (seen !== undefined && Date.now() - seen < LISTED_MS) return true;
  if (!(await actorListsNow(actorId, keyId, loaders))) return false;
  if (listed.size >= LISTED_MAX) listed.delete(listed.keys().next().value!);
  listed.set(memo, Date.now());
  return true;
}

async function actorListsNow(actorId: URL, keyId: URL, loaders: AuthLoaders): Promise<boolean> {
  for (const load of [loaders.documentLoader, loaders.freshLoader]) {
    const doc = await load(actorId.href).catch(() => null);
    // The document as served at the actor's id, on its origin (a redirect elsewhere speaks for nobody here).
    if (!doc || parseUrl(doc.documentUrl)?.origin !== actorId.origin) continue;
    const actor = await APObject.fromJsonLd(doc.document, {
      documentLoader: loaders.documentLoader,
      contextLoader: loaders.contextLoader,
    }).catch(() => null);
    if (!actor || !isActor(actor) || actor.id?.href !== actorId.href) continue;
    if ([...actor.publicKeyIds, ...actor.assertionMethodIds].some((k) => k.href === keyId.href)) return true;
  }
  return false;
}

/** A key id refetched after a failed verification, by time: at most once a minute per isolate. */
const REFETCH_MS = 60_000;
const REFETCH_MAX = 2_000;
const refetched = new Map<string, number>();

function mayRefetch(keyId: string): boolean {
  const last = refetched.get(keyId);
  if (last !== undefined && Date.now() - last < REFETCH_MS) return false;
  if (refetched.size >= REFETCH_MAX) refetched.delete(refetched.keys().next().value!);
  refetched.set(keyId, Date.now());
  return true;
}

/**
 * Verifies the request's HTTP signature; when it does not verify with the key as cached (Fedify retries a cached
 * key only through the same cached documents), its key document is fetched again, once, and the new key tried: a
 * key rotated under the same key id verifies at once rather than when the cached documents expire. A key id
 * is refetched at most once a minute, so bad signatures cannot make Starling fetch a victim's key for each.
 */
async function verifyHttp(
  req: Request,
  named: string,
  opts: { documentLoader: DocumentLoader; contextLoader: DocumentLoader; keyCache: KeyCache },
  loaders: AuthLoaders,
) {
  const v = await verifyRequestDetailed(req.clone(), opts).catch(() => null);
  if (v?.verified || v?.reason.type !== "invalidSignature" || !mayRefetch(named)) return v;
  const fresh: KeyCache = { get: async () => undefined, set: (id, key) => opts.keyCache.set(id, key) };
  return verifyRequestDetailed(req.clone(), { ...opts, documentLoader: loaders.freshLoader, keyCache: fresh }).catch(
    () => null,
  );
}

/**
 * Who signed a request that carries no activity (a GET in authorized-fetch mode), named by the inbox's rule:
 * the HTTP signature verifies with the very key it names, and the key's owner (as its document says), on the key's
 * origin, lists the key in its own document. Null when nobody verifiably did.
 */
export async function authenticatedSigner(req: Request, loaders: AuthLoaders): Promise<URL | null> {
  try {
    const named = headerKeyId(req.headers);
    if (!named) return null;
    const opts = {
      documentLoader: loaders.documentLoader,
      contextLoader: loaders.contextLoader,
      keyCache: kvKeyCache(loaders.kv),
    };
    const v = await verifyHttp(req, named, opts, loaders);
    if (!v?.verified || !isNamed(v.key, named)) return null;
    const owner = v.key.ownerId;
    if (!owner || !(await actorLists(owner, v.key.id!, loaders))) return null;
    await loaders.keep();
    return owner;
  } catch (e) {
    console.log("fetch: signature not verified:", (e as Error)?.message ?? e);
    return null;
  }
}

/** Proofs read on one body (real ones carry one). */
const PROOFS_MAX = 2;

/** The keys of the body's own signatures (a Linked Data signature, Object Integrity Proofs) that verify it. */
async function bodySigners(
  body: Record<string, unknown>,
  activity: Activity,
  opts: { documentLoader: DocumentLoader; contextLoader: DocumentLoader; keyCache: KeyCache },
): Promise<URL[]> {
  const keys: URL[] = [];
  const signature = body.signature as { creator?: unknown } | undefined;
  if (signature && typeof signature === "object" && typeof signature.creator === "string") {
    const key = await verifySignature(body, opts).catch(() => null);
    if (isNamed(key, signature.creator)) keys.push(key.id);
  }
  // Proofs as Fedify finds them (any spelling of `proof` the JSON-LD context allows), each verified on its own:
  // embedded ones only (a proof given by URL is not fetched), and a few (each may fetch its key).
  let n = 0;
  try {
    for await (const proof of activity.getProofs({ ...opts, documentLoader: embeddedOnly })) {
      if (++n > PROOFS_MAX) break;
      const key = await verifyProof(body, proof, opts).catch(() => null);
      if (isNamed(key, proof.verificationMethodId)) keys.push(key.id);
    }
  } catch {
    // A proof that is not embedded: not one.
  }
  return keys;
}

/** The body without its signatures: what is left once they have been checked here. */
function unsigned(body: Record<string, unknown>): Record<string, unknown> {
  const { signature: _s, proof: _p, ...rest } = body;
  return rest;
}

/**
 * A relayed Create or Update whose copy could not be authenticated: a body of Starling's own making (a fixed
 * context, an id of its own, so the copy can take no id of the author's), its object as the actor's origin serves
 * it (fetched fresh, at its id, attributed to the actor, or the actor itself for an Update of a profile); or null.
 */
async function fromOrigin(
  activity: Activity,
  actorId: URL,
  loaders: AuthLoaders,
  contexts: DocumentLoader,
): Promise<Record<string, unknown> | null> {
  const type = activity instanceof Create ? "Create" : activity instanceof Update ? "Update" : null;
  const objectId = activity.objectId;
  if (!type || !objectId || objectId.origin !== actorId.origin) return null;
  const doc = await loaders.objectLoader(objectId.href).catch(() => null);
  // Served at its id itself, not through a redirect (an open redirect on the origin would lead anywhere).
  if (!doc || doc.documentUrl !== objectId.href) return null;
  const document = (await pinContexts(doc.document, contexts).catch(() => null)) as Record<string, unknown> | null;
  if (document && !onlyPreloaded(document)) return null;
  const object =
    document &&
    (await APObject.fromJsonLd(document, { documentLoader: embeddedOnly, contextLoader: contexts }).catch(() => null));
  if (!object || object.id?.href !== objectId.href) return null;
  const isSelf = objectId.href === actorId.href && isActor(object);
  if (!isSelf && !object.attributionIds.some((a) => a.href === actorId.href)) return null;
  return {
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `urn:uuid:${crypto.randomUUID()}`,
    type,
    actor: actorId.href,
    object: document,
  };
}

/**
 * Authenticates an inbox POST (`req` with its body still unread; `body` its parsed JSON, whose `actor` the
 * inbound guard has checked is one id).
 */
export async function authenticateInbound(
  req: Request,
  raw: Record<string, unknown>,
  loaders: AuthLoaders,
): Promise<Authenticated> {
  try {
    const who = await authenticate(req, raw, loaders);
    if (who.ok) await loaders.keep();
    return who;
  } catch (e) {
    // Whatever a hostile body makes a parser or a fetch throw: not authenticated (never a 500).
    console.log("inbox: authentication failed:", (e as Error)?.message ?? e);
    return refused(NOT_THE_ACTORS_KEY);
  }
}

/**
 * Whether the body carries a signature of its own (an LD signature, a proof) under the names servers write.
 * A body with neither that nor an HTTP signature is refused before anything it names is fetched.
 */
const BODY_SIGNATURE = /^(signature|proof|sec:proof|https:\/\/w3id\.org\/security#(proof|signature))$/;
const bodySigned = (raw: Record<string, unknown>) => Object.keys(raw).some((k) => BODY_SIGNATURE.test(k));

/**
 * The key of the request's HTTP signature, verified before the body's contexts are loaded: a stranger's broken or
 * missing signature makes Starling fetch nothing the body names (as Mastodon, which loads a remote context only to
 * check an LD signature, after the HTTP signature). Null: no HTTP signature; a refusal: one that does not verify.
 */
async function httpSigner(
  req: Request,
  opts: { documentLoader: DocumentLoader; contextLoader: DocumentLoader; keyCache: KeyCache },
  loaders: AuthLoaders,
): Promise<URL | null | Authenticated> {
  if (!req.headers.has("signature") && !req.headers.has("signature-input")) return null;
  // An RFC 9421 one that covers too little (not the body, or not the request) is refused unverified, its key not
  // fetched.
  const weak = weakPostSignature(req.headers);
  if (weak) return refused(weak);
  const named = headerKeyId(req.headers);
  const v = named ? await verifyHttp(req, named, opts, loaders) : null;
  // A broken HTTP signature is refused, forwarded or not (as Mastodon does); so is one whose key is not the one
  // it names (Fedify answers the one key of an actor document served at a key URL, whatever its id).
  if (!v?.verified || !isNamed(v.key, named)) return refused("The HTTP signature does not verify");
  return v.key.id!;
}

async function authenticate(req: Request, raw: Record<string, unknown>, loaders: AuthLoaders): Promise<Authenticated> {
  const actorId = parseUrl(idOf(raw.actor));
  if (!actorId) return refused("The activity's actor is not a URL");
  const contexts = onceLoader(loaders.contextLoader);
  const keyCache = kvKeyCache(loaders.kv);
  const opts = { documentLoader: loaders.documentLoader, contextLoader: contexts, keyCache };
  const httpKey = await httpSigner(req, opts, loaders);
  if (httpKey !== null && !(httpKey instanceof URL)) return httpKey;
  if (!httpKey && !bodySigned(raw)) return refused("The request is not signed");
  // Signed in its body alone (a key named `signature` is all it takes to claim that): only the contexts Fedify
  // holds, so that a stranger makes Starling fetch nothing (Mastodon loads a remote context only after an HTTP
  // signature verified).
  if (!httpKey && !onlyPreloaded(raw))
    return refused("A request without an HTTP signature may name only well-known JSON-LD contexts");
  const body = (await pinContexts(raw, contexts).catch(() => null)) as Record<string, unknown> | null;
  if (!body) return refused("The activity's JSON-LD contexts could not be loaded", 400);
  if (!onlyPreloaded(body)) return refused("The activity's JSON-LD contexts name one that cannot be pinned", 400);
  // Parsed as Fedify will parse it (nothing it links to is fetched here).
  const activity = await Activity.fromJsonLd(body, { documentLoader: embeddedOnly, contextLoader: contexts }).catch(
    () => null,
  );
  if (!activity) return refused("The body is not an activity", 400);
  // JSON-LD lets a body name actors under other spellings than `actor` (a term of its context that sorts first):
  // the actor Fedify, and every listener, reads must be the one authenticated, and only it.
  if (activity.actorIds.length !== 1 || activity.actorIds[0]!.href !== actorId.href)
    return refused("The activity's actor is not the one its body names");
  // Its id in the actor's namespace: an activity id already seen is dropped as a repeat, so a sender must not
  // take another server's ids (the author's next Delete, say). Acknowledged and dropped, never handed to Fedify
  // (which would remember the id), as Pleroma's containment drops it.
  if (activity.id && activity.id.origin !== actorId.origin)
    return refused("The activity's id is not on its actor's origin", 202);
  const owned = (key: URL) => actorLists(actorId, key, loaders);

  if (httpKey && (await owned(httpKey))) return { ok: true, body: unsigned(body) };
  const relayedBy = httpKey;
  for (const key of await bodySigners(body, activity, opts)) {
    if (await owned(key))
      return { ok: true, body: unsigned(body), ...(relayedBy ? { relayedBy: relayedBy.href } : {}) };
  }
  if (!relayedBy) return refused(NOT_THE_ACTORS_KEY);
  const refetched = await fromOrigin(activity, actorId, loaders, contexts);
  if (refetched) {
    console.log(`inbox: ${refetched.type} relayed by ${relayedBy.href} taken from its origin`);
    return { ok: true, body: refetched, relayedBy: relayedBy.href };
  }
  return refused(NOT_THE_ACTORS_KEY);
}
