/**
 * Delivery, the second step of outgoing federation (`deliverHost`): per destination host, by its `HostDelivery`
 * Durable Object (named by the host, woken by wake.ts, then by its own alarm): due deliveries are claimed, each
 * POST is signed (the actor's RSA key, keyId `<actor>#main-key`; draft-cavage or RFC 9421 as the host accepts,
 * door/signature-specs.ts: the scheme is read with the run's rows and written with its outcome) and sent through the SSRF guard
 * with a 10 s timeout, a few actors at a time and each actor's deliveries to the host in order; the bookkeeping
 * of a run is one batch. 2xx: delivered; 4xx other than 408/429: dropped; otherwise retried 30 s later, doubling
 * up to 6 h, for two days, then dropped and the host marked failing (`instances.failing_since`). A host whose
 * deliveries have all failed for over a day (`instances.unreachable_since`) is only probed: one delivery every
 * 6 h, the rest waiting (and not woken) until a probe succeeds; other hosts are never held by it.
 */
import { sql } from "drizzle-orm";
import { db, statement, type DB } from "../../db/client";
import { config, VERSION, type Env } from "../../env";
import { pemToDer } from "../../lib/keys";
import { allowPrivateAddress, isFetchableUrl, outboundFetch, OutboundRefused } from "../../lib/outbound";
import { GIVE_UP_MS, SIGNED_BY_INSTANCE, type OutboxActivity } from "../../services/outbox";
import { instanceSigner } from "../door/instance-actor";
import { knock, runMemory, specOf, type SpecMemory } from "../door/signature-specs";

/** A claim (of an outbox row or a delivery) not finished by then is taken again. */
export const LEASE_MS = 5 * 60_000;
/** Deliveries per host per run: each is a subrequest (the Free plan allows 50 per invocation). */
const DELIVERIES_PER_RUN = 40;
/** Inboxes of one host posted to at the same time. */
const CONCURRENCY = 6;
const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 6 * 3600_000;
/**
 * A host whose deliveries have all failed for this long is unreachable (Mastodon's UnavailableDomain): new and
 * retried deliveries wait, and one probe is sent every `PROBE_EVERY_MS`; the first success lets the rest through.
 */
export const UNREACHABLE_AFTER_MS = 24 * 3600_000;
export const PROBE_EVERY_MS = 6 * 3600_000;
const TIMEOUT_MS = 10_000;

function retryDelay(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
}

type Claimed = { id: string; outbox_id: string; inbox: string; attempts: number; created_at: number };

/**
 * Whether the delivery `d`'s host is unreachable for over a day with a recent probe: nothing is sent to it before
 * the next one. Looked up per queued host (its row by key), so the cost follows the queue, not every host known.
 */
export const waiting = (t: number) =>
  sql`EXISTS (SELECT 1 FROM instances i WHERE i.domain = d.host AND i.unreachable_since <= ${t - UNREACHABLE_AFTER_MS} AND i.last_failure_at > ${t - PROBE_EVERY_MS})`;

/** How many of `host`'s due deliveries a run may claim: all of a run, one probe, or none while it waits. */
const claimLimit = (host: string, t: number) =>
  sql`coalesce((SELECT CASE WHEN unreachable_since IS NULL OR unreachable_since > ${t - UNREACHABLE_AFTER_MS} THEN ${DELIVERIES_PER_RUN}
      WHEN coalesce(last_failure_at, 0) <= ${t - PROBE_EVERY_MS} THEN 1 ELSE 0 END FROM instances WHERE domain = ${host}), ${DELIVERIES_PER_RUN})`;

/** When `host` has something to send next: its earliest delivery, not before its next probe when unreachable. */
const nextFor = (host: string, t: number) =>
  sql`SELECT max(min(next_at), coalesce((SELECT last_failure_at + ${PROBE_EVERY_MS} FROM instances
      WHERE domain = ${host} AND unreachable_since <= ${t - UNREACHABLE_AFTER_MS}), 0)) AS next
    FROM federation_deliveries WHERE host = ${host}`;
type Outcome = { kind: "done" } | { kind: "drop" } | { kind: "retry"; error: string } | { kind: "later" };

/** Who is calling, as servers log it: the software and the instance (Mastodon's form). */
const userAgent = (env: Env) => `Starling/${VERSION} (+https://${config(env).domain || "localhost"}/)`;

