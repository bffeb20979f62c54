/** Reports as staff see them (Pleroma 2.5's `AdminAPI.ReportView`). */
import { iso } from "../lib/iso";
import type { LoadedReports } from "../services/admin-reports";
import type { RenderContext } from "./account";
import type { AccountWithUser } from "../services/accounts";
import { renderAdminAccount } from "./admin-account";
import { renderAdminStatuses } from "./admin-status";

/**
 * What a report's rendering needs, from what the reports' load read: its accounts rendered by `renderOne`
 * (Pleroma's admin view or Mastodon's Admin::Account) and its statuses that still exist.
 */
export function reportParts<A>(
  ctx: RenderContext,
  loaded: LoadedReports,
  renderOne: (ctx: RenderContext, found: AccountWithUser) => A,
) {
  const statusIds = [...new Set(loaded.reports.flatMap((r) => r.statusIds))];
  const rendered = new Map(renderAdminStatuses(ctx, loaded.statuses, statusIds).map((s) => [s.id, s]));
  const account = (id: string) => {
    const found = loaded.accounts.get(id);
    if (!found) throw new Error(`account ${id} of a report vanished`);
    return renderOne(ctx, found);
  };
  const statuses = (ids: string[]) => ids.flatMap((id) => (rendered.has(id) ? [rendered.get(id)!] : []));
  return { account, statuses };
}

export function renderReports(ctx: RenderContext, loaded: LoadedReports) {
  const { account, statuses } = reportParts(ctx, loaded, renderAdminAccount);
  return loaded.reports.map((r) => ({
    id: r.id,
    account: account(r.targetAccountId),
    actor: account(r.accountId),
    content: r.comment,
    created_at: iso(r.createdAt),
    statuses: statuses(r.statusIds),
    state: r.state as "open" | "closed" | "resolved",
    notes: loaded.notes
      .filter((n) => n.reportId === r.id && loaded.accounts.has(n.accountId))
      .map((n) => ({ id: n.id, content: n.content, user: account(n.accountId), created_at: iso(n.createdAt) })),
  }));
}
