/** Statuses as staff see them (`AdminAPI.StatusView`): the author as an admin account; private ones too. */
import type { AdminAccount } from "./admin-account";
import { renderAdminAccount } from "./admin-account";
import type { RenderContext } from "./account";
import { renderStatuses } from "./status";
import type { Hydrated } from "../services/hydrate";
import type { Status } from "../schemas/status";

export type AdminStatus = Status & { account: AdminAccount };

/** Renders `ids` for staff from what `loadAdminStatuses` (services/admin-statuses.ts) read. */
export function renderAdminStatuses(ctx: RenderContext, h: Hydrated | null, ids: string[]): AdminStatus[] {
  if (!h) return [];
  return renderStatuses(ctx, h, ids).map((s) => {
    const author = h.accounts.get(s.account.id);
    return { ...s, account: author ? renderAdminAccount(ctx, author) : (s.account as AdminAccount) };
  });
}
