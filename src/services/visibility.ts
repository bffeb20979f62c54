/**
 * Who may see a status: the one rule every read uses (GET, context, multi-get, lists of statuses, timelines).
 * - `public`, `unlisted`: everyone; `local`: signed-in users of this instance (every viewer here is local);
 * - `private`: the author, followers, and addressed accounts; `direct` and `list`: the author and the addressed
 *   (a list status addresses the list's members when posted);
 * - never a viewer the author blocks;
 * - never anyone while the author's account is deactivated (its statuses go wherever its profile goes: 404).
 * Reblogs carry the visibility of the status they reblog (so a reblog of a deactivated account's status is hidden
 * too; the callers check the original with this same rule).
 */
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { statuses } from "../db/schema";

/**
 * Inside big statements (hydration, timeline pages) the viewer and the time are bound once, in a `params` CTE
 * (`WITH params(me, now) AS (SELECT ?, ?)`), and referred to everywhere: the SQL text stays the same for every
 * viewer, so D1 reuses the prepared statement, and the statement stays far below D1's 100 bound parameters.
 */
export const ME = sql`(SELECT me FROM params)`;
export const NOW = sql`(SELECT now FROM params)`;
export function paramsCte(viewer: string | null | { tokenHash: string }) {
  const t = Date.now();
  // A viewer known only by token: the statement reads the account from the token itself (one round trip).
  const me =
    viewer !== null && typeof viewer === "object"
      ? sql`(SELECT account_id FROM tokens WHERE token_hash = ${viewer.tokenHash} AND expires_at > ${t})`
      : sql`${viewer ?? ""}`;
  return sql`params(me, now) AS NOT MATERIALIZED (SELECT ${me}, ${t})`;
}

/** A viewer as a statement refers to it: a bound id in small queries, or `ME` inside a `params` statement. */
export type ViewerRef = string | SQL;
const v = (viewer: ViewerRef) => (typeof viewer === "string" ? sql`${viewer}` : viewer);
const nowOf = (viewer: ViewerRef) => (typeof viewer === "string" ? sql`${Date.now()}` : NOW);

/** SQL condition on `statuses` (the table itself, not an alias) for `viewerId` (null: anonymous). */
export function visibleTo(
  viewerId: ViewerRef | null,
  s: {
    id: SQL | typeof statuses.id;
    accountId: SQL | typeof statuses.accountId;
    visibility: SQL | typeof statuses.visibility;
  } = statuses,
): SQL {
  // Looked up among the deactivated accounts only (a partial index): an active author, nearly every one, is not
  // found there, which costs no row, where the primary key would find it, a row read per status.
  const active = sql`NOT EXISTS (SELECT 1 FROM accounts vd INDEXED BY accounts_deactivated WHERE vd.id = ${s.accountId} AND vd.deactivated = 1)`;
  if (viewerId === null) return sql`(${s.visibility} IN ('public', 'unlisted') AND ${active})`;
  const me = v(viewerId);
  // CASE, not OR: read as a value (hydration's flags) SQLite evaluates every operand of an OR, so a public
  // status's author would be looked up among the viewer's follows anyway (a row read per status).
  return sql`(CASE WHEN ${s.visibility} IN ('public', 'unlisted', 'local') OR ${s.accountId} = ${me} THEN 1
      WHEN ${s.visibility} = 'private' AND EXISTS (SELECT 1 FROM follows vf WHERE vf.account_id = ${me} AND vf.target_account_id = ${s.accountId}) THEN 1
      ELSE EXISTS (SELECT 1 FROM status_recipients vr WHERE vr.status_id = ${s.id} AND vr.account_id = ${me}) END
    AND NOT EXISTS (SELECT 1 FROM blocks vb WHERE vb.account_id = ${s.accountId} AND vb.target_account_id = ${me})
    AND ${active})`;
}

/**
 * What silences an account for a viewer, the one fragment every list that leaves silenced accounts out uses
 * (timelines, context, search, reactions, streams, the directory, notifications). Each caller keeps its rule:
 * - `blocks`: `"viewer"` (the viewer blocks the account) or `"either"` (either blocks the other; notifications,
 *   account search), or `"none"`;
 * - `mutes`: `"any"` live mute, `"notifications"` only a live mute that also hides notifications, or `"none"`;
 *   an expired mute never counts;
 * - `domains`: the account's domain is blocked by the viewer.
 * The condition is true when the account is silenced.
 */
