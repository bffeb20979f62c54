/**
 * Quote posts with consent (issue 46; FEP-044f as Mastodon 4.5 speaks it). A `quotes` row per quoting status
 * says which post it quotes and in what state; who may quote is the one rule of lib/quote-policy.ts.
 * - Quoting here: a local post is approved at once by the rule (its stamp served by this instance); a remote one
 *   is asked for with a `QuoteRequest` (an outbox row in the post's batch) and stays pending until the `Accept`
 *   and its stamp arrive, or is rejected.
 * - Being quoted: another server's `QuoteRequest` of a local post is answered by the rule (`Accept` with a stamp,
 *   or `Reject`; never for an author that blocks the requester or its domain); the author may revoke an approval
 *   later (a `Delete` of the stamp, which then answers 404).
 * - Quotes read from other servers (Mastodon's `quote`, Misskey's `_misskey_quote`, `quoteUrl`…) get their state
 *   from what they carry (`inboundQuoteState`).
 * Each action is one batch; `quotes_count` is recounted from the rows.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { isId, newId } from "../db/ids";
import { pageQuery, inOrder, type Page } from "../db/paging";
import { accounts, quotes, statuses, type QuotePolicy, type QuoteState, type Visibility } from "../db/schema";
import { notFound, unprocessable } from "../lib/errors";
import { postPolicy, quoteApproval, stampUri } from "../lib/quote-policy";
import type { AccountRow } from "./accounts";
import type { Effects } from "./effects";
import type { QuoteRow, StatusRow } from "./hydrate";
import { notify } from "./notifications";
import { outboxWrite } from "./outbox";
import { visibleTo } from "./visibility";

/** A quote of another server's post carried by a remote post, as federation/documents/parse-note.ts reads it. */
export interface ParsedQuote {
  uri: string;
  /** Its `quoteAuthorization`, when it has one. */
  authorization: string | null;
  /** FEP-044f's `quote` (a server that asks first), not only an older form (`_misskey_quote`, `quoteUrl`, a tag). */
  consentAware: boolean;
  /** The stamp was fetched from the quoted post's server and names this very quote (federation/fetching). */
  verified: boolean;
}

/** `quotes_count` of a status: its accepted quotes known here. */
export const recountQuotes = (id: string) =>
  sql`UPDATE statuses SET quotes_count = (SELECT count(*) FROM quotes q WHERE q.quoted_status_id = ${id} AND q.state = 'accepted') WHERE id = ${id}`;

/** What posting a quote needs to know of the quoted post: the row, its author, whether the poster follows them. */
export interface QuotedPost {
  status: StatusRow;
  authorUri: string;
  authorLocal: boolean;
  follows: boolean;
}

/** The quoted post's read for posting, visible to `me` (or nothing: 404), as a query to join the post's reads. */
export function quotedPostQuery(d: DB, me: string, id: string) {
  return d
    .select({
      status: statuses,
      // Subqueries, not a join: a batch maps columns by name, and `uri` would be the status's and the account's.
      authorUri: sql<string>`(SELECT qa.uri FROM accounts qa WHERE qa.id = statuses.account_id)`,
      authorLocal: sql<boolean>`(SELECT qa.domain IS NULL FROM accounts qa WHERE qa.id = statuses.account_id)`.mapWith(
        Boolean,
      ),
      follows:
        sql<boolean>`EXISTS (SELECT 1 FROM follows qf WHERE qf.account_id = ${me} AND qf.target_account_id = statuses.account_id)`.mapWith(
          Boolean,
        ),
    })
    .from(statuses)
    .where(and(eq(statuses.id, isId(id) ? id : ""), isNull(statuses.reblogOfId), visibleTo(me)));
}

/**
 * The quote a new local post makes, by the rule: 422 when it may not quote that post. Quoting one's own
 * followers-only post makes the quote followers-only too (Mastodon's rule), so it never shows the post wider. A
 * quote of another server's post asks its author (a `QuoteRequest`), but for a local-only one.
 */
