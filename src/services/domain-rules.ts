/**
 * Domain blocks and allows as Mastodon's admin API and the shared blocklists speak of them (issue 48), over the one
 * store of federation policies (`federation_policies`, Pleroma's `:mrf_simple`): a Mastodon block is a domain's set
 * of policy rows (`suspend` → `reject`, `silence` → `federated_timeline_removal`, `reject_media` →
 * `media_removal`, `reject_reports` → `report_removal`), an allow is an `accept` row. What Mastodon has and Pleroma
 * has not (the private comment, obfuscation) is kept beside them (`domain_rule_notes`). Each row remembers where it
 * came from (`source`: `hand`, `import`, or `subscription:<id>`), so that an import or a subscription never touches
 * a rule written by hand.
 *
 * A suspension severs what Mastodon's does, in the change's own batch: follows and follow requests both ways with
 * the domain's accounts, and the deliveries queued to it; the local users who lost follows get Mastodon 4.3's
 * notice (services/severed-relationships.ts).
 */
import { sql, type SQL } from "drizzle-orm";
import { statement, type DB } from "../db/client";
import { unprocessable } from "../lib/errors";
import { sha256Hex } from "../lib/crypto";
import { deliveryAllowedSql } from "./federation-policies";
import { severanceStatements } from "./severed-relationships";
import type { Policy } from "./instance-settings";

export type Severity = "noop" | "silence" | "suspend";
export const SEVERITIES = ["noop", "silence", "suspend"] as const;

/** A domain's block as Mastodon's `Admin::DomainBlock` holds it. */
export interface DomainBlock {
  domain: string;
  severity: Severity;
  rejectMedia: boolean;
  rejectReports: boolean;
  publicComment: string;
  privateComment: string;
  obfuscate: boolean;
}

export interface StoredBlock extends DomainBlock {
  createdAt: number;
  source: string;
  /** SHA-256 of the domain (hex), Mastodon's `digest`. */
  digest: string;
}

/** A block as stored (for a preview of one not stored yet). */
export const stored = async (b: DomainBlock, createdAt: number, source: string): Promise<StoredBlock> => ({
  ...b,
  createdAt,
  source,
  digest: await sha256Hex(b.domain),
});

/** The policies a Mastodon block is made of (the others, Pleroma's own, are left alone by block edits). */
export const BLOCK_POLICIES = ["reject", "federated_timeline_removal", "media_removal", "report_removal"] as const;

/** The policy rows a block is written as (the public comment as each row's reason). */
export function policiesOf(b: DomainBlock): Policy[] {
  const out: Policy[] = [];
  if (b.severity === "suspend") out.push("reject");
  if (b.severity === "silence") out.push("federated_timeline_removal");
  if (b.rejectMedia) out.push("media_removal");
  if (b.rejectReports) out.push("report_removal");
  return out;
}

/**
 * Mastodon's blocks cover subdomains (its `DomainBlock.rule_for` walks a host's parents: a block of `example.com`
 * covers `sub.example.com`); Pleroma's MRF names hosts exactly unless written `*.parent`. So a block written
 * through Mastodon's side (its admin API, imports, subscriptions) is stored as `*.domain`, the policies' own
 * spelling of "the domain and every name under it", and shown to Mastodon's side as `domain`; a rule an admin
 * writes on admin-fe's MRF page keeps Pleroma's meaning (exact unless `*.`). Allows stay exact, as Mastodon's
 * `DomainAllow.rule_for` is.
 */
export const bareDomain = (d: string) => d.replace(/^\*\./, "");
export const coveringDomain = (d: string) => `*.${bareDomain(d)}`;
/** The block's name as Mastodon's side sees it, in SQL, from a stored policy domain. */
const NAME = sql.raw(`CASE WHEN domain LIKE '*.%' THEN substr(domain, 3) ELSE domain END`);

/** Domain names as policies hold them: lower case, no trailing dot; `*.parent` for a domain and its subdomains. */
const DOMAIN = /^(\*\.)?(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9-]{1,63}$/;
export function normalizeDomain(given: string): string | null {
  let d = given.trim().toLowerCase().replace(/\.$/, "");
  try {
    // An internationalised name as its ASCII form (what hosts and signatures carry).
    if (/[^\x00-\x7f]/.test(d))
      d = (d.startsWith("*.") ? "*." : "") + new URL(`https://${d.replace(/^\*\./, "")}`).hostname;
  } catch {
    return null;
  }
  return DOMAIN.test(d) && d.includes(".") ? d : null;
}

