/**
 * Pleroma's ConfigDB form of the run-time settings (`/api/v1/pleroma/admin/config`): group `:pleroma`, keys
 * `:instance` (Starling's settings under Pleroma's names), `:mrf_simple` (the federation policies),
 * `Pleroma.Captcha`, `:frontends` and `:frontend_configurations`, values in ConfigDB's JSON form
 * (`{"tuple": [":name", "Starling"]}`): what is in force, what each key holds, and a change checked and turned
 * into the statements that store it (instance-settings.ts keeps and applies what is stored).
 */
import { config, type Env } from "../env";
import { statement, type DB } from "../db/client";
import { instanceSettings } from "../db/schema";
import { badRequest } from "../lib/errors";
import { sql } from "drizzle-orm";
import { FRONTEND_SEGMENT } from "../lib/frontend-archive";
import { deliveryAllowedSql, policyDomain } from "./federation-policies";
import { suspensionStatements } from "./domain-rules";
import {
  BY_KEY,
  CAPTCHA_KEY,
  FRONTEND_CONFIGURATIONS_KEY,
  FRONTEND_KEYS,
  frontendRow,
  INSTANCE_SETTINGS,
  POLICIES,
  policies,
  POLL_KEYS,
  storedSettings,
  type FrontendKey,
  type Kind,
  type SettingDef,
} from "./instance-settings";

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
  const values = storedSettings(env);
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
    const d = policyDomain(domain);
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
    const subkeys = ch.subkeys?.map(unatom);
    const write = CONFIG_KEYS.get(ch.key);
    if (!write) throw invalid(`unknown key ${ch.key}`);
    stmts.push(...write(d, { value: ch.value, del: ch.delete === true, subkeys }, t));
  }
  return stmts;
}

/** A change to one key: its value, or `del` with the subkeys to delete (none named: all of them). */
interface KeyChange {
  value: unknown;
  del: boolean;
  subkeys: string[] | undefined;
}

/** The ConfigDB keys of group `:pleroma` a change may name, each with the statements that store a change to it. */
const CONFIG_KEYS = new Map<string, (d: DB, ch: KeyChange, t: number) => D1PreparedStatement[]>([
  [":instance", instanceStatements],
  [":mrf_simple", mrfSimpleStatements],
  ["Pleroma.Captcha", captchaStatements],
  [":frontend_configurations", frontendConfigurationStatements],
  [":frontends", frontendStatements],
]);

/** `:instance`: Starling's settings under Pleroma's names, each checked against its definition. */
function instanceStatements(d: DB, { value, del, subkeys }: KeyChange, t: number): D1PreparedStatement[] {
  const stmts: D1PreparedStatement[] = [];
  if (del) {
    for (const k of subkeys ?? INSTANCE_SETTINGS.map((s) => s.key)) {
      if (!BY_KEY.has(k)) throw invalid(`unknown key :instance :${k}`);
      stmts.push(statement(d, sql`DELETE FROM instance_settings WHERE key = ${k}`));
    }
    return stmts;
  }
  for (const [k, v] of keyword(value, ":instance")) {
    const def = BY_KEY.get(k);
    if (!def) throw invalid(`unknown key :instance :${k}`);
    stmts.push(upsert(d, k, checkValue(def, v), t));
  }
  return stmts;
}

/**
 * `:mrf_simple`: the federation policies. The list given replaces the policy's list, as ConfigDB replaces a
 * subkey's value; a rejection severs what a suspension does, and deliveries queued to a domain now refused go.
 */
function mrfSimpleStatements(d: DB, { value, del, subkeys }: KeyChange, t: number): D1PreparedStatement[] {
  const stmts: D1PreparedStatement[] = [];
  const pairs: [string, unknown][] = del
    ? (subkeys ?? [...POLICIES]).map((k) => [k, []])
    : keyword(value, ":mrf_simple");
  for (const [p, v] of pairs) {
    if (!(POLICIES as readonly string[]).includes(p)) throw invalid(`unknown key :mrf_simple :${p}`);
    const list = policyList(v, p);
    // A rule the list keeps keeps its source (an imported or subscribed rule admin-fe sends back stays theirs); a
    // new one is written by hand.
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
  // A rejection severs what a Mastodon suspension does (services/domain-rules.ts), with its notices.
  const rejected = pairs.find(([p]) => p === "reject");
  if (rejected && !del)
    stmts.push(
      ...suspensionStatements(
        d,
        policyList(rejected[1], "reject").map((r) => r.domain),
        t,
      ),
    );
  // Deliveries already queued to a domain now refused are dropped with the change (same batch).
  stmts.push(
    statement(
      d,
      sql`DELETE FROM federation_deliveries WHERE NOT ${deliveryAllowedSql(sql`federation_deliveries.host`)}`,
    ),
  );
  return stmts;
}

/** `Pleroma.Captcha`: only `:enabled`, a boolean. */
function captchaStatements(d: DB, { value, del }: KeyChange, t: number): D1PreparedStatement[] {
  if (del) return [statement(d, sql`DELETE FROM instance_settings WHERE key = ${CAPTCHA_KEY}`)];
  return keyword(value, "Pleroma.Captcha").map(([k, v]) => {
    if (k !== "enabled") throw invalid(`unknown key Pleroma.Captcha :${k}`);
    if (typeof v !== "boolean") throw invalid(":enabled must be a boolean");
    return upsert(d, CAPTCHA_KEY, v, t);
  });
}

/**
 * `:frontend_configurations`: each frontend named gets the map given; the others keep theirs (as ConfigDB sets
 * the subkeys it names).
 */
function frontendConfigurationStatements(d: DB, { value, del }: KeyChange, t: number): D1PreparedStatement[] {
  if (del) return [statement(d, sql`DELETE FROM instance_settings WHERE key = ${FRONTEND_CONFIGURATIONS_KEY}`)];
  return Object.entries(frontendConfigurations(value)).map(([name, map]) => {
    const v = JSON.stringify(map);
    return statement(
      d,
      sql`INSERT INTO instance_settings (key, value, updated_at) VALUES (${FRONTEND_CONFIGURATIONS_KEY}, json_object(${name}, json(${v})), ${t})
                ON CONFLICT (key) DO UPDATE SET value = json_set(value, ${`$."${name}"`}, json(${v})), updated_at = ${t}`,
    );
  });
}

/** `:frontends`: the primary and the admin frontend, each a row of its own. */
function frontendStatements(d: DB, { value, del, subkeys }: KeyChange, t: number): D1PreparedStatement[] {
  const pairs: [string, unknown][] = del
    ? (subkeys ?? [...FRONTEND_KEYS]).map((k) => [k, undefined])
    : keyword(value, ":frontends");
  return pairs.map(([k, v]) => {
    if (!(FRONTEND_KEYS as readonly string[]).includes(k)) throw invalid(`unknown key :frontends :${k}`);
    const row = frontendRow(k as FrontendKey);
    return del
      ? statement(d, sql`DELETE FROM instance_settings WHERE key = ${row}`)
      : // "none" rather than null: the column holds JSON and is NOT NULL.
        upsert(d, row, frontendValue(k, v) ?? "none", t);
  });
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
