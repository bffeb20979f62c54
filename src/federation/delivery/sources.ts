/**
 * What the documents of a claim of outbox rows are built from (documents/activities.ts `ActivitySources`): the
 * statuses, accounts, chat messages, votes and actor documents each row names, loaded for the whole claim at once
 * (a fixed number of statements whatever the claim holds).
 *
 * What each activity kind names is one table over every kind: a kind added to `OutboxActivity` does not compile
 * until its entry here says what it needs.
 */
import type { Context } from "@fedify/fedify";
import type { Actor } from "@fedify/vocab";
import { and, eq, isNull, sql } from "drizzle-orm";
import { inJson, statement, type DB } from "../../db/client";
import { accounts, chatMessages, mediaAttachments } from "../../db/schema";
import type { Env } from "../../env";
import { hydrateWithParentUris } from "../../services/hydrate";
import { origins } from "../../lib/media-urls";
import type { OutboxActivity } from "../../services/outbox";
import type { OutboxActivityOf, OutboxKind } from "../../services/outbox-activity";
import type { FederationData } from "../data";
import type { ActivitySources } from "../documents/activities";
import { localActor } from "../documents/local-actor";
import { votesById } from "../documents/polls";

/** What one row's document needs besides its actor (every row's actor is loaded). */
interface Needs {
  statuses?: string[];
  accounts?: string[];
  chatMessages?: string[];
  votes?: string[];
  /** The actor's own document, as served at its id. */
  actorDocument?: true;
}

const NONE: Needs = {};
const status = (a: { statusId: string }): Needs => ({ statuses: [a.statusId] });
const target = (a: { targetId: string }): Needs => ({ accounts: [a.targetId] });

const NEEDS: { [K in OutboxKind]: (a: OutboxActivityOf<K>) => Needs } = {
  Create: status,
  Update: status,
  UpdatePoll: status,
  Announce: status,
  Delete: (a) => ({ accounts: a.recipients }),
  Follow: target,
  Undo: target,
  Accept: (a) => ({ accounts: [a.followerId] }),
  Reject: (a) => ({ accounts: [a.followerId] }),
  UpdateActor: () => ({ actorDocument: true }),
  ChatMessage: (a) => ({ accounts: [a.recipientId], chatMessages: [a.messageId] }),
  DeleteChatMessage: (a) => ({ accounts: [a.recipientId] }),
  DeleteActor: () => NONE,
  Move: target,
  Vote: (a) => ({ votes: [a.voteId] }),
  Block: target,
  UndoBlock: target,
  Flag: target,
  Like: target,
  UndoLike: target,
  EmojiReact: target,
  UndoEmojiReact: target,
  UndoAnnounce: (a) => ({ accounts: [a.originalAuthorId] }),
  // The status's uri travels in the row.
  AddFeatured: () => NONE,
  RemoveFeatured: () => NONE,
  RelayFollow: () => NONE,
  RelayUndo: () => NONE,
  RelayAccept: () => NONE,
  QuoteRequest: (a) => ({ statuses: [a.statusId], accounts: [a.targetId] }),
  QuoteAccept: (a) => ({ accounts: [a.requesterId] }),
  QuoteReject: (a) => ({ accounts: [a.requesterId] }),
  DeleteQuoteAuthorization: target,
  InteractionRequest: (a) => ({ statuses: a.statusId ? [a.statusId] : [], accounts: [a.targetId] }),
  InteractionAccept: (a) => ({ accounts: [a.requesterId] }),
  InteractionReject: (a) => ({ accounts: [a.requesterId] }),
};

const needsOf = (a: OutboxActivity): Needs => (NEEDS[a.type] as (a: OutboxActivity) => Needs)(a);

export type OutboxRow = { id: string; account_id: string; activity: string };

/** Everything the claimed rows' documents are built from, in one round of reads. */
export async function loadSources(
  env: Env,
  d: DB,
  ctx: Context<FederationData>,
  rows: { row: OutboxRow; a: OutboxActivity }[],
): Promise<ActivitySources> {
  const statusIds: string[] = [];
  const accountIds = new Set<string>();
  const chatMessageIds: string[] = [];
  const voteIds: string[] = [];
  const actorDocuments = new Set<string>();
  for (const { row, a } of rows) {
    const n = needsOf(a);
    accountIds.add(row.account_id);
    statusIds.push(...(n.statuses ?? []));
    n.accounts?.forEach((id) => accountIds.add(id));
    chatMessageIds.push(...(n.chatMessages ?? []));
    voteIds.push(...(n.votes ?? []));
    if (n.actorDocument) actorDocuments.add(row.account_id);
  }
  const [{ h, parentUris }, [accountsRead, listRead], chatRows, votes, actors] = await Promise.all([
    hydrateWithParentUris(d, statusIds),
    d.$client.batch([
      statement(
        d,
        sql`SELECT id, uri, username FROM accounts WHERE id IN (SELECT value FROM json_each(${JSON.stringify([...accountIds])}))`,
      ),
      statement(
        d,
        sql`SELECT r.status_id, a.uri FROM status_recipients r JOIN statuses s ON s.id = r.status_id AND s.visibility IN ('list', 'direct') JOIN accounts a ON a.id = r.account_id
          WHERE r.status_id IN (SELECT value FROM json_each(${JSON.stringify(statusIds)}))`,
      ),
    ]),
    chatMessageIds.length
      ? d
          .select({ message: chatMessages, media: mediaAttachments })
          .from(chatMessages)
          .leftJoin(mediaAttachments, eq(mediaAttachments.id, chatMessages.mediaId))
          .where(inJson(chatMessages.id, chatMessageIds))
      : Promise.resolve([]),
    votesById(d, voteIds),
    actorDocumentsOf(d, ctx, [...actorDocuments]),
  ]);
  const accountRows = accountsRead!.results as { id: string; uri: string; username: string }[];
  const listRows = listRead!.results as { status_id: string; uri: string }[];
  const src: ActivitySources = {
    nc: { ...origins(env, ctx.canonicalOrigin), followersOf: (username) => ctx.getFollowersUri(username) },
    h,
    parentUris,
    accounts: new Map(accountRows.map((r) => [r.id, r])),
    listRecipients: new Map(),
    chatMessages: new Map(chatRows.map((r) => [r.message.id, r])),
    votes,
    actors,
    featuredOf: (username) => ctx.getFeaturedUri(username),
  };
  for (const r of listRows)
    src.listRecipients.set(r.status_id, [...(src.listRecipients.get(r.status_id) ?? []), r.uri]);
  return src;
}

/** The actor documents of these accounts (those of them live and local), as served now. */
async function actorDocumentsOf(d: DB, ctx: Context<FederationData>, ids: string[]): Promise<Map<string, Actor>> {
  if (ids.length === 0) return new Map();
  const found = await d
    .select()
    .from(accounts)
    .where(and(inJson(accounts.id, ids), isNull(accounts.domain), eq(accounts.deactivated, false)));
  // One document that cannot be built leaves its row without a body (nothing sent), not the whole claim failing.
  const built = await Promise.all(
    found.map(
      async (a) =>
        [
          a.id,
          await localActor(ctx, a).catch((e) => (console.error("actor document not built", a.id, e), null)),
        ] as const,
    ),
  );
  return new Map(built.flatMap(([id, actor]) => (actor ? [[id, actor] as const] : [])));
}
