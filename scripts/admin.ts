/**
 * Instance administration from the command line, locally or against the deployed database:
 *
 *   npm run admin -- create-admin --username alice --email alice@example.com [--password …] [--remote] [--domain social.example]
 *   npm run admin -- invite [--max-uses 1] [--days 7] [--remote]
 *   npm run admin -- mail [--remote]            (the newest messages of the development outbox)
 *   npm run admin -- emoji-upload <folder> [--remote]   (emoji packs into R2; see docs/emoji.md)
 *   npm run admin -- make-admin|make-moderator|revoke-admin|revoke-moderator --username alice [--remote]
 *   npm run admin -- reset-password --username alice [--password …] [--remote]   (prints a new one if not given)
 *   npm run admin -- deactivate|activate --username alice [--remote]
 *   npm run admin -- migrations [--remote]      (applied vs pending D1 migrations)
 *   npm run admin -- frontend install <name> [--ref …] [--file build.zip | --build-url …] [--build-dir dist] [--primary|--admin] [--remote]
 *   npm run admin -- relay follow <url> | unfollow <url> | list [--remote]   (relays; the cron sends the Follow/Undo)
 *   npm run admin -- import-archive <user> <archive.zip> [--remote] [--domain …]   (a Mastodon/Pleroma archive; the cron imports it)
 *
 * It writes through `wrangler d1 execute`, so it needs no running server, and uses the Worker's own code
 * for ids and password hashes, so what it writes is what registration would have written.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { newId } from "../src/db/ids";
import { hashPassword, randomToken, sha256 } from "../src/lib/crypto";
import { localActorUrls } from "../src/services/accounts";
import { NICKNAME_PATTERN } from "../src/lib/nicknames";
import { uploadEmojiFolder } from "./emoji-upload";
import { installFrontendFromCli } from "./frontend-install";
import { importArchiveFromCli } from "./archive-import";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    username: { type: "string" },
    email: { type: "string" },
    password: { type: "string" },
    remote: { type: "boolean", default: false },
    domain: { type: "string" },
    "max-uses": { type: "string" },
    days: { type: "string" },
    ref: { type: "string" },
    file: { type: "string" },
    "build-url": { type: "string" },
    "build-dir": { type: "string" },
    primary: { type: "boolean", default: false },
    admin: { type: "boolean", default: false },
  },
});

const q = (v: string | number | null) =>
  v === null ? "NULL" : typeof v === "number" ? String(v) : `'${v.replace(/'/g, "''")}'`;

function d1(args: string[]): string {
  // A local database lives where `npm start` keeps it: $STATE (a second local instance has its own).
  const target = values.remote ? ["--remote"] : ["--local", "--persist-to", process.env.STATE || ".wrangler/state"];
  return execFileSync("npx", ["wrangler", "d1", "execute", "DB", ...target, "--yes", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
}

function runSql(statements: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "starling-"));
  const file = join(dir, "admin.sql");
  writeFileSync(file, statements.join(";\n") + ";\n");
  d1(["--file", file]);
}

/**
 * The public host ids are made from: `--domain`, else the one `npm run deploy` remembered (for `--remote`), else
 * DOMAIN from wrangler.toml, else the local dev address (`PORT`, as `npm start` uses it). Said out loud: an account
 * made with the wrong one has ids that point nowhere.
 */
function base(): string {
  const chosen = ((): [string, string] => {
    if (values.domain) return [`https://${values.domain}`, "--domain"];
    const deployed = new URL("../.starling/deploy.json", import.meta.url);
    if (values.remote && existsSync(deployed))
      return [`https://${JSON.parse(readFileSync(deployed, "utf8")).domain}`, "the domain npm run deploy used"];
    const toml = readFileSync(new URL("../wrangler.toml", import.meta.url), "utf8");
    const domain = /^DOMAIN\s*=\s*"([^"]*)"/m.exec(toml)?.[1];
    if (domain) return [`https://${domain}`, "DOMAIN in wrangler.toml"];
    if (values.remote) throw new Error("Pass --domain for a deployed instance.");
    const port = process.env.PORT ?? "8787";
    return [
      `http://localhost:${port}`,
      `the local address (PORT=${port}; set PORT as for npm start, or pass --domain)`,
    ];
  })();
  console.error(`ids are made from ${chosen[0]} (${chosen[1]})`);
  return chosen[0];
}

/** A local database is brought up to date first (as the Worker does on its first request), so no order matters. */
function migrateLocal() {
  if (values.remote) return;
  execFileSync(
    "npx",
    ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", process.env.STATE || ".wrangler/state"],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "1" } },
  );
}