export function prepareQuote(
  me: string,
  quoted: QuotedPost,
  status: { id: string; uri: string },
  visibility: Visibility,
  t: number,
): { row: QuoteRow; visibility: Visibility } {
  const s = quoted.status;
  if (quoteApproval(s, me, quoted.follows) !== "automatic")
    throw unprocessable("Validation failed: You are not allowed to quote this post");
  const narrowed =
    s.visibility === "private" && visibility !== "direct" && visibility !== "list" ? "private" : visibility;
  const id = newId(t);
  // A local-only quote never leaves the instance, so it asks nobody: the rule above approved it already.
  const approvedHere = quoted.authorLocal || s.accountId === me || narrowed === "local";
  return {
    visibility: narrowed,
    row: {
      id,
      statusId: status.id,
      accountId: me,
      quotedStatusId: s.id,
      quotedAccountId: s.accountId,
      quotedUri: s.uri,
      state: approvedHere ? "accepted" : "pending",
      authorizationUri: quoted.authorLocal ? stampUri(quoted.authorUri, id) : null,
      // Our request's id (the Accept names it), for a remote post.
      requestUri: approvedHere ? null : quoteRequestUri(status.uri),
      createdAt: t,
      updatedAt: t,
    },
  };
}

/**
 * The statements a new status's quote adds to its post's batch (after the status): the row; for an approved
 * quote of someone else's local post, its `quote` notification and count; for a remote post, the QuoteRequest.
 */
export function quoteWrites(d: DB, status: StatusRow, q: QuoteRow): D1PreparedStatement[] {
  const out = [statement(d, d.insert(quotes).values(q).onConflictDoNothing())];
  if (q.quotedStatusId === null) return out;
  out.push(statement(d, recountQuotes(q.quotedStatusId)));
  const local = sql`EXISTS (SELECT 1 FROM accounts qa WHERE qa.id = ${q.quotedAccountId} AND qa.domain IS NULL)`;
  if (q.state === "accepted" && q.quotedAccountId && q.quotedAccountId !== status.accountId)
    out.push(
      notify(d, { type: "quote", to: q.quotedAccountId, from: status.accountId, statusId: status.id, onlyIf: local }),
    );
  if (status.local && q.state === "pending" && q.requestUri && q.quotedAccountId)
    out.push(
      outboxWrite(
        d,
        status.accountId,
        {
          type: "QuoteRequest",
          uri: q.requestUri,
          statusId: status.id,
          objectUri: q.quotedUri,
          targetId: q.quotedAccountId,
        },
        q.createdAt,
      ),
    );
  return out;
}

/** The id of a local quote's `QuoteRequest`. */
export const quoteRequestUri = (statusUri: string) => `${statusUri}#quote-request`;

/**
 * The state of a quote another server sent: a self-quote is approved; a quote of a local post waits for its
 * request when its server asks first (else the rule decides, as nothing will ask); a quote of another server's
 * post is approved by a verified stamp, waits when its server asks first, and is shown when it comes from a
 * server that never asks (Misskey, Akkoma) unless the quoted post is known to allow it to nobody but its author.
 */
export function inboundQuoteState(
  q: ParsedQuote,
  quoted: { accountId: string; local: boolean; visibility: Visibility; quotePolicy: QuotePolicy | null } | null,
  authorId: string,
  followsQuoted: boolean,
): QuoteState {
  if (quoted?.accountId === authorId) return "accepted";
  if (quoted?.local) {
    if (q.consentAware) return "pending";
    return quoteApproval(quoted, authorId, followsQuoted) === "automatic" ? "accepted" : "rejected";
  }
  if (q.verified) return "accepted";
  if (q.consentAware) return "pending";
  return quoted &&
    quoteApproval({ ...quoted, quotePolicy: quoted.quotePolicy ?? "public" }, authorId, followsQuoted) === "denied"
    ? "pending"
    : "accepted";
}

/** The quoted post of a remote status being stored, with whether its author follows the quoted author. */
export function quotedByUriQuery(d: DB, uri: string, authorId: string) {
  return d
    .select({
      id: statuses.id,
      accountId: statuses.accountId,
      local: statuses.local,
      visibility: statuses.visibility,
      quotePolicy: statuses.quotePolicy,
      follows:
        sql<boolean>`EXISTS (SELECT 1 FROM follows qf WHERE qf.account_id = ${authorId} AND qf.target_account_id = statuses.account_id)`.mapWith(
          Boolean,
        ),
    })
    .from(statuses)
    .where(and(eq(statuses.uri, uri), isNull(statuses.reblogOfId)));
}

