/**
 * Installable frontends, as Pleroma 2.5 does them (issue 34): an admin installs a web app's build by name and ref
 * (from an uploaded zip or a `build_url` fetched through the SSRF guard); its files go to the private bucket under
 * `frontends/<name>/<ref>/<build>/`, and a `frontends` row names the build that serves that name and ref. The
 * run-time setting `:frontends` (services/instance-settings.ts) chooses the `primary` (served at `/`) and the `admin` one
 * (served at `/pleroma/admin/`); routes/frontend-serving.ts serves them.
 *
 * A new install writes a new build first and then swaps the row in one statement: a failed or half-written
 * install is never served, and the old build's files are deleted after (the effects door).
 */
import { sql } from "drizzle-orm";
import { bindingOf } from "../db/binding";
import { db, statement, type DB } from "../db/client";
import { frontends, type FrontendFile } from "../db/schema";
import type { Config, Env } from "../env";
import { randomToken } from "../lib/crypto";
import { ApiError, badRequest } from "../lib/errors";
import {
  FRONTEND_LIMITS,
  FRONTEND_SEGMENT,
  inflateFrontendFile,
  listFrontendArchive,
  type ArchiveFile,
} from "../lib/frontend-archive";
import { outboundFetch, OutboundRefused } from "../lib/outbound";
import { ZipRefused } from "../lib/zip";
import { readPrivateBody } from "./private-files";

export interface FrontendRef {
  name: string;
  ref: string;
}

interface Available {
  name: string;
  git: string;
  build_url: string;
  ref: string;
  build_dir?: string;
}

/** The frontends Pleroma's configuration knows (`:frontends, :available`), with their build artifacts' URLs. */
export const AVAILABLE: Record<string, Available> = {
  "pleroma-fe": {
    name: "pleroma-fe",
    git: "https://git.pleroma.social/pleroma/pleroma-fe",
    build_url: "https://git.pleroma.social/pleroma/pleroma-fe/-/jobs/artifacts/${ref}/download?job=build",
    ref: "develop",
  },
  "admin-fe": {
    name: "admin-fe",
    git: "https://git.pleroma.social/pleroma/admin-fe",
    build_url: "https://git.pleroma.social/pleroma/admin-fe/-/jobs/artifacts/${ref}/download?job=build",
    ref: "develop",
  },
};

const PARALLEL_WRITES = 6;

export const buildPrefix = (name: string, ref: string, build: string) => `frontends/${name}/${ref}/${build}/`;

export interface Installed {
  name: string;
  ref: string;
  build: string;
  installedAt: number;
  bytes: number;
  /** Path → file, for serving. */
  files: Map<string, FrontendFile>;
  /** The build this one replaced and when: its files are kept an hour (pages still loading them). */
  previousBuild: string | null;
  replacedAt: number | null;
}

// ---- what is installed, per isolate ----------------------------------------------------------------------

/** As settings are (services/instance-settings.ts): read again when older than this; the installing isolate at once. */
const TTL_MS = 30_000;
const cache = new WeakMap<object, { at: number; rows: Installed[] }>();

function toInstalled(r: typeof frontends.$inferSelect): Installed {
  return {
    name: r.name,
    ref: r.ref,
    build: r.build,
    installedAt: r.installedAt,
    bytes: r.bytes,
    files: new Map(r.files.map((f) => [f.path, f])),
    previousBuild: r.previousBuild,
    replacedAt: r.replacedAt,
  };
}

/**
 * Every installed frontend: one D1 read per isolate per TTL, or always with `fresh` (the admin list, the sweep:
 * another isolate or the command line may have installed one since).
 */
export async function installedFrontends(env: Pick<Env, "DB">, opts: { fresh?: boolean } = {}): Promise<Installed[]> {
  const binding = bindingOf(env.DB);
  const t = Date.now();
  const hit = cache.get(binding);
  if (!opts.fresh && hit && t - hit.at < TTL_MS) return hit.rows;
  const rows = (await db(env).select().from(frontends)).map(toInstalled);
  cache.set(binding, { at: t, rows });
  return rows;
}

/** The installed build the setting `which` chooses, or null (none chosen, or not installed). */
export async function chosenFrontend(
  env: Pick<Env, "DB">,
  cfg: Config,
  which: "primary" | "admin",
): Promise<Installed | null> {
  const want = cfg.frontends[which];
  if (!want) return null;
  const rows = await installedFrontends(env);
  return rows.find((r) => r.name === want.name && r.ref === want.ref) ?? null;
}

