/**
 * Loads everything needed to render a set of statuses for a viewer in ONE D1 round trip: the statuses and the
 * ones they reblog, authors and mentioned accounts, tags, media, polls and votes, the viewer's favourites,
 * reblogs, bookmarks, thread mutes and conversation participations, emoji reactions, applications, cards,
 * parent visibility and custom emojis. Every statement selects by the same id set, so the cost is fixed
 * whatever the page size.
 */
import { and, asc, count, eq, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import {
  accounts,
  apps,
  bookmarks,
  conversations,
  customEmojis,
  emojiReactions,
  favourites,
  linkCards,
  mediaAttachments,
  participations,
  pollVotes,
  polls,
  statusRecipients,
  statuses,
  statusTags,
  threadMutes,
  users,
} from "../db/schema";
import type { AccountWithUser } from "./accounts";
import { notSilenced, visibleTo } from "./visibility";

export type StatusRow = typeof statuses.$inferSelect;
export type MediaRow = typeof mediaAttachments.$inferSelect;
export type PollRow = typeof polls.$inferSelect;
export type EmojiRow = typeof customEmojis.$inferSelect;

export interface Hydrated {
  viewerId: string | null;
  /** With a page query as the source: the page's ids, newest first. */
  page: string[];
  statuses: Map<string, StatusRow>;
  accounts: Map<string, AccountWithUser>;
  mentions: Map<string, string[]>;
  tags: Map<string, string[]>;
  media: Map<string, MediaRow[]>;
  polls: Map<string, PollRow>;
  pollCounts: Map<string, Map<number, number>>;
  pollVoters: Map<string, number>;
  ownVotes: Map<string, number[]>;
  favourited: Set<string>;
  bookmarked: Set<string>;
  reblogged: Set<string>;
  mutedThreads: Set<string>;
  reactions: Map<string, { name: string; count: number; me: boolean }[]>;
  apps: Map<string, { name: string; website: string | null }>;
  cards: Map<string, Record<string, unknown> | null>;
  visibleParents: Set<string>;
  participations: Map<string, string>;
  emojis: Map<string, EmojiRow>;
}

const group = <T, K, V>(rows: T[], key: (r: T) => K, value: (r: T) => V) => {
  const m = new Map<K, V[]>();
  for (const r of rows) {
    const k = key(r);
    const list = m.get(k);
    if (list) list.push(value(r));
    else m.set(k, [value(r)]);
  }
  return m;
};

/**
 * `source` is either status ids, or a query selecting one column of status ids (a timeline page): then the page
 * is read in the same batch as everything it needs, and `page` holds its ids newest first.
 */
export async function hydrate(d: DB, source: string[] | SQL, viewerId: string | null, opts: { withMuted?: boolean } = {}): Promise<Hydrated> {
  const src = Array.isArray(source) ? sql`SELECT value FROM json_each(${JSON.stringify([...new Set(source)])})` : source;
  // The requested statuses and the statuses they reblog.
  const all = sql`(SELECT * FROM (${src}) UNION SELECT reblog_of_id FROM statuses WHERE id IN (${src}) AND reblog_of_id IS NOT NULL)`;
  const viewer = viewerId ?? "";
  const t = Date.now();

  const [
    pageRows,
    statusRows,
    accountRows,
    mentionRows,
    tagRows,
    mediaRows,
    pollRows,
    pollCountRows,
    voterRows,
    ownVoteRows,
    favRows,
    bookmarkRows,
    reblogRows,
    muteRows,
    reactionRows,
    appRows,
    cardRows,
    parentRows,
    participationRows,
    emojiRows,
  ] = await d.batch([
    d.select({ id: statuses.id }).from(statuses).where(Array.isArray(source) ? sql`0` : sql`${statuses.id} IN (${src})`),
    d.select().from(statuses).where(sql`${statuses.id} IN ${all}`),
    d
      .select({ account: accounts, user: users })
      .from(accounts)
      .leftJoin(users, eq(users.accountId, accounts.id))
      .where(
        sql`${accounts.id} IN (SELECT account_id FROM statuses WHERE id IN ${all}
          UNION SELECT account_id FROM status_recipients WHERE status_id IN ${all} AND mention = 1
          UNION SELECT in_reply_to_account_id FROM statuses WHERE id IN ${all})`,
      ),
    d.select().from(statusRecipients).where(and(sql`${statusRecipients.statusId} IN ${all}`, eq(statusRecipients.mention, true))),
    d.select().from(statusTags).where(sql`${statusTags.statusId} IN ${all}`),
    d.select().from(mediaAttachments).where(sql`${mediaAttachments.statusId} IN ${all}`).orderBy(asc(mediaAttachments.position), asc(mediaAttachments.id)),
    d.select().from(polls).where(sql`${polls.statusId} IN ${all}`),
    d
      .select({ pollId: pollVotes.pollId, choice: pollVotes.choice, n: count() })
      .from(pollVotes)
      .where(sql`${pollVotes.pollId} IN (SELECT id FROM polls WHERE status_id IN ${all})`)
      .groupBy(pollVotes.pollId, pollVotes.choice),
    d
      .select({ pollId: pollVotes.pollId, n: sql<number>`count(DISTINCT ${pollVotes.accountId})` })
      .from(pollVotes)
      .where(sql`${pollVotes.pollId} IN (SELECT id FROM polls WHERE status_id IN ${all})`)
      .groupBy(pollVotes.pollId),
    d
      .select({ pollId: pollVotes.pollId, choice: pollVotes.choice })
      .from(pollVotes)
      .where(and(eq(pollVotes.accountId, viewer), sql`${pollVotes.pollId} IN (SELECT id FROM polls WHERE status_id IN ${all})`)),
    d.select({ statusId: favourites.statusId }).from(favourites).where(and(eq(favourites.accountId, viewer), sql`${favourites.statusId} IN ${all}`)),
    d.select({ statusId: bookmarks.statusId }).from(bookmarks).where(and(eq(bookmarks.accountId, viewer), sql`${bookmarks.statusId} IN ${all}`)),
    d.select({ statusId: statuses.reblogOfId }).from(statuses).where(and(eq(statuses.accountId, viewer), sql`${statuses.reblogOfId} IN ${all}`)),
    d
      .select({ threadId: threadMutes.threadId })
      .from(threadMutes)
      .where(
        and(
          eq(threadMutes.accountId, viewer),
          sql`${threadMutes.threadId} IN (SELECT thread_id FROM statuses WHERE id IN ${all})`,
          sql`(${threadMutes.expiresAt} IS NULL OR ${threadMutes.expiresAt} > ${t})`,
        ),
      ),
    d
      .select({
        statusId: emojiReactions.statusId,
        emoji: emojiReactions.emoji,
        n: count(),
        me: sql<number>`max(${emojiReactions.accountId} = ${viewer})`,
      })
      .from(emojiReactions)
      .where(and(sql`${emojiReactions.statusId} IN ${all}`, notSilenced(viewerId, opts.withMuted, emojiReactions.accountId)))
      .groupBy(emojiReactions.statusId, emojiReactions.emoji)
      .orderBy(sql`min(${emojiReactions.id})`),
    d.select({ id: apps.id, name: apps.name, website: apps.website }).from(apps).where(sql`${apps.id} IN (SELECT app_id FROM statuses WHERE id IN ${all})`),
    d.select().from(linkCards).where(sql`${linkCards.url} IN (SELECT card_url FROM statuses WHERE id IN ${all})`),
    d.select({ id: statuses.id }).from(statuses).where(and(sql`${statuses.id} IN (SELECT in_reply_to_id FROM statuses WHERE id IN ${all})`, visibleTo(viewerId))),
    d
      .select({ id: participations.id, threadId: conversations.threadId })
      .from(participations)
      .innerJoin(conversations, eq(conversations.id, participations.conversationId))
      .where(and(eq(participations.accountId, viewer), sql`${conversations.threadId} IN (SELECT thread_id FROM statuses WHERE id IN ${all})`)),
    d
      .select()
      .from(customEmojis)
      .where(
        sql`${customEmojis.shortcode} IN (SELECT j.value FROM statuses s, json_each(s.emoji_shortcodes) j WHERE s.id IN ${all}
          UNION SELECT emoji FROM emoji_reactions WHERE status_id IN ${all})`,
      ),
  ]);

  const pollCounts = new Map<string, Map<number, number>>();
  for (const r of pollCountRows) {
    if (!pollCounts.has(r.pollId)) pollCounts.set(r.pollId, new Map());
    pollCounts.get(r.pollId)!.set(r.choice, r.n);
  }
  return {
    viewerId,
    page: pageRows.map((r) => r.id).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0)),
    statuses: new Map(statusRows.map((s) => [s.id, s])),
    accounts: new Map(accountRows.map((a) => [a.account.id, a])),
    mentions: group(mentionRows, (r) => r.statusId, (r) => r.accountId),
    tags: group(tagRows, (r) => r.statusId, (r) => r.tag),
    media: group(mediaRows, (r) => r.statusId!, (r) => r),
    polls: new Map(pollRows.map((p) => [p.statusId, p])),
    pollCounts,
    pollVoters: new Map(voterRows.map((r) => [r.pollId, r.n])),
    ownVotes: group(ownVoteRows, (r) => r.pollId, (r) => r.choice),
    favourited: new Set(favRows.map((r) => r.statusId)),
    bookmarked: new Set(bookmarkRows.map((r) => r.statusId)),
    reblogged: new Set(reblogRows.map((r) => r.statusId!)),
    mutedThreads: new Set(muteRows.map((r) => r.threadId)),
    reactions: group(reactionRows, (r) => r.statusId, (r) => ({ name: r.emoji, count: r.n, me: Boolean(r.me) })),
    apps: new Map(appRows.map((a) => [a.id, { name: a.name, website: a.website }])),
    cards: new Map(cardRows.map((c) => [c.url, c.data ?? null])),
    visibleParents: new Set(parentRows.map((r) => r.id)),
    participations: new Map(participationRows.map((r) => [r.threadId, r.id])),
    emojis: new Map(emojiRows.map((e) => [e.shortcode, e])),
  };
}
