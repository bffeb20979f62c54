/** What the admin routes share: Pleroma's page/page_size, the acting staff member, `nicknames[]`. */
import { z } from "@hono/zod-openapi";
import { arrayParam, intParam } from "../../http/params";
import type { UserAuth } from "../../http/auth";
import type { Actor } from "../../services/moderation-log";

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
