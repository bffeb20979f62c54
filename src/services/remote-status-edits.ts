/**
 * Edits of remote statuses, by their authors: the status row, its tags, media, search text and poll replaced, the
 * version kept (services/status-edits.ts), in one batch with the notifications of those who reblogged or quoted it.
 * The status was stored by services/remote-statuses.ts.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { mediaAttachments, polls, statuses } from "../db/schema";
import type { AccountRow } from "./accounts";
import type { Effects } from "./effects";
import { searchBody } from "./feeds";
import type { MediaRow, StatusRow } from "./hydrate";
import {
  countStatements,
  itemBytes,
  judge,
  limitsClock,
  recordRefusal,
  senderOf,
  usageRows,
  type Sender,
} from "./inbound-limits";
import { notifyQuoters } from "./quotes";
import { followedHere, mediaInserts, remoteMedia, type ParsedNote } from "./remote-statuses";
import { editedMedia, notifyEdit, versionStatements } from "./status-edits";

/**
 * An edit by the author (the caller checked the actor is the status's author): content, content warning,
 * sensitivity, emoji, hashtags and media are replaced, `edited_at` set, the version kept (the original too, on the
 * first edit: services/status-edits.ts) and local rebloggers notified. Answers the status's id and what follows,
 * or null when nothing changed (unknown status, an older or repeated edit), or how long to wait when the author or
 * its host has spent its inbound allowance (services/inbound-limits.ts: an edit counts as a post does).
 */
export async function updateRemoteNote(
  d: DB,
  author: AccountRow,
  note: ParsedNote,
  t: number = now(),
): Promise<{ statusId: string; effects: Effects } | { retryAfter: number } | null> {
  const sender = senderOf(author.uri);
  const lt = limitsClock.now();
  const found = await editSurroundings(d, author, note, sender, lt);
  const row = found.row;
  if (!row || !changes(row, note)) return null;
  const item = { bytes: itemBytes(note), followed: found.followed, concernsLocal: false };
  const verdict = judge(found.usage, sender, item, lt);
  if (!verdict.ok) {
    await recordRefusal(d, verdict, lt);
    return { retryAfter: verdict.retryAfter };
  }
  const editedAt = Math.min(note.updated ?? t, t);
  const stmts = [
    ...editStatements(d, row, note, editedAt, remoteMedia(author.id, row.id, note.media, t), found),
    ...countStatements(d, sender, item, false, lt),
  ];
  const notifying = stmts.push(notifyEdit(d, row, t)) - 1;
  const quoters = stmts.push(notifyQuoters(d, row, t)) - 1;
  const results = await d.$client.batch(stmts);
  return {
    statusId: row.id,
    effects: {
      // Shown again, edited, on the streams that show it.
      events: [{ accountId: null, event: "status.update", payload: row.id }],
      push: [notifying, quoters].some((i) => (results[i]!.meta?.changes ?? 0) > 0),
    },
  };
}

/** What an edit reads first, in one batch: the author's status by uri, its media and poll, and the limits. */
async function editSurroundings(d: DB, author: AccountRow, note: ParsedNote, sender: Sender, lt: number) {
  const [rows, mediaRows, pollRows, followed, usage] = await d.batch([
    d
      .select()
      .from(statuses)
      .where(and(eq(statuses.uri, note.uri), eq(statuses.accountId, author.id))),
    d
      .select()
      .from(mediaAttachments)
      .where(sql`${mediaAttachments.statusId} = (SELECT id FROM statuses WHERE uri = ${note.uri})`)
      .orderBy(asc(mediaAttachments.position)),
    d
      .select({ options: polls.options })
      .from(polls)
      .where(sql`${polls.statusId} = (SELECT id FROM statuses WHERE uri = ${note.uri})`),
    followedHere(d, author.id),
    usageRows(d, sender, lt),
  ]);
  return {
    row: rows[0],
    mediaRows,
    poll: pollRows[0] ?? null,
    followed: followed.length > 0,
    usage,
  };
}

/**
 * Whether the edit changes what is shown: an edit older than the one shown arrived late, and a re-delivered one
 * changes nothing; both are dropped (no write, no `status.update` streamed again).
 */
function changes(row: StatusRow, note: ParsedNote): boolean {
  if (note.updated !== null && row.editedAt !== null && note.updated < row.editedAt) return false;
  const same = row.content === note.content && row.spoilerText === note.spoilerText && row.sensitive === note.sensitive;
  return !(same && (note.updated === null || note.updated === row.editedAt));
}

/** The edit's writes: the status row, its tags, media, search text and poll replaced, both versions kept. */
function editStatements(
  d: DB,
  row: StatusRow,
  note: ParsedNote,
  editedAt: number,
  media: MediaRow[],
  found: Awaited<ReturnType<typeof editSurroundings>>,
): D1PreparedStatement[] {
  return [
    statement(
      d,
      d
        .update(statuses)
        .set({
          content: note.content,
          spoilerText: note.spoilerText,
          sensitive: note.sensitive,
          emojis: note.emojis,
          hasMedia: note.media.length > 0,
          // GoToSocial lets authors change who may reply, like and boost.
          interactionPolicy: note.interactionPolicy,
          editedAt,
        })
        .where(eq(statuses.id, row.id)),
    ),
    statement(d, sql`DELETE FROM status_tags WHERE status_id = ${row.id}`),
    statement(
      d,
      sql`INSERT INTO status_tags (status_id, tag) SELECT ${row.id}, value FROM json_each(${JSON.stringify(note.tags)})`,
    ),
    statement(d, sql`DELETE FROM media_attachments WHERE status_id = ${row.id}`),
    ...mediaInserts(d, media),
    statement(
      d,
      sql`UPDATE statuses_fts SET body = ${searchBody(note)} WHERE rowid = (SELECT search_rowid FROM statuses WHERE id = ${row.id})`,
    ),
    ...(note.poll ? pollEditStatements(d, row.id, note.poll) : []),
    ...versionStatements(
      d,
      row.id,
      {
        content: row.content,
        spoilerText: row.spoilerText,
        sensitive: row.sensitive,
        emojis: row.emojis,
        media: found.mediaRows.map(editedMedia),
        poll: found.poll ? { options: found.poll.options } : null,
        createdAt: row.editedAt ?? row.createdAt,
      },
      {
        content: note.content,
        spoilerText: note.spoilerText,
        sensitive: note.sensitive,
        emojis: note.emojis,
        media: media.map(editedMedia),
        poll: note.poll ? { options: note.poll.options } : null,
        createdAt: editedAt,
      },
    ),
  ];
}

/**
 * A poll whose options were edited is a new poll (as Mastodon resets it): the votes here go, and the options, end
 * and tallies are the edit's. Unchanged options leave the poll alone (its tallies are `Update{Question}`'s).
 */
function pollEditStatements(d: DB, statusId: string, poll: NonNullable<ParsedNote["poll"]>): D1PreparedStatement[] {
  const options = JSON.stringify(poll.options);
  const changed = sql`status_id = ${statusId} AND options <> ${options}`;
  return [
    statement(d, sql`DELETE FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE ${changed})`),
    statement(
      d,
      sql`UPDATE polls SET options = ${options}, multiple = ${poll.multiple ? 1 : 0}, expires_at = ${poll.expiresAt}, closed_at = NULL,
        remote_tallies = ${JSON.stringify(poll.tallies)}, remote_voters = ${poll.voters} WHERE ${changed}`,
    ),
  ];
}