// ---- the admin API's list ---------------------------------------------------------------------------------

export interface FrontendListing {
  name: string;
  git: string | null;
  build_url: string | null;
  ref: string | null;
  installed: boolean;
  installed_refs: string[];
}

/** Pleroma's `GET /api/v1/pleroma/admin/frontends`: the known frontends, then any other installed one. */
export async function listFrontends(env: Pick<Env, "DB">): Promise<FrontendListing[]> {
  const rows = await installedFrontends(env, { fresh: true });
  const refsOf = (name: string) =>
    rows
      .filter((r) => r.name === name)
      .map((r) => r.ref)
      .sort();
  const names = [...new Set([...Object.keys(AVAILABLE), ...rows.map((r) => r.name).sort()])];
  return names.map((name) => {
    const a = AVAILABLE[name];
    const refs = refsOf(name);
    return {
      name,
      git: a?.git ?? null,
      build_url: a?.build_url ?? null,
      ref: a?.ref ?? null,
      installed: refs.length > 0,
      installed_refs: refs,
    };
  });
}

// ---- installing --------------------------------------------------------------------------------------------

export interface InstallRequest {
  name: string;
  ref?: string;
  /** An uploaded archive. */
  file?: Uint8Array;
  /** Where to download the archive (`${ref}` is replaced), else the known frontend's. */
  buildUrl?: string;
  buildDir?: string;
}

function checkSegment(what: string, v: string) {
  if (!FRONTEND_SEGMENT.test(v))
    throw badRequest(`${what} may only hold letters, digits, ".", "_" and "-" (at most 64), and not be "." or ".."`);
}

async function download(url: string, allowPrivate: boolean): Promise<Uint8Array> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest("build_url is not a URL");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw badRequest("build_url must be http(s)");
  try {
    const res = await outboundFetch(
      parsed.href,
      { headers: { Accept: "application/zip, */*" } },
      { allowPrivate, maxBytes: FRONTEND_LIMITS.maxArchiveBytes, timeoutMs: 60_000, maxRedirects: 5 },
    );
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new ApiError(502, `Downloading the build failed: ${parsed.host} answered ${res.status}`);
    }
    return new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    if (e instanceof ApiError) throw e;
    if (e instanceof OutboundRefused) throw new ApiError(422, `Downloading the build was refused: ${e.message}`);
    throw new ApiError(502, `Downloading the build failed: ${(e as Error).message}`);
  }
}

/**
 * Installs a build: archive read and checked (lib/frontend-archive.ts), files written to R2 under a new build,
 * then the row swapped (with `extra` statements, e.g. the moderation log, in the same batch). Errors: 400 for
 * bad names or a missing source, 422 for an archive refused, 502 when the download or an R2 write fails (the
 * route refuses an upload over the size limit with 413 before reading it).
 */
export async function installFrontend(
  env: Pick<Env, "DB" | "PRIVATE">,
  req: InstallRequest,
  opts: { allowPrivate: boolean; t: number; extra?: (d: DB, ref: string) => D1PreparedStatement[] },
): Promise<void> {
  checkSegment("name", req.name);
  const known = AVAILABLE[req.name];
  const ref = req.ref || known?.ref;
  if (!ref) throw badRequest("ref is required for a frontend Starling does not know");
  checkSegment("ref", ref);
  const buildDir = req.buildDir ?? known?.build_dir ?? "dist";
  if (buildDir.length > 200 || buildDir.split("/").some((s) => s === ".." || s === "."))
    throw badRequest("build_dir is not a folder inside the archive");

  let zip = req.file;
  if (!zip) {
    const url = req.buildUrl || known?.build_url;
    if (!url) throw badRequest("Give a file or a build_url: Starling does not know where this frontend's builds are");
    zip = await download(url.replaceAll("${ref}", encodeURIComponent(ref)), opts.allowPrivate);
  }

  let files: ArchiveFile[];
  try {
    files = listFrontendArchive(zip, buildDir);
  } catch (e) {
    if (e instanceof ZipRefused) throw new ApiError(422, e.message);
    throw new ApiError(422, "The file is not a zip archive that can be read");
  }

  const build = randomToken(9);
  const prefix = buildPrefix(req.name, ref, build);
  const stored: FrontendFile[] = [];
  try {
    // A few writes at a time (one file inflated each, so memory holds the archive and a few files).
    for (let i = 0; i < files.length; i += PARALLEL_WRITES) {
      await Promise.all(
        files.slice(i, i + PARALLEL_WRITES).map(async (f) => {
          let bytes: Uint8Array;
          try {
            bytes = inflateFrontendFile(zip, f);
          } catch (e) {
            throw new ApiError(422, e instanceof ZipRefused ? e.message : "The archive could not be read to the end");
          }
          await env.PRIVATE.put(prefix + f.path, bytes, { httpMetadata: { contentType: f.type } });
          stored.push({ path: f.path, type: f.type, size: bytes.byteLength });
        }),
      );
    }
  } catch (e) {
    // Nothing points at this build: the hourly sweep deletes what was written.
    if (e instanceof ApiError) throw e;
    throw new ApiError(502, "Storing the frontend's files failed: try again");
  }
  stored.sort((a, b) => a.path.localeCompare(b.path));

  const d = db(env);
  const bytes = stored.reduce((n, f) => n + f.size, 0);
  const t = opts.t;
  // The build replaced stays in `previous_build` for an hour: other isolates serve it for up to TTL_MS, and pages
  // loaded from it still fetch its hashed files. The sweep deletes it after (and any build older than that).
  await d.$client.batch([
    statement(
      d,
      sql`INSERT INTO frontends (name, ref, build, files, bytes, installed_at)
          VALUES (${req.name}, ${ref}, ${build}, ${JSON.stringify(stored)}, ${bytes}, ${t})
          ON CONFLICT (name, ref) DO UPDATE SET previous_build = frontends.build, replaced_at = ${t},
            build = excluded.build, files = excluded.files, bytes = excluded.bytes, installed_at = excluded.installed_at`,
    ),
    ...(opts.extra?.(d, ref) ?? []),
  ]);
  cache.delete(bindingOf(env.DB));
}

