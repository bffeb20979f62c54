/**
 * Administrators' announcements (issue 17): written through the admin API, shown by `/api/v1/announcements`
 * while in force (no `starts_at` or past it, no `ends_at` or before it), each with whether the user dismissed it.
 */
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { now, statement, type DB } from "../db/client";
import { newId } from "../db/ids";
import { announcements } from "../db/schema";
import { notFound } from "../lib/errors";
import { logEntry, type Actor } from "./moderation-log";

export type AnnouncementRow = typeof announcements.$inferSelect;
export type AnnouncementWithRead = AnnouncementRow & { read: boolean | null };

export interface AnnouncementInput {
  content?: string;
  starts_at?: number | null;
  ends_at?: number | null;
  all_day?: boolean;
}

/** Every announcement, newest first, a page at a time (admin listing). */
export function listAll(d: DB, limit: number, offset: number): Promise<AnnouncementRow[]> {
  return d.select().from(announcements).orderBy(desc(announcements.id)).limit(limit).offset(offset).all();
}

export async function getAnnouncement(d: DB, id: string, message = "Not found"): Promise<AnnouncementRow> {
  const row = await d.select().from(announcements).where(eq(announcements.id, id)).get();
  if (!row) throw notFound(message);
  return row;
}

/** Announcements in force at `t`, with the viewer's `read` (null without a viewer), in one statement. */
export async function inForce(
  d: DB,
  viewerId: string | null,
  withDismissed: boolean,
  t = now(),
): Promise<AnnouncementWithRead[]> {
  const read = sql<
    number | null
  >`CASE WHEN ${viewerId} IS NULL THEN NULL ELSE EXISTS (SELECT 1 FROM announcement_reads r WHERE r.announcement_id = ${announcements.id} AND r.account_id = ${viewerId}) END`;
  const rows = await d
    .select({ a: announcements, read })
    .from(announcements)
    .where(
      and(
        sql`(${announcements.startsAt} IS NULL OR ${announcements.startsAt} <= ${t})`,
        sql`(${announcements.endsAt} IS NULL OR ${announcements.endsAt} > ${t})`,
      ),
    )
    .orderBy(asc(announcements.id))
    .limit(100)
    .all();
  return rows
    .map((r) => ({ ...r.a, read: r.read === null ? null : Boolean(r.read) }))
    .filter((r) => withDismissed || !r.read);
}

export async function createAnnouncement(
  d: DB,
  actor: Actor,
  input: AnnouncementInput & { content: string },
  t = now(),
): Promise<AnnouncementRow> {
  const row: AnnouncementRow = {
    id: newId(t),
    content: input.content,
    startsAt: input.starts_at ?? null,
    endsAt: input.ends_at ?? null,
    allDay: input.all_day ?? false,
    createdAt: t,
    updatedAt: t,
  };
  await d.$client.batch([
    statement(d, d.insert(announcements).values(row)),
    logEntry(
      d,
      actor,
      "announcement_create",
      { id: row.id, content: row.content },
      `@${actor.username} created announcement ${row.id}`,
      t,
    ),
  ]);
  return row;
}

export async function updateAnnouncement(
  d: DB,
  actor: Actor,
  id: string,
  input: AnnouncementInput,
  t = now(),
): Promise<AnnouncementRow> {
  const set: Partial<AnnouncementRow> = { updatedAt: t };
  if (input.content !== undefined) set.content = input.content;
  if (input.starts_at !== undefined) set.startsAt = input.starts_at;
  if (input.ends_at !== undefined) set.endsAt = input.ends_at;
  if (input.all_day !== undefined) set.allDay = input.all_day;
  const [updated] = await d.$client.batch([
    statement(d, d.update(announcements).set(set).where(eq(announcements.id, id)).returning()),
    // Logged only when the announcement exists (the update's own batch).
    logEntry(d, actor, "announcement_update", { id }, `@${actor.username} updated announcement ${id}`, t, {
      onlyIf: sql`EXISTS (SELECT 1 FROM announcements WHERE id = ${id})`,
    }),
  ]);
  if (!updated!.results.length) throw notFound("Not found");
  return getAnnouncement(d, id);
}

export async function deleteAnnouncement(d: DB, actor: Actor, id: string, t = now()): Promise<void> {
  // Its content goes into the log: read first, logged only if the batch finds it still there.
  const { content } = await getAnnouncement(d, id);
  const [deleted] = await d.$client.batch([
    logEntry(d, actor, "announcement_delete", { id, content }, `@${actor.username} deleted announcement ${id}`, t, {
      onlyIf: sql`EXISTS (SELECT 1 FROM announcements WHERE id = ${id})`,
    }),
    statement(d, sql`DELETE FROM announcements WHERE id = ${id}`),
  ]);
  if (!deleted!.meta.changes) throw notFound("Not found");
}

/** Marks an announcement in force as read by the user; 404 for an unknown one. */
export async function dismiss(d: DB, accountId: string, id: string): Promise<void> {
  const r =
    await d.run(sql`INSERT OR IGNORE INTO announcement_reads (announcement_id, account_id) SELECT id, ${accountId} FROM announcements WHERE id = ${id}
    RETURNING announcement_id`);
  if (!r.results.length) {
    const exists = await d.select({ id: announcements.id }).from(announcements).where(eq(announcements.id, id)).get();
    if (!exists) throw notFound();
  }
}
