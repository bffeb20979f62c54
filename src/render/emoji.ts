/** The custom emoji listings: Mastodon's array and Pleroma's map, from the same rows. */
import type { z } from "@hono/zod-openapi";
import type { CustomEmojiSchema, PleromaEmojiMapSchema } from "../schemas/emoji";
import { mediaPath, mediaUrl, type Origins } from "../lib/media-urls";
import type { LocalEmoji } from "../services/emoji";

/** Pleroma names an emoji's pack as the tag `pack:<name>`. */
const tagsOf = (e: LocalEmoji) => (e.category ? [`pack:${e.category}`] : []);

export function renderCustomEmojis(o: Origins, rows: LocalEmoji[]): z.infer<typeof CustomEmojiSchema>[] {
  return rows.map((e) => {
    const url = mediaUrl(o, e.file);
    // No still variant is made: static_url is the image itself, as in statuses.
    return {
      shortcode: e.shortcode,
      url,
      static_url: url,
      visible_in_picker: e.visibleInPicker,
      ...(e.category ? { category: e.category } : {}),
      tags: tagsOf(e),
    };
  });
}

/**
 * Pleroma's map. It has no hidden emoji and Pleroma-FE shows every entry in its picker, so emoji not visible in
 * the picker are left out here (they still render in statuses). `image_url` is a path, as Pleroma answers it.
 */
export function renderPleromaEmojiMap(rows: LocalEmoji[]): z.infer<typeof PleromaEmojiMapSchema> {
  // fromEntries defines own keys: a shortcode `__proto__` stays an entry.
  return Object.fromEntries(
    rows.filter((e) => e.visibleInPicker).map((e) => [e.shortcode, { image_url: mediaPath(e.file), tags: tagsOf(e) }]),
  );
}
