/**
 * One command to deploy, and the same one to upgrade (issue 33), after `npx wrangler login`:
 *
 *   npm run deploy -- social.example [--plan free|paid]     first deploy
 *   npm run deploy                                          every later one (`git pull && npm run deploy`)
 *   CF_ANALYTICS_TOKEN=… npm run deploy -- --account-id ID  the budget meter's exact figures (once)
 *
 * wrangler provisions the D1 database and the R2 bucket named in wrangler.toml on the first deploy (no ids are
 * copied anywhere) and reuses them after; the Worker applies its own migrations (src/db/schema-upgrade.ts). This
 * script adds what wrangler.toml must not hold, because it is the host's: the domain (as `DOMAIN` and as the
 * Worker's custom domain), the plan (`PLAN`, the budget meter's caps), the password hashing cost and the database
 * ceiling of the plan, and on the first deploy a set-up secret
 * (a Worker secret) for `/setup`, where the first administrator is made in the browser. When the host gives a
 * read-only API token (`CF_ANALYTICS_TOKEN` in the environment, never on the command line, with `--account-id`), it is
 * uploaded as a secret and the account id kept as `CF_ACCOUNT_ID`, for the budget meter's exact figures
 * (services/usage-budget.ts). It remembers them (not the token) in
 * `.starling/deploy.json` (not tracked), so an upgrade needs no argument and never conflicts with `git pull`. It
 * deploys with `wrangler.deploy.toml` (not tracked either): wrangler.toml and the Workers AI binding (translation).
 *
 * With `--bluesky-handles` (remembered) it also routes `*.<domain>/.well-known/atproto-did` to the Worker, so users
 * who connected to Bluesky can take `<user>.<domain>` as their Bluesky handle (docs/deploy.md).
 * With `--zone-id <the domain's zone id>` it also gives the public bucket a custom domain (`media.<domain>`, or
 * `--media-domain`), so that loading media costs no Worker request. In steps, one per run, each safe to repeat:
 * the domain is attached only once the Worker has written READY_KEY into the bucket (nothing private left in it:
 * src/services/private-files.ts), and MEDIA_DOMAIN (media URLs point there) is set only once the domain is active.
 *
 * `WRANGLER` names another wrangler command (the tests give a stand-in that records what it is asked).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { READY_KEY } from "../src/services/private-files";

export interface DeployState {
  domain: string;
  plan: "free" | "paid";
  /** Made on the first deploy, for `/setup`; kept so the link can be printed again until an admin exists. */
  setupSecret: string;
  /** The Cloudflare account the analytics token reads (`CF_ACCOUNT_ID`), once given. */
  accountId?: string;
  /** The public bucket's custom domain and the zone it is in (`--zone-id`), when asked for once. */
  media?: { domain: string; zoneId: string };
  /** `--bluesky-handles`, once given: `*.<domain>/.well-known/atproto-did` routed to the Worker (docs/deploy.md). */
  blueskyHandles?: true;
}

/** Written by the Worker into the public bucket once nothing private is left in it. */
export { READY_KEY };

/** PBKDF2 iterations per plan: a sign-in fits the Free plan's 10 ms of CPU at 10,000 (docs/deploy.md, bench:cpu). */
export const ITERATIONS = { free: 10_000, paid: 100_000 } as const;
/** The database's ceiling per plan (D1: 500 MB per database on Free, 10 GB on Paid), for the storage guard. */
export const DATABASE_MB = { free: 500, paid: 10_000 } as const;

const HOST = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export interface Plan {
  state: DeployState;
  /** The wrangler arguments (the secrets file, when any, is added by `run`). */
  args: string[];
  /** Secrets to upload with this deploy (the first one only). */
  secrets: Record<string, string> | null;
  messages: string[];
}

/** Where the deploy runs: the host's machine, or Workers Builds (the Deploy button), which remembers nothing. */
export interface Context {
  /** `DOMAIN` from wrangler.toml's `[vars]` (the Deploy button's set-up page writes it there), if not empty. */
  configDomain: string | null;
  /** Workers Builds (`WORKERS_CI=1`): the set-up secret is the one the button asked for, not made here. */
  ci: boolean;
  /** `CF_ANALYTICS_TOKEN` from the environment: a read-only API token (Account Analytics: Read) to upload. */
  analyticsToken?: string | null;
}

