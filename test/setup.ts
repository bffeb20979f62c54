import { applyD1Migrations, env } from "cloudflare:test";

// The real migrations, as `wrangler d1 migrations apply` would run them.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
// The other instances' databases (B, C, D) are migrated by test/instances.ts, only in the files that use them:
// migrating four databases for every file was half of the suite's time.

// Tests never reach the network: outbound fetches (link cards, push, federation) fail unless a test mocks
// `fetch` for what it exercises (the Worker runs in this isolate, so it sees the same global).
globalThis.fetch = (async (input: RequestInfo | URL) => {
  const url = input instanceof Request ? input.url : String(input);
  throw new Error(`network access in tests: ${url}`);
}) as typeof fetch;
