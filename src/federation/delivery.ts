/**
 * Outgoing federation, off the request path, from the transactional outbox (`services/outbox.ts`):
 *
 * 1. **Expansion** (`expandOutbox`): unexpanded outbox rows are claimed atomically, their ActivityStreams document
 *    is built once (`activities.ts`) and stored as `body`, and their deliveries are written set-based: one
 *    INSERT … SELECT per row whatever the number of followers, one row per distinct inbox (a follower's shared
 *    inbox, else its own), minus the hosts the actor blocked.
 * 2. **Delivery** (`deliverHost`): per destination host, by its `HostDelivery` Durable Object (named by the host,
 *    woken by `wakeHosts`, then by its own alarm): due deliveries are claimed, each POST is signed
 *    (draft-cavage, the actor's RSA key, keyId `<actor>#main-key`) and sent through the SSRF guard with a
 *    10 s timeout, a few actors at a time and each actor's deliveries to the host in order; the bookkeeping of a run is one
 *    batch. 2xx: delivered; 4xx other than 408/429: dropped; otherwise retried 30 s later, doubling up to 6 h,
 *    for two days, then dropped and the host marked failing (`instances.failing_since`). A host whose
 *    deliveries have all failed for over a day (`instances.unreachable_since`) is only probed: one delivery
 *    every 6 h, the rest waiting (and not woken) until a probe succeeds; other hosts are never held by it.
 * 3. **Kicks**: an action whose batch may have written outbox rows says so in its `Effects` (`federate`), and
 *    the one door (src/effects/index.ts `runEffects`) runs `kickFederation` after the response (waitUntil); the cron (`sweepFederation`, each minute) expands whatever is left and wakes every host with
 *    due deliveries, so nothing depends on waitUntil alone. `drainFederation` does all of it at once, in the
 *    caller (tests, and instance B of the test harness, whose rows the objects — bound to A's env — never see).
 */
import { withFullPublic } from "./public-audience";
import { signJsonLd, signRequest, type DocumentLoader } from "@fedify/fedify";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Actor } from "@fedify/vocab";
import { accounts, chatMessages, mediaAttachments } from "../db/schema";
import { db, inJson, statement, type DB } from "../db/client";
import { config, VERSION, type Env } from "../env";
import { pemToDer } from "../lib/keys";
import { allowPrivateAddress, isFetchableUrl, outboundFetch, OutboundRefused } from "../lib/outbound";
import { configuredBase } from "../services/events";
import { hydrateWithParentUris } from "../services/hydrate";
import { GIVE_UP_MS, SIGNED_BY_INSTANCE, type OutboxActivity } from "../services/outbox";
import { inboxesOf } from "../services/audience";
import { signingKey } from "../services/credentials";
import { buildActivity, type ActivitySources } from "./activities";
import { votesById } from "./poll-votes";
import { instanceSigner } from "./instance-actor";
import { federationContext, localActor } from "./index";
import { origins } from "../lib/media-urls";

/** Outbox rows expanded per claim. */
const EXPAND_BATCH = 20;
/** A claim (of an outbox row or a delivery) not finished by then is taken again. */
const LEASE_MS = 5 * 60_000;
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
/** Delivery objects called directly by one invocation; more are woken through relays. */
const WAKE_FANOUT = 40;
const TIMEOUT_MS = 10_000;

function retryDelay(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
}

// ---- expansion ----

type OutboxRow = { id: string; account_id: string; activity: string };

/** The deliveries of one expanded row: every distinct inbox of its audience (services/audience.ts), in one statement. */
function deliveriesInsert(d: DB, row: OutboxRow, a: OutboxActivity, t: number, toRelays: boolean) {
  return statement(
    d,
    sql`INSERT OR IGNORE INTO federation_deliveries (id, outbox_id, host, inbox, attempts, next_at, created_at)
      SELECT ${row.id} || '-' || lower(hex(randomblob(6))), ${row.id}, host, inbox, 0, ${t}, ${t}
      FROM (${inboxesOf(row.account_id, a, toRelays)})
      RETURNING host`,
  );
}

/**
 * Claims up to `EXPAND_BATCH` unexpanded rows (or rows whose claim expired), builds their documents and writes
 * their deliveries. Answers the hosts that got deliveries and how many rows were handled.
 */
