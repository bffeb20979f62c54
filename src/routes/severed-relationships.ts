/**
 * Mastodon 4.3's severed relationships: the user's events (what a domain block cost them) and the follows and
 * followers each one severed, as CSV (Mastodon's `/severed_relationships/:id/following.csv` and `followers.csv`;
 * `following` re-imports through the follows import).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { pageParams, setLinkHeader } from "../http/pagination";
import { route } from "../http/route";
import { renderSeveranceEvent } from "../render/notification";
import { RelationshipSeveranceEventSchema } from "../schemas/social";
import { listEvents, lostCsv } from "../services/severed-relationships";

export function registerSeveredRelationshipRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/severed_relationships",
    summary: "The follows the user lost to domain blocks, per event, newest first (Mastodon 4.3)",
    tags: ["Notifications"],
    auth: "user",
    scopes: ["read:follows", "follow"],
    params: z.object(pageParams(40)),
    response: z.array(RelationshipSeveranceEventSchema),
    handler: async (c, p, auth) => {
      const events = await listEvents(db(c.env), auth.account.id, { maxId: p.max_id, limit: p.limit });
      setLinkHeader(
        c,
        events.map((e) => e.id),
      );
      return c.json(events.map(renderSeveranceEvent));
    },
  });
  for (const which of ["following", "followers"] as const)
    route(app, {
      method: "get",
      path: `/severed_relationships/:id/${which}.csv`,
      summary: `The ${which === "following" ? "follows" : "followers"} one event severed, as Mastodon's CSV`,
      tags: ["Notifications"],
      auth: "user",
      scopes: ["read:follows", "follow"],
      params: z.object({ id: z.string() }),
      produces: "text/csv",
      handler: async (c, p, auth) => {
        const { body, filename } = await lostCsv(db(c.env), auth.account.id, p.id, which);
        return c.body(body, 200, {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="${filename.replace(/[^\w.@-]/g, "_")}"`,
        });
      },
    });
}
