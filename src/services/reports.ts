/** Reports: stored for moderators, each of whom gets a `pleroma:report` notification. */
import { and, eq, or, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { newId } from "../db/ids";
import { accounts, notifications, reports, statuses, users } from "../db/schema";
import { visibleTo } from "./visibility";
import { badRequest } from "../http/errors";

export type ReportRow = typeof reports.$inferSelect;

export async function createReport(
  d: DB,
  reporterId: string,
  input: { accountId: string; statusIds: string[]; comment: string; forward: boolean },
): Promise<ReportRow> {
  if (input.accountId === reporterId) throw badRequest("You cannot report yourself");
  // Only statuses of the reported account, and ones the reporter can see, go with the report.
  const ids = input.statusIds.length
    ? await d
        .select({ id: statuses.id })
        .from(statuses)
        .where(and(sql`${statuses.id} IN (SELECT value FROM json_each(${JSON.stringify(input.statusIds)}))`, eq(statuses.accountId, input.accountId), visibleTo(reporterId)))
    : [];
  const found = new Set(ids.map((r) => r.id));
  const t = now();
  const report: ReportRow = {
    id: newId(t),
    accountId: reporterId,
    targetAccountId: input.accountId,
    statusIds: input.statusIds.filter((id) => found.has(id)),
    comment: input.comment,
    forward: input.forward,
    state: "open",
    createdAt: t,
  };
  const moderators = await d
    .select({ id: users.accountId })
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(and(or(eq(users.isAdmin, true), eq(users.isModerator, true)), eq(accounts.deactivated, false), sql`${users.accountId} <> ${reporterId}`));
  await d.batch([
    d.insert(reports).values(report),
    ...moderators.map((m) =>
      d.insert(notifications).values({ id: newId(t), accountId: m.id, fromAccountId: reporterId, type: "pleroma:report", reportId: report.id, createdAt: t }),
    ),
  ]);
  return report;
}
