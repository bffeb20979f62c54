/**
 * Follow, block and mute imports. The list is parsed, resolved with one query per chunk, and written with a
 * few set-based statements (`json_each`), so a list of thousands costs a handful of D1 round trips.
 * Accounts that are unknown here or cannot be acted on are skipped, as Pleroma does.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { newId } from "../db/ids";
import { localActivityUri, type ActivityKind, type AccountRow } from "./accounts";

const CHUNK = 1000;
const NICK = /^[a-zA-Z0-9_.-]+$/;

/**
 * Account handles from an import: whitespace-separated `nick`, `@nick`, `nick@host`, `@nick@host`, profile URLs,
 * or Mastodon's CSV export (first column, header line skipped). Returns lower-cased acct keys.
 */
export function parseImportList(text: string, localHost: string): string[] {
  const out = new Set<string>();
  for (const rawLine of text.split(/\r?\n/)) {
    if (/^\s*account address\s*(,|$)/i.test(rawLine)) continue; // the CSV header
    const line = rawLine.includes(",") ? rawLine.split(",")[0] : rawLine;
    for (const token of line.trim().split(/\s+/)) {
      const key = toAcctKey(token, localHost);
      if (key) out.add(key);
    }
  }
  return [...out];
}

function toAcctKey(token: string, localHost: string): string | null {
  if (!token) return null;
  let user: string;
  let host: string | undefined;
  if (/^https?:\/\//i.test(token)) {
    let url: URL;
    try {
      url = new URL(token);
    } catch {
      return null;
    }
    const m = /^\/(?:users\/|@)([^/]+)\/?$/.exec(url.pathname);
    if (!m) return null;
    user = m[1];
    host = url.host;
  } else {
    [user, host] = token.replace(/^@/, "").split("@");
  }
  if (!user || !NICK.test(user)) return null;
  const local = !host || host.toLowerCase() === localHost.toLowerCase();
  return (local ? user : `${user}@${host}`).toLowerCase();
}

const chunks = <T>(items: T[], size = CHUNK) =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

interface Target {
  id: string;
  locked: number;
  domain: string | null;
}

/** Accounts behind the keys, minus the importer and anyone who blocks the importer. */
async function resolve(d: DB, me: AccountRow, keys: string[]): Promise<Target[]> {
  const found: Target[] = [];
  for (const chunk of chunks(keys)) {
    found.push(
      ...(await d.all<Target>(sql`
        SELECT a.id, a.locked, a.domain FROM accounts a
        WHERE a.acct_key IN (SELECT value FROM json_each(${JSON.stringify(chunk)}))
          AND a.id <> ${me.id} AND a.deactivated = 0
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.account_id = a.id AND b.target_account_id = ${me.id})`)),
    );
  }
  return found;
}

/** Rows `{id, target}` with fresh ids, as one JSON parameter. */
const pairs = (targets: Target[], t: number) => JSON.stringify(targets.map((x) => ({ id: newId(t), target: x.id })));

/** Rows `{id, target, uri}` of activities of `me`: each with its ActivityPub id. */
const activities = (me: AccountRow, kind: ActivityKind, targets: Target[], t: number) =>
  JSON.stringify(
    targets.map((x) => {
      const id = newId(t);
      return { id, target: x.id, uri: localActivityUri(me, kind, id) };
    }),
  );

