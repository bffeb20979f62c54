/**
 * The edge cache (Cache API): answers the same for everyone, kept per instance origin under `/__edge/<name>`.
 * Deployed, each data centre has its own copy; locally (wrangler dev, tests) workerd keeps one.
 */
import type { Context } from "hono";
import { baseUrl } from "./urls";
import { background } from "../effects";

export const edgeCache = (): Cache | null =>
  typeof caches === "undefined" ? null : (caches as unknown as { default: Cache }).default;

export const edgeKey = (c: Context, name: string) => new Request(`${baseUrl(c)}/__edge/${name}`);

/**
 * A JSON value the same for everyone, made by `make` at most once per `ttl` seconds per data centre (0: every
 * time; a function: the value says how long it keeps). Stored after the response; a cache that fails is a miss.
 */
export async function edgeCached<T>(
  c: Context,
  name: string,
  ttl: number | ((value: T) => number),
  make: () => Promise<T>,
): Promise<T> {
  const cache = typeof ttl === "function" || ttl > 0 ? edgeCache() : null;
  if (!cache) return make();
  const key = edgeKey(c, name);
  const hit = await cache.match(key).catch(() => undefined);
  if (hit) return (await hit.json()) as T;
  const value = await make();
  // How long is the value's to say, when the caller asks (0: not kept).
  const seconds = typeof ttl === "function" ? ttl(value) : ttl;
  if (seconds <= 0) return value;
  const stored = new Response(JSON.stringify(value), {
    headers: { "Content-Type": "application/json", "Cache-Control": `public, max-age=${seconds}` },
  });
  background(c.executionCtx, "edge cache", cache.put(key, stored));
  return value;
}
