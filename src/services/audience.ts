/**
 * Who each outbox activity goes to: ONE rule per kind (`AUDIENCE`, exhaustive over `OutboxActivity["type"]`: a
 * new kind without a rule does not compile), used both by the gate that decides, inside the action's batch,
 * whether a row is written at all (services/outbox.ts) and by the expansion that writes its deliveries
 * (federation/delivery/). Both read the same SQL set of inboxes (`inboxes`), with the same filters: remote,
 * not deactivated, not blocking the actor, not on a domain the actor blocks, and allowed by the federation
 * policies (host names compared without a port, as the inbox compares them). So, at the moment the batch is
 * written, the gate and the expansion agree; an audience that changes in between (an unfollow, a block) can still
 * leave a row that expands to no delivery.
 */
import { sql, type SQL } from "drizzle-orm";
import type { OutboxActivity, OutboxActivityOf, OutboxKind } from "./outbox-activity";
import { deliveryAllowedSql } from "./federation-policies";
import type { Visibility } from "../db/schema";

/** Visibilities whose statuses go to the author's followers (direct and list: only to those addressed). */
const TO_FOLLOWERS: readonly Visibility[] = ["public", "unlisted", "private"];
const followerVisibilities = sql.raw(TO_FOLLOWERS.map((v) => `'${v}'`).join(", "));

/**
 * An activity's audience: `many` is the actor's remote followers when `followers` holds, and the remote accounts
 * `accounts` (a subquery of ids) names, each at its shared inbox; `one` is one account at its own inbox (or, for
 * what is addressed to its server rather than to it, the shared one), whoever it blocks.
 */
export type Audience =
  | {
      kind: "many";
      followers: SQL;
      accounts: SQL;
      /** When it holds, the inboxes of the accepted relays too (a public status, an account's deletion). */
      relays?: SQL;
    }
  | { kind: "one"; accountId: SQL; inbox: "personal" | "shared" }
  /** One inbox named by the activity itself (a relay's: it has no account row). */
  | { kind: "inbox"; inbox: string };

type Kind = OutboxKind;
type Of<K extends Kind> = OutboxActivityOf<K>;
type Rule<K extends Kind> = (actor: string, a: Of<K>) => Audience;

const NOBODY = sql`(SELECT NULL WHERE 0)`;
const one = (accountId: string | SQL, inbox: "personal" | "shared" = "personal"): Audience => ({
  kind: "one",
  accountId: typeof accountId === "string" ? sql`${accountId}` : accountId,
  inbox,
});
const followersOnly = (when: SQL = sql`1`): Audience => ({ kind: "many", followers: when, accounts: NOBODY });

/** A local status that federates at all: not a reblog, not local-only. */
const federatingStatus = (statusId: string) =>
  sql`EXISTS (SELECT 1 FROM statuses s WHERE s.id = ${statusId} AND s.local = 1 AND s.reblog_of_id IS NULL AND s.visibility <> 'local')`;
const toFollowers = (statusId: string) =>
  sql`(${federatingStatus(statusId)} AND EXISTS (SELECT 1 FROM statuses s WHERE s.id = ${statusId} AND s.visibility IN (${followerVisibilities})))`;

/** A status's audience: followers by visibility, and the accounts it addresses; the relays when public. */
const statusAudience = (statusId: string): Audience => ({
  kind: "many",
  followers: toFollowers(statusId),
  // The author of a post it quotes too, when it is public or unlisted (as Mastodon 4.5 reaches them; never a
  // narrower post's).
  // Its recipients as its Note addresses them (federation/documents/notes.ts): a followers-only one only those it
  // mentions (not the unmentioned author it answers, whom its Note does not address either).
  accounts: sql`(SELECT account_id FROM status_recipients WHERE status_id = ${statusId} AND ${federatingStatus(statusId)}
      AND (mention = 1 OR NOT EXISTS (SELECT 1 FROM statuses s WHERE s.id = ${statusId} AND s.visibility = 'private'))
    UNION SELECT quoted_account_id FROM quotes WHERE status_id = ${statusId} AND quoted_account_id IS NOT NULL
      AND EXISTS (SELECT 1 FROM statuses s WHERE s.id = ${statusId} AND s.local = 1 AND s.reblog_of_id IS NULL AND s.visibility IN ('public', 'unlisted')))`,
  relays: sql`(${federatingStatus(statusId)} AND EXISTS (SELECT 1 FROM statuses s WHERE s.id = ${statusId} AND s.visibility = 'public'))`,
});

