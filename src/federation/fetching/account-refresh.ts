/**
 * Remote accounts kept current when people look at them: a remote account whose row is older than a day
 * (`isStale`) is refetched from its server (profile, and the followers/following/statuses counts its collections
 * report) after the response that showed it. It is a cache refresh, not a side effect anything depends on, so
 * it runs in the background (waitUntil); the claim on `fetched_at` makes it at most one attempt a day per
 * account however many look, and however the attempt ends.
 */
import { sql } from "drizzle-orm";
import { db, now } from "../../db/client";
import type { Env } from "../../env";
import { ACTOR_STALE_MS, isStale } from "../../services/remote-accounts";
import type { AccountRow } from "../../services/accounts";
import { resolveAccount, resolveEnv } from "./resolve";

/** Refetches a stale remote account (once a day at most); nothing for a fresh, local or deactivated one. */
export async function refreshStaleAccount(
  env: Env,
  base: string,
  localHost: string,
  account: AccountRow,
  t: number = now(),
): Promise<void> {
  if (account.deactivated || !isStale(account, t)) return;
  const d = db(env);
  const claimed = await d.get<{ id: string }>(
    sql`UPDATE accounts SET fetched_at = ${t} WHERE id = ${account.id} AND domain IS NOT NULL AND deactivated = 0
      AND (fetched_at IS NULL OR fetched_at < ${t - ACTOR_STALE_MS}) RETURNING id`,
  );
  if (!claimed) return;
  try {
    await resolveAccount(resolveEnv(env, base, localHost), account.uri, { refresh: true });
  } catch (e) {
    console.warn(`account refresh: ${account.uri}: ${(e as Error)?.message ?? e}`);
  }
}
