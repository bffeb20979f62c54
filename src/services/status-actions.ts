/**
 * What users do to statuses: reblog, favourite, bookmark, pin, mute the thread, react with an emoji, vote.
 * Each checks that the status is visible to the actor (a stranger gets 404, as if it did not exist), writes one
 * batch, and recounts the counters it touches from the rows (of local statuses; a remote status's are its server's).
 * Favourites and reactions get their ActivityPub id (`localActivityUri`) in that batch; a reblog is a status with its uri.
 */
import type { Effects } from "./effects";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { newId, seqIds } from "../db/ids";
import {
  bookmarks,
  customEmojis,
  emojiReactions,
  favourites,
  polls,
  statuses,
  threadMutes,
  type Visibility,
} from "../db/schema";
import { badRequest, notFound, unprocessable } from "../lib/errors";
import { localActivityUri, type AccountRow } from "./accounts";
import type { StatusRow } from "./hydrate";
import { deleteStatuses, recountFavourites, recountReblogs, visibleStatus } from "./statuses";
import { fanOut, indexOnInteraction, markPulled, pulledByReaders } from "./feeds";
import { notify, unnotify } from "./notifications";
import { outboxWrite } from "./outbox";
import { announceOrAsk, likeOrAsk } from "./approval-requests";
import { countOwnVote } from "./remote-polls";

import { MAX_PINNED } from "../lib/limits";

/** What an action answers: the status (or poll) acted on, and what must follow. */
export interface Acted {
  id: string;
  effects: Effects;
}

/**
 * Reblogs a status (once; again returns the same reblog, `created` false). Direct statuses, and others' private
 * ones, cannot be.
 */
export async function reblog(
  d: DB,
  me: AccountRow,
  id: string,
  opts: { base: string; inlineFanoutMax: number; visibility?: string },
): Promise<Acted> {
  const { base, visibility } = opts;
  const original = await visibleStatus(d, id, me.id);
  const target = original.reblogOfId ? await visibleStatus(d, original.reblogOfId, me.id) : original;
  const rebloggable =
    ["public", "unlisted", "local"].includes(target.visibility) ||
    (target.visibility === "private" && target.accountId === me.id);
  if (!rebloggable) throw unprocessable("This status cannot be reblogged");
  const existing = await d
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.accountId, me.id), eq(statuses.reblogOfId, target.id)))
    .get();
  if (existing) return { id: existing.id, effects: {} };
  const t = now();
  const rid = newId(t);
  // A reblog never reaches further than the status it shares.
  const order = ["direct", "list", "private", "local", "unlisted", "public"];
  const wanted =
    visibility && order.includes(visibility) && order.indexOf(visibility) < order.indexOf(target.visibility)
      ? visibility
      : target.visibility;
  try {
    await writeReblog(
      d,
      me,
      target,
      {
        id: rid,
        uri: `${base}/activities/${rid}`,
        url: `${base}/notice/${rid}`,
        visibility: wanted as Visibility,
        t,
        inlineFanoutMax: opts.inlineFanoutMax,
      },
      [
        // Public and unlisted reblogs are announced (the audience rule leaves the others out), or asked for.
        ...(await announceOrAsk(d, me, target, { id: rid, uri: `${base}/activities/${rid}`, visibility: wanted }, t)),
      ],
    );
  } catch (e) {
    // Two reblogs racing: the unique index keeps one; answer it.
    if (!String(e).includes("UNIQUE")) throw e;
  }
  const made = await d
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.accountId, me.id), eq(statuses.reblogOfId, target.id)))
    .get();
  // Made by this request (not a racing one): on the streams, notified, to the followers' servers.
  const created = made!.id === rid;
  return {
    id: made!.id,
    effects: created ? { events: [{ accountId: null, event: "update", payload: rid }], push: true } : {},
  };
}

/**
 * Writes a reblog of `target` by `by` (a local user, or a remote account whose Announce arrived) in one batch:
 * the row, the original's counter, home feeds, the `reblog` notification, and the caller's `extra` statements.
 * Throws a UNIQUE error when `by` reblogged it already (or the uri is taken).
 */
