/**
 * The deploy command (scripts/deploy.ts) against a stand-in for wrangler that records what it is asked to do:
 * first deploy, a later one (an upgrade with a new migration is the same: the Worker migrates itself), a failed
 * one, and the host's mistakes. Run by `npm test` with Node's test runner (it spawns processes: not workerd's job).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { run } from "./deploy";

/** A project folder with a stand-in `wrangler` that logs its arguments (and the secrets file's content). */
function project() {
  const dir = mkdtempSync(join(tmpdir(), "starling-deploy-test-"));
  const log = join(dir, "wrangler.log");
  const fake = join(dir, "fake-wrangler.mjs");
  writeFileSync(
    fake,
    `import { appendFileSync, readFileSync } from "node:fs";
const args = process.argv.slice(2);
const i = args.indexOf("--secrets-file");
const secrets = i >= 0 ? JSON.parse(readFileSync(args[i + 1], "utf8")) : null;
appendFileSync(${JSON.stringify(log)}, JSON.stringify({ args, secrets, cwd: process.cwd() }) + "\\n");
process.exit(Number(process.env.FAKE_WRANGLER_EXIT ?? 0));
`,
  );
  chmodSync(fake, 0o755);
  cpSync(join(import.meta.dirname, "..", "wrangler.toml"), join(dir, "wrangler.toml"));
  const calls = () =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { args: string[]; secrets: Record<string, string> | null; cwd: string })
      : [];
  return { dir, fake, calls };
}

function deploy(p: ReturnType<typeof project>, argv: string[], exit = 0) {
  const out: string[] = [];
  process.env.WRANGLER = `node ${p.fake}`;
  process.env.FAKE_WRANGLER_EXIT = String(exit);
  const code = run(argv, p.dir, (s) => out.push(s));
  return { code, out: out.join("\n") };
}

const without = (args: string[], flag: string) => {
  const i = args.indexOf(flag);
  return i < 0 ? args : [...args.slice(0, i), ...args.slice(i + 2)];
};

test("first deploy: domain, plan-safe hashing, minified, a set-up secret uploaded and printed, all remembered", () => {
  const p = project();
  const { code, out } = deploy(p, ["Social.Example"]);
  assert.equal(code, 0);
  const [call] = p.calls();
  assert.ok(call);
  assert.equal(call.cwd, p.dir);
  assert.deepEqual(without(call.args, "--secrets-file"), [
    "deploy",
    "--minify",
    "--domains",
    "social.example",
    "--var",
    "DOMAIN:social.example",
    "--var",
    "PASSWORD_ITERATIONS:10000",
    "--var",
    "DATABASE_LIMIT_MB:500",
    "--var",
    "PLAN:free",
  ]);
  assert.deepEqual(Object.keys(call.secrets ?? {}), ["SETUP_SECRET"]);
  // The exact figures are offered, not required.
  assert.match(out, /CF_ANALYTICS_TOKEN=<token> npm run deploy -- --account-id/);
  const secret = call.secrets?.SETUP_SECRET;
  assert.match(secret ?? "", /^[A-Za-z0-9_-]{32}$/);
  assert.ok(out.includes(`https://social.example/setup?secret=${secret}`));
  const saved = JSON.parse(readFileSync(join(p.dir, ".starling", "deploy.json"), "utf8"));
  assert.deepEqual(saved, { domain: "social.example", plan: "free", setupSecret: secret });
  // Nothing of the host's went into a tracked file.
  assert.equal(
    readFileSync(join(p.dir, "wrangler.toml"), "utf8"),
    readFileSync(join(import.meta.dirname, "..", "wrangler.toml"), "utf8"),
  );
});

test("later deploys (upgrades) need no argument, upload no secret, keep the plan unless told", () => {
  const p = project();
  deploy(p, ["social.example", "--plan", "paid"]);
  const first = p.calls()[0]!;
  assert.ok(first.args.includes("PASSWORD_ITERATIONS:100000"));
  assert.ok(first.args.includes("DATABASE_LIMIT_MB:10000"));
  const { code } = deploy(p, []);
  assert.equal(code, 0);
  const second = p.calls()[1]!;
  assert.equal(second.secrets, null);
  assert.ok(!second.args.includes("--secrets-file"));
  assert.deepEqual(second.args.slice(0, 6), [
    "deploy",
    "--minify",
    "--domains",
    "social.example",
    "--var",
    "DOMAIN:social.example",
  ]);
  assert.ok(second.args.includes("PASSWORD_ITERATIONS:100000"));
  assert.ok(second.args.includes("PLAN:paid"));
  deploy(p, ["--plan", "free"]);
  assert.ok(p.calls()[2]!.args.includes("PASSWORD_ITERATIONS:10000"));
  assert.ok(p.calls()[2]!.args.includes("PLAN:free"));
});

