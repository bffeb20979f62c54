/**
 * The loaders a signature check uses (door/authenticate.ts), for the inbox and for signed GETs: actor and key
 * documents at most `ACTOR_MAX_BYTES` (fetched again the same), cached in `fedify_kv` like every fetched document
 * (same keys, so what is kept here is what Fedify's listeners read next), but held in memory until the signature
 * they were fetched for verifies (door/pending-kv.ts): a signature naming a stranger's URL writes nothing to D1.
 * Then only real actor and key documents, and keys that were found, are written, in one batch.
 */
import type { DocumentLoader } from "@fedify/fedify";
import type { DB } from "../../db/client";
import type { Env } from "../../env";
import { allowPrivateAddress } from "../../lib/outbound";
import type { AuthLoaders } from "./authenticate";
import { instanceSigner } from "./instance-actor";
import { D1KvStore } from "./kv";
import { cachedDocumentLoader, freshDocumentLoader, guardedDocumentLoader, USER_AGENT } from "./loaders";
import { PendingKv, type HeldEntry } from "./pending-kv";
import { hostSpecs } from "./signature-specs";

/** The types a document must have to be kept: an actor's, or a key's (a key document may be either). */
const ACTOR_OR_KEY_TYPES = new Set([
  "Application",
  "Group",
  "Organization",
  "Person",
  "Service",
  "Key",
  "CryptographicKey",
  "Multikey",
]);

/** Whether a fetched document is an actor's or a key's, by its `type` (or a key's fields, for an untyped one). */
export function actorOrKey(document: unknown): boolean {
  if (document === null || typeof document !== "object" || Array.isArray(document)) return false;
  const doc = document as Record<string, unknown>;
  const types = Array.isArray(doc.type) ? doc.type : [doc.type];
  if (types.some((t) => typeof t === "string" && ACTOR_OR_KEY_TYPES.has(t))) return true;
  return doc.type === undefined && typeof doc.publicKeyPem === "string";
}

/** What is worth keeping of a verified request's fetches: keys found (not misses), actor and key documents. */
function worthKeeping({ key, value }: HeldEntry): boolean {
  if (key[1] === "publicKey") return value !== null;
  if (key[1] === "remoteDocument") return actorOrKey((value as { document?: unknown } | null)?.document);
  return false;
}

export function authLoaders(env: Env, d: DB, contextLoader: DocumentLoader): AuthLoaders {
  const kv = new PendingKv(new D1KvStore(d));
  const signer = { signer: () => instanceSigner(env), specs: hostSpecs(d) };
  const allowPrivate = allowPrivateAddress(env);
  return {
    documentLoader: cachedDocumentLoader(kv, allowPrivate, USER_AGENT, signer, "actor"),
    freshLoader: guardedDocumentLoader(allowPrivate, USER_AGENT, signer, "actor"),
    objectLoader: freshDocumentLoader(env),
    contextLoader,
    kv,
    keep: () => kv.keep(worthKeeping),
  };
}