async function expandBatch(env: Env, t: number): Promise<{ rows: number; hosts: string[] }> {
  const base = configuredBase(env);
  // Ids are https://DOMAIN/…: without DOMAIN nothing is built (the rows wait for it).
  if (!base) return { rows: 0, hosts: [] };
  const d = db(env);
  const claimed = await d.all<OutboxRow>(
    sql`UPDATE federation_outbox SET expanded_at = ${t} WHERE id IN (
        SELECT id FROM (SELECT id FROM federation_outbox WHERE expanded_at IS NULL
          UNION SELECT id FROM federation_outbox WHERE body IS NULL AND expanded_at < ${t - LEASE_MS})
        ORDER BY id LIMIT ${EXPAND_BATCH})
      RETURNING id, account_id, activity`,
  );
  if (claimed.length === 0) return { rows: 0, hosts: [] };
  claimed.sort((a, b) => (a.id < b.id ? -1 : 1));
  const rows = claimed.map((r) => ({ row: r, a: JSON.parse(r.activity) as OutboxActivity }));

  const statusIds = rows.flatMap(({ a }) =>
    a.type === "Create" || a.type === "Update" || a.type === "UpdatePoll" || a.type === "Announce" ? [a.statusId] : [],
  );
  const accountIds = new Set<string>();
  for (const { row, a } of rows) {
    accountIds.add(row.account_id);
    if (a.type === "Follow" || a.type === "Undo") accountIds.add(a.targetId);
    if (a.type === "Accept" || a.type === "Reject") accountIds.add(a.followerId);
    if (a.type === "Delete") a.recipients.forEach((id) => accountIds.add(id));
    if (a.type === "ChatMessage" || a.type === "DeleteChatMessage") accountIds.add(a.recipientId);
    if (a.type === "Move") accountIds.add(a.targetId);
    if (a.type === "Block" || a.type === "UndoBlock" || a.type === "Flag") accountIds.add(a.targetId);
    if (a.type === "Like" || a.type === "UndoLike" || a.type === "EmojiReact" || a.type === "UndoEmojiReact")
      accountIds.add(a.targetId);
    if (a.type === "UndoAnnounce") accountIds.add(a.originalAuthorId);
  }
  const chatMessageIds = rows.flatMap(({ a }) => (a.type === "ChatMessage" ? [a.messageId] : []));
  const voteIds = rows.flatMap(({ a }) => (a.type === "Vote" ? [a.voteId] : []));
  const [{ h, parentUris }, [accountsRead, listRead], chatRows, votes] = await Promise.all([
    hydrateWithParentUris(d, statusIds),
    d.$client.batch([
      statement(
        d,
        sql`SELECT id, uri, username FROM accounts WHERE id IN (SELECT value FROM json_each(${JSON.stringify([...accountIds])}))`,
      ),
      statement(
        d,
        sql`SELECT r.status_id, a.uri FROM status_recipients r JOIN statuses s ON s.id = r.status_id AND s.visibility IN ('list', 'direct') JOIN accounts a ON a.id = r.account_id
          WHERE r.status_id IN (SELECT value FROM json_each(${JSON.stringify(statusIds)}))`,
      ),
    ]),
    chatMessageIds.length
      ? d
          .select({ message: chatMessages, media: mediaAttachments })
          .from(chatMessages)
          .leftJoin(mediaAttachments, eq(mediaAttachments.id, chatMessages.mediaId))
          .where(inJson(chatMessages.id, chatMessageIds))
      : Promise.resolve([]),
    votesById(d, voteIds),
  ]);
  const accountRows = accountsRead!.results as { id: string; uri: string; username: string }[];
  const listRows = listRead!.results as { status_id: string; uri: string }[];
  const ctx = await federationContext(env, base);
  const actors = await updatedActors(d, ctx, rows);
  const src: ActivitySources = {
    nc: { ...origins(env, ctx.canonicalOrigin), followersOf: (username) => ctx.getFollowersUri(username) },
    h,
    parentUris,
    accounts: new Map(accountRows.map((r) => [r.id, r])),
    listRecipients: new Map(),
    chatMessages: new Map(chatRows.map((r) => [r.message.id, r])),
    votes,
    actors,
    featuredOf: (username) => ctx.getFeaturedUri(username),
  };
  for (const r of listRows)
    src.listRecipients.set(r.status_id, [...(src.listRecipients.get(r.status_id) ?? []), r.uri]);

  // Keys are made on first need (the actor document usually made them already): deliveries only read them.
  const keys = new Map(
    await Promise.all(
      [...new Set(rows.map((r) => r.row.account_id))].map(async (id) => [id, await signingKey(d, id)] as const),
    ),
  );
  // What reaches accepted relays carries its author's Linked Data signature (as Mastodon's relayed posts do): a
  // Mastodon server drops a relayed Create whose HTTP signer (the relay) is not its actor unless the body is
  // signed by the actor. Only while a relay is accepted and relaying is on (the signature costs a canonicalization).
  const relaying =
    config(env).allowRelay &&
    rows.some(({ a }) => LD_SIGNED.has(a.type)) &&
    Boolean(await d.get(sql`SELECT 1 FROM relays WHERE state = 'accepted' LIMIT 1`));

  const stmts: D1PreparedStatement[] = [];
  for (const { row, a } of rows) {
    let doc: Awaited<ReturnType<typeof buildActivity>> = null;
    let body = "";
    try {
      doc = buildActivity(row.id, row.account_id, a, src);
      if (doc) {
        let json = withFullPublic(await doc.toJsonLd({ contextLoader: ctx.contextLoader })) as Record<string, unknown>;
        const key = keys.get(row.account_id);
        const actorUri = src.accounts.get(row.account_id)?.uri;
        if (relaying && LD_SIGNED.has(a.type) && key && actorUri && (a.type === "DeleteActor" || addressesPublic(json)))
          json = await ldSigned(json, key.privateKey, actorUri, ctx.contextLoader);
        body = JSON.stringify(json);
      }
    } catch (e) {
      // One row that cannot be built must not hold back the others (nor come back every lease): it is done.
      console.error("outbox row not built", row.id, e);
      doc = null;
    }
    // Nothing to send (the status is gone, a target vanished): the row is done, with an empty body.
    stmts.push(statement(d, sql`UPDATE federation_outbox SET body = ${body}, expanded_at = ${t} WHERE id = ${row.id}`));
    if (!doc) continue;
    stmts.push(deliveriesInsert(d, row, a, t, config(env).allowRelay));
  }
  const results = await d.$client.batch<{ host: string }>(stmts);
  const hosts = new Set(results.flatMap((r) => (r.results ?? []).map((x) => x.host).filter(Boolean)));
  return { rows: rows.length, hosts: [...hosts] };
}

