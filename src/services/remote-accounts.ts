/**
 * Remote accounts: what an ActivityPub actor document says (read by federation/documents/parse-actor.ts into a `ParsedActor`)
 * becomes, or refreshes, an `accounts` row keyed by its id. The one place an actor is turned into a row: the
 * inbox, WebFinger look-ups, mentions and search all come here.
 */
import type { AccountRow } from "./accounts";
import { applyActorPolicies } from "./federation-policies";
import { eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { newId } from "../db/ids";
import { accounts, instances, type AccountField, type EmojiRef } from "../db/schema";

/** How long a remote actor's row is trusted before it is fetched again when next needed. */
export const ACTOR_STALE_MS = 24 * 3600_000;

/** An actor document as the row's columns (counters aside), read and capped by federation/documents/parse-actor.ts. */
export interface ParsedActor {
  username: string;
  domain: string;
  displayName: string;
  note: string;
  avatar: string | null;
  header: string | null;
  locked: boolean;
  actorType: string;
  discoverable: boolean;
  fields: AccountField[];
  emojis: EmojiRef[];
  alsoKnownAs: string[];
  uri: string;
  url: string;
  inboxUrl: string;
  sharedInboxUrl: string | null;
  outboxUrl: string | null;
  followersUrl: string | null;
  acceptsChatMessages: boolean | null;
  /** The actor's `published`, when it says. */
  createdAt: number | null;
}

/** Counters as the actor's server reports them (totalItems of its collections), when it shows them. */
export interface ReportedCounts {
  followersCount?: number;
  followingCount?: number;
  statusesCount?: number;
}

/** Stores the actor (insert, or refresh the row with the same uri) and returns its row; null when refused. */
export async function upsertAccount(
  d: DB,
  actor: ParsedActor,
  counts: ReportedCounts = {},
  t: number = now(),
): Promise<AccountRow | null> {
  const { createdAt, ...fields } = actor;
  const f = applyActorPolicies(d, fields.domain ?? "", fields);
  // Its instance gets a row (where its favicon will be learned: services/instance-favicons.ts), and the account
  // the favicon already learned.
  const domain = f.domain ?? "";
  const favicon = sql`(SELECT favicon FROM instances WHERE domain = ${domain})`;
  try {
    const [, rows] = await d.batch([
      d.insert(instances).values({ domain, createdAt: t }).onConflictDoNothing(),
      d
        .insert(accounts)
        .values({ id: newId(t), ...f, ...counts, favicon, createdAt: createdAt ?? t, updatedAt: t, fetchedAt: t })
        // Only a remote row is refreshed: a document claiming a local account's id (reached through a redirect
        // or a WebFinger answer pointing back here) never rewrites it.
        .onConflictDoUpdate({
          target: accounts.uri,
          set: { ...f, ...counts, favicon, updatedAt: t, fetchedAt: t },
          setWhere: sql`${accounts.domain} IS NOT NULL`,
        })
        .returning(),
    ]);
    return rows[0] ?? null;
  } catch (e) {
    // Another actor already holds this user@host (an account re-created under a new id): the stored one stays,
    // and this actor is not stored (its activities are dropped rather than failing with a 500 forever).
    if (String((e as Error)?.message ?? e).includes("acct_key")) {
      console.warn(`remote account ${f.username}@${f.domain} is held by another id; ${f.uri} not stored`);
      return null;
    }
    throw e;
  }
}

/** A stored account by its ActivityPub id. */
export async function accountByUri(d: DB, uri: string): Promise<AccountRow | null> {
  return (await d.select().from(accounts).where(eq(accounts.uri, uri)).get()) ?? null;
}

/** Whether a remote row should be fetched again before it is relied on. */
export const isStale = (a: AccountRow, t: number = now()) =>
  a.domain !== null && (a.fetchedAt === null || t - a.fetchedAt > ACTOR_STALE_MS);
