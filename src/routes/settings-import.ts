/**
 * The archive import as a page (issue 50), for people without an app that knows the API: `/settings/import` shows
 * the form and the account's imports with their progress to the browser's signed-in user (the `_pleroma_key`
 * session of `/auth/sign_in`), and takes the zip (multipart, double-submit CSRF token as the other forms). What it
 * refuses is said on the page with the API's status; the work is the API's (services/archive-import.ts).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { csrfToken, csrfValid, FORM_PAGE_HEADERS } from "../http/browser";
import { sessionUser } from "../http/page-sign-in";
import { fileParam, parseParams } from "../http/params";
import type { Ctx } from "../http/route";
import { baseUrl, hostOf } from "../http/urls";
import { db, now } from "../db/client";
import { ApiError } from "../lib/errors";
import { renderArchiveImport } from "../render/archive-import";
import { importPage } from "../render/archive-import-page";
import {
  ARCHIVE_UPLOAD_BYTES,
  archiveBodyLimit,
  listArchiveImports,
  queueArchiveImport,
} from "../services/archive-import";

const PATH = "/settings/import";
const formParams = z.object({ csrf_token: z.string().max(200).optional(), file: fileParam().optional() });

async function show(
  c: Ctx,
  status: 200 | 400 | 401 | 403 | 409 | 413 | 415 | 422,
  extra: { error?: string; notice?: string } = {},
) {
  const me = await sessionUser(c);
  const imports = me ? (await listArchiveImports(db(c.env), me.account.id)).map(renderArchiveImport) : [];
  return c.html(
    importPage({
      instance: hostOf(c),
      user: me?.account.username ?? null,
      csrf: csrfToken(c, "/settings"),
      imports,
      maxMb: ARCHIVE_UPLOAD_BYTES / 1024 / 1024,
      ...extra,
    }),
    status,
    FORM_PAGE_HEADERS,
  );
}

export function registerSettingsImportRoutes(app: OpenAPIHono<AppEnv>) {
  app.get(PATH, (ctx) =>
    show(
      ctx as unknown as Ctx,
      200,
      ctx.req.query("queued") ? { notice: "Your archive is uploaded: the import starts within a minute." } : {},
    ),
  );

  app.post(PATH, async (ctx) => {
    const c = ctx as unknown as Ctx;
    const me = await sessionUser(c);
    if (!me) return show(c, 401, { error: "Sign in first." });
    try {
      const p = await parseParams(c, formParams, archiveBodyLimit());
      if (!csrfValid(c, p.csrf_token))
        return show(c, 403, { error: "The form expired. Reload the page and try again." });
      if (!p.file) return show(c, 400, { error: "Choose the archive's zip file." });
      await queueArchiveImport(c.env, db(c.env), me.account.id, p.file, baseUrl(c), now());
      return c.redirect(`${PATH}?queued=1`, 303);
    } catch (e) {
      if (e instanceof ApiError && e.status >= 400 && e.status < 500)
        return show(c, e.status as 400, { error: e.message });
      throw e;
    }
  });
}