interface Row {
  domain: string;
  policy: string;
  reason: string;
  source: string;
  created_at: number;
  private_comment: string | null;
  obfuscate: number | null;
}

/** Folds policy rows (ordered by domain) into blocks. */
function fold(rows: Row[]): StoredBlock[] {
  const by = new Map<string, StoredBlock>();
  for (const r of rows) {
    const b =
      by.get(r.domain) ??
      ({
        domain: r.domain,
        severity: "noop",
        rejectMedia: false,
        rejectReports: false,
        publicComment: r.reason,
        privateComment: r.private_comment ?? "",
        obfuscate: r.obfuscate === 1,
        createdAt: r.created_at,
        source: r.source,
        digest: "",
      } satisfies StoredBlock);
    if (r.policy === "reject") b.severity = "suspend";
    if (r.policy === "federated_timeline_removal" && b.severity === "noop") b.severity = "silence";
    if (r.policy === "media_removal") b.rejectMedia = true;
    if (r.policy === "report_removal") b.rejectReports = true;
    if (r.reason && !b.publicComment) b.publicComment = r.reason;
    b.createdAt = Math.min(b.createdAt, r.created_at);
    by.set(r.domain, b);
  }
  return [...by.values()];
}

const IN_BLOCK = sql.raw(`(${BLOCK_POLICIES.map((p) => `'${p}'`).join(", ")})`);

/** Sources whose rules `source` leaves alone: by hand, over everything; an import, over subscriptions; a subscription, over lower ones. */
export function outranking(source: string) {
  if (source === "hand") return sql`0`;
  if (source === "import") return sql`h.source = 'hand'`;
  const id = source.replace(/^subscription:/, "");
  return sql`(h.source IN ('hand', 'import') OR h.source IN (SELECT 'subscription:' || s.id FROM domain_subscriptions s
    WHERE s.priority > (SELECT priority FROM domain_subscriptions WHERE id = ${id})))`;
}

/** SQL true when `source` may write the rule of a domain stored as any of `domainsSql` (no outranking rule there). */
function freeOf(source: string, domainsSql: SQL[], policies: SQL) {
  return source === "hand"
    ? sql`1`
    : sql`NOT EXISTS (SELECT 1 FROM federation_policies h WHERE h.domain IN (${sql.join(domainsSql, sql`, `)}) AND h.policy IN ${policies} AND ${outranking(source)})`;
}

/** Rules of these sources outrank `source` (for a preview): hand, import, higher subscriptions. */
export async function outrankingSources(d: DB, source: string): Promise<Set<string>> {
  if (source === "hand") return new Set();
  if (source === "import") return new Set(["hand"]);
  const { results } = await statement(
    d,
    sql`SELECT 'subscription:' || s.id AS source FROM domain_subscriptions s
      WHERE s.priority > (SELECT priority FROM domain_subscriptions WHERE id = ${source.replace(/^subscription:/, "")})`,
  ).all<{ source: string }>();
  return new Set(["hand", "import", ...results.map((r) => r.source)]);
}

/**
 * Blocks as Mastodon's side names them (`*.domain` and an exact `domain` are one block `domain`), in domain order
 * after `after` (exclusive), at most `limit` (policy rows are few: admins write them).
 */
export async function listBlocks(
  d: DB,
  opts: { after?: string; limit: number; domain?: string },
): Promise<StoredBlock[]> {
  const one = opts.domain === undefined ? null : bareDomain(opts.domain);
  const { results } = await statement(
    d,
    sql`WITH doms AS (SELECT DISTINCT ${NAME} AS name FROM federation_policies WHERE policy IN ${IN_BLOCK}
          AND ${one === null ? sql`${NAME} > ${opts.after ?? ""}` : sql`domain IN (${one}, ${coveringDomain(one)})`}
          ORDER BY name LIMIT ${opts.limit})
        SELECT doms.name AS domain, p.policy, p.reason, p.source, p.created_at, n.private_comment, n.obfuscate
        FROM doms JOIN federation_policies p ON p.domain IN (doms.name, '*.' || doms.name) AND p.policy IN ${IN_BLOCK}
        LEFT JOIN domain_rule_notes n ON n.domain = doms.name
        ORDER BY doms.name, p.policy`,
  ).all<Row>();
  return Promise.all(fold(results).map(async (b) => ({ ...b, digest: await sha256Hex(b.domain) })));
}

