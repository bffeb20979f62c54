/**
 * The statements an edit of a local status writes (services/status-edits.ts `editStatus` puts them in its one
 * batch, with the versions, the Update and the notifications): the status row, its tags, media, poll, search
 * text and addressing as the edit leaves them.
 */
import { eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { newId } from "../db/ids";
import { polls, statuses } from "../db/schema";
import type { ContentType } from "../content/format";
import { searchBody } from "./feeds";
import { tagsStatement } from "./post-writes";
import type { MediaRow, PollRow, StatusRow } from "./hydrate";
import type { PollInput } from "./statuses";

/** A status as an edit leaves it: the columns it sets and what hangs off it. */
export interface Edited {
  text: string;
  content: string;
  contentType: ContentType;
  spoilerText: string;
  sensitive: boolean;
  language: string | null;
  emojis: StatusRow["emojis"];
  cardUrl: string | null;
  tags: string[];
  /** The media ids the edit names, in its order. */
  mediaIds: string[];
  /** Their rows as the edit leaves them (position, description, focal point). */
  media: MediaRow[];
}

/** The status's row, its tags and its media as the edit leaves them. */
export function editStatements(d: DB, me: string, id: string, e: Edited, t: number): D1PreparedStatement[] {
  const { media, mediaIds } = e;
  const byId = (value: (m: MediaRow) => unknown) =>
    JSON.stringify(Object.fromEntries(media.map((m) => [m.id, value(m)])));
  return [
    statement(
      d,
      d
        .update(statuses)
        .set({
          text: e.text,
          content: e.content,
          contentType: e.contentType,
          spoilerText: e.spoilerText,
          sensitive: e.sensitive,
          language: e.language,
          emojis: e.emojis,
          cardUrl: e.cardUrl,
          hasMedia: media.length > 0,
          editedAt: t,
        })
        .where(eq(statuses.id, id)),
    ),
    statement(d, sql`DELETE FROM status_tags WHERE status_id = ${id}`),
    tagsStatement(d, id, e.tags),
    // Media taken off stay with the status for its history (and go with it); those kept or added are ordered.
    statement(
      d,
      sql`UPDATE media_attachments SET removed_by_edit = 1 WHERE status_id = ${id}
        AND id NOT IN (SELECT value FROM json_each(${JSON.stringify(mediaIds)}))`,
    ),
    ...(media.length
      ? [
          statement(
            d,
            sql`UPDATE media_attachments SET status_id = ${id}, removed_by_edit = 0,
              position = json_extract(${byId((m) => m.position)}, '$."' || id || '"'),
              description = json_extract(${byId((m) => m.description)}, '$."' || id || '"'),
              meta = json_extract(${byId((m) => m.meta ?? null)}, '$."' || id || '"'),
              pending = NULL
              WHERE id IN (SELECT value FROM json_each(${JSON.stringify(mediaIds)})) AND account_id = ${me}
                AND (status_id IS NULL OR status_id = ${id}) AND chat_message_id IS NULL AND scheduled_status_id IS NULL`,
          ),
        ]
      : []),
  ];
}

/** The search index follows the edited text. */
export function searchTextStatement(d: DB, id: string, e: Pick<Edited, "spoilerText" | "content">) {
  return statement(
    d,
    sql`UPDATE statuses_fts SET body = ${searchBody({ spoilerText: e.spoilerText, content: e.content })}
        WHERE rowid = (SELECT search_rowid FROM statuses WHERE id = ${id})`,
  );
}

/**
 * Addressing after an edit: newly mentioned accounts are addressed (a private or direct status reaches them from
 * now on, as on Mastodon; written before the Update's audience is read); mentions the edit removed stay addressed,
 * silently (as Mastodon: taking access back would confuse more).
 */
export function mentionStatements(
  d: DB,
  id: string,
  mentioned: Set<string>,
  newMentions: string[],
): D1PreparedStatement[] {
  return [
    ...(newMentions.length
      ? [
          statement(
            d,
            sql`INSERT INTO status_recipients (status_id, account_id, mention) SELECT ${id}, value, 1 FROM json_each(${JSON.stringify(newMentions)}) WHERE true
          ON CONFLICT (status_id, account_id) DO UPDATE SET mention = 1`,
          ),
        ]
      : []),
    statement(
      d,
      sql`UPDATE status_recipients SET mention = 0 WHERE status_id = ${id} AND mention = 1
        AND account_id NOT IN (SELECT value FROM json_each(${JSON.stringify([...mentioned])}))`,
    ),
  ];
}

/** The poll keeps its options and `multiple`: its votes stay. */
export const sameOptions = (a: PollRow, b: PollInput) =>
  a.multiple === (b.multiple ?? false) &&
  a.options.length === b.options.length &&
  a.options.every((o, i) => o === b.options[i]);

/**
 * A poll edited: options (or `multiple`) changed → its votes go and it runs again for `expires_in` (Mastodon's
 * reset); unchanged → votes stay, `hide_totals` and the end follow the edit unless it has ended. No poll in the
 * edit removes it; a poll in an edit of a status without one adds it.
 */
export function pollStatements(
  d: DB,
  statusId: string,
  poll: PollRow | null,
  next: PollInput | undefined,
  t: number,
): D1PreparedStatement[] {
  if (!next) {
    if (!poll) return [];
    return [
      statement(d, sql`DELETE FROM poll_votes WHERE poll_id = ${poll.id}`),
      statement(d, sql`DELETE FROM polls WHERE id = ${poll.id}`),
    ];
  }
  const expiresAt = t + next.expires_in * 1000;
  if (!poll)
    return [
      statement(
        d,
        d.insert(polls).values({
          id: newId(t),
          statusId,
          options: next.options,
          multiple: next.multiple ?? false,
          hideTotals: next.hide_totals ?? false,
          expiresAt,
          closedAt: null,
          createdAt: t,
          remoteTallies: null,
          remoteVoters: null,
        }),
      ),
    ];
  if (sameOptions(poll, next))
    return [
      statement(
        d,
        d
          .update(polls)
          .set({ hideTotals: next.hide_totals ?? false, ...(poll.closedAt === null ? { expiresAt } : {}) })
          .where(eq(polls.id, poll.id)),
      ),
    ];
  return [
    statement(d, sql`DELETE FROM poll_votes WHERE poll_id = ${poll.id}`),
    statement(
      d,
      d
        .update(polls)
        .set({
          options: next.options,
          multiple: next.multiple ?? false,
          hideTotals: next.hide_totals ?? false,
          expiresAt,
          closedAt: null,
        })
        .where(eq(polls.id, poll.id)),
    ),
  ];
}
