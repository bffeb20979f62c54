/**
 * The storage guard (issue 35): the database's size against its ceiling (`database_limit_mb`, the plan's), measured
 * by the cron (D1 reports it with every query: `meta.size_after`) and kept in `instance_keys`:
 * - shown in the healthcheck's job stats and the admin API's `stats` (services/admin-stats.ts);
 * - at 80% the admins are told, once a week while it lasts: an e-mail to each, and an announcement (in the apps'
 *   announcements, made in the first admin's name);
 * - at 95% content nobody here asked for is refused (`acceptsUnsolicited`: remote posts fetched by a search, an
 *   account's pinned posts, a thread's ancestors), so that local posting, signing in and what people here follow
 *   keep working for as long as possible. The daily budget meter (services/usage-budget.ts) refuses through the same
 *   rule (`acceptsUnsolicited`) at 95% of any of the plan's caps.
 */
import { eq, sql } from "drizzle-orm";
import { instanceKeys } from "../db/schema";
import { statement, type DB } from "../db/client";
import type { Env } from "../env";
import { config } from "../env";
import { configuredBase } from "./events";
import { queueAdminMail } from "./mail-queue";
import { createAnnouncement } from "./announcements";

const KEY = "storage";
const HOUR = 3600 * 1000;
const WEEK = 7 * 24 * HOUR;
export const WARN_AT = 0.8;
export const REFUSE_AT = 0.95;

export interface StorageState {
  bytes: number;
  limitBytes: number;
  /** When it was measured (ms). */
  at: number;
  /** When the admins were last told it is above WARN_AT. */
  warnedAt: number | null;
}

export const fraction = (s: StorageState) => s.bytes / s.limitBytes;

/** The kept measurement, as a query that can join another batch (`fromRow` reads its answer). */
export const storageRow = (d: DB) =>
  d.select({ value: instanceKeys.value }).from(instanceKeys).where(eq(instanceKeys.name, KEY));
export const fromRow = (rows: { value: string }[]): StorageState | null =>
  rows[0] ? (JSON.parse(rows[0].value) as StorageState) : null;

export async function storageState(d: DB): Promise<StorageState | null> {
  return fromRow(await storageRow(d));
}

/**
 * Whether content nobody here asked for may be stored: the database below REFUSE_AT of its ceiling (or never
 * measured), and the day's budget (services/usage-budget.ts: `budgetLevel`, the highest fraction of any of the
 * plan's caps) below REFUSE_AT too. The one guard of both: the same rows read in the storing batch, the same rule.
 */
export function acceptsUnsolicited(state: StorageState | null, budgetLevel = 0): boolean {
  return (!state || fraction(state) < REFUSE_AT) && budgetLevel < REFUSE_AT;
}

/**
 * Measures the database (one round trip) and tells the admins when it nears the ceiling. The figure is kept when
 * it changed, and at least hourly (its `measured_at`), not every minute: an idle database does not change size.
 * Answers what it kept, or null when it kept nothing.
 */
export async function measureStorage(env: Env, d: DB, t: number): Promise<{ bytes: number; percent: number } | null> {
  const { meta } = await env.DB.prepare("SELECT 1").run();
  const bytes = Number((meta as { size_after?: number }).size_after ?? 0);
  const limitBytes = config(env).databaseLimitMb * 1024 * 1024;
  const before = await storageState(d);
  const state: StorageState = { bytes, limitBytes, at: t, warnedAt: before?.warnedAt ?? null };
  const warn = bytes / limitBytes >= WARN_AT && (state.warnedAt === null || t - state.warnedAt >= WEEK);
  if (warn) state.warnedAt = t;
  const same = before && before.bytes === bytes && before.limitBytes === limitBytes && Math.abs(t - before.at) < HOUR;
  if (same && !warn) return null;
  // The warning's mail is queued with the figure that says it was sent (the cron's `mail` job sends it).
  await d.$client.batch([
    statement(
      d,
      sql`INSERT INTO instance_keys (name, value, created_at) VALUES (${KEY}, ${JSON.stringify(state)}, ${t})
        ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    ),
    ...(warn ? [queueAdminMail(d, config(env), configuredBase(env), warningMail(env, state), t)] : []),
  ]);
  if (warn) await announceWarning(d, state);
  return { bytes, percent: Math.round((bytes / limitBytes) * 1000) / 10 };
}

function warningMail(env: Env, s: StorageState) {
  const base = configuredBase(env) || "this instance";
  const text =
    `The database of ${base} holds ${mb(s.bytes)} of its ${mb(s.limitBytes)} (${percentOf(s)}%).\n\n` +
    `At ${REFUSE_AT * 100}% Starling refuses remote content nobody here asked for; when it is full, posting and ` +
    `signing in fail. Shorten remote_post_retention_days or notification_retention_days in the admin settings, or ` +
    `raise database_limit_mb after moving to a plan with more room (docs/deploy.md).`;
  return { subject: `Database ${percentOf(s)}% full`, text, html: `<p>${text.replace(/\n\n/g, "</p><p>")}</p>` };
}

const mb = (n: number) => `${Math.round(n / 1024 / 1024)} MB`;
const percentOf = (s: StorageState) => Math.round(fraction(s) * 100);

/** The warning as an announcement by the first admin, for everyone signed in. */
async function announceWarning(d: DB, s: StorageState) {
  const first = await d.get<{ id: string; username: string }>(
    sql`SELECT a.id, a.username FROM users u JOIN accounts a ON a.id = u.account_id
      WHERE u.is_admin = 1 AND a.deactivated = 0 ORDER BY a.id LIMIT 1`,
  );
  if (first)
    await createAnnouncement(
      d,
      { id: first.id, username: first.username },
      {
        content: `This server's storage is ${percentOf(s)}% full (${mb(s.bytes)} of ${mb(s.limitBytes)}). The admins have been told; old remote posts are being cleared.`,
        // Until the next warning (a week), so they never pile up.
        ends_at: s.at + WEEK,
      },
    ).catch((e) => console.error("storage warning announcement", e));
}

/** The kept measurement as the healthcheck and the admin API show it (null before the first measurement). */
export function storageReport(state: StorageState | null) {
  return state
    ? {
        bytes: state.bytes,
        limit_bytes: state.limitBytes,
        percent: Math.round(fraction(state) * 1000) / 10,
        measured_at: new Date(state.at).toISOString(),
        refusing_unsolicited: !acceptsUnsolicited(state),
      }
    : null;
}
