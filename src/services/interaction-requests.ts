/**
 * GoToSocial's polite interaction requests, answering side (issue 49; its docs/federation/interaction_controls.md):
 * another server asks before it likes, replies to or boosts a local post (`LikeRequest`, `ReplyRequest`,
 * `AnnounceRequest`, the interaction embedded as `instrument`). Starling's published policy lets everyone who may
 * see a post do all three (federation/documents/interaction-policy.ts), so a request is approved unless the
 * requester may not see the post (the one visibility rule: followers-only to a non-follower, direct to someone not
 * addressed, a local-only post, an author who blocks the requester), the author blocks the requester's domain, or
 * it asks to boost a post that is neither public nor unlisted: then a `Reject`.
 *
 * Approved, the interaction is stored as its plain form is (a favourite, a reply, a reblog: the same services, so
 * the same notification and count) and the `Accept` is an outbox row in that very batch. The authorization the
 * Accept hands over is named after the stored row (`…/like_authorizations/<favourite id>`, `reply_…/<status id>`,
 * `announce_…/<reblog id>`), read by the batch itself, so a request delivered again, or the plain activity sent
 * after it with `approvedBy`, stores nothing twice and is answered with the same authorization. It is served while
 * the interaction stands (undone or deleted: 404).
 */
import { and, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { isId } from "../db/ids";
import { statuses } from "../db/schema";
import type { AccountRow } from "./accounts";
import type { Effects } from "./effects";
import type { StatusRow } from "./hydrate";
import { outboxWrite } from "./outbox";
import type { OutboxActivity, OutboxActivityOf } from "./outbox-activity";
import { visibleTo } from "./visibility";

export type InteractionKind = "like" | "reply" | "announce";
type Answer = OutboxActivityOf<"InteractionAccept">;

const REQUEST: Record<InteractionKind, Answer["request"]> = {
  like: "LikeRequest",
  reply: "ReplyRequest",
  announce: "AnnounceRequest",
};

/** Where each kind's authorizations are served, under the post's author. */
export const AUTHORIZATION_PATHS: Record<InteractionKind, string> = {
  like: "like_authorizations",
  reply: "reply_authorizations",
  announce: "announce_authorizations",
};

/** A polite request as the listener read it: its id, the local post asked about, the interaction's id. */
export interface InteractionRequest {
  kind: InteractionKind;
  uri: string;
  objectUri: string;
  instrument: string;
}

/** The local post a request names, with the author's actor id and whether `from` may do what it asks. */
export interface RequestedPost {
  status: StatusRow;
  authorUri: string;
  allowed: boolean;
}

/**
 * The local post `uri` (not a reblog) and the rule's verdict for `from` (one statement). Null: no such local post
 * (a request for a post not here is answered with nothing, as GoToSocial drops one).
 */
export async function requestedPost(
  d: DB,
  from: AccountRow,
  kind: InteractionKind,
  uri: string,
): Promise<RequestedPost | null> {
  const shareable = kind === "announce" ? sql`${statuses.visibility} IN ('public', 'unlisted')` : sql`1`;
  const row = await d
    .select({
      status: statuses,
      authorUri: sql<string>`(SELECT ra.uri FROM accounts ra WHERE ra.id = ${statuses.accountId})`,
      allowed: sql<boolean>`(${statuses.visibility} <> 'local' AND ${shareable} AND ${visibleTo(from.id)}
        AND NOT EXISTS (SELECT 1 FROM domain_blocks rd WHERE rd.account_id = ${statuses.accountId} AND rd.domain = ${from.domain ?? ""}))`.mapWith(
        Boolean,
      ),
    })
    .from(statuses)
    .where(and(eq(statuses.uri, uri), eq(statuses.local, true), isNull(statuses.reblogOfId)))
    .get();
  return row ?? null;
}

/** The authorization of `from`'s interaction `req.instrument` with the post, as the batch reads it (NULL: none stored). */
function storedAuthorization(post: RequestedPost, from: AccountRow, req: InteractionRequest): SQL {
  const prefix = `${post.authorUri}/${AUTHORIZATION_PATHS[req.kind]}/`;
  const s = post.status.id;
  if (req.kind === "like")
    return sql`SELECT ${prefix} || f.id FROM favourites f WHERE f.uri = ${req.instrument} AND f.account_id = ${from.id} AND f.status_id = ${s}`;
  const link = req.kind === "reply" ? sql`r.in_reply_to_id` : sql`r.reblog_of_id`;
  return sql`SELECT ${prefix} || r.id FROM statuses r WHERE r.uri = ${req.instrument} AND r.account_id = ${from.id} AND ${link} = ${s}`;
}

/** Whether `from`'s interaction is stored already (one index probe). */
export async function interactionStored(
  d: DB,
  post: RequestedPost,
  from: AccountRow,
  req: InteractionRequest,
): Promise<boolean> {
  return (await d.get(sql`${storedAuthorization(post, from, req)}`)) !== undefined;
}

/**
 * The `Accept` of a request, for the batch that stores its interaction (after the insert): written only when the
 * interaction is stored by then, its authorization read from the row.
 */
export function acceptRequest(
  d: DB,
  post: RequestedPost,
  from: AccountRow,
  req: InteractionRequest,
  t: number = now(),
): D1PreparedStatement {
  return outboxWrite(d, post.status.accountId, answer("InteractionAccept", from, req), t, {
    uriFrom: storedAuthorization(post, from, req),
  });
}

/**
 * A request answered on its own: refused by the rule (a `Reject`; nothing stored), or approved with its
 * interaction stored already (delivered again, or after its plain form): its `Accept` again.
 */
export async function answerAlone(
  d: DB,
  post: RequestedPost,
  from: AccountRow,
  req: InteractionRequest,
  t: number = now(),
): Promise<Effects> {
  await d.$client.batch([
    post.allowed
      ? acceptRequest(d, post, from, req, t)
      : outboxWrite(d, post.status.accountId, answer("InteractionReject", from, req), t),
  ]);
  return {};
}

function answer(type: Answer["type"], from: AccountRow, req: InteractionRequest): OutboxActivity {
  return {
    type,
    request: REQUEST[req.kind],
    // An Accept's is the authorization (read by its batch); a Reject's, the request's.
    uri: req.uri,
    requestUri: req.uri,
    objectUri: req.objectUri,
    instrument: req.instrument,
    requesterId: from.id,
  };
}

/**
 * An authorization this instance serves (`kind`, under the local account `username`, the interaction row `id`):
 * a remote account's favourite, reply or reblog of that account's post, while both stand. Null: 404.
 */
export async function localAuthorization(
  d: DB,
  kind: InteractionKind,
  username: string,
  id: string,
): Promise<{ uri: string; authorUri: string; interactionUri: string; targetUri: string } | null> {
  if (!isId(id)) return null;
  const [table, link] =
    kind === "like"
      ? [sql`favourites`, sql`x.status_id`]
      : [sql`statuses`, kind === "reply" ? sql`x.in_reply_to_id` : sql`x.reblog_of_id`];
  const row = await d.get<{ author_uri: string; interaction_uri: string; target_uri: string }>(
    sql`SELECT a.uri AS author_uri, x.uri AS interaction_uri, s.uri AS target_uri
      FROM ${table} x JOIN statuses s ON s.id = ${link} JOIN accounts a ON a.id = s.account_id
      WHERE x.id = ${id} AND x.uri IS NOT NULL AND s.local = 1 AND s.visibility <> 'local'
        AND a.domain IS NULL AND a.username = ${username} AND a.deactivated = 0
        AND EXISTS (SELECT 1 FROM accounts i WHERE i.id = x.account_id AND i.domain IS NOT NULL)`,
  );
  if (!row) return null;
  return {
    uri: `${row.author_uri}/${AUTHORIZATION_PATHS[kind]}/${id}`,
    authorUri: row.author_uri,
    interactionUri: row.interaction_uri,
    targetUri: row.target_uri,
  };
}
