/**
 * What remote accounts do to statuses (issue 18): a `Like` becomes a favourite, an `EmojiReact` (or Misskey's
 * `Like` carrying a reaction) an emoji reaction, an `Announce` a reblog, each with its notification and counter
 * as a local action writes them (one batch), and the `Undo` of each removes it. Only statuses the sender may see
 * by the one visibility rule are acted on (never a local-only one); every write is idempotent by the activity's
 * id and by its pair (one favourite, one reblog, one reaction per emoji and account).
 */
import type { Effects } from "./effects";
import { and, eq, isNull, ne, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { newId } from "../db/ids";
import { emojiReactions, favourites, statuses, type Visibility } from "../db/schema";
import type { AccountRow } from "./accounts";
import type { StatusRow } from "./hydrate";
import { notify } from "./notifications";
import { deleteStatuses, recountFavourites } from "./statuses";
import { visibleTo } from "./visibility";
import { writeReblog } from "./status-actions";

/** What follows an incoming interaction: stream events, and push when it notified someone. */
export type Received = Effects;
const NOTHING: Received = {};

/** A local status `from` may act on: its own (not a reblog), not local-only, and visible to it. */
export function localStatusFor(d: DB, uri: string, from: AccountRow): Promise<StatusRow | undefined> {
  return d
    .select()
    .from(statuses)
    .where(
      and(
        eq(statuses.uri, uri),
        eq(statuses.local, true),
        isNull(statuses.reblogOfId),
        ne(statuses.visibility, "local"),
        visibleTo(from.id),
      ),
    )
    .get();
}

/** A stored status (local or remote) by uri, not a reblog. */
export function storedStatus(d: DB, uri: string): Promise<StatusRow | undefined> {
  return d
    .select()
    .from(statuses)
    .where(and(eq(statuses.uri, uri), isNull(statuses.reblogOfId)))
    .get();
}

/**
 * A remote `Like` of a local status: the favourite, its `favourite` notification and the recount; `extra`
 * statements join the batch (a polite request's Accept: services/interaction-requests.ts).
 */
export async function receiveLike(
  d: DB,
  from: AccountRow,
  status: StatusRow,
  uri: string,
  t: number = now(),
  extra: D1PreparedStatement[] = [],
): Promise<Received> {
  const id = newId(t);
  const made = sql`EXISTS (SELECT 1 FROM favourites WHERE id = ${id})`;
  await d.$client.batch([
    statement(
      d,
      d
        .insert(favourites)
        .values({ id, accountId: from.id, statusId: status.id, createdAt: t, uri })
        .onConflictDoNothing(),
    ),
    statement(d, recountFavourites(status.id)),
    notify(d, { type: "favourite", to: status.accountId, from: from.id, statusId: status.id, onlyIf: made }),
    ...extra,
  ]);
  return { push: true };
}

/** A reaction as received: a unicode emoji, or a custom emoji of the sender's server (shortcode and image). */
export type ReceivedEmoji = { unicode: string } | { shortcode: string; url: string };

/**
 * The name a remote reaction is stored under: the unicode emoji, or `shortcode@domain` for a custom emoji of
 * another server (Akkoma's naming), its image kept as a remote `custom_emojis` row of that domain.
 */
const remoteReactionName = (e: ReceivedEmoji, domain: string) =>
  "unicode" in e ? e.unicode : `${e.shortcode}@${domain}`;

/** A remote emoji reaction to a local status: the reaction (and its remote emoji), the notification. */
export async function receiveReaction(
  d: DB,
  from: AccountRow,
  status: StatusRow,
  uri: string,
  emoji: ReceivedEmoji,
  t: number = now(),
): Promise<Received> {
  const id = newId(t);
  const name = remoteReactionName(emoji, from.domain!);
  const made = sql`EXISTS (SELECT 1 FROM emoji_reactions WHERE id = ${id})`;
  await d.$client.batch([
    ...("url" in emoji
      ? [
          statement(
            d,
            sql`INSERT INTO custom_emojis (shortcode, domain, file, url, category, visible_in_picker, created_at) VALUES (${emoji.shortcode}, ${from.domain}, ${emoji.url}, ${emoji.url}, NULL, 0, ${t})
              ON CONFLICT DO UPDATE SET file = excluded.file, url = excluded.url`,
          ),
        ]
      : []),
    statement(
      d,
      d
        .insert(emojiReactions)
        .values({ id, accountId: from.id, statusId: status.id, emoji: name, createdAt: t, uri })
        .onConflictDoNothing(),
    ),
    notify(d, {
      type: "pleroma:emoji_reaction",
      to: status.accountId,
      from: from.id,
      statusId: status.id,
      emoji: name,
      onlyIf: made,
    }),
  ]);
  return { push: true };
}

/**
 * A remote `Announce` of a stored status (public or unlisted: the caller checked): a reblog by the sender, in
 * the home feeds of its local followers, with the `reblog` notification of a local author (`extra` joins its batch).
 */
export async function receiveAnnounce(
  d: DB,
  from: AccountRow,
  original: StatusRow,
  uri: string,
  visibility: Visibility,
  opts: { inlineFanoutMax: number; t?: number; extra?: D1PreparedStatement[] },
): Promise<Received> {
  const t = opts.t ?? now();
  const id = newId(t);
  try {
    await writeReblog(
      d,
      from,
      original,
      { id, uri, url: uri, visibility, t, inlineFanoutMax: opts.inlineFanoutMax },
      opts.extra,
    );
  } catch (e) {
    // Delivered again, or the sender reblogged it already: nothing more.
    if (String(e).includes("UNIQUE")) return NOTHING;
    throw e;
  }
  return { events: [{ accountId: null, event: "update", payload: id }], push: true };
}

/**
 * The `Undo` of a Like, EmojiReact or Announce of `from`, by the activity's id; a Like without a known id by the
 * status it liked (`likedUri`, as Mastodon matches it). Only the sender's own rows are touched.
 */
export async function receiveUndoInteraction(
  d: DB,
  from: AccountRow,
  uri: string | null,
  likedUri: string | null = null,
): Promise<Received> {
  const [fav, reaction, reblog, likedFav] = await d.batch([
    d
      .select({ id: favourites.id, statusId: favourites.statusId })
      .from(favourites)
      .where(and(eq(favourites.uri, uri ?? ""), eq(favourites.accountId, from.id))),
    d
      .select({ id: emojiReactions.id, statusId: emojiReactions.statusId, emoji: emojiReactions.emoji })
      .from(emojiReactions)
      .where(and(eq(emojiReactions.uri, uri ?? ""), eq(emojiReactions.accountId, from.id))),
    d
      .select({ id: statuses.id })
      .from(statuses)
      .where(
        and(eq(statuses.uri, uri ?? ""), eq(statuses.accountId, from.id), sql`${statuses.reblogOfId} IS NOT NULL`),
      ),
    d
      .select({ id: favourites.id, statusId: favourites.statusId })
      .from(favourites)
      .innerJoin(statuses, eq(statuses.id, favourites.statusId))
      .where(and(eq(statuses.uri, likedUri ?? ""), eq(favourites.accountId, from.id))),
  ]);
  // By the activity's id first; by the liked status only when the id names nothing of the sender's.
  const f = fav[0] ?? (reaction[0] || reblog[0] ? undefined : likedFav[0]);
  if (f) {
    const owner = sql`(SELECT account_id FROM statuses WHERE id = ${f.statusId})`;
    await d.$client.batch([
      statement(d, sql`DELETE FROM favourites WHERE id = ${f.id}`),
      statement(d, recountFavourites(f.statusId)),
      statement(
        d,
        sql`DELETE FROM notifications WHERE account_id = ${owner} AND from_account_id = ${from.id} AND type = 'favourite' AND status_id = ${f.statusId}`,
      ),
    ]);
    return NOTHING;
  }
  const r = reaction[0];
  if (r) {
    await d.$client.batch([
      statement(d, sql`DELETE FROM emoji_reactions WHERE id = ${r.id}`),
      statement(
        d,
        sql`DELETE FROM notifications WHERE account_id = (SELECT account_id FROM statuses WHERE id = ${r.statusId}) AND from_account_id = ${from.id}
          AND type = 'pleroma:emoji_reaction' AND status_id = ${r.statusId} AND emoji = ${r.emoji}`,
      ),
    ]);
    return NOTHING;
  }
  if (reblog[0]) return { events: (await deleteStatuses(d, [reblog[0].id])).events };
  return NOTHING;
}
