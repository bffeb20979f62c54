/**
 * Mastodon 4.3's severed relationships (issue 48): when a domain block severs follows of local users (an admin's
 * suspension, `domain_block`; a user's own block, `user_domain_block`), each local user who lost follows or
 * followers gets a `severed_relationships` notification naming the event, can list the events
 * (`/api/v1/severed_relationships`) and download what was lost as CSV (Mastodon's
 * `/severed_relationships/:id/following.csv` and `followers.csv`).
 *
 * Written by `severanceStatements` in the severing batch itself, BEFORE the statements that delete the follows
 * (they read them): one event row per domain that severed something, one row per local user it touched (the lost
 * follows kept in it as JSON arrays, not a row each), and that row's notification (same id). The notification is
 * written as pushed: neither Web Push nor the streams take it (an old client's stream must not meet a type it
 * cannot read), and the v1 listing shows it only when asked for (services/notifications.ts).
 */
import { and, desc, eq, lt, sql, type SQL } from "drizzle-orm";
import { statement, type DB } from "../db/client";
import { newId, seqIds } from "../db/ids";
import { relationshipSeveranceEvents, severedRelationships } from "../db/schema";
import { notFound } from "../lib/errors";

export type SeveranceType = "domain_block" | "user_domain_block" | "account_suspension";

/** A domain whose accounts lose their ties with local users (`*.parent`: the parent and the names under it). */
export interface Severance {
  type: SeveranceType;
  domain: string;
}

export interface SeveranceScope {
  /** Only this local account's ties (a user's own block); else every local account's. */
  localId?: string;
  /** Which ties are severed: the local users' follows of the domain, their followers there, or both. */
  following: boolean;
  followers: boolean;
  /** A condition on `value` (the domain as given) that must hold when the batch runs (the block took). */
  took?: (domain: SQL) => SQL;
}

/** What the severing batch records, before it deletes the follows: the events, the per-user rows, the notices. */
export function severanceStatements(
  d: DB,
  severances: Severance[],
  scope: SeveranceScope,
  t: number,
): D1PreparedStatement[] {
  if (!severances.length) return [];
  const events = JSON.stringify(
    severances.map((s, i) => ({
      id: newId(t + i),
      type: s.type,
      domain: s.domain,
      target: s.domain.replace(/^\*\./, ""),
    })),
  );
  const took = scope.took?.(sql`json_extract(value, '$.domain')`) ?? sql`1`;
  const local = (col: SQL) => (scope.localId ? sql`${col} = ${scope.localId}` : sql`1`);
  const lostSql = sql`ev(id, type, target, domain) AS (SELECT json_extract(value, '$.id'), json_extract(value, '$.type'),
      json_extract(value, '$.target'), json_extract(value, '$.domain') FROM json_each(${events}) WHERE ${took}),
    rem(event_id, remote_id, acct) AS (
      SELECT ev.id, a.id, a.username || '@' || a.domain FROM ev JOIN accounts a ON a.domain = ev.target
      UNION ALL SELECT ev.id, a.id, a.username || '@' || a.domain FROM ev
        JOIN instances i ON ev.domain LIKE '*.%' AND i.domain LIKE '%' || substr(ev.domain, 2)
        JOIN accounts a ON a.domain = i.domain),
    lost(event_id, local_id, dir, item) AS (
      SELECT r.event_id, f.account_id, 'following',
          json_object('acct', r.acct, 'show_reblogs', f.show_reblogs, 'notify', f.notify)
        FROM rem r JOIN follows f ON f.target_account_id = r.remote_id JOIN users u ON u.account_id = f.account_id
        WHERE ${scope.following ? local(sql`f.account_id`) : sql`0`}
      UNION ALL SELECT r.event_id, f.target_account_id, 'followers', json_quote(r.acct)
        FROM rem r JOIN follows f ON f.account_id = r.remote_id JOIN users u ON u.account_id = f.target_account_id
        WHERE ${scope.followers ? local(sql`f.target_account_id`) : sql`0`})`;
  return [
    statement(
      d,
      sql`WITH ${lostSql} INSERT INTO relationship_severance_events (id, type, target_name, purged, created_at)
        SELECT id, type, target, 0, ${t} FROM ev WHERE EXISTS (SELECT 1 FROM lost WHERE lost.event_id = ev.id)`,
    ),
    statement(
      d,
      sql`WITH ${lostSql} INSERT INTO severed_relationships (id, account_id, event_id, followers_count, following_count, followers, following, created_at)
        SELECT ${seqIds("notifications", t)}, local_id, event_id,
          count(*) FILTER (WHERE dir = 'followers'), count(*) FILTER (WHERE dir = 'following'),
          json_group_array(json(item)) FILTER (WHERE dir = 'followers'),
          json_group_array(json(item)) FILTER (WHERE dir = 'following'), ${t}
        FROM lost GROUP BY event_id, local_id`,
    ),
    statement(
      d,
      sql`INSERT INTO notifications (id, account_id, from_account_id, type, is_seen, pushed, filtered, created_at)
        SELECT s.id, s.account_id, s.account_id, 'severed_relationships', 0, 1, 0, ${t} FROM severed_relationships s
        WHERE s.event_id IN (SELECT json_extract(value, '$.id') FROM json_each(${events}))`,
    ),
  ];
}

