/**
 * Search: accounts by acct or display name, hashtags by prefix, statuses by full text (SQLite FTS5 in D1).
 * Statuses found are only those the viewer may see; unlisted ones count as public here.
 */
import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, statusTags, userColumns, users } from "../db/schema";
import type { AccountWithUser } from "./accounts";
import { notSilenced, silenced, visibleTo } from "./visibility";

/** The end of a prefix range: every string starting with `prefix` is below it. */
const upper = (prefix: string) => prefix + "\uffff";

export interface AccountSearch {
  q: string;
  limit: number;
  offset: number;
  following?: boolean;
  viewerId: string | null;
  localHost: string;
  /** An account found by resolving the query (`federation/fetching/resolve.ts`): listed first, under the same rules. */
  include?: string | null;
}

export async function searchAccounts(d: DB, s: AccountSearch): Promise<AccountWithUser[]> {
  const q = s.q.trim().replace(/^@/, "").toLowerCase();
  if (!q && !s.include) return [];
  const [user, host] = q.split("@");
  const key = host && host !== s.localHost.toLowerCase() ? `${user}@${host}` : user;
  const me = s.viewerId ? sql`${s.viewerId}` : null;
  const rows = await d
    .select({ account: accounts, user: userColumns })
    .from(accounts)
    .leftJoin(users, eq(users.accountId, accounts.id))
    .where(
      and(
        eq(accounts.deactivated, false),
        q
          ? sql`(${accounts.acctKey} >= ${key} AND ${accounts.acctKey} < ${upper(key)} OR instr(lower(${accounts.displayName}), ${q}) > 0 OR ${accounts.id} = ${s.include ?? ""})`
          : eq(accounts.id, s.include ?? ""),
        // Accounts blocked either way are not found; muted ones are.
        s.viewerId
          ? sql`NOT ${silenced(s.viewerId, accounts.id, { blocks: "either", mutes: "none", domains: false })}`
          : undefined,
        me && s.following
          ? sql`EXISTS (SELECT 1 FROM follows f WHERE f.account_id = ${me} AND f.target_account_id = ${accounts.id})`
          : undefined,
      ),
    )
    // The exact acct first, then acct prefixes, then display names; the most followed first within each.
    .orderBy(
      sql`${accounts.id} = ${s.include ?? ""} DESC`,
      sql`${accounts.acctKey} = ${key} DESC`,
      sql`${accounts.acctKey} >= ${key} AND ${accounts.acctKey} < ${upper(key)} DESC`,
      desc(accounts.followersCount),
      accounts.id,
    )
    .limit(s.limit)
    .offset(s.offset);
  return rows;
}

export async function searchHashtags(d: DB, q: string, limit: number, offset: number): Promise<string[]> {
  const prefix = q.trim().replace(/^#/, "").toLowerCase();
  if (!prefix) return [];
  const rows = await d
    .select({ tag: statusTags.tag, n: sql<number>`count(*)` })
    .from(statusTags)
    .where(sql`${statusTags.tag} >= ${prefix} AND ${statusTags.tag} < ${upper(prefix)}`)
    .groupBy(statusTags.tag)
    .orderBy(sql`${statusTags.tag} = ${prefix} DESC`, sql`count(*) DESC`, statusTags.tag)
    .limit(limit)
    .offset(offset);
  return rows.map((r) => r.tag);
}

/** An FTS5 query from what a person typed: every word must appear (as a word or a word's start). */
function ftsQuery(q: string): string | null {
  const words = q.match(/[\p{L}\p{N}_]+/gu) ?? [];
  if (words.length === 0) return null;
  return words
    .slice(0, 16)
    .map((w) => `"${w}"*`)
    .join(" ");
}

/** The page query of matching statuses, newest first, for `hydrate`. */
export function statusSearchPage(
  viewerId: string | null,
  q: string,
  limit: number,
  offset: number,
  accountId?: string,
): ReturnType<typeof sql> | null {
  const match = ftsQuery(q);
  if (!match) return null;
  const s = { id: sql`s.id`, accountId: sql`s.account_id`, visibility: sql`s.visibility` };
  const author = accountId ? sql`AND s.account_id = ${accountId}` : sql``;
  return sql`SELECT s.id FROM statuses_fts f JOIN statuses s ON s.search_rowid = f.rowid
    WHERE statuses_fts MATCH ${match} AND s.reblog_of_id IS NULL ${author} AND ${visibleTo(viewerId, s)} AND ${notSilenced(viewerId, false, sql`s.account_id`)}
    ORDER BY s.id DESC LIMIT ${sql.raw(String(limit))} OFFSET ${sql.raw(String(offset))}`;
}

/**
 * A status this instance knows by `url`: its ActivityPub id, or the web address of a local one
 * (`statuses_url_local`). An imported post keeps its old address, which nothing vouches for (an archive is not
 * signed): it is not found by it, where it could stand for anyone's real post.
 */
export function addressedAs(url: string, alias: "s" | "statuses"): SQL {
  const t = sql.raw(alias);
  return sql`(${t}.uri = ${url} OR (${t}.url = ${url} AND ${t}.local = 1 AND NOT EXISTS (SELECT 1 FROM imported_statuses i WHERE i.status_id = ${t}.id)))`;
}

/**
 * The page query of the status whose ActivityPub id or URL is `url` (a remote status's URL is found by the id
 * resolving it gave, `resolvedId`: `statuses_url_local` holds local statuses only), if the viewer may see it; the
 * resolved status first.
 */
export function statusByUrlPage(
  viewerId: string | null,
  url: string,
  resolvedId: string | null = null,
): ReturnType<typeof sql> {
  const s = { id: sql`s.id`, accountId: sql`s.account_id`, visibility: sql`s.visibility` };
  return sql`SELECT s.id FROM statuses s
    WHERE (${addressedAs(url, "s")} OR s.id = ${resolvedId})
      AND s.reblog_of_id IS NULL AND ${visibleTo(viewerId, s)} AND ${notSilenced(viewerId, false, sql`s.account_id`)}
    ORDER BY s.id = ${resolvedId} DESC, s.id DESC LIMIT 1`;
}
