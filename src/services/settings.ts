/**
 * Run-time instance settings and federation policies (issue 17). An admin's changes are stored in D1
 * (`instance_settings`, `federation_policies`) and override `[vars]`. Every isolate keeps what it last read and
 * reads again (ONE batch of two SELECTs) when that is older than `SETTINGS_TTL_MS`: so a request costs no extra
 * D1 round trip, except the first one after the TTL, and a change reaches every other isolate within the TTL.
 * The isolate that makes a change applies it at once.
 *
 * The admin API speaks Pleroma's ConfigDB (`/api/v1/pleroma/admin/config`): group `:pleroma`, keys `:instance`
 * (Starling's settings under Pleroma's names), `:mrf_simple` (the policies) and `Pleroma.Captcha`, values in
 * ConfigDB's JSON form (`{"tuple": [":name", "Starling"]}`).
 */
import { config, MEDIA_ATTACHMENTS_MAX, setRuntimeOverrides, type Config, type Env } from "../env";
import { statement, type DB } from "../db/client";
import { instanceSettings } from "../db/schema";
import { badRequest } from "../lib/errors";
import { sql } from "drizzle-orm";
import { bindingOf } from "../db/binding";
import { countMeta } from "../lib/meter";
import { MENTION_SHIELD_KEY } from "./mention-shield";
import { FRONTEND_SEGMENT } from "../lib/frontend-archive";

export const SETTINGS_TTL_MS = 30_000;

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

type Kind = "string" | "boolean" | "integer" | "languages" | "poll_limits";

interface SettingDef {
  /** The subkey under `:pleroma, :instance` (without the colon), also the row key in instance_settings. */
  key: string;
  type: Kind;
  description: string;
  apply: (c: Config, v: any) => Config;
  read: (c: Config) => unknown;
}

const POLL_KEYS = ["max_options", "max_option_chars", "min_expiration", "max_expiration"] as const;

