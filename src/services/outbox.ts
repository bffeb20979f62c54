/**
 * The transactional outbox: what a local account sends to other servers is written as a `federation_outbox` row
 * in the **same D1 batch** as the action, so an action is never stored without its delivery nor delivered without
 * being stored. Rows describe the activity (`OutboxActivity`); building the ActivityStreams document, choosing
 * the inboxes and delivering happen later, off the request path (src/federation/delivery/).
 *
 * The insert is conditional, decided by SQL inside the batch: a row is written only when the activity has a
 * remote audience (services/audience.ts, the same rule the expansion sends by), so an island instance writes
 * nothing; and delivery is woken when a batch wrote one, whatever the action (db/outbox-signal.ts).
 */
import { sql, type SQL } from "drizzle-orm";
import { newId } from "../db/ids";
import { statement, type DB } from "../db/client";
import { markOutboxWrite, takeOutboxQueued } from "../db/outbox-signal";
import { hasAudience } from "./audience";
import type { OutboxActivity } from "./outbox-activity";
import type { Effects } from "./effects";

export type { OutboxActivity } from "./outbox-activity";

/** Activities sent as the instance actor (its id, its key) whichever local account's action wrote them. */
export const SIGNED_BY_INSTANCE: ReadonlySet<OutboxActivity["type"]> = new Set([
  "Flag",
  "RelayFollow",
  "RelayUndo",
  "RelayAccept",
]);

/** A delivery is given up once its next try would fall later than this after it was written (federation/delivery/deliver.ts). */
export const GIVE_UP_MS = 2 * 24 * 3600_000;

export interface OutboxWriteOptions {
  /** A further condition (e.g. "the request was really created"), evaluated in the batch. */
  onlyIf?: SQL;
  /**
   * The activity's `uri` read by the batch itself (e.g. the Follow's id of a row the same batch deletes; put the
   * write before the delete): no row is written when it reads NULL.
   */
  uriFrom?: SQL;
}

/**
 * The insert of an outbox row, to put in the action's batch (a D1 statement: it joins drizzle and raw batches).
 * Nothing is written when the activity has no remote audience.
 */
export function outboxWrite(
  d: DB,
  accountId: string,
  activity: OutboxActivity,
  t: number,
  opts: OutboxWriteOptions = {},
): D1PreparedStatement {
  const json = JSON.stringify(activity);
  const value = opts.uriFrom ? sql`json_set(${json}, '$.uri', (${opts.uriFrom}))` : sql`${json}`;
  const conditions = [
    hasAudience(accountId, activity),
    ...(opts.onlyIf ? [opts.onlyIf] : []),
    ...(opts.uriFrom ? [sql`(${opts.uriFrom}) IS NOT NULL`] : []),
  ];
  const write = statement(
    d,
    sql`INSERT INTO federation_outbox (id, account_id, activity, created_at) SELECT ${newId(t)}, ${accountId}, ${value}, ${t} WHERE ${sql.join(conditions, sql` AND `)}`,
  );
  // Whichever batch sends it, a row written wakes delivery through the effects door (db/outbox-signal.ts).
  return markOutboxWrite(d.$client, write);
}

/**
 * A Reject of each Follow in `follows` (a SELECT of `account_id`, `uri`: the follower and its Follow's id), in
 * one statement however many there are (a domain block may end thousands), each row gated as `outboxWrite`
 * gates one and given its own id (this moment's, numbered). Put it before the deletes of those rows.
 */
export function outboxRejects(d: DB, accountId: string, follows: SQL, t: number): D1PreparedStatement {
  // The gate's rule for a Reject (`one(followerId)`), applied to each row's follower.
  const follower = sql`r.account_id` as unknown as string;
  const gate = hasAudience(accountId, { type: "Reject", uri: "", followerId: follower });
  return outboxEach(
    d,
    accountId,
    follows,
    sql`json_object('type', 'Reject', 'uri', r.uri, 'followerId', r.account_id)`,
    gate,
    t,
  );
}

/**
 * An Undo of each of `accountId`'s own Follows in `follows` (a SELECT of `target_account_id`, `uri`: the followed
 * account and the Follow's id), as `outboxRejects` writes Rejects: one statement, before the deletes of the rows.
 */
export function outboxUndoFollows(d: DB, accountId: string, follows: SQL, t: number): D1PreparedStatement {
  const target = sql`r.target_account_id` as unknown as string;
  const gate = hasAudience(accountId, { type: "Undo", object: "Follow", uri: "", targetId: target });
  const activity = sql`json_object('type', 'Undo', 'object', 'Follow', 'uri', r.uri, 'targetId', r.target_account_id)`;
  return outboxEach(d, accountId, follows, activity, gate, t);
}

/** One outbox row per row `r` of `rows` that has a `uri` and passes `gate`: `activity` built from it. */
function outboxEach(d: DB, accountId: string, rows: SQL, activity: SQL, gate: SQL, t: number): D1PreparedStatement {
  const write = statement(
    d,
    sql`INSERT INTO federation_outbox (id, account_id, activity, created_at)
      SELECT ${newId(t).slice(0, 16)} || printf('%010d', row_number() OVER ()), ${accountId}, ${activity}, ${t}
      FROM (${rows}) r WHERE r.uri IS NOT NULL AND ${gate}`,
  );
  return markOutboxWrite(d.$client, write);
}

/**
 * What follows from the outbox rows queued on this database, for an answer that crosses isolates (a Durable
 * Object's to the Worker that called it), where the door that runs the effects cannot see the mark itself.
 */
export function outboxEffects(binding: D1Database): Effects {
  return takeOutboxQueued(binding) ? { federate: true } : {};
}
