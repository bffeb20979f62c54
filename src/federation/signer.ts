/**
 * Who may speak for an actor. Fedify checks that the signing key belongs to the activity's actor, relying on
 * the key document's own `owner` (or `controller`) claim when it makes one. As a second, simpler rule checked on
 * the raw request before Fedify handles it: a key speaks only for an actor on its own origin (Mastodon, Pleroma,
 * Misskey and GoToSocial keys are all `<actor>#main-key` or on the actor's host), so no server can sign for
 * another server's actors whatever its key documents claim.
 */

/** Key ids named by the request's HTTP signatures (draft-cavage `Signature`, RFC 9421 `Signature-Input`). */
export function signatureKeyIds(headers: Headers): string[] {
  const ids: string[] = [];
  const cavage = headers.get("signature");
  if (cavage && !headers.get("signature-input")) {
    for (const m of cavage.matchAll(/keyId="([^"]*)"/gi)) ids.push(m[1]!);
  }
  const input = headers.get("signature-input");
  if (input) for (const m of input.matchAll(/;\s*keyid="([^"]*)"/gi)) ids.push(m[1]!);
  return ids;
}

const idOf = (v: unknown): string | null =>
  typeof v === "string" ? v : v && typeof v === "object" && typeof (v as { id?: unknown }).id === "string" ? (v as { id: string }).id : null;

const originOf = (u: string | null): string | null => {
  if (!u) return null;
  try {
    return new URL(u).origin;
  } catch {
    return null;
  }
};

/**
 * False when the activity's actor lives on another origin than a key that signs it (an HTTP signature's key,
 * or, without one, an Object Integrity Proof's verification method). True when nothing can be compared
 * (Fedify then refuses what is unsigned).
 */
export function signerMatchesActor(headers: Headers, body: unknown): boolean {
  if (!body || typeof body !== "object") return true;
  const actor = originOf(idOf((body as { actor?: unknown }).actor));
  if (!actor) return true;
  let keys = signatureKeyIds(headers);
  if (keys.length === 0) {
    const proof = (body as { proof?: unknown }).proof;
    keys = (Array.isArray(proof) ? proof : proof ? [proof] : []).flatMap((p) => {
      const m = p && typeof p === "object" ? idOf((p as { verificationMethod?: unknown }).verificationMethod) : null;
      return m ? [m] : [];
    });
  }
  return keys.every((k) => originOf(k) === actor);
}
