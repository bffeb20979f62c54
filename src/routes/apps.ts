import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { forbidden } from "../lib/errors";
import { route } from "../http/route";
import { renderApp } from "../render/oauth";
import { AppCredentialsSchema, AppSchema } from "../schemas/oauth";
import { createApp } from "../services/apps";
import { vapidKeys } from "../services/instance-keys";
import { parseScopes } from "../services/scopes";

export function registerAppRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/apps",
    summary: "Register a client application",
    tags: ["Apps"],
    auth: "none",
    params: z.object({
      client_name: z.string().trim().min(1).max(200),
      redirect_uris: z.string().min(1),
      scopes: z.string().optional(),
      website: z.preprocess((v) => (v === "" ? undefined : v), z.url().max(2000).optional()),
    }),
    response: AppSchema,
    handler: async (c, p) => {
      const { app: row, clientSecret } = await createApp(db(c.env), {
        name: p.client_name,
        redirectUris: p.redirect_uris,
        scopes: parseScopes(p.scopes),
        website: p.website,
      });
      return c.json(renderApp(row, clientSecret, (await vapidKeys(c.env)).publicKey));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/apps/verify_credentials",
    summary: "The application of the token",
    tags: ["Apps"],
    auth: "required",
    response: AppCredentialsSchema,
    handler: async (c, _p, auth) => {
      if (!auth.app) throw forbidden("Invalid credentials.");
      return c.json({ name: auth.app.name, website: auth.app.website, vapid_key: (await vapidKeys(c.env)).publicKey });
    },
  });
}
