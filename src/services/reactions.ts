/**
 * Reading emoji reactions: per emoji, its exact count, whether the viewer reacted, and the first
 * REACTION_ACCOUNTS_MAX accounts behind it (deactivated and silenced reactors left out). Reacting is in
 * `status-actions.ts`.
 */
import { and, eq, lte, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, customEmojis, emojiReactions, userColumns, users } from "../db/schema";
import type { AccountWithUser } from "./accounts";
import { reactionName } from "./status-actions";
import { notSilenced } from "./visibility";
import { REACTION_ACCOUNTS_MAX } from "./reaction-limits";

export interface ReactionGroup {
  name: string;
  count: number;
  me: boolean;
  /** The image of a local custom emoji (R2 key or URL); null for a Unicode emoji. */
  file: string | null;
  accounts: AccountWithUser[];
}

/**
 * The reactions to a status the caller already checked the viewer may see, of one emoji when `emoji` is given,
 * in the order of their first reaction. One statement: window functions rank and count each emoji's rows, so a
 * popular status costs a bounded answer.
 */
export async function listReactions(
  d: DB,
  statusId: string,
  viewerId: string | null,
  opts: { emoji?: string; withMuted?: boolean },
): Promise<ReactionGroup[]> {
  const name = opts.emoji === undefined ? undefined : await reactionName(d, opts.emoji);
  const per = sql`PARTITION BY ${emojiReactions.emoji}`;
  const ranked = d
    .select({
      id: emojiReactions.id,
      emoji: emojiReactions.emoji,
      accountId: emojiReactions.accountId,
      rank: sql<number>`row_number() OVER (${per} ORDER BY ${emojiReactions.id})`.as("rank"),
      total: sql<number>`count(*) OVER (${per})`.as("total"),
      mine: sql<number>`coalesce(max(${emojiReactions.accountId} = ${viewerId}) OVER (${per}), 0)`.as("mine"),
    })
    .from(emojiReactions)
    .innerJoin(accounts, eq(accounts.id, emojiReactions.accountId))
    .where(
      and(
        eq(emojiReactions.statusId, statusId),
        name ? eq(emojiReactions.emoji, name) : undefined,
        eq(accounts.deactivated, false),
        notSilenced(viewerId, opts.withMuted ?? false, emojiReactions.accountId),
      ),
    )
    .as("ranked");
  const rows = await d
    .select({
      emoji: ranked.emoji,
      total: ranked.total,
      mine: ranked.mine,
      file: sql<string | null>`${customEmojis.file}`.as("emoji_file"),
      account: accounts,
      user: userColumns,
    })
    .from(ranked)
    .innerJoin(accounts, eq(accounts.id, ranked.accountId))
    .leftJoin(users, eq(users.accountId, accounts.id))
    // This instance's emoji by shortcode, another server's as `shortcode@domain` (as status hydration reads them).
    .leftJoin(
      customEmojis,
      sql`${customEmojis.shortcode} = (CASE WHEN instr(${ranked.emoji}, '@') > 0 THEN substr(${ranked.emoji}, 1, instr(${ranked.emoji}, '@') - 1) ELSE ${ranked.emoji} END)
        AND ifnull(${customEmojis.domain}, '') = (CASE WHEN instr(${ranked.emoji}, '@') > 0 THEN substr(${ranked.emoji}, instr(${ranked.emoji}, '@') + 1) ELSE '' END)`,
    )
    .where(lte(ranked.rank, REACTION_ACCOUNTS_MAX))
    .orderBy(ranked.id);
  const groups = new Map<string, ReactionGroup>();
  for (const r of rows) {
    const g = groups.get(r.emoji) ?? {
      name: r.emoji,
      count: Number(r.total),
      me: Boolean(r.mine),
      file: r.file,
      accounts: [],
    };
    g.accounts.push({ account: r.account, user: r.user });
    groups.set(r.emoji, g);
  }
  return [...groups.values()];
}