export const AUDIENCE: { [K in Kind]: Rule<K> } = {
  Create: (_actor, a) => statusAudience(a.statusId),
  Update: (_actor, a) => statusAudience(a.statusId),
  // As it was: followers by its visibility (never for local-only), and the accounts it addressed.
  Delete: (_actor, a) => ({
    kind: "many",
    followers: sql`${TO_FOLLOWERS.includes(a.visibility) ? 1 : 0}`,
    accounts: a.visibility === "local" ? NOBODY : sql`(SELECT value FROM json_each(${JSON.stringify(a.recipients)}))`,
    relays: sql`${a.visibility === "public" ? 1 : 0}`,
  }),
  Follow: (_actor, a) => one(a.targetId),
  Undo: (_actor, a) => one(a.targetId),
  Accept: (_actor, a) => one(a.followerId),
  Reject: (_actor, a) => one(a.followerId),
  UpdateActor: () => followersOnly(),
  Move: () => followersOnly(),
  AddFeatured: (_actor, a) =>
    followersOnly(
      sql`EXISTS (SELECT 1 FROM statuses WHERE id = ${a.statusId} AND local = 1 AND visibility IN ('public', 'unlisted'))`,
    ),
  // Also when the status is gone since (unpinned, then deleted before the Remove was expanded).
  RemoveFeatured: (_actor, a) =>
    followersOnly(
      sql`(NOT EXISTS (SELECT 1 FROM statuses WHERE id = ${a.statusId})
        OR EXISTS (SELECT 1 FROM statuses WHERE id = ${a.statusId} AND local = 1 AND visibility IN ('public', 'unlisted')))`,
    ),
  ChatMessage: (_actor, a) => one(a.recipientId),
  DeleteChatMessage: (_actor, a) => one(a.recipientId),
  // Its followers, the remote accounts it follows (they hold its follow), and the accepted relays (they spread
  // its public posts: Mastodon sends the actor's Delete to its relays too).
  DeleteActor: (actor) => ({
    kind: "many",
    followers: sql`1`,
    accounts: sql`(SELECT target_account_id FROM follows WHERE account_id = ${actor})`,
    relays: sql`1`,
  }),
  // To the poll's author.
  Vote: (_actor, a) =>
    one(
      sql`(SELECT s.account_id FROM poll_votes v JOIN polls p ON p.id = v.poll_id JOIN statuses s ON s.id = p.status_id WHERE v.id = ${a.voteId})`,
    ),
  // Its Create's audience, and the remote accounts that voted or reblogged it (as Mastodon's
  // DistributePollUpdateWorker), but those the author has blocked since.
  UpdatePoll: (actor, a) => ({
    kind: "many",
    followers: toFollowers(a.statusId),
    accounts: sql`(SELECT id FROM (
        SELECT account_id AS id FROM status_recipients WHERE status_id = ${a.statusId}
        UNION SELECT v.account_id FROM poll_votes v JOIN polls p ON p.id = v.poll_id WHERE p.status_id = ${a.statusId}
        UNION SELECT account_id FROM statuses WHERE reblog_of_id = ${a.statusId})
      WHERE ${federatingStatus(a.statusId)} AND id NOT IN (SELECT target_account_id FROM blocks WHERE account_id = ${actor}))`,
  }),
  Block: (_actor, a) => one(a.targetId),
  UndoBlock: (_actor, a) => one(a.targetId),
  // Addressed to the reported account's server.
  Flag: (_actor, a) => one(a.targetId, "shared"),
  Like: (_actor, a) => one(a.targetId),
  UndoLike: (_actor, a) => one(a.targetId),
  EmojiReact: (_actor, a) => one(a.targetId),
  UndoEmojiReact: (_actor, a) => one(a.targetId),
  // A local reblog of a public or unlisted status, never of a private, direct or local-only one: the reblogger's
  // followers and the original's author (a follower or not).
  Announce: (_actor, a) => {
    const shareable = sql`EXISTS (SELECT 1 FROM statuses r JOIN statuses o ON o.id = r.reblog_of_id WHERE r.id = ${a.statusId}
      AND r.local = 1 AND r.visibility IN ('public', 'unlisted') AND o.visibility IN ('public', 'unlisted'))`;
    return {
      kind: "many",
      followers: shareable,
      accounts: sql`(SELECT o.account_id FROM statuses r JOIN statuses o ON o.id = r.reblog_of_id WHERE r.id = ${a.statusId} AND ${shareable})`,
    };
  },
  // FEP-044f's exchanges: between the quoting and the quoted author.
  QuoteRequest: (_actor, a) => one(a.targetId),
  QuoteAccept: (_actor, a) => one(a.requesterId),
  QuoteReject: (_actor, a) => one(a.requesterId),
  DeleteQuoteAuthorization: (_actor, a) => one(a.targetId),
  // GoToSocial's interaction requests: to the post's author alone, until they approve.
  InteractionRequest: (_actor, a) => one(a.targetId),
  // GoToSocial's polite requests answered: to the requester alone.
  InteractionAccept: (_actor, a) => one(a.requesterId),
  InteractionReject: (_actor, a) => one(a.requesterId),
  RelayFollow: (_actor, a) => ({ kind: "inbox", inbox: a.inbox }),
  RelayUndo: (_actor, a) => ({ kind: "inbox", inbox: a.inbox }),
  RelayAccept: (_actor, a) => ({ kind: "inbox", inbox: a.inbox }),
  UndoAnnounce: (_actor, a) => {
    const shared = a.visibility === "public" || a.visibility === "unlisted";
    return {
      kind: "many",
      followers: sql`${shared ? 1 : 0}`,
      accounts: shared ? sql`(SELECT ${a.originalAuthorId})` : NOBODY,
    };
  },
};

