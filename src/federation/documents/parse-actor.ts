/**
 * Reading an ActivityPub actor (already fetched and parsed by Fedify) into a `ParsedActor`, the plain value
 * services/remote-accounts.ts stores. What an actor document carries is read as embedded (`embedded`): icons,
 * emoji and profile fields are never fetched one by one (a hostile actor could name dozens of slow URLs and hold
 * the request that stores it).
 */
import { Application, Group, Image, Link, PropertyValue, Service, type Actor } from "@fedify/vocab";
import type { DB } from "../../db/client";
import type { AccountField, EmojiRef } from "../../db/schema";
import { sanitizeHtml } from "../../content/format";
import type { AccountRow } from "../../services/accounts";
import { upsertAccount, type ParsedActor, type ReportedCounts } from "../../services/remote-accounts";
import { embedded, href, httpUrl, readEmoji, sameHost, text } from "./remote-objects";

/** Caps on what a remote actor may put in a row (its server decides the rest). */
const MAX_NAME = 200;
const MAX_NOTE = 20_000;
const MAX_FIELDS = 16;
const MAX_EMOJIS = 64;

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

/**
 * The row an actor document describes (counters aside). Only actors with an http(s) id and an inbox are
 * accounts; anything else is null.
 */
export async function parseActor(actor: Actor): Promise<ParsedActor | null> {
  if (!actor.id || !actor.inboxId || !/^https?:$/.test(actor.id.protocol)) return null;
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
    inboxUrl: actor.inboxId.href,
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

/** Reads and stores an actor (insert, or refresh the row with the same uri); null when it is not an account. */
export async function upsertActor(d: DB, actor: Actor, counts?: ReportedCounts): Promise<AccountRow | null> {
  const parsed = await parseActor(actor);
  return parsed ? upsertAccount(d, parsed, counts) : null;
}