/** A user's severance event as Mastodon's `RelationshipSeveranceEvent` holds it. */
export interface SeveranceEvent {
  id: string;
  type: SeveranceType;
  purged: boolean;
  targetName: string;
  followersCount: number;
  followingCount: number;
  createdAt: number;
}

const eventColumns = {
  id: severedRelationships.id,
  type: relationshipSeveranceEvents.type,
  purged: relationshipSeveranceEvents.purged,
  targetName: relationshipSeveranceEvents.targetName,
  followersCount: severedRelationships.followersCount,
  followingCount: severedRelationships.followingCount,
  createdAt: severedRelationships.createdAt,
};

/** `json_object` of the user's event whose row is `idSql` (a notification's id), for a notification page. */
export const eventJson = (idSql: SQL) =>
  sql`(SELECT json_object('id', s.id, 'type', e.type, 'purged', e.purged, 'targetName', e.target_name,
      'followersCount', s.followers_count, 'followingCount', s.following_count, 'createdAt', s.created_at)
    FROM severed_relationships s JOIN relationship_severance_events e ON e.id = s.event_id WHERE s.id = ${idSql})`;

/** The user's events by id (notifications naming them). */
export async function eventsByIds(d: DB, me: string, ids: string[]): Promise<Map<string, SeveranceEvent>> {
  if (!ids.length) return new Map();
  const rows = await listQuery(d)
    .where(
      and(
        eq(severedRelationships.accountId, me),
        sql`${severedRelationships.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
      ),
    )
    .all();
  return new Map(rows.map((r) => [r.id, r as SeveranceEvent]));
}

const listQuery = (d: DB) =>
  d
    .select(eventColumns)
    .from(severedRelationships)
    .innerJoin(relationshipSeveranceEvents, eq(relationshipSeveranceEvents.id, severedRelationships.eventId));

/** The user's events, newest first (`max_id` paging over the per-user rows' index). */
export async function listEvents(d: DB, me: string, p: { maxId?: string; limit: number }): Promise<SeveranceEvent[]> {
  const rows = await listQuery(d)
    .where(and(eq(severedRelationships.accountId, me), p.maxId ? lt(severedRelationships.id, p.maxId) : undefined))
    .orderBy(desc(severedRelationships.id))
    .limit(p.limit);
  return rows as SeveranceEvent[];
}

/** CSV fields quoted as RFC 4180 wants (a field with a comma, quote or line break). */
const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const csv = (rows: string[][]) => rows.map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n";

/**
 * What the user lost in one event, as Mastodon's CSV (its import format: `following` re-imports as follows):
 * `following` "Account address,Show boosts,Notify on new posts,Languages", `followers` "Account address".
 * 404 for another user's event.
 */
export async function lostCsv(
  d: DB,
  me: string,
  id: string,
  which: "following" | "followers",
): Promise<{ body: string; filename: string }> {
  const row = await d
    .select({
      followers: severedRelationships.followers,
      following: severedRelationships.following,
      target: relationshipSeveranceEvents.targetName,
      createdAt: severedRelationships.createdAt,
    })
    .from(severedRelationships)
    .innerJoin(relationshipSeveranceEvents, eq(relationshipSeveranceEvents.id, severedRelationships.eventId))
    .where(and(eq(severedRelationships.id, id), eq(severedRelationships.accountId, me)))
    .get();
  if (!row) throw notFound();
  const body =
    which === "following"
      ? csv([
          ["Account address", "Show boosts", "Notify on new posts", "Languages"],
          ...(JSON.parse(row.following) as { acct: string; show_reblogs: number; notify: number }[]).map((f) => [
            f.acct,
            String(Boolean(f.show_reblogs)),
            String(Boolean(f.notify)),
            "",
          ]),
        ])
      : csv([["Account address"], ...(JSON.parse(row.followers) as string[]).map((a) => [a])]);
  const day = new Date(row.createdAt).toISOString().slice(0, 10);
  return { body, filename: `${which}-${row.target}-${day}.csv` };
}
