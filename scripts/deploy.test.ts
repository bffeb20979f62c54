/**
 * The deploy command (scripts/deploy.ts) against a stand-in for wrangler that records what it is asked to do:
 * first deploy, a later one (an upgrade with a new migration is the same: the Worker migrates itself), a failed
 * one, and the host's mistakes. Run by `npm test` with Node's test runner (it spawns processes: not workerd's job).
 */
import assert from "node:assert/strict";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { AI_BINDING, bucketOf, DEPLOY_CONFIG, READY_KEY, run } from "./deploy";

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
const f = args.indexOf("--file");
const file = f >= 0 ? JSON.parse(readFileSync(args[f + 1], "utf8")) : null;
appendFileSync(${JSON.stringify(log)}, JSON.stringify({ args, secrets, file, cwd: process.cwd() }) + "\\n");
// R2: the bucket's custom domains (FAKE_DOMAINS, as wrangler prints them) and whether the Worker's ready mark is there.
if (args[0] === "r2" && args[2] === "domain" && args[3] === "list") {
  process.stdout.write(process.env.FAKE_DOMAINS || "There are no custom domains connected to this bucket.\\n");
  process.exit(0);
}
if (args[0] === "r2" && args[1] === "object" && args[2] === "get") process.exit(process.env.FAKE_READY === "1" ? 0 : 1);
if (args[0] === "r2") process.exit(0);
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
          .map(
            (l) =>
              JSON.parse(l) as { args: string[]; secrets: Record<string, string> | null; file: unknown; cwd: string },
          )
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
  // Deployed with wrangler.toml plus the Workers AI binding (translation), which wrangler.toml itself leaves out.
  const config = call.args[call.args.indexOf("--config") + 1];
  assert.equal(config, DEPLOY_CONFIG);
  const deployed = readFileSync(join(p.dir, config!), "utf8");
  assert.ok(deployed.startsWith(readFileSync(join(import.meta.dirname, "..", "wrangler.toml"), "utf8").trimEnd()));
  assert.ok(deployed.endsWith(AI_BINDING));
  assert.doesNotMatch(readFileSync(join(import.meta.dirname, "..", "wrangler.toml"), "utf8"), /^\[ai\]/m);
  assert.deepEqual(without(without(call.args, "--secrets-file"), "--config"), [
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

test("the committed wrangler.toml has no database id and no workers.dev (its dry-run build: bundle-size.test.ts)", () => {
  const toml = readFileSync(join(import.meta.dirname, "..", "wrangler.toml"), "utf8");
  assert.doesNotMatch(toml, /^\s*database_id\s*=/m);
  assert.match(toml, /^workers_dev = false$/m);
});

const ZONE = "0123456789abcdef0123456789abcdef";
/** wrangler's listing of one custom domain (with its colours). */
const listing = (host: string, ownership: string, ssl: string) =>
  `Listing custom domains connected to bucket 'starling-media'...\n\n` +
  `\x1b[37mdomain:\x1b[39m            \x1b[90m${host}\x1b[39m\nenabled:           Yes\n` +
  `ownership_status:  ${ownership}\nssl_status:        ${ssl}\nmin_tls_version:   1.0\nzone_id:           ${ZONE}\n`;

test("the media domain, in steps: attached once the Worker has emptied the bucket of private files, used once active", () => {
  const p = project();
  const env = (domains: string, ready: boolean) => {
    process.env.FAKE_DOMAINS = domains;
    process.env.FAKE_READY = ready ? "1" : "0";
  };
  const since = (n: number) =>
    p
      .calls()
      .slice(n)
      .map((c) => c.args);
  const deployCall = (calls: string[][]) => calls.find((a) => a[0] === "deploy")!;
  try {
    // 1. The Worker has not yet said the bucket is ready: deployed without MEDIA_DOMAIN, nothing attached.
    env("", false);
    let r = deploy(p, ["social.example", "--zone-id", ZONE]);
    assert.equal(r.code, 0);
    let calls = since(0);
    assert.deepEqual(calls[0], ["r2", "bucket", "domain", "list", "starling-media"]);
    assert.ok(!deployCall(calls).some((a) => a.startsWith("MEDIA_DOMAIN:")));
    assert.deepEqual(calls.at(-1), ["r2", "object", "get", `starling-media/${READY_KEY}`, "--remote", "--pipe"]);
    assert.ok(!calls.some((a) => a[3] === "add"));
    assert.match(r.out, /preparing the public bucket for https:\/\/media\.social\.example/);
    const saved = JSON.parse(readFileSync(join(p.dir, ".starling", "deploy.json"), "utf8"));
    assert.deepEqual(saved.media, { domain: "media.social.example", zoneId: ZONE });

    // 2. Ready (a later run, no arguments): the bucket answers any origin, as the Worker's /media/ does, and the
    // domain is attached to it, still not used.
    env("", true);
    let n = p.calls().length;
    r = deploy(p, []);
    calls = since(n);
    assert.ok(!deployCall(calls).some((a) => a.startsWith("MEDIA_DOMAIN:")));
    const cors = p.calls().find((c) => c.args[2] === "cors")!;
    assert.deepEqual(cors.args.slice(0, 5), ["r2", "bucket", "cors", "set", "starling-media"]);
    assert.deepEqual(cors.file, {
      rules: [{ allowed: { origins: ["*"], methods: ["GET", "HEAD"] }, maxAgeSeconds: 86400 }],
    });
    assert.deepEqual(calls.at(-1), [
      "r2",
      "bucket",
      "domain",
      "add",
      "starling-media",
      "--domain",
      "media.social.example",
      "--zone-id",
      ZONE,
      "--force",
    ]);
    assert.match(r.out, /Attached https:\/\/media\.social\.example/);

    // 3. Attached but not active yet: nothing changes.
    env(listing("media.social.example", "pending", "initializing"), true);
    n = p.calls().length;
    r = deploy(p, []);
    calls = since(n);
    assert.ok(!deployCall(calls).some((a) => a.startsWith("MEDIA_DOMAIN:")));
    assert.ok(!calls.some((a) => a[3] === "add" || a[2] === "get"));
    assert.match(r.out, /not active yet/);

    // 4. Active: media URLs point there.
    env(listing("media.social.example", "active", "active"), true);
    n = p.calls().length;
    r = deploy(p, []);
    calls = since(n);
    const args = deployCall(calls);
    assert.equal(args[args.indexOf("MEDIA_DOMAIN:media.social.example") - 1], "--var");
    assert.ok(!calls.some((a) => a[3] === "add" || a[2] === "get"));
    assert.match(r.out, /Media is served from https:\/\/media\.social\.example/);

    // Another domain's listing does not count as ours; --media-domain chooses another name.
    env(listing("cdn.social.example", "active", "active"), true);
    n = p.calls().length;
    deploy(p, []);
    assert.ok(!deployCall(since(n)).some((a) => a.startsWith("MEDIA_DOMAIN:")));
    n = p.calls().length;
    deploy(p, ["--media-domain", "cdn.social.example"]);
    assert.ok(deployCall(since(n)).includes("MEDIA_DOMAIN:cdn.social.example"));
  } finally {
    delete process.env.FAKE_DOMAINS;
    delete process.env.FAKE_READY;
  }
});

test("the media domain's mistakes are refused before wrangler runs; without --zone-id nothing of it happens", () => {
  const p = project();
  for (const argv of [
    ["social.example", "--zone-id", "not-a-zone"],
    ["social.example", "--media-domain", "media.social.example"],
    ["social.example", "--zone-id", ZONE, "--media-domain", "social.example"],
    ["social.example", "--zone-id", ZONE, "--media-domain", "not a host"],
  ]) {
    const r = deploy(p, argv);
    assert.equal(r.code, 2, argv.join(" "));
  }
  assert.equal(p.calls().length, 0);
  deploy(p, ["social.example"]);
  assert.deepEqual(
    p.calls().map((c) => c.args[0]),
    ["deploy"],
  );
});

test("the buckets of wrangler.toml", () => {
  const toml = readFileSync(join(import.meta.dirname, "..", "wrangler.toml"), "utf8");
  assert.equal(bucketOf(toml, "MEDIA"), "starling-media");
  assert.equal(bucketOf(toml, "PRIVATE"), "starling-private");
});

test("--bluesky-handles routes <user>.<domain>/.well-known/atproto-did to the Worker, and is remembered", () => {
  const p = project();
  deploy(p, ["social.example"]);
  assert.ok(!p.calls()[0]!.args.includes("--routes"));
  deploy(p, ["--bluesky-handles"]);
  const route = ["--routes", "*.social.example/.well-known/atproto-did"];
  const at = (args: string[]) => args.indexOf("--routes");
  const second = p.calls()[1]!.args;
  assert.deepEqual(second.slice(at(second), at(second) + 2), route);
  const third = (deploy(p, []), p.calls()[2]!.args);
  assert.deepEqual(third.slice(at(third), at(third) + 2), route);
});
