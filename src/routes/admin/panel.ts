/**
 * What admin-fe asks of Pleroma besides users, reports and settings (its calls listed in docs/admin.md): whether
 * a restart is needed (never: settings apply at once), the restart itself (nothing to restart), emoji reloading
 * (emoji are read from D1 on each request: nothing to reload), the media proxy cache (Starling has no media
 * proxy: empty), the instance documents and a remote instance's statuses. Chats: routes/admin/chats.ts.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { boolParam, fileParam } from "../../http/params";
import { route } from "../../http/route";
import { baseUrl } from "../../http/urls";
import { deleteDocument, documentPath, readDocument, writeDocument } from "../../services/instance-documents";
import { chosenFrontend, frontendFile } from "../../services/frontends";
import { config } from "../../env";
import { ADMIN_TAG, pageFields, statusPage, StatusPageSchema } from "./common";

const admin = { tags: ADMIN_TAG, auth: "user", privilege: "superuser" } as const;
const UrlSchema = z.object({ url: z.string() });

export function registerAdminPanelRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/admin/need_reboot",
    summary: "Whether settings wait for a restart: never, they apply at once",
    scopes: ["admin:read"],
    response: z.object({ need_reboot: z.boolean() }),
    handler: (c) => c.json({ need_reboot: false }),
  });

  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/admin/restart",
    summary: "Restart (nothing to restart on Workers: an empty answer, as Pleroma's)",
    scopes: ["admin:read"],
    response: z.object({}),
    handler: (c) => c.json({}),
  });

  route(app, {
    ...admin,
    method: "post",
    path: "/api/v1/pleroma/admin/reload_emoji",
    summary: "Reload emoji (they are read from the database each time: nothing to reload)",
    scopes: ["admin:write"],
    response: z.literal("ok"),
    handler: (c) => c.json("ok"),
  });

  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/admin/media_proxy_caches",
    summary: "Media proxy cache entries (Starling has no media proxy: none)",
    scopes: ["admin:read:media_proxy_caches"],
    params: z.object({ query: z.string().max(2000).optional(), ...pageFields(50) }),
    response: z.object({ page_size: z.number().int(), count: z.number().int(), urls: z.array(z.string()) }),
    handler: (c, p) => c.json({ page_size: p.page_size, count: 0, urls: [] }),
  });

  for (const action of ["delete", "purge"] as const)
    route(app, {
      ...admin,
      method: "post",
      path: `/api/v1/pleroma/admin/media_proxy_caches/${action}`,
      summary: `${action === "delete" ? "Delete" : "Purge"} media proxy cache entries (none are kept: nothing to do)`,
      scopes: ["admin:write:media_proxy_caches"],
      params: z.object({
        urls: z.array(z.string().max(2000)).max(1000),
        ban: boolParam().optional(),
      }),
      response: z.object({}),
      handler: (c) => c.json({}),
    });

  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/admin/instance_document/:name",
    summary:
      "An instance document's HTML (`instance-panel`, `terms-of-service`, `privacy-policy`): the uploaded one, else the primary frontend's own, else empty",
    scopes: ["admin:read"],
    params: z.object({ name: z.string().max(100) }),
    produces: "text/html",
    handler: async (c, p) => {
      // Uploaded HTML shown on this origin, where the session cookie works: never run as a page.
      c.header("Content-Security-Policy", "sandbox; default-src 'none'");
      c.header("X-Content-Type-Options", "nosniff");
      const uploaded = await readDocument(c.env, p.name);
      if (uploaded !== null) return c.html(uploaded);
      // As Pleroma answers with the default it ships: here, what visitors see at the path instead.
      const fe = await chosenFrontend(c.env, config(c.env), "primary");
      const own = fe && (await frontendFile(c.env, fe, documentPath(p.name).slice(1)));
      return c.html(own ? await own.body.text() : "");
    },
  });

  route(app, {
    ...admin,
    method: "patch",
    path: "/api/v1/pleroma/admin/instance_document/:name",
    summary: "Upload an instance document (an HTML `file`); answers where it is served",
    scopes: ["admin:write"],
    params: z.object({ name: z.string().max(100), file: fileParam() }),
    response: UrlSchema,
    handler: async (c, p) => c.json({ url: baseUrl(c) + (await writeDocument(c.env, p.name, p.file)) }),
  });

  route(app, {
    ...admin,
    method: "delete",
    path: "/api/v1/pleroma/admin/instance_document/:name",
    summary: "Delete an instance document (a frontend's own one shows again)",
    scopes: ["admin:write"],
    params: z.object({ name: z.string().max(100) }),
    response: UrlSchema,
    handler: async (c, p) => c.json({ url: baseUrl(c) + (await deleteDocument(c.env, p.name)) }),
  });

  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/admin/instances/:instance/statuses",
    summary: "Statuses from accounts of one instance (`godmode` includes private and direct ones)",
    scopes: ["admin:read:statuses"],
    privilege: "messages_read",
    params: z.object({
      instance: z.string().max(300),
      godmode: boolParam().optional(),
      with_reblogs: boolParam().optional(),
      ...pageFields(20),
    }),
    response: StatusPageSchema,
    handler: async (c, p, auth) =>
      c.json(
        await statusPage(c, auth, {
          domain: p.instance.toLowerCase(),
          withReblogs: p.with_reblogs ?? false,
          godmode: p.godmode ?? false,
          page: p.page,
          pageSize: p.page_size,
        }),
      ),
  });
}