export async function writeReblog(
  d: DB,
  by: AccountRow,
  target: StatusRow,
  r: { id: string; uri: string; url: string; visibility: Visibility; t: number; inlineFanoutMax: number },
  extra: D1PreparedStatement[] = [],
): Promise<void> {
  const row: StatusRow = {
    ...target,
    id: r.id,
    uri: r.uri,
    url: r.url,
    accountId: by.id,
    inReplyToId: null,
    inReplyToAccountId: null,
    reblogOfId: target.id,
    content: "",
    text: "",
    spoilerText: "",
    visibility: r.visibility,
    local: by.domain === null,
    cardUrl: null,
    emojis: [],
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    pinnedAt: null,
    expiresAt: null,
    createdAt: r.t,
    editedAt: null,
    appId: null,
    searchRowid: null,
    // A remote account's figure counts its followers everywhere, not here: its boosts are fanned out, as its posts.
    homePull: by.domain === null && pulledByReaders(target, by.followersCount, r.inlineFanoutMax),
    storedAt: by.domain === null ? null : r.t,
  };
  await d.$client.batch([
    statement(d, d.insert(statuses).values(row)),
    ...(row.homePull ? [markPulled(d, by.id)] : []),
    statement(d, recountReblogs(target.id)),
    fanOut(d, row, row.homePull),
    notify(d, { type: "reblog", to: target.accountId, from: by.id, statusId: target.id }),
    // A local user's boost makes the status searchable (services/feeds.ts).
    ...(by.domain === null ? indexOnInteraction(d, target) : []),
    ...extra,
  ]);
}

/** Removes the user's reblog; answers the original and the stream events of the reblogs deleted. */
export async function unreblog(d: DB, me: AccountRow, id: string): Promise<Acted> {
  const original = await visibleStatus(d, id, me.id);
  const targetId = original.reblogOfId ?? original.id;
  const mine = await d
    .select({ id: statuses.id })
    .from(statuses)
    .where(and(eq(statuses.accountId, me.id), eq(statuses.reblogOfId, targetId)))
    .all();
  // Deleting the reblog also deletes its notification, in the same batch.
  const { events } = await deleteStatuses(
    d,
    mine.map((r) => r.id),
  );
  return { id: targetId, effects: { events } };
}

/** The status actions apply to: a reblog stands for its original. */
async function actionTarget(d: DB, me: AccountRow, id: string): Promise<StatusRow> {
  const s = await visibleStatus(d, id, me.id);
  return s.reblogOfId ? visibleStatus(d, s.reblogOfId, me.id) : s;
}

export async function favourite(d: DB, me: AccountRow, id: string, on: boolean): Promise<Acted> {
  const s = await actionTarget(d, me, id);
  const t = now();
  const favId = newId(t);
  const uri = localActivityUri(me, "likes", favId);
  const note = { type: "favourite" as const, to: s.accountId, from: me.id, statusId: s.id };
  const mine = sql`SELECT uri FROM favourites WHERE account_id = ${me.id} AND status_id = ${s.id}`;
  const federation = { objectUri: s.uri, targetId: s.accountId };
  const stmts = on
    ? [
        statement(
          d,
          d
            .insert(favourites)
            .values({ id: favId, accountId: me.id, statusId: s.id, createdAt: t, uri })
            .onConflictDoNothing(),
        ),
        // Only a new favourite (this batch's row) notifies and federates: again, or racing, does not.
        notify(d, { ...note, onlyIf: sql`EXISTS (SELECT 1 FROM favourites WHERE id = ${favId})` }),
        ...(await likeOrAsk(
          d,
          me,
          s,
          { id: favId, uri },
          t,
          sql`EXISTS (SELECT 1 FROM favourites WHERE id = ${favId})`,
        )),
        ...indexOnInteraction(d, s),
      ]
    : [
        // Read before the row goes: the Undo names the Like's id, and only a favourite that was there is undone.
        outboxWrite(d, me.id, { type: "UndoLike", uri: "", ...federation }, t, { uriFrom: mine }),
        statement(d, d.delete(favourites).where(and(eq(favourites.accountId, me.id), eq(favourites.statusId, s.id)))),
        unnotify(d, note),
      ];
  await d.$client.batch([...stmts, statement(d, recountFavourites(s.id))]);
  return { id: s.id, effects: { push: on } };
}

export async function bookmark(d: DB, me: AccountRow, id: string, on: boolean): Promise<Acted> {
  const s = await actionTarget(d, me, id);
  const t = now();
  // `WHERE true`: SQLite's INSERT … SELECT … ON CONFLICT needs it to parse.
  if (on)
    await d.$client.batch([
      statement(
        d,
        sql`INSERT INTO bookmarks (id, account_id, status_id, created_at) SELECT ${seqIds("bookmarks", t)}, ${me.id}, ${s.id}, ${t} WHERE true ON CONFLICT (account_id, status_id) DO NOTHING`,
      ),
      ...indexOnInteraction(d, s),
    ]);
  else await d.delete(bookmarks).where(and(eq(bookmarks.accountId, me.id), eq(bookmarks.statusId, s.id)));
  return { id: s.id, effects: {} };
}