/** A remote status's quote row, from what it carries and the quoted post stored here (if it is). */
export function inboundQuoteRow(
  statusId: string,
  authorId: string,
  q: ParsedQuote,
  quoted: (ReturnType<typeof quotedByUriQuery> extends PromiseLike<(infer R)[]> ? R : never) | null,
  t: number,
): QuoteRow {
  const state = inboundQuoteState(q, quoted, authorId, quoted?.follows ?? false);
  return {
    id: newId(t),
    statusId,
    accountId: authorId,
    quotedStatusId: quoted?.id ?? null,
    quotedAccountId: quoted?.accountId ?? null,
    quotedUri: q.uri,
    state,
    // A stamp of another server is kept only once verified; this instance's own are made by its answer.
    authorizationUri: state === "accepted" && q.verified ? q.authorization : null,
    requestUri: null,
    createdAt: t,
    updatedAt: t,
  };
}

/**
 * An old-style quote (no consent asked) stored before the post it quotes was known, so shown: once that post is
 * fetched, its state is decided again against it, and the quote waits (uncounted) if the post's policy forbids it.
 */
export async function recheckQuote(d: DB, statusUri: string, authorId: string, q: ParsedQuote, t: number = now()) {
  if (q.verified || q.consentAware) return;
  const quoted = await quotedByUriQuery(d, q.uri, authorId).get();
  if (!quoted || inboundQuoteState(q, quoted, authorId, quoted.follows) !== "pending") return;
  await d.$client.batch([
    statement(
      d,
      sql`UPDATE quotes SET state = 'pending', updated_at = ${t} WHERE status_id = (SELECT id FROM statuses WHERE uri = ${statusUri})
        AND state = 'accepted' AND authorization_uri IS NULL`,
    ),
    statement(d, recountQuotes(quoted.id)),
  ]);
}

/** A status stored after quotes of it: those rows now name it (an index probe that finds nothing costs nothing). */
export const linkQuotesTo = (s: { id: string; uri: string; accountId: string }) =>
  sql`UPDATE quotes SET quoted_status_id = ${s.id}, quoted_account_id = ${s.accountId} WHERE quoted_uri = ${s.uri} AND quoted_status_id IS NULL AND state <> 'deleted'`;

/** After `linkQuotesTo`: the new status's count of the accepted quotes it linked (writes nothing when none). */
export const countLinkedQuotes = (id: string) =>
  sql`UPDATE statuses SET quotes_count = (SELECT count(*) FROM quotes q WHERE q.quoted_status_id = ${id} AND q.state = 'accepted')
    WHERE id = ${id} AND EXISTS (SELECT 1 FROM quotes q WHERE q.quoted_status_id = ${id} AND q.state = 'accepted')`;

/** A stored remote post carrying a verified stamp: its pending quote is approved (null: nothing to approve). */
export async function approveVerified(
  d: DB,
  statusUri: string,
  q: ParsedQuote,
  t: number = now(),
): Promise<Effects | null> {
  if (!q.verified || !q.authorization) return null;
  const row = await d
    .select({ id: quotes.id, statusId: quotes.statusId, quotedStatusId: quotes.quotedStatusId })
    .from(quotes)
    .innerJoin(statuses, eq(statuses.id, quotes.statusId))
    .where(and(eq(statuses.uri, statusUri), eq(quotes.quotedUri, q.uri), eq(quotes.state, "pending")))
    .get();
  if (!row) return null;
  await d.$client.batch([
    statement(
      d,
      d
        .update(quotes)
        .set({ state: "accepted", authorizationUri: q.authorization, updatedAt: t })
        .where(eq(quotes.id, row.id)),
    ),
    ...(row.quotedStatusId ? [statement(d, recountQuotes(row.quotedStatusId))] : []),
  ]);
  return { events: [{ accountId: null, event: "status.update", payload: row.statusId }] };
}

/**
 * `quoted_update` notifications of an edit to the local authors of its accepted quotes who may still see it
 * (Mastodon 4.5). One statement whatever their number.
 */
export function notifyQuoters(d: DB, status: { id: string; accountId: string }, t: number): D1PreparedStatement {
  const quoters = sql`(SELECT DISTINCT q.account_id FROM quotes q JOIN users u ON u.account_id = q.account_id
    WHERE q.quoted_status_id = ${status.id} AND q.state = 'accepted' AND q.account_id <> ${status.accountId})`;
  return notify(d, {
    type: "quoted_update",
    to: [],
    toQuery: quoters,
    from: status.accountId,
    statusId: status.id,
    onlyIf: sql`EXISTS (SELECT 1 FROM statuses WHERE statuses.id = ${status.id} AND ${visibleTo(sql`n.to_id`)})`,
    at: t,
  });
}

