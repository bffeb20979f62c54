/**
 * Deleting and disabling local accounts (Pleroma's `delete_account`, `disable_account`, the admin's user delete).
 *
 * Deletion starts in ONE batch: the account is deactivated (so it hides everywhere at once), its tokens are
 * revoked, a `Delete` of the actor is written to the outbox and an `account_deletions` row is queued. The cron
 * (`runAccountDeletions`) then empties the account in bounded, set-based steps: its statuses (with everything
 * hanging off them and their R2 files), its other media, its rows in every per-account table, both sides of its
 * relationships. Last, once the actor Delete is expanded and delivered (signing needs the account row and its key),
 * its credentials and user row go and the account row stays as a tombstone: deactivated, emptied, its nickname
 * still taken (as Pleroma keeps a deleted user's nickname: its old ActivityPub id must never name someone else).
 * A remote actor that deleted itself is emptied by the same job (`receiveActorDelete`).
 */
import type { Effects } from "./effects";
import { sql } from "drizzle-orm";
import type { Env } from "../env";
import { db, statement, type DB } from "../db/client";
import { GIVE_UP_MS } from "./outbox";
import { deleteStoredFiles } from "./media";
import { isStoredKey } from "../lib/media-urls";
import { deletePrivate } from "./private-files";
import { removeImportFiles, type ArchiveImportRow } from "./archive-import";
import { outboxWrite } from "./outbox";
import { deleteStatuses } from "./statuses";

/** Statuses deleted per step (each step is one read and one batch). */
const STATUS_BATCH = 200;
/** Rows per table per step for the other tables. */
const ROW_BATCH = 500;
/** Steps per cron run, all deletions together: a run stays far within a Worker's limits. */
export const STEPS_PER_RUN = 8;

/** Statements that revoke every credential a client holds for the account (tokens take push subscriptions along). */
function revokeAccess(d: DB, accountId: string): D1PreparedStatement[] {
  return [
    statement(d, sql`DELETE FROM tokens WHERE account_id = ${accountId}`),
    statement(d, sql`DELETE FROM authorization_codes WHERE account_id = ${accountId}`),
  ];
}

/** Pleroma's `disable_account`: the account is deactivated and every token revoked; it can be reactivated by staff. */
export async function disableAccount(d: DB, accountId: string, t: number): Promise<void> {
  await d.$client.batch([
    statement(
      d,
      sql`UPDATE accounts SET deactivated = 1, updated_at = ${t} WHERE id = ${accountId} AND domain IS NULL`,
    ),
    ...revokeAccess(d, accountId),
  ]);
}

/**
 * The statements that start deleting a local account, to put in one batch (the admin API adds its moderation
 * log entry to the same batch). Idempotent: a second request changes nothing.
 */
export function accountDeletionStatements(
  d: DB,
  accountId: string,
  t: number,
  requestedBy: string | null,
): D1PreparedStatement[] {
  return [
    // Written while the follows still exist: its audience is read from them (they stay until it is delivered).
    outboxWrite(d, accountId, { type: "DeleteActor" }, t, {
      onlyIf: sql`NOT EXISTS (SELECT 1 FROM account_deletions WHERE account_id = ${accountId})`,
    }),
    statement(
      d,
      sql`UPDATE accounts SET deactivated = 1, updated_at = ${t} WHERE id = ${accountId} AND domain IS NULL`,
    ),
    ...revokeAccess(d, accountId),
    statement(
      d,
      sql`INSERT INTO account_deletions (account_id, requested_by, requested_at, updated_at)
        SELECT id, ${requestedBy}, ${t}, ${t} FROM accounts WHERE id = ${accountId} AND domain IS NULL
        ON CONFLICT (account_id) DO NOTHING`,
    ),
  ];
}

/** Starts deleting a local account (see the module comment): the entry point for `delete_account` and the admin API. */
export async function startAccountDeletion(
  d: DB,
  accountId: string,
  t: number,
  requestedBy: string | null = accountId,
): Promise<Effects> {
  // The actor's Delete to the servers that know it is in the batch.
  await d.$client.batch(accountDeletionStatements(d, accountId, t, requestedBy));
  return {};
}

/** Whether the account is being (or has been) deleted: its actor answers as gone only once the job has finished. */
export async function deletionState(d: DB, accountId: string): Promise<"none" | "pending" | "done"> {
  const row = await d.get<{ finished_at: number | null }>(
    sql`SELECT finished_at FROM account_deletions WHERE account_id = ${accountId}`,
  );
  return !row ? "none" : row.finished_at === null ? "pending" : "done";
}

type Step = "more" | "wait" | "done";