/** One signed POST (knocking again in the other scheme when the first is refused); what became of it. */
async function post(
  env: Env,
  inbox: string,
  body: string,
  actorUri: string,
  key: CryptoKey,
  specs: SpecMemory,
): Promise<Outcome> {
  try {
    const req = new Request(inbox, {
      method: "POST",
      headers: {
        "Content-Type": "application/activity+json",
        Accept: "application/activity+json",
        "User-Agent": userAgent(env),
      },
      body,
    });
    const send = async (signed: Request) =>
      outboundFetch(signed, undefined, {
        allowPrivate: allowPrivateAddress(env),
        timeoutMs: TIMEOUT_MS,
        maxRedirects: 0,
        maxBytes: 64_000,
      });
    const bytes = new TextEncoder().encode(body).buffer as ArrayBuffer;
    const res = await knock(req, { keyId: new URL(`${actorUri}#main-key`), privateKey: key }, specs, send, bytes);
    await res.body?.cancel().catch(() => {});
    if (res.status >= 200 && res.status < 300) return { kind: "done" };
    // As Mastodon: a 4xx will not change, except 401 (the receiver may not have fetched our key yet), 408 and 429.
    if (res.status >= 400 && res.status < 500 && res.status !== 401 && res.status !== 408 && res.status !== 429)
      return { kind: "drop" };
    return { kind: "retry", error: `HTTP ${res.status}` };
  } catch (e) {
    // An address the guard refuses by itself will not become acceptable: dropped. A name that did not resolve
    // (or resolved to a private address) may yet; it is retried with timeouts and network errors.
    if (e instanceof OutboundRefused && !isFetchableUrl(inbox, allowPrivateAddress(env))) return { kind: "drop" };
    return { kind: "retry", error: String((e as Error)?.message ?? e) };
  }
}

const pemKeys = new Map<string, Promise<CryptoKey>>();
export function importPem(pem: string): Promise<CryptoKey> {
  let k = pemKeys.get(pem);
  if (!k) {
    // Fedify's signRequest insists on an extractable key.
    k = crypto.subtle.importKey("pkcs8", pemToDer(pem), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["sign"]);
    pemKeys.set(pem, k);
  }
  return k;
}

/**
 * One run for one host: claims up to `DELIVERIES_PER_RUN` due deliveries (oldest first), posts them, and writes
 * the outcome in one batch. Answers how many were delivered and when the host has something due next (or null).
 */
export async function deliverHost(
  env: Env,
  host: string,
  t: number = Date.now(),
): Promise<{ delivered: number; attempted: number; next: number | null }> {
  const d = db(env);
  const claimed = await claim(d, host, t);
  if (claimed.length === 0) {
    const row = await d.get<{ next: number | null }>(nextFor(host, t));
    return { delivered: 0, attempted: 0, next: row?.next ?? null };
  }
  const sources = await sourcesOf(d, host, claimed);
  const byOutbox = new Map(sources.map((s) => [s.id, s]));
  const specs = runMemory(specOf(sources[0]?.spec));
  // Rows the instance actor sends (forwarded reports) are signed with its key, as its id.
  const instance = sources.some((s) => SIGNED_BY_INSTANCE.has(s.type)) ? await instanceSigner(env) : null;
  const chains = chainsByActor(claimed.sort(inOutboxOrder), byOutbox);
  const outcomes = new Map<string, Outcome>();
  const queue = [...chains.values()];
  const send = { env, byOutbox, instance, specs, outcomes };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, () => sendChains(queue, send)));
  const run = tally(claimed, outcomes, t);
  const stmts = [
    ...queueStatements(d, run, t),
    ...hostStatements(d, host, t, run, specs),
    statement(d, nextFor(host, t)),
  ];
  const results = await d.$client.batch<{ next: number | null }>(stmts);
  const next = results[results.length - 1]!.results[0]?.next ?? null;
  return { delivered: run.delivered, attempted: claimed.length - run.held.length, next };
}

/**
 * Claims the host's due deliveries for a lease. A delivery waits while an earlier activity of the same actor to
 * this host is not through yet (retrying, held, or being sent by another run): a Delete must not overtake its
 * Create, nor a Create its Accept.
 */
function claim(d: DB, host: string, t: number): Promise<Claimed[]> {
  return d.all<Claimed>(
    sql`UPDATE federation_deliveries SET next_at = ${t + LEASE_MS} WHERE id IN (
        SELECT d.id FROM federation_deliveries d JOIN federation_outbox o ON o.id = d.outbox_id
        WHERE d.host = ${host} AND d.next_at <= ${t}
          AND NOT EXISTS (SELECT 1 FROM federation_deliveries e JOIN federation_outbox eo ON eo.id = e.outbox_id
            WHERE e.host = d.host AND e.outbox_id < d.outbox_id AND e.next_at > ${t} AND eo.account_id = o.account_id)
        ORDER BY d.outbox_id, d.id LIMIT ${claimLimit(host, t)})
      RETURNING id, outbox_id, inbox, attempts, created_at`,
  );
}

