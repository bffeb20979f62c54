/**
 * Polls across servers (issue 18), as Mastodon does them:
 * - a vote by a local account in a REMOTE poll is stored here (so `voted`/`own_votes` show) and sent as one
 *   `Create{Note}` per choice to the poll's author (outbox variant `Vote`, federation/documents/polls.ts); the poll's
 *   tallies, which are its server's, get our vote added until the server's next `Update{Question}` replaces them;
 * - a vote by a remote account in a LOCAL poll (`receiveVote`) is validated as a local vote is and stored, and the
 *   new tallies go out as `Update{Question}` (outbox variant `UpdatePoll`) to the poll's audience and its voters;
 *   so does the final count when the poll ends (services/notifications.ts `closeEndedPolls`);
 * - a remote poll's tallies are its server's: `replies.totalItems` per option and `votersCount`, read when the
 *   Question arrives and again from each `Update` by its author (`updateRemoteTallies`).
 */
import { sql } from "drizzle-orm";
import { statement, type DB } from "../db/client";
import { newId } from "../db/ids";
import type { AccountRow } from "./accounts";
import type { ParsedNote } from "./remote-statuses";
import { outboxWrite } from "./outbox";
import { visibleTo } from "./visibility";

/**
 * Statements adding a local account's new vote (`voteIds` of `choices`, written by the same batch) to a remote
 * poll's tallies: only when the first vote row is really there (a repeated vote writes no row, so adds nothing).
 */
export function countOwnVote(d: DB, pollId: string, choices: number[], firstVoteId: string): D1PreparedStatement {
  const paths = choices.map(
    (c) =>
      sql`, '$[${sql.raw(String(Math.trunc(c)))}]', coalesce(json_extract(remote_tallies, '$[${sql.raw(String(Math.trunc(c)))}]'), 0) + 1`,
  );
  return statement(
    d,
    sql`UPDATE polls SET remote_tallies = json_set(remote_tallies${sql.join(paths, sql``)}), remote_voters = coalesce(remote_voters, 0) + 1
      WHERE id = ${pollId} AND remote_tallies IS NOT NULL AND EXISTS (SELECT 1 FROM poll_votes WHERE id = ${firstVoteId})`,
  );
}

/**
 * The tallies of a remote poll from an `Update{Question}` (or a refetch) by its author: counts, voters and end.
 * Only when the options are the same (a changed poll is an edit, not a count). Answers whether a poll changed.
 */
export async function updateRemoteTallies(d: DB, author: AccountRow, note: ParsedNote): Promise<boolean> {
  const poll = note.poll;
  if (!poll) return false;
  const r = await statement(
    d,
    sql`UPDATE polls SET remote_tallies = ${JSON.stringify(poll.tallies)}, remote_voters = ${poll.voters}, expires_at = ${poll.expiresAt}
      WHERE status_id = (SELECT id FROM statuses WHERE uri = ${note.uri} AND account_id = ${author.id} AND local = 0)
        AND options = ${JSON.stringify(poll.options)}`,
  ).run();
  return r.meta.changes > 0;
}

/** A vote as it arrives: the voter's Note (or Pleroma's Answer) naming an option, in reply to the Question. */
export interface InboundVote {
  /** The Question's id (the object's `inReplyTo`). */
  questionUri: string;
  /** The option chosen, by its title (`name`). */
  name: string;
}

export type VoteOutcome =
  /** Not a vote in a local poll: the caller goes on (a Note with a `name` may be an ordinary reply). */
  | { kind: "not-a-poll" }
  /** A vote in a local poll that was refused (the reason is logged), or repeated: nothing changed. */
  | { kind: "refused"; reason: string }
  | { kind: "counted"; statusId: string };

/**
 * A remote account's vote in a local poll, checked as a local vote is: the voter may see the status (the one
 * visibility rule; local-only statuses never federate), is not its author, the poll is open, the option exists,
 * one choice unless the poll allows several, never the same choice twice nor a second vote in a single-choice
 * poll (Mastodon sends one activity per choice of a multiple-choice poll). A counted vote writes the
 * `Update{Question}` of the new tallies in the same batch, unless the poll hides its totals until the end or an
 * earlier one is still waiting to be built (it is built from the rows, so it will carry this vote too).
 */
