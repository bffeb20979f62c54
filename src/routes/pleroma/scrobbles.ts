/** Pleroma's scrobbles ("now listening"). Starling records none: an existing account's list is empty. */
import { accountToActOn } from "../../services/accounts";
import { db } from "../../db/client";
import { hostOf } from "../../http/urls";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { pageParams } from "../../http/pagination";
import { route } from "../../http/route";
import { ScrobbleSchema } from "../../schemas/pleroma";

export function registerScrobbleRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/accounts/:id/scrobbles",
    summary: "An account's scrobbles (none are recorded)",
    tags: ["Accounts"],
    auth: "optional",
    scopes: ["read"],
    params: z.object({ id: z.string(), ...pageParams(20) }),
    response: z.array(ScrobbleSchema),
    handler: async (c, p) => {
      await accountToActOn(db(c.env), p.id, hostOf(c));
      return c.json([]);
    },
  });
}
