/** Custom emoji listings: Mastodon's CustomEmoji and Pleroma's shortcode map. */
import { z } from "@hono/zod-openapi";
import { EmojiSchema } from "./account";

/** Mastodon's CustomEmoji; `category` (the pack) only when there is one, as Mastodon omits it; `tags` as Pleroma adds. */
export const CustomEmojiSchema = EmojiSchema.extend({ category: z.string().optional(), tags: z.array(z.string()) }).openapi("CustomEmoji");

/**
 * Pleroma's `/api/pleroma/emoji`: shortcode -> image path (relative to the instance, which Pleroma-FE prefixes
 * with the server) and tags (`pack:<name>`, by which Pleroma-FE groups its picker).
 */
export const PleromaEmojiMapSchema = z
  .record(z.string(), z.object({ image_url: z.string(), tags: z.array(z.string()) }))
  .openapi("PleromaEmojiMap");