/**
 * Rows of the account in the other tables, ROW_BATCH per table per step: what it made, and both sides of its
 * relationships. Mentions of it in other people's statuses and reports about it stay (the tombstone row keeps
 * them meaningful). Each statement deletes by rowid (by its key for a table WITHOUT ROWID) from a LIMITed select
 * (D1 has no DELETE … LIMIT); each walks an index (test/query-plans.test.ts).
 */
const OWN_ROWS: [table: string, where: string, key?: string][] = [
  ["favourites", "account_id = ?1"],
  ["bookmarks", "account_id = ?1"],
  ["emoji_reactions", "account_id = ?1"],
  ["poll_votes", "account_id = ?1"],
  ["notifications", "account_id = ?1 OR from_account_id = ?1 OR target_account_id = ?1"],
  ["home_feed", "account_id = ?1"],
  ["follows", "account_id = ?1 OR target_account_id = ?1"],
  ["follow_requests", "account_id = ?1 OR target_account_id = ?1"],
  ["blocks", "account_id = ?1 OR target_account_id = ?1"],
  ["mutes", "account_id = ?1 OR target_account_id = ?1"],
  ["account_notes", "account_id = ?1 OR target_account_id = ?1"],
  ["followed_tags", "account_id = ?1"],
  ["endorsements", "account_id = ?1 OR target_account_id = ?1"],
  ["subscriptions", "account_id = ?1 OR target_account_id = ?1"],
  ["list_accounts", "account_id = ?1 OR list_id IN (SELECT id FROM lists WHERE account_id = ?1)"],
  ["lists", "account_id = ?1"],
  ["filter_keywords", "filter_id IN (SELECT id FROM filters WHERE account_id = ?1)"],
  ["filter_statuses", "filter_id IN (SELECT id FROM filters WHERE account_id = ?1)"],
  ["filters", "account_id = ?1"],
  ["domain_blocks", "account_id = ?1"],
  ["markers", "account_id = ?1"],
  ["thread_mutes", "account_id = ?1"],
  ["idempotency_keys", "account_id = ?1"],
  ["scheduled_statuses", "account_id = ?1"],
  ["participations", "account_id = ?1"],
  ["reports", "account_id = ?1"],
  ["push_subscriptions", "account_id = ?1"],
  ["stream_presence", "account_id = ?1"],
  // Chats: messages first (bounded), a chat once it has none left (so its cascade stays small).
  ["chat_messages", "chat_id IN (SELECT id FROM chats WHERE a_id = ?1 OR b_id = ?1)"],
  ["chats", "(a_id = ?1 OR b_id = ?1) AND NOT EXISTS (SELECT 1 FROM chat_messages m WHERE m.chat_id = chats.id)"],
  // Notification requests and permissions both ways (a sender gone leaves no badge behind), group counts.
  ["notification_requests", "account_id = ?1 OR from_account_id = ?1"],
  ["notification_permissions", "account_id = ?1 OR from_account_id = ?1", "account_id, from_account_id"],
  ["notification_group_counts", "account_id = ?1", "account_id, group_key"],
  // The follows it lost to a domain block, with their addresses; the event (others') stays.
  ["severed_relationships", "account_id = ?1"],
  ["announcement_reads", "account_id = ?1"],
  // What it asked remote authors to approve; what others asked of its posts went with the posts (status_id).
  ["interaction_requests", "account_id = ?1"],
  ["mfa_backup_codes", "account_id = ?1"],
  ["mfa_tokens", "account_id = ?1"],
  ["password_reset_tokens", "account_id = ?1"],
];

interface Job {
  account_id: string;
  requested_at: number;
  rows_cleared_at: number | null;
}

/**
 * One step of one deletion: the first stage with rows left does a bounded part of its work. The stages, in order:
 * statuses, loose media, backups, archive imports, the other tables, and the end (the tombstone).
 */
async function step(env: Env, d: DB, job: Job, t: number): Promise<Step> {
  const accountId = job.account_id;
  if (await deleteSomeStatuses(env, d, accountId, t)) return "more";
  if (await deleteSomeMedia(env, d, accountId)) return "more";
  if (await deleteSomeBackups(env, d, accountId)) return "more";
  if (await deleteSomeImports(env, d, accountId)) return "more";
  // Follows stay while the actor Delete is being expanded and delivered: it is addressed by them (bounded by the
  // delivery give-up time).
  const delivering = await actorDeleteInFlight(d, accountId, job.requested_at, t);
  // Once a pass found nothing left, the other tables are not walked again every minute of the wait: once more
  // after it (follows included), then the end.
  if (delivering && job.rows_cleared_at !== null) return "wait";
  if (await deleteSomeRows(d, accountId, delivering)) return "more";
  if (delivering) {
    await d.run(sql`UPDATE account_deletions SET rows_cleared_at = ${t} WHERE account_id = ${accountId}`);
    job.rows_cleared_at = t;
    return "wait";
  }
  await leaveTombstone(env, d, accountId, t);
  return "done";
}

