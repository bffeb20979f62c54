/**
 * Importing a Mastodon or Pleroma account archive (issue 50; services/archive-import.ts), Pleroma-style paths:
 * `POST /api/v1/pleroma/archive_import` (multipart `file`: the zip) answers 202 with the queued import, which the
 * cron carries out in steps; `GET` lists the account's imports with their progress, `GET …/:id` one of them.
 * Scopes: `write:statuses` to import (it writes statuses and their media, nothing a token that may post could not
 * write already; `write:accounts` would let a profile-editing token post), `read:statuses` to follow it.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db, now } from "../../db/client";
import { notFound } from "../../lib/errors";
import { fileParam } from "../../http/params";
import { route } from "../../http/route";
import { baseUrl } from "../../http/urls";
import { renderArchiveImport } from "../../render/archive-import";
import { registerSettingsImportRoutes } from "../settings-import";
import { ArchiveImportSchema } from "../../schemas/archive-import";
import { archiveBodyLimit, listArchiveImports, ownImport, queueArchiveImport } from "../../services/archive-import";

/** The API, and the settings page that is its form (routes/settings-import.ts). */
export function registerArchiveImportRoutes(app: OpenAPIHono<AppEnv>) {
  registerSettingsImportRoutes(app);
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/archive_import",
    summary: "Import a Mastodon or Pleroma account archive (zip); carried out in the background",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:statuses"],
    params: z.object({ file: fileParam() }),
    bodyLimit: archiveBodyLimit,
    response: ArchiveImportSchema,
    handler: async (c, p, auth) => {
      const row = await queueArchiveImport(c.env, db(c.env), auth.account.id, p.file, baseUrl(c), now());
      return c.json(renderArchiveImport(row), 202);
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/archive_import",
    summary: "The account's archive imports and their progress, newest first",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["read:statuses"],
    response: z.array(ArchiveImportSchema),
    handler: async (c, _p, auth) =>
      c.json((await listArchiveImports(db(c.env), auth.account.id)).map(renderArchiveImport)),
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/archive_import/:id",
    summary: "One archive import's progress",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["read:statuses"],
    params: z.object({ id: z.string().max(40) }),
    response: ArchiveImportSchema,
    handler: async (c, p, auth) => {
      const row = await ownImport(db(c.env), auth.account.id, p.id);
      if (!row) throw notFound();
      return c.json(renderArchiveImport(row));
    },
  });
}
