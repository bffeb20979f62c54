/**
 * A fake remote server built on Fedify (`https://peer.example` by default): actors at `/users/<name>` with an
 * RSA key (HTTP Signatures, `#main-key`) and an Ed25519 key (`assertionMethod`), served by its own Fedify
 * federation; any other document a test puts in `objects` is served as ActivityStreams JSON. `route()` replaces
 * the global `fetch` like `routeFetch` (test/instances.ts): the peer's host reaches the peer (every request is
 * recorded, what it receives in `delivered`), `a.example`/`b.example` reach the instances, the rest is refused.
 * `send()` POSTs an activity to an instance's inbox signed with draft-cavage or RFC 9421, as a real server would.
 * With `accepts` set, the peer verifies every request's HTTP signature and answers 401 to any not signed (and
 * verified) in that scheme, as a server speaking only draft-cavage or only RFC 9421 does; `knocks` records them.
 */
import {
  createFederation,
  MemoryKvStore,
  generateCryptoKeyPair,
  signObject,
  signRequest,
  verifyRequest,
  type Federation,
} from "@fedify/fedify";
import { Activity, Endpoints, Person } from "@fedify/vocab";
import { A, B, instanceFetch, type Instance } from "./instances";

export type Spec = "draft-cavage-http-signatures-12" | "rfc9421";

export interface Peer {
  host: string;
  origin: string;
  /** A new actor's id (unique per call): `https://<host>/users/<name>`. */
  actor(name?: string): string;
  /** Documents served at their id (notes the inbox fetches by URL); a function answers the request itself. */
  objects: Map<string, unknown>;
  /** POSTs the peer received (A's deliveries to it), in order, with their JSON bodies. */
  delivered: { url: string; body: unknown; signed: boolean }[];
  /** Every request the peer answered. */
  requests: string[];
  /** The one signature scheme the peer accepts (null: it checks none). */
  accepts: Spec | null;
  /** With `accepts` set: each request, the scheme it was signed in (null: unsigned) and whether it was let in. */
  knocks: { method: string; path: string; spec: Spec | null; ok: boolean }[];
  /** Signs and POSTs `activity` (sent as is) to `inbox` on `to`, as `actor` (its id); answers the instance's response. */
  send(
    actor: string,
    activity: unknown,
    opts?: { to?: Instance; inbox?: string; spec?: Spec; signAs?: string },
  ): Promise<Response>;
  /** Answers one request made to the peer's host. */
  handle(req: Request): Promise<Response>;
  /**
   * POSTs `activity` (parsed as a Fedify activity) with an Object Integrity Proof made with the actor's Ed25519
   * key (FEP-8b32) and no HTTP signature.
   */
  sendWithProof(actor: string, activity: unknown, opts?: { to?: Instance; inbox?: string }): Promise<Response>;
  /** Gives the actor new key pairs under the same key ids (a key rotated in place). */
  rotate(actor: string): Promise<void>;
  /** An actor's key pairs (RSA for HTTP and Linked Data signatures, Ed25519 for proofs), for hand-made signatures. */
  keys(actor: string): Promise<{ rsa: CryptoKeyPair; ed: CryptoKeyPair }>;
  /** Routes the global fetch to this peer and the instances; returns the function that puts the previous back. */
  route(others?: Peer[]): () => void;
}

let counter = 0;

/**
 * An RSA key pair for a test actor: 2048 bits, the size Mastodon, Pleroma and Starling's own actors use. Fedify's
 * `generateCryptoKeyPair` makes 4096-bit keys, 1.3 s each on the 2-core development machine (two federation
 * files went from 37 s to 10.5 s with 2048).
 */
export const rsaKeyPair = () =>
  crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  ) as Promise<CryptoKeyPair>;

