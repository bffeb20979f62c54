import { accountToActOn } from "../services/accounts";
import { hostOf } from "../http/urls";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { ReportSchema } from "../schemas/social";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { arrayParam, boolParam } from "../http/params";
import { after, route } from "../http/route";
import { createReport } from "../services/reports";

export function registerReportRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/reports",
    summary: "Report an account (and some of its statuses) to the moderators",
    tags: ["Reports"],
    auth: "user",
    scopes: ["write:reports"],
    params: z.object({
      account_id: z.string(),
      status_ids: arrayParam(z.string(), 100).optional(),
      comment: z.string().max(1000).optional(),
      forward: boolParam().optional(),
    }),
    response: ReportSchema,
    handler: async (c, p, auth) => {
      const target = await accountToActOn(db(c.env), p.account_id, hostOf(c));
      const { report, effects } = await createReport(db(c.env), auth.account.id, {
        accountId: target.account.id,
        statusIds: [...new Set(p.status_ids ?? [])],
        comment: p.comment ?? "",
        forward: p.forward ?? false,
      });
      after(c, effects);
      return c.json({ id: report.id, action_taken: false });
    },
  });
}
