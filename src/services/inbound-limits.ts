/**
 * Inbound limits (issue 44): what one remote actor, and one remote host (all its actors together), may make this
 * instance store per hour and per UTC day, in statuses (a new post, an edit) and bytes (the post as parsed), most
 * tightly for actors nobody here follows ("strangers"). Without them one hostile server filled a 500 MB database in
 * about ten minutes with posts mentioning a local user (a mention is never "unsolicited" for the storage guard).
 *
 * - The figures are `inbound_usage` rows (migration 0052): one per UTC day and sender, the current hour beside the
 *   day. The check reads the actor's and its host's rows in the storing batch it joins (services/remote-statuses.ts),
 *   plus what this isolate counted and has not written yet (`pending`). A stored post is counted there; a sender's
 *   counts are written (one upsert, in the storing batch of the post that brings them to FLUSH_EVERY) every
 *   FLUSH_EVERY posts, or with a refusal. So a post writes no row here nine times in ten, and a sender that posts
 *   now and then (most of a relay's authors) none at all (issue 42: these two rows were 10% of the writes of ten
 *   users sharing a relay). What an isolate has not written is lost with it: the limits can be overshot by up to
 *   FLUSH_EVERY - 1 posts per sender and isolate, never by a flood. A repeat or an irrelevant post writes nothing,
 *   and an idle instance does nothing (the cron's hourly clean-up deletes past days).
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
import { inJson, statement } from "../db/client";
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
  const actorRow = withPending(
    rows.find((r) => r.sender === s.actor),
    s.actor,
    t,
  );
  const hostRow = withPending(
    rows.find((r) => r.sender === s.host),
    s.host,
    t,
  );
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

/** Counts written every this many posts of a sender (or with a refusal): see the module's header. */
export const FLUSH_EVERY = 10;

/** A sender's counts not written yet: the day's, and the hour's (`hour`) beside them. */
type Counts = Pick<
  UsageRow,
  | "day"
  | "hour"
  | "statuses"
  | "bytes"
  | "strangerStatuses"
  | "strangerBytes"
  | "mentions"
  | "hourStatuses"
  | "hourBytes"
  | "hourStrangerStatuses"
  | "hourStrangerBytes"
  | "hourMentions"
>;

/** What this isolate counted and has not written, per sender (exported for the budget tests to start clean). */
export const pending = new Map<string, Counts>();
export const PENDING_MAX = 5_000;

const noCounts = (day: number, hour: number): Counts => ({
  day,
  hour,
  statuses: 0,
  bytes: 0,
  strangerStatuses: 0,
  strangerBytes: 0,
  mentions: 0,
  hourStatuses: 0,
  hourBytes: 0,
  hourStrangerStatuses: 0,
  hourStrangerBytes: 0,
  hourMentions: 0,
});

/** `sender`'s pending counts of the day of `t` (a past day's are dropped: the limits count today only). */
function pendingOf(sender: string, t: number): Counts | undefined {
  const p = pending.get(sender);
  if (p && p.day !== dayOf(t)) pending.delete(sender);
  return p?.day === dayOf(t) ? p : undefined;
}

/** The row as the check sees it: what is written plus what this isolate has not written yet. */
export function withPending(row: UsageRow | undefined, sender: string, t: number): UsageRow | undefined {
  const p = pendingOf(sender, t);
  if (!p) return row;
  const r: UsageRow = row ?? { sender, ...noCounts(p.day, p.hour), refusedHour: null, refusedHours: 0 };
  const sameHour = r.hour === p.hour;
  const hour = (k: "hourStatuses" | "hourBytes" | "hourStrangerStatuses" | "hourStrangerBytes" | "hourMentions") =>
    (sameHour ? r[k] : r.hour > p.hour ? r[k] : 0) + (r.hour > p.hour ? 0 : p[k]);
  return {
    ...r,
    statuses: r.statuses + p.statuses,
    bytes: r.bytes + p.bytes,
    strangerStatuses: r.strangerStatuses + p.strangerStatuses,
    strangerBytes: r.strangerBytes + p.strangerBytes,
    mentions: r.mentions + p.mentions,
    hour: Math.max(r.hour, p.hour),
    hourStatuses: hour("hourStatuses"),
    hourBytes: hour("hourBytes"),
    hourStrangerStatuses: hour("hourStrangerStatuses"),
    hourStrangerBytes: hour("hourStrangerBytes"),
    hourMentions: hour("hourMentions"),
  };
}

