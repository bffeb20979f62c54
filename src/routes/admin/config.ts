/** Pleroma's admin config API (ConfigDB) over Starling's run-time settings and federation policies: admins only. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { actorOf } from "./common";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db, now } from "../../db/client";
import { route } from "../../http/route";
import { logEntry } from "../../services/moderation-log";
import { configDescriptions, configEntries, configStatements } from "../../services/admin-config";
import { refreshSettings } from "../../services/instance-settings";
import {
  adminStats,
  FEW_STATUSES,
  statusTotal,
  statusVisibility,
  type StatusVisibilityCounts,
} from "../../services/admin-stats";
import { edgeCached } from "../../http/edge-cache";
import { config } from "../../env";
import { BudgetSchema, InboundSendersSchema } from "../../schemas/instance";

/** How long a grown instance's status counts by visibility are kept at the edge. */
const VISIBILITY_CACHE_SECONDS = 3600;

const ConfigEntrySchema = z.object({ group: z.string(), key: z.string(), value: z.unknown(), db: z.array(z.string()) });
const ConfigsSchema = z
  .object({ configs: z.array(ConfigEntrySchema), need_reboot: z.boolean() })
  .openapi("AdminConfigs");

const StorageSchema = z
  .object({
    bytes: z.number(),
    limit_bytes: z.number(),
    percent: z.number(),
    measured_at: z.string(),
    refusing_unsolicited: z.boolean(),
  })
  .nullable();
export const AdminStatsSchema = z
  .object({
    status_visibility: z.record(z.string(), z.number().int()),
    storage: StorageSchema,
    /** The day's budget against the plan's caps (services/usage-budget.ts). */
    budget: BudgetSchema,
    /** Today's (UTC) top remote senders by bytes they made this instance store (services/inbound-limits.ts). */
    inbound_senders: InboundSendersSchema,
    /** Notifications set aside by users' policies and the mention shield (services/notification-policy.ts). */
    notification_requests: z.object({
      mention_shield: z.boolean(),
      requests: z.number().int(),
      filtered_notifications: z.number().int(),
      senders: z.number().int(),
    }),
  })
  .openapi("AdminStats");

export function registerAdminConfigRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/stats",
    summary:
      "Statuses by visibility (Pleroma's dashboard figures), the database's size against its ceiling and the day's budget",
    tags: ["Admin"],
    auth: "user",
    scopes: ["admin:read"],
    privilege: "superuser",
    params: z.object({ instance: z.string().optional() }),
    response: AdminStatsSchema,
    handler: async (c) => {
      const d = db(c.env);
      // Counting statuses walks them all: a grown instance's counts are kept an hour at the edge (while figures are
      // cached at all: STATS_CACHE_SECONDS), so a dashboard opened often does not read the table each time.
      const ttl = config(c.env).statsCacheSeconds > 0 ? VISIBILITY_CACHE_SECONDS : 0;
      const visibility = await edgeCached(
        c,
        "admin-status-visibility",
        ttl > 0 ? (v: StatusVisibilityCounts) => (statusTotal(v) < FEW_STATUSES ? 0 : ttl) : 0,
        () => statusVisibility(d),
      );
      return c.json(await adminStats(d, config(c.env), visibility));
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/config",
    summary: "Run-time instance settings (ConfigDB form): every known key, with `db` naming those stored",
    tags: ["Admin"],
    auth: "user",
    scopes: ["admin:read"],
    privilege: "superuser",
    params: z.object({ only_db: z.string().optional() }),
    response: ConfigsSchema,
    handler: async (c, p) => {
      await refreshSettings(c.env, true);
      let configs = configEntries(c.env);
      if (p.only_db === "true" || p.only_db === "1") configs = configs.filter((e) => e.db.length > 0);
      return c.json({ configs, need_reboot: false });
    },
  });

  route(app, {
    method: "post",
    path: "/api/v1/pleroma/admin/config",
    summary:
      "Change run-time settings: every known key validated, anything unknown refused (400), nothing half-written",
    tags: ["Admin"],
    auth: "user",
    scopes: ["admin:write"],
    privilege: "superuser",
    params: z.object({
      configs: z
        .array(
          z.object({
            group: z.string(),
            key: z.string(),
            value: z.unknown().optional(),
            delete: z.boolean().optional(),
            subkeys: z.array(z.string()).max(100).optional(),
          }),
        )
        .min(1)
        .max(20),
    }),
    response: ConfigsSchema,
    handler: async (c, p, auth) => {
      const d = db(c.env);
      const t = now();
      const stmts = configStatements(d, p.configs, t);
      await d.$client.batch([
        ...stmts,
        logEntry(
          d,
          actorOf(auth),
          "config_update",
          { configs: p.configs },
          `@${auth.account.username} updated the settings: ${p.configs.map((x) => `${x.group} ${x.key}`).join(", ")}`,
          t,
        ),
      ]);
      // This isolate sees the change at once; others within SETTINGS_TTL_MS.
      await refreshSettings(c.env, true);
      const changed = new Set(p.configs.map((x) => x.key));
      return c.json({ configs: configEntries(c.env).filter((e) => changed.has(e.key)), need_reboot: false });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/admin/config/descriptions",
    summary: "What each run-time setting holds",
    tags: ["Admin"],
    auth: "user",
    scopes: ["admin:read"],
    privilege: "superuser",
    response: z.array(z.record(z.string(), z.unknown())),
    handler: (c) => c.json(configDescriptions()),
  });
}
