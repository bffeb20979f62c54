/**
 * Files in R2 and the built-in default images, served with their type and long-lived cache headers. With
 * MEDIA_DOMAIN set, clients load public files from the bucket's own domain instead (lib/media-urls.ts `mediaUrl`);
 * these routes still answer for the URLs handed out before, and for account archives, which only they serve.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { decodePath } from "../http/urls";
import { BUILT_IN_IMAGES } from "../render/images";
import { db } from "../db/client";
import { authenticate } from "../http/auth";
import { BACKUPS_PREFIX, backupReadable } from "../services/backups";
import { isPrivateKey, readPrivate } from "../services/private-files";

const IMMUTABLE = "public, max-age=31536000, immutable";

export function registerMediaRoutes(app: OpenAPIHono<AppEnv>) {
  app.get("/images/:name", (c) => {
    const bytes = BUILT_IN_IMAGES[`images/${c.req.param("name")}`];
    if (!bytes) return c.json({ error: "Not found" }, 404);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": "image/png",
      "Cache-Control": "public, max-age=86400",
    });
  });

  app.on(["GET", "HEAD"], "/media/*", async (c) => {
    const key = decodePath(new URL(c.req.url).pathname.slice("/media/".length));
    // Account archives hold private and direct posts: only their owner gets them, never from a shared cache. Other
    // private files (frontend builds, instance documents: served at their own paths) never here.
    const archive = key.startsWith(BACKUPS_PREFIX);
    if (!key || key.includes("..") || (isPrivateKey(key) && !archive)) return c.json({ error: "Not found" }, 404);
    if (archive) {
      const viewer = await authenticate(c).catch(() => null);
      const url = new URL(c.req.url);
      if (!(await backupReadable(c.env, db(c.env), key, url.searchParams, viewer?.account?.id ?? null, Date.now())))
        return c.json({ error: "Not found" }, 404);
    }
    const options = { onlyIf: c.req.raw.headers, range: c.req.raw.headers };
    const object: R2ObjectBody | R2Object | null = archive
      ? await readPrivate(c.env, key, options)
      : await c.env.MEDIA.get(key, options);
    if (!object) return c.json({ error: "Not found" }, 404);
    const headers = new Headers();
    object.writeHttpMetadata(headers);
    headers.set("ETag", object.httpEtag);
    headers.set("Cache-Control", archive ? "private, no-store" : IMMUTABLE);
    headers.set("X-Content-Type-Options", "nosniff");
    // Uploaded files are data, never a page of this origin.
    headers.set("Content-Security-Policy", "default-src 'none'; sandbox");
    headers.set("Accept-Ranges", "bytes");
    // No body: a condition (If-None-Match, If-Modified-Since) held.
    const body = "body" in object ? (object as R2ObjectBody).body : null;
    if (!body) return new Response(null, { status: 304, headers });
    const range = object.range as { offset?: number; length?: number } | undefined;
    if (range && c.req.header("range")) {
      const offset = range.offset ?? 0;
      const length = range.length ?? object.size - offset;
      headers.set("Content-Range", `bytes ${offset}-${offset + length - 1}/${object.size}`);
      return new Response(c.req.method === "HEAD" ? null : body, { status: 206, headers });
    }
    headers.set("Content-Length", String(object.size));
    return new Response(c.req.method === "HEAD" ? null : body, { status: 200, headers });
  });
}
