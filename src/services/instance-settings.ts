/**
 * Run-time instance settings (issue 17): an admin's changes are stored in D1 (`instance_settings`, and the
 * federation policies in `federation_policies`) and override `[vars]`. Every isolate keeps what it last read and
 * reads again (ONE batch of two SELECTs) when that is older than `SETTINGS_TTL_MS`: so a request costs no extra
 * D1 round trip, except the first one after the TTL, and a change reaches every other isolate within the TTL.
 * The isolate that makes a change applies it at once. How an admin reads and changes them: admin-config.ts; what
 * the policies mean: federation-policies.ts.
 */
import { MEDIA_ATTACHMENTS_MAX, setRuntimeOverrides, type Config, type Env } from "../env";
import { bindingOf } from "../db/binding";
import { countMeta } from "../lib/meter";
import { MENTION_SHIELD_KEY } from "./mention-shield";

export const SETTINGS_TTL_MS = 30_000;

/** The federation policies (what each means: federation-policies.ts). */
export const POLICIES = [
  "reject",
  "accept",
  "media_removal",
  "media_nsfw",
  "federated_timeline_removal",
  "report_removal",
  "avatar_removal",
  "banner_removal",
] as const;
export type Policy = (typeof POLICIES)[number];

export interface PolicyRow {
  domain: string;
  policy: Policy;
  reason: string;
}

export type Kind = "string" | "boolean" | "integer" | "languages" | "poll_limits";

export interface SettingDef {
  /** The subkey under `:pleroma, :instance` (without the colon), also the row key in instance_settings. */
  key: string;
  type: Kind;
  description: string;
  apply: (c: Config, v: any) => Config;
  read: (c: Config) => unknown;
}

export const POLL_KEYS = ["max_options", "max_option_chars", "min_expiration", "max_expiration"] as const;

