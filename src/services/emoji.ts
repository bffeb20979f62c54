/**
 * This instance's custom emoji, as the listings show them (`/api/v1/custom_emojis`, Pleroma's emoji map). One
 * statement on the partial index `custom_emojis_local`: remote emoji (stored with their domain for the statuses
 * that carry them) are never listed.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { customEmojis, instanceKeys, type EmojiRef, type StatusEmoji } from "../db/schema";
import { extract } from "../content/format";

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
  return (
    d
      .select({
        shortcode: customEmojis.shortcode,
        file: customEmojis.file,
        category: customEmojis.category,
        visibleInPicker: customEmojis.visibleInPicker,
      })
      .from(customEmojis)
      // The version condition is one constant subquery: rows are read only when the caller's copy is stale.
      .where(
        unlessVersion === undefined
          ? local
          : and(
              local,
              sql`coalesce((SELECT value FROM instance_keys WHERE name = 'emoji_version'), '') IS NOT ${unlessVersion ?? ""}`,
            ),
      )
      .orderBy(customEmojis.shortcode)
  );
}

/**
 * The listings' version and, unless the caller already holds the answer made at that version (`known`), the
 * rows: ONE round trip either way. Every change of this instance's emoji bumps the version in its own batch
 * (`bumpVersion` in emoji-packs.ts).
 */
export async function emojiListing(
  d: DB,
  known: string | null,
): Promise<{ version: string; rows: LocalEmoji[] | null }> {
  const [version, rows] = await d.batch([
    d.select({ value: instanceKeys.value }).from(instanceKeys).where(eq(instanceKeys.name, "emoji_version")),
    localEmojisQuery(d, known),
  ]);
  const v = version[0]?.value ?? "0";
  return { version: v, rows: known === v ? null : rows };
}

/**
 * This instance's emoji named by `shortcodes` (from `extract(...).emojis`), as a query to put in the caller's
 * batch: what a local user writes (`:code:` in a status, chat message or profile) resolves against local emoji
 * only, when it is written.
 */
export function localEmojisNamed(d: DB, shortcodes: string[]) {
  return d
    .select({
      shortcode: customEmojis.shortcode,
      file: customEmojis.file,
      visibleInPicker: customEmojis.visibleInPicker,
    })
    .from(customEmojis)
    .where(
      and(
        sql`${customEmojis.shortcode} IN (SELECT value FROM json_each(${JSON.stringify([...new Set(shortcodes)])}))`,
        isNull(customEmojis.domain),
      ),
    );
}

/** The `:code:`s written in plain texts (a profile's name, bio, field names and values), each once. */
export async function shortcodesIn(texts: string[]): Promise<string[]> {
  // The host only matters to mentions, which are not read here.
  const found = await Promise.all(texts.map((t) => extract(t, "text/plain", "")));
  return [...new Set(found.flatMap((f) => f.emojis))];
}

type NamedRow = { shortcode: string; file: string; visibleInPicker: boolean };

/** The resolution stored with a status or chat message: the shortcodes that exist, in the order written. */
export function resolveLocalEmojis(shortcodes: string[], rows: NamedRow[]): StatusEmoji[] {
  const found = new Map(rows.map((r) => [r.shortcode, r]));
  return [...new Set(shortcodes)].flatMap((code) => {
    const e = found.get(code);
    return e ? [{ shortcode: code, domain: null, file: e.file, visible_in_picker: e.visibleInPicker }] : [];
  });
}

/**
 * The same for a local account's profile (`accounts.emojis`). `url` holds the R2 key, as a status's `file` does,
 * so the renderer makes it absolute for the origin the client reached; a remote account's rows hold absolute
 * URLs, which `mediaUrl` keeps as they are.
 */
export const profileEmojis = (shortcodes: string[], rows: NamedRow[]): EmojiRef[] =>
  resolveLocalEmojis(shortcodes, rows).map((e) => ({
    shortcode: e.shortcode,
    url: e.file,
    static_url: e.file,
    visible_in_picker: e.visible_in_picker,
  }));
