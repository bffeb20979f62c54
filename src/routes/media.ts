/** Files in R2 and the built-in default images, served with their type and long-lived cache headers. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { fromBase64 } from "../lib/crypto";
import { decodePath } from "../http/urls";
import { DEFAULT_AVATAR_PNG, DEFAULT_BANNER_PNG } from "../render/images";
import { db } from "../db/client";
import { authenticate } from "../http/auth";
import { BACKUPS_PREFIX, backupReadable } from "../services/backups";

const IMMUTABLE = "public, max-age=31536000, immutable";

const builtIn: Record<string, Uint8Array> = {
  "avi.png": fromBase64(DEFAULT_AVATAR_PNG),
  "banner.png": fromBase64(DEFAULT_BANNER_PNG),
};

export function registerMediaRoutes(app: OpenAPIHono<AppEnv>) {
  app.get("/images/:name", (c) => {
    const bytes = builtIn[c.req.param("name")];
    if (!bytes) return c.json({ error: "Not found" }, 404);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": "image/png",
      "Cache-Control": "public, max-age=86400",
    });
  });

  app.on(["GET", "HEAD"], "/media/*", async (c) => {
    const key = decodePath(new URL(c.req.url).pathname.slice("/media/".length));
    // Frontend builds and instance documents are served at their own paths (routes/frontend-serving.ts), never here.
    if (!key || key.includes("..") || /^(frontends|instance-documents)\//.test(key))
      return c.json({ error: "Not found" }, 404);
    // Account archives hold private and direct posts: only their owner gets them, never from a shared cache.
    const archive = key.startsWith(BACKUPS_PREFIX);
    if (archive) {
      const viewer = await authenticate(c).catch(() => null);
      const url = new URL(c.req.url);
      if (!(await backupReadable(c.env, db(c.env), key, url.searchParams, viewer?.account?.id ?? null, Date.now())))
        return c.json({ error: "Not found" }, 404);
    }
    const object = await c.env.MEDIA.get(key, { onlyIf: c.req.raw.headers, range: c.req.raw.headers });
    if (!object) return c.json({ error: "Not found" }, 404);
    const headers = new Headers();
    object.writeHttpMetadata(headers);
    headers.set("ETag", object.httpEtag);
    headers.set("Cache-Control", archive ? "private, no-store" : IMMUTABLE);
    headers.set("X-Content-Type-Options", "nosniff");
    // Uploaded files are data, never a page of this origin.
    headers.set("Content-Security-Policy", "default-src 'none'; sandbox");
    headers.set("Accept-Ranges", "bytes");
    if (!("body" in object) || !object.body) return new Response(null, { status: 304, headers });
    const range = object.range as { offset?: number; length?: number } | undefined;
    if (range && c.req.header("range")) {
      const offset = range.offset ?? 0;
      const length = range.length ?? object.size - offset;
      headers.set("Content-Range", `bytes ${offset}-${offset + length - 1}/${object.size}`);
      return new Response(c.req.method === "HEAD" ? null : object.body, { status: 206, headers });
    }
    headers.set("Content-Length", String(object.size));
    return new Response(c.req.method === "HEAD" ? null : object.body, { status: 200, headers });
  });
}
