/**
 * Expansion, the first step of outgoing federation (the transactional outbox: `services/outbox.ts`): unexpanded
 * outbox rows are claimed atomically, their ActivityStreams document is built once (documents/activities.ts, from
 * what sources.ts loads for the claim) and stored as `body`, and their deliveries are written set-based: one
 * INSERT … SELECT per row whatever the number of followers, one row per distinct inbox (a follower's shared inbox,
 * else its own), minus the hosts the actor blocked. Then deliver.ts sends them; wake.ts says when.
 */
import { signJsonLd, type DocumentLoader } from "@fedify/fedify";
import { sql } from "drizzle-orm";
import { db, statement, type DB } from "../../db/client";
import { config, type Env } from "../../env";
import { inboxesOf } from "../../services/audience";
import { signingKey } from "../../services/credentials";
import { configuredBase } from "../../services/events";
import type { OutboxActivity } from "../../services/outbox";
import { buildActivity } from "../documents/activities";
import { withFullPublic } from "../documents/public-audience";
import { federationContext } from "../federation";
import { importPem, LEASE_MS } from "./deliver";
import { loadSources, type OutboxRow } from "./sources";

/** Outbox rows expanded per claim. */
const EXPAND_BATCH = 20;

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

  const ctx = await federationContext(env, base);
  const src = await loadSources(env, d, ctx, rows);

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

/** Expands until nothing is left (bounded), answering the hosts that got deliveries. */
export async function expandOutbox(env: Env, t: number = Date.now(), maxBatches = 10): Promise<string[]> {
  const hosts = new Set<string>();
  for (let i = 0; i < maxBatches; i++) {
    const r = await expandBatch(env, t);
    r.hosts.forEach((x) => hosts.add(x));
    if (r.rows < EXPAND_BATCH) break;
  }
  return [...hosts];
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