/** What a deploy does, from the command line and what was remembered; throws with a message for the host. */
export function plan(
  argv: string[],
  saved: DeployState | null,
  makeSecret: () => string,
  where: Context = { configDomain: null, ci: false },
): Plan {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      plan: { type: "string" },
      "change-domain": { type: "boolean", default: false },
      "account-id": { type: "string" },
      "zone-id": { type: "string" },
      "media-domain": { type: "string" },
      "bluesky-handles": { type: "boolean", default: false },
    },
  });
  const given = positionals[0]
    ?.toLowerCase()
    .replace(/^https?:\/\//, "")
    .replace(/\/+$/, "");
  const domain = given ?? saved?.domain ?? where.configDomain ?? undefined;
  if (!domain)
    throw new Error(
      "Which domain? The first deploy needs it: npm run deploy -- social.example (a domain on your Cloudflare account).",
    );
  if (!HOST.test(domain)) throw new Error(`"${domain}" is not a domain name (example: social.example).`);
  if (saved && saved.domain !== domain && !values["change-domain"])
    throw new Error(
      `This instance is ${saved.domain}. Every account's id is made from the domain, so changing it breaks ` +
        `federation; if you mean it (a new instance), run again with --change-domain.`,
    );
  const planName = values.plan ?? saved?.plan ?? "free";
  if (planName !== "free" && planName !== "paid") throw new Error(`--plan is free or paid, not "${planName}".`);
  const first = !saved || saved.domain !== domain;
  const accountId = values["account-id"]?.toLowerCase() ?? (first ? undefined : saved?.accountId);
  if (accountId !== undefined && !/^[0-9a-f]{32}$/.test(accountId))
    throw new Error(`--account-id is the 32 hexadecimal characters of the account's id, not "${accountId}".`);
  const token = where.analyticsToken || null;
  if (token && !accountId)
    throw new Error(
      "CF_ANALYTICS_TOKEN reads one account's figures: give its id too (--account-id, from the dashboard's URL).",
    );
  const state: DeployState = {
    domain,
    plan: planName,
    setupSecret: first ? makeSecret() : saved!.setupSecret,
    ...(accountId ? { accountId } : {}),
    ...(values["bluesky-handles"] || (!first && saved?.blueskyHandles) ? { blueskyHandles: true as const } : {}),
  };
  const zoneId = values["zone-id"] ?? (first ? undefined : saved?.media?.zoneId);
  const mediaDomain = values["media-domain"]?.toLowerCase() ?? (first ? undefined : saved?.media?.domain);
  if (zoneId !== undefined || mediaDomain !== undefined) {
    if (!zoneId || !/^[0-9a-f]{32}$/.test(zoneId))
      throw new Error(
        "The media domain needs the zone id of your domain (32 hexadecimal digits, on the domain's Overview page in " +
          "the Cloudflare dashboard): npm run deploy -- --zone-id <id>",
      );
    const media = mediaDomain ?? `media.${domain}`;
    if (!HOST.test(media) || media === domain)
      throw new Error(`"${media}" cannot be the media domain: a host name other than ${domain} (media.${domain}).`);
    state.media = { domain: media, zoneId };
  }
  const messages = [
    first
      ? `Deploying a new instance at https://${domain} (${planName} plan).`
      : `Upgrading https://${domain} (${planName} plan).`,
  ];
  if (!accountId && !where.ci)
    messages.push(
      "The admin dashboard's budget meter estimates the day's usage from the Worker's own counts. For Cloudflare's " +
        "exact figures, create an API token with Account Analytics: Read only, then deploy once with " +
        "CF_ANALYTICS_TOKEN=<token> npm run deploy -- --account-id <account id> (docs/deploy.md).",
    );
  const secrets = {
    ...(first && !where.ci ? { SETUP_SECRET: state.setupSecret } : {}),
    ...(token ? { CF_ANALYTICS_TOKEN: token } : {}),
  };
  return {
    state,
    args: [
      "deploy",
      "--minify",
      "--domains",
      domain,
      "--var",
      `DOMAIN:${domain}`,
      "--var",
      `PASSWORD_ITERATIONS:${ITERATIONS[planName]}`,
      "--var",
      `DATABASE_LIMIT_MB:${DATABASE_MB[planName]}`,
      "--var",
      `PLAN:${planName}`,
      ...(accountId ? ["--var", `CF_ACCOUNT_ID:${accountId}`] : []),
      // Bluesky handles at `<user>.<domain>` (Bridgy Fed's redirect): the wildcard route to the Worker.
      ...(state.blueskyHandles ? ["--routes", `*.${domain}/.well-known/atproto-did`] : []),
    ],
    secrets: Object.keys(secrets).length ? secrets : null,
    messages,
  };
}