/** The audience rule of an activity. */
function audienceOf(actor: string, a: OutboxActivity): Audience {
  return (AUDIENCE[a.type] as Rule<Kind>)(actor, a as never);
}

/** The authority (host[:port]) of an inbox URL, in SQL. */
export const inboxHost = (col: string) =>
  sql.raw(`lower(CASE WHEN instr(substr(${col}, instr(${col}, '://') + 3), '/') > 0
    THEN substr(substr(${col}, instr(${col}, '://') + 3), 1, instr(substr(${col}, instr(${col}, '://') + 3), '/') - 1)
    ELSE substr(${col}, instr(${col}, '://') + 3) END)`);

/** The remote account `a` has not blocked the actor (its Block stored as a `blocks` row, as Mastodon does). */
const notBlocking = (actor: string) =>
  sql`NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = a.id AND b.target_account_id = ${actor})`;

/**
 * The inboxes (columns `inbox`, `host`) an activity of `actor` with this audience is delivered to, every filter
 * applied: the one SQL set the gate and the expansion read. The filters of a recipient (remote, active, not
 * blocking the actor, its domain not blocked by the actor) run per row; the filters of an inbox (its host not
 * blocked by the actor, allowed by the federation policies) run once per DISTINCT inbox, so an account with many
 * followers on few servers costs the policy checks per server, not per follower (the gate still stops at the
 * first inbox that passes: DISTINCT streams through a temporary index).
 */
function recipients(actor: string, audience: Audience, toRelays: boolean): SQL {
  // Relays: the accepted ones, for a public status, while relaying is on (`allow_relay`; the gate counts them
  // whatever the setting, so a row may be written that the expansion then sends nowhere).
  const relayRows =
    audience.kind === "many" && audience.relays && toRelays
      ? sql`UNION ALL SELECT inbox_url FROM relays WHERE state = 'accepted' AND inbox_url IS NOT NULL AND ${audience.relays}`
      : sql``;
  const rows =
    audience.kind === "inbox"
      ? sql`SELECT ${audience.inbox} AS inbox`
      : audience.kind === "one"
        ? sql`SELECT ${audience.inbox === "shared" ? sql`coalesce(shared_inbox_url, inbox_url)` : sql`coalesce(inbox_url, shared_inbox_url)`} AS inbox
          FROM accounts WHERE id = ${audience.accountId} AND domain IS NOT NULL`
        : sql`SELECT coalesce(a.shared_inbox_url, a.inbox_url) AS inbox FROM follows f JOIN accounts a ON a.id = f.account_id
          WHERE ${audience.followers} AND f.target_account_id = ${actor} AND a.domain IS NOT NULL AND NOT a.deactivated AND ${notBlocking(actor)}
            AND a.domain NOT IN (SELECT domain FROM domain_blocks WHERE account_id = ${actor})
        UNION ALL
        SELECT coalesce(a.shared_inbox_url, a.inbox_url) FROM accounts a
          WHERE a.id IN ${audience.accounts} AND a.domain IS NOT NULL AND NOT a.deactivated AND ${notBlocking(actor)}
            AND a.domain NOT IN (SELECT domain FROM domain_blocks WHERE account_id = ${actor})
        ${relayRows}`;
  // A one-account audience (a Follow, a Block…) is not held back by the actor's own domain blocks, as before.
  const actorBlocks =
    audience.kind !== "many"
      ? sql``
      : sql`AND host NOT IN (SELECT domain FROM domain_blocks WHERE account_id = ${actor})`;
  return sql`SELECT inbox, host FROM (SELECT DISTINCT inbox, ${inboxHost("inbox")} AS host FROM (${rows}) WHERE inbox LIKE 'http%://%')
    WHERE ${deliveryAllowedSql(sql`host`)} ${actorBlocks}`;
}

/** The gate: whether the activity reaches anyone (SQL, stops at the first recipient). */
export function hasAudience(actor: string, a: OutboxActivity): SQL {
  return sql`EXISTS (${recipients(actor, audienceOf(actor, a), true)})`;
}

/** The expansion: the distinct inboxes (`inbox`, `host`) the activity is delivered to (`toRelays`: `allow_relay`). */
export function inboxesOf(actor: string, a: OutboxActivity, toRelays = true): SQL {
  return recipients(actor, audienceOf(actor, a), toRelays);
}
