/** Media uploads (v1 and v2), their description, and reading them back. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { config } from "../env";
import { db } from "../db/client";
import { fileParam } from "../http/params";
import { route } from "../http/route";
import { renderContext } from "../http/urls";
import { renderMedia } from "../render/status";
import { MediaAttachmentSchema } from "../schemas/status";
import { createUpload, describeUpload, ownUpload, uploadBodyLimit } from "../services/uploads";

export function registerUploadRoutes(app: OpenAPIHono<AppEnv>) {
  for (const version of ["v1", "v2"]) {
    route(app, {
      method: "post",
      path: `/api/${version}/media`,
      summary: "Upload a file to attach to a status",
      tags: ["Media"],
      auth: "user",
      scopes: ["write:media"],
      params: z.object({ file: fileParam(), description: z.string().optional(), focus: z.string().optional() }),
      bodyLimit: uploadBodyLimit,
      response: MediaAttachmentSchema,
      handler: async (c, p, auth) => {
        const row = await createUpload(
          db(c.env),
          config(c.env),
          c.env.MEDIA,
          auth.account.id,
          p.file,
          p.description,
          p.focus,
          c.env.IMAGES,
        );
        return c.json(renderMedia(renderContext(c, auth.account.id), row));
      },
    });
  }

  route(app, {
    method: "get",
    path: "/api/v1/media/:id",
    summary: "One of your uploads",
    tags: ["Media"],
    auth: "user",
    scopes: ["write:media"],
    params: z.object({ id: z.string() }),
    response: MediaAttachmentSchema,
    handler: async (c, p, auth) =>
      c.json(renderMedia(renderContext(c, auth.account.id), await ownUpload(db(c.env), auth.account.id, p.id))),
  });

  route(app, {
    method: "put",
    path: "/api/v1/media/:id",
    summary: "Change an upload's description or focal point",
    tags: ["Media"],
    auth: "user",
    scopes: ["write:media"],
    params: z.object({ id: z.string(), description: z.string().optional(), focus: z.string().optional() }),
    response: MediaAttachmentSchema,
    handler: async (c, p, auth) => {
      const row = await describeUpload(db(c.env), config(c.env), auth.account.id, p.id, p.description, p.focus);
      return c.json(renderMedia(renderContext(c, auth.account.id), row));
    },
  });
}
