/** Quote posts (issue 46): who quoted a post, revoking a quote of one's post, a post's quote policy. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { pageParams, setLinkHeader } from "../http/pagination";
import { optionalString } from "../http/params";
import { after, route } from "../http/route";
import { StatusSchema } from "../schemas/status";
import { QUOTE_POLICIES } from "../lib/quote-policy";
import { quotesPage, revokeQuote, setQuotePolicy } from "../services/quotes";
import { loadStatus, loadStatuses } from "./status-answer";

export function registerQuoteRoutes(app: OpenAPIHono<AppEnv>) {
  // Mastodon 4.5's list, and Pleroma's (`/api/v1/pleroma/statuses/:id/quotes`, also served as /api/pleroma/…).
  for (const path of ["/api/v1/statuses/:id/quotes", "/api/v1/pleroma/statuses/:id/quotes"])
    route(app, {
      method: "get",
      path,
      summary: "The accepted quotes of a status (all of them for its author; of a public or unlisted one for others)",
      tags: ["Statuses"],
      auth: "optional",
      scopes: ["read:statuses"],
      params: z.object({ id: z.string(), ...pageParams(20) }),
      response: z.array(StatusSchema),
      handler: async (c, p, auth) => {
        const me = auth?.account?.id ?? null;
        const rows = await quotesPage(db(c.env), p.id, me, p);
        setLinkHeader(
          c,
          rows.map((r) => r.cursor),
        );
        return c.json(
          await loadStatuses(
            c,
            rows.map((r) => r.statusId),
            me,
          ),
        );
      },
    });

  route(app, {
    method: "post",
    path: "/api/v1/statuses/:id/quotes/:quoting_status_id/revoke",
    summary: "Withdraw the approval of a quote of your status (its stamp is deleted)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["write:statuses"],
    params: z.object({ id: z.string(), quoting_status_id: z.string() }),
    response: StatusSchema,
    handler: async (c, p, auth) => {
      const revoked = await revokeQuote(db(c.env), auth.account, p.id, p.quoting_status_id);
      after(c, revoked.effects);
      return c.json(await loadStatus(c, revoked.id, auth.account.id));
    },
  });

  route(app, {
    method: "put",
    path: "/api/v1/statuses/:id/interaction_policy",
    summary: "Who may quote your status (public, followers or nobody)",
    tags: ["Statuses"],
    auth: "user",
    scopes: ["write:statuses"],
    params: z.object({ id: z.string(), quote_approval_policy: optionalString() }),
    response: StatusSchema,
    handler: async (c, p, auth) => {
      // An unknown policy changes nothing (the answer still says what the status is).
      const policy = QUOTE_POLICIES.find((x) => x === p.quote_approval_policy);
      after(c, await setQuotePolicy(db(c.env), auth.account, p.id, policy));
      return c.json(await loadStatus(c, p.id, auth.account.id));
    },
  });
}
