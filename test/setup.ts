import { applyD1Migrations, env } from "cloudflare:test";

// The real migrations, as `wrangler d1 migrations apply` would run them.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
// The second instance's database (test/instances.ts), same migrations.
await applyD1Migrations(env.DB_B, env.TEST_MIGRATIONS);
// Instances whose federation policies (C) and run-time settings (D) tests change (test/instances.ts).
await applyD1Migrations(env.DB_C, env.TEST_MIGRATIONS);
await applyD1Migrations(env.DB_D, env.TEST_MIGRATIONS);

// Tests never reach the network: outbound fetches (link cards, push, federation) fail unless a test mocks
// `fetch` for what it exercises (the Worker runs in this isolate, so it sees the same global).
globalThis.fetch = (async (input: RequestInfo | URL) => {
  const url = input instanceof Request ? input.url : String(input);
  throw new Error(`network access in tests: ${url}`);
}) as typeof fetch;
