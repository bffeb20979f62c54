/** WebCrypto helpers: random tokens, digests, password hashing. Nothing here keeps a secret in memory. */
const encoder = new TextEncoder();

export function base64url(bytes: ArrayBuffer | Uint8Array): string {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = "";
  for (const b of u8) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromBase64(text: string): Uint8Array {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/").replace(/\s+/g, "");
  const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4);
  const bin = atob(padded);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A random URL-safe secret of `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

export async function sha256(text: string): Promise<string> {
  return base64url(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** SHA-256 of a text as lower-case hex (Mastodon's domain block `digest`). */
export async function sha256Hex(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compares two strings in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  if (x.length !== y.length) return false;
  return crypto.subtle.timingSafeEqual(x, y);
}

// workerd caps PBKDF2 at 100,000 iterations; each 10,000 cost about 2 ms of CPU (bench/README.md, CPU per route).
export const PBKDF2_MAX_ITERATIONS = 100_000;
export const PBKDF2_MIN_ITERATIONS = 10_000;

async function pbkdf2(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256);
  return new Uint8Array(bits);
}

/**
 * `pbkdf2-sha256$<iterations>$<salt>$<hash>`, with a fresh 16-byte salt per password. The cost is the instance's
 * `PASSWORD_ITERATIONS`; a stored hash keeps the count it was made with (`verifyPassword` reads it).
 */
export async function hashPassword(password: string, iterations: number = PBKDF2_MAX_ITERATIONS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await pbkdf2(password, salt, iterations);
  return `pbkdf2-sha256$${iterations}$${base64url(salt)}$${base64url(hash)}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iter, salt, hash] = stored.split("$");
  if (scheme !== "pbkdf2-sha256" || !iter || !salt || !hash) return false;
  const derived = await pbkdf2(password, fromBase64(salt), Number(iter));
  return safeEqual(base64url(derived), hash);
}

/** A hash to compare against when the user does not exist, at the instance's cost, so both paths cost the same. */
export const dummyPasswordHash = (iterations: number = PBKDF2_MAX_ITERATIONS) =>
  `pbkdf2-sha256$${iterations}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;

/**
 * Secrets that must be read back (TOTP secrets): AES-256-GCM under `key` (32 random bytes, base64url), stored as
 * `v1.<iv>.<ciphertext>`. `context` (the owner's id) is bound as additional data, so a sealed value copied to
 * another row does not open.
 */
async function aesKey(key: string, use: "encrypt" | "decrypt") {
  return crypto.subtle.importKey("raw", fromBase64(key), "AES-GCM", false, [use]);
}

export async function sealSecret(key: string, context: string, plain: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(context) },
    await aesKey(key, "encrypt"),
    encoder.encode(plain),
  );
  return `v1.${base64url(iv)}.${base64url(ct)}`;
}

/** The clear value of `sealSecret`, or null when it does not open (wrong key, context or a damaged value). */
export async function openSecret(key: string, context: string, sealed: string): Promise<string | null> {
  const [v, iv, ct] = sealed.split(".");
  if (v !== "v1" || !iv || !ct) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64(iv), additionalData: encoder.encode(context) },
      await aesKey(key, "decrypt"),
      fromBase64(ct),
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}
