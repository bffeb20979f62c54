/** The admin API's rules about reports (Pleroma 2.5's `AdminAPI.ReportController`): listing, states, notes. */
import type { ReportRow } from "./reports";
import { and, desc, eq, ne, sql } from "drizzle-orm";
import { inOrder, pageQuery, type Page } from "../db/paging";
import type { DB } from "../db/client";
import { mixedBatch, now } from "../db/client";
import { newId } from "../db/ids";
import { accounts, reportNotes, reports } from "../db/schema";
import { notFound } from "../lib/errors";
import { withUser, type AccountWithUser } from "./accounts";
import { logEntry, type Actor } from "./moderation-log";
import { loadAdminStatuses } from "./admin-statuses";
import type { Hydrated } from "./hydrate";

export type NoteRow = typeof reportNotes.$inferSelect;

export interface LoadedReports {
  reports: ReportRow[];
  notes: NoteRow[];
  accounts: Map<string, AccountWithUser>;
  /** The reported statuses, as staff see them (`loadAdminStatuses`). */
  statuses: Hydrated | null;
}

/**
 * Everything reports are rendered from, in two reads whatever their number: reporters, targets, notes and note
 * authors in one round trip, every report's statuses in one hydration beside it.
 */
async function load(d: DB, rows: ReportRow[], viewerId: string): Promise<LoadedReports> {
  if (rows.length === 0) return { reports: [], notes: [], accounts: new Map(), statuses: null };
  const ids = JSON.stringify(rows.map((r) => r.id));
  const people = JSON.stringify(rows.flatMap((r) => [r.accountId, r.targetAccountId]));
  const [[notes, found], statuses] = await Promise.all([
    d.batch([
      d
        .select()
        .from(reportNotes)
        .where(sql`${reportNotes.reportId} IN (SELECT value FROM json_each(${ids}))`)
        .orderBy(reportNotes.id),
      withUser(d).where(
        sql`${accounts.id} IN (SELECT value FROM json_each(${people}) UNION SELECT account_id FROM report_notes WHERE report_id IN (SELECT value FROM json_each(${ids})))`,
      ),
    ]),
    loadAdminStatuses(d, [...new Set(rows.flatMap((r) => r.statusIds))], viewerId),
  ]);
  return { reports: rows, notes, accounts: new Map(found.map((f) => [f.account.id, f])), statuses };
}

export async function listReports(
  d: DB,
  q: { state?: string; page: number; pageSize: number },
  viewerId: string,
): Promise<LoadedReports & { total: number }> {
  const cond = q.state ? eq(reports.state, q.state) : undefined;
  const [rows, [total]] = await d.batch([
    d
      .select()
      .from(reports)
      .where(cond)
      .orderBy(desc(reports.id))
      .limit(q.pageSize)
      .offset((q.page - 1) * q.pageSize),
    d
      .select({ n: sql<number>`count(*)` })
      .from(reports)
      .where(cond),
  ]);
  return { ...(await load(d, rows, viewerId)), total: total?.n ?? 0 };
}

/**
 * Mastodon's admin pages of reports (`max_id`, `min_id`, … newest first): unresolved (`open`) or resolved (any
 * other state), optionally by reporter or target.
 */
export async function pageReports(
  d: DB,
  q: { resolved: boolean; accountId?: string; targetAccountId?: string },
  page: Page,
  viewerId: string,
): Promise<LoadedReports> {
  const pq = pageQuery(reports.id, page);
  const rows = await d
    .select()
    .from(reports)
    .where(
      and(
        q.resolved ? ne(reports.state, "open") : eq(reports.state, "open"),
        q.accountId ? eq(reports.accountId, q.accountId) : undefined,
        q.targetAccountId ? eq(reports.targetAccountId, q.targetAccountId) : undefined,
        pq.where,
      ),
    )
    .orderBy(pq.orderBy)
    .limit(pq.limit);
  return load(d, inOrder(rows, pq), viewerId);
}

