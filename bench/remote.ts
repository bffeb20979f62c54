/**
 * Remote servers for the federation benches (bench/inbox.ts, bench/cost.ts): HTTP servers on 127.0.0.1 (one port =
 * one host) serving their actors' documents (Mastodon's `Person` with an RSA `publicKey`) and any other object put
 * in `docs`, answering every POST 202; and activities signed as Mastodon signs them.
 */
import { createHash, createSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";

/** What remote hosts were asked: documents they serve (actors, objects), anything else, POSTs. */
export interface Served {
  actor: number;
  other: number;
  posts: number;
}

export interface RemoteHost {
  server: HttpServer;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Documents served, by full URL (origin and path, no query). */
  docs: Map<string, unknown>;
  /** The POSTs received (deliveries), path and body. */
  received: { path: string; body: string }[];
  served: Served;
  close: () => void;
}

/**
 * A remote host. Without `keepAlive` it closes each connection: Node closes idle connections after 5 s, and a fetch
 * that reuses one just closed fails ("Network connection lost"); a failed key fetch is then remembered by Fedify
 * for 10 minutes (401s). `served` may be shared by several hosts.
 */
export async function remoteHost(opts: { keepAlive?: boolean; served?: Served } = {}): Promise<RemoteHost> {
  const docs = new Map<string, unknown>();
  const received: { path: string; body: string }[] = [];
  const served = opts.served ?? { actor: 0, other: 0, posts: 0 };
  const server = createServer((req, res) => {
    if (!opts.keepAlive) res.setHeader("connection", "close");
    if (req.method === "POST") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        served.posts++;
        received.push({ path: req.url ?? "", body: Buffer.concat(chunks).toString() });
        res.writeHead(202).end();
      });
      return;
    }
    req.resume();
    const doc = docs.get(`http://${req.headers.host}${(req.url ?? "").replace(/[?#].*$/, "")}`);
    if (doc) served.actor++;
    else served.other++;
    if (!doc) res.writeHead(404).end();
    else res.writeHead(200, { "content-type": "application/activity+json" }).end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { server, origin, docs, received, served, close: () => server.close() };
}

export interface RemoteActor {
  id: string;
  name: string;
  key: KeyObject;
  document: Record<string, unknown>;
}

export const rsaKeyPair = () => generateKeyPairSync("rsa", { modulusLength: 2048 });

/**
 * An actor of `host`, its document served there (Mastodon's, trimmed to what verifying and storing an account
 * reads). `keys` may be shared by actors that never sign (an RSA key takes ~100 ms to make).
 */
export function remoteActor(
  host: RemoteHost,
  name: string,
  opts: { keys?: ReturnType<typeof rsaKeyPair>; type?: string; displayName?: string } = {},
): RemoteActor {
  const { publicKey, privateKey } = opts.keys ?? rsaKeyPair();
  const id = `${host.origin}/users/${name}`;
  const document = {
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
    id,
    type: opts.type ?? "Person",
    preferredUsername: name,
    name: opts.displayName ?? name,
    summary: "<p>A remote bench actor</p>",
    url: `${host.origin}/@${name}`,
    inbox: `${id}/inbox`,
    outbox: `${id}/outbox`,
    followers: `${id}/followers`,
    following: `${id}/following`,
    endpoints: { sharedInbox: `${host.origin}/inbox` },
    publicKey: { id: `${id}#main-key`, owner: id, publicKeyPem: publicKey.export({ type: "spki", format: "pem" }) },
  };
  host.docs.set(id, document);
  return { id, name, key: privateKey, document };
}

/** Mastodon's signature: draft-cavage over `(request-target) host date digest`, rsa-sha256. */
export function signedHeaders(url: URL, body: string, actor: RemoteActor): Record<string, string> {
  const digest = `SHA-256=${createHash("sha256").update(body).digest("base64")}`;
  const date = new Date().toUTCString();
  const signingString = `(request-target): post ${url.pathname}\nhost: ${url.host}\ndate: ${date}\ndigest: ${digest}`;
  const signature = createSign("sha256").update(signingString).sign(actor.key, "base64");
  return {
    "content-type": "application/activity+json",
    date,
    digest,
    signature: `keyId="${actor.id}#main-key",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="${signature}"`,
  };
}