/**
 * 1. Statuses (their reblogs, media rows, polls, favourites… go with them), without a Delete each: the actor's
 * covers them. Answers whether there were any.
 */
async function deleteSomeStatuses(env: Env, d: DB, accountId: string, t: number): Promise<boolean> {
  const ids = await d.all<{ id: string }>(
    sql`SELECT id FROM statuses WHERE account_id = ${accountId} LIMIT ${STATUS_BATCH}`,
  );
  if (!ids.length) return false;
  const { files, deleted } = await deleteStatuses(
    d,
    ids.map((r) => r.id),
    { silent: true },
  );
  await deleteStoredFiles(env.MEDIA, files);
  await d.run(
    sql`UPDATE account_deletions SET statuses_deleted = statuses_deleted + ${deleted.length}, updated_at = ${t} WHERE account_id = ${accountId}`,
  );
  return true;
}

/**
 * 2. Media not attached to a status (uploads, scheduled posts'): files first, so a failed run leaves rows to retry.
 * Answers whether there were any.
 */
async function deleteSomeMedia(env: Env, d: DB, accountId: string): Promise<boolean> {
  const media = await d.all<{ id: string; file: string }>(
    sql`SELECT id, file FROM media_attachments WHERE account_id = ${accountId} LIMIT ${ROW_BATCH}`,
  );
  if (!media.length) return false;
  await deleteStoredFiles(
    env.MEDIA,
    media.map((m) => m.file),
  );
  await d.run(
    sql`DELETE FROM media_attachments WHERE id IN (SELECT value FROM json_each(${JSON.stringify(media.map((m) => m.id))}))`,
  );
  return true;
}

/** Its backups: archives first, then rows. Answers whether there were any. */
async function deleteSomeBackups(env: Env, d: DB, accountId: string): Promise<boolean> {
  const archives = await d.all<{ id: string; file_key: string }>(
    sql`SELECT id, file_key FROM backups WHERE account_id = ${accountId} LIMIT ${ROW_BATCH}`,
  );
  if (!archives.length) return false;
  await deletePrivate(
    env,
    archives.map((b) => b.file_key),
  );
  await d.run(
    sql`DELETE FROM backups WHERE id IN (SELECT value FROM json_each(${JSON.stringify(archives.map((b) => b.id))}))`,
  );
  return true;
}

/** Its archive imports: the zips and their prepared posts first, then rows. Answers whether there were any. */
async function deleteSomeImports(env: Env, d: DB, accountId: string): Promise<boolean> {
  const imports = await d.all<ArchiveImportRow>(
    sql`SELECT * FROM archive_imports WHERE account_id = ${accountId} LIMIT ${ROW_BATCH}`,
  );
  if (!imports.length) return false;
  for (const job of imports) await removeImportFiles(env, job);
  await d.run(
    sql`DELETE FROM archive_imports WHERE id IN (SELECT value FROM json_each(${JSON.stringify(imports.map((i) => i.id))}))`,
  );
  return true;
}

/** Whether the actor's Delete is still being expanded or delivered (and the give-up time has not passed). */
async function actorDeleteInFlight(d: DB, accountId: string, requestedAt: number, t: number): Promise<boolean> {
  const outboxPending = await d.get<{ n: number }>(
    sql`SELECT (SELECT count(*) FROM federation_outbox WHERE account_id = ${accountId} AND (expanded_at IS NULL OR body IS NULL))
      + (SELECT count(*) FROM federation_deliveries dl JOIN federation_outbox o ON o.id = dl.outbox_id WHERE o.account_id = ${accountId}) AS n`,
  );
  return (outboxPending?.n ?? 0) > 0 && t < requestedAt + GIVE_UP_MS;
}

/**
 * 3. Everything else, one batch: each table's next ROW_BATCH rows (follows kept while `delivering`), then the
 * favourite counts of the statuses those rows counted in (found before, recounted from rows after; the follow
 * counters are kept by the follows' own triggers, migration 0050). Answers whether any row went.
 */