function wranglerCommand(): string[] {
  const custom = process.env.WRANGLER;
  return custom ? custom.split(" ") : ["npx", "wrangler"];
}

/** The bucket name a binding of wrangler.toml's `[[r2_buckets]]` names (MEDIA: public files; PRIVATE: the rest). */
export function bucketOf(toml: string, binding: "MEDIA" | "PRIVATE"): string {
  const block = toml
    .split(/^\[\[r2_buckets\]\]\s*$/m)
    .slice(1)
    .find((b) => new RegExp(`^binding\\s*=\\s*"${binding}"`, "m").test(b.split(/^\[/m)[0]!));
  const name = block && /^bucket_name\s*=\s*"([^"]+)"/m.exec(block.split(/^\[/m)[0]!)?.[1];
  if (!name) throw new Error(`wrangler.toml binds no R2 bucket as ${binding}.`);
  return name;
}

/** A custom domain's state in `wrangler r2 bucket domain list` output: "active", "pending", or "absent". */
export function domainStatus(listing: string, host: string): "active" | "pending" | "absent" {
  // Blocks of `label: value` lines, one per domain (colours stripped).
  for (const block of listing.replace(/\x1b\[[0-9;]*m/g, "").split(/\n\s*\n/)) {
    const field = (name: string) => new RegExp(`^\\s*${name}:\\s*(\\S+)`, "m").exec(block)?.[1];
    if (field("domain")?.toLowerCase() !== host) continue;
    const live =
      field("enabled") === "Yes" && field("ownership_status") === "active" && field("ssl_status") === "active";
    return live ? "active" : "pending";
  }
  return "absent";
}

/** The config a deploy uses (not tracked): wrangler.toml and the Workers AI binding for translation (services/translation.ts). */
export const DEPLOY_CONFIG = "wrangler.deploy.toml";
export const AI_BINDING =
  '# Workers AI: translation (src/services/translation.ts), added by scripts/deploy.ts.\n[ai]\nbinding = "AI"\n';

/** Runs the deploy (`cwd`: the project folder). Answers the process's exit code. */
export function run(argv: string[], cwd: string, log: (s: string) => void = console.log): number {
  const stateFile = join(cwd, ".starling", "deploy.json");
  const saved = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, "utf8")) as DeployState) : null;
  let p: Plan;
  const toml = readFileSync(join(cwd, "wrangler.toml"), "utf8");
  const where: Context = {
    configDomain: /^DOMAIN\s*=\s*"([^"]+)"/m.exec(toml)?.[1] ?? null,
    ci: process.env.WORKERS_CI === "1",
    analyticsToken: process.env.CF_ANALYTICS_TOKEN,
  };
  try {
    p = plan(argv, saved, () => randomBytes(24).toString("base64url"), where);
  } catch (e) {
    log((e as Error).message);
    return 2;
  }
  p.messages.forEach((m) => log(m));
  const [cmd, ...pre] = wranglerCommand();
  const wrangler = (args: string[], capture = false) =>
    spawnSync(cmd!, [...pre, ...args], { cwd, stdio: capture ? "pipe" : "inherit", encoding: "utf8" });
  const args = [...p.args];
  const media = p.state.media;
  const bucket = bucketOf(toml, "MEDIA");
  // Media URLs point at the media domain only once it answers; until then (and if the question fails) the Worker
  // serves them, as without one.
  let status: "active" | "pending" | "absent" = "absent";
  if (media) {
    const listed = wrangler(["r2", "bucket", "domain", "list", bucket], true);
    if (listed.status === 0) status = domainStatus(listed.stdout ?? "", media.domain);
    if (status === "active") args.push("--var", `MEDIA_DOMAIN:${media.domain}`);
  }
  // Workers AI (translation) is bound here, not in wrangler.toml: `wrangler dev` would need an account for it, and
  // `npm start` must work offline. The deploy's config is wrangler.toml and the binding, next to it (same paths).
  const deployConfig = join(cwd, DEPLOY_CONFIG);
  writeFileSync(deployConfig, `${toml.trimEnd()}\n\n${AI_BINDING}`);
  args.push("--config", DEPLOY_CONFIG);
  let secretsDir: string | null = null;
  if (p.secrets) {
    secretsDir = mkdtempSync(join(tmpdir(), "starling-deploy-"));
    const file = join(secretsDir, "secrets.json");
    writeFileSync(file, JSON.stringify(p.secrets), { mode: 0o600 });
    args.push("--secrets-file", file);
  }
  const result = wrangler(args);
  if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
  if (result.status !== 0) {
    log("wrangler did not finish the deploy (see above); nothing was remembered. Run the same command again.");
    return result.status ?? 1;
  }
  mkdirSync(dirname(stateFile), { recursive: true });
  writeFileSync(stateFile, JSON.stringify(p.state, null, 2) + "\n", { mode: 0o600 });
  log(`Deployed: https://${p.state.domain}`);
  if (media) log(mediaStep(media, bucket, status, wrangler));
  if (where.ci) {
    log(`Make the first administrator at https://${p.state.domain}/setup with the set-up secret you chose.`);
    return 0;
  }
  log(
    `If no administrator exists yet, make the first one here (the link works until one exists):\n` +
      `  https://${p.state.domain}/setup?secret=${p.state.setupSecret}`,
  );
  return 0;
}

