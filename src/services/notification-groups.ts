/**
 * Grouped notifications (Mastodon 4.3, `/api/v2/notifications`). A notification's `group_key` is a virtual column
 * of its row (migration 0053): favourites, reblogs and Pleroma's reactions of one status, and follows, within the
 * same 12-hour slot share one; every other notification is its own group, `ungrouped-<id>`. Since the key comes
 * from the row, every page and every client sees the same groups.
 *
 * A page is read as Mastodon reads it, within a bound, in two statements (routes/notification-groups.ts): the
 * newest `window(limit)` notifications the listing shows (past the cursor) are read with the token
 * (`groupedWindow`); the Worker groups them (`pickGroups`): the first `limit` groups by their newest notification
 * are the page, and the page's range runs from the oldest of those to the newest (the whole window when it holds
 * fewer groups, so the next page starts below it even when one group filled it). Then one statement reads each
 * group (`groupedPage`): its newest notification in the range, its count up to the range's top (from
 * `notification_group_counts`, kept by the notifications' triggers: one row whatever the group's size) and its
 * newest senders.
 */
import { and, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { notifications } from "../db/schema";
import { columnOf, precompiled } from "../db/json-rows";
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

/** The window of a page, as `readGroupWindow` reads it: the listing's newest notifications past the cursor. */
export interface GroupWindow {
  /** The part reading the window (`win` rows: `[id, key]`), read with the token (routes/page-read.ts). */
  part: SQL;
  limit: number;
  /** `min_id`: the window is the oldest notifications above the cursor, and groups are taken oldest first. */
  reversed: boolean;
}

/** Step 1 of a page of the viewer's (`ME`) notification groups: its window, `groupWindow(limit)` notifications. */
export function groupedWindow(q: GroupQuery, page: Page): GroupWindow {
  const limit = Math.trunc(page.limit);
  const p = rawPage(sql`${notifications.id}`, seqPage({ ...page, limit: groupWindow(limit) }));
  const grouped = (q.groupedTypes ?? GROUPABLE_TYPES).filter((t) => GROUPABLE_TYPES.includes(t));
  const q1 = oneGroupQuery(q);
  const listed = q.groupKey ? sql`${oneGroup(q.groupKey)} AND ${listedNotifications(q1)}` : listedNotifications(q1);
  return {
    part: sql`SELECT 'win' AS k, json_array(id, gk) AS v FROM (SELECT ${notifications.id} AS id, ${keyOf(grouped)} AS gk
      FROM notifications WHERE ${p.where} AND ${listed} ORDER BY ${p.order} LIMIT ${p.limit})`,
    limit,
    reversed: p.reversed,
  };
}

/** One group of a page: its key and its notifications' range within the page. */
export interface GroupSlot {
  key: string;
  min: string;
  max: string;
}

/**
 * Step 2, in the Worker: the window's groups, the first `limit` by their newest notification (oldest first with
 * `min_id`), and the page's range: from the oldest of those to the newest (the whole window when it holds fewer
 * groups, so that the next page starts below it even when one group filled it). Every notification the listing
 * shows within the range is in the window, so each group's range in the page is read from the window too. In SQL
 * this grouping cost a page's window several times over (each row of a materialized step or a sort is a row read).
 */
export function pickGroups(h: Hydrated, w: GroupWindow): { slots: GroupSlot[]; top: string } | null {
  const win = (h.extra.get("win") ?? []).map((r) => r as [string | number, string]);
  if (!win.length) return null;
  const spans = new Map<string, { hi: string; lo: string; ids: string[] }>();
  for (const [n, key] of win) {
    const id = String(n);
    const g = spans.get(key) ?? { hi: id, lo: id, ids: [] };
    if (id > g.hi) g.hi = id;
    if (id < g.lo) g.lo = id;
    g.ids.push(id);
    spans.set(key, g);
  }
  const all = [...spans.entries()];
  const chosen = all.sort(([, a], [, b]) => (w.reversed ? cmp(a.lo, b.lo) : cmp(b.hi, a.hi))).slice(0, w.limit);
  const full = chosen.length === w.limit;
  const his = chosen.map(([, g]) => g.hi).sort(cmp);
  const los = chosen.map(([, g]) => g.lo).sort(cmp);
  const windowLo = all.reduce((m, [, g]) => (g.lo < m ? g.lo : m), all[0]![1].lo);
  const windowHi = all.reduce((m, [, g]) => (g.hi > m ? g.hi : m), all[0]![1].hi);
  const lo = !w.reversed && full ? his[0]! : windowLo;
  const hi = w.reversed && full ? los[los.length - 1]! : windowHi;
  const slots = chosen.map(([key, g]) => {
    const inRange = g.ids.filter((id) => id >= lo && id <= hi).sort(cmp);
    return { key, min: inRange[0]!, max: inRange[inRange.length - 1]! };
  });
  return { slots, top: hi };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** One group is asked by its key whatever its type (opt-in types included), as Mastodon answers it. */
const oneGroupQuery = (q: GroupQuery): NotificationQuery =>
  q.groupKey ? { ...q, include: [...NOTIFICATION_TYPES], exclude: undefined } : q;

/**
 * Step 3: the page's groups, as the parts of one hydration statement (`groupsRead`). Each group is answered with
 * its newest notification in the range that is still shown, its count up to the range's top and its newest
 * senders.
 */
export function groupedPage(q: GroupQuery, picked: { slots: GroupSlot[]; top: string }) {
  const q1 = oneGroupQuery(q);
  // What looks elsewhere (blocks, mutes, the status still visible) is checked for each group's newest
  // notification only, not for every notification of the window.
  const shown = and(listedNotifications(q1), stillShown(q1));
  const slots = JSON.stringify(picked.slots.map((g) => [g.key, g.min, g.max]));
  return {
    ctes: sql`nrange(hi) AS NOT MATERIALIZED (SELECT ${picked.top}),
      npage AS MATERIALIZED (SELECT notifications.*, ${silenced(sql`notifications.account_id`, sql`notifications.from_account_id`, { blocks: "none", mutes: "any", domains: false, now: NOW })} AS is_muted,
          g.value ->> 0 AS gk, g.value ->> 1 AS page_min, g.value ->> 2 AS page_max
        FROM json_each(${slots}) g CROSS JOIN notifications ON notifications.rowid = CASE WHEN g.value ->> 0 LIKE 'ungrouped-%'
          THEN (SELECT rowid FROM notifications WHERE ${notifications.id} = g.value ->> 2 AND ${shown})
          ELSE (SELECT rowid FROM notifications WHERE ${notifications.accountId} = ${ME} AND ${notifications.groupKey} = g.value ->> 0
            AND ${notifications.id} BETWEEN g.value ->> 1 AND g.value ->> 2 AND ${shown} ORDER BY ${notifications.id} DESC LIMIT 1) END)`,
    statusIds: sql`SELECT status_id FROM npage WHERE status_id IS NOT NULL`,
    parts: [groupPart(q.includeFiltered ?? false)],
  };
}

/** A group's row: its newest notification and what it names, its count and its samples (see `groupsRead`). */
function groupPart(includeFiltered: boolean): SQL {
  return precompiled(`notification group parts ${includeFiltered ? "all" : "shown"}`, () => {
    const filtered = includeFiltered ? sql`gx.filtered IN (0, 1)` : sql`gx.filtered = 0`;
    const inGroup = sql`gx.account_id = np.account_id AND gx.group_key = np.gk AND ${filtered}`;
    const counted = includeFiltered ? sql`gc.shown + gc.filtered` : sql`gc.shown`;
    // The group's count kept by the notifications' triggers, less its notifications newer than the page (none,
    // unless the group goes on above the page; walked up to GROUP_COUNT_MAX of them).
    const count = sql`(SELECT ${counted} FROM notification_group_counts gc WHERE gc.account_id = np.account_id AND gc.group_key = np.gk)
      - (SELECT count(*) FROM (SELECT 1 FROM notifications gx WHERE ${inGroup} AND gx.id > (SELECT hi FROM nrange) LIMIT ${sql.raw(String(GROUP_COUNT_MAX))}))`;
    return sql`SELECT 'group' AS k, json_object(${namedFields("np")}, 'gk', np.gk, 'pmin', np.page_min, 'pmax', np.page_max,
        'c', CASE WHEN np.gk LIKE 'ungrouped-%' THEN 1 ELSE ${count} END,
        's', CASE WHEN np.gk LIKE 'ungrouped-%' THEN json_array()
          ELSE (SELECT json_group_array(json(${accountById(sql`sx.from_account_id`)})) FROM
            (SELECT gx.from_account_id FROM notifications gx WHERE ${inGroup} AND gx.id <= (SELECT hi FROM nrange)
              AND NOT ${silenced(sql`np.account_id`, sql`gx.from_account_id`, { blocks: "either", mutes: "any", domains: false, now: NOW })}
              ORDER BY gx.id DESC LIMIT ${sql.raw(String(SAMPLE_ACCOUNTS))}) sx) END) AS v
      FROM npage np`;
  });
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
  const byId = new Map(read.map((o) => [String(columnOf(notifications, o.n, "id")), o]));
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
