/**
 * Pleroma's admin `stats` (`GET /api/v1/pleroma/admin/stats`, admin-fe's dashboard reads `status_visibility`: local
 * and remote statuses by visibility), with what Starling adds as keys admin-fe leaves alone: the database's size
 * against its ceiling (services/storage.ts), the day's budget against the plan's caps (services/usage-budget.ts) and
 * the day's top remote senders by what they made this instance store (services/inbound-limits.ts) and
 * translation's neurons against their daily budget (services/translation.ts). One round trip, and one more for the
 * visibility counts when the edge does not hold them.
 */
import { count } from "drizzle-orm";
import type { DB } from "../db/client";
import { statuses } from "../db/schema";
import type { Plan } from "./usage-budget";
import { budgetFrom, budgetReport, budgetRow } from "./usage-budget";
import { fromRow, storageReport, storageRow } from "./storage";
import { limitsClock, topSendersQueries, topSendersReport } from "./inbound-limits";
import { filteredSummary } from "./notification-policy";
import { neuronsRow } from "./translation";

/** What the figures depend on in the configuration. */
export interface StatsConfig {
  plan: Plan;
  mentionShield: boolean;
  translation: { dailyNeurons: number };
}

/** Statuses by visibility, as admin-fe's dashboard shows them. */
export type StatusVisibilityCounts = Record<"public" | "unlisted" | "private" | "direct" | "local" | "list", number>;

/**
 * The counts walk every status (one statement; SQLite keeps no count): the route keeps them at the edge once there
 * are more than a few (routes/admin/config.ts), the dashboard's other figures stay fresh.
 */
export async function statusVisibility(d: DB): Promise<StatusVisibilityCounts> {
  const rows = await d
    .select({ visibility: statuses.visibility, n: count() })
    .from(statuses)
    .groupBy(statuses.visibility);
  const by = Object.fromEntries(rows.map((r) => [r.visibility, r.n]));
  return {
    public: by.public ?? 0,
    unlisted: by.unlisted ?? 0,
    private: by.private ?? 0,
    direct: by.direct ?? 0,
    local: by.local ?? 0,
    list: by.list ?? 0,
  };
}

/** Below this many statuses counting them is cheap: the counts are taken fresh (routes/admin/config.ts). */
export const FEW_STATUSES = 1000;

export const statusTotal = (v: StatusVisibilityCounts) => Object.values(v).reduce((a, b) => a + b, 0);

/** The dashboard's figures, with the visibility counts the caller took (`statusVisibility`, kept at the edge). */
export async function adminStats(d: DB, cfg: StatsConfig, visibility: StatusVisibilityCounts, t: number = Date.now()) {
  const [storage, budget, neurons, [requests], hosts, actors, pendingAccounts] = await d.batch([
    storageRow(d),
    budgetRow(d, t),
    neuronsRow(d, t),
    filteredSummary(d),
    ...topSendersQueries(d, limitsClock.now()),
  ]);
  return {
    status_visibility: visibility,
    storage: storageReport(fromRow(storage)),
    budget: budgetReport(budgetFrom(budget[0], t, cfg.plan), true),
    inbound_senders: topSendersReport(limitsClock.now(), hosts, actors, pendingAccounts),
    notification_requests: {
      mention_shield: cfg.mentionShield,
      requests: requests?.requests ?? 0,
      filtered_notifications: requests?.notifications ?? 0,
      senders: requests?.senders ?? 0,
    },
    translation: { neurons_today: neurons[0]?.neurons ?? 0, daily_neurons: cfg.translation.dailyNeurons },
  };
}