export function createPeer(host = "peer.example"): Peer {
  const origin = `https://${host}`;
  const keys = new Map<string, Promise<CryptoKeyPair[]>>();
  const keyPairs = (name: string) => {
    let hit = keys.get(name);
    if (!hit) {
      hit = Promise.all([rsaKeyPair(), generateCryptoKeyPair("Ed25519")]);
      keys.set(name, hit);
    }
    return hit;
  };
  const federation: Federation<void> = createFederation<void>({
    kv: new MemoryKvStore(),
    origin,
    allowPrivateAddress: true,
  });
  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (!keys.has(identifier)) return null;
      const pairs = await ctx.getActorKeyPairs(identifier);
      return new Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        name: `Peer ${identifier}`,
        summary: "<p>A remote <script>alert(1)</script>actor</p>",
        url: new URL(`/@${identifier}`, origin),
        inbox: ctx.getInboxUri(identifier),
        endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
        followers: new URL(`/users/${identifier}/followers`, origin),
        // An outbox only when a test serves one (`objects`), so other tests fetch nothing more.
        outbox: objects.has(`${origin}/users/${identifier}/outbox`)
          ? new URL(`/users/${identifier}/outbox`, origin)
          : null,
        publicKey: pairs[0]!.cryptographicKey,
        assertionMethods: pairs.map((k) => k.multikey),
      });
    })
    .setKeyPairsDispatcher((_ctx, identifier) => keyPairs(identifier));
  // Deliveries are recorded by the fetch hook; the listeners only make the inbox exist.
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox");

  const objects = new Map<string, unknown>();
  const delivered: Peer["delivered"] = [];
  const requests: string[] = [];

  const knocks: Peer["knocks"] = [];
  /** Whether `req` is signed in the accepted scheme by a key that verifies (fetched from its owner's server). */
  async function admitted(req: Request, accepts: Spec): Promise<boolean> {
    const url = new URL(req.url);
    const spec: Spec | null = req.headers.has("signature-input")
      ? "rfc9421"
      : req.headers.has("signature")
        ? "draft-cavage-http-signatures-12"
        : null;
    let ok = false;
    if (spec === accepts) {
      const ctx = federation.createContext(new URL(origin), undefined);
      const key = await verifyRequest(req.clone(), {
        spec,
        documentLoader: ctx.documentLoader,
        contextLoader: ctx.contextLoader,
      }).catch(() => null);
      ok = key !== null;
    }
    knocks.push({ method: req.method, path: url.pathname, spec, ok });
    return ok;
  }

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    requests.push(`${req.method} ${url.pathname}`);
    if (peer.accepts && !(await admitted(req, peer.accepts)))
      return Response.json({ error: "Request not signed" }, { status: 401 });
    if (req.method === "POST" && /\/inbox$/.test(url.pathname)) {
      const body = await req
        .clone()
        .json()
        .catch(() => null);
      delivered.push({
        url: req.url,
        body,
        signed: req.headers.has("signature") || req.headers.has("signature-input"),
      });
      return new Response(null, { status: 202 });
    }
    const doc = objects.get(url.href.replace(/#.*$/, ""));
    if (typeof doc === "function") return (doc as () => Response | Promise<Response>)();
    if (doc) return new Response(JSON.stringify(doc), { headers: { "Content-Type": "application/activity+json" } });
    return federation.fetch(req, { contextData: undefined });
  }

  const peer: Peer = {
    host,
    origin,
    objects,
    delivered,
    requests,
    accepts: null,
    knocks,
    handle,
    actor(name) {
      const id = name ?? `u${Date.now().toString(36)}${counter++}`;
      void keyPairs(id);
      return `${origin}/users/${id}`;
    },
    async send(actor, activity, opts = {}) {
      const to = opts.to ?? A;
      const name = new URL(opts.signAs ?? actor).pathname.split("/").pop()!;
      const ctx = federation.createContext(new URL(origin), undefined);
      const pairs = await ctx.getActorKeyPairs(name);
      // Fedify 2.3 signs HTTP requests with RSA only (its RFC 9421 signer refuses Ed25519); the Ed25519 key is
      // published for Object Integrity Proofs.
      const pair = pairs[0]!;
      const req = new Request(`${to.origin}${opts.inbox ?? "/inbox"}`, {
        method: "POST",
        headers: { "Content-Type": "application/activity+json", Accept: "application/activity+json" },
        body: JSON.stringify(activity),
      });
      const signed = await signRequest(req, pair.privateKey, pair.keyId, {
        spec: opts.spec ?? "draft-cavage-http-signatures-12",
      });
      return instanceFetch(to, signed);
    },
    async sendWithProof(actor, activity, opts = {}) {
      const to = opts.to ?? A;
      const name = new URL(actor).pathname.split("/").pop()!;
      const ctx = federation.createContext(new URL(origin), undefined);
      const pair = (await ctx.getActorKeyPairs(name))[1]!;
      const parsed = await Activity.fromJsonLd(activity, {
        contextLoader: ctx.contextLoader,
        documentLoader: ctx.documentLoader,
      });
      // The proof names the Multikey (`#multikey-2` in `assertionMethod`), not the CryptographicKey id.
      const signed = await signObject(parsed, pair.privateKey, pair.multikey.id!, {
        contextLoader: ctx.contextLoader,
        documentLoader: ctx.documentLoader,
      });
      const body = JSON.stringify(await signed.toJsonLd({ contextLoader: ctx.contextLoader }));
      const req = new Request(`${to.origin}${opts.inbox ?? "/inbox"}`, {
        method: "POST",
        headers: { "Content-Type": "application/activity+json" },
        body,
      });
      return instanceFetch(to, req);
    },
    async rotate(actor) {
      const pairs = Promise.all([rsaKeyPair(), generateCryptoKeyPair("Ed25519")]);
      keys.set(new URL(actor).pathname.split("/").pop()!, pairs);
      await pairs;
    },
    async keys(actor) {
      const [rsa, ed] = await keyPairs(new URL(actor).pathname.split("/").pop()!);
      return { rsa: rsa!, ed: ed! };
    },
    route(others = []) {
      const previous = globalThis.fetch;
      const peers = [peer, ...others];
      globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
        const req = new Request(input, init);
        const url = new URL(req.url);
        const p = peers.find((x) => url.protocol === "https:" && url.host === x.host);
        if (p) return p.handle(req);
        const inst = [A, B].find((i) => url.protocol === "https:" && url.host === i.domain);
        if (inst) return instanceFetch(inst, req);
        return previous(input, init);
      }) as typeof fetch;
      return () => {
        globalThis.fetch = previous;
      };
    },
  };
  return peer;
}
