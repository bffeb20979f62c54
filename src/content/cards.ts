/**
 * Link previews ("cards"): fetch a page once, read its Open Graph / Twitter / plain HTML metadata with
 * HTMLRewriter, and shape it the way Mastodon and Pleroma clients expect.
 *
 * Everything here is defensive: only public http(s) URLs are fetched, redirects are followed by hand (each
 * hop re-checked), the body is cut at `maxBytes` and reading stops at <body>, a time budget bounds the
 * whole thing, and any failure yields null instead of throwing.
 */

import { decodeEntities } from "./entities";

export interface CardData {
  /** Canonical URL: og:url when it is a same-site http(s) URL, else the fetched URL after redirects. */
  url: string;
  /** og:title, else twitter:title, else <title>; whitespace-collapsed, at most 300 characters. */
  title: string;
  /** og:description, else twitter:description, else meta name=description; "" if none; at most 1000 characters. */
  description: string;
  /** og:image (or twitter:image) resolved against the page URL; http(s) only. */
  image: string | null;
  /** "link" unless og:type says video or photo. */
  type: "link" | "photo" | "video" | "rich";
  /** og:site_name, else the host name. */
  provider_name: string;
  /** Origin of the page, e.g. "https://example.org". */
  provider_url: string;
  /** article:author or meta name=author, else "". */
  author_name: string;
  /** Always "": no embeds. */
  html: string;
  /** og:image:width if numeric, else 0. */
  width: number;
  /** og:image:height if numeric, else 0. */
  height: number;
  /** Every og:* meta seen (first value wins), keyed without the "og:" prefix: "title", "image", "image:width"… */
  opengraph: Record<string, string>;
}

export interface FetchCardOptions {
  /** Used instead of the global fetch (tests, service bindings). Called once per hop with a GET Request. */
  fetcher?: (input: Request) => Promise<Response>;
  /** Budget for the whole operation, redirects and body included. Default 5000. */
  timeoutMs?: number;
  /** Only this many bytes of the body are read and parsed. Default 1 000 000. */
  maxBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MAX_BYTES = 1_000_000;
const MAX_REDIRECTS = 3;
const MAX_TITLE = 300;
const MAX_DESCRIPTION = 1000;
const MAX_SHORT_FIELD = 300;
const MAX_OPENGRAPH_KEYS = 100;
const MAX_OPENGRAPH_VALUE = 2000;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
const REQUEST_HEADERS = { Accept: "text/html,application/xhtml+xml", "User-Agent": "Starling (link preview)" };

// ---------------------------------------------------------------------------------------------------------
// Which URLs may be fetched
// ---------------------------------------------------------------------------------------------------------

/** True only for http(s) URLs whose host is a public name or a public IP address. */
export function isFetchableUrl(url: string): boolean {
  if (typeof url !== "string") return false;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return false;
  if (u.username !== "" || u.password !== "") return false;
  return isPublicHost(u.hostname);
}

/** `hostname` as serialised by the WHATWG URL parser (lowercase, IPv4 numeric forms already dotted, IPv6 in brackets). */
function isPublicHost(hostname: string): boolean {
  if (hostname.startsWith("[")) {
    if (!hostname.endsWith("]")) return false;
    const groups = parseIPv6(hostname.slice(1, -1));
    return groups !== null && isPublicIPv6(groups);
  }
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host === "") return false;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) {
    const ip = parseIPv4(host);
    return ip !== null && isPublicIPv4(ip);
  }
  if (!host.includes(".")) return false; // bare single-label names (and "localhost")
  for (const suffix of ["localhost", "local", "internal", "home.arpa"]) {
    if (host === suffix || host.endsWith(`.${suffix}`)) return false;
  }
  return true;
}

function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let ip = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    ip = ip * 256 + n;
  }
  return ip;
}

/** [network, prefix length] pairs that are not publicly routable. */
const REFUSED_IPV4: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // TEST-NET-1
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // TEST-NET-2
  ["203.0.113.0", 24], // TEST-NET-3
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, includes 255.255.255.255
  ["255.255.255.255", 32], // limited broadcast
];

const REFUSED_IPV4_RANGES = REFUSED_IPV4.map(([net, bits]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { net: parseIPv4(net)! & mask, mask };
});

function isPublicIPv4(ip: number): boolean {
  return !REFUSED_IPV4_RANGES.some(({ net, mask }) => ((ip & mask) >>> 0) === net >>> 0);
}

