import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { route } from "../../http/route";
import { baseUrl, hostOf } from "../../http/urls";
import { resendConfirmation } from "../../services/registration-mail";

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
      // The same answer, in the same time, whether or not such a user exists: the work happens after the answer.
      if (login)
        c.executionCtx.waitUntil(
          resendConfirmation(c.env, baseUrl(c), hostOf(c), login).catch((e) => console.error("confirmation resend", e)),
        );
      return c.body(null, 204);
    },
  });
}
