/**
 * The daily cost model of bench/cost.ts (issue 42): what a day of an instance costs, as each measured action's
 * figures (D1 rows, queries, Worker and Durable Object requests…) times how often a day it happens, against the
 * Workers Free plan's daily caps. Pure arithmetic, checked by scripts/cost-model.test.ts; the bench feeds it.
 *
 * Action names are those of test/budgets.test.ts where both measure the same action.
 */

import { emptyUsage, USAGE_KEYS, type Usage } from "../src/lib/meter";
import { FLUSH_EVERY } from "../src/services/inbound-limits";

/** One action's cost, as /__cost counts it: the meter's own figures (src/lib/meter.ts). */
export type Cost = Usage;
export const COST_KEYS = USAGE_KEYS;
export const zero = emptyUsage;

/**
 * The Workers Free plan's daily caps the model is held against (checked 2026 on Cloudflare's pages):
 * D1 rows read and written: https://developers.cloudflare.com/d1/platform/pricing/ ("5 million / day",
 * "100,000 / day"); Worker requests: https://developers.cloudflare.com/workers/platform/limits/ ("100,000/day");
 * Durable Object requests: https://developers.cloudflare.com/durable-objects/platform/pricing/ ("100,000 / day",
 * HTTP requests, RPC sessions, WebSocket messages and alarms). All reset at 00:00 UTC.
 */
export const FREE_PLAN = {
  rowsRead: 5_000_000,
  rowsWritten: 100_000,
  requests: 100_000,
  durableObjectRequests: 100_000,
} as const;
export type CapKey = keyof typeof FREE_PLAN;
export const CAP_KEYS = Object.keys(FREE_PLAN) as CapKey[];

/** The actions the model counts (bench/cost.ts measures each under this name). */
export const ACTIONS = {
  inboundCreate: "inbound Create from a followed account",
  inboundCreate10: "inbound Create, author followed by 10 local users",
  relayKnown: "inbound relay Announce (author stored)",
  relayNew: "inbound relay Announce (new author)",
  inboundLike: "inbound Like of a local post",
  inboundBoost: "inbound Announce (boost) of a local post",
  inboundReply: "inbound reply to a local post",
  cronIdle: "cron: idle minute",
  cronHourly: "cron: hourly run (minute 30)",
  cronHourlyIdle: "cron: hourly run, nothing new to prune",
  cronMidnight: "cron: 00:00 UTC",
  cronMidnightHourly: "cron: 00:30 UTC",
  homePage: "home timeline page (20)",
  homePoll: "home poll with since_id, nothing new",
  notificationsPage: "notifications page (20)",
  notificationsPoll: "notifications poll with since_id, nothing new",
  publicPage: "public timeline page (20)",
  frontPage: "GET / (a browser)",
  post0: "post, no local followers",
  post200: "post, 200 local followers",
  favourite: "favourite",
  boost: "boost",
  /** Derived, not run: (hourly run - hourly run with nothing to prune) / the statuses the first pruned. */
  prune: "retention: one remote status pruned",
  translate: "translate a status (uncached)",
  translateCached: "translate a status (cached)",
} as const;

export type Figures = Record<string, Cost>;

/** The line of the inbound counters' writes (rows, not an action: see `dayLines`). */
export const INBOUND_COUNTERS = "inbound counters";

export function add(a: Cost, b: Cost, times = 1): Cost {
  const out = zero();
  for (const k of COST_KEYS) out[k] = a[k] + b[k] * times;
  return out;
}

/** The cost at `n` on the straight line through (n0, a) and (n1, b): e.g. a post's cost by its local followers. */
export function between(a: Cost, n0: number, b: Cost, n1: number, n: number): Cost {
  const out = zero();
  const f = (n - n0) / (n1 - n0);
  for (const k of COST_KEYS) out[k] = a[k] + (b[k] - a[k]) * f;
  return out;
}