/** Adds one item to `sender`'s pending counts. */
function addPending(sender: string, item: Item, mention: boolean, t: number): Counts {
  const [day, hour] = [dayOf(t), hourOf(t)];
  let p = pendingOf(sender, t);
  if (!p) {
    // Full: the oldest sender's counts go, not everyone's (a host making up actors must not wipe the others').
    if (pending.size >= PENDING_MAX) pending.delete(pending.keys().next().value!);
    p = noCounts(day, hour);
    pending.set(sender, p);
  }
  if (p.hour !== hour) Object.assign(p, { ...noCounts(day, hour), ...dayPart(p) });
  const b = item.bytes;
  const stranger = item.followed ? 0 : 1;
  const m = mention ? 1 : 0;
  p.statuses++;
  p.bytes += b;
  p.strangerStatuses += stranger;
  p.strangerBytes += stranger * b;
  p.mentions += m;
  p.hourStatuses++;
  p.hourBytes += b;
  p.hourStrangerStatuses += stranger;
  p.hourStrangerBytes += stranger * b;
  p.hourMentions += m;
  return p;
}

const dayPart = (p: Counts) => ({
  statuses: p.statuses,
  bytes: p.bytes,
  strangerStatuses: p.strangerStatuses,
  strangerBytes: p.strangerBytes,
  mentions: p.mentions,
});

/** Adds `counts` to `sender`'s row of their day (made when missing): one upsert. */
function writeStatement(d: DB, sender: string, c: Counts) {
  // SET reads the row as it was: `hour` in each CASE is the hour the row counted until now. A row already on a later
  // hour (another isolate's clock ahead) keeps its hour's figures.
  const h = (col: string, v: number) =>
    sql.raw(`CASE WHEN hour = ${c.hour} THEN ${col} + ${v} WHEN hour > ${c.hour} THEN ${col} ELSE ${v} END`);
  return statement(
    d,
    sql`INSERT INTO inbound_usage (day, sender, statuses, bytes, stranger_statuses, stranger_bytes, mentions, hour,
        hour_statuses, hour_bytes, hour_stranger_statuses, hour_stranger_bytes, hour_mentions)
      VALUES (${c.day}, ${sender}, ${c.statuses}, ${c.bytes}, ${c.strangerStatuses}, ${c.strangerBytes}, ${c.mentions},
        ${c.hour}, ${c.hourStatuses}, ${c.hourBytes}, ${c.hourStrangerStatuses}, ${c.hourStrangerBytes}, ${c.hourMentions})
      ON CONFLICT (day, sender) DO UPDATE SET
        statuses = statuses + excluded.statuses, bytes = bytes + excluded.bytes,
        stranger_statuses = stranger_statuses + excluded.stranger_statuses,
        stranger_bytes = stranger_bytes + excluded.stranger_bytes,
        mentions = mentions + excluded.mentions,
        hour_statuses = ${h("hour_statuses", c.hourStatuses)},
        hour_bytes = ${h("hour_bytes", c.hourBytes)},
        hour_stranger_statuses = ${h("hour_stranger_statuses", c.hourStrangerStatuses)},
        hour_stranger_bytes = ${h("hour_stranger_bytes", c.hourStrangerBytes)},
        hour_mentions = ${h("hour_mentions", c.hourMentions)},
        hour = max(hour, excluded.hour)`,
  );
}

/**
 * Counts a stored item against its author and host, in this isolate; answers the statements that write what
 * reached FLUSH_EVERY (none, most times), to join the storing batch.
 */