/** Eight 16-bit groups, or null. Accepts the compressed form and a dotted IPv4 tail. No zone ids. */
function parseIPv6(text: string): number[] | null {
  let s = text.toLowerCase();
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const v4 = parseIPv4(dotted[2]);
    if (v4 === null) return null;
    s = `${dotted[1]}${Math.floor(v4 / 0x10000).toString(16)}:${(v4 % 0x10000).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const toGroups = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    for (const g of part.split(":")) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = toGroups(halves[0]);
  const tail = halves.length === 2 ? toGroups(halves[1]) : [];
  if (head === null || tail === null) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

function isPublicIPv6(g: number[]): boolean {
  const v4At = (i: number) => g[i] * 0x10000 + g[i + 1];
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d, IPv4-mapped: as public as the IPv4 address inside.
  if (zero(0, 5) && g[5] === 0xffff) return isPublicIPv4(v4At(6));
  // 64:ff9b::a.b.c.d, well-known NAT64 prefix: likewise.
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return isPublicIPv4(v4At(6));
  // Everything outside 2000::/3 (global unicast) is special: ::, ::1, ::/96, fc00::/7, fe80::/10, fec0::/10,
  // ff00::/8, 100::/64, 64:ff9b:1::/48…
  if ((g[0] & 0xe000) !== 0x2000) return false;
  if (g[0] === 0x2001 && g[1] === 0x0000) return false; // Teredo
  if (g[0] === 0x2001 && g[1] === 0x0002 && g[2] === 0) return false; // benchmarking
  if (g[0] === 0x2001 && g[1] === 0x0db8) return false; // documentation
  if (g[0] === 0x3fff && g[1] < 0x1000) return false; // documentation (3fff::/20)
  if (g[0] === 0x2002) return isPublicIPv4(v4At(1)); // 6to4 embeds an IPv4 address
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// Fetching
// ---------------------------------------------------------------------------------------------------------

/**
 * Fetches the page once and parses Open Graph / Twitter / HTML meta with HTMLRewriter.
 * Returns null when the URL (or any redirect target) is not fetchable, the response is not 2xx, the content
 * type is not text/html or application/xhtml+xml, the page has no title at all, or the time budget runs out.
 * Never throws.
 */
export async function fetchCard(url: string, opts?: FetchCardOptions): Promise<CardData | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    if (!isFetchableUrl(url)) return null;
    const fetcher = opts?.fetcher ?? ((req: Request) => fetch(req));
    const timeoutMs = finiteOr(opts?.timeoutMs, DEFAULT_TIMEOUT_MS);
    const maxBytes = finiteOr(opts?.maxBytes, DEFAULT_MAX_BYTES);
    const controller = new AbortController();
    const expired = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error("link preview timed out"));
        resolve(null);
      }, Math.max(0, timeoutMs));
    });
    // A fetcher that ignores the signal cannot hold us past the deadline: the race settles on the timer.
    const work = fetchAndParse(url, fetcher, controller.signal, Math.max(0, Math.floor(maxBytes))).catch(() => null);
    return await Promise.race([work, expired]);
  } catch {
    return null;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

function finiteOr(value: number | undefined, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function discard(res: Response): void {
  try {
    res.body?.cancel().catch(() => {});
  } catch {
    // already locked or consumed
  }
}

async function fetchAndParse(
  startUrl: string,
  fetcher: (input: Request) => Promise<Response>,
  signal: AbortSignal,
  maxBytes: number,
): Promise<CardData | null> {
  let current = new URL(startUrl).href;
  let res: Response | undefined;
  for (let hop = 0; ; hop++) {
    if (signal.aborted) return null;
    const req = new Request(current, { method: "GET", headers: REQUEST_HEADERS, redirect: "manual", signal });
    res = await fetcher(req);
    if (signal.aborted) {
      discard(res);
      return null;
    }
    if (!REDIRECT_STATUSES.has(res.status)) break;
    discard(res);
    if (hop >= MAX_REDIRECTS) return null;
    const location = res.headers.get("location");
    if (!location) return null;
    let next: string;
    try {
      next = new URL(location, current).href;
    } catch {
      return null;
    }
    if (!isFetchableUrl(next)) return null;
    current = next;
  }

  if (res.status < 200 || res.status > 299) {
    discard(res);
    return null;
  }
  const contentType = res.headers.get("content-type") ?? "";
  const mediaType = contentType.split(";")[0].trim().toLowerCase();
  if (!HTML_TYPES.has(mediaType) || !res.body) {
    discard(res);
    return null;
  }

  const page = await parseHead(res, contentType, maxBytes, signal);
  if (page === null || signal.aborted) return null;
  return buildCard(new URL(current), page);
}

// ---------------------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------------------

interface ParsedHead {
  /** Lowercased property/name -> first content seen. */
  meta: Map<string, string>;
  /** The first <title>'s text, entities decoded. */
  title: string;
}

async function parseHead(res: Response, contentType: string, maxBytes: number, signal: AbortSignal): Promise<ParsedHead | null> {
  const meta = new Map<string, string>();
  let titleRaw = "";
  let titleState: "before" | "inside" | "done" = "before";
  let inBody = false;

  // Hand the parser at most maxBytes, and nothing once <body> has started: everything wanted lives in <head>.
  const source = res.body!.getReader();
  signal.addEventListener("abort", () => source.cancel().catch(() => {}), { once: true });
  let received = 0;
  const limited = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (inBody || received >= maxBytes || signal.aborted) {
        controller.close();
        source.cancel().catch(() => {});
        return;
      }
      const { done, value } = await source.read();
      if (done) {
        controller.close();
        return;
      }
      const remaining = maxBytes - received;
      const chunk = value.byteLength > remaining ? value.subarray(0, remaining) : value;
      received += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel(reason) {
      return source.cancel(reason).catch(() => {});
    },
  });

  const rewriter = new HTMLRewriter()
    .on("body", {
      element() {
        inBody = true;
      },
    })
    .on("meta", {
      element(el) {
        if (inBody) return;
        const content = el.getAttribute("content");
        if (content === null) return;
        for (const attr of ["property", "name"]) {
          const key = el.getAttribute(attr)?.trim().toLowerCase();
          if (key && !meta.has(key)) meta.set(key, decodeEntities(content, true));
        }
      },
    })
    .on("title", {
      element(el) {
        if (inBody || titleState !== "before") return;
        titleState = "inside";
        el.onEndTag(() => {
          titleState = "done";
        });
      },
      text(chunk) {
        if (titleState !== "inside") return;
        titleRaw += chunk.text;
        if (chunk.lastInTextNode) titleState = "done";
      },
    });

  const headers = { "content-type": await usableContentType(contentType) };
  const output = rewriter.transform(new Response(limited, { headers }));
  const reader = output.body!.getReader();
  while (!(await reader.read()).done) {
    if (signal.aborted) {
      reader.cancel().catch(() => {});
      return null;
    }
  }
  return { meta, title: decodeEntities(titleRaw, false) };
}

/** The page's content type if HTMLRewriter accepts its charset, else plain UTF-8 HTML. */
async function usableContentType(contentType: string): Promise<string> {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
  if (!charset || charset === "utf-8" || charset === "utf8") return "text/html; charset=utf-8";
  const candidate = `text/html; charset=${charset}`;
  try {
    await new HTMLRewriter().transform(new Response("<p></p>", { headers: { "content-type": candidate } })).arrayBuffer();
    return candidate;
  } catch {
    return "text/html; charset=utf-8";
  }
}

function buildCard(page: URL, head: ParsedHead): CardData | null {
  const get = (...keys: string[]): string => {
    for (const key of keys) {
      const value = clean(head.meta.get(key) ?? "");
      if (value) return value;
    }
    return "";
  };

  const title = truncate(get("og:title", "twitter:title") || clean(head.title), MAX_TITLE);
  if (!title) return null;

  let image: string | null = null;
  for (const key of ["og:image", "og:image:secure_url", "og:image:url", "twitter:image", "twitter:image:src"]) {
    image = httpUrl(head.meta.get(key)?.trim() ?? "", page);
    if (image) break;
  }

  const ogType = get("og:type").toLowerCase();
  const type: CardData["type"] = /^video(\.|$)/.test(ogType) ? "video" : /^(photo|image)(\.|$)/.test(ogType) ? "photo" : "link";

  const opengraph: Record<string, string> = {};
  let keys = 0;
  for (const [key, value] of head.meta) {
    if (!key.startsWith("og:") || key.length === 3) continue;
    if (++keys > MAX_OPENGRAPH_KEYS) break;
    opengraph[key.slice(3)] = truncate(value.trim(), MAX_OPENGRAPH_VALUE);
  }

  return {
    url: canonicalUrl(head.meta.get("og:url")?.trim() ?? "", page),
    title,
    description: truncate(get("og:description", "twitter:description", "description"), MAX_DESCRIPTION),
    image,
    type,
    provider_name: truncate(get("og:site_name") || page.hostname, MAX_SHORT_FIELD),
    provider_url: page.origin,
    author_name: truncate(get("article:author", "author"), MAX_SHORT_FIELD),
    html: "",
    width: image ? dimension(head.meta.get("og:image:width")) : 0,
    height: image ? dimension(head.meta.get("og:image:height")) : 0,
    opengraph,
  };
}

/** og:url when it points at the same site (same host, "www." aside) over public http(s); else the page URL. */
function canonicalUrl(ogUrl: string, page: URL): string {
  if (!ogUrl) return page.href;
  try {
    const u = new URL(ogUrl, page);
    const site = (x: URL) => x.host.replace(/^www\./, "");
    if (isFetchableUrl(u.href) && site(u) === site(page)) return u.href;
  } catch {
    // fall through
  }
  return page.href;
}

function httpUrl(value: string, base: URL): string | null {
  if (!value) return null;
  try {
    const u = new URL(value, base);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

function dimension(value: string | undefined): number {
  const v = value?.trim() ?? "";
  if (!/^\d+(\.\d+)?$/.test(v)) return 0;
  const n = Math.round(Number(v));
  return Number.isSafeInteger(n) ? n : 0;
}

/** Control characters dropped, whitespace runs collapsed, trimmed. */
function clean(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B\u000E-\u001F\u007F]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** At most `max` code points (never splits a surrogate pair). */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join("").trimEnd();
}
