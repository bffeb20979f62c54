/**
 * Mastodon 4.3's notification policy and notification requests. A user's policy says, per kind of sender, whether
 * their notifications are accepted, filtered (kept aside: `notifications.filtered`, counted in a request per
 * sender by the trigger `notification_requests_filtered`) or dropped (never created). The verdict is part of the
 * statement that creates the notification (services/notifications.ts `notify`), so a filtered notification is
 * written already "pushed": no Web Push, no stream event. Accepting a request lets the sender through from then
 * on and brings its notifications back; dismissing it deletes them.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { inJson, now } from "../db/client";
import { notificationPermissions, notificationRequests, notifications, users } from "../db/schema";
import { notFound } from "../lib/errors";
import { inOrder, pageQuery, type Page } from "../db/paging";
import { accountsById } from "./conversations";
import { hydrate } from "./hydrate";
import { follows, inOwnThread, shielded } from "./mention-shield";
import { limitedAccountSql } from "./federation-policies";
import type { NOTIFICATION_TYPES } from "../schemas/social";

type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export const POLICY_KEYS = [
  "for_not_following",
  "for_not_followers",
  "for_new_accounts",
  "for_private_mentions",
  "for_limited_accounts",
] as const;
export type PolicyKey = (typeof POLICY_KEYS)[number];
export const POLICY_VALUES = ["accept", "filter", "drop"] as const;
export type PolicyValue = (typeof POLICY_VALUES)[number];
export type Policy = Record<PolicyKey, PolicyValue>;

/**
 * Everything accepted but limited accounts, so that nothing changes for a user who never set a policy (Mastodon
 * 4.3 filters private mentions by default; here a stranger's direct message still notifies, as it did before).
 */
export const DEFAULT_POLICY: Policy = {
  for_not_following: "accept",
  for_not_followers: "accept",
  for_new_accounts: "accept",
  for_private_mentions: "accept",
  for_limited_accounts: "filter",
};
const NEW_ACCOUNT_MS = 30 * 86_400_000;

/** The types a policy applies to (Mastodon's `filterable` ones, and Pleroma's reactions like favourites). */
const FILTERABLE: NotificationType[] = [
  "mention",
  "follow",
  "follow_request",
  "favourite",
  "reblog",
  "pleroma:emoji_reaction",
];

export function policyOf(stored: Record<string, string> | null | undefined): Policy {
  return Object.fromEntries(
    POLICY_KEYS.map((k) => [k, POLICY_VALUES.includes(stored?.[k] as PolicyValue) ? stored![k] : DEFAULT_POLICY[k]]),
  ) as Policy;
}

/**
 * The verdict on a notification of `type` as SQL: 0 accept, 1 filter, 2 drop. `policy` is the recipient's
 * `users.notification_policy`. A key left at `accept` costs nothing (SQLite stops at the first false operand).
 */
export function verdict(type: NotificationType, to: SQL, from: SQL, statusId: SQL, t: SQL, policy: SQL): SQL {
  if (!FILTERABLE.includes(type)) return sql`0`;
  const is = (k: PolicyKey, v: PolicyValue) =>
    sql`coalesce(json_extract(${policy}, ${"$." + k}), ${DEFAULT_POLICY[k]}) = ${v}`;
  const notFollowing = sql`NOT ${follows(to, from)}`;
  const conditions: [PolicyKey, SQL][] = [
    ["for_not_following", notFollowing],
    ["for_not_followers", sql`NOT ${follows(from, to)}`],
    [
      "for_new_accounts",
      sql`(SELECT created_at FROM accounts na WHERE na.id = ${from}) > ${t} - ${NEW_ACCOUNT_MS} AND ${notFollowing}`,
    ],
    [
      "for_private_mentions",
      type === "mention"
        ? sql`EXISTS (SELECT 1 FROM statuses pm WHERE pm.id = ${statusId} AND pm.visibility = 'direct') AND ${notFollowing} AND NOT ${inOwnThread(to, statusId)}`
        : sql`0`,
    ],
    // Accounts limited by moderators (their domain silenced), unless the recipient follows them, as Mastodon 4.3.
    ["for_limited_accounts", sql`${limitedAccountSql(from)} AND ${notFollowing}`],
  ];
  const any = (v: PolicyValue) =>
    sql.join(
      conditions.map(([k, c]) => sql`(${is(k, v)} AND ${c})`),
      sql` OR `,
    );
  const shield = type === "mention" ? sql` OR ${shielded(to, from, statusId, t)}` : sql``;
  return sql`CASE WHEN EXISTS (SELECT 1 FROM notification_permissions np WHERE np.account_id = ${to} AND np.from_account_id = ${from}) THEN 0
    WHEN ${any("drop")} THEN 2 WHEN ${any("filter")}${shield} THEN 1 ELSE 0 END`;
}

