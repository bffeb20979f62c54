/**
 * Pleroma 2.5's frontend admin API: the list of known and installed frontends, and installing one from an
 * uploaded zip or its `build_url` (services/frontends.ts). Which one is served is the `:frontends` setting
 * (routes/admin/config.ts).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { now } from "../../db/client";
import type { AppEnv } from "../../http/app-env";
import { fileParam, optionalString } from "../../http/params";
import { route } from "../../http/route";
import { allowPrivateAddress } from "../../lib/outbound";
import { ApiError } from "../../lib/errors";
import type { FormFile } from "../../lib/form-file";
import { FRONTEND_LIMITS } from "../../lib/frontend-archive";
import { installFrontend, listFrontends } from "../../services/frontends";
import { logEntry } from "../../services/moderation-log";
import { actorOf, ADMIN_TAG } from "./common";

export const FrontendSchema = z
  .object({
    name: z.string(),
    git: z.string().nullable(),
    build_url: z.string().nullable(),
    ref: z.string().nullable(),
    installed: z.boolean(),
    installed_refs: z.array(z.string()),
  })
  .openapi("AdminFrontend");

export function registerAdminFrontendRoutes(app: OpenAPIHono<AppEnv>) {
  // Refused before the body is read: a Worker holds it several times over while parsing a form.
  for (const path of ["/api/v1/pleroma/admin/frontends/install", "/api/pleroma/admin/frontends/install"])
    app.use(path, async (c, next) => {
      if (Number(c.req.header("content-length")) > FRONTEND_LIMITS.maxArchiveBytes + 64 * 1024)
        throw new ApiError(
          413,
          `The archive is larger than ${FRONTEND_LIMITS.maxArchiveBytes} bytes: install it from the command line`,
        );
      await next();
    });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/frontends",
    summary: "The frontends Starling knows and those installed, with their installed refs",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:read"],
    privilege: "superuser",
    response: z.array(FrontendSchema),
    handler: async (c) => c.json(await listFrontends(c.env)),
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/frontends/install",
    summary:
      "Install a frontend's build from an uploaded zip (`file`) or its `build_url` (fetched through the SSRF guard); answers the list",
    tags: ADMIN_TAG,
    auth: "user",
    scopes: ["admin:write"],
    privilege: "superuser",
    params: z.object({
      name: z.string().min(1).max(64),
      ref: optionalString().pipe(z.string().max(64).optional()),
      file: fileParam().optional(),
      build_url: optionalString().pipe(z.string().max(2000).optional()),
      build_dir: optionalString().pipe(z.string().max(200).optional()),
    }),
    response: z.array(FrontendSchema),
    handler: async (c, p, auth) => {
      const t = now();
      await installFrontend(
        c.env,
        {
          name: p.name,
          ref: p.ref,
          file: p.file ? uploadBytes(p.file) : undefined,
          buildUrl: p.build_url,
          buildDir: p.build_dir,
        },
        {
          allowPrivate: allowPrivateAddress(c.env),
          t,
          extra: (d, ref) => [
            logEntry(
              d,
              actorOf(auth),
              "frontend_install",
              { frontend: p.name, ref },
              `@${auth.account.username} installed the frontend ${p.name} (${ref})`,
              t,
            ),
          ],
        },
      );
      return c.json(await listFrontends(c.env));
    },
  });
}

function uploadBytes(file: FormFile): Uint8Array {
  if (file.size > FRONTEND_LIMITS.maxArchiveBytes)
    throw new ApiError(
      413,
      `The archive is larger than ${FRONTEND_LIMITS.maxArchiveBytes} bytes: install it from the command line`,
    );
  return file.bytes();
}
