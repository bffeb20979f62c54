/**
 * Relays (issue 36): the rows of the relays this instance follows, and the rules on them. Following or unfollowing
 * a relay is one batch: the `relays` row and the instance actor's `Follow` / `Undo` (an outbox row signed by the
 * instance actor, services/outbox.ts) together. Two kinds, as found in the wild:
 * - `litepub` (Pleroma's): the instance actor follows the relay's actor; the relay `Announce`s what it relays, and
 *   usually follows the instance actor back (answered with an `Accept`);
 * - `mastodon`: a `Follow` whose object is the public collection, sent to the relay's inbox; the relay forwards
 *   others' `Create`s under its own HTTP signature.
 * What a relay brings is trusted only as its author's (federation/door/authenticate.ts) or fetched from its origin; the
 * relay's word only makes a public post relevant here (services/remote-statuses.ts `relayed`).
 */
import { and, eq, isNull, ne, or, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { newId } from "../db/ids";
import { relays } from "../db/schema";
import { badRequest, notFound } from "../lib/errors";
import { outboxWrite } from "./outbox";

export type RelayRow = typeof relays.$inferSelect;
export const PUBLIC_COLLECTION = "https://www.w3.org/ns/activitystreams#Public";

/** Pleroma's shape of a relay in `GET …/admin/relay`, with Starling's `state`. */
export function renderRelay(r: RelayRow) {
  return {
    actor: r.actorUri ?? r.url,
    followed_back: r.followedBack,
    state: r.state as Exclude<RelayRow["state"], "removing">,
  };
}

/** The relays followed (one being unfollowed is no longer listed: the admin asked for it to go). */
export function listRelays(d: DB): Promise<RelayRow[]> {
  return d.select().from(relays).where(ne(relays.state, "removing")).orderBy(relays.createdAt);
}

/** A relay URL as given: https (http too with the development switch `ALLOW_PRIVATE_ADDRESS`), no credentials, no fragment. */
export function relayUrl(input: string, allowHttp = false): string {
  let u: URL;
  try {
    u = new URL(input.trim());
  } catch {
    throw badRequest("relay_url is not a URL");
  }
  if ((u.protocol !== "https:" && !(allowHttp && u.protocol === "http:")) || u.username || u.password)
    throw badRequest(allowHttp ? "relay_url must be an http(s) URL" : "relay_url must be an https URL");
  u.hash = "";
  return u.href;
}

/** The row of a relay named by the URL it was followed with, or by its actor id. */
export async function relayByUrl(d: DB, url: string): Promise<RelayRow | null> {
  return (
    (await d
      .select()
      .from(relays)
      .where(or(eq(relays.url, url), eq(relays.actorUri, url)))
      .get()) ?? null
  );
}

/** A row for `url`, still to be looked up (the command line's way in; the admin API looks it up at once). */
export async function addRelay(d: DB, url: string, t: number = now()): Promise<RelayRow> {
  await d
    .insert(relays)
    .values({ id: newId(t), url, createdAt: t, updatedAt: t })
    .onConflictDoNothing();
  return (await relayByUrl(d, url))!;
}

/** What looking a relay's URL up found (federation/fetching/relays.ts). */
export interface FoundRelay {
  kind: "litepub" | "mastodon";
  /** The relay's actor (LitePub); for a Mastodon-style relay, learnt from its Accept. */
  actorUri: string | null;
  inboxUrl: string;
}

/** The Follow's id: the instance actor's, one per relay row. */
const followUri = (base: string, id: string) => `${base}/users/internal.fetch#relays/${id}`;

/**
 * The relay row looked up, and the instance actor's Follow of it, in one batch (`actorId`: the local admin whose
 * outbox row carries it; it is signed by the instance actor). Only a row not yet followed is followed.
 */
export async function followRelay(
  d: DB,
  row: RelayRow,
  found: FoundRelay,
  base: string,
  actorId: string,
  extra: D1PreparedStatement[] = [],
): Promise<void> {
  const t = now();
  const uri = followUri(base, row.id);
  await d.$client.batch([
    statement(
      d,
      d
        .update(relays)
        .set({ kind: found.kind, actorUri: found.actorUri, inboxUrl: found.inboxUrl, followUri: uri, updatedAt: t })
        .where(and(eq(relays.id, row.id), isNull(relays.kind))),
    ),
    outboxWrite(
      d,
      actorId,
      {
        type: "RelayFollow",
        uri,
        inbox: found.inboxUrl,
        object: found.kind === "litepub" && found.actorUri ? found.actorUri : PUBLIC_COLLECTION,
      },
      t,
      { onlyIf: sql`changes() > 0` },
    ),
    ...extra,
  ]);
}

/**
 * Unfollowing: the `Undo` of the Follow (when one was sent) and the row's deletion, in one batch. From then on
 * nothing the relay sends is taken as relayed, and nothing is sent to it.
 */
export async function removeRelay(
  d: DB,
  row: RelayRow,
  actorId: string | null,
  extra: D1PreparedStatement[] = [],
): Promise<void> {
  const t = now();
  const undo =
    row.kind && row.followUri && row.inboxUrl && actorId
      ? [
          outboxWrite(
            d,
            actorId,
            {
              type: "RelayUndo",
              uri: row.followUri,
              inbox: row.inboxUrl,
              object: row.kind === "litepub" && row.actorUri ? row.actorUri : PUBLIC_COLLECTION,
            },
            t,
          ),
        ]
      : [];
  await d.$client.batch([...undo, statement(d, d.delete(relays).where(eq(relays.id, row.id))), ...extra]);
}

/** Marks a relay for unfollowing by the cron (the command line's way). */
export async function markRelayRemoved(d: DB, url: string): Promise<void> {
  const row = await relayByUrl(d, url);
  if (!row) throw notFound("Relay not found");
  await d.update(relays).set({ state: "removing", updatedAt: now() }).where(eq(relays.id, row.id));
}

/** Failed look-ups of a row before it is marked `failed` (the admin re-follows it to try again). */
export const RELAY_ATTEMPTS = 5;
/** The wait before the next try of a row that failed `n` times: 5 min, 20 min, 45 min, 80 min. */
const RETRY_MS = 5 * 60_000;

/**
 * Rows the cron has to act on, unfollows first (they fetch nothing): URLs not looked up yet, not tried again before
 * their back-off has passed since the last failed try.
 */
export function relaysToSettle(d: DB, t: number = now()): Promise<RelayRow[]> {
  return d
    .select()
    .from(relays)
    .where(
      or(
        eq(relays.state, "removing"),
        and(
          isNull(relays.kind),
          eq(relays.state, "pending"),
          sql`${relays.updatedAt} + ${relays.attempts} * ${relays.attempts} * ${RETRY_MS} <= ${t}`,
        ),
      ),
    )
    .orderBy(sql`${relays.state} = 'removing' DESC`, relays.updatedAt)
    .limit(10);
}

/** A failed look-up of a row (not found, or no admin to send its Follow): backed off, `failed` after a few. */
export async function relayLookupFailed(d: DB, row: RelayRow, t: number = now()): Promise<void> {
  await d
    .update(relays)
    .set({
      attempts: sql`${relays.attempts} + 1`,
      state: sql`CASE WHEN ${relays.attempts} + 1 >= ${RELAY_ATTEMPTS} THEN 'failed' ELSE ${relays.state} END`,
      updatedAt: t,
    })
    .where(and(eq(relays.id, row.id), isNull(relays.kind)));
}

/** The active local admin whose outbox carries the instance actor's relay activities (the oldest). */
export async function relayActingAdmin(d: DB): Promise<string | null> {
  const row = await d.get<{ id: string }>(
    sql`SELECT a.id FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.is_admin = 1 AND a.deactivated = 0 ORDER BY a.id LIMIT 1`,
  );
  return row?.id ?? null;
}

/** An inbox URL compared as Mastodon-style relays spell it (with or without the trailing slash). */
const sameInbox = (a: string | null, b: string | null) =>
  a !== null && b !== null && a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

/**
 * A relay's answer to the instance actor's Follow (`followUri`): accepted or rejected. Only the relay answers: its
 * actor when known, else (a Mastodon-style relay, known by its inbox) the actor on the inbox's host whose own inbox
 * is the relay's inbox (pub-relay's, Activity-Relay's and aode-relay's `/actor` all name `/inbox`), which then
 * becomes the relay's actor. Any other actor on that host is not the relay. Answers whether it was a relay's Follow.
 */
export async function answerRelayFollow(
  d: DB,
  sender: { uri: string; inboxUrl: string | null },
  followUri: string,
  state: "accepted" | "rejected",
): Promise<boolean> {
  const row = await d.select().from(relays).where(eq(relays.followUri, followUri)).get();
  if (!row || row.state === "removing") return Boolean(row);
  if (row.actorUri ? row.actorUri !== sender.uri : !isMastodonRelayActor(row, sender)) return true;
  await d.update(relays).set({ state, actorUri: sender.uri, updatedAt: now() }).where(eq(relays.id, row.id));
  return true;
}

/** Whether `sender` is a Mastodon-style relay's actor: on its inbox's host, its own inbox the relay's. */
function isMastodonRelayActor(row: RelayRow, sender: { uri: string; inboxUrl: string | null }): boolean {
  if (row.inboxUrl === null || new URL(row.inboxUrl).origin !== new URL(sender.uri).origin) return false;
  return sameInbox(row.inboxUrl, sender.inboxUrl);
}

/** Any relay row (whatever its state: pending, rejected, being removed) whose actor is `uri`. */
export async function anyRelay(d: DB, actorUri: string): Promise<RelayRow | null> {
  return (await d.select().from(relays).where(eq(relays.actorUri, actorUri)).get()) ?? null;
}

/**
 * Whose key a forwarded activity's HTTP signature is (`keyId`), as far as relays go: `"relay"` when it is an
 * accepted relay's actor's own (the key id, without its fragment, is the relay's actor: `…/actor#main-key`, as
 * pub-relay, Activity-Relay and aode-relay name theirs); else the accepted relays on the key's origin whose actor
 * document must list the key for it to be theirs (the caller checks; none: not a relay's). Another actor on a
 * relay's host, or a relay not accepted (pending, rejected, being removed), is not a relay.
 */
export async function relayKeyCandidates(d: DB, keyId: string): Promise<"relay" | string[]> {
  const key = new URL(keyId);
  const bare = new URL(key.href);
  bare.hash = "";
  const rows = await d.all<{ actor_uri: string }>(
    sql`SELECT actor_uri FROM relays WHERE state = 'accepted' AND substr(actor_uri, 1, ${key.origin.length + 1}) = ${key.origin + "/"} LIMIT 5`,
  );
  if (rows.some((r) => r.actor_uri === bare.href)) return "relay";
  return rows.map((r) => r.actor_uri);
}

/**
 * A followed relay (its actor `senderUri`) follows the instance actor back: recorded, and answered with an
 * `Accept` of its Follow (`theirFollow`), signed by the instance actor. False when the sender is no relay here.
 */
export async function relayFollowsBack(
  d: DB,
  senderUri: string,
  inbox: string,
  theirFollow: string,
  actorId: string,
): Promise<boolean> {
  const row = await d
    .select()
    .from(relays)
    .where(and(eq(relays.actorUri, senderUri), sql`${relays.state} <> 'removing'`))
    .get();
  if (!row) return false;
  const t = now();
  await d.$client.batch([
    statement(d, d.update(relays).set({ followedBack: true, updatedAt: t }).where(eq(relays.id, row.id))),
    outboxWrite(d, actorId, { type: "RelayAccept", uri: theirFollow, inbox, actor: senderUri }, t),
  ]);
  return true;
}

/** The relay stopped following the instance actor back (its Undo). */
export async function relayUnfollowsBack(d: DB, senderUri: string): Promise<void> {
  await d.update(relays).set({ followedBack: false, updatedAt: now() }).where(eq(relays.actorUri, senderUri));
}
