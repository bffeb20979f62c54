/**
 * Collection of what nothing refers to any more, run by the cron. Each function is bounded per run (a backlog
 * drains over runs) and idempotent (a repeated or overlapping run deletes nothing twice and nothing in use).
 */
import { inArray, lt, sql } from "drizzle-orm";
import type { Env } from "../env";
import type { DB } from "../db/client";
import { anyRow, db, statement } from "../db/client";
import { authorizationCodes, mailOutbox, usedCaptchas } from "../db/schema";
import { IDEMPOTENCY_HOURS } from "./statuses";
import { queueSelectedFiles } from "./file-deletions";

const HOUR = 3600_000;
const DAY = 24 * HOUR;
/** Uploads not attached to a status (or a scheduled one) within a day are abandoned. */
const UNATTACHED_MEDIA_TTL = DAY;
/** Mail kept by the outbox mailer is development material: a week is plenty. */
const OUTBOX_TTL = 7 * DAY;

/**
 * Deletes uploads never attached that are older than a day, with their files. One batch queues the files
 * (services/file-deletions.ts: the cron's `file_deletions` job deletes them, and retries while R2 fails) and
 * deletes the rows, both re-checking that the uploads are still unattached, so a file goes only once nothing can
 * point at it and never outlives its row for good. Idle: one look through the partial index.
 */
export async function collectUnattachedMedia(env: Env, t: number, max = 200): Promise<number> {
  const d = db(env);
  const due = sql`SELECT id FROM media_attachments INDEXED BY media_unattached
    WHERE status_id IS NULL AND scheduled_status_id IS NULL AND chat_message_id IS NULL AND created_at < ${t - UNATTACHED_MEDIA_TTL}
    ORDER BY created_at LIMIT ${max}`;
  if (!(await anyRow(d, sql`(${due})`))) return 0;
  // Both statements select the same rows: one transaction, one plan, the same data.
  const [, gone] = await d.$client.batch([
    queueSelectedFiles(d, sql`SELECT file FROM media_attachments WHERE id IN (${due})`, t),
    statement(d, sql`DELETE FROM media_attachments WHERE id IN (${due})`),
  ]);
  return gone!.meta.changes;
}

/** Idempotency keys past the window in which they answer (`IDEMPOTENCY_HOURS`). */
export async function collectIdempotencyKeys(d: DB, t: number, max = 1000): Promise<number> {
  const before = t - IDEMPOTENCY_HOURS * HOUR;
  if (!(await anyRow(d, sql`idempotency_keys WHERE created_at < ${before}`))) return 0;
  const { meta } = await statement(
    d,
    sql`DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at < ${before} ORDER BY created_at LIMIT ${max})`,
  ).run();
  return meta.changes;
}

/** Authorization codes used or expired (a code is single use and short lived), and answered captchas past expiry. */
export async function collectCodes(d: DB, t: number, max = 1000): Promise<number> {
  // Both tables hold only what is live (a few rows): one look at each before the deletions.
  const due = await d.get(
    sql`SELECT 1 AS x WHERE EXISTS (SELECT 1 FROM authorization_codes WHERE used_at IS NOT NULL OR expires_at < ${t})
      OR EXISTS (SELECT 1 FROM used_captchas WHERE expires_at < ${t})`,
  );
  if (!due) return 0;
  const [codes, captchas] = await d.batch([
    d
      .delete(authorizationCodes)
      .where(
        inArray(
          authorizationCodes.id,
          d
            .select({ id: authorizationCodes.id })
            .from(authorizationCodes)
            .where(sql`${authorizationCodes.usedAt} IS NOT NULL OR ${authorizationCodes.expiresAt} < ${t}`)
            .limit(max),
        ),
      )
      .returning({ id: authorizationCodes.id }),
    d
      .delete(usedCaptchas)
      .where(
        inArray(
          usedCaptchas.token,
          d.select({ token: usedCaptchas.token }).from(usedCaptchas).where(lt(usedCaptchas.expiresAt, t)).limit(max),
        ),
      )
      .returning({ token: usedCaptchas.token }),
  ]);
  return codes.length + captchas.length;
}

/** Mail in the development outbox older than `OUTBOX_TTL`. */
export async function collectMail(d: DB, t: number, max = 1000): Promise<number> {
  if (!(await anyRow(d, sql`mail_outbox WHERE created_at < ${t - OUTBOX_TTL}`))) return 0;
  const gone = await d
    .delete(mailOutbox)
    .where(
      inArray(
        mailOutbox.id,
        d
          .select({ id: mailOutbox.id })
          .from(mailOutbox)
          .where(lt(mailOutbox.createdAt, t - OUTBOX_TTL))
          .limit(max),
      ),
    )
    .returning({ id: mailOutbox.id });
  return gone.length;
}
