/** Media uploads (v1 and v2), their description, and reading them back. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { AppEnv } from "../app";
import { config } from "../env";
import { db, now } from "../db/client";
import { newId } from "../db/ids";
import { mediaAttachments } from "../db/schema";
import { notFound, unprocessable } from "../http/errors";
import { fileParam } from "../http/params";
import { route, type Ctx } from "../http/route";
import { renderContext } from "../http/urls";
import { renderMedia } from "../render/status";
import { MediaAttachmentSchema } from "../schemas/status";
import { storeUpload } from "../services/media";

function checkDescription(c: Ctx, description: string | undefined) {
  if (description !== undefined && description.length > config(c.env).descriptionLimit) throw unprocessable("Description is too long");
}

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
      response: MediaAttachmentSchema,
      handler: async (c, p, auth) => {
        checkDescription(c, p.description);
        const stored = await storeUpload(c.env.MEDIA, `media/${auth.account.id.toLowerCase()}`, p.file, config(c.env).uploadLimit, config(c.env).uploadTypes);
        const row = {
          id: newId(),
          accountId: auth.account.id,
          statusId: null,
          scheduledStatusId: null,
          file: stored.key,
          remoteUrl: null,
          mimeType: stored.mime,
          type: stored.type,
          description: p.description ?? null,
          size: stored.size,
          position: 0,
          createdAt: now(),
        };
        await db(c.env).insert(mediaAttachments).values(row);
        return c.json(renderMedia(renderContext(c, auth.account.id), row));
      },
    });
  }

  const own = async (c: Ctx, accountId: string, id: string) => {
    const row = await db(c.env).select().from(mediaAttachments).where(and(eq(mediaAttachments.id, id), eq(mediaAttachments.accountId, accountId))).get();
    if (!row) throw notFound();
    return row;
  };

  route(app, {
    method: "get",
    path: "/api/v1/media/:id",
    summary: "One of your uploads",
    tags: ["Media"],
    auth: "user",
    scopes: ["write:media"],
    params: z.object({ id: z.string() }),
    response: MediaAttachmentSchema,
    handler: async (c, p, auth) => c.json(renderMedia(renderContext(c, auth.account.id), await own(c, auth.account.id, p.id))),
  });

  route(app, {
    method: "put",
    path: "/api/v1/media/:id",
    summary: "Change an upload's description",
    tags: ["Media"],
    auth: "user",
    scopes: ["write:media"],
    params: z.object({ id: z.string(), description: z.string().optional(), focus: z.string().optional() }),
    response: MediaAttachmentSchema,
    handler: async (c, p, auth) => {
      checkDescription(c, p.description);
      const row = await own(c, auth.account.id, p.id);
      const description = p.description ?? row.description;
      await db(c.env).update(mediaAttachments).set({ description }).where(eq(mediaAttachments.id, row.id));
      return c.json(renderMedia(renderContext(c, auth.account.id), { ...row, description }));
    },
  });
}
