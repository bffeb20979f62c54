/** Instance-wide keys made once and kept in D1: the VAPID key pair for Web Push, a signing secret. */
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import { db, now } from "../db/client";
import { instanceKeys } from "../db/schema";
import { base64url, randomToken, sha256 } from "../lib/crypto";
import { generateActorKeyPair, generateProofKey } from "../lib/keys";

/** Reads `name`, creating it with `make()` on first use; concurrent first uses agree on one value. */
async function getOrCreate(env: Env, name: string, make: () => Promise<string>): Promise<string> {
  const d = db(env);
  const existing = await d.select().from(instanceKeys).where(eq(instanceKeys.name, name)).get();
  if (existing) return existing.value;
  const value = await make();
  const row = await d
    .insert(instanceKeys)
    .values({ name, value, createdAt: now() })
    .onConflictDoUpdate({ target: instanceKeys.name, set: { name: sql`${instanceKeys.name}` } })
    .returning()
    .get();
  return row!.value;
}

export interface VapidKeys {
  /** Uncompressed P-256 point, base64url: what clients pass to `PushManager.subscribe`. */
  publicKey: string;
  /** JWK of the private key. */
  privateJwk: JsonWebKey;
}

const memo = new WeakMap<object, Promise<VapidKeys>>();

export function vapidKeys(env: Env): Promise<VapidKeys> {
  let hit = memo.get(env.DB);
  if (!hit) {
    hit = loadVapid(env);
    hit.catch(() => memo.delete(env.DB));
    memo.set(env.DB, hit);
  }
  return hit;
}

async function loadVapid(env: Env): Promise<VapidKeys> {
  if (env.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY) {
    const pub = Uint8Array.from(atob(env.VAPID_PUBLIC_KEY.replace(/-/g, "+").replace(/_/g, "/")), (c) =>
      c.charCodeAt(0),
    );
    return {
      publicKey: env.VAPID_PUBLIC_KEY,
      privateJwk: {
        kty: "EC",
        crv: "P-256",
        d: env.VAPID_PRIVATE_KEY,
        x: base64url(pub.slice(1, 33)),
        y: base64url(pub.slice(33, 65)),
      },
    };
  }
  const stored = await getOrCreate(env, "vapid", async () => {
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const raw = (await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer;
    const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
    return JSON.stringify({ publicKey: base64url(raw), privateJwk: jwk });
  });
  return JSON.parse(stored) as VapidKeys;
}

/** A random secret for signing short-lived values (captcha answers, backup download links). */
function instanceSecret(env: Env): Promise<string> {
  return getOrCreate(env, "secret", async () => randomToken(32));
}

/** An HMAC-SHA256 of `message` under the instance secret, base64url: what this instance alone can make. */
export async function instanceSignature(env: Env, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(await instanceSecret(env)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return base64url(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message)));
}

/**
 * The instance actor's keys (it signs fetches for the instance): an RSA pair as PEM and an Ed25519 private JWK,
 * made once and kept, like every instance key.
 */
export async function instanceActorKeys(
  env: Env,
): Promise<{ privateKey: string; publicKey: string; proofKey: JsonWebKey }> {
  const stored = await getOrCreate(env, "instance_actor", async () => {
    return JSON.stringify({ ...(await generateActorKeyPair()), proofKey: await generateProofKey() });
  });
  return JSON.parse(stored);
}

/**
 * The AES-256 key TOTP secrets are sealed with (`sealSecret`): the Worker secret `SECRETS_KEY` when set (then a copy
 * of the database alone opens nothing), else a random key made once and kept in `instance_keys`.
 */
export function secretsKey(env: Env): Promise<string> {
  // Any string will do as the Worker secret: its SHA-256 is the key.
  if (env.SECRETS_KEY) return sha256(env.SECRETS_KEY);
  return getOrCreate(env, "secrets_key", async () => randomToken(32));
}
