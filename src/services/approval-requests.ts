/**
 * Asking a remote author to approve an interaction (issue 49; GoToSocial's interaction controls, the asking side).
 * A remote post whose `interactionPolicy` restricts replies, likes or boosts (`statuses.interaction_policy`) is
 * judged by the one rule (lib/interaction-approval.ts) when a local user replies to, likes or boosts it:
 * - allowed without asking: sent as always;
 * - to be approved: an `interaction_requests` row and the polite request (`ReplyRequest`, `LikeRequest`,
 *   `AnnounceRequest`, to the author alone) in the action's own batch, instead of the Create, Like or Announce;
 *   the reply or boost is marked `pending` (`statuses.approval`, shown as `pleroma.approval_state`);
 * - nobody may: a boost or a like is refused (422, as Mastodon answers an action it does not allow); a reply is
 *   posted and sent as Mastodon sends it, without approval (servers that enforce the policy drop it; the others
 *   show it), marked `denied` so that its author knows. So is a reply whose own audience leaves the post's author
 *   out (a followers-only one neither mentioning them nor followed by them): a request would show it to them. A
 *   local-only one asks nobody.
 * The author's answer: services/approval-answers.ts.
 */
import { eq, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { newId } from "../db/ids";
import { interactionRequests, statuses, type InteractionKind } from "../db/schema";
import { approvalFor as rule, type Approval } from "../lib/interaction-approval";
import { unprocessable } from "../lib/errors";
import type { AccountRow } from "./accounts";
import type { StatusRow } from "./hydrate";
import { outboxWrite } from "./outbox";

export type InteractionRequestRow = typeof interactionRequests.$inferSelect;

/**
 * How `meId` may do `kind` to `target`, with the user's actor id. No read for a local post or one whose policy
 * does not restrict `kind` (nearly all); else one (the follows both ways, a mention).
 */
export async function approvalOf(
  d: DB,
  meId: string,
  target: StatusRow,
  kind: InteractionKind,
): Promise<{ approval: Approval; uri: string | null; followedBy: boolean }> {
  if (target.local || !target.interactionPolicy?.[kind]) return { approval: "automatic", uri: null, followedBy: false };
  const [facts] = await d.all<{ uri: string; f: number; fb: number; m: number }>(
    sql`SELECT a.uri,
      EXISTS (SELECT 1 FROM follows WHERE account_id = ${meId} AND target_account_id = ${target.accountId}) AS f,
      EXISTS (SELECT 1 FROM follows WHERE account_id = ${target.accountId} AND target_account_id = ${meId}) AS fb,
      EXISTS (SELECT 1 FROM status_recipients WHERE status_id = ${target.id} AND account_id = ${meId} AND mention = 1) AS m
    FROM accounts a WHERE a.id = ${meId}`,
  );
  if (!facts) return { approval: "automatic", uri: null, followedBy: false };
  const asker = { uri: facts.uri, follows: !!facts.f, followedBy: !!facts.fb, mentioned: !!facts.m };
  return { approval: rule(target.interactionPolicy, kind, asker), uri: facts.uri, followedBy: asker.followedBy };
}

/** What asking writes: the request's row, the request to the author (an outbox row), the reply or boost pending. */
function askWrites(
  d: DB,
  r: { kind: InteractionKind; meId: string; meUri: string; target: StatusRow; interactionId: string; uri: string },
  t: number,
  onlyIf?: SQL,
): D1PreparedStatement[] {
  const id = newId(t);
  const requestUri = `${r.meUri}#${r.kind}_requests/${id}`;
  const like = r.kind === "like";
  return [
    statement(
      d,
      sql`INSERT INTO interaction_requests (id, kind, account_id, status_id, target_account_id, interaction_id, interaction_uri, request_uri, state, created_at, updated_at)
        SELECT ${id}, ${r.kind}, ${r.meId}, ${r.target.id}, ${r.target.accountId}, ${r.interactionId}, ${r.uri}, ${requestUri}, 'pending', ${t}, ${t}
        WHERE ${onlyIf ?? sql`1`} ON CONFLICT DO NOTHING`,
    ),
    outboxWrite(
      d,
      r.meId,
      {
        type: "InteractionRequest",
        kind: r.kind,
        uri: requestUri,
        objectUri: r.target.uri,
        targetId: r.target.accountId,
        statusId: like ? null : r.interactionId,
        likeUri: like ? r.uri : null,
      },
      t,
      onlyIf ? { onlyIf } : {},
    ),
    ...(like ? [] : [markApproval(d, r.interactionId, "pending")]),
  ];
}

/** A reply its author's server has not approved (or refused): its audience never got it, so nor do its edits. */
export const unsent = (s: Pick<StatusRow, "approval">) => s.approval === "pending" || s.approval === "rejected";

export const markApproval = (d: DB, id: string, state: NonNullable<StatusRow["approval"]>) =>
  statement(d, d.update(statuses).set({ approval: state }).where(eq(statuses.id, id)));

/**
 * A new local post's federation (services/statuses.ts `writePost`): its Create, or, for a reply the parent's
 * policy makes ask first, the request instead. Marks `s.approval` for the answer rendered from it.
 */
export async function createOrAsk(
  d: DB,
  p: { status: StatusRow; parent: StatusRow | null; recipients: { accountId: string; mention: boolean }[] },
  t: number,
): Promise<D1PreparedStatement[]> {
  const s = p.status;
  const create = [outboxWrite(d, s.accountId, { type: "Create", statusId: s.id }, t)];
  if (!s.local || !p.parent || s.visibility === "local") return create;
  const { approval, uri, followedBy } = await approvalOf(d, s.accountId, p.parent, "reply");
  if (approval === "automatic" || !uri) return create;
  // The request shows the reply to the parent's author: never one its own audience leaves them out of.
  if (approval === "denied" || !reachesAuthor(s, p.parent.accountId, p.recipients, followedBy)) {
    s.approval = "denied";
    return [markApproval(d, s.id, "denied"), ...create];
  }
  s.approval = "pending";
  const ask = { kind: "reply" as const, meId: s.accountId, meUri: uri, target: p.parent, interactionId: s.id };
  return askWrites(d, { ...ask, uri: s.uri }, t);
}

/**
 * Whether a reply is addressed to `authorId` as it goes out (services/addressing.ts): public and unlisted ones to
 * anyone; followers-only ones to those they mention and to followers (`followedBy`: the author follows the
 * replier, so the followers collection reaches them); direct and list ones to their recipients.
 */
function reachesAuthor(
  s: StatusRow,
  authorId: string,
  recipients: { accountId: string; mention: boolean }[],
  followedBy: boolean,
): boolean {
  if (s.visibility === "public" || s.visibility === "unlisted") return true;
  const r = recipients.find((x) => x.accountId === authorId);
  if (s.visibility === "private") return followedBy || r?.mention === true;
  return (s.visibility === "direct" || s.visibility === "list") && r !== undefined;
}

/** A new reblog's federation: its Announce, the request instead, or 422 where the policy lets nobody boost. */
export async function announceOrAsk(
  d: DB,
  me: AccountRow,
  target: StatusRow,
  reblog: { id: string; uri: string; visibility: string },
  t: number,
): Promise<D1PreparedStatement[]> {
  const announce = [outboxWrite(d, me.id, { type: "Announce", statusId: reblog.id }, t)];
  const { approval } = await approvalOf(d, me.id, target, "announce");
  if (approval === "denied") throw unprocessable("Validation failed: The author does not allow boosting this post");
  // Only a public or unlisted reblog is announced: the others ask nobody either.
  if (approval === "automatic" || (reblog.visibility !== "public" && reblog.visibility !== "unlisted")) return announce;
  const ask = { kind: "announce" as const, meId: me.id, meUri: me.uri, target, interactionId: reblog.id };
  return askWrites(d, { ...ask, uri: reblog.uri }, t);
}

/** A new favourite's federation (written only if `made`): its Like, the request instead, or 422. */
export async function likeOrAsk(
  d: DB,
  me: AccountRow,
  target: StatusRow,
  like: { id: string; uri: string },
  t: number,
  made: SQL,
): Promise<D1PreparedStatement[]> {
  const plain = [
    outboxWrite(d, me.id, { type: "Like", uri: like.uri, objectUri: target.uri, targetId: target.accountId }, t, {
      onlyIf: made,
    }),
  ];
  const { approval } = await approvalOf(d, me.id, target, "like");
  if (approval === "denied") throw unprocessable("Validation failed: The author does not allow liking this post");
  if (approval === "automatic") return plain;
  const ask = { kind: "like" as const, meId: me.id, meUri: me.uri, target, interactionId: like.id };
  return askWrites(d, { ...ask, uri: like.uri }, t, made);
}