export async function pin(d: DB, me: AccountRow, id: string, on: boolean): Promise<Acted> {
  const s = await actionTarget(d, me, id);
  // Pins go to followers as Add/Remove on the featured collection (outbox rows in the batch).
  const pinned: Acted = { id: s.id, effects: {} };
  const t = now();
  if (!on) {
    // The Remove goes out only when the status was pinned (read by the batch before the write).
    await d.$client.batch([
      outboxWrite(d, me.id, { type: "RemoveFeatured", statusId: s.id, uri: s.uri }, t, {
        onlyIf: sql`EXISTS (SELECT 1 FROM statuses WHERE id = ${s.id} AND account_id = ${me.id} AND pinned_at IS NOT NULL)`,
      }),
      statement(
        d,
        d
          .update(statuses)
          .set({ pinnedAt: null })
          .where(and(eq(statuses.id, s.id), eq(statuses.accountId, me.id))),
      ),
    ]);
    return pinned;
  }
  if (s.accountId !== me.id) throw unprocessable("Someone else's status cannot be pinned");
  if (!["public", "unlisted"].includes(s.visibility)) throw unprocessable("Non-public status cannot be pinned");
  if (s.pinnedAt !== null) return pinned;
  // One conditional write: the count is taken by the update itself, so racing pins cannot pass the limit together.
  // The Add goes out only when this very write pinned it.
  const [done] = await d.$client.batch<{ id: string }>([
    statement(
      d,
      d
        .update(statuses)
        .set({ pinnedAt: t })
        .where(
          and(
            eq(statuses.id, s.id),
            isNull(statuses.pinnedAt),
            sql`(SELECT count(*) FROM statuses WHERE account_id = ${me.id} AND pinned_at IS NOT NULL) < ${MAX_PINNED}`,
          ),
        )
        .returning({ id: statuses.id }),
    ),
    outboxWrite(d, me.id, { type: "AddFeatured", statusId: s.id, uri: s.uri }, t, {
      onlyIf: sql`EXISTS (SELECT 1 FROM statuses WHERE id = ${s.id} AND pinned_at = ${t})`,
    }),
  ]);
  if (done!.results.length) return pinned;
  // Lost: either a racing request pinned this very status (done), or the limit is reached.
  const again = await d.select({ pinnedAt: statuses.pinnedAt }).from(statuses).where(eq(statuses.id, s.id)).get();
  if (again?.pinnedAt == null) throw unprocessable("You have already pinned the maximum number of statuses");
  return pinned;
}

export async function muteThread(d: DB, me: AccountRow, id: string, on: boolean, expiresIn?: number): Promise<Acted> {
  const s = await visibleStatus(d, id, me.id);
  if (on) {
    const expiresAt = expiresIn ? now() + expiresIn * 1000 : null;
    await d
      .insert(threadMutes)
      .values({ id: newId(), accountId: me.id, threadId: s.threadId, expiresAt, createdAt: now() })
      .onConflictDoUpdate({ target: [threadMutes.accountId, threadMutes.threadId], set: { expiresAt } });
  } else await d.delete(threadMutes).where(and(eq(threadMutes.accountId, me.id), eq(threadMutes.threadId, s.threadId)));
  return { id: s.id, effects: {} };
}

