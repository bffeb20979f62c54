import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => {
  // The real migrations, applied inside workerd by test/setup.ts before any test runs.
  const migrations = await readD1Migrations(`${import.meta.dirname}/migrations`);
  return {
    plugins: [
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // Figures read fresh: tests count what they just wrote (test/instance.test.ts checks the cached default).
          bindings: { TEST_MIGRATIONS: migrations, MAILER: "outbox", STATS_CACHE_SECONDS: "0" },
          // Instance B of the two-instance federation harness (test/instances.ts) keeps its data here; the
          // Worker sees it as its own DB. C (`DB_C`) and D (`DB_D`) are for tests that change instance-wide
          // policies (C) and settings (D), which must not reach the other files' instances.
          d1Databases: { DB_B: "starling-b", DB_C: "starling-c", DB_D: "starling-d" },
        },
      }),
    ],
    test: {
      setupFiles: ["./test/setup.ts"],
      reporters: ["default", "./scripts/summary-reporter.ts"],
      testTimeout: 30_000,
    },
  };
});
