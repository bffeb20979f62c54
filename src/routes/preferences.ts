/** The user's posting and reading defaults under Mastodon's preference keys. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { route } from "../http/route";
import { PreferencesSchema } from "../schemas/account";

export function registerPreferenceRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/preferences",
    summary: "The user's preferences",
    tags: ["Accounts"],
    auth: "user",
    scopes: ["read:accounts"],
    response: PreferencesSchema,
    handler: (c, _p, auth) =>
      c.json({
        "posting:default:visibility": auth.user.defaultScope,
        "posting:default:sensitive": auth.user.sensitive,
        "posting:default:language": auth.user.postingLanguage,
        // Starling stores no reading preferences: Mastodon's defaults.
        "reading:expand:media": "default",
        "reading:expand:spoilers": false,
      }),
  });
}
