/**
 * Which HTTP signature scheme Starling signs with, per host: the "double knock" of the SWICG's ActivityPub HTTP
 * Signature report (https://swicg.github.io/activitypub-http-signature/#how-to-upgrade-supported-versions), as
 * Fedify does it. A request is signed with the scheme the host accepted last; on a 400 or 401 it is signed with
 * the other one and sent once more (refused again: the first answer counts, unlike Fedify, which answers the
 * second); the scheme of a 2xx answer is remembered (`instances.signature_spec`, written
 * only when it changes).
 *
 * Fedify's own `doubleKnock` (behind `sendActivity` and `getAuthenticatedDocumentLoader`) is not exported and
 * sends with the global `fetch`, past Starling's SSRF guard, size cap and meter (lib/outbound.ts); so the knock is
 * here, signing with Fedify's `signRequest` and remembering through Fedify's `HttpMessageSignaturesSpecDeterminer`.
 *
 * A host never seen is knocked at with draft-cavage, which every server verifies: a server that checks signatures
 * only after answering 202 (Pixelfed; Pleroma, which then refetches the activity, and cannot for a follower-only
 * one) would silently lose what an RFC 9421 first knock sent. A host that refuses draft-cavage is answered in
 * RFC 9421 from then on.
 */
import { signRequest, type HttpMessageSignaturesSpec, type HttpMessageSignaturesSpecDeterminer } from "@fedify/fedify";
import { sql } from "drizzle-orm";
import type { DB } from "../../db/client";
import { bindingOf } from "../../db/binding";

export type Spec = HttpMessageSignaturesSpec;
export type SpecMemory = HttpMessageSignaturesSpecDeterminer;

export const CAVAGE: Spec = "draft-cavage-http-signatures-12";
export const RFC9421: Spec = "rfc9421";
/** The scheme tried first with a host whose choice is not known. */
export const FIRST_KNOCK: Spec = CAVAGE;

const SPECS: readonly string[] = [CAVAGE, RFC9421];
/** A stored value read back (anything else is not known). */
export const specOf = (v: unknown): Spec | null => (typeof v === "string" && SPECS.includes(v) ? (v as Spec) : null);

/**
 * Sends `request` signed as `identity` in the scheme `memory` names for its host, and once more in the other
 * scheme if that one is refused (400, 401; refused again, the first answer is the one answered); remembers the
 * scheme of a 2xx answer. `send` makes the request (the
 * SSRF guard); `body` is a POST's body, for its digest.
 */
export async function knock(
  request: Request,
  identity: { keyId: URL; privateKey: CryptoKey },
  memory: SpecMemory,
  send: (signed: Request) => Promise<Response>,
  body?: ArrayBuffer,
): Promise<Response> {
  const origin = new URL(request.url).origin;
  let spec = await memory.determineSpec(origin);
  const sign = (s: Spec) => signRequest(request.clone(), identity.privateKey, identity.keyId, { spec: s, body });
  let res = await send(await sign(spec));
  if (refusedSignature(res)) {
    await res.body?.cancel().catch(() => {});
    const first = res;
    spec = spec === RFC9421 ? CAVAGE : RFC9421;
    res = await send(await sign(spec));
    // Refused in both schemes: the first answer stands, in the scheme the host speaks. A server speaking only
    // draft-cavage answers 401 to any RFC 9421 signature, which would turn its 400 (an activity it will never
    // take; GoToSocial says not to retry) into two days of retries holding the actor's later deliveries.
    if (refusedSignature(res)) {
      await res.body?.cancel().catch(() => {});
      return new Response(null, { status: first.status, statusText: first.statusText, headers: first.headers });
    }
  }
  if (res.status >= 200 && res.status < 300) await memory.rememberSpec(origin, spec);
  return res;
}

/** An answer that may mean the signature's scheme was not understood. */
const refusedSignature = (res: Response) => res.status === 400 || res.status === 401;

/** What one delivery run knows of its host's scheme: read with the run's rows, written with its outcome. */
export function runMemory(stored: Spec | null): SpecMemory & { learned(): Spec | null } {
  let current = stored;
  return {
    determineSpec: () => current ?? FIRST_KNOCK,
    rememberSpec: (_origin, spec) => {
      current = spec;
    },
    learned: () => (current !== stored ? current : null),
  };
}

/** Hosts' schemes as known in this isolate, per database (null: the host has none stored). */
const known = new WeakMap<object, Map<string, Spec | null>>();

/**
 * The hosts' schemes for signed GETs: read from `instances` once per host per isolate, written only when a host
 * answered in another scheme than the one stored.
 */
export function hostSpecs(d: DB): SpecMemory {
  const binding = bindingOf(d.$client);
  let map = known.get(binding);
  if (!map) known.set(binding, (map = new Map()));
  const cache = map;
  return {
    async determineSpec(origin) {
      const host = new URL(origin).host;
      if (!cache.has(host)) {
        const row = await d.get<{ s: string | null }>(
          sql`SELECT signature_spec AS s FROM instances WHERE domain = ${host}`,
        );
        cache.set(host, specOf(row?.s));
      }
      return cache.get(host) ?? FIRST_KNOCK;
    },
    async rememberSpec(origin, spec) {
      const host = new URL(origin).host;
      if (cache.get(host) === spec) return;
      cache.set(host, spec);
      await d.run(rememberSql(host, spec, Date.now()));
    },
  };
}

/** Stores `host`'s scheme, writing nothing when it is already the one stored. */
export const rememberSql = (host: string, spec: Spec, t: number) =>
  sql`INSERT INTO instances (domain, signature_spec, created_at) VALUES (${host}, ${spec}, ${t})
    ON CONFLICT (domain) DO UPDATE SET signature_spec = excluded.signature_spec WHERE signature_spec IS NOT excluded.signature_spec`;
