/**
 * RSA-2048 key pairs made once per run instead of in every test (issue 43: a federation test file made up to 58,
 * each tens of milliseconds of CPU). vitest.config.ts generates them in Node before the files start and hands them
 * over as the binding `TEST_RSA_KEYS`; here `crypto.subtle.generateKey` hands out the next unused pair for an
 * RSA-2048 signing key (the Worker's actor keys and the test peers' alike), imported with the algorithm, hash,
 * extractability and usages asked for, so the caller gets what a generation would give. Every pair is handed out
 * once per file (a forgery test still signs with a key of its own); past the pool, keys are generated as before.
 */

type RsaKeyAlgorithm = SubtleCryptoGenerateKeyAlgorithm & { publicExponent: Uint8Array };

const SIGNING = new Set(["RSASSA-PKCS1-v1_5", "RSA-PSS"]);
const PUBLIC_USAGES = new Set<string>(["verify", "encrypt", "wrapKey"]);

function isPooled(algorithm: unknown): algorithm is RsaKeyAlgorithm {
  const a = algorithm as Partial<RsaKeyAlgorithm> | null;
  const e = a?.publicExponent;
  return (
    typeof a === "object" &&
    SIGNING.has(String(a?.name)) &&
    a?.modulusLength === 2048 &&
    e instanceof Uint8Array &&
    e.length === 3 &&
    e[0] === 1 &&
    e[1] === 0 &&
    e[2] === 1
  );
}

const der = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

/** `pool`: [SPKI, PKCS#8] pairs, base64 DER. */
export function poolRsaKeys(pool: readonly (readonly [string, string])[]): void {
  if (!Array.isArray(pool) || !pool.length) throw new Error("TEST_RSA_KEYS missing (vitest.config.ts)");
  const subtle = crypto.subtle;
  const generate = subtle.generateKey.bind(subtle);
  let next = 0;
  const pooled = async (algorithm: RsaKeyAlgorithm, extractable: boolean, usages: string[]) => {
    const [spki, pkcs8] = pool[next++];
    const alg = { name: algorithm.name, hash: algorithm.hash as string | SubtleCryptoHashAlgorithm };
    const [publicKey, privateKey] = await Promise.all([
      // A generated pair's public key is always extractable (WebCrypto).
      subtle.importKey(
        "spki",
        der(spki),
        alg,
        true,
        usages.filter((u) => PUBLIC_USAGES.has(u)),
      ),
      subtle.importKey(
        "pkcs8",
        der(pkcs8),
        alg,
        extractable,
        usages.filter((u) => !PUBLIC_USAGES.has(u)),
      ),
    ]);
    return { publicKey, privateKey };
  };
  subtle.generateKey = ((algorithm: unknown, extractable: boolean, usages: string[]) =>
    isPooled(algorithm) && next < pool.length
      ? pooled(algorithm, extractable, usages)
      : generate(algorithm as SubtleCryptoGenerateKeyAlgorithm, extractable, usages)) as typeof subtle.generateKey;
}
