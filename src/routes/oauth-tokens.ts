/** Pleroma's token management: the user's tokens (apps and browser sessions), and revoking one of them. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { notFound } from "../lib/errors";
import { route } from "../http/route";
import { renderTokenEntry } from "../render/oauth";
import { OAuthTokenEntrySchema } from "../schemas/oauth";
import { revokeUserToken, userTokens } from "../services/tokens";

export function registerOAuthTokenRoutes(app: OpenAPIHono<AppEnv>) {
  // Pleroma-FE asks for the `.json` form; Pleroma serves both. Listing needs a read scope and revoking a write scope:
  // a token granted only `push` or `read:statuses` must not see or end the user's other sessions.
  for (const path of ["/api/oauth_tokens", "/api/oauth_tokens.json"]) {
    route(app, {
      method: "get",
      path,
      summary: "The user's tokens with their apps' names",
      tags: ["OAuth"],
      auth: "user",
      scopes: ["read:accounts"],
      response: z.array(OAuthTokenEntrySchema),
      handler: async (c, _p, auth) => c.json((await userTokens(db(c.env), auth.account.id)).map(renderTokenEntry)),
    });
  }

  route(app, {
    method: "delete",
    path: "/api/oauth_tokens/:id",
    summary: "Revoke one of the user's tokens (201, as Pleroma); another's or an unknown id is 404",
    tags: ["OAuth"],
    auth: "user",
    scopes: ["write:accounts"],
    params: z.object({ id: z.string() }),
    response: z.object({}),
    handler: async (c, p, auth) => {
      if (!(await revokeUserToken(db(c.env), auth.account.id, p.id))) throw notFound();
      // Pleroma answers 201 with an empty body; `{}` reads the same to clients that ignore it and parses for those that don't.
      return c.json({}, 201);
    },
  });
}
