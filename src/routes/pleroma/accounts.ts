import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { after, route } from "../../http/route";
import { EMAIL_MAX } from "../../lib/email-address";

export function registerPleromaAccountRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "post",
    path: "/api/v1/pleroma/accounts/confirmation_resend",
    summary: "Send the confirmation e-mail again",
    tags: ["Pleroma"],
    auth: "none",
    params: z.object({ email: z.string().max(EMAIL_MAX).optional(), nickname: z.string().max(EMAIL_MAX).optional() }),
    noContent: true,
    // Each call may send a mail: limited per address and per recipient (e-mail or nickname).
    rateLimit: { name: "confirmationResend", by: (p) => p.email ?? p.nickname },
    handler: async (c, p) => {
      const login = p.email ?? p.nickname;
      // The same answer, after the same work, whether or not such a user exists: the rest follows the answer.
      if (login) after(c, { mailLinks: [{ link: "confirmation", login }] });
      return c.body(null, 204);
    },
  });
}
