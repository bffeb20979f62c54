/** Lists: a user's named groups of accounts they follow. */
import { and, asc, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, inJson, statement } from "../db/client";
import { newId } from "../db/ids";
import { follows, listAccounts, lists } from "../db/schema";
import { notFound, unprocessable } from "../lib/errors";
import { ME } from "./visibility";
import { backfillHome } from "./backfill";
import type { Effects } from "./effects";

export type ListRow = typeof lists.$inferSelect;

export function ownLists(d: DB, ownerId: string) {
  return d.select().from(lists).where(eq(lists.accountId, ownerId)).orderBy(asc(lists.id));
}

/**
 * `ownList` as a hydration part (kind `list`), for the list timeline's one statement: a row only when the list is
 * the viewer's (`ME`).
 */
export const ownListPart = (listId: string) =>
  sql`SELECT 'list' AS k, json_object('id', id) AS v FROM lists WHERE id = ${listId} AND account_id = ${ME}`;

/** The owner's list, or 404: another user's list does not exist for this caller. */
export async function ownList(d: DB, ownerId: string, listId: string): Promise<ListRow> {
  const list = await d
    .select()
    .from(lists)
    .where(and(eq(lists.id, listId), eq(lists.accountId, ownerId)))
    .get();
  if (!list) throw notFound();
  return list;
}

/** Lists per user (Mastodon's limit). */
const MAX_LISTS = 50;

export async function createList(d: DB, ownerId: string, title: string): Promise<ListRow> {
  const t = now();
  const row = { id: newId(t), accountId: ownerId, title, createdAt: t };
  // Counted by the insert itself: racing requests cannot pass the limit together.
  const { meta } = await statement(
    d,
    sql`INSERT INTO lists (id, account_id, title, created_at) SELECT ${row.id}, ${ownerId}, ${title}, ${t}
      WHERE (SELECT count(*) FROM lists WHERE account_id = ${ownerId}) < ${MAX_LISTS}`,
  ).run();
  if (!meta.changes) throw unprocessable("Validation failed: You have reached the maximum number of lists");
  return row;
}

export async function renameList(d: DB, ownerId: string, listId: string, title: string): Promise<ListRow> {
  const row = await d
    .update(lists)
    .set({ title })
    .where(and(eq(lists.id, listId), eq(lists.accountId, ownerId)))
    .returning()
    .get();
  if (!row) throw notFound();
  return row;
}

export async function deleteList(d: DB, ownerId: string, listId: string): Promise<void> {
  const list = await ownList(d, ownerId, listId);
  // Members go with the list, in the same batch (the foreign key cascade needs PRAGMA foreign_keys).
  await d.batch([
    d.delete(listAccounts).where(eq(listAccounts.listId, list.id)),
    d.delete(lists).where(eq(lists.id, list.id)),
  ]);
}

/**
 * Adds accounts the owner follows; any account not followed refuses the whole request. The list fills at once
 * with each member's latest posts (the home feed it reads from), a remote member's outbox fetched after.
 */
export async function addToList(d: DB, ownerId: string, listId: string, accountIds: string[]): Promise<Effects> {
  const list = await ownList(d, ownerId, listId);
  const followed = await d
    .select({
      id: follows.targetAccountId,
      remote: sql<number>`(SELECT domain IS NOT NULL FROM accounts WHERE id = ${follows.targetAccountId})`,
    })
    .from(follows)
    .where(and(eq(follows.accountId, ownerId), inJson(follows.targetAccountId, accountIds)));
  const ok = new Set(followed.map((f) => f.id));
  const missing = accountIds.filter((id) => !ok.has(id));
  if (missing.length)
    throw unprocessable(`You can only add accounts you follow to a list (not followed: ${missing.join(", ")})`);
  const t = now();
  // One JSON parameter for the rows: a VALUES list binds four parameters per member and passes D1's 100.
  const rows = JSON.stringify([...ok].map((accountId) => ({ id: newId(t), account: accountId })));
  const [inserted] = await d.$client.batch<{ account_id: string }>([
    statement(
      d,
      sql`INSERT INTO list_accounts (id, list_id, account_id, created_at)
      SELECT json_extract(value, '$.id'), ${list.id}, json_extract(value, '$.account'), ${t} FROM json_each(${rows}) WHERE true
      ON CONFLICT DO NOTHING RETURNING account_id`,
    ),
    backfillHome(d, ownerId, [...ok]),
  ]);
  // Outboxes are read for new members only (one already in the list asks for nothing).
  const added = new Set(inserted?.results.map((r) => r.account_id) ?? []);
  const remote = followed.filter((f) => f.remote && added.has(f.id));
  return remote.length ? { backfill: remote.map((f) => ({ readerId: ownerId, accountId: f.id })) } : {};
}

export async function removeFromList(d: DB, ownerId: string, listId: string, accountIds: string[]): Promise<void> {
  const list = await ownList(d, ownerId, listId);
  await d.delete(listAccounts).where(and(eq(listAccounts.listId, list.id), inJson(listAccounts.accountId, accountIds)));
}

/** The owner's lists that contain `accountId`. */
export function listsContaining(d: DB, ownerId: string, accountId: string) {
  return d
    .select({ id: lists.id, accountId: lists.accountId, title: lists.title, createdAt: lists.createdAt })
    .from(lists)
    .where(
      and(
        eq(lists.accountId, ownerId),
        sql`${lists.id} IN (SELECT list_id FROM list_accounts WHERE account_id = ${accountId})`,
      ),
    )
    .orderBy(asc(lists.id));
}
