/**
 * The daily budget meter (issue 42): Worker requests, D1 rows read and written, Durable Object requests, R2 Class A
 * and B operations and Images transformations against the caps of the plan the Worker was deployed for (`PLAN`).
 *
 * - The estimate: each isolate's own counts (lib/meter.ts), added to the day's row (`usage_days`) by one upsert,
 *   after the response, at most every `usageFlush.everyMs` per isolate and never when it counted nothing. What an
 *   isolate had not added when it was evicted is lost: an estimate, from below, and only of this Worker.
 * - The exact figures: when the host gave a read-only token, the cron asks Cloudflare's GraphQL Analytics API
 *   every 15 minutes (services/usage-analytics.ts) and keeps the answer in the day's row; they are the account's.
 * - The guards (the storage guard's mechanism, services/storage.ts): at `WARN_AT` (80%) of any cap the admins are
 *   mailed, once a day per cap, and what only fetching brings pauses (relay intake, outbox backfill, thread
 *   fetching: `pausesFetching`); at `REFUSE_AT` (95%) remote content nobody here asked for is refused
 *   (`acceptsUnsolicited`). Local posting is never refused.
 *
 * The caps (Cloudflare's pricing pages): Workers Free 100,000 requests a day; D1 5,000,000 rows read and 100,000
 * written a day; Durable Objects 100,000 requests a day; R2's free tier 1,000,000 Class A and 10,000,000 Class B
 * operations a month; Images 5,000 unique transformations a month. Workers Paid includes, a month, 10 million
 * requests, 25 billion rows read, 50 million rows written, 1 million Durable Object requests (R2 and Images the
 * same as Free); past those it bills rather than fails, so on Paid the "caps" are what the plan includes.
 */
import { desc, getTableColumns, lte, sql } from "drizzle-orm";
import { db, statement, type DB } from "../db/client";
import { usageDays } from "../db/schema";
import type { Env } from "../env";
import { config } from "../env";
import { returnIsolateUsage, takeIsolateUsage } from "../lib/meter";
import { configuredBase } from "./events";
import type { Effects } from "./effects";
import { queueAdminMail } from "./mail-queue";
import { REFUSE_AT, WARN_AT } from "./storage";
import { CAP_KEYS, fetchExactUsage, zeroCounts, type CapKey, type Counts, type ExactRecord } from "./usage-analytics";

export type Plan = "free" | "paid";
export interface Cap {
  limit: number;
  period: "day" | "month";
}

export const CAPS: Record<Plan, Record<CapKey, Cap>> = {
  free: {
    requests: { limit: 100_000, period: "day" },
    rowsRead: { limit: 5_000_000, period: "day" },
    rowsWritten: { limit: 100_000, period: "day" },
    durableObjectRequests: { limit: 100_000, period: "day" },
    r2ClassA: { limit: 1_000_000, period: "month" },
    r2ClassB: { limit: 10_000_000, period: "month" },
    imageTransformations: { limit: 5_000, period: "month" },
  },
  paid: {
    requests: { limit: 10_000_000, period: "month" },
    rowsRead: { limit: 25_000_000_000, period: "month" },
    rowsWritten: { limit: 50_000_000, period: "month" },
    durableObjectRequests: { limit: 1_000_000, period: "month" },
    r2ClassA: { limit: 1_000_000, period: "month" },
    r2ClassB: { limit: 10_000_000, period: "month" },
    imageTransformations: { limit: 5_000, period: "month" },
  },
};

