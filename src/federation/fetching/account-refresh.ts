/**
 * Remote accounts kept current when people look at them: a remote account whose row is older than a day
 * (`isStale`) is refetched from its server (profile, and the followers/following/statuses counts its collections
 * report) after the response that showed it, asked for through the effects door (`refresh`). It is a cache
 * refresh, not a side effect anything depends on; the claim on `fetched_at` makes it at most one attempt a day per
 * account however many look, and however the attempt ends.
 */
import { sql } from "drizzle-orm";
import { db, now } from "../../db/client";
import { ACTOR_STALE_MS } from "../../services/remote-accounts";
import { resolveAccount, type ResolveEnv } from "./resolve";

/** Refetches these remote accounts if stale (once a day at most); nothing for a fresh, local or deactivated one. */
export async function refreshStaleAccounts(r: ResolveEnv, accountIds: string[], t: number = now()): Promise<void> {
  for (const id of accountIds) {
    const claimed = await db(r.env).get<{ uri: string }>(
      sql`UPDATE accounts SET fetched_at = ${t} WHERE id = ${id} AND domain IS NOT NULL AND deactivated = 0
        AND (fetched_at IS NULL OR fetched_at < ${t - ACTOR_STALE_MS}) RETURNING uri`,
    );
    if (!claimed) continue;
    try {
      await resolveAccount(r, claimed.uri, { refresh: true });
    } catch (e) {
      console.warn(`account refresh: ${claimed.uri}: ${(e as Error)?.message ?? e}`);
    }
  }
}