export async function listAllows(
  d: DB,
  opts: { after?: string; limit: number; domain?: string },
): Promise<{ domain: string; createdAt: number; source: string }[]> {
  const { results } = await statement(
    d,
    sql`SELECT domain, created_at, source FROM federation_policies WHERE policy = 'accept'
        AND ${opts.domain === undefined ? sql`domain > ${opts.after ?? ""}` : sql`domain = ${opts.domain}`}
        ORDER BY domain LIMIT ${opts.limit}`,
  ).all<{ domain: string; created_at: number; source: string }>();
  return results.map((r) => ({ domain: r.domain, createdAt: r.created_at, source: r.source }));
}

/** The remote accounts of the domains in `domainsSql` (a subquery of names; `*.parent` covers the subdomains known). */
function accountsOf(domainsSql: SQL) {
  return sql`SELECT id FROM accounts WHERE domain IN (SELECT CASE WHEN value LIKE '*.%' THEN substr(value, 3) ELSE value END FROM (${domainsSql}))
    OR domain IN (SELECT i.domain FROM instances i JOIN (${domainsSql}) w ON w.value LIKE '*.%' AND i.domain LIKE '%' || substr(w.value, 2))`;
}

/** What a suspension severs, now: follows and follow requests both ways with the domains' accounts. */
export function severStatements(d: DB, domainsSql: SQL): D1PreparedStatement[] {
  const of = accountsOf(domainsSql);
  return ["follows", "follow_requests"].map((table) =>
    statement(d, sql`DELETE FROM ${sql.raw(table)} WHERE account_id IN (${of}) OR target_account_id IN (${of})`),
  );
}

/** A suspension of `domains` (those rejected when the batch runs): its notices, then the severing. */
export function suspensionStatements(d: DB, domains: string[], t: number): D1PreparedStatement[] {
  const rejected = (domain: SQL) =>
    sql`EXISTS (SELECT 1 FROM federation_policies p WHERE p.domain = ${domain} AND p.policy = 'reject')`;
  return [
    ...severanceStatements(
      d,
      domains.map((domain) => ({ type: "domain_block" as const, domain })),
      { following: true, followers: true, took: rejected },
      t,
    ),
    ...severStatements(d, sql`SELECT value FROM json_each(${JSON.stringify(domains)}) WHERE ${rejected(sql`value`)}`),
  ];
}

