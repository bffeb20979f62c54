/**
 * Reading a page and everything it shows in ONE statement, the bearer token included: the read behind every
 * timeline, an account's statuses and notifications. Routes using it declare `authInQuery`.
 */
import type { SQL } from "drizzle-orm";
import { db } from "../db/client";
import { admit, bearer, settleToken, type Auth } from "../http/auth";
import type { Ctx } from "../http/route";
import { sha256 } from "../lib/crypto";
import { hydrate, hydrateForToken, type HydrateOptions, type Hydrated } from "../services/hydrate";

export interface PageRead extends HydrateOptions {
  /** The page's status ids for a viewer (`"token"`: the token's account, `ME` in the statement). */
  page: (viewerId: string | null) => SQL;
  /** Checks what was read alongside (throws: a list that is not yours, an unknown account). */
  check?: (h: Hydrated) => void;
}

/**
 * With a bearer token the statement also reads the token (route() skipped its own look-up), and the route's
 * auth rule is applied to what was read before anything is used. A token that does not qualify on an optional
 * route reads again as anonymous.
 */
export async function readPage(
  c: Ctx,
  rule: { mode: "user" | "optional"; scopes: string[]; auth: Auth | null },
  read: PageRead,
): Promise<Hydrated> {
  const d = db(c.env);
  const { page, check, ...opts } = read;
  // Folded only when route() left the token to this read; otherwise the caller is already known.
  const token = c.get("auth") === undefined ? bearer(c) : null;
  let h: Hydrated | null = null;
  if (token) {
    const { h: read, token: found } = await hydrateForToken(d, page("token"), await sha256(token), opts);
    if (admit(rule.mode, rule.scopes, settleToken(c, found))?.account) h = read;
  }
  if (!h) {
    const viewerId = token ? null : (rule.auth?.account?.id ?? c.get("auth")?.account?.id ?? null);
    h = await hydrate(d, page(viewerId), viewerId, opts);
  }
  check?.(h);
  return h;
}
