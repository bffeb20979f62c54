/**
 * The committed wrangler.toml builds as it is, and the Worker's bundle stays under 800 KiB gzipped (issue 42): what
 * `wrangler deploy --minify` would upload, built here with `--dry-run` (a few seconds, nothing sent anywhere),
 * gzipped at level 9. Cloudflare's limits are 3 MiB on Workers Free and 10 MiB on Paid; a smaller bundle also
 * starts a cold isolate sooner. bench/README.md says what was big and what was done about it.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { gzipSync } from "node:zlib";

const LIMIT_KIB = 800;

// One dry-run build for both checks of it (wrangler's build is the slowest step of the Node tests).
test(`the committed wrangler.toml builds as it is, D1 and R2 bound, and its minified bundle is under ${LIMIT_KIB} KiB gzipped`, () => {
  const out = mkdtempSync(join(tmpdir(), "starling-bundle-"));
  try {
    const build = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--minify", "--outdir", out], {
      cwd: join(import.meta.dirname, ".."),
      encoding: "utf8",
      env: { ...process.env, CI: "1", WRANGLER_SEND_METRICS: "false" },
    });
    assert.equal(build.status, 0, `wrangler failed:\n${build.stdout}\n${build.stderr}`);
    assert.match(build.stdout, /env\.DB \(starling\)\s+D1 Database/);
    assert.match(build.stdout, /env\.MEDIA \(starling-media\)\s+R2 Bucket/);
    assert.match(build.stdout, /env\.PRIVATE \(starling-private\)\s+R2 Bucket/);
    const modules = readdirSync(out).filter((f) => /\.(m?js|wasm)$/.test(f));
    assert.ok(modules.length > 0, "no module was built");
    const bytes = modules.reduce((n, f) => n + gzipSync(readFileSync(join(out, f)), { level: 9 }).byteLength, 0);
    const kib = bytes / 1024;
    assert.ok(kib < LIMIT_KIB, `the bundle is ${kib.toFixed(1)} KiB gzipped (limit ${LIMIT_KIB})`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
