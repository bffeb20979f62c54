import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { config } from "../../env";
import { route } from "../../http/route";
import { newCaptcha } from "../../services/captcha";

export function registerCaptchaRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/captcha",
    summary: "A captcha to solve before registering (`type` is `none` when disabled)",
    tags: ["Pleroma"],
    auth: "none",
    response: z.object({
      type: z.enum(["none", "native"]),
      token: z.string().optional(),
      url: z.string().optional(),
      answer_data: z.string().optional(),
      seconds_valid: z.number().int().optional(),
    }),
    handler: async (c) => {
      c.header("Cache-Control", "no-store");
      return c.json(await newCaptcha(c.env, config(c.env).captcha));
    },
  });
}
