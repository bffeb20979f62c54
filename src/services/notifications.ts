/**
 * Notifications. Each is created by the action that causes it, as one statement inside that action's batch;
 * the statement itself holds every rule that suppresses it, so nothing is created then hidden:
 * - never to yourself, never to a remote account;
 * - never between accounts that block each other, nor from an account muted with notifications, nor from a
 *   domain the recipient blocks, nor about a thread the recipient muted;
 * - with `block_from_strangers`, never from an account the recipient does not follow.
 * Undoing the action (unfavourite, unreblog, unfollow, removing a reaction, deleting the status) removes it.
 */
import { sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { newId } from "../db/ids";
import { notifications } from "../db/schema";
import { NOTIFICATION_TYPES } from "../schemas/social";
import { visibleTo } from "./visibility";

export { NOTIFICATION_TYPES };
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
/** Shown only when asked for with `include_types[]`. */
export const OPT_IN_TYPES: NotificationType[] = ["pleroma:chat_mention", "pleroma:report"];

export interface NotificationInput {
  type: NotificationType;
  /** One recipient, or several (one statement whatever their number: they are bound as one JSON parameter). */
  to: string | string[];
  from: string;
  statusId?: string | null;
  emoji?: string | null;
  targetAccountId?: string | null;
  /** A further condition that must hold when the statement runs (e.g. a claim made earlier in the batch). */
  onlyIf?: SQL;
  /** The one case a notification goes to its own cause: the end of your own poll. */
  toSelf?: boolean;
}

/** The statement that creates the notification unless a rule suppresses it. */
export function notify(d: DB, n: NotificationInput): D1PreparedStatement {
  const t = Date.now();
  const rows = JSON.stringify((Array.isArray(n.to) ? n.to : [n.to]).map((to) => [newId(t), to]));
  const rules = n.toSelf ? sql`n.to_id = n.from_id` : sql`n.to_id <> n.from_id AND ${allowed(sql`n.to_id`, sql`n.from_id`, sql`n.status_id`, sql`n.t`, sql`u.notification_settings`)}`;
  return statement(
    d,
    sql`WITH n(id, to_id, from_id, status_id, t) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ${n.from}, ${n.statusId ?? null}, ${t} FROM json_each(${rows}))
    INSERT INTO notifications (id, account_id, from_account_id, type, status_id, report_id, target_account_id, emoji, is_seen, created_at)
    SELECT n.id, n.to_id, n.from_id, ${n.type}, n.status_id, NULL, ${n.targetAccountId ?? null}, ${n.emoji ?? null}, 0, n.t
    FROM n JOIN users u ON u.account_id = n.to_id
    WHERE ${rules} ${n.onlyIf ? sql`AND ${n.onlyIf}` : sql``}`,
  );
}

/** The suppression rules, as a condition on recipient, sender, status and time. */
function allowed(to: SQL, from: SQL, statusId: SQL, t: SQL, settings: SQL): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.account_id = ${to} AND b.target_account_id = ${from}) OR (b.account_id = ${from} AND b.target_account_id = ${to}))
    AND NOT EXISTS (SELECT 1 FROM mutes m WHERE m.account_id = ${to} AND m.target_account_id = ${from} AND m.hide_notifications = 1 AND (m.expires_at IS NULL OR m.expires_at > ${t}))
    AND NOT EXISTS (SELECT 1 FROM domain_blocks db JOIN accounts fa ON fa.domain = db.domain WHERE db.account_id = ${to} AND fa.id = ${from})
    AND (${statusId} IS NULL OR NOT EXISTS (SELECT 1 FROM thread_mutes tm JOIN statuses st ON st.thread_id = tm.thread_id
      WHERE tm.account_id = ${to} AND st.id = ${statusId} AND (tm.expires_at IS NULL OR tm.expires_at > ${t})))
    AND (coalesce(json_extract(${settings}, '$.block_from_strangers'), 0) = 0
      OR EXISTS (SELECT 1 FROM follows sf WHERE sf.account_id = ${to} AND sf.target_account_id = ${from}))`;
}

/** Whether a notification's recipient mutes its sender now (an expired mute does not count). */
export const senderMuted = (t: number) =>
  sql<number>`EXISTS (SELECT 1 FROM mutes im WHERE im.account_id = ${notifications.accountId} AND im.target_account_id = ${notifications.fromAccountId}
    AND (im.expires_at IS NULL OR im.expires_at > ${t}))`;

/** The statement that removes what an undone action caused. */
export function unnotify(d: DB, n: Omit<NotificationInput, "targetAccountId" | "to"> & { to: string }): D1PreparedStatement {
  return statement(
    d,
    sql`DELETE FROM notifications WHERE account_id = ${n.to} AND from_account_id = ${n.from} AND type = ${n.type}
      AND status_id IS ${n.statusId ?? null} AND emoji IS ${n.emoji ?? null}`,
  );
}

/** Mention notifications of a new status: its mentioned recipients, and every recipient of a direct status. */
export function notifyMentions(d: DB, status: { id: string; accountId: string; visibility: string }, recipients: { accountId: string; mention: boolean }[]): D1PreparedStatement[] {
  const to = recipients.filter((r) => r.mention || status.visibility === "direct").map((r) => r.accountId);
  return to.length ? [notify(d, { type: "mention", to, from: status.accountId, statusId: status.id })] : [];
}

/**
 * `status` notifications of a new post to the author's subscribers (Pleroma's subscriptions, also made by
 * `follow` with `notify`), as Pleroma 2.7 does: not for replies (the caller leaves those out; reblogs never come
 * here), only to subscribers who may see the post, and not to those it mentions (they get the `mention`).
 * ONE set-based statement, after the status and its recipients in the post's batch: any number of subscribers
 * costs the same.
 */
export function notifySubscribers(d: DB, status: { id: string; accountId: string; createdAt: number }): D1PreparedStatement {
  const t = status.createdAt;
  // One id per row: this statement's time and random head, then the subscription's own random tail, so the
  // ids are unique, well-formed and in time order with every other notification.
  const head = newId(t).slice(0, 16);
  return statement(
    d,
    sql`INSERT INTO notifications (id, account_id, from_account_id, type, status_id, report_id, target_account_id, emoji, is_seen, created_at)
    SELECT ${head} || substr(sub.id, 17, 10), sub.account_id, statuses.account_id, 'status', statuses.id, NULL, NULL, NULL, 0, ${t}
    FROM statuses
      JOIN subscriptions sub ON sub.target_account_id = statuses.account_id
      JOIN users u ON u.account_id = sub.account_id
    WHERE statuses.id = ${status.id} AND sub.account_id <> statuses.account_id
      AND ${visibleTo(sql`sub.account_id`)}
      AND NOT EXISTS (SELECT 1 FROM status_recipients mr WHERE mr.status_id = statuses.id AND mr.account_id = sub.account_id AND (mr.mention = 1 OR statuses.visibility = 'direct'))
      AND ${allowed(sql`sub.account_id`, sql`statuses.account_id`, sql`statuses.id`, sql`${t}`, sql`u.notification_settings`)}`,
  );
}

/**
 * Ends polls whose time is up: a `poll` notification to the author and every voter, once (the poll is marked
 * closed in the same batch). A bounded number per run.
 */
export async function closeEndedPolls(d: DB, t: number, max = 50): Promise<number> {
  const { results } = await statement(
    d,
    sql`SELECT p.id, p.status_id AS statusId, s.account_id AS authorId,
        (SELECT json_group_array(DISTINCT v.account_id) FROM poll_votes v WHERE v.poll_id = p.id) AS voters
      FROM polls p JOIN statuses s ON s.id = p.status_id
      WHERE p.expires_at <= ${t} AND p.closed_at IS NULL ORDER BY p.expires_at LIMIT ${max}`,
  ).all<{ id: string; statusId: string; authorId: string; voters: string }>();
  if (results.length === 0) return 0;
  const stmts: D1PreparedStatement[] = [];
  for (const p of results) {
    // Whoever closes the poll (its `closed_at` is this run's time) sends its notifications: a repeated or
    // overlapping run finds it closed by another time and sends nothing.
    stmts.push(statement(d, sql`UPDATE polls SET closed_at = ${t} WHERE id = ${p.id} AND closed_at IS NULL`));
    const mine = sql`EXISTS (SELECT 1 FROM polls WHERE id = ${p.id} AND closed_at = ${t})`;
    stmts.push(notify(d, { type: "poll", to: p.authorId, from: p.authorId, statusId: p.statusId, toSelf: true, onlyIf: mine }));
    for (const voter of JSON.parse(p.voters) as string[]) {
      if (voter !== p.authorId) stmts.push(notify(d, { type: "poll", to: voter, from: p.authorId, statusId: p.statusId, onlyIf: mine }));
    }
  }
  await d.$client.batch(stmts);
  return results.length;
}
