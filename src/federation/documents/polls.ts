/**
 * Poll votes and tallies as ActivityStreams (rules: services/remote-polls.ts).
 * - Out, a vote in a remote poll: Mastodon's `ActivityPub::VoteSerializer`, a `Create` of a `Note` with the
 *   option's title as `name`, `inReplyTo` the Question, `attributedTo` the voter, `to` the poll's author and no
 *   content; ids `<voter>#votes/<vote id>` and `…/activity`. One per choice, to the author's own inbox.
 * - Out, new tallies of a local poll: `Update` of the `Question` (the same document as served), id
 *   `<status uri>#updates/<outbox row id>` so each is a new activity to the receivers' de-duplication.
 * - In: a `Note` with a `name`, no content and an `inReplyTo` is a vote (`voteShape`) when it answers a local poll
 *   (Mastodon, and Pleroma, which turns its `Answer` into a `Note` on the way out); an `Answer` (Fedify has no
 *   class for it: it parses as a plain Object) is taken the same way. Received by listening/poll-votes.ts.
 */
import { Create, Note, Object as APObject, Update } from "@fedify/vocab";
import { sql } from "drizzle-orm";
import { statement, type DB } from "../../db/client";
import type { Hydrated } from "../../services/hydrate";
import type { InboundVote } from "../../services/remote-polls";
import { text } from "./remote-objects";
import { statusObject, type NoteContext } from "./notes";

/** A stored vote as its document needs it. */
export interface VoteDoc {
  id: string;
  accountId: string;
  name: string;
  questionUri: string;
  authorId: string;
  authorUri: string;
}

/** The votes of Vote outbox rows (one statement). */
export async function votesById(d: DB, ids: string[]): Promise<Map<string, VoteDoc>> {
  if (ids.length === 0) return new Map();
  const { results } = await statement(
    d,
    sql`SELECT v.id, v.account_id AS accountId, json_extract(p.options, '$[' || v.choice || ']') AS name, s.uri AS questionUri, a.id AS authorId, a.uri AS authorUri
      FROM poll_votes v JOIN polls p ON p.id = v.poll_id JOIN statuses s ON s.id = p.status_id JOIN accounts a ON a.id = s.account_id
      WHERE v.id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
  ).all<VoteDoc>();
  return new Map(results.map((r) => [r.id, r]));
}

/** The `Create{Note}` of a vote, by its voter (`actorUri`); null when it is not the actor's or has no option. */
export function voteActivity(actorId: string, actorUri: string, v: VoteDoc | undefined): Create | null {
  if (!v || v.accountId !== actorId || typeof v.name !== "string") return null;
  const id = `${actorUri}#votes/${v.id}`;
  const author = new URL(v.authorUri);
  return new Create({
    id: new URL(`${id}/activity`),
    actor: new URL(actorUri),
    to: author,
    object: new Note({
      id: new URL(id),
      name: v.name,
      attribution: new URL(actorUri),
      replyTarget: new URL(v.questionUri),
      to: author,
    }),
  });
}

/** The `Update{Question}` carrying a local poll's current tallies; null when the status is not the actor's poll. */
export function updatePollActivity(
  nc: NoteContext,
  h: Hydrated,
  parentUris: Map<string, string>,
  outboxId: string,
  actorId: string,
  actorUri: string,
  statusId: string,
  recipients?: string[],
): Update | null {
  const s = h.statuses.get(statusId);
  if (s?.accountId !== actorId || !h.polls.has(statusId)) return null;
  const object = statusObject(nc, h, parentUris, statusId, recipients);
  if (!object) return null;
  return new Update({
    id: new URL(`${s.uri}#updates/${outboxId}`),
    actor: new URL(actorUri),
    tos: object.toIds,
    ccs: object.ccIds,
    object,
  });
}

/**
 * The vote an embedded object would be: a `Note` or an untyped-to-Fedify object (`Answer`) with a `name`, an
 * `inReplyTo` and no content. Null for anything else (an ordinary note).
 */
export function voteShape(object: APObject | null): InboundVote | null {
  if (!object || !(object instanceof Note || object.constructor === APObject)) return null;
  const name = text(object.name).trim();
  const questionUri = object.replyTargetId?.href;
  if (!name || !questionUri || text(object.content).trim() !== "") return null;
  return { questionUri, name };
}
