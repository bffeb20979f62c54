/**
 * Inbox listeners of interactions (issue 18): `Like`, `EmojiReact`, `Announce` and the `Undo` of each. They
 * read what the verified sender says and hand it to `services/inbound-interactions.ts`. Trusted: the sender,
 * and an activity id on the sender's origin (an id elsewhere could name another server's activity, and its Undo
 * would then be someone else's). An announced status is never taken as embedded: it is found stored by its id or
 * fetched from it (once, through the guarded loader), and only when someone here follows the announcer.
 *
 * Misskey sends its reactions as `Like` with `_misskey_reaction` and `content` (Fedify keeps `content`): a Like
 * whose content is a reaction is taken as one, as Pleroma does; any other Like is a favourite.
 */
import type { InboxContext } from "@fedify/fedify";
import { Announce, EmojiReact, Like, PUBLIC_COLLECTION, type Activity } from "@fedify/vocab";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { config } from "../../env";
import { statuses, type Visibility } from "../../db/schema";
import type { FederationData } from "../data";
import { after, sender } from "./context";
import type { AccountRow } from "../../services/accounts";
import { rejectedHost } from "../../services/federation-policies";
import { fetchPublicPost } from "../fetching/quotes";
import { embedded, readEmoji, text } from "../documents/remote-objects";
import { isUnicodeEmoji } from "../../services/status-actions";
import { visibleTo } from "../../services/visibility";
import {
  localStatusFor,
  receiveAnnounce,
  receiveLike,
  receiveReaction,
  receiveUndoInteraction,
  storedStatus,
  type ReceivedEmoji,
} from "../../services/inbound-interactions";

type Ctx = InboxContext<FederationData>;

/**
 * The sender, when the activity has an id on the sender's own origin. With `localObject`, only when its object
 * is a stored local status (else the sender is not even fetched: servers send Likes of statuses nobody here has).
 */
async function ownActivity(ctx: Ctx, activity: Activity, localObject = false): Promise<AccountRow | null> {
  if (!activity.id || !activity.objectId) return null;
  if (localObject && !(await storedStatus(ctx.data.d, activity.objectId.href))?.local) return null;
  const from = await sender(ctx, activity);
  if (!from || from.deactivated || activity.id.origin !== new URL(from.uri).origin) return null;
  return from;
}

/**
 * The reaction an activity carries in `content`: one unicode emoji, or `:shortcode:` with its `Emoji` tag (an
 * image URL); null otherwise (a custom emoji without its image cannot be shown).
 */
async function reactionOf(activity: Like | EmojiReact): Promise<ReceivedEmoji | null> {
  const content = text(activity.content).trim();
  if (!content) return null;
  if (isUnicodeEmoji(content)) return { unicode: content };
  const shortcode = /^:([a-zA-Z0-9_]{1,64}):$/.exec(content)?.[1];
  if (!shortcode) return null;
  try {
    for await (const tag of activity.getTags(embedded)) {
      const e = await readEmoji(tag);
      if (e?.shortcode === shortcode) return e;
    }
  } catch {
    // Tags that do not parse carry no usable emoji.
  }
  return null;
}

/** A `Like`: a favourite, or Misskey's reaction. */
export async function onLike(ctx: Ctx, like: Like): Promise<void> {
  const from = await ownActivity(ctx, like, true);
  if (!from) return;
  const d = ctx.data.d;
  const status = await localStatusFor(d, like.objectId!.href, from);
  if (!status) return;
  const reaction = await reactionOf(like);
  after(
    ctx,
    reaction
      ? await receiveReaction(d, from, status, like.id!.href, reaction)
      : await receiveLike(d, from, status, like.id!.href),
  );
}

/** Pleroma's `EmojiReact` (unicode, or a custom emoji with its tag). */
export async function onEmojiReact(ctx: Ctx, react: EmojiReact): Promise<void> {
  const from = await ownActivity(ctx, react, true);
  if (!from) return;
  const reaction = await reactionOf(react);
  if (!reaction) return;
  const status = await localStatusFor(ctx.data.d, react.objectId!.href, from);
  if (status) after(ctx, await receiveReaction(ctx.data.d, from, status, react.id!.href, reaction));
}

const PUBLIC = PUBLIC_COLLECTION.href;

/** A reblog's visibility from the Announce's audience, never wider than its original's. */
export function announcedVisibility(announce: Announce, original: Visibility): Visibility {
  const v: Visibility = announce.toIds.some((u) => u.href === PUBLIC)
    ? "public"
    : announce.ccIds.some((u) => u.href === PUBLIC)
      ? "unlisted"
      : "private";
  return v === "public" && original === "unlisted" ? "unlisted" : v;
}

/** Whether a local account follows `account`. */
async function followedHere(ctx: Ctx, account: AccountRow): Promise<boolean> {
  const row = await ctx.data.d.get<{ one: number }>(
    sql`SELECT 1 AS one FROM follows f JOIN accounts a ON a.id = f.account_id WHERE f.target_account_id = ${account.id} AND a.domain IS NULL LIMIT 1`,
  );
  return row !== undefined;
}

/** An `Announce` of a public or unlisted status: of a local one, or of one for the announcer's followers here. */
export async function onAnnounce(ctx: Ctx, announce: Announce): Promise<void> {
  const from = await ownActivity(ctx, announce);
  if (!from) return;
  const d = ctx.data.d;
  const uri = announce.objectId!.href;
  if (rejectedHost(d, announce.objectId!.hostname)) return;
  let original = await storedStatus(d, uri);
  // A remote status matters here only to the announcer's followers (a local one always does).
  if (original ? !original.local && !(await followedHere(ctx, from)) : !(await followedHere(ctx, from))) return;
  if (!original && announce.objectId!.origin !== new URL(ctx.canonicalOrigin).origin) {
    if (!(await fetchPublicPost(ctx, uri))) return;
  }
  // The one visibility rule, for the announcer: public or unlisted, its author active and not blocking it.
  original = await d
    .select()
    .from(statuses)
    .where(
      and(
        eq(statuses.uri, uri),
        isNull(statuses.reblogOfId),
        inArray(statuses.visibility, ["public", "unlisted"]),
        visibleTo(from.id),
      ),
    )
    .get();
  if (!original) return;
  after(
    ctx,
    await receiveAnnounce(d, from, original, announce.id!.href, announcedVisibility(announce, original.visibility), {
      inlineFanoutMax: config(ctx.data.env).inlineFanoutMax,
    }),
  );
}

/** The `Undo` of the sender's own Like, EmojiReact or Announce (an embedded object naming another actor is not its to undo). */
export async function onUndoInteraction(ctx: Ctx, undo: Activity, object: Like | EmojiReact | Announce): Promise<void> {
  const from = await sender(ctx, undo);
  if (!from || (object.actorId && object.actorId.href !== from.uri)) return;
  const uri = object.id?.href ?? undo.objectId?.href ?? null;
  const liked = object instanceof Like ? (object.objectId?.href ?? null) : null;
  after(ctx, await receiveUndoInteraction(ctx.data.d, from, uri, liked));
}
