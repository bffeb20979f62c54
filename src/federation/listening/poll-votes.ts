/**
 * Inbound poll votes (rules: services/remote-polls.ts): a `Create` of a vote-shaped object (documents/polls.ts,
 * `voteShape`) in a local poll, counted when it is its sender's own.
 */
import { Note, Object as APObject } from "@fedify/vocab";
import type { DB } from "../../db/client";
import { isLocalPoll, receiveVote, type InboundVote } from "../../services/remote-polls";
import type { AccountRow } from "../../services/accounts";

/**
 * A vote embedded in a `Create` by `from`: taken only as the sender's own (attributed to it, or unattributed, and
 * with an id on its origin when it has one). Answers whether it was a vote (handled: counted, or refused and
 * logged); false leaves a `Note` to the ordinary path. An `Answer` that is not a vote here is dropped.
 */
export async function receiveVoteActivity(
  d: DB,
  from: AccountRow,
  object: APObject,
  ballot: InboundVote,
): Promise<boolean> {
  const origin = new URL(from.uri).origin;
  const mine =
    (object.attributionId === null || object.attributionId.href === from.uri) &&
    (object.id === null || object.id.origin === origin);
  // A vote is only ever its voter's: one in a local poll attributed to anyone else is dropped; another Note
  // someone else wrote goes the ordinary way (fetched from its id).
  if (!mine && (await isLocalPoll(d, ballot.questionUri))) {
    console.warn("inbox: vote not attributed to its sender dropped", { from: from.uri, inReplyTo: ballot.questionUri });
    return true;
  }
  const outcome = mine ? await receiveVote(d, from, ballot) : ({ kind: "not-a-poll" } as const);
  if (outcome.kind !== "not-a-poll") return true;
  if (object instanceof Note) return false;
  console.warn("inbox: Answer dropped (not the sender's, or to no local poll)", {
    from: from.uri,
    inReplyTo: ballot.questionUri,
  });
  return true;
}
