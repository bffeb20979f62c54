/**
 * "Connect to Bluesky" as a page (issue 49), for people whose app does not know the API: `/settings/bluesky` shows
 * the browser's signed-in user (the `_pleroma_key` session of `/auth/sign_in`) where they stand with the bridge,
 * and takes their opt-in or opt-out (double-submit CSRF token, as the other forms). The rule is the API's
 * (routes/bluesky-bridge-choice.ts, services/bluesky-bridge.ts).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { csrfToken, csrfValid, FORM_PAGE_HEADERS } from "../http/browser";
import { sessionUser } from "../http/page-sign-in";
import { parseParams } from "../http/params";
import type { Ctx } from "../http/route";
import { hostOf } from "../http/urls";
import { db } from "../db/client";
import { ApiError } from "../lib/errors";
import { bridgePage } from "../render/bluesky-bridge-page";
import type { AccountRow, UserRow } from "../services/accounts";
import { bridgeState } from "../services/bluesky-bridge";
import { optIn, optOut } from "./bluesky-bridge-choice";

const PATH = "/settings/bluesky";
const SIGN_IN = `/auth/sign_in?return_to=${encodeURIComponent(PATH)}`;
const formParams = z.object({
  csrf_token: z.string().max(200).optional(),
  decision: z.string().max(20).optional(),
});
const NOTICES: Record<string, string> = {
  connected: "Your follow of the bridge is sent.",
  disconnected: "You unfollowed the bridge: your account is no longer bridged.",
};

async function show(
  c: Ctx,
  me: { account: AccountRow; user: UserRow },
  status: 200 | 400 | 403 | 404 | 409 | 422 | 429,
  extra: { error?: string; notice?: string } = {},
) {
  return c.html(
    bridgePage({
      instance: hostOf(c),
      user: me.account.username,
      csrf: csrfToken(c, "/settings"),
      state: await bridgeState(db(c.env), me.account, me.user, hostOf(c)),
      ...extra,
    }),
    status,
    FORM_PAGE_HEADERS,
  );
}

export function registerSettingsBlueskyRoutes(app: OpenAPIHono<AppEnv>) {
  app.get(PATH, async (ctx) => {
    const c = ctx as unknown as Ctx;
    const me = await sessionUser(c);
    if (!me) return c.redirect(SIGN_IN, 302);
    const notice = NOTICES[c.req.query("done") ?? ""];
    return show(c, me, 200, notice ? { notice } : {});
  });

  app.post(PATH, async (ctx) => {
    const c = ctx as unknown as Ctx;
    const me = await sessionUser(c);
    if (!me) return c.redirect(SIGN_IN, 303);
    try {
      const p = await parseParams(c, formParams);
      if (!csrfValid(c, p.csrf_token))
        return show(c, me, 403, { error: "The form expired. Reload the page and try again." });
      if (p.decision === "connect") await optIn(c, me.account);
      else if (p.decision === "disconnect") await optOut(c, me.account);
      else return show(c, me, 400, { error: "Choose Connect or Disconnect." });
      return c.redirect(`${PATH}?done=${p.decision}ed`, 303);
    } catch (e) {
      if (e instanceof ApiError && e.status >= 400 && e.status < 500)
        return show(c, me, e.status as 400, { error: e.message });
      throw e;
    }
  });
}
