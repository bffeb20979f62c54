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
 * `.starling/deploy.json` (not tracked), so an upgrade needs no argument and never conflicts with `git pull`.
 *
 * `WRANGLER` names another wrangler command (the tests give a stand-in that records what it is asked).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";

export interface DeployState {
  domain: string;
  plan: "free" | "paid";
  /** Made on the first deploy, for `/setup`; kept so the link can be printed again until an admin exists. */
  setupSecret: string;
  /** The Cloudflare account the analytics token reads (`CF_ACCOUNT_ID`), once given. */
  accountId?: string;
}

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
  };
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
    ],
    secrets: Object.keys(secrets).length ? secrets : null,
    messages,
  };
}

function wranglerCommand(): string[] {
  const custom = process.env.WRANGLER;
  return custom ? custom.split(" ") : ["npx", "wrangler"];
}

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
  const args = [...p.args];
  let secretsDir: string | null = null;
  if (p.secrets) {
    secretsDir = mkdtempSync(join(tmpdir(), "starling-deploy-"));
    const file = join(secretsDir, "secrets.json");
    writeFileSync(file, JSON.stringify(p.secrets), { mode: 0o600 });
    args.push("--secrets-file", file);
  }
  const [cmd, ...pre] = wranglerCommand();
  const result = spawnSync(cmd!, [...pre, ...args], { cwd, stdio: "inherit" });
  if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
  if (result.status !== 0) {
    log("wrangler did not finish the deploy (see above); nothing was remembered. Run the same command again.");
    return result.status ?? 1;
  }
  mkdirSync(dirname(stateFile), { recursive: true });
  writeFileSync(stateFile, JSON.stringify(p.state, null, 2) + "\n", { mode: 0o600 });
  log(`Deployed: https://${p.state.domain}`);
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

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href)
  process.exit(run(process.argv.slice(2), join(import.meta.dirname, "..")));