// ---- serving -----------------------------------------------------------------------------------------------

/** Index pages by build (a build never changes: the key is enough), at most a few per isolate. */
const indexes = new Map<string, string>();

/** An installed build's `index.html`, as text. */
export async function frontendIndex(env: Pick<Env, "MEDIA" | "PRIVATE">, fe: Installed): Promise<string | null> {
  const key = buildPrefix(fe.name, fe.ref, fe.build) + "index.html";
  const hit = indexes.get(key);
  if (hit !== undefined) return hit;
  const obj = await readPrivateBody(env, key);
  if (!obj) return null;
  const text = await obj.text();
  if (indexes.size > 8) indexes.clear();
  indexes.set(key, text);
  return text;
}

/** One file of an installed build (`path` without a leading slash), or null when the build has no such file. */
export async function frontendFile(
  env: Pick<Env, "MEDIA" | "PRIVATE">,
  fe: Installed,
  path: string,
): Promise<{ file: FrontendFile; body: R2ObjectBody } | null> {
  const file = fe.files.get(path);
  if (!file) return null;
  const body = await readPrivateBody(env, buildPrefix(fe.name, fe.ref, fe.build) + path);
  return body ? { file, body } : null;
}

// ---- files no build row points at ---------------------------------------------------------------------------

/** Files younger than this are left: an install may be writing them before its row exists. */
export const SWEEP_GRACE_MS = 60 * 60 * 1000;

/**
 * Deletes frontend files no `frontends` row names (a build replaced over an hour ago, or an install that failed
 * half-way), at most `maxPages` listings of R2 a run (5,000 files: several builds' worth). Returns how many.
 */
export async function sweepFrontendFiles(
  env: Pick<Env, "DB" | "PRIVATE">,
  t: number,
  maxPages = 5,
): Promise<{ deleted: number }> {
  const rows = await installedFrontends(env, { fresh: true });
  const live = new Set(rows.map((r) => buildPrefix(r.name, r.ref, r.build)));
  for (const r of rows)
    if (r.previousBuild && r.replacedAt !== null && t - r.replacedAt < SWEEP_GRACE_MS)
      live.add(buildPrefix(r.name, r.ref, r.previousBuild));
  let cursor: string | undefined;
  let deleted = 0;
  for (let page = 0; page < maxPages; page++) {
    const listing = await env.PRIVATE.list({ prefix: "frontends/", cursor, limit: 1000 });
    const orphans = listing.objects
      .filter((o) => t - o.uploaded.getTime() > SWEEP_GRACE_MS)
      .map((o) => o.key)
      .filter((key) => !live.has(key.split("/").slice(0, 4).join("/") + "/"));
    if (orphans.length) await env.PRIVATE.delete(orphans);
    deleted += orphans.length;
    if (!listing.truncated) break;
    cursor = listing.cursor;
  }
  return { deleted };
}
