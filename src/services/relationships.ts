/** The viewer's relationship to many accounts, read in one statement whatever their number. */
import { sql, type SQL } from "drizzle-orm";
import { accounts } from "../db/schema";
import type { DB } from "../db/client";
import type { Relationship } from "../schemas/account";

interface RelationshipRow {
  id: string;
  following: number;
  followed_by: number;
  blocking: number;
  blocked_by: number;
  muting: number;
  muting_notifications: number;
  subscribing: number;
  requested: number;
  domain_blocking: number;
  showing_reblogs: number;
  endorsed: number;
  note: string;
}

/** The query, built so callers can put it in a `batch` with others. */
export function relationshipsQuery(d: DB, viewerId: string, targetIds: string[]) {
  const v = viewerId;
  const a = accounts.id;
  // A mute past its expiry no longer counts, even before the cron removes it.
  const t = Date.now();
  const liveMute = sql`m.account_id = ${v} AND m.target_account_id = ${a} AND (m.expires_at IS NULL OR m.expires_at > ${t})`;
  const flag = (expr: SQL) => sql<number>`${expr}`;
  return d
    .select({
      id: accounts.id,
      following: flag(sql`EXISTS(SELECT 1 FROM follows f WHERE f.account_id = ${v} AND f.target_account_id = ${a})`),
      followed_by: flag(sql`EXISTS(SELECT 1 FROM follows f WHERE f.account_id = ${a} AND f.target_account_id = ${v})`),
      blocking: flag(sql`EXISTS(SELECT 1 FROM blocks b WHERE b.account_id = ${v} AND b.target_account_id = ${a})`),
      blocked_by: flag(sql`EXISTS(SELECT 1 FROM blocks b WHERE b.account_id = ${a} AND b.target_account_id = ${v})`),
      muting: flag(sql`EXISTS(SELECT 1 FROM mutes m WHERE ${liveMute})`),
      muting_notifications: flag(sql`EXISTS(SELECT 1 FROM mutes m WHERE ${liveMute} AND m.hide_notifications)`),
      subscribing: flag(
        sql`EXISTS(SELECT 1 FROM subscriptions s WHERE s.account_id = ${v} AND s.target_account_id = ${a})`,
      ),
      requested: flag(
        sql`EXISTS(SELECT 1 FROM follow_requests r WHERE r.account_id = ${v} AND r.target_account_id = ${a})`,
      ),
      domain_blocking: flag(
        sql`(${accounts.domain} IS NOT NULL AND EXISTS(SELECT 1 FROM domain_blocks db WHERE db.account_id = ${v} AND db.domain = ${accounts.domain}))`,
      ),
      showing_reblogs:
        flag(sql`COALESCE((SELECT f.show_reblogs FROM follows f WHERE f.account_id = ${v} AND f.target_account_id = ${a}),
        (SELECT r.show_reblogs FROM follow_requests r WHERE r.account_id = ${v} AND r.target_account_id = ${a}), 1)`),
      endorsed: flag(
        sql`EXISTS(SELECT 1 FROM endorsements e WHERE e.account_id = ${v} AND e.target_account_id = ${a})`,
      ),
      // Wrapped like the flags: a top-level template of a select leaves its columns unqualified, and `id` would
      // then be the note's own.
      note: sql<string>`${sql`COALESCE((SELECT n.comment FROM account_notes n WHERE n.account_id = ${v} AND n.target_account_id = ${a}), '')`}`,
    })
    .from(accounts)
    .where(sql`${accounts.id} IN (SELECT value FROM json_each(${JSON.stringify(targetIds)}))`);
}

export function toRelationship(r: RelationshipRow): Relationship {
  const subscribing = Boolean(r.subscribing);
  const following = Boolean(r.following);
  return {
    id: r.id,
    following,
    followed_by: Boolean(r.followed_by),
    blocking: Boolean(r.blocking),
    blocked_by: Boolean(r.blocked_by),
    muting: Boolean(r.muting),
    muting_notifications: Boolean(r.muting_notifications),
    subscribing,
    notifying: subscribing,
    requested: !following && Boolean(r.requested),
    domain_blocking: Boolean(r.domain_blocking),
    showing_reblogs: Boolean(r.showing_reblogs),
    endorsed: Boolean(r.endorsed),
    note: r.note ?? "",
  };
}

/** Relationships keyed by target id. */
export async function loadRelationships(
  d: DB,
  viewerId: string,
  targetIds: string[],
): Promise<Map<string, Relationship>> {
  if (targetIds.length === 0) return new Map();
  const rows = await relationshipsQuery(d, viewerId, targetIds);
  return new Map(rows.map((r) => [r.id, toRelationship(r)]));
}
