/** Statuses as staff see them (`AdminAPI.StatusView`): the author as an admin account; private ones too. */
import type { DB } from "../db/client";
import type { AdminAccount } from "./admin-account";
import { renderAdminAccount } from "./admin-account";
import type { RenderContext } from "./account";
import { renderStatuses } from "./status";
import { hydrate } from "../services/hydrate";
import type { Status } from "../schemas/status";

export type AdminStatus = Status & { account: AdminAccount };

/**
 * Renders `ids` for staff. Callers have chosen the ids by the admin rules (godmode or not), so every loaded
 * status is shown whatever its visibility to the staff member personally.
 */
export async function renderAdminStatuses(d: DB, ctx: RenderContext, ids: string[]): Promise<AdminStatus[]> {
  if (ids.length === 0) return [];
  const h = await hydrate(d, ids, ctx.viewerId);
  for (const id of h.statuses.keys()) h.visible.add(id);
  return renderStatuses(ctx, h, ids).map((s) => {
    const author = h.accounts.get(s.account.id);
    return { ...s, account: author ? renderAdminAccount(ctx, author) : (s.account as AdminAccount) };
  });
}
