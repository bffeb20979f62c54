/**
 * What the database keeps (issue 35). An instance is one D1 database (500 MB on Workers Free), so remote content
 * nobody here cares about goes, as Akkoma's `remote_post_retention_days` and Mastodon's `statuses remove` do:
 * - remote statuses stored (and last boosted) more than `remote_post_retention_days` (30 by default) ago that no
 *   local account favourited, reblogged, bookmarked, reacted to, replied to, was addressed or mentioned in (direct
 *   conversations included), voted in or reported, that answer no local status, and that are not pinned, are
 *   deleted with everything hanging on them (`deleteStatuses`: home-feed
 *   rows, search rows, notifications, reblogs of them). A remote account's boost of a local status stays (it is a
 *   count on our post). Local content is never touched;
 * - notifications older than `notification_retention_days` (180) go.
 * Each run is bounded (rows examined and deleted), walks statuses in id (time) order from a cursor kept in
 * `instance_keys`, and reports what it removed; a run cut short leaves nothing half-deleted (each deletion is one
 * batch) and the next run goes on from the cursor. Caught up, the walk waits for something new to look at (or a
 * week), so an idle instance does not walk what it keeps again and again.
 */
import { sql } from "drizzle-orm";
import { statement, type DB } from "../db/client";
import { idFloor } from "../db/ids";
import { deleteStatuses } from "./statuses";

const DAY = 24 * 3600 * 1000;
/** Statuses looked at per run (rows read stay bounded: the cron runs every minute). */
export const EXAMINE_PER_RUN = 1000;
/** Statuses deleted per run at most (each run's deletion is one batch). */
export const DELETE_PER_RUN = 200;
/** Notifications deleted per run at most. */
const NOTIFICATIONS_PER_RUN = 2000;
const CURSOR = "retention:statuses_cursor";

/**
 * A local account did something with the remote status `s`, or it concerns one, or it came here (or was boosted)
 * recently: kept. (`floor`: the id of the retention's start; a boost's id is when it arrived.)
 */
const kept = (floor: string, since: number) => sql`(s.pinned_at IS NOT NULL
  OR coalesce(s.stored_at, s.created_at) >= ${since}
  OR EXISTS (SELECT 1 FROM statuses r WHERE r.reblog_of_id = s.id AND (r.local = 1 OR r.id >= ${floor}))
  OR EXISTS (SELECT 1 FROM statuses p WHERE p.id = s.in_reply_to_id AND p.local = 1)
  OR EXISTS (SELECT 1 FROM reports rp, json_each(rp.status_ids) rs WHERE rs.value = s.id)
  OR EXISTS (SELECT 1 FROM statuses r WHERE r.in_reply_to_id = s.id AND r.local = 1)
  OR EXISTS (SELECT 1 FROM favourites f JOIN accounts fa ON fa.id = f.account_id AND fa.domain IS NULL WHERE f.status_id = s.id)
  OR EXISTS (SELECT 1 FROM bookmarks b WHERE b.status_id = s.id)
  OR EXISTS (SELECT 1 FROM emoji_reactions e JOIN accounts ea ON ea.id = e.account_id AND ea.domain IS NULL WHERE e.status_id = s.id)
  OR EXISTS (SELECT 1 FROM status_recipients sr JOIN accounts ra ON ra.id = sr.account_id AND ra.domain IS NULL WHERE sr.status_id = s.id)
  OR EXISTS (SELECT 1 FROM polls p JOIN poll_votes pv ON pv.poll_id = p.id JOIN accounts va ON va.id = pv.account_id AND va.domain IS NULL WHERE p.status_id = s.id)
  OR EXISTS (SELECT 1 FROM statuses o WHERE o.id = s.reblog_of_id AND o.local = 1))`;

export interface PruneReport {
  examined: number;
  removed: number;
}

/**
 * Where the walk is: `after`, the last status looked at; `caughtUp` once it reached the retention floor (until
 * there is something new to look at); and, of the last full pass, the highest `rowid` of statuses when it
 * started (`seen`) and when (`at`). Kept as JSON in `instance_keys` (an older plain cursor reads as `after`).
 */
interface WalkState {
  after: string;
  caughtUp?: boolean;
  seen?: number;
  at?: number;
}

function readState(value: string | undefined): WalkState {
  if (!value) return { after: "" };
  try {
    const s = JSON.parse(value) as WalkState;
    if (s && typeof s === "object" && typeof s.after === "string") return s;
  } catch {
    // A cursor kept before the state was.
  }
  return { after: value };
}

