/** Pleroma's backups API: ask for an archive of the account, list them (BackupController). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db, now } from "../../db/client";
import { route } from "../../http/route";
import { baseUrl } from "../../http/urls";
import { BackupSchema } from "../../schemas/pleroma";
import { listBackups, renderBackup, requestBackup, type BackupRow } from "../../services/backups";
import type { Env } from "../../env";

const renderBackups = (env: Env, base: string, rows: BackupRow[]) =>
  Promise.all(rows.map((b) => renderBackup(env, base, b, now())));

export function registerBackupRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/backups",
    summary: "The account's backups, newest first",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["read:accounts"],
    response: z.array(BackupSchema),
    handler: async (c, _p, auth) =>
      c.json(await renderBackups(c.env, baseUrl(c), await listBackups(db(c.env), auth.account.id))),
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
      return c.json(await renderBackups(c.env, baseUrl(c), await listBackups(d, auth.account.id)));
    },
  });
}
