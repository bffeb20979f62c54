/**
 * Federation policies (Pleroma's MRF SimplePolicy in spirit): per remote domain, `reject`, an allow-list
 * (`accept`), and what is stripped from what comes in. The rows are edited through the admin config API
 * (`:mrf_simple`, services/admin-config.ts) and read from this isolate's copy (services/instance-settings.ts).
 * Rejection is checked at the inbox door (federation/door/handle.ts), in resolving (fetching/resolve.ts) and, for
 * what goes OUT, in delivery expansion (services/audience.ts, in SQL). Which host a policy names is ONE rule,
 * written twice because it runs in two places: `policyHost`/`matches` here in TypeScript, `deliveryAllowedSql` in
 * SQL; test/federation-policy-hosts.test.ts runs both on the same table of hosts.
 */
import { sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import type { Env } from "../env";
import { policies, POLICIES, type Policy, type PolicyRow } from "./instance-settings";

/** An internationalised name in its ASCII (punycode) form, as URLs carry it; unchanged when it is not one. */
function asciiHost(host: string): string {
  if (!/[^\x00-\x7f]/.test(host)) return host;
  try {
    return new URL(`http://${host}`).host;
  } catch {
    return host;
  }
}

/**
 * A host as policies name it, from a host or an authority as a URL gives it: without the port (`[v6]:port`
 * too), ASCII lower case, without trailing dots (`example.com.` is `example.com`), an internationalised name in
 * punycode. `hostSql` below is the same in SQL, for hosts that come from URLs (already punycode).
 */
export function policyHost(host: string): string {
  const a = asciiHost(host);
  const bare = a.startsWith("[") ? a.slice(0, a.indexOf("]") + 1) : a.split(":")[0]!;
  return bare.replace(/[A-Z]+/g, (x) => x.toLowerCase()).replace(/\.+$/, "");
}

/** A policy's domain as an admin gives it, as stored: a host (`policyHost`), or `*.` and a host (wildcard). */
export function policyDomain(raw: string): string {
  const d = raw.trim();
  return d.startsWith("*.") ? `*.${policyHost(d.slice(2))}` : policyHost(d);
}

/** The policy row naming `host` (exactly, or as `*.parent`: the parent and every name under it). */
function matches(rows: PolicyRow[], host: string, policy: Policy): PolicyRow | undefined {
  const h = policyHost(host);
  return rows.find(
    (r) =>
      r.policy === policy &&
      (r.domain === h || (r.domain.startsWith("*.") && (h === r.domain.slice(2) || h.endsWith(r.domain.slice(1))))),
  );
}

/** `policyHost` in SQL, for a host or authority column (hosts from URLs: ASCII already). */
const hostSql = (a: SQL) =>
  sql`rtrim(lower(CASE WHEN ${a} LIKE '[%' THEN substr(${a}, 1, instr(${a}, ']')) WHEN instr(${a}, ':') > 0 THEN substr(${a}, 1, instr(${a}, ':') - 1) ELSE ${a} END), '.')`;

/**
 * SQL true when federating with the host or authority `authoritySql` is allowed: the rule of `federationRejected`
 * (`matches` above), read from the table itself so that delivery expansion never acts on a stale copy. A rejected
 * domain is refused on any port, as the inbox compares the sender's host name.
 */
export function deliveryAllowedSql(authoritySql: SQL) {
  const h = hostSql(authoritySql);
  return sql`(NOT ${policyMatchSql("reject", h)} AND (NOT EXISTS (SELECT 1 FROM federation_policies WHERE policy = 'accept') OR ${policyMatchSql("accept", h)}))`;
}

/**
 * SQL true when a `policy` row names the host `h` (`matches` above; `h` as `policyHost` gives it): the host
 * exactly, or `*.` and the host or one of its parents, each a look-up of the (domain, policy) key, so that a
 * blocklist of thousands of rules costs a few rows per host, not a scan.
 */
export const policyMatchSql = (policy: Policy, h: SQL) =>
  sql`EXISTS (WITH RECURSIVE up(name) AS (SELECT ${h} UNION ALL SELECT substr(name, instr(name, '.') + 1) FROM up WHERE instr(name, '.') > 0)
    SELECT 1 FROM up JOIN federation_policies p ON p.policy = ${policy} AND p.domain IN (up.name, '*.' || up.name)
    WHERE p.domain LIKE '*.%' OR up.name = ${h})`;

/**
 * SQL true when the account `accountIdSql` is limited by moderators (Mastodon's "silence", its 4.3 notification
 * policy's `for_limited_accounts`): a remote account of a domain under `federated_timeline_removal`.
 */
export const limitedAccountSql = (accountIdSql: SQL) =>
  sql`EXISTS (SELECT 1 FROM accounts la WHERE la.id = ${accountIdSql} AND la.domain IS NOT NULL AND ${policyMatchSql("federated_timeline_removal", hostSql(sql`la.domain`))})`;

export function hasPolicy(env: Pick<Env, "DB">, host: string, policy: Policy): boolean {
  return matches(policies(env), host, policy) !== undefined;
}

/** Whether federation with `host` is refused: it is rejected, or an allow-list exists without it. */
export function federationRejected(env: Pick<Env, "DB">, host: string): boolean {
  const rows = policies(env);
  if (matches(rows, host, "reject")) return true;
  return rows.some((r) => r.policy === "accept") && !matches(rows, host, "accept");
}

const bindingOf = (d: DB) => ({ DB: d.$client });

/** Whether anything from `host` is refused (rejected, or outside the allow-list). */
export const rejectedHost = (d: DB, host: string) => federationRejected(bindingOf(d), host);

/**
 * A remote note as the policies of its author's domain allow it: attachments stripped (`media_removal`), marked
 * sensitive (`media_nsfw`, when it has media), and kept off the federated timeline (`federated_timeline_removal`:
 * public becomes unlisted, as Pleroma moves the public address from `to` to `cc`).
 */
export function applyNotePolicies<T extends { media: unknown[]; sensitive: boolean; visibility: string }>(
  d: DB,
  host: string,
  note: T,
): T {
  const env = bindingOf(d);
  let n = note;
  if (n.media.length && hasPolicy(env, host, "media_removal")) n = { ...n, media: [] };
  if (n.media.length && hasPolicy(env, host, "media_nsfw")) n = { ...n, sensitive: true };
  if (n.visibility === "public" && hasPolicy(env, host, "federated_timeline_removal"))
    n = { ...n, visibility: "unlisted" };
  return n;
}

/** A remote actor's images as the policies allow: `avatar_removal`, `banner_removal`. */
export function applyActorPolicies<T extends { avatar: string | null; header: string | null }>(
  d: DB,
  host: string,
  f: T,
): T {
  const env = bindingOf(d);
  let out = f;
  if (hasPolicy(env, host, "avatar_removal")) out = { ...out, avatar: null };
  if (hasPolicy(env, host, "banner_removal")) out = { ...out, header: null };
  return out;
}

/**
 * Whether `host` is limited (Mastodon's "silence", here `federated_timeline_removal`): besides keeping its posts off
 * the federated timeline, its accounts' follows need the local user's approval, as Mastodon asks for a silenced
 * account's (services/inbound-follows.ts); `limitedAccountSql` is the same rule for an account in SQL.
 */
export const limitedHost = (d: DB, host: string) => hasPolicy(bindingOf(d), host, "federated_timeline_removal");

/** Whether reports (`Flag`s) from `host` are dropped (`report_removal`). */
export const reportsRemoved = (d: DB, host: string) => hasPolicy(bindingOf(d), host, "report_removal");

/** The policies as Pleroma's MRF transparency tells them (instance and nodeinfo): domains per policy, reasons. */
export interface MrfTransparency {
  mrf_simple: Record<string, string[]>;
  mrf_simple_info: Record<string, Record<string, { reason: string }>>;
}

export function mrfTransparency(env: Pick<Env, "DB">): MrfTransparency {
  const mrf_simple: Record<string, string[]> = {};
  const mrf_simple_info: Record<string, Record<string, { reason: string }>> = {};
  for (const p of POLICIES) mrf_simple[p] = [];
  for (const r of policies(env)) {
    mrf_simple[r.policy]!.push(r.domain);
    if (r.reason) (mrf_simple_info[r.policy] ??= {})[r.domain] = { reason: r.reason };
  }
  return { mrf_simple, mrf_simple_info };
}
