/**
 * Grouped notifications (Mastodon 4.3, `/api/v2/notifications`). A notification's `group_key` is a virtual column
 * of its row (migration 0053): favourites, reblogs and Pleroma's reactions of one status, and follows, within the
 * same 12-hour slot share one; every other notification is its own group, `ungrouped-<id>`. Since the key comes
 * from the row, every page and every client sees the same groups.
 *
 * A page is read as Mastodon reads it, within a bound: the newest `window(limit)` notifications the listing shows
 * (past the cursor), grouped; the first `limit` groups by their newest notification are the page, and the page's
 * range runs from the oldest of those to the newest (the whole window when it holds fewer groups, so the next
 * page starts below it even when one group filled it). Each group is answered with its newest notification in
 * the range, its count up to the range's top (the group index, capped at `GROUP_COUNT_MAX`) and its newest
 * senders. All of it is one statement, the token's read included (routes/page-read.ts).
 */
import { and, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { notifications } from "../db/schema";
import { precompiled } from "../db/json-rows";
import { rawPage, seqPage, type Page } from "../db/paging";
import { notFound } from "../lib/errors";
import { accountById, accountFromJson, parsed, type Hydrated } from "./hydrate";
import type { AccountWithUser } from "./accounts";
import {
  listedNotifications,
  namedFields,
  notificationsRead,
  shownNotifications,
  stillShown,
  typeLiterals,
  type NotificationQuery,
  type NotificationRow,
  type NotificationType,
  type NotificationsNamed,
  NOTIFICATION_TYPES,
} from "./notifications";
import { ME, NOW, paramsCte, silenced } from "./visibility";

/** The types grouped (Mastodon's `favourite`, `follow`, `reblog`; reactions group like favourites). */
export const GROUPABLE_TYPES: NotificationType[] = ["favourite", "follow", "reblog", "pleroma:emoji_reaction"];
/** A group's count reads its index entries up to this many (a viral post's count stops there). */
export const GROUP_COUNT_MAX = 1000;
/** Senders named per group (Mastodon's `SAMPLE_ACCOUNTS_SIZE`). */
export const SAMPLE_ACCOUNTS = 8;
/** Notifications read for a page of `limit` groups (each costs about two rows read: its index entry and its row). */
export const groupWindow = (limit: number) => limit + 20;

export interface GroupQuery extends NotificationQuery {
  /** `grouped_types[]`: only these are grouped (the others answer as `ungrouped-<id>`). */
  groupedTypes?: NotificationType[];
  /** One group (`GET /api/v2/notifications/:group_key`). */
  groupKey?: string;
}

/** The key a listing groups by: the row's own for the types grouped, else `ungrouped-<id>`. */
function keyOf(grouped: NotificationType[]): SQL {
  // A list of literals, not a json_each: this is evaluated for every notification of the window.
  return sql`CASE WHEN ${notifications.groupKey} IS NOT NULL AND ${notifications.type} IN (${typeLiterals(grouped)})
    THEN ${notifications.groupKey} ELSE 'ungrouped-' || ${notifications.id} END`;
}

/** The condition that picks one group's notifications by its key. */
function oneGroup(key: string): SQL {
  const ungrouped = /^ungrouped-(\d+)$/.exec(key);
  return ungrouped
    ? sql`${notifications.id} = ${ungrouped[1]}`
    : sql`${notifications.accountId} = ${ME} AND ${notifications.groupKey} = ${key}`;
}

/** A page of the viewer's (`ME`) notification groups, as the parts of one hydration statement (`groupsRead`). */
export function groupedPage(q: GroupQuery, page: Page) {
  const limit = Math.trunc(page.limit);
  const p = rawPage(sql`${notifications.id}`, seqPage({ ...page, limit: groupWindow(limit) }));
  const desc = !p.reversed;
  const grouped = (q.groupedTypes ?? GROUPABLE_TYPES).filter((t) => GROUPABLE_TYPES.includes(t));
  const key = keyOf(grouped);
  // One group is asked by its key whatever its type (opt-in types included), as Mastodon answers it.
  const q1: NotificationQuery = q.groupKey ? { ...q, include: [...NOTIFICATION_TYPES], exclude: undefined } : q;
  const listed = q.groupKey ? sql`${oneGroup(q.groupKey)} AND ${listedNotifications(q1)}` : listedNotifications(q1);
  // What looks elsewhere (blocks, mutes, the status still visible) is checked for each group's newest
  // notification only, not for every notification of the window.
  const shown = and(listed, stillShown(q1));
  const filtered = q.includeFiltered ? sql`gx.filtered IN (0, 1)` : sql`gx.filtered = 0`;
  const inGroup = sql`gx.account_id = np.account_id AND gx.group_key = np.gk AND ${filtered} AND gx.id <= (SELECT hi FROM nrange)`;
  const inRange = sql`${notifications.id} BETWEEN (SELECT lo FROM nrange) AND (SELECT hi FROM nrange)`;
  return {
    // Each step reads the one before it once: a scan of a materialized step costs its rows as a table's do
    // (rows read are what the Free plan counts), so the window is scanned once, by `nagg`, and what follows reads
    // the groups (at most `limit`), not the window again.
    ctes: sql`nwin AS MATERIALIZED (SELECT ${notifications.id} AS id, ${key} AS gk FROM notifications
        WHERE ${p.where} AND ${listed} ORDER BY ${p.order} LIMIT ${p.limit}),
      nagg AS MATERIALIZED (SELECT gk, max(id) AS hi, min(id) AS lo FROM nwin GROUP BY gk),
      nsel AS MATERIALIZED (SELECT gk, hi, lo FROM nagg ORDER BY ${desc ? sql`hi DESC` : sql`lo`} LIMIT ${limit}),
      nfull AS MATERIALIZED (SELECT count(*) = ${limit} AS full, min(hi) AS minhi, max(lo) AS maxlo FROM nsel),
      nspan AS MATERIALIZED (SELECT min(lo) AS lo, max(hi) AS hi FROM nagg),
      nrange AS MATERIALIZED (SELECT
        CASE WHEN ${desc ? sql`1` : sql`0`} AND f.full THEN f.minhi ELSE w.lo END AS lo,
        CASE WHEN ${desc ? sql`0` : sql`1`} AND f.full THEN f.maxlo ELSE w.hi END AS hi FROM nfull f, nspan w),
      ngroups AS MATERIALIZED (SELECT s.gk,
          CASE WHEN s.hi <= r.hi THEN s.hi ELSE (SELECT max(${notifications.id}) FROM notifications
            WHERE ${notifications.accountId} = ${ME} AND ${notifications.groupKey} = s.gk AND ${notifications.id} <= r.hi AND ${listed}) END AS page_max,
          CASE WHEN s.lo >= r.lo THEN s.lo ELSE (SELECT min(${notifications.id}) FROM notifications
            WHERE ${notifications.accountId} = ${ME} AND ${notifications.groupKey} = s.gk AND ${notifications.id} >= r.lo AND ${listed}) END AS page_min
        FROM nsel s, nrange r),
      nheads AS MATERIALIZED (SELECT g.gk, g.page_min, g.page_max, CASE WHEN g.gk LIKE 'ungrouped-%'
          THEN (SELECT ${notifications.id} FROM notifications WHERE ${notifications.id} = g.page_max AND ${shown})
          ELSE (SELECT ${notifications.id} FROM notifications WHERE ${notifications.accountId} = ${ME} AND ${notifications.groupKey} = g.gk
            AND ${inRange} AND ${shown} ORDER BY ${notifications.id} DESC LIMIT 1) END AS head FROM ngroups g),
      npage AS MATERIALIZED (SELECT notifications.*, ${silenced(sql`notifications.account_id`, sql`notifications.from_account_id`, { blocks: "none", mutes: "any", domains: false, now: NOW })} AS is_muted,
          g.gk AS gk, g.page_min AS page_min, g.page_max AS page_max
        FROM nheads g JOIN notifications ON notifications.id = g.head)`,
    statusIds: sql`SELECT status_id FROM npage WHERE status_id IS NOT NULL`,
    parts: [
      precompiled(
        `notification group parts ${q.includeFiltered ? "all" : "shown"}`,
        () =>
          sql`SELECT 'group' AS k, json_object(${namedFields("np")}, 'gk', np.gk, 'pmin', np.page_min, 'pmax', np.page_max,
            'c', CASE WHEN np.gk LIKE 'ungrouped-%' THEN 1
              ELSE (SELECT count(*) FROM (SELECT 1 FROM notifications gx WHERE ${inGroup} LIMIT ${sql.raw(String(GROUP_COUNT_MAX))})) END,
            's', CASE WHEN np.gk LIKE 'ungrouped-%' THEN json_array()
              ELSE (SELECT json_group_array(json(${accountById(sql`sx.from_account_id`)})) FROM
                (SELECT gx.from_account_id FROM notifications gx WHERE ${inGroup}
                  AND NOT ${silenced(sql`np.account_id`, sql`gx.from_account_id`, { blocks: "either", mutes: "any", domains: false, now: NOW })}
                  ORDER BY gx.id DESC LIMIT ${sql.raw(String(SAMPLE_ACCOUNTS))}) sx) END) AS v
          FROM npage np`,
      ),
    ],
  };
}

export interface NotificationGroup {
  key: string;
  /** The group's newest notification in the page (what it shows). */
  row: NotificationRow;
  count: number;
  pageMinId: string;
  pageMaxId: string;
  /** The newest senders, newest first, each once (the notification's own sender first). */
  sampleIds: string[];
}

/** The groups of a `groupedPage` read, newest first, and what they name. */
export function groupsRead(h: Hydrated): { groups: NotificationGroup[]; named: NotificationsNamed } {
  const read = h.extra.get("group") ?? [];
  const { rows, named } = notificationsRead(h, "group");
  const byId = new Map(read.map((o) => [String((o.n as { id: string }).id), o]));
  const people = new Map<string, AccountWithUser>(named.people);
  const groups = rows.map((row) => {
    const o = byId.get(row.id)!;
    const samples = (parsed<unknown[]>(o.s) ?? []).filter(Boolean).map((a) => accountFromJson(parsed(a)));
    for (const a of samples) people.set(a.account.id, a);
    const sampleIds = [...new Set([row.fromAccountId, ...samples.map((a) => a.account.id)])].slice(0, SAMPLE_ACCOUNTS);
    return {
      key: o.gk as string,
      row,
      count: Math.max(1, Number(o.c)),
      pageMinId: String(o.pmin),
      pageMaxId: String(o.pmax),
      sampleIds,
    };
  });
  return { groups, named: { ...named, people } };
}

/** Deletes one of the user's groups (its notifications up to now; nothing when the key is not theirs). */
export async function dismissGroup(d: DB, me: string, key: string): Promise<void> {
  const ungrouped = /^ungrouped-(\d+)$/.exec(key);
  await statement(
    d,
    ungrouped
      ? sql`DELETE FROM notifications WHERE account_id = ${me} AND id = ${ungrouped[1]}`
      : sql`DELETE FROM notifications WHERE account_id = ${me} AND group_key = ${key}`,
  ).run();
}

/** The senders of one of the user's groups, newest first (at most `max`); 404 when it has none. */
export async function groupAccountIds(d: DB, me: string, key: string, max = 80): Promise<string[]> {
  const ungrouped = /^ungrouped-(\d+)$/.exec(key);
  const { results } = await statement(
    d,
    sql`SELECT gn.from_account_id AS id FROM notifications gn
      WHERE gn.account_id = ${me} AND ${ungrouped ? sql`gn.id = ${ungrouped[1]}` : sql`gn.group_key = ${key}`} AND gn.filtered = 0
        AND NOT ${silenced(sql`${me}`, sql`gn.from_account_id`, { blocks: "either", mutes: "none", domains: false, now: sql`${Date.now()}` })}
      ORDER BY gn.id DESC LIMIT ${max}`,
  ).all<{ id: string }>();
  if (results.length === 0) throw notFound();
  return [...new Set(results.map((r) => r.id))];
}

/**
 * The user's unread notifications (newer than their notifications marker, not filtered), counted up to `max`:
 * as notifications, or (`groupedTypes` given, v2) as groups.
 */
export async function unreadCount(
  d: DB,
  me: string,
  q: NotificationQuery & { groupedTypes?: NotificationType[] },
  max: number,
): Promise<number> {
  const marker = sql`coalesce((SELECT last_read_id FROM markers WHERE account_id = ${me} AND timeline = 'notifications'), '')`;
  const key = q.groupedTypes ? keyOf(q.groupedTypes.filter((t) => GROUPABLE_TYPES.includes(t))) : sql`notifications.id`;
  const row = await statement(
    d,
    sql`WITH ${paramsCte(me)}
      SELECT count(DISTINCT gk) AS n FROM (SELECT ${key} AS gk FROM notifications
        WHERE ${shownNotifications(q)} AND notifications.id > ${marker} ORDER BY notifications.id DESC LIMIT ${max})`,
  ).first<{ n: number }>();
  return row?.n ?? 0;
}