/** A full pass over what is kept anyway is made again at least this often (an interaction undone, a boost aged). */
const REWALK_MS = 7 * DAY;

/**
 * One bounded step of deleting old remote statuses nobody here interacted with. The walk goes through every
 * status older than the retention, a bounded step an hour, and then waits at the floor: when statuses grow old
 * it goes on from where it stopped (only they are looked at); when statuses were stored since the last full pass
 * began (its highest rowid moved: they may be old ones, fetched lately), or a week after it, it starts over. An
 * idle instance thus reads three rows an hour here, not everything it keeps, again and again.
 */
export async function pruneRemoteStatuses(d: DB, t: number, days: number): Promise<PruneReport> {
  if (days <= 0) return { examined: 0, removed: 0 };
  const floor = idFloor(t - days * DAY);
  let state = readState(
    (await d.get<{ value: string }>(sql`SELECT value FROM instance_keys WHERE name = ${CURSOR}`))?.value,
  );
  if (state.caughtUp || state.seen === undefined) {
    const seen = (await d.get<{ n: number | null }>(sql`SELECT max(rowid) AS n FROM statuses`))?.n ?? 0;
    if (state.seen === undefined || seen !== state.seen || Math.abs(t - (state.at ?? 0)) >= REWALK_MS)
      state = { after: "", seen, at: t };
    else if (await d.get(sql`SELECT 1 FROM statuses WHERE id > ${state.after} AND id < ${floor} LIMIT 1`))
      state = { ...state, caughtUp: false };
    else return { examined: 0, removed: 0 };
  }
  // The statuses after the cursor and older than the retention, oldest first; which of them may go is decided by
  // the same statement, so what it answers is exactly what was looked at.
  const since = t - days * DAY;
  const rows = await d.all<{ id: string; prunable: number }>(
    sql`SELECT s.id, (s.local = 0 AND NOT ${kept(floor, since)}) AS prunable FROM statuses s
      WHERE s.id > ${state.after} AND s.id < ${floor} ORDER BY s.id LIMIT ${EXAMINE_PER_RUN}`,
  );
  const prunable = rows.filter((r) => r.prunable).map((r) => r.id);
  const chosen = prunable.slice(0, DELETE_PER_RUN);
  // Where the next run starts: after the last status looked at, or after the last one deleted when the deletion
  // cap cut this run short. Caught up once the walk reached the retention floor.
  const cut = chosen.length < prunable.length;
  const last = cut ? chosen[chosen.length - 1]! : (rows[rows.length - 1]?.id ?? state.after);
  const caughtUp = rows.length < EXAMINE_PER_RUN && !cut;
  const value = JSON.stringify({ ...state, after: last, caughtUp });
  const advance = sql`INSERT INTO instance_keys (name, value, created_at) VALUES (${CURSOR}, ${value}, ${t})
    ON CONFLICT (name) DO UPDATE SET value = excluded.value`;
  if (!chosen.length) {
    await d.run(advance);
    return { examined: rows.length, removed: 0 };
  }
  // One batch: the deletion and the cursor past it. No Delete is federated: the statuses are their servers'. Its
  // first statement looks again, inside the transaction: if someone here interacted with one of them since the
  // look above (a boost, a favourite), it fails (`json` of a non-JSON string) and nothing is deleted this run.
  const guard = statement(
    d,
    sql`SELECT CASE WHEN EXISTS (SELECT 1 FROM statuses s WHERE s.id IN (SELECT value FROM json_each(${JSON.stringify(chosen)}))
      AND ${kept(floor, since)}) THEN json('retention: a status to delete was interacted with meanwhile') END`,
  );
  try {
    const { deleted } = await deleteStatuses(d, chosen, { silent: true, extra: [statement(d, advance)], guard });
    return { examined: rows.length, removed: deleted.length };
  } catch (e) {
    if (String(e).includes("malformed JSON")) return { examined: rows.length, removed: 0 };
    throw e;
  }
}

/** One bounded step of deleting notifications older than the retention. */
export async function pruneNotifications(d: DB, t: number, days: number): Promise<{ removed: number }> {
  if (days <= 0) return { removed: 0 };
  // Notification ids are the time in ms times 1000 (db/ids.ts `seqIds`), 16 digits: the primary key walks them.
  const before = String((t - days * DAY) * 1000).padStart(16, "0");
  const { meta } = await d.run(
    sql`DELETE FROM notifications WHERE id IN (SELECT id FROM notifications WHERE id < ${before} ORDER BY id LIMIT ${NOTIFICATIONS_PER_RUN})`,
  );
  return { removed: meta.changes ?? 0 };
}