/** Each cap's name in the API's answers and its column in `usage_days` (the month's: `month_` before it). */
const NAMES: Record<CapKey, string> = {
  requests: "requests",
  rowsRead: "rows_read",
  rowsWritten: "rows_written",
  durableObjectRequests: "durable_object_requests",
  r2ClassA: "r2_class_a",
  r2ClassB: "r2_class_b",
  imageTransformations: "image_transformations",
};
const LABELS: Record<CapKey, string> = {
  requests: "Worker requests",
  rowsRead: "D1 rows read",
  rowsWritten: "D1 rows written",
  durableObjectRequests: "Durable Object requests",
  r2ClassA: "R2 Class A operations",
  r2ClassB: "R2 Class B operations",
  imageTransformations: "Images transformations",
};
const MONTH: Record<CapKey, keyof UsageRow> = {
  requests: "monthRequests",
  rowsRead: "monthRowsRead",
  rowsWritten: "monthRowsWritten",
  durableObjectRequests: "monthDurableObjectRequests",
  r2ClassA: "monthR2ClassA",
  r2ClassB: "monthR2ClassB",
  imageTransformations: "monthImageTransformations",
};

export type UsageRow = typeof usageDays.$inferSelect;

/** The UTC day (`YYYY-MM-DD`): the plans' daily caps reset at midnight UTC. */
export const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The latest day's row up to `t`'s day, as a query that can join another batch (one row, by its key). */
export const budgetRow = (d: DB, t: number) =>
  d
    .select()
    .from(usageDays)
    .where(lte(usageDays.day, dayOf(t)))
    .orderBy(desc(usageDays.day))
    .limit(1);

export interface Budget {
  plan: Plan;
  day: string;
  source: "exact" | "estimate";
  /** What each cap has used in its period (the day, or the month so far). */
  used: Counts;
  /** The highest fraction of any cap. */
  level: number;
  updatedAt: number | null;
  exact: ExactRecord | null;
}

const parseExact = (s: string | null | undefined): ExactRecord | null => {
  if (!s) return null;
  try {
    return JSON.parse(s) as ExactRecord;
  } catch {
    return null;
  }
};

/**
 * The day's budget from its row (`budgetRow`): the exact figures when the API gave them for that day, else the
 * estimate. `plan`: the caps to compare with (the row's own, as last written, when not given).
 */
export function budgetFrom(row: UsageRow | undefined, t: number, plan?: Plan): Budget {
  const day = dayOf(t);
  const p: Plan = plan ?? (row?.plan === "paid" ? "paid" : "free");
  const sameDay = row?.day === day;
  const sameMonth = row?.day.slice(0, 7) === day.slice(0, 7);
  const exact = sameDay ? parseExact(row!.exact) : null;
  const figures = exact && "today" in exact ? exact : null;
  const used = zeroCounts();
  let level = 0;
  for (const k of CAP_KEYS) {
    const { limit, period } = CAPS[p][k];
    if (figures) used[k] = period === "day" ? figures.today[k] : figures.month[k];
    else if (period === "day") used[k] = sameDay ? row![k] : 0;
    else used[k] = sameMonth ? (row![MONTH[k]] as number) : 0;
    level = Math.max(level, used[k] / limit);
  }
  return {
    plan: p,
    day,
    source: figures ? "exact" : "estimate",
    used,
    level,
    updatedAt: sameDay ? row!.updatedAt : null,
    exact,
  };
}

/** Relay intake, outbox backfill and thread fetching wait while any cap is at `WARN_AT` or more. */
export const pausesFetching = (b: Budget) => b.level >= WARN_AT;

/** The day's budget as the guards read it (one row). */
export async function currentBudget(env: Env, t: number = Date.now()): Promise<Budget> {
  const [row] = await budgetRow(db(env), t);
  return budgetFrom(row, t);
}

/** Whether fetching what nobody here asked for waits (see `pausesFetching`); a database error does not pause. */
export async function fetchingPaused(env: Env, t: number = Date.now()): Promise<boolean> {
  return currentBudget(env, t)
    .then(pausesFetching)
    .catch(() => false);
}

const pct = (f: number) => Math.round(f * 1000) / 10;
const statusOf = (b: Budget) => (b.level >= REFUSE_AT ? "critical" : b.level >= WARN_AT ? "warning" : "ok");

/**
 * The budget as the admin API's `stats` and the healthcheck show it to admins; anyone else sees only its coarse
 * `status` (`ok`, `warning` from 80%, `critical` from 95%).
 */
