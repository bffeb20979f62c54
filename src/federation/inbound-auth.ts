/**
 * Who speaks for an actor (issue 28): every inbox POST is authenticated here, before Fedify reads it as an
 * activity. Fedify's own check is not enough: it takes a key's owner from the key document's own claim (`owner`,
 * `controller`), so a key hosted anywhere that names `https://victim.example/users/vic` as its owner would speak
 * for vic; and it stops at the first mechanism that verifies (a Linked Data signature, else an Object Integrity
 * Proof, else the HTTP signature), so checking only the one a request seems to use misses the others.
 *
 * The rule, whatever mechanism signed: a key speaks for an actor only when the key verified the request (Fedify's
 * own verification functions, so the key is the one they really used, not one parsed beside them) AND the key is
 * on the actor's origin AND the actor's own document, fetched from the actor's id, lists that key id
 * (`publicKey` or `assertionMethod`). Then:
 * - the actor's HTTP signature, or the actor's own LD signature or proof on the body: the activity is the
 *   actor's;
 * - an HTTP signature by someone else (a server forwarding a reply to its followers, a relay) and no valid
 *   signature of the actor on the body: unauthenticated. As Mastodon does, the copy is not trusted: a Create or
 *   Update is taken only with its object fetched again from its origin (and attributed to the actor there); any
 *   other activity is refused;
 * - no verifiable signature at all (unsigned, broken, an LD signature or proof alone by a key the actor does not
 *   list): refused.
 * Fedify then handles the activity without verifying again (`skipSignatureVerification`, set only because every
 * POST that reaches it has passed here: federation/index.ts); the signatures are removed from the body it reads.
 */
import { verifyProof, verifyRequestDetailed, verifySignature, type DocumentLoader, type KeyCache, type KvStore } from "@fedify/fedify";
import { Activity, CryptographicKey, isActor, Multikey, Object as APObject } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";

export interface AuthLoaders {
  /** The usual loader (KV-cached, through the SSRF guard). */
  documentLoader: DocumentLoader;
  /** The same without the cache: an actor document read again when a key is not (yet) listed in the cached one. */
  freshLoader: DocumentLoader;
  contextLoader: DocumentLoader;
  kv: KvStore;
}

export type Authenticated =
  /** The body Fedify may handle as the actor's (signatures removed, or the object as its origin serves it). */
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; error: string };

export const NOT_THE_ACTORS_KEY = "The signing key does not belong to the activity's actor";

const idOf = (v: unknown): string | null =>
  typeof v === "string" ? v : v && typeof v === "object" && typeof (v as { id?: unknown }).id === "string" ? (v as { id: string }).id : null;

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
      return (await CryptographicKey.fromJsonLd(stored).catch(() => null)) ?? (await Multikey.fromJsonLd(stored).catch(() => undefined));
    },
    async set(keyId, key) {
      if (key === null) return kv.set([...prefix, keyId.href], null, { ttl: Temporal.Duration.from({ minutes: 10 }) });
      await kv.set([...prefix, keyId.href], await key.toJsonLd());
    },
  };
}

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
    const actor = await APObject.fromJsonLd(doc.document, { documentLoader: loaders.documentLoader, contextLoader: loaders.contextLoader }).catch(() => null);
    if (!actor || !isActor(actor) || actor.id?.href !== actorId.href) continue;
    if ([...actor.publicKeyIds, ...actor.assertionMethodIds].some((k) => k.href === keyId.href)) return true;
  }
  return false;
}

/** The keys of the body's own signatures (a Linked Data signature, Object Integrity Proofs) that verify it. */
async function bodySigners(body: Record<string, unknown>, loaders: AuthLoaders, keyCache: KeyCache): Promise<URL[]> {
  const opts = { documentLoader: loaders.documentLoader, contextLoader: loaders.contextLoader, keyCache };
  const keys: URL[] = [];
  if (body.signature && typeof body.signature === "object") {
    const key = await verifySignature(body, opts).catch(() => null);
    if (key?.id) keys.push(key.id);
  }
  // Proofs as Fedify finds them (any spelling of `proof` the JSON-LD context allows), each verified on its own.
  const activity = await Activity.fromJsonLd(body, opts).catch(() => null);
  if (activity) {
    for await (const proof of activity.getProofs(opts)) {
      const key = await verifyProof(body, proof, opts).catch(() => null);
      if (key?.id) keys.push(key.id);
    }
  }
  return keys;
}