export async function reportById(d: DB, id: string, viewerId: string): Promise<LoadedReports> {
  const row = await d.select().from(reports).where(eq(reports.id, id)).get();
  if (!row) throw notFound();
  return load(d, [row], viewerId);
}

const targetNickname = async (d: DB, report: ReportRow) => {
  const a = await d
    .select({ username: accounts.username, domain: accounts.domain })
    .from(accounts)
    .where(eq(accounts.id, report.targetAccountId))
    .get();
  return a ? (a.domain ? `${a.username}@${a.domain}` : a.username) : null;
};

/**
 * Bulk state changes (`PATCH /reports`). As Pleroma, each item succeeds or fails on its own: the answer lists the
 * failures (`{id, error}`); the changes that can be made are made, each with its log entry, in one batch.
 */
export async function updateReports(
  d: DB,
  actor: Actor,
  items: { id: string; state: string }[],
): Promise<{ id: string; error: string }[]> {
  const errors: { id: string; error: string }[] = [];
  const rows = items.length
    ? await d
        .select({ report: reports, username: accounts.username, domain: accounts.domain })
        .from(reports)
        .innerJoin(accounts, eq(accounts.id, reports.targetAccountId))
        .where(sql`${reports.id} IN (SELECT value FROM json_each(${JSON.stringify(items.map((i) => i.id))}))`)
    : [];
  const byId = new Map(rows.map((r) => [r.report.id, r]));
  const t = now();
  const writes: object[] = [];
  for (const item of items) {
    const found = byId.get(item.id);
    if (!found) {
      errors.push({ id: item.id, error: "not_found" });
      continue;
    }
    if (!["open", "closed", "resolved"].includes(item.state)) {
      errors.push({ id: item.id, error: "Unsupported state" });
      continue;
    }
    const nick = found.domain ? `${found.username}@${found.domain}` : found.username;
    writes.push(
      d.update(reports).set({ state: item.state }).where(eq(reports.id, item.id)),
      logEntry(
        d,
        actor,
        "report_update",
        {
          subject: { id: item.id, state: item.state, type: "report" },
          subject_actor: { id: found.report.targetAccountId, nickname: nick, type: "user" },
        },
        `@${actor.username} updated report #${item.id} (on user @${nick}) with '${item.state}' state`,
        t,
      ),
    );
  }
  if (writes.length) await mixedBatch(d, writes);
  return errors;
}

export async function addNote(d: DB, actor: Actor, reportId: string, content: string): Promise<void> {
  const report = await d.select().from(reports).where(eq(reports.id, reportId)).get();
  if (!report) throw notFound();
  const nick = await targetNickname(d, report);
  const t = now();
  await mixedBatch(d, [
    d.insert(reportNotes).values({ id: newId(t), reportId, accountId: actor.id, content, createdAt: t }),
    logEntry(
      d,
      actor,
      "report_note",
      { subject: { id: reportId, state: report.state, type: "report" }, text: content },
      `@${actor.username} added note '${content}' to report #${reportId}${nick ? ` on user @${nick}` : ""}`,
      t,
    ),
  ]);
}

export async function deleteNote(d: DB, actor: Actor, reportId: string, noteId: string): Promise<void> {
  const [report, note] = await d.batch([
    d.select().from(reports).where(eq(reports.id, reportId)),
    d
      .select()
      .from(reportNotes)
      .where(and(eq(reportNotes.id, noteId), eq(reportNotes.reportId, reportId))),
  ]);
  if (!report[0] || !note[0]) throw notFound();
  const nick = await targetNickname(d, report[0]);
  const t = now();
  await mixedBatch(d, [
    d.delete(reportNotes).where(eq(reportNotes.id, noteId)),
    logEntry(
      d,
      actor,
      "report_note_delete",
      { subject: { id: reportId, state: report[0].state, type: "report" }, text: note[0].content },
      `@${actor.username} deleted note '${note[0].content}' from report #${reportId}${nick ? ` on user @${nick}` : ""}`,
      t,
    ),
  ]);
}
