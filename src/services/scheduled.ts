/**
 * Scheduled statuses: validated like a post, stored with their parameters and media, posted by the cron when
 * due. Posting a scheduled status and removing it are one batch guarded by the idempotency key
 * `scheduled:<id>`, so overlapping or repeated cron runs post it once.
 */
import { and, asc, count, eq, inArray, lte, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement, inJson } from "../db/client";
import { newId } from "../db/ids";
import { accounts, mediaAttachments, scheduledStatuses, userColumns, users } from "../db/schema";
import type { Config } from "../env";
import { ApiError, notFound, unprocessable } from "../lib/errors";
import { inOrder, pageQuery, type Page } from "../db/paging";
import type { MediaRow } from "./hydrate";
import { usableUploads } from "./uploads";
import { findIdempotent, preparePost, validatePost, writePost, type PostContext, type PostInput } from "./statuses";
import { mergeEffects, type Effects } from "./effects";

const MIN_LEAD_MS = 5 * 60_000;
const MAX_PENDING = 300;
const MAX_PER_DAY = 50;
const DAY = 86_400_000;

export type ScheduledRow = typeof scheduledStatuses.$inferSelect;

/** What is stored: the post's parameters, and where it was posted from (for links in its content). */
export interface StoredParams extends PostInput {
  base: string;
  host: string;
  idempotency: string | null;
}

function scheduledTime(input: string): number {
  const t = Date.parse(input);
  if (Number.isNaN(t)) throw unprocessable("Invalid scheduled_at: expected an ISO 8601 time");
  if (t < now() + MIN_LEAD_MS) throw unprocessable("Scheduled time must be at least 5 minutes in the future");
  return t;
}

/**
 * The condition that a time keeps the account within 300 pending and 50 in its UTC day (not counting `except`),
 * for the write itself: checked where the row is written, two racing requests cannot both pass it.
 */
function withinLimits(accountId: string, at: number, except: string | null = null) {
  const dayStart = Math.floor(at / DAY) * DAY;
  return sql`(SELECT count(*) FROM scheduled_statuses WHERE account_id = ${accountId} AND id IS NOT ${except}) < ${MAX_PENDING}
    AND (SELECT count(*) FROM scheduled_statuses WHERE account_id = ${accountId} AND id IS NOT ${except} AND scheduled_at >= ${dayStart} AND scheduled_at < ${dayStart + DAY}) < ${MAX_PER_DAY}`;
}

/** After a conditional write lost: the limit it hit, as the error the client gets. */
async function limitError(d: DB, accountId: string, at: number, except: string | null = null): Promise<never> {
  await checkLimits(d, accountId, at, except);
  throw unprocessable("total limit exceeded");
}

/** Refuses a time that would exceed 300 pending or 50 in its UTC day (not counting `except`). */
async function checkLimits(d: DB, accountId: string, at: number, except: string | null = null) {
  const dayStart = Math.floor(at / DAY) * DAY;
  const others = except ? sql`${scheduledStatuses.id} <> ${except}` : sql`1`;
  const [pending, sameDay] = await d.batch([
    d
      .select({ n: count() })
      .from(scheduledStatuses)
      .where(and(eq(scheduledStatuses.accountId, accountId), others)),
    d
      .select({ n: count() })
      .from(scheduledStatuses)
      .where(
        and(
          eq(scheduledStatuses.accountId, accountId),
          others,
          sql`${scheduledStatuses.scheduledAt} >= ${dayStart} AND ${scheduledStatuses.scheduledAt} < ${dayStart + DAY}`,
        ),
      ),
  ]);
  if ((pending[0]?.n ?? 0) >= MAX_PENDING) throw unprocessable("total limit exceeded");
  if ((sameDay[0]?.n ?? 0) >= MAX_PER_DAY) throw unprocessable("daily limit exceeded");
}

