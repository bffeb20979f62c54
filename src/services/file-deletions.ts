/**
 * Files to delete from R2 (`file_deletions`, migration 0071), kept in D1 until they are gone: the statement that
 * queues them goes in the batch that deletes the rows pointing at them, so a file outlives its rows only until the
 * cron's next run, even when the door's immediate delete after the answer is cut short or R2 fails (a deleted
 * followers-only picture would otherwise stay at its public URL for good).
 */
import { sql, type SQL } from "drizzle-orm";
import { db, statement, type DB } from "../db/client";
import type { Env } from "../env";
import { deleteStoredFiles } from "./media";

/** Keys deleted per cron run (each with its thumbnail: two R2 keys, one `delete` call for up to 500). */
const PER_RUN = 500;

/** The statement that queues `keys` (MEDIA keys; thumbnails go with them), for the batch that drops their rows. */
export const queueFileDeletions = (d: DB, keys: string[], t: number) =>
  queueSelectedFiles(d, sql`SELECT value FROM json_each(${JSON.stringify(keys)})`, t);

/** The same for the keys a query selects (one column), read in the batch that deletes their rows. */
export const queueSelectedFiles = (d: DB, keys: SQL, t: number) =>
  statement(d, sql`INSERT OR IGNORE INTO file_deletions (key, created_at) SELECT *, ${t} FROM (${keys})`);

/**
 * The cron job: the queued files deleted from R2, then their rows (a failing R2 leaves them for the next run).
 * Idle: one read of an empty table.
 */
export async function drainFileDeletions(env: Env): Promise<{ report: { deleted: number } } | null> {
  const d = db(env);
  const keys = (await d.all<{ key: string }>(sql`SELECT key FROM file_deletions LIMIT ${PER_RUN}`)).map((r) => r.key);
  if (!keys.length) return null;
  await deleteStoredFiles(env.MEDIA, keys);
  await d.run(sql`DELETE FROM file_deletions WHERE key IN (SELECT value FROM json_each(${JSON.stringify(keys)}))`);
  return { report: { deleted: keys.length } };
}