/** Who uses the instance, and how, for a day. */
export interface Population {
  users: number;
  /** Remote accounts each user follows. */
  followsPerUser: number;
  /** Share of a user's follows that another user follows too (0.5: half of each further user's are new). */
  overlap: number;
  /** Posts (boosts included) a followed remote account makes a day. */
  postsPerFollowedPerDay: number;
  /** Posts the instance's one relay brings a day (shared by everyone). */
  relayPostsPerDay: number;
  /** Share of relayed posts whose author is not stored yet (fetched and stored with the post). */
  relayNewAuthorShare: number;
  /** The client polls home and notifications every `pollSeconds` for `pollHours` a day (Pleroma-FE). */
  pollSeconds: number;
  pollHours: number;
  /** Opening the app: a home page, a notifications page, `GET /`. */
  opensPerUser: number;
  postsPerUser: number;
  favouritesPerUser: number;
  boostsPerUser: number;
  /** What others do to each user's posts a day. */
  inboundLikesPerUser: number;
  inboundBoostsPerUser: number;
  inboundRepliesPerUser: number;
}

/** One person following 300 accounts, with one small relay (issue 42's scenario a). */
export const ONE_PERSON: Population = {
  users: 1,
  followsPerUser: 300,
  overlap: 0.5,
  postsPerFollowedPerDay: 2,
  relayPostsPerDay: 2000,
  relayNewAuthorShare: 0.25,
  pollSeconds: 30,
  pollHours: 4,
  opensPerUser: 2,
  postsPerUser: 5,
  favouritesPerUser: 30,
  boostsPerUser: 10,
  inboundLikesPerUser: 20,
  inboundBoostsPerUser: 5,
  inboundRepliesPerUser: 5,
};

export interface Line {
  what: string;
  /** The measured actions it is made of, for the record. */
  from: string;
  perDay: number;
  each: Cost;
}

const need = (f: Figures, name: string): Cost => {
  const c = f[name];
  if (!c) throw new Error(`no figure for "${name}"`);
  return c;
};

/**
 * The cron's day: 1,440 runs, of which 24 at minute 30 (one of them at 00:30) and one at 00:00. On an idle instance
 * nothing new ages past the retention, and the hourly runs find nothing to prune. Where remote posts arrive, as
 * many go a day, 30 days later, as arrive (`storedPerDay`), each at the measured cost of pruning one (a deleted row
 * is a row written): the bench's hourly run pruned its seed's hour (about 28 statuses), not the day's.
 */
export function cronLines(f: Figures, idle = false, storedPerDay = 0): Line[] {
  const ordinary = {
    what: "cron, ordinary minutes",
    from: ACTIONS.cronIdle,
    perDay: 1440 - 25,
    each: need(f, ACTIONS.cronIdle),
  };
  const midnight = {
    what: "cron, 00:00 UTC",
    from: ACTIONS.cronMidnight,
    perDay: 1,
    each: need(f, ACTIONS.cronMidnight),
  };
  if (idle)
    return [
      ordinary,
      {
        what: "cron, minute 30 (hourly jobs, nothing to prune)",
        from: ACTIONS.cronHourlyIdle,
        perDay: 24,
        each: need(f, ACTIONS.cronHourlyIdle),
      },
      midnight,
    ];
  return [
    ordinary,
    {
      what: "cron, minute 30 (hourly jobs; their pruning below)",
      from: ACTIONS.cronHourlyIdle,
      perDay: 23,
      each: need(f, ACTIONS.cronHourlyIdle),
    },
    midnight,
    { what: "cron, 00:30 UTC", from: ACTIONS.cronMidnightHourly, perDay: 1, each: need(f, ACTIONS.cronMidnightHourly) },
    {
      // Part of the hourly runs: no request of its own. (00:30's run, measured whole, prunes the 24th hour's.)
      what: `retention: remote posts pruned 30 days after they came (as many as arrive, ${Math.round(storedPerDay)} a day)`,
      from: ACTIONS.prune,
      perDay: (storedPerDay * 23) / 24,
      each: { ...need(f, ACTIONS.prune), requests: 0 },
    },
  ];
}

