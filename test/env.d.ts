type StarlingEnv = import("../src/env").Env;
type Migration = import("cloudflare:test").D1Migration;

declare namespace Cloudflare {
  interface Env extends StarlingEnv {
    TEST_MIGRATIONS: Migration[];
    /** Instance B's D1 in the two-instance harness (test/instances.ts). */
    DB_B: D1Database;
    /** Instance C (test/instances.ts): the one whose federation policies tests change. */
    DB_C: D1Database;
    /** Instance D: the one whose run-time settings tests change. */
    DB_D: D1Database;
    /** Databases no migration touched (test/schema-upgrade.test.ts). */
    DB_EMPTY_1: D1Database;
    DB_EMPTY_2: D1Database;
  }
}
