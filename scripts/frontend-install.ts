/**
 * `npm run admin -- frontend install <name> [--ref …] [--file build.zip | --build-url …] [--build-dir dist]
 * [--primary] [--admin] [--remote]`: Pleroma's `pleroma_ctl frontend install`, for a host without an admin token at
 * hand. The archive is read and checked by the same code as the admin API (src/lib/frontend-archive.ts), its files
 * go to R2 in one `wrangler r2 bulk put` under a new build, then the `frontends` row is swapped (and, with
 * `--primary`/`--admin`, the `:frontends` setting made to serve it). The replaced build's files are left to the
 * Worker's hourly sweep (services/frontends.ts `sweepFrontendFiles`), an hour after, as for the admin API.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { randomToken } from "../src/lib/crypto";
import { FRONTEND_SEGMENT, inflateFrontendFile, listFrontendArchive } from "../src/lib/frontend-archive";
import { AVAILABLE, buildPrefix } from "../src/services/frontends";
import { bucketOf } from "./deploy";

export interface FrontendCliOptions {
  name?: string;
  ref?: string;
  file?: string;
  buildUrl?: string;
  buildDir?: string;
  primary?: boolean;
  admin?: boolean;
  /** wrangler's storage flags: `--remote`, or `--local --persist-to …`. */
  target: string[];
  /** Runs SQL statements against D1 (scripts/admin.ts `runSql`). */
  runSql: (statements: string[]) => void;
  log?: (line: string) => void;
}

const q = (v: string | number) => (typeof v === "number" ? String(v) : `'${v.replace(/'/g, "''")}'`);

export async function installFrontendFromCli(o: FrontendCliOptions): Promise<void> {
  const log = o.log ?? console.log;
  const name = o.name;
  if (!name || !FRONTEND_SEGMENT.test(name))
    throw new Error("usage: npm run admin -- frontend install <name> [--ref …] [--file build.zip | --build-url …]");
  const known = AVAILABLE[name];
  const ref = o.ref || known?.ref;
  if (!ref || !FRONTEND_SEGMENT.test(ref)) throw new Error("--ref is required (letters, digits, '.', '_', '-')");

  let zip: Uint8Array;
  if (o.file) zip = new Uint8Array(readFileSync(o.file));
  else {
    const url = (o.buildUrl || known?.build_url)?.replaceAll("${ref}", encodeURIComponent(ref));
    if (!url) throw new Error("Give --file or --build-url: Starling does not know where this frontend's builds are");
    log(`Downloading ${url}`);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    zip = new Uint8Array(await res.arrayBuffer());
  }

  // Node reads larger archives than the Worker may hold in memory.
  const files = listFrontendArchive(zip, o.buildDir ?? known?.build_dir ?? "dist", 256_000_000);
  // The file list goes into one SQL statement: D1 takes at most 100 KB, so check before uploading anything.
  const listedLength = JSON.stringify(files.map((f) => ({ path: f.path, type: f.type, size: f.size }))).length;
  if (listedLength > 90_000)
    throw new Error(`The build lists too many files (${files.length}, ${listedLength} bytes of paths) for one install`);
  const build = randomToken(9);
  const prefix = buildPrefix(name, ref, build);
  const dir = mkdtempSync(join(tmpdir(), "starling-frontend-"));
  const pairs = files.map((f) => {
    const path = join(dir, "files", ...f.path.split("/"));
    mkdirSync(dirname(path), { recursive: true });
    const bytes = inflateFrontendFile(zip, f);
    writeFileSync(path, bytes);
    return { key: prefix + f.path, file: path, size: bytes.byteLength, type: f.type, relative: f.path };
  });
  writeFileSync(join(dir, "pairs.json"), JSON.stringify(pairs.map(({ key, file }) => ({ key, file }))));
  const toml = readFileSync(new URL("../wrangler.toml", import.meta.url), "utf8");
  // Frontend builds are private files: the Worker serves them, never the media domain.
  const bucket = bucketOf(toml, "PRIVATE");
  log(`Writing ${pairs.length} files to ${bucket}/${prefix}`);
  execFileSync(
    "npx",
    ["wrangler", "r2", "bulk", "put", bucket, "--filename", join(dir, "pairs.json"), ...o.target, "--force"],
    { stdio: ["ignore", "ignore", "inherit"] },
  );

  const t = Date.now();
  const listed = JSON.stringify(pairs.map((p) => ({ path: p.relative, type: p.type, size: p.size })));
  const bytes = pairs.reduce((n, p) => n + p.size, 0);
  const statements = [
    `INSERT INTO frontends (name, ref, build, files, bytes, installed_at) VALUES (${q(name)}, ${q(ref)}, ${q(build)}, ${q(listed)}, ${bytes}, ${t})
     ON CONFLICT (name, ref) DO UPDATE SET previous_build = frontends.build, replaced_at = ${t}, build = excluded.build,
       files = excluded.files, bytes = excluded.bytes, installed_at = excluded.installed_at`,
  ];
  for (const which of ["primary", "admin"] as const)
    if (o[which])
      statements.push(
        `INSERT INTO instance_settings (key, value, updated_at) VALUES ('frontends.${which}', ${q(JSON.stringify({ name, ref }))}, ${t})
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      );
  o.runSql(statements);
  log(`Installed ${name} (${ref}): ${pairs.length} files, ${bytes} bytes.`);
  if (o.primary) log(`Served at / to browsers (the :frontends :primary setting).`);
  if (o.admin) log(`Served at /pleroma/admin/ (the :frontends :admin setting).`);
  if (!o.primary && !o.admin)
    log(
      `Not served yet: add --primary or --admin, or set :frontends in the admin API (docs/admin.md). The running Worker sees it within 30 s.`,
    );
}
