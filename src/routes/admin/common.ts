/** What the admin routes share: Pleroma's page/page_size, the acting staff member, `nicknames[]`. */
import { z } from "@hono/zod-openapi";
import { arrayParam, intParam } from "../../http/params";
import type { UserAuth } from "../../http/auth";
import type { Actor } from "../../services/moderation-log";
import { db } from "../../db/client";
import type { Ctx } from "../../http/route";
import { renderContext } from "../../http/urls";
import { renderAdminStatuses } from "../../render/admin-status";
import { AdminStatusSchema } from "../../schemas/admin";
import { adminStatusIds, loadAdminStatuses } from "../../services/admin-statuses";

export const pageFields = (defaultSize: number) => ({
  page: intParam()
    .optional()
    .transform((n) => (n === undefined || n < 1 ? 1 : Math.min(n, 10_000))),
  page_size: intParam()
    .optional()
    .transform((n) => (n === undefined || n < 1 ? defaultSize : Math.min(n, 500))),
});

export const nicknamesParam = () => arrayParam(z.string().min(1).max(320), 100);

export const actorOf = (auth: UserAuth): Actor => ({ id: auth.account.id, username: auth.account.username });

export const ADMIN_TAG = ["Admin"];

export const StatusPageSchema = z.object({ total: z.number().int(), activities: z.array(AdminStatusSchema) });

/** Pleroma's `{total, activities}` page of statuses (a user's, an instance's), rendered for the staff member. */
export async function statusPage(
  c: Ctx,
  auth: UserAuth,
  q: Omit<Parameters<typeof adminStatusIds>[1], "withTotal" | "localOnly">,
) {
  const d = db(c.env);
  const { ids, total } = await adminStatusIds(d, { ...q, localOnly: false, withTotal: true });
  return { total, activities: await adminStatuses(c, auth, ids) };
}

/** Statuses `ids` loaded and rendered for the staff member (whatever their visibility: callers chose them). */
export async function adminStatuses(c: Ctx, auth: UserAuth, ids: string[]) {
  const h = await loadAdminStatuses(db(c.env), ids, auth.account.id);
  return renderAdminStatuses(renderContext(c, auth.account.id), h, ids);
}
