import type { Context } from "hono";
import type { AppEnv } from "../app";
import { config } from "../env";
import type { RenderContext } from "../render/account";

/** The instance origin: `https://DOMAIN` when configured, else the origin the client reached. */
export function baseUrl(c: Context<AppEnv>): string {
  const domain = config(c.env).domain;
  return domain ? `https://${domain}` : new URL(c.req.url).origin;
}

/** The instance host (with port, if any). */
export function hostOf(c: Context<AppEnv>): string {
  return new URL(baseUrl(c)).host;
}

export function renderContext(c: Context<AppEnv>, viewerId: string | null): RenderContext {
  return { base: baseUrl(c), host: hostOf(c), viewerId };
}

/** The client's address, as Cloudflare reports it. */
export function clientIp(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? c.req.header("x-real-ip") ?? "unknown";
}