test("the budget meter's token: uploaded as a secret with its account id, never remembered; refused without the id", () => {
  const p = project();
  deploy(p, ["social.example"]);
  const account = "0123456789abcdef0123456789ABCDEF";
  process.env.CF_ANALYTICS_TOKEN = "read-only-token";
  try {
    let r = deploy(p, []);
    assert.equal(r.code, 2);
    assert.match(r.out, /--account-id/);
    r = deploy(p, ["--account-id", "not-an-id"]);
    assert.equal(r.code, 2);
    assert.equal(p.calls().length, 1);
    r = deploy(p, ["--account-id", account]);
    assert.equal(r.code, 0);
    const call = p.calls()[1]!;
    assert.deepEqual(call.secrets, { CF_ANALYTICS_TOKEN: "read-only-token" });
    assert.ok(call.args.includes(`CF_ACCOUNT_ID:${account.toLowerCase()}`));
  } finally {
    delete process.env.CF_ANALYTICS_TOKEN;
  }
  const saved = readFileSync(join(p.dir, ".starling", "deploy.json"), "utf8");
  assert.ok(!saved.includes("read-only-token"));
  assert.equal(JSON.parse(saved).accountId, account.toLowerCase());
  // Later deploys keep the account id (the token stays a secret on Cloudflare) and upload nothing.
  const { code, out } = deploy(p, []);
  assert.equal(code, 0);
  const later = p.calls()[2]!;
  assert.equal(later.secrets, null);
  assert.ok(later.args.includes(`CF_ACCOUNT_ID:${account.toLowerCase()}`));
  assert.doesNotMatch(out, /CF_ANALYTICS_TOKEN=<token>/);
});

test("a failed deploy remembers nothing; mistakes are refused before wrangler runs", () => {
  const p = project();
  assert.notEqual(deploy(p, ["social.example"], 1).code, 0);
  assert.equal(existsSync(join(p.dir, ".starling", "deploy.json")), false);
  const calls = p.calls().length;
  let r = deploy(p, []);
  assert.equal(r.code, 2);
  assert.match(r.out, /Which domain\?/);
  r = deploy(p, ["not a domain"]);
  assert.equal(r.code, 2);
  r = deploy(p, ["social.example", "--plan", "enterprise"]);
  assert.equal(r.code, 2);
  assert.equal(p.calls().length, calls);
  // Once deployed, another domain is refused unless asked for in so many words.
  deploy(p, ["social.example"]);
  r = deploy(p, ["other.example"]);
  assert.equal(r.code, 2);
  assert.match(r.out, /breaks federation/);
  assert.equal(deploy(p, ["other.example", "--change-domain"]).code, 0);
});

test("the Deploy button (Workers Builds): DOMAIN from its set-up page, the set-up secret it asked for kept", () => {
  const p = project();
  const toml = readFileSync(join(p.dir, "wrangler.toml"), "utf8").replace(
    /^DOMAIN = ""$/m,
    'DOMAIN = "button.example"',
  );
  writeFileSync(join(p.dir, "wrangler.toml"), toml);
  process.env.WORKERS_CI = "1";
  try {
    const { code, out } = deploy(p, []);
    assert.equal(code, 0);
    const [call] = p.calls();
    assert.deepEqual(call!.args.slice(0, 6), [
      "deploy",
      "--minify",
      "--domains",
      "button.example",
      "--var",
      "DOMAIN:button.example",
    ]);
    assert.equal(call!.secrets, null);
    assert.match(out, /set-up secret you chose/);
  } finally {
    delete process.env.WORKERS_CI;
  }
});

test("the committed wrangler.toml deploys as it is (dry run): no database id, no workers.dev, D1 and R2 bound", () => {
  const root = join(import.meta.dirname, "..");
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
  assert.doesNotMatch(toml, /^\s*database_id\s*=/m);
  assert.match(toml, /^workers_dev = false$/m);
  const out = mkdtempSync(join(tmpdir(), "starling-dry-run-"));
  const r = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--minify", "--outdir", out], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, CI: "1", WRANGLER_SEND_METRICS: "false" },
  });
  assert.equal(r.status, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /env\.DB \(starling\)\s+D1 Database/);
  assert.match(r.stdout, /env\.MEDIA \(starling-media\)\s+R2 Bucket/);
});