export function budgetReport(b: Budget, admin: boolean) {
  if (!admin) return { status: statusOf(b) };
  const at = (t: number | null | undefined) => (t ? new Date(t).toISOString() : null);
  return {
    status: statusOf(b),
    plan: b.plan,
    day: b.day,
    source: b.source,
    percent: pct(b.level),
    pausing_fetches: pausesFetching(b),
    refusing_unsolicited: b.level >= REFUSE_AT,
    updated_at: at(b.updatedAt),
    exact_at: at(b.exact?.at),
    exact_error: b.exact && "error" in b.exact ? b.exact.error : null,
    caps: Object.fromEntries(
      CAP_KEYS.map((k) => {
        const { limit, period } = CAPS[b.plan][k];
        return [NAMES[k], { used: b.used[k], limit, period, percent: pct(b.used[k] / limit) }];
      }),
    ),
  };
}

const COLUMNS = Object.entries(getTableColumns(usageDays)) as [keyof UsageRow, { name: string }][];
const fromRaw = (raw: Record<string, unknown>) =>
  Object.fromEntries(COLUMNS.map(([key, col]) => [key, raw[col.name]])) as UsageRow;

/**
 * Adds `counts` to the day's row, and the API's answer when there is one, in ONE statement: the day's first upsert
 * starts the month's totals from the month's latest row (read by its key). Answers the row as written.
 */
async function addUsage(d: DB, t: number, plan: Plan, counts: Counts, exact: ExactRecord | null): Promise<UsageRow> {
  const day = dayOf(t);
  const cols = CAP_KEYS.map((k) => NAMES[k]);
  const monthCols = cols.map((c) => `month_${c}`);
  const ident = (c: string) => sql.raw(`\`${c}\``);
  const list = (cs: string[]) => sql.join(cs.map(ident), sql`, `);
  const [raw] = await d.all<Record<string, unknown>>(
    sql`WITH prev AS (SELECT * FROM usage_days WHERE day >= ${`${day.slice(0, 7)}-01`} AND day < ${day} ORDER BY day DESC LIMIT 1)
      INSERT INTO usage_days (day, ${list(cols)}, ${list(monthCols)}, exact, plan, updated_at)
      SELECT ${day}, ${sql.join(
        CAP_KEYS.map((k) => sql`${counts[k]}`),
        sql`, `,
      )}, ${sql.join(
        CAP_KEYS.map((k, i) => sql`${counts[k]} + COALESCE(prev.${ident(monthCols[i]!)}, 0)`),
        sql`, `,
      )}, ${exact ? JSON.stringify(exact) : null}, ${plan}, ${t}
      FROM (SELECT 1) LEFT JOIN prev ON 1 WHERE 1
      ON CONFLICT (day) DO UPDATE SET ${sql.join(
        cols.map(
          (c, i) =>
            sql`${ident(c)} = ${ident(c)} + excluded.${ident(c)}, ${ident(monthCols[i]!)} = ${ident(monthCols[i]!)} + excluded.${ident(c)}`,
        ),
        sql`, `,
      )}, exact = COALESCE(excluded.exact, exact), plan = excluded.plan, updated_at = excluded.updated_at
      RETURNING *`,
  );
  return fromRaw(raw!);
}

/** How often an isolate adds its counts to the day's row at most (tests lower it). */
// Every 15 minutes: an idle instance's cron isolate counts something each minute, and each flush writes 2 rows (12 an
// hour would be a third of an idle hour's writes; test/cron-cost.test.ts holds the hour with its flushes).
export const usageFlush = { everyMs: 15 * 60_000 };
let lastFlush = Date.now();
let flushing = false;

/**
 * Adds what this isolate counted since its last flush to the day's row, when `usageFlush.everyMs` has passed and
 * it counted something (or `exact`, the API's answer, is to be kept); what is taken is put back if the write
 * fails. Then mails the admins about caps newly at `WARN_AT`. Best effort: never throws.
 */