/** The actor documents of the live local accounts whose profile UpdateActor rows send, as served now. */
async function updatedActors(
  d: DB,
  ctx: Awaited<ReturnType<typeof federationContext>>,
  rows: { row: OutboxRow; a: OutboxActivity }[],
): Promise<Map<string, Actor>> {
  const ids = [...new Set(rows.flatMap(({ row, a }) => (a.type === "UpdateActor" ? [row.account_id] : [])))];
  if (ids.length === 0) return new Map();
  const found = await d
    .select()
    .from(accounts)
    .where(and(inJson(accounts.id, ids), isNull(accounts.domain), eq(accounts.deactivated, false)));
  // One document that cannot be built leaves its row without a body (nothing sent), not the whole claim failing.
  const built = await Promise.all(
    found.map(
      async (a) =>
        [
          a.id,
          await localActor(ctx, a).catch((e) => (console.error("actor document not built", a.id, e), null)),
        ] as const,
    ),
  );
  return new Map(built.flatMap(([id, actor]) => (actor ? [[id, actor] as const] : [])));
}

/** Expands until nothing is left (bounded), answering the hosts that got deliveries. */
async function expandOutbox(env: Env, t: number = Date.now(), maxBatches = 10): Promise<string[]> {
  const hosts = new Set<string>();
  for (let i = 0; i < maxBatches; i++) {
    const r = await expandBatch(env, t);
    r.hosts.forEach((x) => hosts.add(x));
    if (r.rows < EXPAND_BATCH) break;
  }
  return [...hosts];
}

// ---- delivery ----

type Claimed = { id: string; outbox_id: string; inbox: string; attempts: number; created_at: number };

/**
 * Whether the delivery `d`'s host is unreachable for over a day with a recent probe: nothing is sent to it before
 * the next one. Looked up per queued host (its row by key), so the cost follows the queue, not every host known.
 */
const waiting = (t: number) =>
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

/** One signed POST; what became of it. */
/** Who is calling, as servers log it: the software and the instance (Mastodon's form). */
const userAgent = (env: Env) => `Starling/${VERSION} (+https://${config(env).domain || "localhost"}/)`;

