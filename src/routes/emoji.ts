/**
 * Custom emoji listings, public: Mastodon's `/api/v1/custom_emojis` (Phanpy, Tusky and Elk ask at start) and
 * Pleroma's `/api/v1/pleroma/emoji` (also `/api/pleroma/emoji` and Pleroma-FE's `/api/pleroma/emoji.json`).
 * One D1 query each; the answer is the same for everyone and changes rarely, so clients and caches may keep it
 * five minutes (as Mastodon does). Purging edge caches when a pack changes comes with the pack endpoints.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../app";
import { db } from "../db/client";
import { route } from "../http/route";
import { baseUrl } from "../http/urls";
import { renderCustomEmojis, renderPleromaEmojiMap } from "../render/emoji";
import { CustomEmojiSchema, PleromaEmojiMapSchema } from "../schemas/emoji";
import { localEmojis } from "../services/emoji";

export const EMOJI_CACHE_CONTROL = "public, max-age=300";

export function registerEmojiRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/custom_emojis",
    summary: "This instance's custom emoji, by shortcode",
    tags: ["Custom emoji"],
    auth: "none",
    response: z.array(CustomEmojiSchema),
    handler: async (c) => {
      const rows = await localEmojis(db(c.env));
      c.header("Cache-Control", EMOJI_CACHE_CONTROL);
      return c.json(renderCustomEmojis(baseUrl(c), rows));
    },
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
      handler: async (c) => {
        const rows = await localEmojis(db(c.env));
        c.header("Cache-Control", EMOJI_CACHE_CONTROL);
        return c.json(renderPleromaEmojiMap(rows));
      },
    });
  }
}