/** An outbox row to send: its document, its actor and key, its kind. */
type Source = {
  id: string;
  body: string | null;
  uri: string;
  private_key: string | null;
  type: OutboxActivity["type"];
  spec: string | null;
};

/** The outbox rows of the claimed deliveries, with their actors' keys and the host's signature scheme. */
function sourcesOf(d: DB, host: string, claimed: Claimed[]): Promise<Source[]> {
  return d.all<Source>(
    // The host's signature scheme comes along (an uncorrelated subquery: evaluated once).
    sql`SELECT o.id, o.body, a.uri, c.private_key, json_extract(o.activity, '$.type') AS type,
        (SELECT signature_spec FROM instances WHERE domain = ${host}) AS spec
      FROM federation_outbox o JOIN accounts a ON a.id = o.account_id LEFT JOIN credentials c ON c.account_id = o.account_id
      WHERE o.id IN (SELECT value FROM json_each(${JSON.stringify([...new Set(claimed.map((c) => c.outbox_id))])}))`,
  );
}

/** Oldest activity first, then by delivery id. */
const inOutboxOrder = (a: Claimed, b: Claimed) =>
  a.outbox_id === b.outbox_id ? (a.id < b.id ? -1 : 1) : a.outbox_id < b.outbox_id ? -1 : 1;

/**
 * Each actor's deliveries to this host in order (oldest activity first), whichever of its inboxes they go to:
 * an Accept to a personal inbox must not be overtaken by the Create that follows it to the shared inbox (the
 * receiver would drop a post from someone its user does not follow yet). Actors go side by side, a few at a time.
 */
function chainsByActor(sorted: Claimed[], byOutbox: Map<string, Source>): Map<string, Claimed[]> {
  const chains = new Map<string, Claimed[]>();
  for (const c of sorted) {
    const key = byOutbox.get(c.outbox_id)?.uri ?? c.inbox;
    chains.set(key, [...(chains.get(key) ?? []), c]);
  }
  return chains;
}

/** What the senders of a run share: the rows to send, the signers, and where each outcome goes. */
interface Sending {
  env: Env;
  byOutbox: Map<string, Source>;
  instance: Awaited<ReturnType<typeof instanceSigner>> | null;
  specs: SpecMemory;
  outcomes: Map<string, Outcome>;
}

/** One sender: takes chains off the shared queue until none is left, each chain in its order. */
async function sendChains(queue: Claimed[][], s: Sending): Promise<void> {
  for (let chain = queue.shift(); chain; chain = queue.shift()) {
    let held = false;
    for (const c of chain) {
      // After a failure the rest of the actor's chain waits for it, keeping the order.
      if (held) {
        s.outcomes.set(c.id, { kind: "later" });
        continue;
      }
      const o = await sendOne(c, s);
      s.outcomes.set(c.id, o);
      if (o.kind === "retry") held = true;
    }
  }
}

/** One delivery signed by its actor (or the instance actor); dropped when its row or its key is gone. */
async function sendOne(c: Claimed, { env, byOutbox, instance, specs }: Sending): Promise<Outcome> {
  const src = byOutbox.get(c.outbox_id);
  const asInstance = src && SIGNED_BY_INSTANCE.has(src.type);
  if (!src?.body || (asInstance ? !instance : !src.private_key)) return { kind: "drop" };
  return asInstance
    ? await post(env, c.inbox, src.body, instance!.uri, instance!.key, specs)
    : await post(env, c.inbox, src.body, src.uri, await importPem(src.private_key!), specs);
}

/** A run's outcomes sorted for the bookkeeping. */
interface Tally {
  /** Deliveries done, dropped or given up: deleted. */
  gone: string[];
  /** Retried: id → when, and the error. */
  retry: Record<string, number>;
  errors: Record<string, string>;
  /** Held behind an earlier failure of their actor's chain. */
  held: string[];
  heldUntil: number;
  gaveUp: boolean;
  delivered: number;
  failed: number;
}