/** Starling's settings under Pleroma's `:instance` names. */
const INSTANCE_SETTINGS: SettingDef[] = [
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
const CAPTCHA_KEY = "captcha_enabled";
/** `:frontends` subkeys (services/frontends.ts), stored as `frontends.<subkey>`: `{name, ref}` or null. */
const FRONTEND_KEYS = ["primary", "admin"] as const;
type FrontendKey = (typeof FRONTEND_KEYS)[number];
const frontendRow = (k: FrontendKey) => `frontends.${k}`;
/** `:frontend_configurations` (Pleroma-FE reads its `pleroma_fe` map over its own config.json): one row, all of it. */
const FRONTEND_CONFIGURATIONS_KEY = "frontend_configurations";
/**
 * The frontends whose settings may be kept (Pleroma's and its forks' names), each map at most 8 KB: a change sets
 * the maps it names and keeps the others, so the whole stays within 64 KB however many changes add up.
 */
const FRONTEND_CONFIGURATION_NAMES = [
  "pleroma_fe",
  "masto_fe",
  "soapbox_fe",
  "akkoma_fe",
  "fedi_fe",
  "glitch_lily",
  "kenoma",
  "admin_fe",
] as const;
const FRONTEND_CONFIGURATION_MAX = 8 * 1024;
const BY_KEY = new Map(INSTANCE_SETTINGS.map((s) => [s.key, s]));

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

/** The federation policies as this isolate last read them. */
export function policies(env: Pick<Env, "DB">): PolicyRow[] {
  return states.get(bindingOf(env.DB))?.policies ?? [];
}

/** A host name as policies name it: lower case, no trailing dot, no port (as `deliveryAllowedSql` compares). */
const norm = (host: string) => host.toLowerCase().replace(/:\d+$/, "").replace(/\.$/, "");

/** The policies naming `host` (exactly, or as `*.parent`), and whether the allow-list (if any) admits it. */
function matches(rows: PolicyRow[], host: string, policy: Policy): PolicyRow | undefined {
  const h = norm(host);
  return rows.find(
    (r) =>
      r.policy === policy &&
      (r.domain === h || (r.domain.startsWith("*.") && (h === r.domain.slice(2) || h.endsWith(r.domain.slice(1))))),
  );
}

export function hasPolicy(env: Pick<Env, "DB">, host: string, policy: Policy): boolean {
  return matches(policies(env), host, policy) !== undefined;
}

/** Whether federation with `host` is refused: it is rejected, or an allow-list exists without it. */
export function federationRejected(env: Pick<Env, "DB">, host: string): boolean {
  const rows = policies(env);
  if (matches(rows, host, "reject")) return true;
  return rows.some((r) => r.policy === "accept") && !matches(rows, host, "accept");
}

/**
 * SQL true when deliveries to the host `hostSql` are allowed: the same rule as `federationRejected`, read from
 * the table itself (exact domains; wildcards `*.parent` too), so that delivery expansion never acts on a stale copy.
 */
export function deliveryAllowedSql(authoritySql: ReturnType<typeof sql>) {
  // Policies name hosts; an inbox's authority may carry a port (`[v6]:port` too): compared without it, as the
  // inbox compares the sender's host name, so a rejected domain is refused on any port both ways.
  const a = authoritySql;
  const hostSql = sql`(CASE WHEN ${a} LIKE '[%' THEN substr(${a}, 1, instr(${a}, ']')) WHEN instr(${a}, ':') > 0 THEN substr(${a}, 1, instr(${a}, ':') - 1) ELSE ${a} END)`;
  const matchesSql = (policy: Policy) =>
    sql`EXISTS (SELECT 1 FROM federation_policies p WHERE p.policy = ${policy} AND (p.domain = ${hostSql} OR (p.domain LIKE '*.%' AND (${hostSql} = substr(p.domain, 3) OR ${hostSql} LIKE '%' || substr(p.domain, 2)))))`;
  return sql`(NOT ${matchesSql("reject")} AND (NOT EXISTS (SELECT 1 FROM federation_policies WHERE policy = 'accept') OR ${matchesSql("accept")}))`;
}

// ---- ConfigDB's JSON form ---------------------------------------------------------------------------------

type Tuple = { tuple: [string, unknown] };
const tuple = (k: string, v: unknown): Tuple => ({ tuple: [k, v] });
const atom = (k: string) => `:${k}`;
const unatom = (k: unknown) => (typeof k === "string" ? k.replace(/^:/, "") : "");

export interface ConfigEntry {
  group: string;
  key: string;
  value: unknown;
  db: string[];
}

function encode(def: SettingDef, v: unknown): unknown {
  if (def.type === "poll_limits") return Object.entries(v as Record<string, number>).map(([k, n]) => tuple(atom(k), n));
  return v;
}

/** The effective settings in ConfigDB's form, with `db` naming those stored (overriding `[vars]`). */
export function configEntries(env: Env): ConfigEntry[] {
  const c = config(env);
  const values = states.get(bindingOf(env.DB))?.values ?? {};
  const rows = policies(env);
  const captchaStored = CAPTCHA_KEY in values;
  return [
    {
      group: ":pleroma",
      key: ":instance",
      value: INSTANCE_SETTINGS.map((s) => tuple(atom(s.key), encode(s, s.read(c)))),
      db: INSTANCE_SETTINGS.filter((s) => s.key in values).map((s) => atom(s.key)),
    },
    {
      group: ":pleroma",
      key: ":mrf_simple",
      value: POLICIES.map((p) =>
        tuple(
          atom(p),
          rows.filter((r) => r.policy === p).map((r) => tuple(r.domain, r.reason)),
        ),
      ),
      db: POLICIES.filter((p) => rows.some((r) => r.policy === p)).map(atom),
    },
    {
      group: ":pleroma",
      key: "Pleroma.Captcha",
      value: [tuple(":enabled", c.captcha !== "none")],
      db: captchaStored ? [":enabled"] : [],
    },
    {
      group: ":pleroma",
      key: ":frontends",
      // None chosen reads as Pleroma's name "none" (admin-fe reads `name` and `ref` of each).
      value: FRONTEND_KEYS.map((k) => tuple(atom(k), c.frontends[k] ?? { name: "none", ref: "none" })),
      db: FRONTEND_KEYS.filter((k) => frontendRow(k) in values).map(atom),
    },
    {
      group: ":pleroma",
      key: ":frontend_configurations",
      value: Object.entries(c.frontendConfigurations).map(([k, v]) => tuple(atom(k), v)),
      db: FRONTEND_CONFIGURATIONS_KEY in values ? Object.keys(c.frontendConfigurations).map(atom) : [],
    },
  ];
}

/** The `descriptions` endpoint: what each known key holds. */
export function configDescriptions() {
  const typeOf = (k: Kind) => (k === "languages" ? ["list", "string"] : k === "poll_limits" ? "keyword" : k);
  return [
    {
      group: ":pleroma",
      key: ":instance",
      type: "group",
      label: "Instance",
      description: "Instance-related settings",
      children: INSTANCE_SETTINGS.map((s) => ({
        key: atom(s.key),
        label: s.key,
        type: typeOf(s.type),
        description: s.description,
        ...(s.type === "poll_limits"
          ? { children: POLL_KEYS.map((k) => ({ key: atom(k), type: "integer", description: k })) }
          : {}),
      })),
    },
    {
      group: ":pleroma",
      key: ":mrf_simple",
      type: "group",
      label: "MRF Simple",
      description: "Simple ingress policies (per remote domain, each with a reason)",
      children: POLICIES.map((p) => ({
        key: atom(p),
        type: ["list", "tuple"],
        description: `Instances to apply ${p} to: {"tuple": ["domain", "reason"]}`,
      })),
    },
    {
      group: ":pleroma",
      key: "Pleroma.Captcha",
      type: "group",
      description: "Captcha-related settings",
      children: [{ key: ":enabled", type: "boolean", description: "Whether the captcha is required to register" }],
    },
    {
      group: ":pleroma",
      key: ":frontend_configurations",
      type: "group",
      label: "Frontend configurations",
      description:
        "Settings each frontend reads at start (GET /api/pleroma/frontend_configurations); Pleroma-FE's are under :pleroma_fe",
      children: [
        {
          key: ":pleroma_fe",
          label: "Pleroma FE",
          type: "map",
          description: "Pleroma-FE's settings over its static/config.json (theme, logo, redirectRootNoLogin, …)",
        },
      ],
    },
    {
      group: ":pleroma",
      key: ":frontends",
      type: "group",
      label: "Frontends",
      description: "Installed frontends to serve (GET /api/v1/pleroma/admin/frontends lists them)",
      children: FRONTEND_KEYS.map((k) => ({
        key: atom(k),
        label: k === "primary" ? "Primary" : "Admin",
        type: "map",
        description:
          k === "primary"
            ? 'The frontend served at / to browsers (null or name "none": the built-in pages)'
            : "The frontend served at /pleroma/admin/",
        children: [
          { key: "name", type: "string", description: "Name of the installed frontend" },
          { key: "ref", type: "string", description: "Reference of the installed frontend" },
        ],
      })),
    },
  ];
}

/** `:frontend_configurations`: frontend name → a JSON object of its settings (FRONTEND_CONFIGURATION_NAMES). */
function frontendConfigurations(value: unknown): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [k, v] of keyword(value, ":frontend_configurations")) {
    // A known name only (it also goes into a JSON path).
    if (!(FRONTEND_CONFIGURATION_NAMES as readonly string[]).includes(k))
      throw invalid(`:frontend_configurations :${k} is not one of ${FRONTEND_CONFIGURATION_NAMES.join(", ")}`);
    if (!v || typeof v !== "object" || Array.isArray(v))
      throw invalid(`:frontend_configurations :${k} must be a map of settings`);
    if (JSON.stringify(v).length > FRONTEND_CONFIGURATION_MAX)
      throw invalid(`:frontend_configurations :${k} is larger than ${FRONTEND_CONFIGURATION_MAX} bytes`);
    out[k] = v as Record<string, unknown>;
  }
  return out;
}

