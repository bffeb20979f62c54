/**
 * Hashtags: the Tag entity's figures, and the hashtags a user follows (Mastodon 4's followed tags). A followed
 * tag's public posts join the follower's home timeline, local ones and remote ones as they arrive: home reads
 * pull them per followed tag (src/services/timelines.ts `homePage`) and the user stream carries them
 * (src/services/stream-delivery.ts), so nothing is written per post and unfollowing a tag takes effect at once.
 */
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { newId } from "../db/ids";
import { followedTags } from "../db/schema";
import { normalizeTag } from "../content/format";
import { notFound, unprocessable } from "../lib/errors";
import { inOrder, pageQuery, type Page } from "../db/paging";
import { tagHistory, tagHistoryQuery, type TrendingTag } from "./trends";

/**
 * Followed tags per user: each costs a bounded walk in every home read, so their number is bounded too (Mastodon
 * sets none; 100 is far beyond what people follow).
 */
export const FOLLOWED_TAGS_MAX = 100;

export interface TagInfo extends TrendingTag {
  /** For a signed-in viewer: whether they follow it. */
  following?: boolean;
}

/** A hashtag name from a path, normalized; 404 when it cannot be a hashtag (Mastodon's answer). */
export function tagFromPath(given: string): string {
  const tag = normalizeTag(given);
  if (!tag) throw notFound();
  return tag;
}

/** The Tag entity of any well-formed name, used or not (as Mastodon 4 answers): its week and, signed in, following. */
export async function tagInfo(d: DB, viewerId: string | null, tag: string, t = Date.now()): Promise<TagInfo> {
  const follows = viewerId
    ? sql`SELECT 1 AS followed FROM followed_tags WHERE account_id = ${viewerId} AND tag = ${tag}`
    : sql`SELECT 1 AS followed WHERE 0`;
  const [days, followed] = await d.$client.batch<any>([tagHistoryQuery(d, tag, t), statement(d, follows)]);
  return {
    name: tag,
    history: tagHistory(days.results, t),
    ...(viewerId ? { following: followed.results.length > 0 } : {}),
  };
}

/** Follows a tag (again: no change). Beyond FOLLOWED_TAGS_MAX, 422. */
export async function followTag(d: DB, me: string, tag: string): Promise<void> {
  const t = Date.now();
  // The cap is checked in the insert itself, so two requests at once cannot pass it together.
  const { meta } = await statement(
    d,
    sql`INSERT INTO followed_tags (id, account_id, tag, created_at) SELECT ${newId(t)}, ${me}, ${tag}, ${t}
      WHERE (SELECT count(*) FROM followed_tags WHERE account_id = ${me}) < ${FOLLOWED_TAGS_MAX}
      ON CONFLICT (account_id, tag) DO NOTHING`,
  ).run();
  if (meta.changes > 0) return;
  const already = await d
    .select({ id: followedTags.id })
    .from(followedTags)
    .where(and(eq(followedTags.accountId, me), eq(followedTags.tag, tag)))
    .get();
  if (!already) throw unprocessable(`You can follow at most ${FOLLOWED_TAGS_MAX} hashtags`);
}

export async function unfollowTag(d: DB, me: string, tag: string): Promise<void> {
  await d.delete(followedTags).where(and(eq(followedTags.accountId, me), eq(followedTags.tag, tag)));
}

/** The user's followed tags, newest followed first, paged by the follow's id (Link-only), with their weeks. */
export async function followedTagsPage(
  d: DB,
  me: string,
  page: Page,
  t = Date.now(),
): Promise<{ cursor: string; tag: TagInfo }[]> {
  const q = pageQuery(followedTags.id, page);
  const rows = inOrder(
    await d
      .select({ id: followedTags.id, tag: followedTags.tag })
      .from(followedTags)
      .where(and(eq(followedTags.accountId, me), q.where))
      .orderBy(q.orderBy)
      .limit(q.limit),
    q,
  );
  if (rows.length === 0) return [];
  const histories = await d.$client.batch<any>(rows.map((r) => tagHistoryQuery(d, r.tag, t)));
  return rows.map((r, i) => ({
    cursor: r.id,
    tag: { name: r.tag, history: tagHistory(histories[i].results, t), following: true },
  }));
}
