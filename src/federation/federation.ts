/**
 * The Fedify `Federation` (@fedify/fedify 2.3.6): one builder per isolate holding the dispatchers
 * (documents/dispatchers.ts) and the inbox listeners (listening/inbox.ts), built from the bindings and cached per
 * bindings object; and contexts of it for code that fetches or sends (fetching/, delivery/).
 *
 * The listeners are handed in from above (`registerListeners`, called by federation/index.ts), as the effects
 * door's federation sinks are: a listener calls fetching/ (resolving an actor, a thread's ancestors), which asks
 * this module for a context, so this module cannot import the listeners.
 */
import { createFederationBuilder, type Federation, type FederationBuilder } from "@fedify/fedify";
import { db } from "../db/client";
import { config, type Env } from "../env";
import { allowPrivateAddress } from "../lib/outbound";
import type { FederationData } from "./data";
import { registerDispatchers } from "./documents/dispatchers";
import { D1KvStore } from "./door/kv";
import { cachedDocumentLoader, contextLoader, signedDocumentLoader, USER_AGENT } from "./door/loaders";
import { instanceSigner } from "./door/instance-actor";
import { hostSpecs } from "./door/signature-specs";

export type { FederationData } from "./data";

const builder = createFederationBuilder<FederationData>();
registerDispatchers(builder);
let listening = false;

/** Sets the inbox listeners on the builder, once per isolate, before the first `Federation` is built. */
export function registerListeners(register: (b: FederationBuilder<FederationData>) => void): void {
  if (listening) return;
  register(builder);
  listening = true;
}

const built = new WeakMap<object, Promise<Federation<FederationData>>>();

/**
 * The Federation for these bindings. No message queue: Starling sends through its own transactional outbox
 * (federation/delivery/), and an incoming activity is handled (or refused) while its sender waits, so nothing is
 * stored for a type Starling does not handle.
 */
async function buildFederation(env: Env): Promise<Federation<FederationData>> {
  // Without them the inbox has no route, and no actor document can name its inbox.
  if (!listening) throw new Error("No inbox listeners: import federation/index.ts before asking for a Federation");
  const domain = config(env).domain;
  const kv = new D1KvStore(db(env));
  const allowPrivate = allowPrivateAddress(env);
  const userAgent = USER_AGENT;
  const specs = hostSpecs(db(env));
  const federation = await builder.build({
    kv,
    // Ids are https://DOMAIN/… whatever host a request reached; without DOMAIN (local development only, see
    // `federationRefused`) they are made from the request's origin.
    origin: domain ? `https://${domain}` : undefined,
    // Liberal in what is accepted: `/objects/<id>/` is the same object (the ids Starling hands out have none).
    trailingSlashInsensitive: true,
    // Every document Fedify loads (actors, objects, keys, contexts; signed or not) goes through the SSRF guard.
    // (Fedify refuses `allowPrivateAddress` or `userAgent` together with these factories: the loaders carry both.)
    // Signed as the instance actor (servers in authorized-fetch mode answer nothing else); contexts are not.
    // Signed GETs use the scheme each host accepts (door/signature-specs.ts: Fedify's double knock).
    documentLoaderFactory: () =>
      cachedDocumentLoader(kv, allowPrivate, userAgent, { signer: () => instanceSigner(env), specs }),
    // Contexts unsigned, kept a day (door/loaders.ts).
    contextLoaderFactory: () => contextLoader(allowPrivate, userAgent),
    authenticatedDocumentLoaderFactory: (identity) => signedDocumentLoader(identity, allowPrivate, userAgent, specs),
    // Signatures are checked before Fedify, by federation/door/authenticate.ts (handleFederated lets no other POST
    // through): Fedify trusts a key document's own claim of who owns it, which lets any server speak for another's
    // actors (issue 28).
    skipSignatureVerification: true,
  });
  // WebFinger lookups (and Fedify's own `sendActivity`, unused: deliveries are federation/delivery/'s, through the
  // guard) use Fedify's code with the global fetch; WebFinger checks addresses its own way (same rule). It reads
  // the switch (and the User-Agent) from these fields, which the constructor takes only without the factories.
  Object.assign(federation as object, { allowPrivateAddress: allowPrivate, userAgent });
  return federation;
}

export function federationFor(env: Env): Promise<Federation<FederationData>> {
  // Cached per bindings object: the builder's dispatchers are stateless and the stores only hold bindings.
  let hit = built.get(env);
  if (!hit) {
    hit = buildFederation(env);
    hit.catch(() => built.delete(env));
    built.set(env, hit);
  }
  return hit;
}

export { freshDocumentLoader } from "./door/loaders";

/** A context for code outside a request (tests, later the outbox). */
export async function federationContext(env: Env, base: string) {
  return (await federationFor(env)).createContext(new URL(base), { env, d: db(env) });
}

/** A request's federation context, for routes outside Fedify's dispatchers that still verify signatures. */
export async function federationRequestContext(env: Env, req: Request) {
  return (await federationFor(env)).createContext(req, { env, d: db(env) });
}