async function createAdmin() {
  const username = values.username;
  const email = values.email;
  if (!username || !NICKNAME_PATTERN.test(username))
    throw new Error("--username is required: letters, digits and _ only");
  if (!email || !email.includes("@")) throw new Error("--email is required");
  const password = values.password ?? randomToken(12);
  const t = Date.now();
  const id = newId(t);
  // No signing key: the Worker makes one when the account first signs (services/credentials.ts `signingKey`).
  const urls = localActorUrls(base(), username);
  runSql([
    `INSERT INTO accounts (id, username, domain, display_name, note, uri, url, inbox_url, outbox_url, followers_url, shared_inbox_url, accepts_chat_messages, created_at, updated_at)
     VALUES (${q(id)}, ${q(username)}, NULL, ${q(username)}, '', ${q(urls.uri)}, ${q(urls.url)}, ${q(urls.inboxUrl)}, ${q(urls.outboxUrl)}, ${q(urls.followersUrl)}, ${q(urls.sharedInboxUrl)}, 1, ${t}, ${t})`,
    `INSERT INTO users (account_id, email, confirmed, is_admin, is_moderator, last_active_at, created_at)
     VALUES (${q(id)}, ${q(email)}, 1, 1, 1, ${t}, ${t})`,
    `INSERT INTO credentials (account_id, password_hash) VALUES (${q(id)}, ${q(await hashPassword(password))})`,
  ]);
  console.log(`Created admin @${username} (${urls.uri})`);
  if (!values.password) console.log(`Password: ${password}`);
}

async function invite() {
  const token = randomToken(16);
  const maxUses = values["max-uses"] ? Number(values["max-uses"]) : 1;
  const expires = values.days ? Date.now() + Number(values.days) * 86400_000 : null;
  runSql([
    `INSERT INTO invites (id, token_hash, token, max_uses, uses, expires_at, created_at) VALUES (${q(newId())}, ${q(await sha256(token))}, ${q(token)}, ${maxUses}, 0, ${q(expires)}, ${Date.now()})`,
  ]);
  console.log(`Invite token (register with token=…): ${token}`);
}

function mail() {
  console.log(d1(["--command", 'SELECT created_at, "to", subject, text FROM mail_outbox ORDER BY id DESC LIMIT 5']));
}

/** A local user's nickname from --username, validated before it reaches SQL. */
function nickname(): string {
  const username = values.username;
  if (!username || !NICKNAME_PATTERN.test(username))
    throw new Error("--username is required: letters, digits and _ only");
  return username;
}

/** Runs the statements and fails if they changed no local user (a mistyped nickname). */
function onLocalUser(username: string, statements: string[], done: string) {
  const found = d1([
    "--json",
    "--command",
    `SELECT a.id FROM accounts a JOIN users u ON u.account_id = a.id WHERE a.acct_key = ${q(username.toLowerCase())}`,
  ]);
  if (!found.includes('"id"')) throw new Error(`No local user @${username}`);
  runSql(statements);
  console.log(done);
}

const localId = (username: string) =>
  `(SELECT id FROM accounts WHERE acct_key = ${q(username.toLowerCase())} AND domain IS NULL)`;

function role(column: "is_admin" | "is_moderator", on: boolean) {
  return () => {
    const u = nickname();
    onLocalUser(
      u,
      [`UPDATE users SET ${column} = ${on ? 1 : 0} WHERE account_id = ${localId(u)}`],
      `@${u}: ${column} = ${on}`,
    );
  };
}

async function resetPassword() {
  const u = nickname();
  const password = values.password ?? randomToken(12);
  // Existing sessions end with the old password.
  onLocalUser(
    u,
    [
      `UPDATE credentials SET password_hash = ${q(await hashPassword(password))} WHERE account_id = ${localId(u)}`,
      `DELETE FROM tokens WHERE account_id = ${localId(u)}`,
    ],
    `Password of @${u} reset; signed out everywhere.`,
  );
  if (!values.password) console.log(`Password: ${password}`);
}

function activation(active: boolean) {
  return () => {
    const u = nickname();
    onLocalUser(
      u,
      [`UPDATE accounts SET deactivated = ${active ? 0 : 1}, updated_at = ${Date.now()} WHERE id = ${localId(u)}`],
      `@${u} ${active ? "activated" : "deactivated"}`,
    );
  };
}