export interface SilenceRules {
  blocks: "viewer" | "either" | "none";
  mutes: "any" | "notifications" | "none";
  domains: boolean;
  /** How the statement refers to the time (defaults: `NOW` for a `ME` viewer, else the time bound now). */
  now?: SQL;
}

export function silenced(viewer: ViewerRef, accountId: SQL | SQLiteColumn, rules: SilenceRules): SQL {
  const me = v(viewer);
  const t = rules.now ?? nowOf(viewer);
  const parts: SQL[] = [];
  if (rules.blocks === "viewer")
    parts.push(
      sql`EXISTS (SELECT 1 FROM blocks sb WHERE sb.account_id = ${me} AND sb.target_account_id = ${accountId})`,
    );
  if (rules.blocks === "either") {
    parts.push(
      sql`EXISTS (SELECT 1 FROM blocks sb WHERE (sb.account_id = ${me} AND sb.target_account_id = ${accountId}) OR (sb.account_id = ${accountId} AND sb.target_account_id = ${me}))`,
    );
  }
  if (rules.mutes !== "none") {
    const only = rules.mutes === "notifications" ? sql`AND sm.hide_notifications = 1 ` : sql``;
    parts.push(
      sql`EXISTS (SELECT 1 FROM mutes sm WHERE sm.account_id = ${me} AND sm.target_account_id = ${accountId} ${only}AND (sm.expires_at IS NULL OR sm.expires_at > ${t}))`,
    );
  }
  // The account's domain is looked up only for a viewer who blocks some domain (a row read per account checked);
  // whether they do is read once per statement where the viewer is bound once.
  if (rules.domains)
    parts.push(
      sql`CASE WHEN EXISTS (SELECT 1 FROM domain_blocks sdv WHERE sdv.account_id = ${me}) THEN EXISTS (SELECT 1 FROM domain_blocks sd JOIN accounts sa ON sa.domain = sd.domain WHERE sd.account_id = ${me} AND sa.id = ${accountId}) ELSE 0 END`,
    );
  return parts.length ? sql`(${sql.join(parts, sql` OR `)})` : sql`0`;
}

/**
 * For lists of statuses (context, timelines, multi-get shown to a user): also leave out authors the viewer blocks
 * or mutes (mutes unless `withMuted`), and authors on domains the viewer blocks.
 */
export function notSilenced(
  viewerId: ViewerRef | null,
  withMuted = false,
  accountId: SQL | SQLiteColumn = statuses.accountId,
): SQL {
  if (viewerId === null) return sql`1`;
  return sql`NOT ${silenced(viewerId, accountId, { blocks: "viewer", mutes: withMuted ? "none" : "any", domains: true })}`;
}

/**
 * `notSilenced` for one viewer over many rows (a page's reactions): the viewer's blocks, live mutes and blocked
 * domains are each read once per statement (uncorrelated lists), and each row costs one probe of each, where
 * `notSilenced` runs three correlated look-ups per row. The same rule as `notSilenced` (`silenced` with
 * blocks "viewer", mutes "any" unless `withMuted`, domains); `domain` is the account's domain, already joined in.
 * Only for a viewer the statement binds once (`ME`): with a column per row the lists would be read per row.
 */
export function notSilencedByLists(viewer: SQL | null, withMuted: boolean, accountId: SQL, domain: SQL): SQL {
  if (viewer === null) return sql`1`;
  const parts: SQL[] = [sql`${accountId} IN (SELECT target_account_id FROM blocks WHERE account_id = ${viewer})`];
  if (!withMuted)
    parts.push(
      sql`${accountId} IN (SELECT target_account_id FROM mutes WHERE account_id = ${viewer} AND (expires_at IS NULL OR expires_at > ${nowOf(viewer)}))`,
    );
  parts.push(
    sql`(${domain} IS NOT NULL AND ${domain} IN (SELECT domain FROM domain_blocks WHERE account_id = ${viewer}))`,
  );
  return sql`NOT (${sql.join(parts, sql` OR `)})`;
}
