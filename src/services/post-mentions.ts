/**
 * What the text of a local post or edit names (services/statuses.ts `preparePost`, services/status-edits.ts
 * `editStatus`): the accounts it mentions, known here or looked up on their servers, and its emoji shortcodes.
 */
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, userColumns, users } from "../db/schema";
import { extract, type MentionTarget } from "../content/format";
import type { AccountWithUser } from "./accounts";

/** Emoji of the text, the spoiler and the poll options: the status's `emojis` must render all of them. */
export async function shortcodesOf(
  host: string,
  found: { emojis: string[] },
  spoiler: string,
  options: string[],
): Promise<string[]> {
  const others = await Promise.all([spoiler, ...options].map((x) => extract(x, "text/plain", host)));
  return [...new Set([...found.emojis, ...others.flatMap((x) => x.emojis)])];
}

/** Active accounts by acct key (`user`, `user@host`), with their users. */
export function accountsByAcctKey(d: DB, acctKeys: string[]) {
  return d
    .select({ account: accounts, user: userColumns })
    .from(accounts)
    .leftJoin(users, eq(users.accountId, accounts.id))
    .where(
      and(
        sql`${accounts.acctKey} IN (SELECT value FROM json_each(${JSON.stringify(acctKeys)}))`,
        eq(accounts.deactivated, false),
      ),
    );
}

/**
 * The named accounts by acct key: those read here (`accountsByAcctKey`), then unknown remote ones looked up on
 * their servers by `resolve` (the keyed row may live on another host than typed); `resolved`: those looked up.
 * Without `resolve` (e.g. the cron), unknown mentions stay text.
 */
export async function knownMentions(
  acctKeys: string[],
  rows: AccountWithUser[],
  resolve: ((acctKeys: string[]) => Promise<Map<string, AccountWithUser>>) | undefined,
): Promise<{ byKey: Map<string, AccountWithUser>; resolved: AccountWithUser[] }> {
  const byKey = new Map<string, AccountWithUser>(rows.map((r) => [r.account.acctKey!, r]));
  const unknown = acctKeys.filter((k) => k.includes("@") && !byKey.has(k));
  const resolvedRows = unknown.length && resolve ? [...(await resolve(unknown))] : [];
  for (const [k, a] of resolvedRows) byKey.set(k, a);
  return { byKey, resolved: resolvedRows.map(([, a]) => a) };
}

/** The mentions of a text that name known accounts, as the renderer links them. */
export function mentionTargets(keys: string[], byKey: Map<string, AccountWithUser>): Map<string, MentionTarget> {
  return new Map(
    keys.flatMap((k) => {
      const a = byKey.get(k)?.account;
      return a
        ? [
            [
              k,
              { id: a.id, username: a.username, acct: a.domain ? `${a.username}@${a.domain}` : a.username, url: a.url },
            ] as const,
          ]
        : [];
    }),
  );
}