export async function flushUsage(env: Env, exact: ExactRecord | null = null): Promise<Effects> {
  const t = Date.now();
  if (!exact && (flushing || t - lastFlush < usageFlush.everyMs)) return {};
  const taken = takeIsolateUsage();
  const counts = Object.fromEntries(CAP_KEYS.map((k) => [k, taken[k]])) as Counts;
  if (!exact && CAP_KEYS.every((k) => counts[k] === 0)) {
    returnIsolateUsage(taken);
    return {};
  }
  flushing = true;
  lastFlush = t;
  const d = db(env);
  let row: UsageRow;
  try {
    row = await addUsage(d, t, config(env).plan, counts, exact);
  } catch (e) {
    returnIsolateUsage(taken);
    console.error("usage flush", (e as Error)?.message ?? e);
    return {};
  } finally {
    flushing = false;
  }
  // A warning's mail is queued: sent by the caller's door, else by the cron's `mail` job.
  const mailed = await warnAdmins(env, d, row, t).catch((e) => {
    console.error("budget warning", (e as Error)?.message ?? e);
    return false;
  });
  return { mail: mailed };
}

/** Minutes of the hour the cron asks the GraphQL Analytics API at (every 15 minutes). */
const EXACT_EVERY_MINUTES = 15;

/** The cron's part (after its jobs): every 15 minutes the exact figures when a token is set, then the flush. */
export async function budgetAfterCron(env: Env, scheduledTime: number): Promise<void> {
  const due =
    env.CF_ANALYTICS_TOKEN && env.CF_ACCOUNT_ID && new Date(scheduledTime).getUTCMinutes() % EXACT_EVERY_MINUTES === 0;
  const exact = due ? await fetchExactUsage(env.CF_ANALYTICS_TOKEN!, env.CF_ACCOUNT_ID!, Date.now()) : null;
  await flushUsage(env, exact);
}

/** Mails the admins about the caps at `WARN_AT` or more that they were not told about today (claimed in the row). */
async function warnAdmins(env: Env, d: DB, row: UsageRow, t: number): Promise<boolean> {
  const b = budgetFrom(row, t, config(env).plan);
  const warned = JSON.parse(row.warned) as string[];
  const over = CAP_KEYS.filter((k) => b.used[k] / CAPS[b.plan][k].limit >= WARN_AT && !warned.includes(NAMES[k]));
  if (over.length === 0) return false;
  const base = configuredBase(env);
  const lines = over.map((k) => {
    const { limit, period } = CAPS[b.plan][k];
    return `${LABELS[k]}: ${b.used[k].toLocaleString("en")} of ${limit.toLocaleString("en")} a ${period} (${Math.floor(pct(b.used[k] / limit))}%)`;
  });
  const text =
    `${base || "this instance"} has used 80% or more of these caps of the Workers ${b.plan === "paid" ? "Paid plan's included usage" : "Free plan"} ` +
    `(${b.source === "exact" ? "Cloudflare's figures for the account" : "Starling's own estimate"}, ${b.day} UTC):\n\n` +
    lines.join("\n") +
    `\n\nUntil the figures fall back (daily caps reset at midnight UTC), Starling pauses relay intake, outbox backfill ` +
    `and thread fetching; at 95% it refuses remote content nobody here asked for. Local posting goes on. The admin ` +
    `dashboard's stats show the meter (docs/deploy.md).`;
  const subject = `Cloudflare usage: ${over.map((k) => LABELS[k]).join(", ")} at 80%`;
  const html = `<p>${text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/\n\n/g, "</p><p>").replace(/\n/g, "<br>")}</p>`;
  // The claim and the mail in one batch: the mail is queued only when this batch's claim changed the row (a racing
  // flush that claimed first queued it). The cron's `mail` job sends it.
  const [, queued] = await d.$client.batch([
    statement(
      d,
      sql`UPDATE usage_days SET warned = ${JSON.stringify([...warned, ...over.map((k) => NAMES[k])])}
        WHERE day = ${row.day} AND warned = ${row.warned}`,
    ),
    queueAdminMail(d, config(env), base, { subject, text, html }, t, sql`changes() > 0`),
  ]);
  return (queued?.meta.changes ?? 0) > 0;
}