const SINGLE_EMOJI =
  /^(\p{Extended_Pictographic}|\p{Regional_Indicator}{2}|[#*0-9]\uFE0F?\u20E3)(\uFE0F|\p{Emoji_Modifier}|\u200D(\p{Extended_Pictographic}|\p{Emoji_Component})\uFE0F?)*$/u;

/**
 * A reaction's name: one unicode emoji, or an existing custom emoji of this instance (`:blob:` or `blob`), or a
 * remote one another server's reaction brought here (`blob@example.com`, as Akkoma names it: clients add their
 * own reaction by the name they were shown).
 */
export async function reactionName(d: DB, input: string): Promise<string> {
  return (await reactionEmoji(d, input)).name;
}

/** The same, with the custom emoji's file (null for a unicode emoji). */
async function reactionEmoji(d: DB, input: string): Promise<{ name: string; file: string | null }> {
  // Already decoded once (path by hono, query by URLSearchParams): decoding again would read `%25` as `%`.
  const emoji = input.trim();
  if (isUnicodeEmoji(emoji)) return { name: emoji, file: null };
  const name = emoji.replace(/^:|:$/g, "");
  const [, shortcode, domain] = /^([a-zA-Z0-9_-]+)(?:@([a-z0-9.-]+(?::\d+)?))?$/.exec(name) ?? [];
  const custom = shortcode
    ? await d
        .select()
        .from(customEmojis)
        .where(
          and(
            eq(customEmojis.shortcode, shortcode),
            domain ? eq(customEmojis.domain, domain) : isNull(customEmojis.domain),
          ),
        )
        .get()
    : undefined;
  if (!custom) throw badRequest("Invalid emoji: use one unicode emoji or a custom emoji of this instance");
  return { name, file: custom.file };
}

/** Whether `s` is exactly one unicode emoji (with its modifiers and joiners). */
export const isUnicodeEmoji = (s: string) => SINGLE_EMOJI.test(s);

export async function react(d: DB, me: AccountRow, id: string, emoji: string, on: boolean): Promise<Acted> {
  const s = await actionTarget(d, me, id);
  const { name, file } = await reactionEmoji(d, emoji);
  const note = { type: "pleroma:emoji_reaction" as const, to: s.accountId, from: me.id, statusId: s.id, emoji: name };
  const federation = { objectUri: s.uri, targetId: s.accountId, emoji: name, emojiFile: file };
  const t = now();
  if (on) {
    // One batch; only a new reaction (this batch's row) notifies and federates, not a repeated or racing one.
    const id = newId(t);
    const uri = localActivityUri(me, "reactions", id);
    const made = sql`EXISTS (SELECT 1 FROM emoji_reactions WHERE id = ${id})`;
    await d.$client.batch([
      statement(
        d,
        d
          .insert(emojiReactions)
          .values({ id, accountId: me.id, statusId: s.id, emoji: name, createdAt: t, uri })
          .onConflictDoNothing(),
      ),
      notify(d, { ...note, onlyIf: made }),
      outboxWrite(d, me.id, { type: "EmojiReact", uri, ...federation }, t, { onlyIf: made }),
      ...indexOnInteraction(d, s),
    ]);
  } else {
    await d.$client.batch([
      // Read before the row goes: the Undo names the reaction's id.
      outboxWrite(d, me.id, { type: "UndoEmojiReact", uri: "", ...federation }, t, {
        uriFrom: sql`SELECT uri FROM emoji_reactions WHERE account_id = ${me.id} AND status_id = ${s.id} AND emoji = ${name}`,
      }),
      statement(
        d,
        d
          .delete(emojiReactions)
          .where(
            and(eq(emojiReactions.accountId, me.id), eq(emojiReactions.statusId, s.id), eq(emojiReactions.emoji, name)),
          ),
      ),
      unnotify(d, note),
    ]);
  }
  return { id: s.id, effects: { push: on } };
}

/** Votes in a poll: not its author, not after the end, not twice, choices in range and one unless multiple. */
export async function vote(d: DB, me: AccountRow, pollId: string, choices: number[]): Promise<Acted> {
  const poll = await d.select().from(polls).where(eq(polls.id, pollId)).get();
  if (!poll) throw notFound();
  const s = await visibleStatus(d, poll.statusId, me.id);
  if (s.accountId === me.id) throw unprocessable("Poll's author can't vote");
  if (poll.expiresAt !== null && poll.expiresAt <= now()) throw unprocessable("Poll's closed");
  const unique = [...new Set(choices)];
  if (unique.length === 0 || unique.some((c) => c < 0 || c >= poll.options.length))
    throw unprocessable("Invalid indices");
  if (!poll.multiple && unique.length > 1) throw unprocessable("Too many choices");
  const t = now();
  // One conditional insert: a second vote (even a racing one) finds the first and writes nothing.
  const votes = unique.map((choice) => ({ id: newId(t), choice }));
  const insert = statement(
    d,
    sql`INSERT INTO poll_votes (id, poll_id, account_id, choice, created_at)
      SELECT json_extract(value, '$.id'), ${poll.id}, ${me.id}, json_extract(value, '$.choice'), ${t} FROM json_each(${JSON.stringify(votes)})
      WHERE NOT EXISTS (SELECT 1 FROM poll_votes WHERE poll_id = ${poll.id} AND account_id = ${me.id})`,
  );
  // In a remote poll: our vote joins its server's tallies here, and goes to the author as one Create per choice
  // (services/remote-polls.ts), all in the vote's batch and only if the vote was written.
  const remote = s.local
    ? []
    : [
        countOwnVote(d, poll.id, unique, votes[0]!.id),
        ...votes.map((v) =>
          outboxWrite(d, me.id, { type: "Vote", voteId: v.id }, t, {
            onlyIf: sql`EXISTS (SELECT 1 FROM poll_votes WHERE id = ${v.id})`,
          }),
        ),
      ];
  const [result] = await d.$client.batch([insert, ...remote, ...indexOnInteraction(d, s)]);
  if (!result!.meta.changes) throw unprocessable("Already voted");
  // A vote in a remote poll goes to its server (its outbox row is in the batch).
  return { id: poll.id, effects: {} };
}
