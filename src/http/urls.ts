import type { Context } from "hono";
import type { AppEnv } from "./app-env";
import { config } from "../env";
import { badRequest } from "../lib/errors";
import type { RenderContext } from "../render/account";
import { origins, type Origins } from "../lib/media-urls";

/** The instance origin: `https://DOMAIN` when configured, else the origin the client reached. */
export function baseUrl(c: Context<AppEnv>): string {
  const domain = config(c.env).domain;
  return domain ? `https://${domain}` : new URL(c.req.url).origin;
}

/**
 * Whether the browser says this request was made by a page of another origin: `Sec-Fetch-Site` when it sends one
 * (a sibling subdomain is `same-site`, not `same-origin`), else `Origin`, which browsers send on every POST.
 * A request with neither comes from no page (an app, curl): not a cross-site forgery.
 */
export function fromOtherOrigin(c: Context<AppEnv>): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site) return site !== "same-origin" && site !== "none";
  const origin = c.req.header("origin");
  return !!origin && origin !== new URL(baseUrl(c)).origin;
}

/** The instance host (with port, if any). */
export function hostOf(c: Context<AppEnv>): string {
  return new URL(baseUrl(c)).host;
}

/** This instance's origin and its public files' (MEDIA_DOMAIN), for media URLs. */
export function originsOf(c: Context<AppEnv>): Origins {
  return origins(c.env, baseUrl(c));
}

export function renderContext(c: Context<AppEnv>, viewerId: string | null): RenderContext {
  return { ...originsOf(c), host: hostOf(c), viewerId };
}

/**
 * The one percent-decoder of a path: malformed encoding (`%ZZ`, `%E0%A4%A`, a lone `%`) is a 400, never a
 * URIError. Path parameters come decoded ONCE from hono (`c.req.param()`): nothing decodes them again.
 */
export function decodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest("Malformed percent-encoding in the path");
  }
}

/** The client's address, as Cloudflare reports it. */
export function clientIp(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? c.req.header("x-real-ip") ?? "unknown";
}
