/**
 * The one paginator's request side: the page parameters (`pageParams`) and the `Link` header that points at
 * the next (older) and previous (newer) pages. The queries are src/db/paging.ts.
 */
import type { Context } from "hono";
import type { AppEnv } from "./app-env";
import { z } from "@hono/zod-openapi";
import { intParam } from "./params";
import { baseUrl } from "./urls";

/** A carried-on parameter's value at most (longer ones are left out: a header is no place for them). */
const LINK_VALUE_MAX = 200;
/** Parameters carried on at most (arrays count each value). */
const LINK_PARAMS_MAX = 40;
const CURSORS = new Set(["max_id", "since_id", "min_id"]);

/** Page parameters; `limit` defaults to `defaultLimit` and is capped at twice that, as Mastodon does. */
export function pageParams(defaultLimit: number) {
  const max = defaultLimit * 2;
  return {
    max_id: z.string().optional(),
    since_id: z.string().optional(),
    min_id: z.string().optional(),
    limit: intParam()
      .optional()
      .transform((n) => (n === undefined || n < 1 ? defaultLimit : Math.min(n, max))),
  };
}

/**
 * Cursors past a page's rows, for a page read by a bounded walk that stopped before filling it
 * (services/timelines.ts `walkEnd`): the next page starts past what was walked, not after the last row found.
 */
export interface WalkedPast {
  older?: string;
  newer?: string;
}

/**
 * Sets `Link: <…max_id=oldest>; rel="next", <…min_id=newest>; rel="prev"` from the cursors of the rows
 * answered (newest first), or from `past` when given (an empty page then still links on), carrying on the request's other parameters that the route declares (`types[]`,
 * `only_media`, …), each short: never whatever else the query held, so a request cannot make a huge header.
 */
export function setLinkHeader(c: Context<AppEnv>, cursors: string[], past: WalkedPast = {}): void {
  const oldest = past.older ?? cursors.at(-1) ?? past.newer;
  const newest = past.newer ?? cursors[0] ?? past.older;
  if (oldest === undefined || newest === undefined) return;
  const request = new URL(c.req.url);
  const known = c.get("paramNames") ?? new Set<string>();
  // The public origin, not the one the request reached: behind a TLS front (or a local `wrangler dev`) that is
  // http://, and a browser app with a CSP of `connect-src https:` refuses to follow an http:// next page.
  const url = new URL(baseUrl(c) + request.pathname);
  let kept = 0;
  for (const [key, value] of request.searchParams) {
    const name = key.replace(/\[\]$/, "");
    if (CURSORS.has(name) || !known.has(name) || value.length > LINK_VALUE_MAX || kept >= LINK_PARAMS_MAX) continue;
    url.searchParams.append(key, value);
    kept++;
  }
  const next = new URL(url);
  next.searchParams.set("max_id", oldest);
  const prev = new URL(url);
  prev.searchParams.set("min_id", newest);
  c.header("Link", `<${next}>; rel="next", <${prev}>; rel="prev"`);
}
