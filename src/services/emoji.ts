/**
 * This instance's custom emoji, as the listings show them (`/api/v1/custom_emojis`, Pleroma's emoji map). One
 * statement on the partial index `custom_emojis_local`: remote emoji (stored with their domain for the statuses
 * that carry them) are never listed.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { customEmojis, instanceKeys } from "../db/schema";

export interface LocalEmoji {
  shortcode: string;
  /** R2 key (or, should an admin have written one, an absolute URL). */
  file: string;
  /** The pack it belongs to, if any. */
  category: string | null;
  visibleInPicker: boolean;
}

/** Every local emoji, hidden ones included (each renderer decides), in shortcode order. */
export function localEmojisQuery(d: DB, unlessVersion?: string | null) {
  const local = isNull(customEmojis.domain);
  return d
    .select({ shortcode: customEmojis.shortcode, file: customEmojis.file, category: customEmojis.category, visibleInPicker: customEmojis.visibleInPicker })
    .from(customEmojis)
    // The version condition is one constant subquery: rows are read only when the caller's copy is stale.
    .where(unlessVersion === undefined ? local : and(local, sql`coalesce((SELECT value FROM instance_keys WHERE name = 'emoji_version'), '') IS NOT ${unlessVersion ?? ""}`))
    .orderBy(customEmojis.shortcode);
}

export const localEmojis = (d: DB): Promise<LocalEmoji[]> => localEmojisQuery(d).all();

/**
 * The listings' version and, unless the caller already holds the answer made at that version (`known`), the
 * rows: ONE round trip either way. Every change of this instance's emoji bumps the version in its own batch
 * (`bumpVersion` in emoji-packs.ts).
 */
export async function emojiListing(d: DB, known: string | null): Promise<{ version: string; rows: LocalEmoji[] | null }> {
  const [version, rows] = await d.batch([
    d.select({ value: instanceKeys.value }).from(instanceKeys).where(eq(instanceKeys.name, "emoji_version")),
    localEmojisQuery(d, known),
  ]);
  const v = version[0]?.value ?? "0";
  return { version: v, rows: known === v ? null : rows };
}
