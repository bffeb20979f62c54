import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { generateKeyPair } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { defineConfig } from "vitest/config";

// Every module a test file loads (about 11 MB of code a file) crosses a WebSocket from this process to the file's
// workerd, and the `ws` client miniflare opens it with compresses every message over 1 KiB (permessage-deflate,
// which workerd accepts): a CPU profile of this process put zlib at about 10% of it, for two ends on one machine.
// Messages are sent whole from here (the threshold is never reached); workerd's own small messages still arrive
// compressed and are read as before. It reaches into `ws` (miniflare's copy), and fails loudly if that file moves.
const require = createRequire(import.meta.url);
const wsDir = path.dirname(require.resolve("ws", { paths: [path.dirname(require.resolve("miniflare"))] }));
const PerMessageDeflate = require(path.join(wsDir, "lib/permessage-deflate.js"));
Object.defineProperty(PerMessageDeflate.prototype, "_threshold", {
  get: () => Infinity,
  set: () => undefined,
  configurable: true,
});

/** RSA-2048 signing key pairs ([SPKI, PKCS#8], base64 DER) for the tests to use instead of generating their own
 * (test/key-pool.ts): made here once per run, on Node's thread pool. */
function rsaKeyPool(size: number): Promise<[string, string][]> {
  const one = () =>
    new Promise<[string, string]>((resolve, reject) =>
      generateKeyPair(
        "rsa",
        {
          modulusLength: 2048,
          publicExponent: 65537,
          publicKeyEncoding: { type: "spki", format: "der" },
          privateKeyEncoding: { type: "pkcs8", format: "der" },
        },
        (error, spki, pkcs8) => (error ? reject(error) : resolve([spki.toString("base64"), pkcs8.toString("base64")])),
      ),
    );
  return Promise.all(Array.from({ length: size }, one));
}

export default defineConfig(async () => {
  // The real migrations, applied inside workerd by test/setup.ts before any test runs.
  const migrations = await readD1Migrations(`${import.meta.dirname}/migrations`);
  // The most a file used is 58 (test/federation-e2e.test.ts); past the pool a file generates its own.
  const rsaKeys = await rsaKeyPool(80);
  return {
    // The bundle's shims (wrangler.toml `[alias]`) in the tests too, where they replace a library that Starling's
    // code reaches (Fedify's key handling): the suite covers what is deployed. scripts/shims.test.ts compares them
    // with the real libraries. The pre-bundled dependencies (node_modules/.vite) keep the shims as they were when
    // bundled: after editing one, delete that folder.
    resolve: {
      alias: {
        pkijs: `${import.meta.dirname}/shims/pkijs.js`,
        asn1js: `${import.meta.dirname}/shims/asn1js.js`,
      },
    },
    plugins: [
      {
        // The pre-bundled dependencies (below) without their source maps: each file's workerd received every
        // bundle with its map inlined (@fedify/vocab: 3 MB of code and 7 MB of map) and loading them was the
        // biggest part of a file's start (measured, 6 files: 121 s -> 74 s). Stack traces into a dependency
        // show the bundle's own lines; the project's files keep their maps.
        name: "starling:no-dependency-source-maps",
        transform(code: string, id: string) {
          if (id.includes("/node_modules/.vite/")) return { code, map: { mappings: "" } };
        },
      },
      {
        // The project's files keep their source maps, without the sources' text (vite inlines it into each map):
        // 3.3 MB less for every file's workerd to receive (a file's modules: 10.7 -> 7.5 MB). Stack traces still
        // point at the right lines, and vitest reads the code it shows around them from the files themselves.
        name: "starling:source-maps-without-sources",
        configureServer(server: {
          environments: Record<string, { transformRequest: (url: string) => Promise<unknown> }>;
        }) {
          for (const environment of Object.values(server.environments)) {
            const transformRequest = environment.transformRequest.bind(environment);
            environment.transformRequest = async (url: string) => {
              const result = (await transformRequest(url)) as { map?: { sourcesContent?: unknown } } | null;
              if (result?.map && "sourcesContent" in result.map) delete result.map.sourcesContent;
              return result;
            };
          }
        },
      },
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // Figures read fresh: tests count what they just wrote (test/instance.test.ts checks the cached default).
          // Password hashes at PBKDF2's lowest setting (10,000 iterations, not the default 100,000): the same code,
          // and about 18 ms of CPU less for each of the suite's thousands of sign-ups and sign-ins.
          bindings: {
            TEST_MIGRATIONS: migrations,
            MAILER: "outbox",
            STATS_CACHE_SECONDS: "0",
            PASSWORD_ITERATIONS: "10000",
            TEST_RSA_KEYS: rsaKeys,
          },
          // Instance B of the two-instance federation harness (test/instances.ts) keeps its data here; the
          // Worker sees it as its own DB. C (`DB_C`) and D (`DB_D`) are for tests that change instance-wide
          // policies (C) and settings (D), which must not reach the other files' instances.
          // EMPTY_1/2: databases no migration touched, for the Worker's own upgrade (test/schema-upgrade.test.ts).
          d1Databases: {
            DB_B: "starling-b",
            DB_C: "starling-c",
            DB_D: "starling-d",
            DB_EMPTY_1: "starling-empty-1",
            DB_EMPTY_2: "starling-empty-2",
          },
        },
      }),
    ],
    test: {
      // scripts/*.test.ts run under Node's test runner (they spawn processes), not in workerd.
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/setup.ts"],
      reporters: ["default", "./scripts/summary-reporter.ts"],
      testTimeout: 30_000,
      // Two test files at a time (vitest's default here is one: two cores, and vitest keeps one for itself). Each
      // file still runs in a workerd of its own with storage of its own, so no file sees another's rows. Measured
      // on the 2-core development machine, whole suite: one at a time 334 s, two 226 s (both without the
      // pre-bundling below); with it, two 175 s and three 157 s, but three stretched the tests' own time by 40%
      // (timing-sensitive tests would be the first to flake), so two.
      maxWorkers: 2,
      // The dependencies pre-bundled once per run (vitest's optimizer; node builtins stay imports, workerd's
      // `nodejs_compat` provides them) instead of each file loading their hundreds of modules one by one:
      // setup of six files 38 s -> 27 s; whole suite 226 s -> 175 s. Add a heavy new dependency here.
      deps: {
        optimizer: {
          ssr: {
            enabled: true,
            // Minified (names kept): 2.4 MB less code for each file's workerd to receive and parse.
            rolldownOptions: { external: [/^node:/], output: { minify: true, keepNames: true } },
            include: [
              "@fedify/fedify",
              "@fedify/vocab",
              "@fedify/vocab-runtime",
              "hono",
              "drizzle-orm",
              // The subpaths too: unlisted, their 140 files were each fetched one by one by every test file.
              "drizzle-orm/d1",
              "drizzle-orm/sqlite-core",
              "hono/cookie",
              "hono/cors",
              "hono/html",
              "hono/utils/html",
              "fast-png",
              "blurhash",
              "zod",
              "@hono/zod-openapi",
              "marked",
              "fflate",
              "otpauth",
              "entities",
              "@js-temporal/polyfill",
              "@block65/webcrypto-web-push",
              "structured-field-values",
            ],
          },
        },
      },
    },
  };
});