async function deleteSomeRows(d: DB, accountId: string, delivering: boolean): Promise<boolean> {
  const tables = OWN_ROWS.filter(([table]) => !(delivering && (table === "follows" || table === "follow_requests")));
  const client = d.$client;
  const batch: D1PreparedStatement[] = [];
  // Statuses whose favourite counts this step changes.
  const statusesHit = await d.all<{ id: string }>(
    sql`SELECT status_id AS id FROM favourites WHERE account_id = ${accountId} LIMIT ${ROW_BATCH}`,
  );
  let changes = 0;
  for (const [table, where, key = "rowid"] of tables) {
    batch.push(
      client
        .prepare(
          `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE ${where} LIMIT ${ROW_BATCH})`,
        )
        .bind(accountId),
    );
  }
  const recount = statement(
    d,
    sql`UPDATE statuses SET favourites_count = (SELECT count(*) FROM favourites f WHERE f.status_id = statuses.id)
      WHERE local = 1 AND id IN (SELECT value FROM json_each(${JSON.stringify(statusesHit.map((r) => r.id))}))`,
  );
  const results = await client.batch([...batch, recount]);
  for (let i = 0; i < batch.length; i++) changes += results[i]?.meta.changes ?? 0;
  return changes > 0;
}

/** 4. The end: secrets and the user row go, the account row stays as an emptied, deactivated tombstone. */
async function leaveTombstone(env: Env, d: DB, accountId: string, t: number): Promise<void> {
  const row = await d.get<{
    avatar: string | null;
    header: string | null;
    background: string | null;
    mascot: string | null;
  }>(
    sql`SELECT a.avatar, a.header, a.background, json_extract(u.mascot, '$.key') AS mascot FROM accounts a LEFT JOIN users u ON u.account_id = a.id WHERE a.id = ${accountId}`,
  );
  const images = [row?.avatar, row?.header, row?.background, row?.mascot].filter(isStoredKey);
  if (images.length) await env.MEDIA.delete(images);
  await d.$client.batch([
    statement(
      d,
      sql`DELETE FROM federation_deliveries WHERE outbox_id IN (SELECT id FROM federation_outbox WHERE account_id = ${accountId})`,
    ),
    statement(d, sql`DELETE FROM federation_outbox WHERE account_id = ${accountId}`),
    statement(d, sql`DELETE FROM credentials WHERE account_id = ${accountId}`),
    statement(d, sql`DELETE FROM users WHERE account_id = ${accountId}`),
    statement(
      d,
      sql`UPDATE accounts SET deactivated = 1, display_name = '', note = '', avatar = NULL, header = NULL, background = NULL,
        fields = '[]', emojis = '[]', also_known_as = '[]', tags = '[]', public_key = NULL, moved_to_account_id = NULL,
        followers_count = 0, following_count = 0, statuses_count = 0, last_status_at = NULL, locked = 0, discoverable = 0, updated_at = ${t}
        WHERE id = ${accountId}`,
    ),
    statement(
      d,
      sql`UPDATE account_deletions SET finished_at = ${t}, updated_at = ${t} WHERE account_id = ${accountId}`,
    ),
  ]);
}

/**
 * The cron job: advances pending deletions, oldest first, by at most `maxSteps` steps in all. Answers the
 * number of steps taken.
 */
export async function runAccountDeletions(env: Env, t: number, maxSteps = STEPS_PER_RUN): Promise<number> {
  const d = db(env);
  const pending = await d.all<Job>(
    sql`SELECT account_id, requested_at, rows_cleared_at FROM account_deletions WHERE finished_at IS NULL ORDER BY requested_at LIMIT 5`,
  );
  let steps = 0;
  for (const p of pending) {
    while (steps < maxSteps) {
      steps++;
      const r = await step(env, d, p, t);
      if (r !== "more") break;
    }
    if (steps >= maxSteps) break;
  }
  return steps;
}

/**
 * A remote actor deleted itself (its signed `Delete` of its own actor): the account is deactivated (hidden
 * everywhere at once, as local deactivations are) and its follows both ways end (the local counterparts'
 * counters follow, by the follows' own triggers), in one batch; its content (statuses with their reblogs, favourites, notifications and
 * media rows; its other rows) is then removed by the same bounded deletion job as a local account's, drained
 * by the cron, with no Delete sent anywhere. A repeated Delete changes nothing more.
 */
export async function receiveActorDelete(d: DB, remoteAccountId: string, t: number): Promise<void> {
  await d.$client.batch([
    statement(
      d,
      sql`DELETE FROM follows WHERE account_id = ${remoteAccountId} OR target_account_id = ${remoteAccountId}`,
    ),
    statement(
      d,
      sql`DELETE FROM follow_requests WHERE account_id = ${remoteAccountId} OR target_account_id = ${remoteAccountId}`,
    ),
    statement(
      d,
      sql`UPDATE accounts SET deactivated = 1, updated_at = ${t} WHERE id = ${remoteAccountId} AND domain IS NOT NULL`,
    ),
    statement(
      d,
      sql`INSERT INTO account_deletions (account_id, requested_by, requested_at, updated_at)
        SELECT id, NULL, ${t}, ${t} FROM accounts WHERE id = ${remoteAccountId} AND domain IS NOT NULL
        ON CONFLICT (account_id) DO NOTHING`,
    ),
  ]);
}
