/**
 * Inbound limits (issue 44): what one remote actor, and one remote host (all its actors together), may make this
 * instance store per hour and per UTC day, in statuses (a new post, an edit) and bytes (the post as parsed), most
 * tightly for actors nobody here follows ("strangers"). Without them one hostile server filled a 500 MB database in
 * about ten minutes with posts mentioning a local user (a mention is never "unsolicited" for the storage guard).
 *
 * - The figures are `inbound_usage` rows (migration 0052): one per UTC day and sender, the current hour beside the
 *   day. The check reads the actor's and its host's rows in the storing batch it joins (services/remote-statuses.ts),
 *   and what is stored writes those two rows in the post's own batch: nothing else is read or written for it, a
 *   repeat or an irrelevant post writes nothing, and an idle instance does nothing (the cron's hourly clean-up
 *   deletes past days).
 * - Over a limit the post is not stored; the inbox answers 429 with `Retry-After` (the end of the hour or of the
 *   day whose allowance is spent): Mastodon retries a 429 with its backoff, Fedify and GoToSocial wait for the
 *   `Retry-After`. The refusal is logged once per sender and hour (the row's `refused_hour`, one conditional
 *   update), and the isolate remembers it, so the sender's next activities are answered 429 at the inbox's door
 *   (`refusedAtDoor`) before any signature work, fetch or query.
 * - A stranger's post that mentions, addresses or answers someone here is solicited only within a small allowance
 *   (`MENTION_ALLOWANCE`); beyond it, it is unsolicited content for the storage guard (services/storage.ts), refused
 *   near the database's ceiling like a search's or a relay's.
 * Concurrent deliveries each check before either counts: the limits can be overshot by what arrives at the same
 * instant (a few posts), never by a flood.
 */
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { accounts, inboundUsage } from "../db/schema";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

export interface Allowance {
  statuses: number;
  bytes: number;
}
export interface Limit {
  hour: Allowance;
  day: Allowance;
}

/**
 * The limits. A single post larger than a byte allowance is still taken when it is the first of its window (it could
 * never be taken otherwise; the inbox refuses bodies over 1 MB), so a window holds at most its allowance plus one post.
 */
export const LIMITS: Record<"stranger" | "followed" | "hostStrangers" | "host", Limit> = {
  /** One actor nobody here follows. */
  stranger: { hour: { statuses: 20, bytes: 250_000 }, day: { statuses: 100, bytes: 1_000_000 } },
  /** One actor someone here follows (a busy account posts a few hundred times a day). */
  followed: { hour: { statuses: 300, bytes: 3_000_000 }, day: { statuses: 2_000, bytes: 20_000_000 } },
  /** All the actors of one host nobody here follows, together. */
  hostStrangers: { hour: { statuses: 60, bytes: 750_000 }, day: { statuses: 300, bytes: 3_000_000 } },
  /** Everything of one host. */
  host: { hour: { statuses: 3_000, bytes: 30_000_000 }, day: { statuses: 10_000, bytes: 60_000_000 } },
};

/** A stranger's posts concerning someone here counted as solicited, per hour and per day. */
export const MENTION_ALLOWANCE = { hour: 5, day: 20 };

type UsageRow = typeof inboundUsage.$inferSelect;

/** The time the limits count by (a test holds it inside one hour). */
export const limitsClock = { now: () => Date.now() };

export const dayOf = (t: number) => Math.floor(t / DAY);
export const hourOf = (t: number) => Math.floor(t / HOUR);

/** Who is counted: the author (an actor id) and its host. */
export interface Sender {
  actor: string;
  host: string;
}
export const senderOf = (actor: string): Sender => ({ actor, host: new URL(actor).hostname });

/** The author's and its host's rows of today, as a query that can join another batch. */
export const usageRows = (d: DB, s: Sender, t: number) =>
  d
    .select()
    .from(inboundUsage)
    .where(and(eq(inboundUsage.day, dayOf(t)), inArray(inboundUsage.sender, [s.actor, s.host])));

/** What is about to be stored. */
export interface Item {
  bytes: number;
  /** Someone here follows the author. */
  followed: boolean;
  /** It mentions, addresses or answers someone here. */
  concernsLocal: boolean;
}

export type Verdict =
  | { ok: true; /** A stranger's post concerning someone here, within the allowance. */ solicitedMention: boolean }
  | {
      ok: false;
      /** The row whose allowance is spent (the actor, or the host). */
      sender: string;
      /** Who is answered 429 at the door meanwhile: the host only when the host's total is spent. */
      door: string;
      what: string;
      retryAfter: number;
    };

/** The size counted for a post: its parsed form (content, summary, tags, media, poll), in UTF-8 bytes. */
export const itemBytes = (parsed: unknown) => new TextEncoder().encode(JSON.stringify(parsed)).byteLength;

