/**
 * Pleroma's follow, block and mute imports (`/api/pleroma/*_import`, also under `/api/v1/pleroma/`), and the
 * account archive import beside them (routes/pleroma/archive-import.ts).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db } from "../../db/client";
import { badRequest } from "../../lib/errors";
import { fileParam } from "../../http/params";
import { route } from "../../http/route";
import { hostOf } from "../../http/urls";
import { importBlocks, importFollows, importMutes, parseImportList } from "../../services/imports";
import { registerArchiveImportRoutes } from "./archive-import";

/** Import files are small text; this bounds the work one request may ask for. */
const MAX_BYTES = 2_000_000;

export function registerImportRoutes(app: OpenAPIHono<AppEnv>) {
  registerArchiveImportRoutes(app);
  for (const [name, scopes, run] of [
    ["follow_import", ["follow", "write:follows"], importFollows],
    ["blocks_import", ["follow", "write:blocks"], importBlocks],
    ["mutes_import", ["follow", "write:mutes"], importMutes],
  ] as const) {
    route(app, {
      method: "post",
      path: `/api/v1/pleroma/${name}`,
      summary: `Import a list of accounts (${name.replace("_import", "")})`,
      tags: ["Pleroma"],
      auth: "user",
      scopes: [...scopes],
      params: z.object({ list: z.union([z.string(), fileParam()]) }),
      response: z.string(),
      handler: async (c, p, auth) => {
        if (typeof p.list !== "string" && p.list.size > MAX_BYTES) throw badRequest("The list is too large");
        const text = typeof p.list === "string" ? p.list : p.list.text();
        if (text.length > MAX_BYTES) throw badRequest("The list is too large");
        await run(db(c.env), auth.account, parseImportList(text, hostOf(c)));
        return c.json("job started");
      },
    });
  }
}