export async function importFollows(d: DB, me: AccountRow, keys: string[]): Promise<number> {
  const targets = await resolve(d, me, keys);
  const t = now();
  const statements: D1PreparedStatement[] = [];
  for (const chunk of chunks(targets)) {
    // Locked and remote accounts get a request; the others are followed at once.
    const direct = chunk.filter((x) => !x.locked && x.domain === null);
    const pending = chunk.filter((x) => x.locked || x.domain !== null);
    statements.push(
      statement(
        d,
        sql`INSERT OR IGNORE INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at, uri)
        SELECT json_extract(value, '$.id'), ${me.id}, json_extract(value, '$.target'), 1, 0, ${t}, json_extract(value, '$.uri') FROM json_each(${activities(me, "follows", direct, t)})`,
      ),
      statement(
        d,
        sql`INSERT OR IGNORE INTO follow_requests (id, account_id, target_account_id, show_reblogs, notify, created_at, uri)
        SELECT json_extract(value, '$.id'), ${me.id}, json_extract(value, '$.target'), 1, 0, ${t}, json_extract(value, '$.uri') FROM json_each(${activities(me, "follows", pending, t)})
        WHERE NOT EXISTS (SELECT 1 FROM follows f WHERE f.account_id = ${me.id} AND f.target_account_id = json_extract(value, '$.target'))`,
      ),
      statement(
        d,
        sql`UPDATE accounts SET followers_count = (SELECT count(*) FROM follows WHERE target_account_id = accounts.id)
        WHERE id IN (SELECT value FROM json_each(${JSON.stringify(direct.map((x) => x.id))})) AND domain IS NULL`,
      ),
    );
  }
  statements.push(
    statement(
      d,
      sql`UPDATE accounts SET following_count = (SELECT count(*) FROM follows WHERE account_id = ${me.id}) WHERE id = ${me.id}`,
    ),
  );
  await d.$client.batch(statements);
  return targets.length;
}

export async function importBlocks(d: DB, me: AccountRow, keys: string[]): Promise<number> {
  const targets = await resolve(d, me, keys);
  const t = now();
  const statements: D1PreparedStatement[] = [];
  for (const chunk of chunks(targets)) {
    const ids = JSON.stringify(chunk.map((x) => x.id));
    statements.push(
      statement(
        d,
        sql`INSERT OR IGNORE INTO blocks (id, account_id, target_account_id, created_at, uri)
        SELECT json_extract(value, '$.id'), ${me.id}, json_extract(value, '$.target'), ${t}, json_extract(value, '$.uri') FROM json_each(${activities(me, "blocks", chunk, t)})`,
      ),
    );
    // As a single block does: every tie between the two ends, both ways.
    for (const table of ["follows", "follow_requests", "subscriptions", "endorsements"]) {
      statements.push(
        statement(
          d,
          sql`DELETE FROM ${sql.identifier(table)} WHERE (account_id = ${me.id} AND target_account_id IN (SELECT value FROM json_each(${ids})))
          OR (target_account_id = ${me.id} AND account_id IN (SELECT value FROM json_each(${ids})))`,
        ),
      );
    }
    statements.push(
      statement(
        d,
        sql`DELETE FROM list_accounts WHERE
        (account_id IN (SELECT value FROM json_each(${ids})) AND list_id IN (SELECT id FROM lists WHERE account_id = ${me.id}))
        OR (account_id = ${me.id} AND list_id IN (SELECT id FROM lists WHERE account_id IN (SELECT value FROM json_each(${ids}))))`,
      ),
      statement(
        d,
        sql`UPDATE accounts SET followers_count = (SELECT count(*) FROM follows WHERE target_account_id = accounts.id),
        following_count = (SELECT count(*) FROM follows WHERE account_id = accounts.id)
        WHERE id IN (SELECT value FROM json_each(${ids})) AND domain IS NULL`,
      ),
    );
  }
  statements.push(
    statement(
      d,
      sql`UPDATE accounts SET followers_count = (SELECT count(*) FROM follows WHERE target_account_id = ${me.id}),
      following_count = (SELECT count(*) FROM follows WHERE account_id = ${me.id}) WHERE id = ${me.id}`,
    ),
  );
  await d.$client.batch(statements);
  return targets.length;
}

export async function importMutes(d: DB, me: AccountRow, keys: string[]): Promise<number> {
  const targets = await resolve(d, me, keys);
  const t = now();
  const statements = chunks(targets).map((chunk) =>
    statement(
      d,
      sql`INSERT OR IGNORE INTO mutes (id, account_id, target_account_id, hide_notifications, expires_at, created_at)
      SELECT json_extract(value, '$.id'), ${me.id}, json_extract(value, '$.target'), 1, NULL, ${t} FROM json_each(${pairs(chunk, t)})`,
    ),
  );
  if (statements.length) await d.$client.batch(statements);
  return targets.length;
}