/** A `:frontends` subkey's value: `{name, ref}`, or null for none (`null`, `"none"`, or the name `"none"`). */
function frontendValue(k: string, v: unknown): { name: string; ref: string } | null {
  if (v === null || v === "none") return null;
  const o = v as { name?: unknown; ref?: unknown } | null;
  if (!o || typeof o !== "object" || typeof o.name !== "string")
    throw invalid(`:frontends :${k} must be {"name": …, "ref": …} or null`);
  if (o.name === "none") return null;
  const ref = o.ref ?? "stable";
  if (typeof ref !== "string" || !FRONTEND_SEGMENT.test(o.name) || !FRONTEND_SEGMENT.test(ref))
    throw invalid(`:frontends :${k} name and ref may only hold letters, digits, ".", "_" and "-"`);
  return { name: o.name, ref };
}

// ---- Parsing and saving a change ----------------------------------------------------------------------

const invalid = (what: string) => badRequest(`Invalid config: ${what}`);

/** A keyword list (`[{tuple: [":k", v]}]`, or a plain object) as [key, value] pairs. */
function keyword(value: unknown, where: string): [string, unknown][] {
  if (Array.isArray(value)) {
    return value.map((item) => {
      const t = (item as Tuple | null)?.tuple;
      if (!Array.isArray(t) || t.length !== 2 || typeof t[0] !== "string")
        throw invalid(`${where} must be a list of {"tuple": [key, value]}`);
      return [unatom(t[0]), t[1]];
    });
  }
  if (value && typeof value === "object") return Object.entries(value).map(([k, v]) => [unatom(k), v]);
  throw invalid(`${where} must be a keyword list`);
}