export function countStatements(d: DB, s: Sender, item: Item, solicitedMention: boolean, t: number) {
  const out = [];
  for (const [sender, mention] of [
    [s.actor, solicitedMention],
    [s.host, false],
  ] as const) {
    const p = addPending(sender, item, mention, t);
    if (p.statuses < FLUSH_EVERY) continue;
    pending.delete(sender);
    out.push(writeStatement(d, sender, p));
  }
  return out;
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
  // What this isolate counted for the sender is written first: the refusal is marked on the row it makes.
  const counts = pendingOf(v.sender, t);
  pending.delete(v.sender);
  const refusal = statement(
    d,
    sql`UPDATE inbound_usage SET refused_hour = ${hour}, refused_hours = refused_hours + 1
      WHERE day = ${dayOf(t)} AND sender = ${v.sender} AND refused_hour IS NOT ${hour}`,
  );
  const results = await d.$client.batch([...(counts ? [writeStatement(d, v.sender, counts)] : []), refusal]);
  if (results.at(-1)?.meta.changes)
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

/** This isolate's pending counts of today, of hosts or of actors (an actor is a URL), the most bytes first. */
function pendingToday(t: number, actors: boolean, n: number): [string, Counts][] {
  return [...pending]
    .filter(([sender, c]) => c.day === dayOf(t) && sender.includes("/") === actors)
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, n);
}

/**
 * The admin view: today's (UTC) top senders by bytes stored, hosts and actors apart, from the rows written; the
 * report adds what this isolate counted and has not written yet (a sender that posts now and then has no row).
 */
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
  const acct = sql<string | null>`${accounts.username} || '@' || ${accounts.domain}`;
  return [
    d
      .select(cols)
      .from(inboundUsage)
      .where(and(today, sql`instr(${inboundUsage.sender}, '/') = 0`))
      .orderBy(desc(inboundUsage.bytes))
      .limit(n),
    d
      .select({ ...cols, accountId: accounts.id, acct })
      .from(inboundUsage)
      .leftJoin(accounts, eq(accounts.uri, inboundUsage.sender))
      .where(and(today, sql`instr(${inboundUsage.sender}, '/') > 0`))
      .orderBy(desc(inboundUsage.bytes))
      .limit(n),
    // The accounts of the actors only this isolate has counted so far.
    d
      .select({ uri: accounts.uri, accountId: accounts.id, acct })
      .from(accounts)
      .where(
        inJson(
          accounts.uri,
          pendingToday(t, true, n).map(([sender]) => sender),
        ),
      ),
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
  hostRows: TopRow[],
  actorRows: (TopRow & { accountId: string | null; acct: string | null })[],
  pendingAccounts: { uri: string; accountId: string; acct: string | null }[] = [],
  n = 10,
) {
  const blank = (sender: string) => ({
    sender,
    statuses: 0,
    bytes: 0,
    strangerStatuses: 0,
    strangerBytes: 0,
    refusedHours: 0,
  });
  // What is written, plus what this isolate counted and has not written yet; the biggest n of both.
  const top = <R extends TopRow>(rows: R[], actors: boolean, extra: (sender: string) => R): R[] => {
    const bySender = new Map(rows.map((r) => [r.sender, r]));
    for (const [sender] of pendingToday(t, actors, n)) if (!bySender.has(sender)) bySender.set(sender, extra(sender));
    return [...bySender.values()]
      .map((r) => {
        const p = pendingOf(r.sender, t);
        if (!p) return r;
        const { statuses, bytes, strangerStatuses, strangerBytes } = p;
        return {
          ...r,
          statuses: r.statuses + statuses,
          bytes: r.bytes + bytes,
          strangerStatuses: r.strangerStatuses + strangerStatuses,
          strangerBytes: r.strangerBytes + strangerBytes,
        };
      })
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, n);
  };
  const figures = (r: TopRow) => ({
    statuses: r.statuses,
    bytes: r.bytes,
    unfollowed_statuses: r.strangerStatuses,
    unfollowed_bytes: r.strangerBytes,
    refused_hours: r.refusedHours,
  });
  const accountOf = new Map(pendingAccounts.map((a) => [a.uri, a]));
  const hosts = top(hostRows, false, blank);
  const actors = top(actorRows, true, (sender) => ({
    ...blank(sender),
    accountId: accountOf.get(sender)?.accountId ?? null,
    acct: accountOf.get(sender)?.acct ?? null,
  }));
  return {
    day: new Date(dayOf(t) * DAY).toISOString().slice(0, 10),
    hosts: hosts.map((r) => ({ host: r.sender, ...figures(r) })),
    actors: actors.map((r) => ({ uri: r.sender, account_id: r.accountId, acct: r.acct, ...figures(r) })),
  };
}