/** The public bucket's CORS rules (R2's format): any origin may read. */
export const MEDIA_CORS = {
  rules: [{ allowed: { origins: ["*"], methods: ["GET", "HEAD"] }, maxAgeSeconds: 86400 }],
};

/** The media domain's next step after a deploy, and what to tell the host. */
function mediaStep(
  media: NonNullable<DeployState["media"]>,
  bucket: string,
  status: "active" | "pending" | "absent",
  wrangler: (args: string[], capture?: boolean) => ReturnType<typeof spawnSync>,
): string {
  const again = "run `npm run deploy` again in a few minutes";
  if (status === "active") return `Media is served from https://${media.domain} (the public bucket's own domain).`;
  if (status === "pending") return `https://${media.domain} is not active yet: ${again} to serve media from it.`;
  // The bucket must hold nothing private before anyone can read it by name: the Worker's cron says so (READY_KEY).
  const ready = wrangler(["r2", "object", "get", `${bucket}/${READY_KEY}`, "--remote", "--pipe"], true);
  if (ready.status !== 0)
    return `The Worker is preparing the public bucket for https://${media.domain} (moving private files out, a batch a minute): ${again} to attach it.`;
  // As the Worker's `/media/` answers (app.ts's CORS): web clients on other origins may read the files.
  const dir = mkdtempSync(join(tmpdir(), "starling-deploy-"));
  const cors = join(dir, "cors.json");
  writeFileSync(cors, JSON.stringify(MEDIA_CORS));
  const allowed = wrangler(["r2", "bucket", "cors", "set", bucket, "--file", cors, "--force"], true);
  rmSync(dir, { recursive: true, force: true });
  if (allowed.status !== 0)
    return `Could not set the CORS rules of ${bucket}:\n${allowed.stderr || allowed.stdout}\nMedia stays served by the Worker.`;
  const added = wrangler(
    ["r2", "bucket", "domain", "add", bucket, "--domain", media.domain, "--zone-id", media.zoneId, "--force"],
    true,
  );
  if (added.status !== 0)
    return `Could not attach https://${media.domain} to ${bucket}:\n${added.stderr || added.stdout}\nMedia stays served by the Worker.`;
  return `Attached https://${media.domain} to the bucket ${bucket}: ${again}, once it is active, to serve media from it.`;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href)
  process.exit(run(process.argv.slice(2), join(import.meta.dirname, "..")));