export async function scheduleStatus(
  ctx: PostContext,
  p: PostInput & { scheduled_at?: string; preview?: boolean },
  at: string,
  key?: string,
): Promise<{ row: ScheduledRow; media: MediaRow[] }> {
  const me = ctx.author.account.id;
  if (key) {
    const earlier = await findIdempotent(ctx.d, me, key);
    if (earlier?.startsWith("scheduled:")) return scheduledById(ctx.d, me, earlier.slice("scheduled:".length));
  }
  const t = scheduledTime(at);
  validatePost(ctx, p);
  const mediaIds = [...new Set(p.media_ids ?? [])];
  const media = mediaIds.length ? await usableUploads(ctx.d, me, mediaIds) : [];
  if (media.length !== mediaIds.length) throw unprocessable("Invalid media_ids: not found, not yours, or already used");
  const { scheduled_at: _s, preview: _p, ...post } = p;
  const params: StoredParams = { ...post, base: ctx.base, host: ctx.host, idempotency: key ?? null };
  const row: ScheduledRow = {
    id: newId(),
    accountId: me,
    scheduledAt: t,
    params: params as unknown as Record<string, unknown>,
    appId: ctx.appId,
    createdAt: now(),
    attempts: 0,
    lastError: null,
  };
  // The row is written only within the limits (counted by the insert itself); media and key follow it only if it was.
  const made = sql`EXISTS (SELECT 1 FROM scheduled_statuses WHERE id = ${row.id})`;
  const [inserted] = await ctx.d.$client.batch([
    statement(
      ctx.d,
      sql`INSERT INTO scheduled_statuses (id, account_id, scheduled_at, params, app_id, created_at)
        SELECT ${row.id}, ${me}, ${t}, ${JSON.stringify(params)}, ${row.appId}, ${row.createdAt} WHERE ${withinLimits(me, t)}`,
    ),
    // One statement whatever the number of media (up to MEDIA_ATTACHMENTS_MAX).
    ...(media.length
      ? [
          statement(
            ctx.d,
            ctx.d
              .update(mediaAttachments)
              .set({ scheduledStatusId: row.id })
              .where(
                and(
                  inJson(
                    mediaAttachments.id,
                    media.map((m) => m.id),
                  ),
                  made,
                ),
              ),
          ),
        ]
      : []),
    ...(key
      ? [
          statement(
            ctx.d,
            sql`INSERT INTO idempotency_keys (account_id, key, result, created_at) SELECT ${me}, ${key}, ${`scheduled:${row.id}`}, ${now()} WHERE ${made}`,
          ),
        ]
      : []),
  ]);
  if (!inserted.meta.changes) await limitError(ctx.d, me, t);
  return { row, media: media.map((m) => ({ ...m, scheduledStatusId: row.id })) };
}

export async function scheduledById(
  d: DB,
  accountId: string,
  id: string,
): Promise<{ row: ScheduledRow; media: MediaRow[] }> {
  const [rows, media] = await d.batch([
    d
      .select()
      .from(scheduledStatuses)
      .where(and(eq(scheduledStatuses.id, id), eq(scheduledStatuses.accountId, accountId))),
    d
      .select()
      .from(mediaAttachments)
      .where(eq(mediaAttachments.scheduledStatusId, id))
      .orderBy(asc(mediaAttachments.id)),
  ]);
  if (!rows[0]) throw notFound();
  return { row: rows[0], media };
}

/** A page of the user's scheduled statuses, newest first by id (as Pleroma and Mastodon page them), with their media: one round trip. */
export async function listScheduled(d: DB, accountId: string, page: Page) {
  const q = pageQuery(scheduledStatuses.id, page);
  const where = and(eq(scheduledStatuses.accountId, accountId), q.where);
  const ids = d
    .select({ id: scheduledStatuses.id })
    .from(scheduledStatuses)
    .where(where)
    .orderBy(q.orderBy)
    .limit(q.limit);
  const [rows, media] = await d.batch([
    d.select().from(scheduledStatuses).where(where).orderBy(q.orderBy).limit(q.limit),
    d
      .select()
      .from(mediaAttachments)
      .where(and(eq(mediaAttachments.accountId, accountId), inArray(mediaAttachments.scheduledStatusId, ids)))
      .orderBy(asc(mediaAttachments.id)),
  ]);
  return inOrder(rows, q).map((row) => ({ row, media: media.filter((m) => m.scheduledStatusId === row.id) }));
}

