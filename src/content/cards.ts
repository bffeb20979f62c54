/**
 * Link previews ("cards"): fetch a page once, read its Open Graph / Twitter / plain HTML metadata with
 * HTMLRewriter, and shape it the way Mastodon and Pleroma clients expect.
 *
 * Everything here is defensive: only public http(s) URLs are fetched, redirects are followed by hand (each
 * hop re-checked), the body is cut at `maxBytes` and reading stops at <body>, a time budget bounds the
 * whole thing, and any failure yields null instead of throwing.
 */

import { isFetchableUrl } from "../lib/outbound";
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
  /**
   * How each hop is fetched (a GET Request, redirects not followed): the SSRF guard's `outboundFetch` in the
   * Worker (which also checks the name's addresses), a fake in tests. Required, so nothing fetches unguarded.
   */
  fetcher: (input: Request) => Promise<Response>;
  /** Budget for the whole operation, redirects and body included. Default 5000. */
  timeoutMs?: number;
  /** Only this many bytes of the body are read and parsed. Default 1 000 000. */
  maxBytes?: number;
  /** The development switch: private and loopback hosts pass the URL checks (ALLOW_PRIVATE_ADDRESS). */
  allowPrivate?: boolean;
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
// Fetching
// ---------------------------------------------------------------------------------------------------------

/**
 * Fetches the page once and parses Open Graph / Twitter / HTML meta with HTMLRewriter.
 * Returns null when the URL (or any redirect target) is not fetchable, the response is not 2xx, the content
 * type is not text/html or application/xhtml+xml, the page has no title at all, or the time budget runs out.
 * Never throws.
 */
export async function fetchCard(url: string, opts: FetchCardOptions): Promise<CardData | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const allowPrivate = opts.allowPrivate === true;
    if (!isFetchableUrl(url, allowPrivate)) return null;
    const fetcher = opts.fetcher;
    const timeoutMs = finiteOr(opts.timeoutMs, DEFAULT_TIMEOUT_MS);
    const maxBytes = finiteOr(opts.maxBytes, DEFAULT_MAX_BYTES);
    const controller = new AbortController();
    const expired = new Promise<null>((resolve) => {
      timer = setTimeout(
        () => {
          controller.abort(new Error("link preview timed out"));
          resolve(null);
        },
        Math.max(0, timeoutMs),
      );
    });
    // A fetcher that ignores the signal cannot hold us past the deadline: the race settles on the timer.
    const work = fetchAndParse(url, fetcher, controller.signal, Math.max(0, Math.floor(maxBytes)), allowPrivate).catch(
      () => null,
    );
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
  allowPrivate: boolean,
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
    if (!isFetchableUrl(next, allowPrivate)) return null;
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

async function parseHead(
  res: Response,
  contentType: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<ParsedHead | null> {
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
    await new HTMLRewriter()
      .transform(new Response("<p></p>", { headers: { "content-type": candidate } }))
      .arrayBuffer();
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
  const type: CardData["type"] = /^video(\.|$)/.test(ogType)
    ? "video"
    : /^(photo|image)(\.|$)/.test(ogType)
      ? "photo"
      : "link";

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
