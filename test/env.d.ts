type StarlingEnv = import("../src/env").Env;
type Migration = import("cloudflare:test").D1Migration;

declare namespace Cloudflare {
  interface Env extends StarlingEnv {
    TEST_MIGRATIONS: Migration[];
    /** Instance B's D1 in the two-instance harness (test/instances.ts). */
    DB_B: D1Database;
  }
}