/** Distinct remote accounts the users follow: the first user's, then (1 - overlap) of each other user's. */
export const distinctFollowed = (p: Population) => p.followsPerUser * (1 + (p.users - 1) * (1 - p.overlap));

/** A day of `p` as lines of (action, times a day); the idle cron included. */
export function dayLines(f: Figures, p: Population): Line[] {
  const u = p.users;
  const followed = distinctFollowed(p);
  // Each inbound post reaches this many local followers on average (fanned out to their homes).
  const readersPerPost = (u * p.followsPerUser) / followed;
  const create = between(need(f, ACTIONS.inboundCreate), 1, need(f, ACTIONS.inboundCreate10), 10, readersPerPost);
  // A local post reaches the other local users (all assumed to follow each other).
  const post = between(need(f, ACTIONS.post0), 0, need(f, ACTIONS.post200), 200, u - 1);
  const polls = (p.pollHours * 3600) / p.pollSeconds;
  const relay = (share: number, name: string) => ({ perDay: p.relayPostsPerDay * share, each: need(f, name) });
  const line = (what: string, from: string, perDay: number, each = need(f, from)): Line => ({
    what,
    from,
    perDay,
    each,
  });
  return [
    line(
      `inbound posts from ${Math.round(followed)} followed accounts (${readersPerPost.toFixed(2)} local readers each)`,
      `${ACTIONS.inboundCreate} / ${ACTIONS.inboundCreate10}`,
      followed * p.postsPerFollowedPerDay,
      create,
    ),
    {
      what: "relayed posts, author stored",
      from: ACTIONS.relayKnown,
      ...relay(1 - p.relayNewAuthorShare, ACTIONS.relayKnown),
    },
    { what: "relayed posts, new author", from: ACTIONS.relayNew, ...relay(p.relayNewAuthorShare, ACTIONS.relayNew) },
    {
      // Not in a measured post's figures (the bench's senders stay under FLUSH_EVERY posts): each sender's and its
      // host's counters are written every FLUSH_EVERY posts (services/inbound-limits.ts); at most this many.
      what: `inbound counters written (2 rows per ${FLUSH_EVERY} posts at most)`,
      from: INBOUND_COUNTERS,
      perDay: ((followed * p.postsPerFollowedPerDay + p.relayPostsPerDay) * 2) / FLUSH_EVERY,
      each: { ...zero(), rowsWritten: 1 },
    },
    line("inbound likes of local posts", ACTIONS.inboundLike, u * p.inboundLikesPerUser),
    line("inbound boosts of local posts", ACTIONS.inboundBoost, u * p.inboundBoostsPerUser),
    line("inbound replies to local posts", ACTIONS.inboundReply, u * p.inboundRepliesPerUser),
    line("home polls (nothing new)", ACTIONS.homePoll, u * polls),
    line("notification polls (nothing new)", ACTIONS.notificationsPoll, u * polls),
    line("home pages (app opened)", ACTIONS.homePage, u * p.opensPerUser),
    line("notification pages (app opened)", ACTIONS.notificationsPage, u * p.opensPerUser),
    line("GET / (app opened)", ACTIONS.frontPage, u * p.opensPerUser),
    line(`posts (${u - 1} local followers each)`, `${ACTIONS.post0} / ${ACTIONS.post200}`, u * p.postsPerUser, post),
    line("favourites", ACTIONS.favourite, u * p.favouritesPerUser),
    line("boosts", ACTIONS.boost, u * p.boostsPerUser),
    ...cronLines(f, false, followed * p.postsPerFollowedPerDay + p.relayPostsPerDay),
  ];
}

export interface Day {
  lines: (Line & { total: Cost })[];
  total: Cost;
  /** Each Free cap's share used, in percent. */
  percent: Record<CapKey, number>;
}