/** Starling's settings under Pleroma's `:instance` names. */
export const INSTANCE_SETTINGS: SettingDef[] = [
  {
    key: "name",
    type: "string",
    description: "Name of the instance",
    apply: (c, v) => ({ ...c, name: v }),
    read: (c) => c.name,
  },
  {
    key: "description",
    type: "string",
    description: "The instance's description",
    apply: (c, v) => ({ ...c, description: v }),
    read: (c) => c.description,
  },
  {
    key: "short_description",
    type: "string",
    description: "Shorter version of the description",
    apply: (c, v) => ({ ...c, shortDescription: v }),
    read: (c) => c.shortDescription,
  },
  {
    key: "email",
    type: "string",
    description: "Email used to reach an administrator",
    apply: (c, v) => ({ ...c, email: v }),
    read: (c) => c.email,
  },
  {
    key: "registrations_open",
    type: "boolean",
    description: "Allow anyone to register (otherwise an invite is needed)",
    apply: (c, v) => ({ ...c, registrationsOpen: v }),
    read: (c) => c.registrationsOpen,
  },
  {
    key: "account_approval_required",
    type: "boolean",
    description: "Require an admin to approve new accounts",
    apply: (c, v) => ({ ...c, approvalRequired: v }),
    read: (c) => c.approvalRequired,
  },
  {
    key: "account_activation_required",
    type: "boolean",
    description: "Require users to confirm their e-mail address",
    apply: (c, v) => ({ ...c, activationRequired: v }),
    read: (c) => c.activationRequired,
  },
  {
    key: "registration_reason_length",
    type: "integer",
    description: "Maximum registration reason length",
    apply: (c, v) => ({ ...c, registrationReasonLength: v }),
    read: (c) => c.registrationReasonLength,
  },
  {
    key: "limit",
    type: "integer",
    description: "Posts character limit",
    apply: (c, v) => ({ ...c, maxTootChars: v }),
    read: (c) => c.maxTootChars,
  },
  {
    key: "max_media_attachments",
    type: "integer",
    description: `Maximum number of media attachments (1 to ${MEDIA_ATTACHMENTS_MAX})`,
    apply: (c, v) => ({ ...c, maxMediaAttachments: Math.min(MEDIA_ATTACHMENTS_MAX, Math.max(1, v)) }),
    read: (c) => c.maxMediaAttachments,
  },
  {
    key: "chat_limit",
    type: "integer",
    description: "Character limit of chat messages",
    apply: (c, v) => ({ ...c, chatLimit: v }),
    read: (c) => c.chatLimit,
  },
  {
    key: "description_limit",
    type: "integer",
    description: "Character limit of media descriptions",
    apply: (c, v) => ({ ...c, descriptionLimit: v }),
    read: (c) => c.descriptionLimit,
  },
  {
    key: "upload_limit",
    type: "integer",
    description: "File size limit of uploads (bytes)",
    apply: (c, v) => ({ ...c, uploadLimit: v }),
    read: (c) => c.uploadLimit,
  },
  {
    key: "avatar_upload_limit",
    type: "integer",
    description: "File size limit of avatars (bytes)",
    apply: (c, v) => ({ ...c, avatarUploadLimit: v }),
    read: (c) => c.avatarUploadLimit,
  },
  {
    key: "background_upload_limit",
    type: "integer",
    description: "File size limit of backgrounds (bytes)",
    apply: (c, v) => ({ ...c, backgroundUploadLimit: v }),
    read: (c) => c.backgroundUploadLimit,
  },
  {
    key: "banner_upload_limit",
    type: "integer",
    description: "File size limit of banners (bytes)",
    apply: (c, v) => ({ ...c, bannerUploadLimit: v }),
    read: (c) => c.bannerUploadLimit,
  },
  {
    key: "user_bio_length",
    type: "integer",
    description: "Character limit of bios",
    apply: (c, v) => ({ ...c, maxBioLength: v }),
    read: (c) => c.maxBioLength,
  },
  {
    key: "user_name_length",
    type: "integer",
    description: "Character limit of display names",
    apply: (c, v) => ({ ...c, maxNameLength: v }),
    read: (c) => c.maxNameLength,
  },
  {
    key: "max_account_fields",
    type: "integer",
    description: "Maximum number of profile fields",
    apply: (c, v) => ({ ...c, fieldsLimits: { ...c.fieldsLimits, max_fields: v } }),
    read: (c) => c.fieldsLimits.max_fields,
  },
  {
    key: "account_field_name_length",
    type: "integer",
    description: "Character limit of a profile field's name",
    apply: (c, v) => ({ ...c, fieldsLimits: { ...c.fieldsLimits, name_length: v } }),
    read: (c) => c.fieldsLimits.name_length,
  },
  {
    key: "account_field_value_length",
    type: "integer",
    description: "Character limit of a profile field's value",
    apply: (c, v) => ({ ...c, fieldsLimits: { ...c.fieldsLimits, value_length: v } }),
    read: (c) => c.fieldsLimits.value_length,
  },
  {
    key: "languages",
    type: "languages",
    description: "Languages of the instance (codes)",
    apply: (c, v) => ({ ...c, languages: v }),
    read: (c) => c.languages,
  },
  {
    key: "authorized_fetch_mode",
    type: "boolean",
    description: "Require HTTP signatures on fetches of actors, statuses and collections",
    apply: (c, v) => ({ ...c, authorizedFetch: v }),
    read: (c) => c.authorizedFetch,
  },
  {
    key: "allow_relay",
    type: "boolean",
    description: "Send local public posts to the relays this instance follows (admin API: relay)",
    apply: (c, v) => ({ ...c, allowRelay: v }),
    read: (c) => c.allowRelay,
  },
  {
    key: MENTION_SHIELD_KEY,
    type: "boolean",
    description:
      "Mentions from remote accounts that look like a spam wave (new, followed by nobody here, or many mentions with a link or media) are filtered into notification requests",
    apply: (c, v) => ({ ...c, mentionShield: v }),
    read: (c) => c.mentionShield,
  },
  {
    key: "translation_enabled",
    type: "boolean",
    description: "Let users translate posts (with the Workers AI binding or a LibreTranslate server)",
    apply: (c, v) => ({ ...c, translation: { ...c.translation, enabled: v } }),
    read: (c) => c.translation.enabled,
  },
  {
    key: "translation_daily_neurons",
    type: "integer",
    description: "Workers AI neurons translation may spend a day (10,000 are free on every plan)",
    apply: (c, v) => ({ ...c, translation: { ...c.translation, dailyNeurons: Math.max(0, v) } }),
    read: (c) => c.translation.dailyNeurons,
  },
  {
    key: "remote_post_retention_days",
    type: "integer",
    description:
      "Remote posts nobody here interacted with are deleted after this many days (Akkoma's name; 0 keeps them)",
    apply: (c, v) => ({ ...c, remotePostRetentionDays: Math.max(0, v) }),
    read: (c) => c.remotePostRetentionDays,
  },
  {
    key: "notification_retention_days",
    type: "integer",
    description: "Notifications are deleted after this many days (0 keeps them)",
    apply: (c, v) => ({ ...c, notificationRetentionDays: Math.max(0, v) }),
    read: (c) => c.notificationRetentionDays,
  },
  {
    key: "database_limit_mb",
    type: "integer",
    description:
      "The database's ceiling in MB (the plan's: 500 on Workers Free, 10000 on Paid): admins are told at 80%, and at 95% content nobody here asked for is refused",
    apply: (c, v) => ({ ...c, databaseLimitMb: Math.max(1, v) }),
    read: (c) => c.databaseLimitMb,
  },
  {
    key: "poll_limits",
    type: "poll_limits",
    description: "Limits of polls (max_options, max_option_chars, min_expiration, max_expiration)",
    apply: (c, v) => ({ ...c, pollLimits: { ...c.pollLimits, ...v } }),
    read: (c) => c.pollLimits,
  },
];
export const CAPTCHA_KEY = "captcha_enabled";
/** `:frontends` subkeys (services/frontends.ts), stored as `frontends.<subkey>`: `{name, ref}` or null. */
export const FRONTEND_KEYS = ["primary", "admin"] as const;
export type FrontendKey = (typeof FRONTEND_KEYS)[number];
export const frontendRow = (k: FrontendKey) => `frontends.${k}`;
/** `:frontend_configurations` (Pleroma-FE reads its `pleroma_fe` map over its own config.json): one row, all of it. */
export const FRONTEND_CONFIGURATIONS_KEY = "frontend_configurations";
export const BY_KEY = new Map(INSTANCE_SETTINGS.map((s) => [s.key, s]));