export async function receiveVote(
  d: DB,
  voter: AccountRow,
  vote: InboundVote,
  t: number = Date.now(),
): Promise<VoteOutcome> {
  const row = await statement(
    d,
    sql`SELECT p.id, p.options, p.multiple, p.hide_totals AS hideTotals, p.expires_at AS expiresAt, statuses.id AS statusId, statuses.account_id AS authorId,
        (${visibleTo(voter.id)} AND statuses.visibility <> 'local') AS visible
      FROM statuses JOIN polls p ON p.status_id = statuses.id
      WHERE statuses.uri = ${vote.questionUri} AND statuses.local = 1 AND statuses.reblog_of_id IS NULL`,
  )
    .first<{
      id: string;
      options: string;
      multiple: number;
      hideTotals: number;
      expiresAt: number | null;
      statusId: string;
      authorId: string;
      visible: number;
    }>()
    .catch(() => null);
  if (!row) return { kind: "not-a-poll" };
  const refused = (reason: string): VoteOutcome => {
    console.warn("inbox: vote refused", { voter: voter.uri, poll: vote.questionUri, reason });
    return { kind: "refused", reason };
  };
  if (!row.visible) return refused("the voter may not see the poll");
  if (row.authorId === voter.id) return refused("the poll's author");
  if (row.expiresAt !== null && row.expiresAt <= t) return refused("the poll is closed");
  const choice = (JSON.parse(row.options) as string[]).indexOf(vote.name);
  if (choice < 0) return refused("no such option");
  const id = newId(t);
  // Several choices only in a multiple-choice poll, each once (the unique index); one vote in the others.
  const once = row.multiple
    ? sql`NOT EXISTS (SELECT 1 FROM poll_votes WHERE poll_id = ${row.id} AND account_id = ${voter.id} AND choice = ${choice})`
    : sql`NOT EXISTS (SELECT 1 FROM poll_votes WHERE poll_id = ${row.id} AND account_id = ${voter.id})`;
  const counted = sql`EXISTS (SELECT 1 FROM poll_votes WHERE id = ${id})`;
  const update = { type: "UpdatePoll" as const, statusId: row.statusId };
  const waiting = sql`EXISTS (SELECT 1 FROM federation_outbox WHERE expanded_at IS NULL AND account_id = ${row.authorId} AND activity = ${JSON.stringify(update)})`;
  const [insert] = await d.$client.batch([
    statement(
      d,
      sql`INSERT OR IGNORE INTO poll_votes (id, poll_id, account_id, choice, created_at) SELECT ${id}, ${row.id}, ${voter.id}, ${choice}, ${t} WHERE ${once}`,
    ),
    outboxWrite(d, row.authorId, update, t, {
      onlyIf: sql`${counted} AND ${row.hideTotals ? sql`0` : sql`1`} AND NOT ${waiting}`,
    }),
  ]);
  if (!insert!.meta.changes) return refused("already voted");
  return { kind: "counted", statusId: row.statusId };
}

/** Whether `uri` is a local status with a poll. */
export async function isLocalPoll(d: DB, uri: string): Promise<boolean> {
  return !!(await statement(
    d,
    sql`SELECT 1 AS x FROM statuses s JOIN polls p ON p.status_id = s.id WHERE s.uri = ${uri} AND s.local = 1`,
  ).first());
}

/**
 * Whether an `Update` of a remote Question is an edit (as Mastodon tells them apart): its `updated` is later than
 * the stored edit. Otherwise it only carries new tallies (Mastodon sends one after votes, without `updated`).
 */
export async function isEditOf(d: DB, uri: string, updated: number | null): Promise<boolean> {
  if (updated === null) return false;
  const row = await statement(d, sql`SELECT edited_at AS editedAt FROM statuses WHERE uri = ${uri}`).first<{
    editedAt: number | null;
  }>();
  return !!row && (row.editedAt === null || updated > row.editedAt);
}