// ---- being quoted ----

/**
 * Another server's `QuoteRequest` (`requestUri`) of the local post `quotedUri` by `from`'s post (stored here:
 * `quotingStatusId`, or null when it could not be had): an `Accept` with a stamp when the rule allows it and the
 * quoted author neither blocks `from` nor its domain, else a `Reject`. A repeated request gets the same answer
 * again (its stamp unchanged). Unknown or non-local posts: nothing (null). A quoting post that could not be had
 * (its server would not serve it to us, or not now) gets no answer unless the rule refuses whatever it says, as
 * Mastodon does: a Reject is final there (the quote is marked rejected for good).
 */
export async function receiveQuoteRequest(
  d: DB,
  from: AccountRow,
  requestUri: string,
  quotedUri: string,
  quoting: { id: string; uri: string } | null,
  t: number = now(),
): Promise<Effects | null> {
  const [quotedRows, rowFound] = await d.batch([
    d
      .select({
        status: statuses,
        authorUri: sql<string>`(SELECT qa.uri FROM accounts qa WHERE qa.id = statuses.account_id)`,
        follows:
          sql<boolean>`EXISTS (SELECT 1 FROM follows qf WHERE qf.account_id = ${from.id} AND qf.target_account_id = statuses.account_id)`.mapWith(
            Boolean,
          ),
        refused:
          sql<boolean>`(EXISTS (SELECT 1 FROM blocks qb WHERE qb.account_id = statuses.account_id AND qb.target_account_id = ${from.id})
          OR EXISTS (SELECT 1 FROM domain_blocks qd WHERE qd.account_id = statuses.account_id AND qd.domain = ${from.domain ?? ""}))`.mapWith(
            Boolean,
          ),
      })
      .from(statuses)
      .where(and(eq(statuses.uri, quotedUri), eq(statuses.local, true), isNull(statuses.reblogOfId))),
    d
      .select()
      .from(quotes)
      .where(eq(quotes.statusId, quoting?.id ?? "")),
  ]);
  const quoted = quotedRows[0];
  if (!quoted) return null;
  const existing = rowFound[0];
  const ruleAllows = !quoted.refused && quoteApproval(quoted.status, from.id, quoted.follows) === "automatic";
  if (!quoting && ruleAllows) return {};
  // The instrument must be the requester's post quoting this very post.
  const allowed =
    quoting !== null &&
    existing?.quotedUri === quotedUri &&
    existing.accountId === from.id &&
    existing?.state !== "revoked" &&
    ruleAllows;
  const answer = (result: string | null) =>
    outboxWrite(
      d,
      quoted.status.accountId,
      {
        type: result ? "QuoteAccept" : "QuoteReject",
        uri: requestUri,
        objectUri: quotedUri,
        instrument: quoting?.uri ?? requestUri,
        requesterId: from.id,
        result,
      },
      t,
    );
  if (!allowed || !quoting) {
    const stmts = [answer(null)];
    // Only the quote of this very post is refused (an instrument quoting another post leaves that quote alone).
    if (quoting && existing && existing.state !== "revoked" && existing.quotedUri === quotedUri)
      stmts.push(
        statement(
          d,
          d.update(quotes).set({ state: "rejected", requestUri, updatedAt: t }).where(eq(quotes.id, existing.id)),
        ),
        statement(d, recountQuotes(quoted.status.id)),
      );
    await d.$client.batch(stmts);
    return {};
  }
  const id = existing?.id ?? newId(t);
  const stamp = existing?.authorizationUri ?? stampUri(quoted.authorUri, id);
  const stmts = [
    statement(
      d,
      sql`INSERT INTO quotes (id, status_id, account_id, quoted_status_id, quoted_account_id, quoted_uri, state, authorization_uri, request_uri, created_at, updated_at)
        VALUES (${id}, ${quoting.id}, ${from.id}, ${quoted.status.id}, ${quoted.status.accountId}, ${quotedUri}, 'accepted', ${stamp}, ${requestUri}, ${t}, ${t})
        ON CONFLICT (status_id) DO UPDATE SET quoted_status_id = excluded.quoted_status_id, quoted_account_id = excluded.quoted_account_id,
          quoted_uri = excluded.quoted_uri, state = 'accepted', authorization_uri = excluded.authorization_uri, request_uri = excluded.request_uri, updated_at = excluded.updated_at`,
    ),
    statement(d, recountQuotes(quoted.status.id)),
    answer(stamp),
  ];
  if (existing?.state !== "accepted")
    stmts.push(notify(d, { type: "quote", to: quoted.status.accountId, from: from.id, statusId: quoting.id }));
  await d.$client.batch(stmts);
  return { push: true };
}

