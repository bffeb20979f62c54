/**
 * Direct-message conversations, as participations: one per local user and thread, made when a direct status
 * is posted (src/services/statuses.ts). `recipients` are whom the user's replies address; only the user
 * changes them. Ids are the participation ids (`pleroma.direct_conversation_id`).
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { inJson, type DB } from "../db/client";
import { accounts, conversations, participations, userColumns, users } from "../db/schema";
import { notFound } from "../lib/errors";
import { inOrder, pageQuery, rawPage, type Page } from "../db/paging";
import { notSilenced, visibleTo } from "./visibility";
import type { AccountWithUser } from "./accounts";
import { hydrate, type Hydrated } from "./hydrate";

export type ParticipationRow = typeof participations.$inferSelect & { threadId: string };

const withThread = (d: DB) =>
  d
    .select({ p: participations, threadId: conversations.threadId })
    .from(participations)
    .innerJoin(conversations, eq(conversations.id, participations.conversationId));

const flatten = (r: { p: typeof participations.$inferSelect; threadId: string }): ParticipationRow => ({
  ...r.p,
  threadId: r.threadId,
});

export async function ownParticipation(d: DB, ownerId: string, id: string): Promise<ParticipationRow> {
  const row = await withThread(d)
    .where(and(eq(participations.id, id), eq(participations.accountId, ownerId)))
    .get();
  if (!row) throw notFound();
  return flatten(row);
}

/** The user's conversations whose last status still exists, most recent first; paged by last status id. */
export async function listParticipations(
  d: DB,
  ownerId: string,
  page: Page,
  recipients?: string[],
): Promise<ParticipationRow[]> {
  const q = pageQuery(participations.lastStatusId, page);
  const rows = await withThread(d)
    .where(
      and(
        eq(participations.accountId, ownerId),
        sql`${participations.lastStatusId} IN (SELECT id FROM statuses)`,
        q.where,
        recipients?.length
          ? sql`NOT EXISTS (SELECT 1 FROM json_each(${JSON.stringify(recipients)}) want WHERE want.value NOT IN (SELECT value FROM json_each(${participations.recipients})))`
          : undefined,
      ),
    )
    .orderBy(q.orderBy)
    .limit(q.limit);
  return inOrder(rows, q).map(flatten);
}

/** Participations by id (any owner): for publishing, which renders each for its owner. */
export async function participationsByIds(d: DB, ids: string[]): Promise<ParticipationRow[]> {
  if (ids.length === 0) return [];
  return (await withThread(d).where(inJson(participations.id, [...new Set(ids)]))).map(flatten);
}

export async function markRead(d: DB, ownerId: string, ids: string[] | "all"): Promise<string[]> {
  const rows = await d
    .update(participations)
    .set({ unread: false })
    .where(
      and(
        eq(participations.accountId, ownerId),
        eq(participations.unread, true),
        ids === "all" ? undefined : inJson(participations.id, ids.length ? ids : [""]),
      ),
    )
    .returning({ id: participations.id });
  return rows.map((r) => r.id);
}

export async function deleteParticipation(d: DB, ownerId: string, id: string): Promise<void> {
  const p = await ownParticipation(d, ownerId, id);
  await d.delete(participations).where(eq(participations.id, p.id));
}

/** Replaces the recipients with the accounts among `ids` that exist (the owner is always one: not stored). */
export async function setRecipients(d: DB, ownerId: string, id: string, ids: string[]): Promise<void> {
  const p = await ownParticipation(d, ownerId, id);
  const wanted = [...new Set(ids)].filter((x) => x !== ownerId);
  const known = wanted.length
    ? await d.select({ id: accounts.id }).from(accounts).where(inJson(accounts.id, wanted))
    : [];
  const ok = new Set(known.map((a) => a.id));
  await d
    .update(participations)
    .set({ recipients: wanted.filter((x) => ok.has(x)) })
    .where(eq(participations.id, p.id));
}

/** Accounts of the given ids (with users), keyed by id. */
export async function accountsById(d: DB, ids: string[]): Promise<Map<string, AccountWithUser>> {
  if (ids.length === 0) return new Map();
  const rows = await d
    .select({ account: accounts, user: userColumns })
    .from(accounts)
    .leftJoin(users, eq(users.accountId, accounts.id))
    .where(inJson(accounts.id, [...new Set(ids)]));
  return new Map(rows.map((r) => [r.account.id, r]));
}

/** The page query of a conversation's statuses the viewer may see, newest first, for `hydrate`. */
export function conversationStatusesPage(threadId: string, viewerId: string, page: Page, withMuted: boolean): SQL {
  const p = rawPage(sql`s.id`, page);
  return sql`SELECT s.id FROM statuses s WHERE s.thread_id = ${threadId} AND s.reblog_of_id IS NULL AND ${p.where}
    AND ${visibleTo(viewerId, { id: sql`s.id`, accountId: sql`s.account_id`, visibility: sql`s.visibility` })} AND ${notSilenced(viewerId, withMuted, sql`s.account_id`)}
    ORDER BY ${p.order} LIMIT ${p.limit}`;
}

/** What conversations are rendered from: the participations, their last statuses, every account they name. */
export interface LoadedConversations {
  parts: ParticipationRow[];
  statuses: Hydrated;
  accounts: Map<string, AccountWithUser>;
}

/** `viewerId`'s conversations `parts` with their last statuses and accounts: two reads whatever their number. */
export async function loadConversations(
  d: DB,
  viewerId: string,
  parts: ParticipationRow[],
): Promise<LoadedConversations> {
  const lastIds = parts.flatMap((p) => (p.lastStatusId ? [p.lastStatusId] : []));
  const [statuses, accounts] = await Promise.all([
    hydrate(d, lastIds, viewerId),
    accountsById(d, [viewerId, ...parts.flatMap((p) => p.recipients)]),
  ]);
  return { parts, statuses, accounts };
}