export async function reschedule(d: DB, accountId: string, id: string, at: string) {
  await scheduledById(d, accountId, id);
  const t = scheduledTime(at);
  const moved = await d
    .update(scheduledStatuses)
    .set({ scheduledAt: t })
    .where(and(eq(scheduledStatuses.id, id), withinLimits(accountId, t, id)))
    .returning({ id: scheduledStatuses.id });
  if (!moved.length) await limitError(d, accountId, t, id);
  return scheduledById(d, accountId, id);
}

export async function unschedule(d: DB, accountId: string, id: string) {
  await scheduledById(d, accountId, id);
  // The media stay the user's, free for another post.
  await d.batch([
    d.update(mediaAttachments).set({ scheduledStatusId: null }).where(eq(mediaAttachments.scheduledStatusId, id)),
    d.delete(scheduledStatuses).where(eq(scheduledStatuses.id, id)),
  ]);
}

/** Runs that may fail to post a scheduled status for a transient reason before it is given up. */
const MAX_ATTEMPTS = 10;

/**
 * Posts the scheduled statuses that are due, at most `max` a run (a backlog drains over runs). One that can
 * never be posted (refused as a post would be: its reply target gone, say) is dropped with its media released;
 * any other failure (D1 unavailable, ...) keeps it for the next run with its attempt counted, until
 * `MAX_ATTEMPTS`. Returns the ids of the statuses posted and what must follow their batches (as a post's).
 */
export async function postDue(
  d: DB,
  cfg: Config,
  postFormats: string[],
  t: number,
  max = 25,
): Promise<{ posted: string[]; effects: Effects }> {
  const due = await d
    .select({ row: scheduledStatuses, account: accounts, user: userColumns })
    .from(scheduledStatuses)
    .innerJoin(accounts, eq(accounts.id, scheduledStatuses.accountId))
    .innerJoin(users, eq(users.accountId, scheduledStatuses.accountId))
    // A deactivated (disabled, or being deleted) account publishes nothing: its scheduled posts wait, unposted
    // (a reactivated account's go out at the next run; a deleted account's are removed with it).
    .where(and(lte(scheduledStatuses.scheduledAt, t), eq(accounts.deactivated, false)))
    .orderBy(asc(scheduledStatuses.scheduledAt))
    .limit(max);
  const posted: string[] = [];
  const effects: Effects[] = [];
  for (const { row, account, user } of due) {
    const p = row.params as unknown as StoredParams;
    const ctx: PostContext = {
      d,
      cfg,
      base: p.base,
      host: p.host,
      author: { account, user },
      appId: row.appId,
      postFormats,
    };
    const claim = statement(d, d.delete(scheduledStatuses).where(eq(scheduledStatuses.id, row.id)));
    try {
      const { base: _b, host: _h, idempotency: _i, ...input } = p;
      const prepared = await preparePost(ctx, input, Math.max(t, row.scheduledAt));
      const written = await writePost(d, prepared, { accountId: account.id, key: `scheduled:${row.id}` }, [claim]);
      posted.push(prepared.status.id);
      effects.push(written.effects);
    } catch (e) {
      const message = (e instanceof Error ? e.message : String(e)).slice(0, 500);
      // Another run posted it: its batch removed the row too.
      if (message.includes("idempotency_keys")) continue;
      const permanent = e instanceof ApiError && e.status < 500;
      if (permanent || row.attempts + 1 >= MAX_ATTEMPTS) {
        console.warn(`scheduled status ${row.id} dropped after ${row.attempts + 1} attempt(s): ${message}`);
        await d.$client.batch([
          statement(
            d,
            d
              .update(mediaAttachments)
              .set({ scheduledStatusId: null })
              .where(eq(mediaAttachments.scheduledStatusId, row.id)),
          ),
          claim,
        ]);
      } else {
        console.warn(`scheduled status ${row.id} kept for the next run (attempt ${row.attempts + 1}): ${message}`);
        await d
          .update(scheduledStatuses)
          .set({ attempts: sql`${scheduledStatuses.attempts} + 1`, lastError: message })
          .where(eq(scheduledStatuses.id, row.id));
      }
    }
  }
  return { posted, effects: mergeEffects(...effects) };
}
