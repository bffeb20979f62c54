/**
 * Statements writing a post's rows (services/statuses.ts `writePost` puts them in its one batch). Lists of rows
 * are bound as one JSON parameter each: a VALUES list would pass D1's 100 parameters.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { newId } from "../db/ids";
import type { StatusRow } from "./hydrate";

/** The post's addressees, each with whether it mentions them. */
export function recipientsStatement(
  d: DB,
  statusId: string,
  recipients: { accountId: string; mention: boolean }[],
): D1PreparedStatement {
  const rows = JSON.stringify(recipients.map((r) => [r.accountId, r.mention ? 1 : 0]));
  return statement(
    d,
    sql`INSERT INTO status_recipients (status_id, account_id, mention) SELECT ${statusId}, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${rows})`,
  );
}

/** The status's hashtags (an edit deletes the old ones first). */
export function tagsStatement(d: DB, statusId: string, tags: string[]): D1PreparedStatement {
  return statement(
    d,
    sql`INSERT INTO status_tags (status_id, tag) SELECT ${statusId}, value FROM json_each(${JSON.stringify(tags)})`,
  );
}

/** The uploads a post takes, in its order (a scheduled post's own ones leave it). */
export function mediaStatement(
  d: DB,
  statusId: string,
  media: { id: string; position: number }[],
): D1PreparedStatement {
  const positions = JSON.stringify(Object.fromEntries(media.map((m) => [m.id, m.position])));
  return statement(
    d,
    sql`UPDATE media_attachments SET status_id = ${statusId}, scheduled_status_id = NULL, position = json_extract(${positions}, '$."' || id || '"')
        WHERE id IN (SELECT key FROM json_each(${positions}))`,
  );
}

/**
 * A direct post's conversation (one per thread) and the participation of each local participant, the author's
 * read, the others' unread. The second statement answers the participations (`id`, `accountId`).
 */
export function conversationStatements(d: DB, s: StatusRow, participants: string[]): D1PreparedStatement[] {
  const t = s.createdAt;
  const conversationId = newId(t);
  // Recipients are set when a participation starts; later they change only when its owner changes them.
  const rows = JSON.stringify(
    participants.map((accountId) => [
      newId(t),
      accountId,
      JSON.stringify(participants.filter((x) => x !== accountId)),
      accountId === s.accountId ? 0 : 1,
    ]),
  );
  return [
    statement(
      d,
      sql`INSERT OR IGNORE INTO conversations (id, thread_id, created_at) VALUES (${conversationId}, ${s.threadId}, ${t})`,
    ),
    statement(
      d,
      sql`INSERT INTO participations (id, conversation_id, account_id, recipients, unread, last_status_id, updated_at)
          SELECT json_extract(e.value, '$[0]'), c.id, a.id, json_extract(e.value, '$[2]'), json_extract(e.value, '$[3]'), ${s.id}, ${t}
          FROM json_each(${rows}) e JOIN conversations c ON c.thread_id = ${s.threadId} JOIN accounts a ON a.id = json_extract(e.value, '$[1]') AND a.domain IS NULL WHERE true
          ON CONFLICT (conversation_id, account_id) DO UPDATE SET unread = excluded.unread, last_status_id = excluded.last_status_id, updated_at = excluded.updated_at
          RETURNING id, account_id AS accountId`,
    ),
  ];
}

/** The author's counters after a status, answered by the statement (`statusesCount`, `lastStatusAt`). */
export function authorCountersStatement(d: DB, s: StatusRow): D1PreparedStatement {
  const t = s.createdAt;
  return statement(
    d,
    // Counted up in the batch that inserts the status (one transaction), not recounted: a recount walks all of
    // the author's statuses on every post (1.6 ms at 2,700 statuses, growing with each). Deleting recounts.
    // A remote account keeps the figure its server reports (local rows know only part of its statuses), and its
    // `last_status_at` (shown as a day) is written on its first status of a later day only: a row written per
    // author a day, not per post (issue 42).
    sql`UPDATE accounts SET statuses_count = statuses_count + CASE WHEN domain IS NULL THEN ${s.reblogOfId ? 0 : 1} ELSE 0 END,
        last_status_at = ${t}
        WHERE id = ${s.accountId} AND (domain IS NULL OR last_status_at IS NULL OR last_status_at < ${t - (t % 86_400_000)})
        RETURNING statuses_count AS statusesCount, last_status_at AS lastStatusAt`,
  );
}