/**
 * The author of a local post withdraws an approved quote of it (Mastodon 4.5's revoke): the row is revoked, its
 * stamp no longer served, and a remote quoting author is sent the stamp's `Delete`. Answers the quoting status's id.
 */
export async function revokeQuote(
  d: DB,
  me: AccountRow,
  statusId: string,
  quotingStatusId: string,
  t: number = now(),
): Promise<{ id: string; effects: Effects }> {
  const row = await d
    .select({ quote: quotes, quoterDomain: accounts.domain })
    .from(quotes)
    .innerJoin(accounts, eq(accounts.id, quotes.accountId))
    .where(
      and(
        eq(quotes.statusId, isId(quotingStatusId) ? quotingStatusId : ""),
        eq(quotes.quotedStatusId, isId(statusId) ? statusId : ""),
        eq(quotes.quotedAccountId, me.id),
      ),
    )
    .get();
  if (!row) throw notFound();
  const q = row.quote;
  if (q.state === "revoked") return { id: q.statusId, effects: {} };
  const stmts = [
    statement(d, d.update(quotes).set({ state: "revoked", updatedAt: t }).where(eq(quotes.id, q.id))),
    statement(d, recountQuotes(statusId)),
    statement(
      d,
      sql`DELETE FROM notifications WHERE type = 'quote' AND status_id = ${q.statusId} AND account_id = ${me.id}`,
    ),
  ];
  if (row.quoterDomain !== null && q.authorizationUri && q.state === "accepted")
    stmts.unshift(
      outboxWrite(d, me.id, { type: "DeleteQuoteAuthorization", uri: q.authorizationUri, targetId: q.accountId }, t),
    );
  await d.$client.batch(stmts);
  return {
    id: q.statusId,
    effects: { events: [{ accountId: null, event: "status.update", payload: q.statusId }] },
  };
}

/**
 * An approved quote's stamp this instance serves: the quote of the local post of the account `username`, while
 * it stands (revoked, rejected or deleted: none, so 404).
 */
export async function localStamp(
  d: DB,
  username: string,
  quoteId: string,
): Promise<{ authorUri: string; quotingUri: string; quotedUri: string; authorizationUri: string } | null> {
  if (!isId(quoteId)) return null;
  const row = await d
    .select({
      authorUri: accounts.uri,
      quotingUri: statuses.uri,
      quotedUri: quotes.quotedUri,
      auth: quotes.authorizationUri,
    })
    .from(quotes)
    .innerJoin(accounts, eq(accounts.id, quotes.quotedAccountId))
    .innerJoin(statuses, eq(statuses.id, quotes.statusId))
    .where(
      and(
        eq(quotes.id, quoteId),
        eq(quotes.state, "accepted"),
        isNull(accounts.domain),
        eq(accounts.username, username),
        eq(accounts.deactivated, false),
        sql`${quotes.quotedStatusId} IS NOT NULL`,
      ),
    )
    .get();
  return row?.auth
    ? { authorUri: row.authorUri, quotingUri: row.quotingUri, quotedUri: row.quotedUri, authorizationUri: row.auth }
    : null;
}

// ---- quoting another server's post ----

/**
 * The quoted author's answer to a local quote's request (`requestUri`): accepted with its stamp (verified by the
 * caller: fetched, on the quoted author's server, naming this quote), or rejected. Only from that author. The
 * post is sent again (an `Update`, now with its stamp) to those who have it.
 */
