import { applyD1Migrations, env } from "cloudflare:test";

// The real migrations, as `wrangler d1 migrations apply` would run them.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
