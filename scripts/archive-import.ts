/**
 * `npm run admin -- import-archive <user> <zip> [--remote] [--domain …]` (issue 50): an account archive from
 * Mastodon or Pleroma, checked here as the API checks it (services/archive-import.ts `inspectArchive`), put into the
 * PRIVATE bucket with `wrangler r2 object put`, and queued with the API's own statement; the Worker's cron imports
 * it in steps (progress: the user's `/settings/import` page or `GET /api/v1/pleroma/archive_import`). For archives
 * larger than the API takes (ARCHIVE_UPLOAD_BYTES); wrangler uploads objects up to 300 MB this way.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { newId } from "../src/db/ids";
import { bytesReader } from "../src/lib/zip-ranges";
import { archiveKey, inspectArchive, queueStatement } from "../src/services/archive-import";
import { bucketOf } from "./deploy";

/** wrangler's own ceiling for `r2 object put`. */
const CLI_MAX_BYTES = 300 * 1024 * 1024;

export interface ImportArchiveCli {
  username: string | undefined;
  file: string | undefined;
  remote: boolean;
  base: () => string;
  d1: (args: string[]) => string;
  runSql: (statements: string[]) => void;
  q: (v: string | number | null) => string;
}

export async function importArchiveFromCli(o: ImportArchiveCli) {
  if (!o.username || !o.file) throw new Error("usage: npm run admin -- import-archive <user> <archive.zip> [--remote]");
  const size = statSync(o.file).size;
  if (size > CLI_MAX_BYTES) throw new Error(`${o.file} is larger than ${CLI_MAX_BYTES / 1024 / 1024} MB`);
  const bytes = new Uint8Array(readFileSync(o.file));
  const entries = await inspectArchive(bytesReader(bytes), bytes.byteLength).catch((e: Error) => {
    throw new Error(`${o.file} cannot be imported: ${e.message}`);
  });
  const found = JSON.parse(
    o.d1([
      "--json",
      "--command",
      `SELECT a.id FROM accounts a JOIN users u ON u.account_id = a.id WHERE a.acct_key = ${o.q(o.username.replace(/^@/, "").toLowerCase())} AND a.domain IS NULL`,
    ]),
  ) as { results: { id: string }[] }[];
  const accountId = found[0]?.results[0]?.id;
  if (!accountId) throw new Error(`No local user @${o.username}`);
  const base = o.base();
  const t = Date.now();
  const id = newId(t);
  const key = archiveKey(accountId, id);
  const bucket = bucketOf(readFileSync(new URL("../wrangler.toml", import.meta.url), "utf8"), "PRIVATE");
  const target = o.remote ? ["--remote"] : ["--local", "--persist-to", process.env.STATE || ".wrangler/state"];
  execFileSync(
    "npx",
    [
      "wrangler",
      "r2",
      "object",
      "put",
      `${bucket}/${key}`,
      "--file",
      o.file,
      "--content-type",
      "application/zip",
      ...target,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  // The API's statement, its parameters written in (wrangler's `--command` takes no bindings).
  const query = new SQLiteSyncDialect().sqlToQuery(queueStatement({ id, accountId, key, size, base, t }));
  let n = 0;
  o.runSql([query.sql.replace(/\?/g, () => o.q(query.params[n++] as string | number))]);
  const queued = JSON.parse(o.d1(["--json", "--command", `SELECT id FROM archive_imports WHERE id = ${o.q(id)}`])) as {
    results: unknown[];
  }[];
  if (!queued[0]?.results.length) {
    execFileSync("npx", ["wrangler", "r2", "object", "delete", `${bucket}/${key}`, ...target], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    throw new Error(`@${o.username} has an import going on already; try again when it is over.`);
  }
  console.log(
    `Queued ${o.file} (${entries.length} files) for @${o.username} as import ${id}: the cron imports it a step a minute.\n` +
      `Progress: ${base}/settings/import (signed in as @${o.username}), or GET /api/v1/pleroma/archive_import.`,
  );
}