function checkValue(def: SettingDef, v: unknown): unknown {
  const bad = () =>
    invalid(
      `:${def.key} must be ${def.type === "poll_limits" ? "a keyword list of integers" : def.type === "languages" ? "a list of language codes" : `a ${def.type}`}`,
    );
  switch (def.type) {
    case "string":
      if (typeof v !== "string" || v.length > 5000) throw bad();
      if (def.key === "name" && !v.trim()) throw bad();
      return v;
    case "boolean":
      if (typeof v !== "boolean") throw bad();
      return v;
    case "integer":
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 2 ** 40) throw bad();
      return v;
    case "languages":
      if (
        !Array.isArray(v) ||
        v.length === 0 ||
        v.length > 50 ||
        !v.every((x) => typeof x === "string" && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(x))
      )
        throw bad();
      return v;
    case "poll_limits": {
      const out: Record<string, number> = {};
      for (const [k, n] of keyword(v, ":poll_limits")) {
        if (!(POLL_KEYS as readonly string[]).includes(k)) throw invalid(`unknown key :poll_limits :${k}`);
        if (typeof n !== "number" || !Number.isInteger(n) || n < 0) throw bad();
        out[k] = n;
      }
      return out;
    }
  }
}

const DOMAIN_PATTERN = /^(\*\.)?[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*(:\d{1,5})?$/;

function policyList(v: unknown, policy: string): { domain: string; reason: string }[] {
  if (!Array.isArray(v)) throw invalid(`:mrf_simple :${policy} must be a list`);
  if (v.length > 1000) throw invalid(`:mrf_simple :${policy} has too many entries`);
  const seen = new Map<string, string>();
  for (const item of v) {
    let domain: unknown;
    let reason: unknown = "";
    if (typeof item === "string") domain = item;
    else if (Array.isArray((item as Tuple | null)?.tuple) && (item as Tuple).tuple.length === 2)
      [domain, reason] = (item as Tuple).tuple;
    else throw invalid(`:mrf_simple :${policy} entries must be {"tuple": [domain, reason]}`);
    if (typeof domain !== "string" || typeof reason !== "string" || reason.length > 1000)
      throw invalid(`:mrf_simple :${policy} entries must be {"tuple": [domain, reason]}`);
    const d = norm(domain.trim());
    if (!DOMAIN_PATTERN.test(d)) throw invalid(`"${domain}" is not a domain`);
    seen.set(d, reason);
  }
  return [...seen].map(([domain, reason]) => ({ domain, reason }));
}

export interface ConfigChange {
  group: string;
  key: string;
  value?: unknown;
  delete?: boolean;
  subkeys?: string[];
}

/**
 * A validated change as the statements that make it (to run in ONE batch with the moderation log entry): a
 * keyword value sets the subkeys it names (others stay); `delete` removes the named `subkeys` (or all) from
 * the database, back to `[vars]`. Anything unknown is refused, nothing written.
 */
export function configStatements(d: DB, changes: ConfigChange[], t: number): D1PreparedStatement[] {
  const stmts: D1PreparedStatement[] = [];
  for (const ch of changes) {
    if (ch.group !== ":pleroma") throw invalid(`unknown group ${ch.group}`);
    const del = ch.delete === true;
    const subkeys = ch.subkeys?.map(unatom);
    if (ch.key === ":instance") {
      if (del) {
        for (const k of subkeys ?? INSTANCE_SETTINGS.map((s) => s.key)) {
          if (!BY_KEY.has(k)) throw invalid(`unknown key :instance :${k}`);
          stmts.push(statement(d, sql`DELETE FROM instance_settings WHERE key = ${k}`));
        }
        continue;
      }
      for (const [k, v] of keyword(ch.value, ":instance")) {
        const def = BY_KEY.get(k);
        if (!def) throw invalid(`unknown key :instance :${k}`);
        stmts.push(upsert(d, k, checkValue(def, v), t));
      }
    } else if (ch.key === ":mrf_simple") {
      const pairs: [string, unknown][] = del
        ? (subkeys ?? [...POLICIES]).map((k) => [k, []])
        : keyword(ch.value, ":mrf_simple");
      for (const [p, v] of pairs) {
        if (!(POLICIES as readonly string[]).includes(p)) throw invalid(`unknown key :mrf_simple :${p}`);
        const list = policyList(v, p);
        // The list given replaces the policy's list, as ConfigDB replaces a subkey's value. A rule it keeps keeps its
        // source (an imported or subscribed rule admin-fe sends back stays theirs); a new one is written by hand.
        const given = JSON.stringify(list);
        stmts.push(
          statement(
            d,
            sql`DELETE FROM federation_policies WHERE policy = ${p} AND domain NOT IN (SELECT json_extract(value, '$.domain') FROM json_each(${given}))`,
          ),
        );
        if (list.length) {
          stmts.push(
            statement(
              d,
              sql`INSERT INTO federation_policies (domain, policy, reason, created_at)
                SELECT json_extract(value, '$.domain'), ${p}, json_extract(value, '$.reason'), ${t} FROM json_each(${given}) WHERE true
                ON CONFLICT (domain, policy) DO UPDATE SET reason = excluded.reason WHERE reason IS NOT excluded.reason`,
            ),
          );
        }
      }
      // Deliveries already queued to a domain now refused are dropped with the change (same batch).
      stmts.push(
        statement(
          d,
          sql`DELETE FROM federation_deliveries WHERE NOT ${deliveryAllowedSql(sql`federation_deliveries.host`)}`,
        ),
      );
    } else if (ch.key === "Pleroma.Captcha") {
      if (del) {
        stmts.push(statement(d, sql`DELETE FROM instance_settings WHERE key = ${CAPTCHA_KEY}`));
        continue;
      }
      for (const [k, v] of keyword(ch.value, "Pleroma.Captcha")) {
        if (k !== "enabled") throw invalid(`unknown key Pleroma.Captcha :${k}`);
        if (typeof v !== "boolean") throw invalid(":enabled must be a boolean");
        stmts.push(upsert(d, CAPTCHA_KEY, v, t));
      }
    } else if (ch.key === ":frontend_configurations") {
      if (del) {
        stmts.push(statement(d, sql`DELETE FROM instance_settings WHERE key = ${FRONTEND_CONFIGURATIONS_KEY}`));
        continue;
      }
      // Each frontend named gets the map given; the others keep theirs (as ConfigDB sets the subkeys it names).
      for (const [name, map] of Object.entries(frontendConfigurations(ch.value))) {
        const v = JSON.stringify(map);
        stmts.push(
          statement(
            d,
            sql`INSERT INTO instance_settings (key, value, updated_at) VALUES (${FRONTEND_CONFIGURATIONS_KEY}, json_object(${name}, json(${v})), ${t})
                ON CONFLICT (key) DO UPDATE SET value = json_set(value, ${`$."${name}"`}, json(${v})), updated_at = ${t}`,
          ),
        );
      }
    } else if (ch.key === ":frontends") {
      const pairs: [string, unknown][] = del
        ? (subkeys ?? [...FRONTEND_KEYS]).map((k) => [k, undefined])
        : keyword(ch.value, ":frontends");
      for (const [k, v] of pairs) {
        if (!(FRONTEND_KEYS as readonly string[]).includes(k)) throw invalid(`unknown key :frontends :${k}`);
        const row = frontendRow(k as FrontendKey);
        stmts.push(
          del
            ? statement(d, sql`DELETE FROM instance_settings WHERE key = ${row}`)
            : // "none" rather than null: the column holds JSON and is NOT NULL.
              upsert(d, row, frontendValue(k, v) ?? "none", t),
        );
      }
    } else {
      throw invalid(`unknown key ${ch.key}`);
    }
  }
  return stmts;
}

function upsert(d: DB, key: string, value: unknown, t: number) {
  return statement(
    d,
    d
      .insert(instanceSettings)
      .values({ key, value, updatedAt: t })
      .onConflictDoUpdate({ target: instanceSettings.key, set: { value, updatedAt: t } }),
  );
}
