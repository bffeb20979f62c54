import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../app";
import { config } from "../../env";
import { db } from "../../db/client";
import { route } from "../../http/route";
import { baseUrl, hostOf } from "../../http/urls";
import { confirmationMail, renewConfirmation } from "../../services/accounts";
import { mailer } from "../../services/mailer";

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
      // The same answer whether or not such a user exists: the endpoint must not reveal addresses.
      const renewed = login ? await renewConfirmation(db(c.env), login) : null;
      if (renewed) {
        const mail = confirmationMail(config(c.env), baseUrl(c), renewed.found.account, renewed.found.user.email, renewed.token);
        c.executionCtx.waitUntil(mailer(c.env, hostOf(c)).send(mail));
      }
      return c.body(null, 204);
    },
  });
}