/** What one isolate knows of the stored settings, per database binding, and their version then. */
interface State {
  loadedAt: number;
  values: Record<string, unknown>;
  policies: PolicyRow[];
  version: string | null;
}
const states = new WeakMap<object, State>();
let stamp = 0;

function install(
  binding: D1Database,
  values: Record<string, unknown>,
  policies: PolicyRow[],
  t: number,
  version: string | null = null,
) {
  states.set(binding, { loadedAt: t, values, policies, version });
  setRuntimeOverrides(binding, {
    stamp: ++stamp,
    apply: (base) => {
      let c = base;
      for (const [key, v] of Object.entries(values)) {
        const def = BY_KEY.get(key);
        if (def) c = def.apply(c, v);
        else if (key === CAPTCHA_KEY) c = { ...c, captcha: v ? "native" : "none" };
        else if (key === FRONTEND_CONFIGURATIONS_KEY)
          c = { ...c, frontendConfigurations: v as Config["frontendConfigurations"] };
        else if (key.startsWith("frontends."))
          c = { ...c, frontends: { ...c.frontends, [key.slice("frontends.".length)]: v === "none" ? null : v } };
      }
      return c;
    },
  });
}

/** Bumped by triggers on every write to the settings or the policies (migration 0044). */
const VERSION_SQL = "SELECT value FROM instance_keys WHERE name = 'settings_version'";

/** Reads on the binding itself (what is kept per database), counted by the meter all the same. */
async function readDirect<T>(binding: D1Database, queries: string[]): Promise<T[][]> {
  const results = await binding.batch<T>(queries.map((q) => binding.prepare(q)));
  results.forEach((r, i) => countMeta(queries[i]!, r.meta));
  return results.map((r) => r.results);
}

/**
 * Reads the stored settings and policies when this isolate's copy is older than the TTL (or `force`): one D1
 * round trip then, none otherwise, and only the version row when they did not change since (the cron's every
 * minute reads one row). Every entry point calls it before reading `config(env)` or the policies.
 */
export async function refreshSettings(env: Pick<Env, "DB">, force = false, t = Date.now()): Promise<void> {
  if (!env.DB) return;
  const binding = bindingOf(env.DB);
  const s = states.get(binding);
  if (!force && s && t - s.loadedAt < SETTINGS_TTL_MS) return;
  try {
    if (!force && s?.version) {
      const [[v]] = await readDirect<{ value: string }>(binding, [VERSION_SQL]);
      if (v?.value === s.version) {
        s.loadedAt = t;
        return;
      }
    }
    const [[v], rows, policies] = await readDirect<Record<string, string>>(binding, [
      VERSION_SQL,
      "SELECT key, value FROM instance_settings",
      "SELECT domain, policy, reason FROM federation_policies",
    ]);
    const values = Object.fromEntries(rows!.map((r) => [r.key!, JSON.parse(r.value!) as unknown]));
    install(binding, values, policies as unknown as PolicyRow[], t, v?.value ?? null);
  } catch (e) {
    // Not fatal: the last known settings (or `[vars]`) stay in force, and the next request tries again.
    console.error("instance settings not read", e);
  }
}

/** The stored settings (key → value) as this isolate last read them: those overriding `[vars]`. */
export function storedSettings(env: Pick<Env, "DB">): Record<string, unknown> {
  return states.get(bindingOf(env.DB))?.values ?? {};
}

/** The federation policies as this isolate last read them. */
export function policies(env: Pick<Env, "DB">): PolicyRow[] {
  return states.get(bindingOf(env.DB))?.policies ?? [];
}
