/**
 * The instance actor (`/users/internal.fetch`) as a signer: it signs what the instance says rather than one of
 * its users (forwarded reports, `Flag`), and every document Starling fetches (as Mastodon signs its fetches with
 * its representative account), so that servers requiring signed fetches (authorized fetch) answer.
 */
import { config, type Env } from "../../env";
import { pemToDer } from "../../lib/keys";
import { instanceActorKeys } from "../../services/instance-keys";

/**
 * The instance actor's identifier (`/users/internal.fetch`, Pleroma's name for it): local nicknames are
 * `[a-zA-Z0-9_]`, so it can never be a user's.
 */
export const INSTANCE_ACTOR = "internal.fetch";

/** The instance actor's id on `base` (`https://DOMAIN`). */
export const instanceActorUri = (base: string) => new URL(`/users/${INSTANCE_ACTOR}`, base).href;

export interface Signer {
  /** The actor's id; the key is `<id>#main-key`. */
  uri: string;
  key: CryptoKey;
}

const signers = new WeakMap<object, Promise<Signer>>();

/**
 * The instance actor's id and RSA key for these bindings (made on first use, then kept per isolate). Null
 * without DOMAIN: ids are https://DOMAIN/…, so nothing is signed in its name before it is set.
 */
export function instanceSigner(env: Env): Promise<Signer> | null {
  const domain = config(env).domain;
  if (!domain) return null;
  let hit = signers.get(env.DB);
  if (!hit) {
    hit = instanceActorKeys(env).then(async (k) => ({
      uri: instanceActorUri(`https://${domain}`),
      // Fedify's signRequest insists on an extractable key.
      key: await crypto.subtle.importKey(
        "pkcs8",
        pemToDer(k.privateKey),
        { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
        true,
        ["sign"],
      ),
    }));
    hit.catch(() => signers.delete(env.DB));
    signers.set(env.DB, hit);
  }
  return hit;
}