export function day(lines: Line[]): Day {
  let total = zero();
  const out = lines.map((l) => {
    const t = add(zero(), l.each, l.perDay);
    total = add(total, t);
    return { ...l, total: t };
  });
  const percent = {} as Record<CapKey, number>;
  for (const k of CAP_KEYS) percent[k] = (total[k] / FREE_PLAN[k]) * 100;
  return { lines: out, total, percent };
}

/** A target of issue 42: `scenario`'s day within `max` percent of each named cap. */
export interface Target {
  scenario: string;
  caps: CapKey[];
  max: number;
}

export const TARGETS: Target[] = [
  { scenario: "a", caps: ["rowsRead"], max: 20 },
  { scenario: "a", caps: ["rowsWritten"], max: 50 },
  { scenario: "idle", caps: CAP_KEYS, max: 2 },
  { scenario: "b", caps: CAP_KEYS, max: 50 },
];

export interface Scenario {
  key: string;
  title: string;
  population: Population | null;
}

export const SCENARIOS: Scenario[] = [
  { key: "idle", title: "an idle day (the cron only)", population: null },
  { key: "a", title: "(a) one person with a relay", population: ONE_PERSON },
  { key: "b", title: "(b) 10 users sharing the relay", population: { ...ONE_PERSON, users: 10 } },
  { key: "c", title: "(c) 100 users sharing the relay", population: { ...ONE_PERSON, users: 100 } },
];

export function scenarioDay(f: Figures, s: Scenario): Day {
  return day(s.population ? dayLines(f, s.population) : cronLines(f, true));
}

/** Each target with the share the model gives and whether it is met. */
export function checkTargets(
  days: Record<string, Day>,
): { target: Target; cap: CapKey; percent: number; met: boolean }[] {
  return TARGETS.flatMap((t) =>
    t.caps.map((cap) => {
      const percent = days[t.scenario]!.percent[cap];
      return { target: t, cap, percent, met: percent <= t.max };
    }),
  );
}

/** The model's assumptions, in words (printed by the bench, and in bench/README.md). */
export function assumptions(p: Population = ONE_PERSON): string[] {
  return [
    `Each user follows ${p.followsPerUser} remote accounts; a further user's follows overlap the others' by ${p.overlap * 100}% (10 users: ${distinctFollowed({ ...p, users: 10 })} distinct accounts, 100 users: ${distinctFollowed({ ...p, users: 100 })}).`,
    `Each followed account posts ${p.postsPerFollowedPerDay} times a day (boosts included, counted at an inbound Create's cost); an inbound post's cost grows linearly with its local readers between the measured 1 and 10.`,
    `One relay brings ${p.relayPostsPerDay} posts a day whatever the number of users (each stored once); ${p.relayNewAuthorShare * 100}% of them are by an author not stored yet.`,
    `Each user: the client polls home and notifications (since_id, nothing new) every ${p.pollSeconds} s for ${p.pollHours} h (Pleroma-FE), and opens the app ${p.opensPerUser} times (a home page, a notifications page, GET /); posts ${p.postsPerUser} times, favourites ${p.favouritesPerUser}, boosts ${p.boostsPerUser}; receives ${p.inboundLikesPerUser} likes, ${p.inboundBoostsPerUser} boosts and ${p.inboundRepliesPerUser} replies from remote accounts.`,
    "Local users all follow each other: a post's cost grows linearly with its local followers between the measured 0 and 200.",
    "The cron runs every minute all day: 1,415 ordinary minutes, 23 at minute 30 (hourly jobs), 00:00 and 00:30 UTC as measured; in a steady state the retention prunes as many remote posts a day as arrive (30 days later), each at the measured cost of pruning one.",
    "Not counted: remote followers (deliveries: Durable Object requests and subrequests, no D1 rows beyond the outbox), streaming, media, follows, search, link cards, other client requests than those named.",
  ];
}
