import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { after, route } from "../../http/route";
import { baseUrl } from "../../http/urls";
import { db } from "../../db/client";
import { config } from "../../env";
import { resendConfirmation } from "../../services/accounts";

export function registerPleromaAccountRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/accounts/confirmation_resend",
    summary: "Send the confirmation e-mail again",
    tags: ["Pleroma"],
    auth: "none",
    params: z.object({ email: z.string().optional(), nickname: z.string().optional() }),
    noContent: true,
    // Each call may send a mail: limited per address and per recipient (e-mail or nickname).
    rateLimit: { name: "confirmationResend", by: (p) => p.email ?? p.nickname },
    handler: async (c, p) => {
      const login = p.email ?? p.nickname;
      // The same answer whether or not such a user exists (sign-up's "has already been taken" tells that anyway).
      if (login) after(c, await resendConfirmation(db(c.env), config(c.env), baseUrl(c), login));
      return c.body(null, 204);
    },
  });
}
