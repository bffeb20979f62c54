/**
 * The Worker brings its own database up to date (issue 33, src/db/schema-upgrade.ts): from an EMPTY D1 the first
 * request gets a working instance; a new migration is applied by the next isolate's first request; two upgrades
 * racing on one database apply each migration once; the bundled migrations are the folder's.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { MIGRATIONS } from "../src/db/migrations.generated";
import { compactSql } from "../src/db/sql-compact";
import { upgrade } from "../src/db/schema-upgrade";
import { measure, meteredD1 } from "../src/lib/meter";
import { StatusSchema } from "../src/schemas/status";
import { InstanceSchema } from "../src/schemas/instance";
import { valid } from "./helpers";

async function fetchOn(db: D1Database, path: string, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://localhost${path}`, init), { ...env, DB: db }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const appliedNames = async (db: D1Database) =>
  (await db.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>()).results.map((r) => r.name);

describe("the Worker's own migrations", () => {
  it("are the migrations folder, split as wrangler splits it (npm run db:bundle after adding one)", () => {
    expect(MIGRATIONS.map((m) => m.name)).toEqual(env.TEST_MIGRATIONS.map((m) => m.name));
    expect(MIGRATIONS).toEqual(env.TEST_MIGRATIONS.map((m) => ({ name: m.name, queries: m.queries.map(compactSql) })));
  });

  it("turn an EMPTY database into a working instance on the first request", async () => {
    const db = env.DB_EMPTY_1;
    expect((await db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").first())!.n).toBe(0);
    const res = await fetchOn(db, "/api/v1/instance");
    expect(res.status).toBe(200);
    valid(InstanceSchema, await res.json());
    expect(await appliedNames(db)).toEqual(MIGRATIONS.map((m) => m.name));
    // A user registers and posts on it, through the API.
    const app = await (
      await fetchOn(db, "/api/v1/apps", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "t", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" }),
      })
    ).json<{ client_id: string; client_secret: string }>();
    const appToken = await (
      await fetchOn(db, "/oauth/token", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...app, grant_type: "client_credentials", scope: "read write" }),
      })
    ).json<{ access_token: string }>();
    const signup = await fetchOn(db, "/api/v1/accounts", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${appToken.access_token}` },
      body: JSON.stringify({
        username: "first",
        email: "first@example.com",
        password: "a long password 1",
        agreement: true,
        locale: "en",
      }),
    });
    expect(signup.status, await signup.clone().text()).toBe(200);
    const { access_token } = await signup.json<{ access_token: string }>();
    const posted = await fetchOn(db, "/api/v1/statuses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ status: "hello from a fresh database" }),
    });
    expect(posted.status).toBe(200);
    valid(StatusSchema, await posted.json());
  });

  it("apply a new migration (an upgrade is a deploy), and two racing upgrades apply each once", async () => {
    const db = env.DB_EMPTY_2;
    // A database as the previous release left it: every migration but the newest.
    const before = MIGRATIONS.slice(0, -1);
    const [first, second] = await Promise.all([upgrade(db, before), upgrade(db, before)]);
    expect([...first, ...second].sort()).toEqual(before.map((m) => m.name).sort());
    expect(await appliedNames(db)).toEqual(before.map((m) => m.name));
    // The new release's first request applies the rest, once.
    expect((await fetchOn(db, "/api/v1/instance")).status).toBe(200);
    expect(await appliedNames(db)).toEqual(MIGRATIONS.map((m) => m.name));
    expect(await upgrade(db)).toEqual([]);
  });

  it("applied at once, as the tests' databases are (test/setup.ts), end where applied one by one end", async () => {
    // The pool's DB was made by `upgradeAtOnce`; DB_EMPTY_1 by the Worker's own upgrade (above, or here).
    await upgrade(env.DB_EMPTY_1);
    const schema = async (db: D1Database) =>
      (
        await db
          .prepare(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name",
          )
          .all()
      ).results;
    const atOnce = await schema(env.DB);
    expect(atOnce.filter((r) => r.type === "table").length).toBeGreaterThan(50);
    expect(atOnce.filter((r) => r.type === "index").length).toBeGreaterThan(50);
    expect(atOnce).toEqual(await schema(env.DB_EMPTY_1));
    expect(await appliedNames(env.DB)).toEqual(MIGRATIONS.map((m) => m.name));
    // Its fingerprint is kept too, so the Worker's first request there reads one row, as after a real upgrade.
    expect(await upgrade(env.DB)).toEqual([]);
  });
});

describe("the schema check of a new isolate (issue 42)", () => {
  it("reads one row once the database has every migration, and all of d1_migrations only when it may lack some", async () => {
    const db = meteredD1(env.DB);
    await upgrade(db); // writes the fingerprint if the test set-up did not
    const { usage } = await measure(() => upgrade(db));
    expect(usage.rowsRead).toBeLessThanOrEqual(1);
    expect(usage.rowsWritten).toBe(0);
    // A bundle this database has not seen (a deploy with a new migration) reads the list and applies what lacks.
    const extra = { name: "9999_test_fingerprint", queries: ["CREATE TABLE IF NOT EXISTS fingerprint_probe (x)"] };
    expect(await upgrade(db, [...MIGRATIONS, extra])).toEqual([extra.name]);
    const { usage: after } = await measure(() => upgrade(db, [...MIGRATIONS, extra]));
    expect(after.rowsRead).toBeLessThanOrEqual(1);
  });
});
