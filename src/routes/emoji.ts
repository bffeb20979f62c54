/**
 * Custom emoji listings, public: Mastodon's `/api/v1/custom_emojis` (Phanpy, Tusky and Elk ask at start) and
 * Pleroma's `/api/v1/pleroma/emoji` (also `/api/pleroma/emoji` and Pleroma-FE's `/api/pleroma/emoji.json`).
 * The answer is the same for everyone and changes rarely: the Worker keeps it in the edge cache (Cache API)
 * with the emoji version it was made at, and each request makes ONE D1 round trip that reads the version and,
 * only when the cached copy is older, the rows (`emojiListing`). A pack change bumps the version, so no stale
 * copy is served after it, in any data centre. Clients may keep it five minutes (as Mastodon) and revalidate
 * with the ETag (the version).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { route } from "../http/route";
import { originsOf } from "../http/urls";
import { config } from "../env";
import { renderCustomEmojis, renderPleromaEmojiMap } from "../render/emoji";
import { CustomEmojiSchema, PleromaEmojiMapSchema } from "../schemas/emoji";
import { emojiListing, type LocalEmoji } from "../services/emoji";
import type { Ctx } from "../http/route";
import { edgeCache, edgeKey } from "../http/edge-cache";
import { background } from "../effects";

const EMOJI_CACHE_CONTROL = "public, max-age=300";

/** A listing answer from the edge cache when it is current, else rendered from the rows and cached. */
async function cachedListing(c: Ctx, kind: string, render: (rows: LocalEmoji[]) => unknown): Promise<Response> {
  // Per media origin: a listing cached before MEDIA_DOMAIN was set names the Worker's URLs.
  const key = edgeKey(c, `emoji/${kind}/${config(c.env).mediaDomain ?? "worker"}`);
  const cache = edgeCache();
  const hit = await cache?.match(key).catch(() => undefined);
  const known = hit?.headers.get("x-emoji-version") ?? null;
  const { version, rows } = await emojiListing(db(c.env), known);
  const etag = `"emoji-${version}"`;
  const headers = {
    "Content-Type": "application/json; charset=UTF-8",
    "Cache-Control": EMOJI_CACHE_CONTROL,
    ETag: etag,
  };
  if (c.req.header("if-none-match") === etag) {
    await hit?.body?.cancel();
    return new Response(null, { status: 304, headers });
  }
  if (hit && rows === null) return new Response(hit.body, { status: 200, headers });
  const body = JSON.stringify(render(rows ?? []));
  if (cache) {
    const stored = new Response(body, {
      headers: {
        "Content-Type": headers["Content-Type"],
        "Cache-Control": "public, max-age=86400",
        "X-Emoji-Version": version,
      },
    });
    background(c.executionCtx, "emoji cache", cache.put(key, stored));
  }
  return new Response(body, { status: 200, headers });
}

export function registerEmojiRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/custom_emojis",
    summary: "This instance's custom emoji, by shortcode",
    tags: ["Custom emoji"],
    auth: "none",
    response: z.array(CustomEmojiSchema),
    handler: (c) => cachedListing(c, "mastodon", (rows) => renderCustomEmojis(originsOf(c), rows)),
  });

  // `/api/pleroma/emoji.json`: Pleroma strips the format suffix of this path; Pleroma-FE asks for it.
  for (const path of ["/api/v1/pleroma/emoji", "/api/pleroma/emoji.json"]) {
    route(app, {
      method: "get",
      path,
      summary: "This instance's custom emoji shown in pickers, as Pleroma's shortcode map",
      tags: ["Pleroma"],
      auth: "none",
      response: PleromaEmojiMapSchema,
      handler: (c) => cachedListing(c, "pleroma", renderPleromaEmojiMap),
    });
  }
}