/** Sorts the outcomes: a retry past `GIVE_UP_MS` is given up, held deliveries wait for the latest retry. */
function tally(claimed: Claimed[], outcomes: Map<string, Outcome>, t: number): Tally {
  const run: Tally = {
    gone: [],
    retry: {},
    errors: {},
    held: [],
    heldUntil: t + RETRY_BASE_MS,
    gaveUp: false,
    delivered: 0,
    failed: 0,
  };
  for (const c of claimed) {
    const o = outcomes.get(c.id)!;
    if (o.kind === "done") {
      run.delivered++;
      run.gone.push(c.id);
    } else if (o.kind === "drop") run.gone.push(c.id);
    else if (o.kind === "retry") {
      run.failed++;
      const next = t + retryDelay(c.attempts + 1);
      if (next > c.created_at + GIVE_UP_MS) {
        run.gaveUp = true;
        run.gone.push(c.id);
      } else {
        run.retry[c.id] = next;
        run.errors[c.id] = o.error.slice(0, 200);
        run.heldUntil = Math.max(run.heldUntil, next);
      }
    }
  }
  run.held = claimed.filter((c) => outcomes.get(c.id)!.kind === "later").map((c) => c.id);
  return run;
}

/** The deliveries' rows after a run: gone deleted, retries rescheduled, held ones back after the failure. */
function queueStatements(d: DB, run: Tally, t: number): D1PreparedStatement[] {
  return [
    statement(
      d,
      sql`DELETE FROM federation_deliveries WHERE id IN (SELECT value FROM json_each(${JSON.stringify(run.gone)}))`,
    ),
    statement(
      d,
      sql`UPDATE federation_deliveries SET attempts = attempts + 1, next_at = json_extract(${JSON.stringify(run.retry)}, '$."' || id || '"'),
          last_attempt_at = ${t}, last_error = json_extract(${JSON.stringify(run.errors)}, '$."' || id || '"')
        WHERE id IN (SELECT key FROM json_each(${JSON.stringify(run.retry)}))`,
    ),
    // Held deliveries come back with the failure ahead of them, without counting an attempt.
    statement(
      d,
      sql`UPDATE federation_deliveries SET next_at = ${run.heldUntil} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(run.held)}))`,
    ),
  ];
}

/** The host's row after a run: a success clears its failures (and keeps a scheme learned); a failure counts. */
function hostStatements(
  d: DB,
  host: string,
  t: number,
  run: Tally,
  specs: ReturnType<typeof runMemory>,
): D1PreparedStatement[] {
  if (run.delivered > 0)
    return [
      statement(
        d,
        // A scheme learned in this run (a host that refused the stored one) is kept with the success.
        sql`INSERT INTO instances (domain, failure_count, last_success_at, signature_spec, created_at) VALUES (${host}, 0, ${t}, ${specs.learned()}, ${t})
          ON CONFLICT (domain) DO UPDATE SET failure_count = 0, last_success_at = ${t}, failing_since = NULL, unreachable_since = NULL,
            signature_spec = coalesce(excluded.signature_spec, signature_spec)`,
      ),
    ];
  if (run.failed === 0) return [];
  const failing = run.gaveUp ? t : null;
  return [
    statement(
      d,
      sql`INSERT INTO instances (domain, failure_count, last_failure_at, failing_since, unreachable_since, created_at) VALUES (${host}, 1, ${t}, ${failing}, ${t}, ${t})
          ON CONFLICT (domain) DO UPDATE SET failure_count = failure_count + 1, last_failure_at = ${t}, failing_since = coalesce(failing_since, ${failing}),
            unreachable_since = coalesce(unreachable_since, ${t})`,
    ),
  ];
}

/**
 * The delivery queue at a glance, for the healthcheck: deliveries waiting (and to how many hosts, since when),
 * of which retrying after a failure, and failed in the last hour; outbox rows not expanded yet; hosts marked
 * failing (a delivery given up) and unreachable (failing for over a day: probed only). One statement.
 */
export function queueStatsQuery(d: DB, t: number = Date.now()) {
  return d.get<{
    pending_deliveries: number;
    pending_hosts: number;
    oldest_pending_at: number | null;
    retrying_deliveries: number;
    failed_last_hour: number;
    unexpanded_activities: number;
    failing_hosts: number;
    unreachable_hosts: number;
  }>(
    sql`SELECT (SELECT count(*) FROM federation_deliveries) AS pending_deliveries,
        (SELECT count(DISTINCT host) FROM federation_deliveries) AS pending_hosts,
        (SELECT min(created_at) FROM federation_deliveries) AS oldest_pending_at,
        (SELECT count(*) FROM federation_deliveries WHERE attempts > 0) AS retrying_deliveries,
        (SELECT count(*) FROM federation_deliveries WHERE last_attempt_at > ${t - 3600_000}) AS failed_last_hour,
        (SELECT count(*) FROM federation_outbox WHERE expanded_at IS NULL) AS unexpanded_activities,
        (SELECT count(*) FROM instances WHERE failing_since IS NOT NULL) AS failing_hosts,
        (SELECT count(*) FROM instances WHERE unreachable_since <= ${t - UNREACHABLE_AFTER_MS}) AS unreachable_hosts`,
  );
}
