/**
 * Content negotiation between people and servers at the same URL. An actor or status URL answers ActivityStreams
 * JSON to servers (federation, mounted in front of the app) and HTML to browsers; an HTML route must never answer
 * a request that asked for ActivityStreams, so it can tell what it would have given instead.
 */
const AS_TYPES = new Set(["application/activity+json", "application/ld+json"]);
const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

/** Media ranges of an Accept header with their weights, in order of preference (ties keep their order). */
function ranges(accept: string): { type: string; q: number }[] {
  return accept
    .split(",")
    .map((part, i) => {
      const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
      const q = params.find((p) => p.startsWith("q="));
      const weight = q ? Number(q.slice(2)) : 1;
      return { type: type ?? "", q: Number.isFinite(weight) ? weight : 0, i };
    })
    .filter((r) => r.type && r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
}

/**
 * True when the request asks for ActivityStreams (`application/activity+json`, `application/ld+json` with any
 * profile) and does not prefer HTML to it: what a fediverse server sends when it fetches an actor or an object.
 */
export function wantsActivityJson(accept: string | undefined | null): boolean {
  if (!accept) return false;
  const list = ranges(accept);
  const as = list.findIndex((r) => AS_TYPES.has(r.type));
  if (as < 0) return false;
  const html = list.findIndex((r) => HTML_TYPES.has(r.type));
  return html < 0 || list[as]!.q > list[html]!.q || (list[as]!.q === list[html]!.q && as < html);
}