/** The body without its signatures: what is left once they have been checked here. */
function unsigned(body: Record<string, unknown>): Record<string, unknown> {
  const { signature: _s, proof: _p, ...rest } = body;
  return rest;
}

/** Types taken from an unauthenticated copy, their object fetched again from its origin. */
const REFETCHABLE = new Set(["Create", "Update"]);

/**
 * A relayed Create or Update whose copy could not be authenticated: its object as the actor's origin serves it
 * (fetched fresh, at its id, attributed to the actor, or the actor itself for an Update of a profile), or null.
 */
async function fromOrigin(body: Record<string, unknown>, actorId: URL, loaders: AuthLoaders): Promise<Record<string, unknown> | null> {
  if (typeof body.type !== "string" || !REFETCHABLE.has(body.type)) return null;
  const objectId = parseUrl(idOf(body.object));
  if (!objectId || objectId.origin !== actorId.origin) return null;
  const doc = await loaders.freshLoader(objectId.href).catch(() => null);
  if (!doc || parseUrl(doc.documentUrl)?.origin !== actorId.origin) return null;
  const object = await APObject.fromJsonLd(doc.document, { documentLoader: loaders.documentLoader, contextLoader: loaders.contextLoader }).catch(() => null);
  if (!object || object.id?.href !== objectId.href) return null;
  const isSelf = objectId.href === actorId.href && isActor(object);
  if (!isSelf && !object.attributionIds.some((a) => a.href === actorId.href)) return null;
  // Only what names the activity, with the object as the origin serves it (embedded with its own `@context`,
  // which JSON-LD scopes to it): nothing else of the unauthenticated copy is passed on.
  return { "@context": body["@context"], id: body.id, type: body.type, actor: body.actor, object: doc.document };
}

/**
 * Authenticates an inbox POST (`req` with its body still unread; `body` its parsed JSON, whose `actor` the
 * inbound guard has checked is there).
 */
export async function authenticateInbound(req: Request, body: Record<string, unknown>, loaders: AuthLoaders): Promise<Authenticated> {
  const actorId = parseUrl(idOf(body.actor));
  if (!actorId) return { ok: false, error: "The activity's actor is not a URL" };
  // The `actor` checked here is the one Fedify, and so every listener, reads: Fedify 2.3 takes the compact
  // `actor` property only (not another spelling of it a JSON-LD context could define), and the inbound guard lets
  // only a single id through (test/federation-forgery.test.ts "an actor named twice" holds both).
  const keyCache = kvKeyCache(loaders.kv);
  const owned = (key: URL) => actorLists(actorId, key, loaders);

  let relayedBy: URL | null = null;
  if (req.headers.has("signature") || req.headers.has("signature-input")) {
    const v = await verifyRequestDetailed(req, { documentLoader: loaders.documentLoader, contextLoader: loaders.contextLoader, keyCache }).catch(() => null);
    // A broken HTTP signature is refused, forwarded or not (as Mastodon does).
    if (!v?.verified || !v.key.id) return { ok: false, error: "The HTTP signature does not verify" };
    if (await owned(v.key.id)) return { ok: true, body: unsigned(body) };
    relayedBy = v.key.id;
  }
  for (const key of await bodySigners(body, loaders, keyCache)) {
    if (await owned(key)) return { ok: true, body: unsigned(body) };
  }
  if (!relayedBy) return { ok: false, error: NOT_THE_ACTORS_KEY };
  const refetched = await fromOrigin(body, actorId, loaders);
  if (refetched) {
    console.log(`inbox: ${String(body.type)} relayed by ${relayedBy.href} taken from its origin`);
    return { ok: true, body: refetched };
  }
  return { ok: false, error: NOT_THE_ACTORS_KEY };
}
