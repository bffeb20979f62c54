/**
 * A visitor's server's subscribe template (remote follow, issue 34): WebFinger for `acct:user@host` through
 * Fedify's look-up (its own address check, as resolving uses), bounded by the resolve time-out. Nothing is
 * asked of a rejected domain (federation policies).
 */
import { db } from "../../db/client";
import { config, type Env } from "../../env";
import { rejectedHost } from "../../services/federation-policies";
import { SUBSCRIBE_REL } from "../../services/remote-interaction";
import { federationContext } from "../federation";

/** The `template` of the handle's subscribe link, or null (no such account, no template, unreachable). */
export async function visitorTemplate(
  env: Env,
  base: string,
  handle: { username: string; host: string },
): Promise<string | null> {
  if (rejectedHost(db(env), handle.host.replace(/:\d+$/, ""))) return null;
  try {
    const ctx = await federationContext(env, base);
    const jrd = await ctx.lookupWebFinger(`acct:${handle.username}@${handle.host}`, {
      signal: AbortSignal.timeout(config(env).resolveTimeoutMs),
    });
    const link = jrd?.links?.find((l) => l.rel === SUBSCRIBE_REL && typeof l.template === "string");
    return link?.template ?? null;
  } catch (e) {
    console.warn(`remote interaction: WebFinger of ${handle.username}@${handle.host}: ${(e as Error)?.message ?? e}`);
    return null;
  }
}
