/**
 * `/.well-known/host-meta` (XRD, RFC 6415) and its JSON form (`/.well-known/host-meta.json`, or `Accept:
 * application/json`): one `lrdd` link whose template is this instance's WebFinger. Phanpy and older servers
 * find WebFinger through it.
 */
export function hostMeta(req: Request, url: URL, base: string): Response | null {
  const p = url.pathname.replace(/\/+$/, "");
  if (p !== "/.well-known/host-meta" && p !== "/.well-known/host-meta.json") return null;
  if (req.method !== "GET" && req.method !== "HEAD") return null;
  const template = `${base}/.well-known/webfinger?resource={uri}`;
  const accept = req.headers.get("accept") ?? "";
  const headers = { "Access-Control-Allow-Origin": "*", Vary: "Accept" };
  if (p.endsWith(".json") || (/json/i.test(accept) && !/xml/i.test(accept))) {
    return Response.json(
      { links: [{ rel: "lrdd", template }] },
      { headers: { ...headers, "Content-Type": "application/jrd+json; charset=utf-8" } },
    );
  }
  const escaped = template.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n  <Link rel="lrdd" template="${escaped}"/>\n</XRD>\n`;
  return new Response(xml, { headers: { ...headers, "Content-Type": "application/xrd+xml; charset=utf-8" } });
}
