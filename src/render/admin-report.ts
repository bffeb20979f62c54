/** Reports as staff see them (Pleroma 2.5's `AdminAPI.ReportView`). */
import { iso } from "../lib/iso";
import type { LoadedReports } from "../services/admin-reports";
import type { RenderContext } from "./account";
import { renderAdminAccount } from "./admin-account";
import { renderAdminStatuses } from "./admin-status";

export function renderReports(ctx: RenderContext, loaded: LoadedReports) {
  const statusIds = [...new Set(loaded.reports.flatMap((r) => r.statusIds))];
  const rendered = new Map(renderAdminStatuses(ctx, loaded.statuses, statusIds).map((s) => [s.id, s]));
  const account = (id: string) => {
    const found = loaded.accounts.get(id);
    if (!found) throw new Error(`account ${id} of a report vanished`);
    return renderAdminAccount(ctx, found);
  };
  return loaded.reports.map((r) => ({
    id: r.id,
    account: account(r.targetAccountId),
    actor: account(r.accountId),
    content: r.comment,
    created_at: iso(r.createdAt),
    statuses: r.statusIds.flatMap((id) => (rendered.has(id) ? [rendered.get(id)!] : [])),
    state: r.state as "open" | "closed" | "resolved",
    notes: loaded.notes
      .filter((n) => n.reportId === r.id && loaded.accounts.has(n.accountId))
      .map((n) => ({ id: n.id, content: n.content, user: account(n.accountId), created_at: iso(n.createdAt) })),
  }));
}