async function post(env: Env, inbox: string, body: string, actorUri: string, key: CryptoKey): Promise<Outcome> {
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
    const signed = await signRequest(req, key, new URL(`${actorUri}#main-key`), {
      body: new TextEncoder().encode(body).buffer as ArrayBuffer,
    });
    const res = await outboundFetch(signed, undefined, {
      allowPrivate: allowPrivateAddress(env),
      timeoutMs: TIMEOUT_MS,
      maxRedirects: 0,
      maxBytes: 64_000,
    });
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

/** Activities that go to relays (services/audience.ts `relays`), signed with Linked Data signatures when public. */
const LD_SIGNED = new Set<OutboxActivity["type"]>(["Create", "Update", "Delete", "DeleteActor"]);

/** Whether a body addresses the public collection (written in full: `withFullPublic`). */
function addressesPublic(json: Record<string, unknown>): boolean {
  const all = [json.to, json.cc].flat();
  return all.includes("https://www.w3.org/ns/activitystreams#Public");
}

/**
 * The body with its actor's RsaSignature2017 (Fedify's `signJsonLd`, key `<actor>#main-key` as the HTTP
 * signatures name it). A body that cannot be signed is sent as it is (the HTTP signature still holds).
 */
async function ldSigned(
  json: Record<string, unknown>,
  pem: string,
  actorUri: string,
  contextLoader: DocumentLoader,
): Promise<Record<string, unknown>> {
  try {
    return (await signJsonLd(json, await importPem(pem), new URL(`${actorUri}#main-key`), {
      contextLoader,
    })) as Record<string, unknown>;
  } catch (e) {
    console.warn("outbox: no Linked Data signature", actorUri, (e as Error)?.message ?? e);
    return json;
  }
}

const pemKeys = new Map<string, Promise<CryptoKey>>();
function importPem(pem: string): Promise<CryptoKey> {
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
  const claimed = await d.all<Claimed>(
    // A delivery waits while an earlier activity of the same actor to this host is not through yet (retrying,
    // held, or being sent by another run): a Delete must not overtake its Create, nor a Create its Accept.
    sql`UPDATE federation_deliveries SET next_at = ${t + LEASE_MS} WHERE id IN (
        SELECT d.id FROM federation_deliveries d JOIN federation_outbox o ON o.id = d.outbox_id
        WHERE d.host = ${host} AND d.next_at <= ${t}
          AND NOT EXISTS (SELECT 1 FROM federation_deliveries e JOIN federation_outbox eo ON eo.id = e.outbox_id
            WHERE e.host = d.host AND e.outbox_id < d.outbox_id AND e.next_at > ${t} AND eo.account_id = o.account_id)
        ORDER BY d.outbox_id, d.id LIMIT ${claimLimit(host, t)})
      RETURNING id, outbox_id, inbox, attempts, created_at`,
  );
  if (claimed.length === 0) {
    const row = await d.get<{ next: number | null }>(nextFor(host, t));
    return { delivered: 0, attempted: 0, next: row?.next ?? null };
  }
  const sources = await d.all<{
    id: string;
    body: string | null;
    uri: string;
    private_key: string | null;
    type: OutboxActivity["type"];
  }>(
    sql`SELECT o.id, o.body, a.uri, c.private_key, json_extract(o.activity, '$.type') AS type FROM federation_outbox o JOIN accounts a ON a.id = o.account_id LEFT JOIN credentials c ON c.account_id = o.account_id
      WHERE o.id IN (SELECT value FROM json_each(${JSON.stringify([...new Set(claimed.map((c) => c.outbox_id))])}))`,
  );
  const byOutbox = new Map(sources.map((s) => [s.id, s]));
  // Rows the instance actor sends (forwarded reports) are signed with its key, as its id.
  const instance = sources.some((s) => SIGNED_BY_INSTANCE.has(s.type)) ? await instanceSigner(env) : null;
  // Each actor's deliveries to this host in order (oldest activity first), whichever of its inboxes they go to:
  // an Accept to a personal inbox must not be overtaken by the Create that follows it to the shared inbox (the
  // receiver would drop a post from someone its user does not follow yet). Actors side by side, a few at a time.
  const chains = new Map<string, Claimed[]>();
  for (const c of claimed.sort((a, b) =>
    a.outbox_id === b.outbox_id ? (a.id < b.id ? -1 : 1) : a.outbox_id < b.outbox_id ? -1 : 1,
  )) {
    const key = byOutbox.get(c.outbox_id)?.uri ?? c.inbox;
    chains.set(key, [...(chains.get(key) ?? []), c]);
  }
  const outcomes = new Map<string, Outcome>();
  const queue = [...chains.values()];
  const worker = async () => {
    for (let chain = queue.shift(); chain; chain = queue.shift()) {
      let held = false;
      for (const c of chain) {
        // After a failure the rest of the actor's chain waits for it, keeping the order.
        if (held) {
          outcomes.set(c.id, { kind: "later" });
          continue;
        }
        const src = byOutbox.get(c.outbox_id);
        const asInstance = src && SIGNED_BY_INSTANCE.has(src.type);
        if (!src?.body || (asInstance ? !instance : !src.private_key)) {
          outcomes.set(c.id, { kind: "drop" });
          continue;
        }
        const o = asInstance
          ? await post(env, c.inbox, src.body, instance!.uri, instance!.key)
          : await post(env, c.inbox, src.body, src.uri, await importPem(src.private_key!));
        outcomes.set(c.id, o);
        if (o.kind === "retry") held = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));

  const gone: string[] = [];
  const retry: Record<string, number> = {};
  const errors: Record<string, string> = {};
  let gaveUp = false;
  let delivered = 0;
  let failed = 0;
  let heldUntil = t + RETRY_BASE_MS;
  for (const c of claimed) {
    const o = outcomes.get(c.id)!;
    if (o.kind === "done") {
      delivered++;
      gone.push(c.id);
    } else if (o.kind === "drop") gone.push(c.id);
    else if (o.kind === "retry") {
      failed++;
      const next = t + retryDelay(c.attempts + 1);
      if (next > c.created_at + GIVE_UP_MS) {
        gaveUp = true;
        gone.push(c.id);
      } else {
        retry[c.id] = next;
        errors[c.id] = o.error.slice(0, 200);
        heldUntil = Math.max(heldUntil, next);
      }
    }
  }
  // Held deliveries come back with the failure ahead of them, without counting an attempt.
  const held = claimed.filter((c) => outcomes.get(c.id)!.kind === "later").map((c) => c.id);
  const stmts = [
    statement(
      d,
      sql`DELETE FROM federation_deliveries WHERE id IN (SELECT value FROM json_each(${JSON.stringify(gone)}))`,
    ),
    statement(
      d,
      sql`UPDATE federation_deliveries SET attempts = attempts + 1, next_at = json_extract(${JSON.stringify(retry)}, '$."' || id || '"'),
          last_attempt_at = ${t}, last_error = json_extract(${JSON.stringify(errors)}, '$."' || id || '"')
        WHERE id IN (SELECT key FROM json_each(${JSON.stringify(retry)}))`,
    ),
    statement(
      d,
      sql`UPDATE federation_deliveries SET next_at = ${heldUntil} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(held)}))`,
    ),
  ];
  if (delivered > 0) {
    stmts.push(
      statement(
        d,
        sql`INSERT INTO instances (domain, failure_count, last_success_at, created_at) VALUES (${host}, 0, ${t}, ${t})
          ON CONFLICT (domain) DO UPDATE SET failure_count = 0, last_success_at = ${t}, failing_since = NULL, unreachable_since = NULL`,
      ),
    );
  } else if (failed > 0) {
    const failing = gaveUp ? t : null;
    stmts.push(
      statement(
        d,
        sql`INSERT INTO instances (domain, failure_count, last_failure_at, failing_since, unreachable_since, created_at) VALUES (${host}, 1, ${t}, ${failing}, ${t}, ${t})
          ON CONFLICT (domain) DO UPDATE SET failure_count = failure_count + 1, last_failure_at = ${t}, failing_since = coalesce(failing_since, ${failing}),
            unreachable_since = coalesce(unreachable_since, ${t})`,
      ),
    );
  }
  stmts.push(statement(d, nextFor(host, t)));
  const results = await d.$client.batch<{ next: number | null }>(stmts);
  const next = results[results.length - 1]!.results[0]?.next ?? null;
  return { delivered, attempted: claimed.length - held.length, next };
}

// ---- waking, kicking, sweeping ----

/** Wakes the delivery objects of these hosts: directly up to `WAKE_FANOUT`, beyond that through relays. */
export async function wakeHosts(env: Env, hosts: string[]): Promise<void> {
  if (hosts.length === 0) return;
  const size = Math.ceil(hosts.length / WAKE_FANOUT);
  const groups: string[][] = [];
  for (let i = 0; i < hosts.length; i += size) groups.push(hosts.slice(i, i + size));
  await Promise.all(
    groups.map(([first, ...rest]) =>
      env.DELIVERY.get(env.DELIVERY.idFromName(first!))
        .kick(first!, rest)
        .catch((e: unknown) => console.error("delivery wake", first, e)),
    ),
  );
}

/**
 * How hosts are woken. The Worker wakes their objects; tests replace `run` to see which hosts would be woken
 * (the objects run with the pool's bindings, not an instance's) and drive delivery with `drainFederation`.
 */
export const deliveryWake: { run: (env: Env, hosts: string[]) => Promise<void> } = { run: wakeHosts };

/** After a federating action's response: expand what it wrote and wake the hosts that got deliveries. */
export async function kickFederation(env: Env): Promise<void> {
  try {
    const hosts = await expandOutbox(env, Date.now(), 1);
    await deliveryWake.run(env, hosts);
  } catch (e) {
    // The cron's sweep takes over.
    console.error("federation kick", e);
  }
}

/** Expanded rows whose deliveries are all done are removed after this long. */
const KEEP_EXPANDED_MS = 3600_000;

/**
 * The cron's sweep: expand what nobody expanded, wake every host with due deliveries (not those waiting for a
 * probe), drop what an unreachable host will never get in time, clear finished rows.
 */
export async function sweepFederation(env: Env, t: number = Date.now()): Promise<void> {
  const d = db(env);
  const woken = new Set(await expandOutbox(env, t));
  const due = await d.all<{ host: string }>(
    sql`SELECT DISTINCT host FROM federation_deliveries d WHERE next_at <= ${t} AND NOT ${waiting(t)} LIMIT 1600`,
  );
  due.forEach((r) => woken.add(r.host));
  await deliveryWake.run(env, [...woken]);
  await d.$client.batch([
    // Deliveries to an unreachable host wait for its probes, one every few hours: those past the give-up time
    // (dropped at their next failure anyway) are dropped now, so a dead host's queue does not grow. Walked from
    // the queue (CROSS JOIN keeps that order), each host looked up by key: dead hosts known but owed nothing cost
    // nothing.
    statement(
      d,
      sql`DELETE FROM federation_deliveries WHERE id IN (SELECT d.id FROM federation_deliveries d CROSS JOIN instances i
        ON i.domain = d.host WHERE d.created_at < ${t - GIVE_UP_MS} AND i.unreachable_since <= ${t - UNREACHABLE_AFTER_MS} LIMIT 1000)`,
    ),
    // Through `instances_unreachable_unmarked`: hosts already marked failing are not walked again.
    statement(
      d,
      sql`UPDATE instances SET failing_since = ${t} WHERE failing_since IS NULL AND unreachable_since <= ${t - GIVE_UP_MS}`,
    ),
    statement(
      d,
      sql`DELETE FROM federation_outbox WHERE id IN (SELECT o.id FROM federation_outbox o WHERE o.body IS NOT NULL AND o.expanded_at < ${t - KEEP_EXPANDED_MS}
        AND NOT EXISTS (SELECT 1 FROM federation_deliveries x WHERE x.outbox_id = o.id) LIMIT 1000)`,
    ),
  ]);
}

/**
 * Everything due for these bindings, now, in the caller: expansion, then each host's deliveries until none is
 * due at `t`. For tests (and instance B of the harness); the Worker uses the kicks and objects instead.
 */
export async function drainFederation(
  env: Env,
  t: number = Date.now(),
): Promise<{ delivered: number; attempted: number }> {
  const d = db(env);
  await expandOutbox(env, t, 100);
  let delivered = 0;
  let attempted = 0;
  for (let round = 0; round < 50; round++) {
    const due = await d.all<{ host: string }>(
      sql`SELECT DISTINCT host FROM federation_deliveries d WHERE next_at <= ${t} AND NOT ${waiting(t)}`,
    );
    if (due.length === 0) break;
    const runs = await Promise.all(due.map((r) => deliverHost(env, r.host, t)));
    for (const r of runs) {
      delivered += r.delivered;
      attempted += r.attempted;
    }
  }
  return { delivered, attempted };
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
