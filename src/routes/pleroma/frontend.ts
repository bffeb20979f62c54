/** Settings for front-ends (Pleroma-FE reads them at start): the run-time `:frontend_configurations`, `{}` unset. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { config } from "../../env";
import { route } from "../../http/route";
import { FrontendConfigurationsSchema } from "../../schemas/instance";

export function registerFrontendRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/pleroma/frontend_configurations",
    summary: "Front-end settings by front-end name (the run-time setting :frontend_configurations)",
    tags: ["Instance"],
    auth: "none",
    response: FrontendConfigurationsSchema,
    handler: (c) => c.json(config(c.env).frontendConfigurations),
  });
}
