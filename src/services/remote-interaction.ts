/**
 * Remote follow and interaction (issue 34), the rules without the fetching: this instance's subscribe template
 * (announced in WebFinger), reading a visitor's handle, building the URL their server's template gives, and what
 * local object a visitor may be sent off to interact with.
 */
import { splitAcct } from "../lib/acct";
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, statuses } from "../db/schema";
import { visibleTo } from "./visibility";

/** The WebFinger link relation of a server's "follow or interact from here" page (OStatus, kept by all). */
export const SUBSCRIBE_REL = "http://ostatus.org/schema/1.0/subscribe";

/** This instance's subscribe template: Pleroma's path (Mastodon's `/authorize_interaction?uri=` is served too). */
export const subscribeTemplate = (base: string) => `${base}/ostatus_subscribe?acct={uri}`;

/** A visitor's handle (`user@host`, `@user@host`, `acct:user@host`, a port allowed), or null. */
export function parseVisitorHandle(profile: string): { username: string; host: string } | null {
  const acct = splitAcct(profile);
  if (!acct?.host || !acct.host.includes(".")) return null;
  const { username, host } = acct;
  try {
    // What the URL parser makes of it must be the same host (no userinfo, path or IDN tricks).
    return new URL(`https://${host}/`).host === host ? { username, host } : null;
  } catch {
    return null;
  }
}

/**
 * Where the visitor's server lets them act on `apId`: its template with `{uri}` replaced by the id, encoded as
 * RFC 6570 expands `{uri}` (Mastodon and GoToSocial decode it). Null unless the result is an http(s) URL: a
 * template is another server's word, and a `javascript:` one must not become a redirect.
 */
export function interactionUrl(template: string, apId: string): string | null {
  if (!template.includes("{uri}") || template.length > 2000) return null;
  try {
    const url = new URL(template.replaceAll("{uri}", encodeURIComponent(apId)));
    return (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * The ActivityPub id of what a visitor of the public pages may take to their server: a local, active account by
 * nickname, or a local public or unlisted status (not a reblog) of an active account. Null otherwise: the form
 * sends nobody off with the id of something the page would not show.
 */
export async function localApId(d: DB, target: { nickname?: string; statusId?: string }): Promise<string | null> {
  if (target.nickname) {
    const row = await d
      .select({ uri: accounts.uri })
      .from(accounts)
      .where(
        and(
          sql`${accounts.acctKey} = lower(${target.nickname})`,
          sql`${accounts.domain} IS NULL`,
          eq(accounts.deactivated, false),
        ),
      )
      .get();
    return row?.uri ?? null;
  }
  if (target.statusId) {
    // What the anonymous viewer of the one visibility rule sees, as the status page.
    const row = await d
      .select({ uri: statuses.uri })
      .from(statuses)
      .where(
        and(
          eq(statuses.id, target.statusId),
          eq(statuses.local, true),
          sql`${statuses.reblogOfId} IS NULL`,
          visibleTo(null),
        ),
      )
      .get();
    return row?.uri ?? null;
  }
  return null;
}