export async function receiveQuoteAnswer(
  d: DB,
  from: AccountRow,
  requestUri: string,
  stamp: string | null,
  t: number = now(),
): Promise<Effects | null> {
  const q = await quoteRequested(d, from, requestUri);
  if (!q || (q.state !== "pending" && !(q.state === "accepted" && !stamp))) return q ? {} : null;
  const accepted = stamp !== null;
  const stmts = [
    statement(
      d,
      d
        .update(quotes)
        .set({ state: accepted ? "accepted" : "rejected", authorizationUri: stamp, updatedAt: t })
        .where(eq(quotes.id, q.id)),
    ),
    ...(q.quotedStatusId ? [statement(d, recountQuotes(q.quotedStatusId))] : []),
    ...(accepted ? [outboxWrite(d, q.accountId, { type: "Update", statusId: q.statusId }, t)] : []),
  ];
  await d.$client.batch(stmts);
  return { events: [{ accountId: null, event: "status.update", payload: q.statusId }] };
}

/** The local quote whose request `requestUri` asked `from` (the quoted author). */
export function quoteRequested(d: DB, from: AccountRow, requestUri: string): Promise<QuoteRow | undefined> {
  return d
    .select()
    .from(quotes)
    .where(and(eq(quotes.requestUri, requestUri), eq(quotes.quotedAccountId, from.id)))
    .get();
}

/**
 * The actor `actorUri` deleted a stamp: the quote it approved (of that actor's post) is revoked. Null: no such
 * stamp here (so a Delete of anything else costs one index probe).
 */
export async function receiveStampDeletion(
  d: DB,
  actorUri: string,
  stamp: string,
  t: number = now(),
): Promise<Effects | null> {
  const q = await d
    .select({ quote: quotes })
    .from(quotes)
    .innerJoin(accounts, eq(accounts.id, quotes.quotedAccountId))
    .where(and(eq(quotes.authorizationUri, stamp), eq(accounts.uri, actorUri)))
    .get()
    .then((r) => r?.quote);
  if (!q) return null;
  if (q.state === "revoked") return {};
  await d.$client.batch([
    statement(d, d.update(quotes).set({ state: "revoked", updatedAt: t }).where(eq(quotes.id, q.id))),
    ...(q.quotedStatusId ? [statement(d, recountQuotes(q.quotedStatusId))] : []),
  ]);
  return { events: [{ accountId: null, event: "status.update", payload: q.statusId }] };
}

// ---- reading ----

/**
 * A page of the accepted quotes of a post the viewer may see, newest first by quote: every one for its author,
 * for anyone else only of a public or unlisted post; each quoting status visible to the viewer (the one rule).
 */
export async function quotesPage(
  d: DB,
  statusId: string,
  viewerId: string | null,
  page: Page,
): Promise<{ statusId: string; cursor: string }[]> {
  const target = isId(statusId)
    ? await d
        .select({ accountId: statuses.accountId, visibility: statuses.visibility })
        .from(statuses)
        .where(and(eq(statuses.id, statusId), visibleTo(viewerId)))
        .get()
    : undefined;
  if (!target) throw notFound();
  if (target.accountId !== viewerId && target.visibility !== "public" && target.visibility !== "unlisted")
    throw notFound();
  const q = pageQuery(quotes.id, page);
  const rows = await d
    .select({ statusId: quotes.statusId, cursor: quotes.id })
    .from(quotes)
    .innerJoin(statuses, eq(statuses.id, quotes.statusId))
    .where(and(eq(quotes.quotedStatusId, statusId), eq(quotes.state, "accepted"), visibleTo(viewerId), q.where))
    .orderBy(q.orderBy)
    .limit(q.limit);
  return inOrder(rows, q);
}

/**
 * The author sets who may quote one of their posts (Mastodon 4.5's `PUT …/interaction_policy`): never wider
 * than its visibility allows; the post goes out again (an `Update`) with its new policy.
 */
export async function setQuotePolicy(
  d: DB,
  me: AccountRow,
  statusId: string,
  policy: QuotePolicy | undefined,
  t: number = now(),
): Promise<Effects> {
  const s = isId(statusId)
    ? await d
        .select()
        .from(statuses)
        .where(and(eq(statuses.id, statusId), eq(statuses.accountId, me.id), isNull(statuses.reblogOfId)))
        .get()
    : undefined;
  if (!s) throw notFound();
  if (!policy) return {};
  const next = postPolicy(s.visibility, policy);
  if (next === s.quotePolicy) return {};
  await d.$client.batch([
    statement(d, d.update(statuses).set({ quotePolicy: next }).where(eq(statuses.id, s.id))),
    outboxWrite(d, me.id, { type: "Update", statusId: s.id }, t),
  ]);
  return { events: [{ accountId: null, event: "status.update", payload: s.id }] };
}