/** How many local accounts would lose follows or followers on these domains (the preview's figure). */
export async function severedCount(d: DB, domains: string[]): Promise<number> {
  if (!domains.length) return 0;
  const of = accountsOf(sql`SELECT value FROM json_each(${JSON.stringify(domains.map(coveringDomain))})`);
  const row = await statement(
    d,
    sql`SELECT count(*) AS n FROM (SELECT account_id FROM follows WHERE target_account_id IN (${of})
        UNION SELECT target_account_id FROM follows WHERE account_id IN (${of}))`,
  ).first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * The statements that make each of `blocks` its domain's block (replacing the block policies it had, keeping
 * Pleroma's others), from `source`, whatever their number: a fixed handful of set-based statements (D1 counts a
 * batch's statements against an invocation's queries). From a source other than `hand`, a domain with a rule
 * written by hand is left alone. `lift`: domains whose rules from this source are lifted (a list's retraction).
 */
export function blockStatements(
  d: DB,
  blocks: DomainBlock[],
  source: string,
  t: number,
  lift: string[] = [],
): D1PreparedStatement[] {
  const free = freeOf(source, [sql`r.domain`, sql`r.bare`], IN_BLOCK);
  const rules = JSON.stringify(
    blocks.map((b) => ({
      domain: coveringDomain(b.domain),
      bare: bareDomain(b.domain),
      policies: policiesOf(b),
      reason: b.publicComment,
      note: b.privateComment,
      obfuscate: b.obfuscate ? 1 : 0,
    })),
  );
  const list = sql`(SELECT json_extract(value, '$.domain') AS domain, json_extract(value, '$.bare') AS bare, value AS rule
    FROM json_each(${rules}))`;
  const lifted = JSON.stringify(lift.map(bareDomain));
  const liftedStored = sql`(SELECT value FROM json_each(${lifted}) UNION ALL SELECT '*.' || value FROM json_each(${lifted}))`;
  const suspended = blocks.filter((b) => b.severity === "suspend").map((b) => coveringDomain(b.domain));
  return [
    // Policies of these domains the new rule does not have (from this source, or any when by hand), and an exact
    // rule of the bare name, which the rule written (`*.domain`) replaces.
    statement(
      d,
      sql`DELETE FROM federation_policies WHERE policy IN ${IN_BLOCK} AND rowid IN (
        SELECT p.rowid FROM ${list} r JOIN federation_policies p ON p.domain IN (r.domain, r.bare) AND p.policy IN ${IN_BLOCK}
        WHERE ${free} AND (p.domain = r.bare OR p.policy NOT IN (SELECT value FROM json_each(json_extract(r.rule, '$.policies')))))`,
    ),
    statement(
      d,
      sql`INSERT INTO federation_policies (domain, policy, reason, created_at, source)
        SELECT r.domain, pol.value, json_extract(r.rule, '$.reason'), ${t}, ${source}
        FROM ${list} r, json_each(json_extract(r.rule, '$.policies')) pol WHERE ${free}
        ON CONFLICT (domain, policy) DO UPDATE SET reason = excluded.reason, source = excluded.source
          WHERE reason IS NOT excluded.reason OR source IS NOT excluded.source`,
    ),
    statement(
      d,
      sql`INSERT INTO domain_rule_notes (domain, private_comment, obfuscate)
        SELECT r.bare, json_extract(r.rule, '$.note'), json_extract(r.rule, '$.obfuscate') FROM ${list} r
        WHERE ${free} AND (json_extract(r.rule, '$.note') <> '' OR json_extract(r.rule, '$.obfuscate') = 1)
        ON CONFLICT (domain) DO UPDATE SET private_comment = excluded.private_comment, obfuscate = excluded.obfuscate`,
    ),
    statement(
      d,
      sql`DELETE FROM domain_rule_notes WHERE domain IN (SELECT r.bare FROM ${list} r WHERE ${free}
        AND json_extract(r.rule, '$.note') = '' AND json_extract(r.rule, '$.obfuscate') = 0)`,
    ),
    // A retraction lifts only this source's own rows.
    statement(
      d,
      sql`DELETE FROM federation_policies WHERE policy IN ${IN_BLOCK} AND source = ${source}
        AND domain IN ${liftedStored}`,
    ),
    statement(
      d,
      sql`DELETE FROM domain_rule_notes WHERE domain IN (SELECT value FROM json_each(${lifted}))
        AND NOT EXISTS (SELECT 1 FROM federation_policies p
          WHERE p.domain IN (domain_rule_notes.domain, '*.' || domain_rule_notes.domain) AND p.policy IN ${IN_BLOCK})`,
    ),
    // Suspensions sever at once (only where the suspension took: a hand rule may have kept the domain), with
    // the notice to the local users who lose follows.
    ...suspensionStatements(d, suspended, t),
    purgeDeliveries(d),
  ];
}

/** Deliveries already queued to a domain now refused go with the change (same batch). */
export const purgeDeliveries = (d: DB) =>
  statement(d, sql`DELETE FROM federation_deliveries WHERE NOT ${deliveryAllowedSql(sql`federation_deliveries.host`)}`);

/** Lifts a domain's block (its block policies, `*.domain` or exact, and notes), as an admin does by hand. */
export function unblockStatements(d: DB, domain: string): D1PreparedStatement[] {
  const bare = bareDomain(domain);
  return [
    statement(
      d,
      sql`DELETE FROM federation_policies WHERE domain IN (${bare}, ${coveringDomain(bare)}) AND policy IN ${IN_BLOCK}`,
    ),
    statement(d, sql`DELETE FROM domain_rule_notes WHERE domain = ${bare}`),
  ];
}

export function allowStatements(d: DB, domain: string, source: string, t: number): D1PreparedStatement[] {
  return [
    statement(
      d,
      sql`INSERT INTO federation_policies (domain, policy, reason, created_at, source) VALUES (${domain}, 'accept', '', ${t}, ${source})
        ON CONFLICT (domain, policy) DO NOTHING`,
    ),
    // An allow-list now exists (or grew): deliveries to domains outside it go.
    purgeDeliveries(d),
  ];
}

export function disallowStatements(d: DB, domain: string, source = "hand"): D1PreparedStatement[] {
  const own = source === "hand" ? sql`1` : sql`source = ${source}`;
  return [
    statement(d, sql`DELETE FROM federation_policies WHERE domain = ${domain} AND policy = 'accept' AND ${own}`),
    purgeDeliveries(d),
  ];
}

/** 422 when a block's fields make no sense together (Mastodon: a `noop` block must reject something). */
export function checkBlock(b: DomainBlock): void {
  if (b.severity === "noop" && !b.rejectMedia && !b.rejectReports)
    throw unprocessable("A block of severity noop must reject media or reports");
}

/** What an import would do, before it does it. */
export interface ImportPlan {
  added: DomainBlock[];
  changed: { before: StoredBlock; after: DomainBlock }[];
  unchanged: number;
  /** Domains with a rule of a source that outranks this one (by hand, an import, a higher list): left alone. */
  keptByHand: string[];
  /** This source's rules the list no longer has (lifted with `replace`). */
  removed: StoredBlock[];
  /** Local accounts that would lose follows or followers to new suspensions. */
  severs: number;
}

const same = (a: DomainBlock, b: DomainBlock) =>
  a.severity === b.severity &&
  a.rejectMedia === b.rejectMedia &&
  a.rejectReports === b.rejectReports &&
  a.publicComment === b.publicComment &&
  a.privateComment === b.privateComment &&
  a.obfuscate === b.obfuscate;

/** Compares a list with the rules in force: rules are few (admins and lists write them), read in one statement. */
export async function planImport(d: DB, blocks: DomainBlock[], source: string, replace: boolean): Promise<ImportPlan> {
  const [rules, above] = await Promise.all([listBlocks(d, { limit: 1_000_000 }), outrankingSources(d, source)]);
  const current = new Map(rules.map((b) => [b.domain, b]));
  const plan: ImportPlan = { added: [], changed: [], unchanged: 0, keptByHand: [], removed: [], severs: 0 };
  const listed = new Set<string>();
  for (const given of blocks) {
    const b = { ...given, domain: bareDomain(given.domain) };
    listed.add(b.domain);
    const before = current.get(b.domain);
    if (!before) plan.added.push(b);
    else if (same(before, b)) plan.unchanged++;
    else if (above.has(before.source)) plan.keptByHand.push(b.domain);
    else plan.changed.push({ before, after: b });
  }
  if (replace) for (const b of current.values()) if (b.source === source && !listed.has(b.domain)) plan.removed.push(b);
  const newlySuspended = [...plan.added, ...plan.changed.map((c) => c.after)]
    .filter((b) => b.severity === "suspend" && current.get(b.domain)?.severity !== "suspend")
    .map((b) => b.domain);
  plan.severs = await severedCount(d, newlySuspended);
  return plan;
}

/** An allow-list from `source`: its domains allowed (where no outranking rule is), `lift` its own retracted ones. */
export function allowListStatements(d: DB, domains: string[], source: string, t: number, lift: string[] = []) {
  const accept = sql.raw("('accept')");
  return [
    statement(
      d,
      sql`INSERT INTO federation_policies (domain, policy, reason, created_at, source)
        SELECT value, 'accept', '', ${t}, ${source} FROM json_each(${JSON.stringify(domains)}) r
        WHERE ${freeOf(source, [sql`r.value`], accept)} ON CONFLICT (domain, policy) DO NOTHING`,
    ),
    statement(
      d,
      sql`DELETE FROM federation_policies WHERE policy = 'accept' AND source = ${source}
        AND domain IN (SELECT value FROM json_each(${JSON.stringify(lift)}))`,
    ),
    purgeDeliveries(d),
  ];
}