interface Used {
  statuses: number;
  bytes: number;
}
const used = (row: UsageRow | undefined, t: number, strangers = false): { hour: Used; day: Used } => {
  const thisHour = row?.hour === hourOf(t);
  return {
    day: {
      statuses: (strangers ? row?.strangerStatuses : row?.statuses) ?? 0,
      bytes: (strangers ? row?.strangerBytes : row?.bytes) ?? 0,
    },
    hour: {
      statuses: thisHour ? ((strangers ? row?.hourStrangerStatuses : row?.hourStatuses) ?? 0) : 0,
      bytes: thisHour ? ((strangers ? row?.hourStrangerBytes : row?.hourBytes) ?? 0) : 0,
    },
  };
};

/** The window (`hour` or `day`) whose allowance one more item of `bytes` would exceed, or null. */
function spent(u: { hour: Used; day: Used }, limit: Limit, bytes: number): "hour" | "day" | null {
  for (const w of ["day", "hour"] as const) {
    const a = limit[w];
    if (u[w].statuses + 1 > a.statuses || (u[w].bytes > 0 && u[w].bytes + bytes > a.bytes)) return w;
  }
  return null;
}

const secondsTo = (end: number, t: number) => Math.max(1, Math.ceil((end - t) / 1000));

/** Whether `item` may be stored, given today's rows of its author and host. */
export function judge(rows: UsageRow[], s: Sender, item: Item, t: number): Verdict {
  const actorRow = rows.find((r) => r.sender === s.actor);
  const hostRow = rows.find((r) => r.sender === s.host);
  const checks: [string, string, Limit, { hour: Used; day: Used }, string][] = [
    [s.actor, s.actor, item.followed ? LIMITS.followed : LIMITS.stranger, used(actorRow, t), "the actor's"],
    [s.host, s.host, LIMITS.host, used(hostRow, t), "the host's"],
  ];
  if (!item.followed)
    checks.push([s.host, s.actor, LIMITS.hostStrangers, used(hostRow, t, true), "the host's unfollowed actors'"]);
  for (const [sender, door, limit, u, whose] of checks) {
    const w = spent(u, limit, item.bytes);
    if (!w) continue;
    const end = w === "hour" ? (hourOf(t) + 1) * HOUR : (dayOf(t) + 1) * DAY;
    return { ok: false, sender, door, what: `${whose} ${w}ly allowance`, retryAfter: secondsTo(end, t) };
  }
  const hourMentions = actorRow?.hour === hourOf(t) ? actorRow.hourMentions : 0;
  const solicitedMention =
    !item.followed &&
    item.concernsLocal &&
    hourMentions < MENTION_ALLOWANCE.hour &&
    (actorRow?.mentions ?? 0) < MENTION_ALLOWANCE.day;
  return { ok: true, solicitedMention };
}

/** Counts a stored item against its author and host: one upsert, two rows, to join the storing batch. */
export function countStatement(d: DB, s: Sender, item: Item, solicitedMention: boolean, t: number) {
  const b = item.bytes;
  const ss = item.followed ? 0 : 1;
  const sb = item.followed ? 0 : b;
  const m = solicitedMention ? 1 : 0;
  const [day, hour] = [dayOf(t), hourOf(t)];
  // SET reads the row as it was: `hour` in each CASE is the hour the row counted until now.
  return statement(
    d,
    sql`INSERT INTO inbound_usage (day, sender, statuses, bytes, stranger_statuses, stranger_bytes, mentions, hour,
        hour_statuses, hour_bytes, hour_stranger_statuses, hour_stranger_bytes, hour_mentions)
      VALUES (${day}, ${s.actor}, 1, ${b}, ${ss}, ${sb}, ${m}, ${hour}, 1, ${b}, ${ss}, ${sb}, ${m}),
        (${day}, ${s.host}, 1, ${b}, ${ss}, ${sb}, 0, ${hour}, 1, ${b}, ${ss}, ${sb}, 0)
      ON CONFLICT (day, sender) DO UPDATE SET
        statuses = statuses + 1, bytes = bytes + excluded.bytes,
        stranger_statuses = stranger_statuses + excluded.stranger_statuses,
        stranger_bytes = stranger_bytes + excluded.stranger_bytes,
        mentions = mentions + excluded.mentions,
        hour_statuses = CASE WHEN hour = excluded.hour THEN hour_statuses ELSE 0 END + 1,
        hour_bytes = CASE WHEN hour = excluded.hour THEN hour_bytes ELSE 0 END + excluded.hour_bytes,
        hour_stranger_statuses = CASE WHEN hour = excluded.hour THEN hour_stranger_statuses ELSE 0 END
          + excluded.hour_stranger_statuses,
        hour_stranger_bytes = CASE WHEN hour = excluded.hour THEN hour_stranger_bytes ELSE 0 END
          + excluded.hour_stranger_bytes,
        hour_mentions = CASE WHEN hour = excluded.hour THEN hour_mentions ELSE 0 END + excluded.hour_mentions,
        hour = excluded.hour`,
  );
}

