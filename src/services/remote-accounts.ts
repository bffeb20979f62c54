/**
 * Remote accounts: an ActivityPub actor (already fetched and parsed by Fedify) becomes, or refreshes, an
 * `accounts` row keyed by its id. The one place an actor document is turned into a row: the inbox, WebFinger
 * look-ups, mentions and search all come here.
 */
import type { AccountRow } from "./accounts";
import { applyActorPolicies } from "./federation-policies";
import { Application, Group, Image, Link, PropertyValue, Service, type Actor } from "@fedify/vocab";
import { eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { newId } from "../db/ids";
import { accounts, instances, type AccountField, type EmojiRef } from "../db/schema";
import { sanitizeHtml } from "../content/format";
import { embedded, href, httpUrl, readEmoji, sameHost, text } from "./remote-objects";

/** How long a remote actor's row is trusted before it is fetched again when next needed. */
export const ACTOR_STALE_MS = 24 * 3600_000;

/** Caps on what a remote actor may put in a row (its server decides the rest). */
const MAX_NAME = 200;
const MAX_NOTE = 20_000;
const MAX_FIELDS = 16;
const MAX_EMOJIS = 64;

// What an actor document carries is read as embedded (`embedded`): icons, emoji and profile fields are never
// fetched one by one (a hostile actor could name dozens of slow URLs and hold the request that stores it).

/**
 * The `domain` of a remote account: the host of its id, with the port when it is not the default (issue 13:
 * `user@host:port`). WebFinger may name another domain; Starling shows where the actor lives.
 */
function actorDomain(id: URL): string {
  return id.host.toLowerCase();
}

/** Fedify's actor classes, as `actor_type`. */
function actorType(actor: Actor): string {
  if (actor instanceof Service) return "Service";
  if (actor instanceof Application) return "Application";
  if (actor instanceof Group) return "Group";
  return "Person";
}

async function imageUrl(get: () => Promise<Image | null>): Promise<string | null> {
  try {
    const img = await get();
    if (!img) return null;
    return httpUrl(href(img.url as URL | Link | null));
  } catch {
    return null;
  }
}

/** The actor's custom emoji (its `tag` of type `Emoji`), as the account entity lists them. */
async function actorEmojis(object: {
  getTags(options?: typeof embedded): AsyncIterable<unknown>;
}): Promise<EmojiRef[]> {
  const out: EmojiRef[] = [];
  try {
    for await (const tag of object.getTags(embedded)) {
      const emoji = out.length < MAX_EMOJIS ? await readEmoji(tag) : null;
      if (emoji) out.push({ ...emoji, static_url: emoji.url, visible_in_picker: false });
    }
  } catch {
    // A tag that cannot be loaded is left out, not the whole actor.
  }
  return out;
}

/** The row an actor document describes (counters and identity fields excepted: see `upsertActor`). */
async function actorFields(actor: Actor) {
  // First: reading linked properties below can make Fedify drop the document it parsed.
  const chats = await acceptsChatMessages(actor);
  const fields: AccountField[] = [];
  try {
    for await (const a of actor.getAttachments(embedded)) {
      if (!(a instanceof PropertyValue) || fields.length >= MAX_FIELDS) continue;
      fields.push({
        name: text(a.name).slice(0, 255),
        value: await sanitizeHtml(text(a.value).slice(0, 2048)),
        verified_at: null,
      });
    }
  } catch {
    // Unloadable attachments are left out.
  }
  const summary = text(actor.summary);
  const id = actor.id!;
  return {
    username: text(actor.preferredUsername) || id.pathname.split("/").filter(Boolean).pop() || id.host,
    domain: actorDomain(id),
    displayName: text(actor.name).slice(0, MAX_NAME),
    note: summary ? await sanitizeHtml(summary.slice(0, MAX_NOTE)) : "",
    avatar: await imageUrl(() => actor.getIcon(embedded)),
    header: await imageUrl(() => actor.getImage(embedded)),
    locked: actor.manuallyApprovesFollowers ?? false,
    actorType: actorType(actor),
    discoverable: actor.discoverable ?? false,
    fields,
    emojis: await actorEmojis(actor),
    alsoKnownAs: actor.aliasIds.map((u) => u.href).slice(0, 16),
    uri: id.href,
    url: sameHost(httpUrl(href(actor.url as URL | Link | null)), id) ?? id.href,
    inboxUrl: actor.inboxId?.href ?? null,
    sharedInboxUrl: actor.endpoints?.sharedInbox?.href ?? null,
    outboxUrl: actor.outboxId?.href ?? null,
    followersUrl: actor.followersId?.href ?? null,
    acceptsChatMessages: chats,
    createdAt: actor.published ? actor.published.epochMilliseconds : null,
  };
}

/**
 * Pleroma's `capabilities: {acceptsChatMessages}` (LitePub), as the actor's server wrote it: Fedify has no
 * property for it, but keeps the document it parsed. Null when the actor does not say.
 */
async function acceptsChatMessages(actor: Actor): Promise<boolean | null> {
  const doc = (await actor.toJsonLd().catch(() => null)) as { capabilities?: { acceptsChatMessages?: unknown } } | null;
  const v = doc?.capabilities?.acceptsChatMessages;
  return typeof v === "boolean" ? v : null;
}

/** Counters as the actor's server reports them (totalItems of its collections), when it shows them. */
export interface ReportedCounts {
  followersCount?: number;
  followingCount?: number;
  statusesCount?: number;
}

/**
 * Stores the actor (insert, or refresh the row with the same uri) and returns its row. Only actors with an id
 * and an inbox are accounts; anything else is refused with null.
 */
export async function upsertActor(
  d: DB,
  actor: Actor,
  counts: ReportedCounts = {},
  t: number = now(),
): Promise<AccountRow | null> {
  if (!actor.id || !actor.inboxId || !/^https?:$/.test(actor.id.protocol)) return null;
  const { createdAt, ...fields } = await actorFields(actor);
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
