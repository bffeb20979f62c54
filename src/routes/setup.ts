/**
 * `/setup`: the first administrator, made in the browser (services/first-admin.ts). Open only while no admin
 * exists and a `SETUP_SECRET` is configured; 404 otherwise, as if it were not there.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { config } from "../env";
import { parseParams } from "../http/params";
import { throttle, type Ctx } from "../http/route";
import { baseUrl, hostOf } from "../http/urls";
import { ApiError } from "../lib/errors";
import { messagePage, setupPage } from "../render/pages";
import { createFirstAdmin, setupOpen } from "../services/first-admin";

const noStore = {
  "Cache-Control": "no-store",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "frame-ancestors 'none'",
};

const setupParams = z.object({
  secret: z.string().max(200).default(""),
  username: z.string().max(100).default(""),
  email: z.string().max(320).default(""),
  password: z.string().max(1000).default(""),
});

const GONE = "There is nothing to set up here.";

export function registerSetupRoutes(app: OpenAPIHono<AppEnv>) {
  app.get("/setup", async (c) => {
    if (!(await setupOpen(db(c.env), c.env.SETUP_SECRET))) return c.html(messagePage("Set-up", GONE), 404, noStore);
    return c.html(setupPage({ instance: hostOf(c), secret: c.req.query("secret") ?? "" }), 200, noStore);
  });

  app.post("/setup", async (c) => {
    const p = await parseParams(c as unknown as Ctx, setupParams);
    try {
      // Guesses of the secret are throttled as failed sign-ins are, per address.
      await throttle(c as unknown as Ctx, "loginPerIp", undefined);
      const admin = await createFirstAdmin(
        db(c.env),
        c.env.SETUP_SECRET,
        baseUrl(c),
        p,
        config(c.env).passwordIterations,
      );
      return c.html(
        messagePage(
          "Done",
          `@${admin.username} is the administrator of ${hostOf(c)}. Sign in with any Mastodon or Pleroma app (the front page, ${baseUrl(c)}/, lists some).`,
        ),
        200,
        noStore,
      );
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.status === 404) return c.html(messagePage("Set-up", GONE), 404, noStore);
      if (e.status === 429) return c.html(messagePage("Set-up", "Too many tries: wait a minute."), 429, noStore);
      // Pleroma's field errors come JSON-encoded (services/accounts.ts `fieldErrors`): said in words here.
      let error = e.message;
      try {
        const fields = JSON.parse(e.message) as Record<string, string[]>;
        error = Object.entries(fields)
          .map(([k, v]) => `${k} ${v.join(", ")}`)
          .join("; ");
      } catch {
        // Not field errors: the message as it is.
      }
      return c.html(
        setupPage({ instance: hostOf(c), secret: p.secret, username: p.username, email: p.email, error }),
        e.status === 403 ? 403 : 422,
        noStore,
      );
    }
  });
}
