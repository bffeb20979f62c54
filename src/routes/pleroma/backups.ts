/** Pleroma's backups API: ask for an archive of the account, list them (BackupController). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../app";
import { db, now } from "../../db/client";
import { route } from "../../http/route";
import { baseUrl } from "../../http/urls";
import { BackupSchema } from "../../schemas/pleroma";
import { listBackups, renderBackup, requestBackup } from "../../services/backups";

export function registerBackupRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/backups",
    summary: "The account's backups, newest first",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["read:accounts"],
    response: z.array(BackupSchema),
    handler: async (c, _p, auth) => c.json((await listBackups(db(c.env), auth.account.id)).map((b) => renderBackup(baseUrl(c), b))),
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/backups",
    summary: "Ask for a backup (built in the background, its link mailed); one per week",
    tags: ["Pleroma"],
    auth: "user",
    // Pleroma asks for read:accounts here too: the archive is a read of the account.
    scopes: ["read:accounts"],
    response: z.array(BackupSchema),
    handler: async (c, _p, auth) => {
      const d = db(c.env);
      await requestBackup(d, auth.account, baseUrl(c), now());
      return c.json((await listBackups(d, auth.account.id)).map((b) => renderBackup(baseUrl(c), b)));
    },
  });
}
