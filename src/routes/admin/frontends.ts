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
import { after, route } from "../../http/route";
import { allowPrivateAddress } from "../../lib/outbound";
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
      const { effects } = await installFrontend(
        c.env,
        {
          name: p.name,
          ref: p.ref,
          file: p.file ? new Uint8Array(await p.file.arrayBuffer()) : undefined,
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
      after(c, effects);
      return c.json(await listFrontends(c.env));
    },
  });
}
