/** Custom emoji listings: Mastodon's CustomEmoji and Pleroma's shortcode map. */
import { z } from "@hono/zod-openapi";
import { EmojiSchema } from "./account";

/** Mastodon's CustomEmoji; `category` (the pack) only when there is one, as Mastodon omits it; `tags` as Pleroma adds. */
export const CustomEmojiSchema = EmojiSchema.extend({
  category: z.string().optional(),
  tags: z.array(z.string()),
}).openapi("CustomEmoji");

/**
 * Pleroma's `/api/pleroma/emoji`: shortcode -> image path (relative to the instance, which Pleroma-FE prefixes
 * with the server) and tags (`pack:<name>`, by which Pleroma-FE groups its picker).
 */
export const PleromaEmojiMapSchema = z
  .record(z.string(), z.object({ image_url: z.string(), tags: z.array(z.string()) }))
  .openapi("PleromaEmojiMap");

/** A pack's files: shortcode -> file name inside the pack. */
export const PackFilesSchema = z.record(z.string(), z.string()).openapi("EmojiPackFiles");

/** Pack metadata as stored (Pleroma's `pack` object of pack.json); only the keys that are set. */
export const PackMetadataSchema = z
  .object({
    license: z.string().optional(),
    homepage: z.string().optional(),
    description: z.string().optional(),
    "fallback-src": z.string().optional(),
    "fallback-src-sha256": z.string().optional(),
    "share-files": z.boolean().optional(),
  })
  .openapi("EmojiPackMetadata");

/** Pleroma's EmojiPack: files (a page of them), their count, and the metadata with `can-download`. */
export const EmojiPackSchema = z
  .object({
    files: PackFilesSchema,
    files_count: z.number().int(),
    pack: PackMetadataSchema.extend({ "can-download": z.boolean(), "download-sha256": z.string().optional() }),
  })
  .openapi("EmojiPack");

export const EmojiPackListSchema = z
  .object({ packs: z.record(z.string(), EmojiPackSchema), count: z.number().int() })
  .openapi("EmojiPackList");
