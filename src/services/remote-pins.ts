/**
 * Pins of remote accounts, as their servers announce them (`Add`/`Remove` on the actor's featured collection):
 * the stored status's `pinned_at`, which `GET /api/v1/accounts/:id/statuses?pinned=true` reads for remote
 * accounts as for local ones. Only the author's own public or unlisted statuses are pinned.
 */
import { sql } from "drizzle-orm";
import { now, type DB } from "../db/client";
import type { AccountRow } from "./accounts";

/**
 * Pins (or unpins) the author's stored status with this uri. Answers false when no such status is stored (for a
 * pin: none that may be pinned). Pinning again keeps the first time; unpinning an unpinned status is true.
 */
export async function setRemotePin(
  d: DB,
  author: AccountRow,
  uri: string,
  pinned: boolean,
  t: number = now(),
): Promise<boolean> {
  const row = pinned
    ? await d.get<{ id: string }>(
        sql`UPDATE statuses SET pinned_at = coalesce(pinned_at, ${t}) WHERE uri = ${uri} AND account_id = ${author.id} AND local = 0
          AND reblog_of_id IS NULL AND visibility IN ('public', 'unlisted') RETURNING id`,
      )
    : await d.get<{ id: string }>(
        sql`UPDATE statuses SET pinned_at = NULL WHERE uri = ${uri} AND account_id = ${author.id} AND local = 0 RETURNING id`,
      );
  return row !== undefined && row !== null;
}
