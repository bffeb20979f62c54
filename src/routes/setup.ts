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
import { secure } from "../http/browser";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { ApiError } from "../lib/errors";
import { messagePage, setupPage } from "../render/pages";
import { createFirstAdmin, setupOpen } from "../services/first-admin";

const noStore = {
  "Cache-Control": "no-store",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
};

/**
 * The secret of the link `npm run deploy` prints (`/setup?secret=…`) is moved out of the address at once: kept
 * for the form in a cookie only this page reads (15 minutes, deleted once the admin is made), and the browser
 * sent on to `/setup`, so that it stays in no history, bookmark or Referer.
 */
const SETUP_COOKIE = "starling_setup";
const SETUP_COOKIE_SECONDS = 900;

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
    const fromLink = c.req.query("secret");
    if (fromLink !== undefined) {
      setCookie(c, SETUP_COOKIE, fromLink.slice(0, 200), {
        path: "/setup",
        httpOnly: true,
        sameSite: "Strict",
        secure: secure(c as unknown as Ctx),
        maxAge: SETUP_COOKIE_SECONDS,
      });
      return c.body(null, 303, { ...noStore, Location: "/setup" });
    }
    return c.html(setupPage({ instance: hostOf(c), secret: getCookie(c, SETUP_COOKIE) ?? "" }), 200, noStore);
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
      deleteCookie(c, SETUP_COOKIE, { path: "/setup", secure: secure(c as unknown as Ctx) });
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
      // Pleroma's field errors come JSON-encoded (services/registration.ts `fieldErrors`): said in words here.
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