/** The user's policy with its summary: senders waiting (at most 100) and their filtered notifications. */
export async function policyWithSummary(d: DB, me: string) {
  const [[user], [summary]] = await d.batch([
    d.select({ policy: users.notificationPolicy }).from(users).where(eq(users.accountId, me)),
    d
      .select({
        requests: sql<number>`count(*)`,
        notifications: sql<number>`coalesce(sum(notifications_count), 0)`,
      })
      .from(sql`(SELECT notifications_count FROM notification_requests WHERE account_id = ${me} LIMIT 100)`),
  ]);
  return {
    policy: policyOf(user?.policy),
    requests: summary?.requests ?? 0,
    notifications: summary?.notifications ?? 0,
  };
}

/** Changes the given keys of the user's policy, keeping the others. */
export async function updatePolicy(d: DB, me: string, changes: Partial<Policy>): Promise<void> {
  const given = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
  if (Object.keys(given).length === 0) return;
  await d
    .update(users)
    .set({ notificationPolicy: sql`json_patch(coalesce(${users.notificationPolicy}, '{}'), ${JSON.stringify(given)})` })
    .where(eq(users.accountId, me));
}

export type RequestRow = typeof notificationRequests.$inferSelect;

/** The user's own requests among `ids` (others' are not theirs to see or act on). */
export async function ownRequests(d: DB, me: string, ids: string[]): Promise<RequestRow[]> {
  if (ids.length === 0) return [];
  return d
    .select()
    .from(notificationRequests)
    .where(and(eq(notificationRequests.accountId, me), inJson(notificationRequests.id, ids)));
}

export async function ownRequest(d: DB, me: string, id: string): Promise<RequestRow> {
  const [row] = await ownRequests(d, me, [id]);
  if (!row) throw notFound();
  return row;
}

/** The user's filtered notifications from the senders of `rows`. */
const filteredFrom = (me: string, rows: RequestRow[]) =>
  and(
    eq(notifications.accountId, me),
    inJson(
      notifications.fromAccountId,
      rows.map((r) => r.fromAccountId),
    ),
    eq(notifications.filtered, true),
  );

/**
 * Accepts requests: their senders are let through from now on and their filtered notifications come back (not
 * pushed again, as Mastodon does), in one batch.
 */
export async function acceptRequests(d: DB, me: string, rows: RequestRow[]): Promise<void> {
  if (rows.length === 0) return;
  const t = now();
  await d.batch([
    d
      .insert(notificationPermissions)
      .values(rows.map((r) => ({ accountId: me, fromAccountId: r.fromAccountId, createdAt: t })))
      .onConflictDoNothing(),
    d.update(notifications).set({ filtered: false }).where(filteredFrom(me, rows)),
    d.delete(notificationRequests).where(
      inJson(
        notificationRequests.id,
        rows.map((r) => r.id),
      ),
    ),
  ]);
}

/** Dismisses requests: they and their filtered notifications are deleted (one batch). */
export async function dismissRequests(d: DB, me: string, rows: RequestRow[]): Promise<void> {
  if (rows.length === 0) return;
  await d.batch([
    d.delete(notifications).where(filteredFrom(me, rows)),
    d.delete(notificationRequests).where(
      inJson(
        notificationRequests.id,
        rows.map((r) => r.id),
      ),
    ),
  ]);
}

/** A page of the user's requests, newest first, with their senders and last statuses loaded (one batch). */
export async function requestPage(d: DB, me: string, page: Page) {
  const q = pageQuery(notificationRequests.id, page);
  const rows = inOrder(
    await d
      .select()
      .from(notificationRequests)
      .where(and(eq(notificationRequests.accountId, me), q.where))
      .orderBy(q.orderBy)
      .limit(q.limit),
    q,
  );
  return { rows, ...(await requestsNamed(d, me, rows)) };
}

/** The senders and last statuses requests name. */
export async function requestsNamed(d: DB, me: string, rows: RequestRow[]) {
  const [h, people] = await Promise.all([
    hydrate(
      d,
      rows.flatMap((r) => (r.lastStatusId ? [r.lastStatusId] : [])),
      me,
    ),
    accountsById(
      d,
      rows.map((r) => r.fromAccountId),
    ),
  ]);
  return { h, people };
}

/** Instance-wide, for the moderation view: pending requests, their notifications and senders (the newest 1,000). */
export const FILTERED_SUMMARY_MAX = 1000;
export function filteredSummary(d: DB) {
  return d
    .select({
      requests: sql<number>`count(*)`,
      notifications: sql<number>`coalesce(sum(notifications_count), 0)`,
      senders: sql<number>`count(DISTINCT from_account_id)`,
    })
    .from(
      sql`(SELECT notifications_count, from_account_id FROM notification_requests ORDER BY id DESC LIMIT ${FILTERED_SUMMARY_MAX})`,
    );
}
