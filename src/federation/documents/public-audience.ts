/**
 * The public collection named in full in everything Starling sends or serves (issue 28). Fedify compacts
 * `https://www.w3.org/ns/activitystreams#Public` to `as:Public`, which JSON-LD allows, but many servers and relays
 * compare addressing as plain strings, without JSON-LD processing: a public post arrived at one as a direct
 * message, and an `Update` of a profile was dropped as "not for us". Fedify's own send path rewrites it; Starling
 * builds its bodies itself (federation/delivery/) and serves documents through Fedify's dispatchers, so both
 * pass through here. The contexts Starling uses never redefine `as:` or `Public`, so the rewrite keeps the meaning.
 */
const PUBLIC_IRI = "https://www.w3.org/ns/activitystreams#Public";

/** The addressing properties (and a Follow's object: Mastodon-style relays are followed with the public collection). */
// With the interaction policies' approvals (GoToSocial's and Mastodon 4.5's `interactionPolicy`), read alike.
const ADDRESSING = new Set(["to", "cc", "bto", "bcc", "audience", "automaticApproval", "manualApproval"]);
const isCompact = (v: unknown) => v === "as:Public" || v === "Public";

function rewrite(value: unknown, key: string | null, depth: number): unknown {
  if (typeof value === "string") return key !== null && ADDRESSING.has(key) && isCompact(value) ? PUBLIC_IRI : value;
  if (depth > 64 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => rewrite(v, key, depth + 1));
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) {
    if (k === "@context") out[k] = v;
    else if (k === "object" && record.type === "Follow" && isCompact(v)) out[k] = PUBLIC_IRI;
    else out[k] = rewrite(v, k, depth + 1);
  }
  return out;
}

/** A JSON-LD document with every compact public address written in full. */
export const withFullPublic = <T>(doc: T): T => rewrite(doc, null, 0) as T;

const AP_TYPES = /^application\/(activity\+json|ld\+json)/;

/** A document Fedify served (an actor, an object, a collection page), with the public collection in full. */
export async function servedWithFullPublic(res: Response): Promise<Response> {
  if (!AP_TYPES.test(res.headers.get("content-type") ?? "") || !res.body) return res;
  const text = await res.text();
  if (!text.includes("Public")) return new Response(text, res);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return new Response(text, res);
  }
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify(withFullPublic(doc)), { status: res.status, statusText: res.statusText, headers });
}
