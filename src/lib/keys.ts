/** Key material: RSA signing keys for ActivityPub actors. */
import { base64url } from "./crypto";

function pem(label: string, der: ArrayBuffer): string {
  const b64 = base64url(der).replace(/-/g, "+").replace(/_/g, "/");
  const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4);
  return `-----BEGIN ${label}-----\n${padded.match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`;
}

/** The DER bytes of a PEM block (what `crypto.subtle.importKey("spki" | "pkcs8", …)` takes). */
export function pemToDer(pemText: string): Uint8Array {
  return Uint8Array.from(atob(pemText.replace(/-----[^-]+-----|\s/g, "")), (c) => c.charCodeAt(0));
}

/** An RSA-2048 key pair as PEM (SPKI public, PKCS#8 private), as HTTP Signatures in the fediverse expect. */
export async function generateActorKeyPair(): Promise<{ publicKey: string; privateKey: string }> {
  const pair = (await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const spki = (await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer;
  const pkcs8 = (await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer;
  return { publicKey: pem("PUBLIC KEY", spki), privateKey: pem("PRIVATE KEY", pkcs8) };
}

/** An Ed25519 key for Object Integrity Proofs, as a private JWK (it carries `x`, the public key). */
export async function generateProofKey(): Promise<JsonWebKey> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  return (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
}
