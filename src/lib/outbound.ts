/**
 * The one way out: link cards, Web Push and Fedify's document loaders (plain and signed) go through
 * `outboundFetch`, and so do inbox deliveries (src/federation/delivery/). Not these: WebFinger lookups (Fedify's
 * own, equivalent address check).
 * `outboundFetch` refuses URLs that reach
 * private, loopback, link-local, CGNAT, unique-local or otherwise non-public addresses, checks every redirect
 * hop, bounds the time and caps the body. `ALLOW_PRIVATE_ADDRESS=true` (development only) lifts the address
 * check, nothing else.
 *
 * What is checked: numeric hosts (IPv4, IPv6, IPv4-mapped/NAT64/6to4 forms) against the refused ranges; names
 * like `localhost`, `*.local`, `*.internal`, single labels are refused outright; any other name is resolved
 * with `node:dns` (in workerd: DNS over HTTPS to cloudflare-dns.com) and refused unless it has at least one
 * address and all its addresses are public. Not checked: the address workerd's own `fetch` connects to is
 * resolved again by the runtime (a name that changes its answer between the two lookups is not caught; on
 * Cloudflare a Worker's subrequests cannot reach private networks anyway).
 */
import { count } from "./meter";
import { lookup } from "node:dns/promises";
import type { Env } from "../env";

/** The development switch, off unless the variable is exactly "true". */
export function allowPrivateAddress(env: Pick<Env, "ALLOW_PRIVATE_ADDRESS">): boolean {
  return env.ALLOW_PRIVATE_ADDRESS === "true";
}

export class OutboundRefused extends Error {
  override name = "OutboundRefused";
}

// ---------------------------------------------------------------------------------------------------------
// Which URLs may be fetched
// ---------------------------------------------------------------------------------------------------------

/**
 * True only for http(s) URLs without credentials whose host is a public name or a public IP address (a
 * name is not resolved here: `checkOutboundUrl` does that). With `allowPrivate` (development) any host passes.
 */
export function isFetchableUrl(url: string, allowPrivate = false): boolean {
  if (typeof url !== "string") return false;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return false;
  if (u.username !== "" || u.password !== "") return false;
  return allowPrivate || isPublicHost(u.hostname);
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
  return !REFUSED_IPV4_RANGES.some(({ net, mask }) => (ip & mask) >>> 0 === net >>> 0);
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
// Resolving and fetching
// ---------------------------------------------------------------------------------------------------------

/** An address as `node:dns` returns it, checked like a numeric host. */
function isPublicAddress(address: string): boolean {
  return address.includes(":")
    ? isPublicHost(`[${address}]`)
    : /^\d+\.\d+\.\d+\.\d+$/.test(address) && isPublicHost(address);
}

const isIpLiteral = (a: string) => /^\d+\.\d+\.\d+\.\d+$/.test(a) || (/^[0-9a-f:.]+$/i.test(a) && a.includes(":"));

/**
 * Throws `OutboundRefused` unless `url` may be fetched: the sync checks, then, for a name, every address it
 * resolves to must be public (and there must be one).
 */
export async function checkOutboundUrl(url: string, allowPrivate: boolean): Promise<void> {
  if (!isFetchableUrl(url, allowPrivate)) throw new OutboundRefused(`refused: ${url}`);
  if (allowPrivate) return;
  const host = new URL(url).hostname;
  if (host.startsWith("[") || /^\d+\.\d+\.\d+\.\d+$/.test(host)) return; // numeric, already checked
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host.replace(/\.+$/, ""), { all: true });
  } catch (e) {
    throw new OutboundRefused(`cannot resolve ${host}: ${(e as Error)?.message ?? e}`);
  }
  // workerd's node:dns also lists CNAME targets as "addresses": only IP literals count, and there must be one.
  const ips = addresses.map((a) => a.address).filter(isIpLiteral);
  if (ips.length === 0) throw new OutboundRefused(`${host} has no address`);
  const bad = ips.find((a) => !isPublicAddress(a));
  if (bad) throw new OutboundRefused(`${host} resolves to a non-public address (${bad})`);
}

export interface OutboundOptions {
  /** The development switch (`allowPrivateAddress(env)`). */
  allowPrivate: boolean;
  /** Budget for the whole exchange, redirects included (the body is read by the caller). Default 10 s. */
  timeoutMs?: number;
  /** Redirects followed (each hop checked); 0 answers the redirect itself. Default 3. */
  maxRedirects?: number;
  /** The body is cut with an error past this many bytes. Default 5 MB. */
  maxBytes?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A response whose body errors once more than `max` bytes were read. */
function capped(res: Response, max: number): Response {
  if (!res.body) return res;
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) {
    res.body.cancel().catch(() => {});
    throw new OutboundRefused(`response larger than ${max} bytes`);
  }
  let seen = 0;
  const limiter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > max) controller.error(new OutboundRefused(`response larger than ${max} bytes`));
      else controller.enqueue(chunk);
    },
  });
  return new Response(res.body.pipeThrough(limiter), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/** `work`, or the signal's reason once it aborts: a fetch that ignores its signal cannot hold us past the deadline. */
function settleBy<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/**
 * `fetch` through the guard: the URL and every redirect target checked, redirects followed by hand (a 303, or
 * a 301/302 after a POST, becomes a GET without body, as browsers do), a timeout for the whole exchange, the
 * body capped. Throws `OutboundRefused` for a refused address or an oversized body, and the fetch's own
 * errors (timeout: an AbortError/TimeoutError).
 */
export async function outboundFetch(
  input: Request | URL | string,
  init: RequestInit | undefined,
  opts: OutboundOptions,
): Promise<Response> {
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? 10_000);
  const first = new Request(input, init);
  const signal = first.signal && !first.signal.aborted ? AbortSignal.any([first.signal, timeout]) : timeout;
  const maxRedirects = opts.maxRedirects ?? 3;
  // The body is read once so it can be sent again on a 307/308.
  const body = first.body ? await first.arrayBuffer() : undefined;
  let method = first.method;
  let url = first.url;
  for (let hop = 0; ; hop++) {
    await checkOutboundUrl(url, opts.allowPrivate);
    count("subrequests");
    const res = await settleBy(
      fetch(url, {
        method,
        headers: first.headers,
        body: method === "GET" || method === "HEAD" ? undefined : body,
        redirect: "manual",
        signal,
      }),
      signal,
    );
    const location = res.headers.get("location");
    if (!REDIRECTS.has(res.status) || !location || maxRedirects === 0) return capped(res, opts.maxBytes ?? 5_000_000);
    await res.body?.cancel().catch(() => {});
    if (hop >= maxRedirects) throw new OutboundRefused(`more than ${maxRedirects} redirects`);
    url = new URL(location, url).href;
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) method = "GET";
  }
}
