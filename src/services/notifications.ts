/**
 * Notifications. Each is created by the action that causes it, as one statement inside that action's batch;
 * the statement itself holds every rule that suppresses it, so nothing is created then hidden:
 * - never to yourself, never to a remote account;
 * - never between accounts that block each other, nor from an account muted with notifications, nor from a
 *   domain the recipient blocks, nor about a thread the recipient muted;
 * - with `block_from_strangers`, never from an account the recipient does not follow.
 * Undoing the action (unfavourite, unreblog, unfollow, removing a reaction, deleting the status) removes it.
 */
import { outboxWrite } from "./outbox";
import { and, desc, eq, lte, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { inJson, now, statement } from "../db/client";
import { newestFirst, seqCursor, seqIds } from "../db/ids";
import { chatMessages, markers, mediaAttachments, notifications, reports, users } from "../db/schema";
import { fromJson, jsonObject, precompiled } from "../db/json-rows";
import { accountById, accountFromJson, hydrate, parsed, type Hydrated } from "./hydrate";
import { accountsById } from "./conversations";
import type { AccountWithUser } from "./accounts";
import { badRequest, notFound } from "../lib/errors";
import { rawPage, seqPage, type Page } from "../db/paging";
import { NotificationSettingsSchema } from "../schemas/account";
import { NOTIFICATION_TYPES } from "../schemas/social";
import { ME, silenced, visibleTo, type ViewerRef } from "./visibility";
import { verdict } from "./notification-policy";
import { eventJson, eventsByIds, type SeveranceEvent } from "./severed-relationships";

export { NOTIFICATION_TYPES };
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
/** Shown only when asked for with `include_types[]` (Pleroma's way of keeping newer types from older clients). */
const OPT_IN_TYPES: NotificationType[] = ["pleroma:chat_mention", "pleroma:report"];
/**
 * Mastodon 4.3's types: opt-in too on v1, whose clients may predate them (an unknown type breaks some readers),
 * shown unasked by the 4.3 endpoints (`newerTypes`), whose clients know them or skip a type they do not know
 * (Starling's own answers to interaction requests, issue 49, go there too).
 */
const NEWER_TYPES: NotificationType[] = ["severed_relationships", "interaction_approved", "interaction_rejected"];

export interface NotificationInput {
  type: NotificationType;
  /** One recipient, or several (one statement whatever their number: they are bound as one JSON parameter). */
  to: string | string[];
  /** Recipients as a query (its `account_id` column) rather than a list, when the batch is what decides them. */
  toQuery?: SQL;
  /** When (default: now). */
  at?: number;
  from: string;
  statusId?: string | null;
  emoji?: string | null;
  targetAccountId?: string | null;
  /** `pleroma:chat_mention`: the chat message. */
  chatMessageId?: string | null;
  /** A further condition that must hold when the statement runs (e.g. a claim made earlier in the batch). */
  onlyIf?: SQL;
  /** The one case a notification goes to its own cause: the end of your own poll. */
  toSelf?: boolean;
}

/** The statement that creates the notification unless a rule suppresses it. */
export function notify(d: DB, n: NotificationInput): D1PreparedStatement {
  const t = n.at ?? Date.now();
  const to = JSON.stringify(Array.isArray(n.to) ? n.to : [n.to]);
  const recipients = n.toQuery
    ? sql`SELECT q.account_id, ${n.from}, ${n.statusId ?? null}, ${t} FROM (${n.toQuery}) q`
    : sql`SELECT value, ${n.from}, ${n.statusId ?? null}, ${t} FROM json_each(${to})`;
  const rules = n.toSelf
    ? sql`n.to_id = n.from_id`
    : sql`n.to_id <> n.from_id AND ${allowed(sql`n.to_id`, sql`n.from_id`, sql`n.status_id`, sql`n.t`, sql`u.notification_settings`)}`;
  // The recipient's policy and the mention shield (services/notification-policy.ts): 1 filters, 2 drops. A
  // filtered notification is written as pushed, so neither Web Push nor the streams take it.
  const judged = n.toSelf
    ? sql`0`
    : verdict(n.type, sql`n.to_id`, sql`n.from_id`, sql`n.status_id`, sql`n.t`, sql`u.notification_policy`);
  return statement(
    d,
    sql`WITH n(to_id, from_id, status_id, t) AS (${recipients}),
      v AS (SELECT n.*, ${judged} AS verdict FROM n JOIN users u ON u.account_id = n.to_id
        WHERE ${rules} ${n.onlyIf ? sql`AND ${n.onlyIf}` : sql``})
    INSERT INTO notifications (id, account_id, from_account_id, type, status_id, report_id, target_account_id, emoji, chat_message_id, is_seen, pushed, filtered, created_at)
    SELECT ${seqIds("notifications", t)}, v.to_id, v.from_id, ${n.type}, v.status_id, NULL, ${n.targetAccountId ?? null}, ${n.emoji ?? null}, ${n.chatMessageId ?? null}, 0, v.verdict = 1, v.verdict = 1, v.t
    FROM v WHERE v.verdict < 2`,
  );
}

/** The suppression rules, as a condition on recipient, sender, status and time. */
function allowed(to: SQL, from: SQL, statusId: SQL, t: SQL, settings: SQL): SQL {
  // Blocks either way, mutes that hide notifications, blocked domains.
  return sql`NOT ${silenced(to, from, { blocks: "either", mutes: "notifications", domains: true, now: t })}
    AND (${statusId} IS NULL OR NOT EXISTS (SELECT 1 FROM thread_mutes tm JOIN statuses st ON st.thread_id = tm.thread_id
      WHERE tm.account_id = ${to} AND st.id = ${statusId} AND (tm.expires_at IS NULL OR tm.expires_at > ${t})))
    AND (coalesce(json_extract(${settings}, '$.block_from_strangers'), 0) = 0
      OR EXISTS (SELECT 1 FROM follows sf WHERE sf.account_id = ${to} AND sf.target_account_id = ${from}))`;
}

/** Whether a notification's recipient mutes its sender now (an expired mute does not count). */
const senderMuted = (t: number) =>
  sql<number>`${silenced(sql`${notifications.accountId}`, notifications.fromAccountId, { blocks: "none", mutes: "any", domains: false, now: sql`${t}` })}`;

/** The statement that removes what an undone action caused. */
export function unnotify(
  d: DB,
  n: Omit<NotificationInput, "targetAccountId" | "to"> & { to: string },
): D1PreparedStatement {
  return statement(
    d,
    sql`DELETE FROM notifications WHERE account_id = ${n.to} AND from_account_id = ${n.from} AND type = ${n.type}
      AND status_id IS ${n.statusId ?? null} AND emoji IS ${n.emoji ?? null}`,
  );
}

/** Mention notifications of a new status: its mentioned recipients, and every recipient of a direct status. */
export function notifyMentions(
  d: DB,
  status: { id: string; accountId: string; visibility: string },
  recipients: { accountId: string; mention: boolean }[],
): D1PreparedStatement[] {
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
export function notifySubscribers(
  d: DB,
  status: { id: string; accountId: string; createdAt: number },
): D1PreparedStatement {
  const t = status.createdAt;
  return statement(
    d,
    sql`INSERT INTO notifications (id, account_id, from_account_id, type, status_id, report_id, target_account_id, emoji, is_seen, created_at)
    SELECT ${seqIds("notifications", t)}, sub.account_id, statuses.account_id, 'status', statuses.id, NULL, NULL, NULL, 0, ${t}
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
    stmts.push(
      notify(d, { type: "poll", to: p.authorId, from: p.authorId, statusId: p.statusId, toSelf: true, onlyIf: mine }),
    );
    // A local poll's final tallies go to the servers that have it (its audience and remote voters), as Mastodon's
    // PollExpirationNotifyWorker; the outbox row is written only for local statuses with a remote audience.
    stmts.push(outboxWrite(d, p.authorId, { type: "UpdatePoll", statusId: p.statusId }, t, { onlyIf: mine }));
    for (const voter of JSON.parse(p.voters) as string[]) {
      if (voter !== p.authorId)
        stmts.push(notify(d, { type: "poll", to: voter, from: p.authorId, statusId: p.statusId, onlyIf: mine }));
    }
  }
  await d.$client.batch(stmts);
  return results.length;
}

// ---- reading ----

/** A notification row, with whether its recipient mutes its sender. */
export type NotificationRow = typeof notifications.$inferSelect & { isMuted: number };

export interface NotificationQuery {
  /** `include_types[]` and Mastodon 3.5's `types[]`: when given, only these (opt-in types only when named). */
  include?: NotificationType[];
  exclude?: NotificationType[];
  accountId?: string;
  excludeVisibilities?: string[];
  withMuted?: boolean;
  /** Mastodon 4.3's `include_filtered`: also those the policy or the shield set aside. */
  includeFiltered?: boolean;
  /** Mastodon 4.3's own types are shown without being asked for (the 4.3 endpoints). */
  newerTypes?: boolean;
}

/** The types a listing shows: those asked for, else all but the opt-in ones; minus the excluded. */
function shownTypes(q: NotificationQuery): NotificationType[] {
  const base =
    q.include ??
    NOTIFICATION_TYPES.filter((t) => !OPT_IN_TYPES.includes(t) && (q.newerTypes || !NEWER_TYPES.includes(t)));
  return base.filter((t) => !q.exclude?.includes(t));
}

/**
 * The user's notifications that still make sense: from accounts not blocked either way since, about statuses
 * the user may still see; from muted accounts only `withMuted`. (Domain blocks are checked when notifying.)
 */
function shownTo(me: ViewerRef, withMuted: boolean): SQL {
  const t = Date.now();
  return sql`NOT ${silenced(me, notifications.fromAccountId, { blocks: "either", mutes: withMuted ? "none" : "any", domains: false, now: sql`${t}` })}
    AND (${notifications.statusId} IS NULL OR EXISTS (SELECT 1 FROM statuses WHERE statuses.id = ${notifications.statusId} AND ${visibleTo(me)}))`;
}

const selectRows = (d: DB) => d.select({ n: notifications, isMuted: senderMuted(Date.now()) }).from(notifications);
const flat = (rows: { n: typeof notifications.$inferSelect; isMuted: number }[]): NotificationRow[] =>
  rows.map((r) => ({ ...r.n, isMuted: r.isMuted }));

/**
 * A page of the viewer's (`ME`) notifications, newest first, with every filter in the one query, as a part of
 * the hydration statement (`HydrateOptions`): the page is the `npage` CTE, its statuses are the statement's
 * source (`statusIds`), and its rows, accounts, reports and chat messages come back as parts of their own kinds,
 * read by `notificationsRead`.
 */
export function notificationPage(q: NotificationQuery, page: Page) {
  const p = rawPage(sql`${notifications.id}`, seqPage(page));
  const conds = and(p.where, shownNotifications(q));
  return {
    ctes: sql`npage AS MATERIALIZED (SELECT notifications.*, ${senderMuted(Date.now())} AS is_muted FROM notifications WHERE ${conds} ORDER BY ${p.order} LIMIT ${p.limit})`,
    statusIds: sql`SELECT status_id FROM npage WHERE status_id IS NOT NULL`,
    // One pass over the page: each notification with its accounts, report and chat message, each looked up by
    // its id (a look-up finds nothing, and costs no row, where the notification names none). A part per kind
    // would scan the page once each.
    parts: [
      precompiled(
        "notification page parts",
        () => sql`SELECT 'notification' AS k, json_object(${namedFields("np")}) AS v FROM npage np`,
      ),
    ],
  };
}

/**
 * The user's (`ME`) notifications a listing shows, before paging: the types asked for, from the account asked
 * for, not filtered unless asked, still about what the user may see.
 */
export function shownNotifications(q: NotificationQuery): SQL {
  return and(listedNotifications(q), stillShown(q))!;
}

/**
 * Notification types as SQL literals: written into the statement, not bound, since a listing names them several
 * times and D1 binds at most 100 parameters a statement. Only the known types (plain words), so nothing else is.
 */
export function typeLiterals(types: NotificationType[]): SQL {
  const known = types.filter((t) => NOTIFICATION_TYPES.includes(t) && /^[a-z:_]+$/.test(t));
  return known.length ? sql.raw(known.map((t) => `'${t}'`).join(", ")) : sql`NULL`;
}

/** The part of `shownNotifications` read from the notification's own row (and its status, with `excludeVisibilities`). */
export function listedNotifications(q: NotificationQuery): SQL {
  return and(
    sql`${notifications.accountId} = ${ME}`,
    // A list of literals, not a json_each: a virtual table's rows are read (and counted) at each evaluation.
    sql`${notifications.type} IN (${typeLiterals(shownTypes(q))})`,
    q.accountId ? eq(notifications.fromAccountId, q.accountId) : undefined,
    q.excludeVisibilities?.length
      ? sql`(${notifications.statusId} IS NULL OR (SELECT visibility FROM statuses WHERE id = ${notifications.statusId}) NOT IN (SELECT value FROM json_each(${JSON.stringify(q.excludeVisibilities)})))`
      : undefined,
    q.includeFiltered ? undefined : eq(notifications.filtered, false),
  )!;
}

/** The part of `shownNotifications` that looks elsewhere: blocks and mutes since, the status still visible. */
export const stillShown = (q: NotificationQuery): SQL => shownTo(ME, q.withMuted ?? false);

/**
 * A notification row `np` (with `is_muted`) and what it names, as `json_object` fields: `n` the row, `m` muted,
 * `a` and `ta` its accounts, `r` its report, `cm` its chat message (read by `namedOf`).
 */
export const namedFields = (alias: string) => {
  const np = sql.raw(alias);
  return sql`'n', ${jsonObject(notifications, alias)}, 'm', ${np}.is_muted,
    'a', ${accountById(sql`${np}.from_account_id`)},
    'ta', ${accountById(sql`${np}.target_account_id`)},
    'r', (SELECT ${jsonObject(reports, "r")} FROM reports r WHERE r.id = ${np}.report_id),
    'cm', (SELECT json_object('message', ${jsonObject(chatMessages, "cm")}, 'media', CASE WHEN cm_m.id IS NULL THEN NULL ELSE ${jsonObject(mediaAttachments, "cm_m")} END)
      FROM chat_messages cm LEFT JOIN media_attachments cm_m ON cm_m.id = cm.media_id WHERE cm.id = ${np}.chat_message_id),
    'ev', CASE WHEN ${np}.type = 'severed_relationships' THEN ${eventJson(sql`${np}.id`)} END`;
};

/** The notifications of a `notificationPage` read (newest first) and what they name besides statuses. */
export function notificationsRead(
  h: Hydrated,
  kind = "notification",
): { rows: NotificationRow[]; named: NotificationsNamed } {
  const read = h.extra.get(kind) ?? [];
  const rows = read
    .map((o) => ({ ...fromJson(notifications, o.n), isMuted: o.m as number }))
    .sort((a, b) => newestFirst(a.id, b.id));
  const people = new Map(
    read
      .flatMap((o) => [o.a, o.ta])
      .filter(Boolean)
      .map((o) => accountFromJson(parsed(o)))
      .map((a) => [a.account.id, a]),
  );
  const reportRows = read.filter((o) => o.r).map((o) => fromJson(reports, parsed(o.r)));
  const chats = read
    .filter((o) => o.cm)
    .map((o) => parsed<{ message: Record<string, unknown>; media: Record<string, unknown> | null }>(o.cm))
    .map((o) => ({
      message: fromJson(chatMessages, o.message),
      media: o.media ? fromJson(mediaAttachments, o.media) : null,
    }));
  const events = read.filter((o) => o.ev).map((o) => parsed<SeveranceEvent>(o.ev));
  return {
    rows,
    named: {
      h,
      people,
      reports: new Map(reportRows.map((r) => [r.id, r])),
      chats: new Map(chats.map((c) => [c.message.id, c])),
      events: new Map(events.map((e) => [e.id, { ...e, purged: Boolean(e.purged) }])),
    },
  };
}

/** What notifications name, loaded: their statuses (hydrated), accounts, reports and chat messages, by id. */
export interface NotificationsNamed {
  h: Hydrated;
  people: Map<string, AccountWithUser>;
  reports: Map<string, typeof reports.$inferSelect>;
  chats: Map<string, { message: typeof chatMessages.$inferSelect; media: typeof mediaAttachments.$inferSelect | null }>;
  /** `severed_relationships`: the events, by notification id. */
  events: Map<string, SeveranceEvent>;
}

/** What notifications name, loaded for `me`: reads in parallel, whatever their number. */
export async function loadNotificationsNamed(d: DB, me: string, rows: NotificationRow[]): Promise<NotificationsNamed> {
  const statusIds = [...new Set(rows.flatMap((r) => (r.statusId ? [r.statusId] : [])))];
  const reportIds = [...new Set(rows.flatMap((r) => (r.reportId ? [r.reportId] : [])))];
  const chatIds = [...new Set(rows.flatMap((r) => (r.chatMessageId ? [r.chatMessageId] : [])))];
  const eventIds = rows.filter((r) => r.type === "severed_relationships").map((r) => r.id);
  const [h, people, reportRows, chatRows, events] = await Promise.all([
    hydrate(d, statusIds, me),
    accountsById(
      d,
      rows.flatMap((r) => [r.fromAccountId, ...(r.targetAccountId ? [r.targetAccountId] : [])]),
    ),
    reportIds.length ? d.select().from(reports).where(inJson(reports.id, reportIds)) : Promise.resolve([]),
    chatIds.length
      ? d
          .select({ message: chatMessages, media: mediaAttachments })
          .from(chatMessages)
          .leftJoin(mediaAttachments, eq(mediaAttachments.id, chatMessages.mediaId))
          .where(inJson(chatMessages.id, chatIds))
      : Promise.resolve([]),
    eventsByIds(d, me, eventIds),
  ]);
  return {
    h,
    people,
    reports: new Map(reportRows.map((r) => [r.id, r])),
    chats: new Map(chatRows.map((r) => [r.message.id, r])),
    events,
  };
}

/** One of the user's own notifications (404 for anyone else's). */
export async function ownNotification(d: DB, me: string, id: string): Promise<NotificationRow> {
  const row = await selectRows(d)
    .where(and(eq(notifications.id, id), eq(notifications.accountId, me)))
    .get();
  if (!row) throw notFound();
  return flat([row])[0];
}

/** Notifications by id (any recipient): for publishing, which renders each for its recipient. */
export async function notificationsByIds(d: DB, ids: string[]): Promise<NotificationRow[]> {
  if (ids.length === 0) return [];
  return flat(
    await selectRows(d).where(sql`${notifications.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`),
  );
}

export async function dismissNotification(d: DB, me: string, id: string): Promise<void> {
  const gone = await d
    .delete(notifications)
    .where(and(eq(notifications.id, id), eq(notifications.accountId, me)))
    .returning({ id: notifications.id });
  if (gone.length === 0) throw notFound();
}

/** Deletes the user's notifications: all of them, or those among `ids`. */
export async function clearNotifications(d: DB, me: string, ids?: string[]): Promise<void> {
  await d
    .delete(notifications)
    .where(and(eq(notifications.accountId, me), ids ? inJson(notifications.id, ids) : undefined));
}

/** Marks one notification read and answers it as it now is. */
export async function markOneRead(d: DB, me: string, id: string): Promise<NotificationRow> {
  const row = await ownNotification(d, me, id);
  await d.update(notifications).set({ isSeen: true }).where(eq(notifications.id, row.id));
  return { ...row, isSeen: true };
}

/** Marks every unread notification up to `maxId` read; answers the newest `max` of those it marked. */
export async function markReadUpTo(d: DB, me: string, maxId: string, max = 80): Promise<NotificationRow[]> {
  const marked = await d
    .update(notifications)
    .set({ isSeen: true })
    .where(
      and(eq(notifications.accountId, me), lte(notifications.id, seqCursor(maxId)!), eq(notifications.isSeen, false)),
    )
    .returning({ id: notifications.id });
  const ids = marked
    .map((m) => m.id)
    .sort()
    .reverse()
    .slice(0, max);
  return ids.length
    ? flat(await selectRows(d).where(inJson(notifications.id, ids)).orderBy(desc(notifications.id)))
    : [];
}

// ---- markers and settings ----

export type MarkerTimeline = "home" | "notifications";
export type MarkerRow = typeof markers.$inferSelect;

/** The user's markers of the given timelines, and their unread notification count (one batch). */
export async function markersOf(
  d: DB,
  me: string,
  timelines: string[],
): Promise<{ rows: MarkerRow[]; unread: number }> {
  const [rows, unread] = await d.batch([
    d
      .select()
      .from(markers)
      .where(and(eq(markers.accountId, me), inJson(markers.timeline, timelines))),
    d
      .select({ n: sql<number>`count(*)` })
      .from(notifications)
      .where(and(eq(notifications.accountId, me), eq(notifications.isSeen, false), eq(notifications.filtered, false))),
  ]);
  return { rows, unread: unread[0]?.n ?? 0 };
}

/** Saves reading positions: each given timeline's marker is created or moved (its version counts the moves). */
export async function saveMarkers(
  d: DB,
  me: string,
  positions: Partial<Record<MarkerTimeline, string>>,
): Promise<MarkerTimeline[]> {
  const t = now();
  const given = (["home", "notifications"] as const).filter((k) => positions[k] !== undefined);
  if (given.length === 0) throw badRequest("Give home[last_read_id] or notifications[last_read_id]");
  for (const timeline of given) {
    // A notification position kept from before sequence ids (a ULID) is taken as its moment.
    const lastReadId = timeline === "notifications" ? seqCursor(positions[timeline])! : positions[timeline]!;
    await d
      .insert(markers)
      .values({ accountId: me, timeline, lastReadId, version: 1, updatedAt: t })
      .onConflictDoUpdate({
        target: [markers.accountId, markers.timeline],
        set: { lastReadId, version: sql`${markers.version} + 1`, updatedAt: t },
      });
  }
  return [...given];
}

/** Changes the given notification settings, keeping the others. */
export async function updateNotificationSettings(
  d: DB,
  me: string,
  current: unknown,
  changes: { block_from_strangers?: boolean; hide_notification_contents?: boolean },
): Promise<void> {
  const next = {
    ...NotificationSettingsSchema.parse(current),
    ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)),
  };
  await d.update(users).set({ notificationSettings: next }).where(eq(users.accountId, me));
}