/** Applied vs pending: `wrangler d1 migrations list` prints the ones not yet applied. */
function migrations() {
  const target = values.remote ? ["--remote"] : ["--local", "--persist-to", process.env.STATE || ".wrangler/state"];
  let applied = "";
  try {
    applied = d1(["--json", "--command", "SELECT name FROM d1_migrations ORDER BY id"]);
  } catch {
    applied = "[]";
  }
  const names = [...applied.matchAll(/"name":\s*"([^"]+)"/g)].map((m) => m[1]);
  console.log(`Applied (${names.length}):`);
  for (const n of names) console.log(`  ${n}`);
  const pending = execFileSync("npx", ["wrangler", "d1", "migrations", "list", "DB", ...target], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  console.log(pending);
  if (!/No migrations to apply/i.test(pending)) process.exitCode = 3;
}

/**
 * Relays (issue 36): `follow` adds a row the Worker's cron looks up and follows within a minute (the command line
 * cannot fetch the relay's document; one the cron marked `failed` is tried again); `unfollow` marks it for the cron to send the Undo and remove it (a row never
 * followed goes at once); `list` shows them with their state, as the admin API does.
 */
function relay() {
  const [, action, url] = positionals;
  if (action === "list") {
    const out = d1([
      "--json",
      "--command",
      "SELECT url, coalesce(actor_uri, url) AS actor, kind, state, followed_back FROM relays ORDER BY created_at",
    ]);
    const rows = (JSON.parse(out) as { results: Record<string, unknown>[] }[])[0]?.results ?? [];
    if (rows.length === 0) console.log("No relays.");
    for (const r of rows)
      console.log(
        `${r.actor}  ${r.kind ?? "(not looked up yet)"}  ${r.state}${r.followed_back ? "  followed back" : ""}`,
      );
    return;
  }
  if ((action !== "follow" && action !== "unfollow") || !url)
    throw new Error("usage: relay follow <url> | unfollow <url> | list");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a URL: ${url}`);
  }
  if (!/^https?:$/.test(parsed.protocol) || parsed.username || parsed.password)
    throw new Error(`not an http(s) URL: ${url}`);
  parsed.hash = "";
  const t = Date.now();
  if (action === "follow") {
    runSql([
      `INSERT INTO relays (id, url, state, created_at, updated_at) VALUES (${q(newId(t))}, ${q(parsed.href)}, 'pending', ${t}, ${t}) ON CONFLICT (url) DO UPDATE SET state = 'pending', attempts = 0, updated_at = ${t} WHERE relays.kind IS NULL AND relays.state = 'failed'`,
    ]);
    console.log(
      `Relay ${parsed.href} added: the instance follows it at its next cron run (each minute; wrangler dev runs the cron only with --test-scheduled and /__scheduled).`,
    );
  } else {
    runSql([
      `DELETE FROM relays WHERE (url = ${q(parsed.href)} OR actor_uri = ${q(parsed.href)}) AND kind IS NULL`,
      `UPDATE relays SET state = 'removing', updated_at = ${t} WHERE url = ${q(parsed.href)} OR actor_uri = ${q(parsed.href)}`,
    ]);
    console.log(`Relay ${parsed.href}: unfollowed by the cron within a minute (an Undo is sent).`);
  }
}

const commands: Record<string, () => unknown> = {
  "create-admin": createAdmin,
  invite,
  mail,
  "make-admin": role("is_admin", true),
  "revoke-admin": role("is_admin", false),
  "make-moderator": role("is_moderator", true),
  "revoke-moderator": role("is_moderator", false),
  "reset-password": resetPassword,
  deactivate: activation(false),
  activate: activation(true),
  migrations,
  relay,
  "emoji-upload": () => uploadEmojiFolder(positionals[1], values.remote ?? false),
  "import-archive": () =>
    importArchiveFromCli({
      username: positionals[1],
      file: positionals[2],
      remote: values.remote ?? false,
      base,
      d1,
      runSql,
      q,
    }),
  frontend: () => {
    if (positionals[1] !== "install") throw new Error("usage: npm run admin -- frontend install <name> [options]");
    return installFrontendFromCli({
      name: positionals[2],
      ref: values.ref,
      file: values.file,
      buildUrl: values["build-url"],
      buildDir: values["build-dir"],
      primary: values.primary,
      admin: values.admin,
      target: values.remote ? ["--remote"] : ["--local", "--persist-to", process.env.STATE || ".wrangler/state"],
      runSql,
    });
  },
};
const command = commands[positionals[0] ?? ""];
if (!command) {
  console.error(`usage: npm run admin -- <${Object.keys(commands).join("|")}> [options]  (see scripts/admin.ts)`);
  process.exit(2);
}
Promise.resolve()
  .then(() => (positionals[0] === "migrations" ? undefined : migrateLocal()))
  .then(command)
  .catch((e) => {
    console.error(String(e instanceof Error ? e.message : e));
    process.exit(1);
  });
