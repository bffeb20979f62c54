/**
 * The Worker brings its own database up to date (issue 33): an upgrade is a deploy, and a fresh database needs no
 * `wrangler d1 migrations apply`. Before a request or a cron run touches the schema, `ensureSchema` checks once per
 * isolate (one round trip: the names in `d1_migrations`) and applies what is missing, each migration in ONE batch
 * (a D1 transaction) with its row in `d1_migrations`, the table wrangler's own `migrations apply` keeps, so either
 * path sees the other's work and a half-applied migration is never seen. Isolates starting together race safely:
 * the row goes first in the batch, and the name is unique, so the loser's batch rolls back whole and it re-reads.
 */
import { MIGRATIONS } from "./migrations.generated";
import { bindingOf } from "./binding";

const TABLE = "d1_migrations";
const checked = new WeakMap<D1Database, Promise<void>>();

/**
 * What the bundled migrations are, in one short string, kept in `instance_keys` once the database has them all:
 * a cold isolate reads that one row (not every row of `d1_migrations`, 47 rows read by each new isolate and cron
 * run) and goes on when it matches.
 */
function fingerprint(migrations: { name: string }[]): string {
  let h = 5381;
  for (const c of migrations.map((m) => m.name).join("\n")) h = ((h << 5) + h + c.charCodeAt(0)) >>> 0;
  return `${migrations.length}:${h.toString(36)}`;
}
const FINGERPRINT_KEY = "schema_fingerprint";

/** Whether this isolate has checked this database yet: afterwards, free. */
export function ensureSchema(binding: D1Database): Promise<void> {
  const db = bindingOf(binding);
  let hit = checked.get(db);
  if (!hit) {
    hit = upgrade(db).then(() => undefined);
    // A failure (D1 unavailable) is not remembered: the next request tries again.
    hit.catch(() => checked.delete(db));
    checked.set(db, hit);
  }
  return hit;
}

// wrangler's own definition of the table, so `wrangler d1 migrations apply` reads it as it wrote it.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)`;

async function applied(db: D1Database): Promise<Set<string>> {
  const [, rows] = await db.batch<{ name: string }>([
    db.prepare(CREATE_TABLE),
    db.prepare(`SELECT name FROM ${TABLE}`),
  ]);
  return new Set(rows!.results.map((r) => r.name));
}

/** One migration's statements: its row first (the race guard, see the header), then its queries. */
function statements(db: D1Database, m: { name: string; queries: string[] }): D1PreparedStatement[] {
  return [db.prepare(`INSERT INTO ${TABLE} (name) VALUES (?)`).bind(m.name), ...m.queries.map((q) => db.prepare(q))];
}

/**
 * Applies the migrations this database lacks, in order; answers the names it applied. Exported for the tests
 * that race two upgrades past the per-isolate check.
 */
export async function upgrade(
  db: D1Database,
  migrations: { name: string; queries: string[] }[] = MIGRATIONS,
): Promise<string[]> {
  const mark = fingerprint(migrations);
  const known = await db
    .prepare("SELECT value FROM instance_keys WHERE name = ?")
    .bind(FINGERPRINT_KEY)
    .first<{ value: string }>()
    .catch(() => null); // a fresh database has no instance_keys yet
  if (known?.value === mark) return [];
  let done = await applied(db);
  const ran: string[] = [];
  for (const m of migrations) {
    if (done.has(m.name)) continue;
    try {
      await db.batch(statements(db, m));
      ran.push(m.name);
    } catch (e) {
      // Another isolate applied it meanwhile (its row is there now): carry on from what is applied.
      done = await applied(db);
      if (!done.has(m.name)) throw new Error(`migration ${m.name} failed: ${(e as Error)?.message ?? e}`);
    }
  }
  if (ran.length) console.log(`database upgraded to ${ran[ran.length - 1]} (${ran.length} migration(s) applied)`);
  await db
    .prepare(
      "INSERT INTO instance_keys (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
    )
    .bind(FINGERPRINT_KEY, mark, Date.now())
    .run();
  return ran;
}

/**
 * An EMPTY database brought up to date in one batch: the same statements as `upgrade`, in the same order, in one
 * round trip instead of one per migration. For the tests' fresh databases (test/setup.ts), where the 56 round trips
 * were a second of every file's start; test/schema-upgrade.test.ts checks it ends where `upgrade` ends.
 */
export async function upgradeAtOnce(
  db: D1Database,
  migrations: { name: string; queries: string[] }[] = MIGRATIONS,
): Promise<void> {
  await db.batch([db.prepare(CREATE_TABLE), ...migrations.flatMap((m) => statements(db, m))]);
  await upgrade(db, migrations); // finds them all applied and keeps the fingerprint, as after a real upgrade
}
