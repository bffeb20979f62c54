/** Settings for front-ends (Pleroma-FE reads them at start). None are configured: an empty object. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { route } from "../../http/route";
import { FrontendConfigurationsSchema } from "../../schemas/instance";

export function registerFrontendRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/pleroma/frontend_configurations",
    summary: "Front-end settings by front-end name (none are configured)",
    tags: ["Instance"],
    auth: "none",
    response: FrontendConfigurationsSchema,
    handler: (c) => c.json({}),
  });
}
