/**
 * `/objects/<id>/replies`: the `replies` collection of a local status (services/replies-collection.ts), named by
 * its Note (federation/documents/notes.ts). Federation in front of the app has no dispatcher for it, so it reaches here.
 * ActivityStreams JSON whatever the Accept (it is a collection, there is no page for people); pages by
 * `?page=true&min_id=<reply id>`, as Mastodon's (`page=true` alone: the first).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { baseUrl } from "../http/urls";
import { repliesPage } from "../services/replies-collection";
import { config } from "../env";
import { fetchAllowed, ownerOfStatus } from "../federation/door/authorized-fetch";
import { federationRequestContext } from "../federation/index";

const AS = "https://www.w3.org/ns/activitystreams";

export function registerRepliesRoutes(app: OpenAPIHono<AppEnv>) {
  app.get("/objects/:id/replies", async (c) => {
    const id = c.req.param("id");
    // Authorized fetch covers this collection too (federation/door/authorized-fetch.ts), though Fedify does not serve it.
    if (config(c.env).authorizedFetch) {
      const ctx = await federationRequestContext(c.env, c.req.raw);
      if (!(await fetchAllowed(ctx, ownerOfStatus(id))))
        return ctx.data.refused ? c.json({ error: "Forbidden" }, 403) : c.json({ error: "Request not signed" }, 401);
    }
    const page = c.req.query("page") === "true";
    const after = page ? (c.req.query("min_id") ?? null) : null;
    const found = await repliesPage(db(c.env), id, after);
    const headers = {
      "Content-Type": "application/activity+json",
      Vary: "Accept",
      "Cache-Control": "public, max-age=60",
    };
    if (!found) return c.json({ error: "Record not found" }, 404);
    const collection = `${baseUrl(c)}/objects/${encodeURIComponent(id)}/replies`;
    const pageDoc = {
      id: after ? `${collection}?page=true&min_id=${encodeURIComponent(after)}` : `${collection}?page=true`,
      type: "CollectionPage",
      partOf: collection,
      items: found.items,
      ...(found.next ? { next: `${collection}?page=true&min_id=${encodeURIComponent(found.next)}` } : {}),
    };
    const body = page
      ? { "@context": AS, ...pageDoc }
      : { "@context": AS, id: collection, type: "Collection", first: pageDoc };
    return c.body(JSON.stringify(body), 200, headers);
  });
}
