import { poolRsaKeys } from "./key-pool";
import { prefetchModules } from "./module-prefetch";

// The Worker's modules load into this file's fresh workerd in waves, not one by one (test/module-prefetch.ts).
// `cloudflare:test` imports the Worker (src/index.ts), so it is imported after, not statically.
prefetchModules();
const { env } = await import("cloudflare:test");
const { upgradeAtOnce } = await import("../src/db/schema-upgrade");
// RSA keys from a pool made once per run (test/key-pool.ts).
poolRsaKeys((env as unknown as { TEST_RSA_KEYS: [string, string][] }).TEST_RSA_KEYS);

// The real migrations, the statements the Worker applies to its database (src/db/schema-upgrade.ts), in one batch:
// one round trip instead of one per migration (test/schema-upgrade.test.ts checks the schemas are the same).
await upgradeAtOnce(env.DB);
// The other instances' databases (B, C, D) are migrated by test/instances.ts, only in the files that use them:
// migrating four databases for every file was half of the suite's time.

// Tests never reach the network: outbound fetches (link cards, push, federation) fail unless a test mocks
// `fetch` for what it exercises (the Worker runs in this isolate, so it sees the same global).
globalThis.fetch = (async (input: RequestInfo | URL) => {
  const url = input instanceof Request ? input.url : String(input);
  throw new Error(`network access in tests: ${url}`);
}) as typeof fetch;
