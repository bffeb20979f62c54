/**
 * Collection of what nothing refers to any more, run by the cron. Each function is bounded per run (a backlog
 * drains over runs) and idempotent (a repeated or overlapping run deletes nothing twice and nothing in use).
 */
import { inArray, lt, sql } from "drizzle-orm";
import type { Env } from "../env";
import type { DB } from "../db/client";
import { anyRow, db, statement } from "../db/client";
import { authorizationCodes, mailOutbox, mediaAttachments, usedCaptchas } from "../db/schema";
import { IDEMPOTENCY_HOURS } from "./statuses";
import { deleteStoredFiles } from "./media";

const HOUR = 3600_000;
const DAY = 24 * HOUR;
/** Uploads not attached to a status (or a scheduled one) within a day are abandoned. */
const UNATTACHED_MEDIA_TTL = DAY;
/** Mail kept by the outbox mailer is development material: a week is plenty. */
const OUTBOX_TTL = 7 * DAY;

/**
 * Deletes uploads never attached that are older than a day, with their files. Rows go first (one statement that
 * re-checks they are unattached, RETURNING the files), so a file is only deleted once nothing can point at it.
 */
export async function collectUnattachedMedia(env: Env, t: number, max = 200): Promise<number> {
  const d = db(env);
  const gone = await d
    .delete(mediaAttachments)
    .where(
      sql`${mediaAttachments.id} IN (SELECT id FROM media_attachments INDEXED BY media_unattached
        WHERE status_id IS NULL AND scheduled_status_id IS NULL AND chat_message_id IS NULL AND created_at < ${t - UNATTACHED_MEDIA_TTL} ORDER BY created_at LIMIT ${max})
        AND ${mediaAttachments.statusId} IS NULL AND ${mediaAttachments.scheduledStatusId} IS NULL`,
    )
    .returning({ file: mediaAttachments.file });
  await deleteStoredFiles(
    env.MEDIA,
    gone.map((r) => r.file),
  );
  return gone.length;
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