/** Where a refusal is logged (a test listens here). */
export const refusalLog = { write: (line: string) => console.log(line) };

/** Senders answered 429 at the door until a time (ms), per isolate; forgotten once past. */
const refusedUntil = new Map<string, number>();
const REMEMBERED_MAX = 2_000;

/**
 * Records a refusal: remembered by the isolate for the door, and logged once per sender and hour (the row's
 * `refused_hour`, set by a conditional update that writes nothing when it is set already).
 */
export async function recordRefusal(d: DB, v: Extract<Verdict, { ok: false }>, t: number): Promise<void> {
  if (refusedUntil.size >= REMEMBERED_MAX) refusedUntil.clear();
  refusedUntil.set(v.door, t + v.retryAfter * 1000);
  const hour = hourOf(t);
  const { meta } = await statement(
    d,
    sql`UPDATE inbound_usage SET refused_hour = ${hour}, refused_hours = refused_hours + 1
      WHERE day = ${dayOf(t)} AND sender = ${v.sender} AND refused_hour IS NOT ${hour}`,
  ).run();
  if (meta.changes)
    refusalLog.write(`inbox: refusing what ${v.sender} sends (${v.what} is spent), for ${v.retryAfter} s at least`);
}

/** Seconds the door answers 429 for an activity from `actor` (its own refusal, or its host's), or null. */
export function refusedAtDoor(actor: string, t = limitsClock.now()): number | null {
  let host: string;
  try {
    host = new URL(actor).hostname;
  } catch {
    return null;
  }
  for (const key of [actor, host]) {
    const until = refusedUntil.get(key);
    if (until === undefined) continue;
    if (until > t) return secondsTo(until, t);
    refusedUntil.delete(key);
  }
  return null;
}

/** The 429 a refused activity is answered with. */
export const throttledResponse = (retryAfter: number) =>
  new Response(JSON.stringify({ error: "Throttled" }), {
    status: 429,
    headers: { "Content-Type": "application/json; charset=utf-8", "Retry-After": String(retryAfter) },
  });

/** Past days' rows (the cron's hourly clean-up): a range of the primary key. */
export const pruneStatement = (d: DB, t: number) =>
  statement(d, sql`DELETE FROM inbound_usage WHERE day < ${dayOf(t)}`);

/** The admin view: today's (UTC) top senders by bytes stored, hosts and actors apart. */
export function topSendersQueries(d: DB, t: number, n = 10) {
  const cols = {
    sender: inboundUsage.sender,
    statuses: inboundUsage.statuses,
    bytes: inboundUsage.bytes,
    strangerStatuses: inboundUsage.strangerStatuses,
    strangerBytes: inboundUsage.strangerBytes,
    refusedHours: inboundUsage.refusedHours,
  };
  const today = eq(inboundUsage.day, dayOf(t));
  return [
    d
      .select(cols)
      .from(inboundUsage)
      .where(and(today, sql`instr(${inboundUsage.sender}, '/') = 0`))
      .orderBy(desc(inboundUsage.bytes))
      .limit(n),
    d
      .select({
        ...cols,
        accountId: accounts.id,
        acct: sql<string | null>`${accounts.username} || '@' || ${accounts.domain}`,
      })
      .from(inboundUsage)
      .leftJoin(accounts, eq(accounts.uri, inboundUsage.sender))
      .where(and(today, sql`instr(${inboundUsage.sender}, '/') > 0`))
      .orderBy(desc(inboundUsage.bytes))
      .limit(n),
  ] as const;
}

type TopRow = {
  sender: string;
  statuses: number;
  bytes: number;
  strangerStatuses: number;
  strangerBytes: number;
  refusedHours: number;
};

/** The admin view's shape (`inbound_senders` of the admin `stats`). */
export function topSendersReport(
  t: number,
  hosts: TopRow[],
  actors: (TopRow & { accountId: string | null; acct: string | null })[],
) {
  const figures = (r: TopRow) => ({
    statuses: r.statuses,
    bytes: r.bytes,
    unfollowed_statuses: r.strangerStatuses,
    unfollowed_bytes: r.strangerBytes,
    refused_hours: r.refusedHours,
  });
  return {
    day: new Date(dayOf(t) * DAY).toISOString().slice(0, 10),
    hosts: hosts.map((r) => ({ host: r.sender, ...figures(r) })),
    actors: actors.map((r) => ({ uri: r.sender, account_id: r.accountId, acct: r.acct, ...figures(r) })),
  };
}
