/**
 * This instance's custom emoji, as the listings show them (`/api/v1/custom_emojis`, Pleroma's emoji map). One
 * statement on the partial index `custom_emojis_local`: remote emoji (stored with their domain for the statuses
 * that carry them) are never listed.
 */
import { isNull } from "drizzle-orm";
import type { DB } from "../db/client";
import { customEmojis } from "../db/schema";

export interface LocalEmoji {
  shortcode: string;
  /** R2 key (or, should an admin have written one, an absolute URL). */
  file: string;
  /** The pack it belongs to, if any. */
  category: string | null;
  visibleInPicker: boolean;
}

/** Every local emoji, hidden ones included (each renderer decides), in shortcode order. */
export function localEmojisQuery(d: DB) {
  return d
    .select({ shortcode: customEmojis.shortcode, file: customEmojis.file, category: customEmojis.category, visibleInPicker: customEmojis.visibleInPicker })
    .from(customEmojis)
    .where(isNull(customEmojis.domain))
    .orderBy(customEmojis.shortcode);
}

export const localEmojis = (d: DB): Promise<LocalEmoji[]> => localEmojisQuery(d).all();
