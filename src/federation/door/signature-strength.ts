/**
 * What an inbox POST's RFC 9421 signature must cover, as Mastodon requires it (app/lib/signed_request.rb,
 * `verify_signature_strength!`), so that every server that delivers to Mastodon passes: `@method`, `@target-uri`
 * (or `@authority` with `@path`) and `content-digest`. Fedify 2.3 verifies what such a signature covers but
 * requires nothing of it (it checks `Content-Digest` against the body only when covered), so a signature an
 * actor's server once made over `@authority` alone could be replayed with any body. (`created` is already required
 * to name the key: door/authenticate.ts `headerKeyId`.) A draft-cavage signature needs no check here: Fedify's
 * `verifyRequestDraft` already requires `(request-target)`, `date` and, with a body, `digest` (checked against it).
 */
import { decodeDict } from "structured-field-values";

/** What an RFC 9421 signature covers: the component names of its one `Signature-Input` label (null: not one). */
function rfc9421Components(input: string): string[] | null {
  let dict: ReturnType<typeof decodeDict>;
  try {
    dict = decodeDict(input);
  } catch {
    return null;
  }
  const labels = Object.values(dict).filter((item) => Array.isArray(item.value));
  if (labels.length !== 1) return null;
  return (labels[0]!.value as { value: unknown }[]).map((c) => String(c.value).toLowerCase());
}

/** Why a POST's RFC 9421 signature covers too little to take the request as signed; null when it covers enough. */
export function weakPostSignature(headers: Headers): string | null {
  const input = headers.get("signature-input");
  if (!input) return null;
  const covered = rfc9421Components(input);
  if (!covered) return "The HTTP signature is not one signature";
  const has = (c: string) => covered.includes(c);
  if (!has("@method") || !(has("@target-uri") || (has("@authority") && has("@path"))))
    return "The HTTP signature must cover @method and @target-uri";
  if (!has("content-digest")) return "The HTTP signature must cover Content-Digest";
  return null;
}
