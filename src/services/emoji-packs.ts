/**
 * Emoji packs (Pleroma 2.5's `Pleroma.Emoji.Pack`), with D1 as the truth and R2 holding the files: a pack is an
 * `emoji_packs` row, its emoji are this instance's `custom_emojis` rows with `category` = the pack's name and
 * `file` = `emoji/<pack>/<filename>`. Every change bumps the listings' version (`emoji_version`) in its own batch,
 * so edge-cached listings made before it are never served again.
 */
import { sql } from "drizzle-orm";
import { strToU8, zipSync } from "fflate";
import { statement, type DB } from "../db/client";
import { joined } from "../content/image-metadata";
import { ApiError, badRequest, conflict, unprocessable } from "../lib/errors";
import type { FormFile } from "../lib/form-file";
import { outboundFetch } from "../lib/outbound";
import { listZip, pastZipLimit, unzipBounded, ZIP_LIMITS } from "../lib/zip";
import { cleanedImage, sniffImage } from "./media";
import { deletePrivate } from "./private-files";
import type { Env } from "../env";

const PACKS_PREFIX = "emoji/";
/** Files copied or imported in one request: each is an R2 call, and a request may make about 1,000. */
const PACK_FILES_MAX = 500;
/** Largest archive fetched from another server or a fallback source. */
const ARCHIVE_MAX = 32_000_000;

export interface PackRow {
  name: string;
  license: string | null;
  homepage: string | null;
  description: string | null;
  fallback_src: string | null;
  fallback_src_sha256: string | null;
  share_files: number | null;
}
export interface PackFile {
  shortcode: string;
  file: string;
}
export type Metadata = {
  license?: string;
  homepage?: string;
  description?: string;
  "fallback-src"?: string;
  "fallback-src-sha256"?: string;
  "share-files"?: boolean;
};

const err500 = (message: string) => new ApiError(500, message);
export const packNotFound = (name: string) => new ApiError(404, `Pack ${name} does not exist`);
const fileApiPackNotFound = (name: string) => new ApiError(404, `pack "${name}" is not found`);

/** A pack name: trimmed, non-empty, one R2 path segment. */
export function packName(input: string): string {
  const name = input.trim();
  if (name === "") throw badRequest("pack name cannot be empty");
  // One path segment of a key: no separators, no dot segments, no control characters.
  if (name.length > 128 || /[/\\\p{Cc}]/u.test(name) || name === "." || name === "..")
    throw badRequest("Invalid pack name");
  return name;
}

/** Shortcodes this server writes and recognises in text (`:code:`): letters, digits, `_` and `-`. */
const SHORTCODE = /^[A-Za-z0-9_-]{1,100}$/;

/** A file name inside a pack: relative, sub-folders allowed, no dot segments. */
function validFilename(name: string): boolean {
  if (name.length === 0 || name.length > 255 || /[\\\p{Cc}]/u.test(name)) return false;
  return name.split("/").every((seg) => seg !== "" && seg !== "." && seg !== "..") && name !== "pack.json";
}

const packKey = (pack: string, filename: string) => `${PACKS_PREFIX}${pack}/${filename}`;
const filenameOf = (pack: string, file: string) =>
  file.startsWith(packKey(pack, "")) ? file.slice(packKey(pack, "").length) : file;
const archiveKey = (pack: string) => `emoji-archives/${pack}.zip`;

/** Adds one to the listings' version: a statement for the change's own batch. */
const bumpVersion = (d: DB) =>
  statement(
    d,
    sql`UPDATE instance_keys SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE name = 'emoji_version'`,
  );
const touch = (d: DB, name: string, t: number) =>
  statement(d, sql`UPDATE emoji_packs SET updated_at = ${t} WHERE name = ${name}`);

const PACK_COLUMNS = sql`name, license, homepage, description, fallback_src, fallback_src_sha256, share_files`;

// ---- reading ----

function metadataOf(p: PackRow): Metadata {
  const m: Metadata = {};
  if (p.license !== null) m.license = p.license;
  if (p.homepage !== null) m.homepage = p.homepage;
  if (p.description !== null) m.description = p.description;
  if (p.fallback_src !== null) m["fallback-src"] = p.fallback_src;
  if (p.fallback_src_sha256 !== null) m["fallback-src-sha256"] = p.fallback_src_sha256;
  if (p.share_files !== null) m["share-files"] = Boolean(p.share_files);
  return m;
}

const filesMap = (pack: string, files: PackFile[]) =>
  Object.fromEntries(files.map((f) => [f.shortcode, filenameOf(pack, f.file)]));

/** One pack with a page of its files (shortcode order) and its count: one round trip. */
export async function readPack(d: DB, name: string, page = 1, pageSize = 100_000) {
  const offset = Math.max(0, page - 1) * pageSize;
  const [packs, count, files] = await d.$client.batch([
    statement(d, sql`SELECT ${PACK_COLUMNS} FROM emoji_packs WHERE name = ${name}`),
    statement(d, sql`SELECT count(*) AS n FROM custom_emojis WHERE domain IS NULL AND category = ${name}`),
    statement(
      d,
      sql`SELECT shortcode, file FROM custom_emojis WHERE domain IS NULL AND category = ${name} ORDER BY shortcode LIMIT ${pageSize} OFFSET ${offset}`,
    ),
  ]);
  const pack = (packs.results as PackRow[])[0];
  if (!pack) return null;
  return { pack, count: (count.results[0] as { n: number }).n, files: files.results as PackFile[] };
}

/** A page of packs (name order) with all their files, and the number of packs: one round trip. */
export async function listPacks(d: DB, page: number, pageSize: number) {
  const offset = Math.max(0, page - 1) * pageSize;
  const [count, packs, files] = await d.$client.batch([
    statement(d, sql`SELECT count(*) AS n FROM emoji_packs`),
    statement(d, sql`SELECT ${PACK_COLUMNS} FROM emoji_packs ORDER BY name LIMIT ${pageSize} OFFSET ${offset}`),
    statement(
      d,
      sql`SELECT category, shortcode, file FROM custom_emojis WHERE domain IS NULL AND category IN (SELECT name FROM emoji_packs ORDER BY name LIMIT ${pageSize} OFFSET ${offset}) ORDER BY category, shortcode`,
    ),
  ]);
  const byPack = new Map<string, PackFile[]>();
  for (const f of files.results as (PackFile & { category: string })[])
    byPack.set(f.category, [...(byPack.get(f.category) ?? []), f]);
  return {
    count: (count.results[0] as { n: number }).n,
    packs: (packs.results as PackRow[]).map((pack) => ({ pack, files: byPack.get(pack.name) ?? [] })),
  };
}

// ---- archives ----

/**
 * The pack's zip (`pack.json` + every file), built deterministically (fixed times) so its SHA-256 is stable, or
 * null when a file is missing from R2. Pleroma's archive: Pleroma instances download it the same way.
 */
async function buildArchive(bucket: R2Bucket, pack: PackRow, files: PackFile[]): Promise<Uint8Array | null> {
  const entries: Record<string, [Uint8Array, { mtime: Date }]> = {};
  const mtime = new Date("2000-01-01T00:00:00Z");
  const manifest = { files: filesMap(pack.name, files), pack: metadataOf(pack), files_count: files.length };
  entries["pack.json"] = [strToU8(JSON.stringify(manifest, null, 2)), { mtime }];
  for (const f of files) {
    const object = await bucket.get(f.file);
    if (!object) return null;
    entries[filenameOf(pack.name, f.file)] = [new Uint8Array(await object.arrayBuffer()), { mtime }];
  }
  return zipSync(entries, { level: 0 });
}

const sha256Hex = async (bytes: Uint8Array) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .toUpperCase();

/**
 * `can-download` and `download-sha256` of a pack: only a pack with `share-files` whose files are all in R2. The
 * archive is kept in the private bucket (served only by the archive route, to packs that are shared) with its
 * pack's and its files' state, so it is built once per change.
 */
export async function shareInfo(
  buckets: Pick<Env, "MEDIA" | "PRIVATE">,
  pack: PackRow,
  files: PackFile[],
): Promise<{ archive: Uint8Array; sha: string } | null> {
  if (!pack.share_files) return null;
  const stamp = await sha256Hex(strToU8(JSON.stringify([metadataOf(pack), files])));
  const key = archiveKey(pack.name);
  // A cache: one left in MEDIA from before the split is not looked for (the cron moves it), only rebuilt.
  const kept = await buckets.PRIVATE.get(key);
  if (kept && kept.customMetadata?.stamp === stamp) {
    const archive = new Uint8Array(await kept.arrayBuffer());
    return { archive, sha: kept.customMetadata.sha };
  }
  const archive = await buildArchive(buckets.MEDIA, pack, files);
  if (!archive) return null;
  const sha = await sha256Hex(archive);
  await buckets.PRIVATE.put(key, archive, {
    httpMetadata: { contentType: "application/zip" },
    customMetadata: { stamp, sha },
  });
  return { archive, sha };
}

/** Pleroma's pack entity: `{files, files_count, pack}` with `can-download` (and `download-sha256` when it can). */
export async function renderPack(
  buckets: Pick<Env, "MEDIA" | "PRIVATE">,
  p: { pack: PackRow; files: PackFile[]; count: number },
  allFiles?: PackFile[],
) {
  const share = await shareInfo(buckets, p.pack, allFiles ?? p.files);
  const info: Record<string, unknown> = { ...metadataOf(p.pack), "can-download": Boolean(share) };
  if (share) info["download-sha256"] = share.sha;
  return { files: filesMap(p.pack.name, p.files), files_count: p.count, pack: info };
}

// ---- writing packs ----

export async function createPack(d: DB, name: string, t: number) {
  const [inserted] = await d.$client.batch([
    statement(
      d,
      sql`INSERT INTO emoji_packs (name, created_at, updated_at) VALUES (${name}, ${t}, ${t}) ON CONFLICT (name) DO NOTHING RETURNING name`,
    ),
    bumpVersion(d),
  ]);
  if (inserted.results.length === 0) throw conflict(`A pack named "${name}" already exists`);
}

/** Deletes the pack's rows in one batch, then its files and archive in R2. */
export async function deletePack(d: DB, buckets: Pick<Env, "MEDIA" | "PRIVATE">, name: string) {
  const bucket = buckets.MEDIA;
  // Only a pack's own emoji go: rows whose category names no pack are not a pack's.
  const [, deleted] = await d.$client.batch([
    statement(
      d,
      sql`DELETE FROM custom_emojis WHERE domain IS NULL AND category = ${name} AND EXISTS (SELECT 1 FROM emoji_packs WHERE name = ${name})`,
    ),
    statement(d, sql`DELETE FROM emoji_packs WHERE name = ${name} RETURNING name`),
    bumpVersion(d),
  ]);
  if (deleted.results.length === 0) throw packNotFound(name);
  try {
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix: packKey(name, ""), cursor });
      if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    await deletePrivate(buckets, [archiveKey(name)]);
  } catch (e) {
    throw err500(`Couldn't delete the \`${name}\` pack`);
  }
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/**
 * Replaces the metadata. A new `fallback-src` must be a reachable zip holding every file of the pack (400
 * otherwise); its SHA-256 is computed and stored, as Pleroma does.
 */
export async function updateMetadata(
  d: DB,
  bucket: R2Bucket,
  name: string,
  m: Metadata,
  allowPrivate: boolean,
  t: number,
): Promise<Metadata> {
  const current = await readPack(d, name);
  if (!current) throw packNotFound(name);
  const next: Metadata = { ...m };
  if (next["fallback-src-sha256"] !== undefined && !HEX64.test(next["fallback-src-sha256"]))
    throw badRequest("fallback-src-sha256 must be the SHA-256 of the archive, in hexadecimal");
  if (next["fallback-src-sha256"]) next["fallback-src-sha256"] = next["fallback-src-sha256"].toUpperCase();
  if (next["fallback-src"] !== undefined && next["fallback-src"] !== current.pack.fallback_src) {
    const zip = await fetchBytes(next["fallback-src"], allowPrivate, ARCHIVE_MAX).catch(() => {
      throw badRequest("The fallback archive could not be fetched");
    });
    let names: Set<string>;
    try {
      names = zipNames(zip);
    } catch (e) {
      if (pastZipLimit(e)) throw new ApiError(413, e.message);
      throw badRequest("The fallback archive does not have all files specified in pack.json");
    }
    if (!current.files.every((f) => names.has(filenameOf(name, f.file))))
      throw badRequest("The fallback archive does not have all files specified in pack.json");
    next["fallback-src-sha256"] = await sha256Hex(zip);
  }
  await d.$client.batch([
    statement(
      d,
      sql`UPDATE emoji_packs SET license = ${next.license ?? null}, homepage = ${next.homepage ?? null}, description = ${next.description ?? null},
          fallback_src = ${next["fallback-src"] ?? null}, fallback_src_sha256 = ${next["fallback-src-sha256"] ?? null},
          share_files = ${next["share-files"] === undefined ? null : next["share-files"] ? 1 : 0}, updated_at = ${t} WHERE name = ${name}`,
    ),
    bumpVersion(d),
  ]);
  return next;
}

/** The names in an archive (nothing inflated; its entries still counted against the limit). */
function zipNames(zip: Uint8Array): Set<string> {
  return new Set(listZip(zip, ZIP_LIMITS.maxEntries).map((e) => e.name));
}

/** An archive's wanted entries within the limits: past one, 413 saying which; unreadable, `unreadable`. */
function unzipOrRefuse(
  zip: Uint8Array,
  want: (name: string) => boolean,
  maxFileBytes: number,
  unreadable: ApiError,
): Record<string, Uint8Array> {
  try {
    return unzipBounded(zip, want, { ...ZIP_LIMITS, maxFileBytes });
  } catch (e) {
    if (pastZipLimit(e)) throw new ApiError(413, e.message);
    throw unreadable;
  }
}

// ---- files ----

interface Upload {
  bytes: Uint8Array;
  name: string;
}

/** The bytes of an uploaded file, or of a remote one fetched through the SSRF guard. */
async function uploadOf(file: FormFile | string, allowPrivate: boolean, limit: number): Promise<Upload> {
  if (typeof file !== "string") {
    if (file.size > limit) throw new ApiError(413, "File is too large");
    return { bytes: file.bytes(), name: file.name };
  }
  let url: URL;
  try {
    url = new URL(file);
  } catch {
    throw badRequest("file must be an upload or a URL");
  }
  const bytes = await fetchBytes(url.href, allowPrivate, limit).catch((e) => {
    if (e instanceof ApiError) throw e;
    throw badRequest(`Could not fetch ${url.href}`);
  });
  return { bytes, name: decodeURIComponent(url.pathname.split("/").pop() ?? "") };
}

const baseName = (filename: string) => {
  const last = filename.split("/").pop() ?? filename;
  const dot = last.lastIndexOf(".");
  return dot > 0 ? last.slice(0, dot) : last;
};

/** Files in the pack: shortcode -> filename. */
async function packFiles(d: DB, name: string) {
  const p = await readPack(d, name);
  if (!p) throw fileApiPackNotFound(name);
  return p;
}

/** An emoji's image type: HEIC, which few browsers show and emoji are stored as they come, is none. */
const emojiType = (bytes: Uint8Array) => {
  const type = sniffImage(bytes.subarray(0, 256));
  return type && type.mime !== "image/heic" ? type : null;
};

async function putEmojiFile(bucket: R2Bucket, key: string, bytes: Uint8Array) {
  const type = emojiType(bytes);
  if (!type) throw new ApiError(415, "Unsupported media type: only images are accepted");
  // Without the metadata a photo brings (services/media.ts), as every stored image.
  const clean = joined(await cleanedImage(bytes, type.mime));
  await bucket.put(key, clean, { httpMetadata: { contentType: type.mime, cacheControl: "public, max-age=31536000" } });
}

/**
 * Adds a file (or every image of a zip) to a pack. The shortcode must be unused by every emoji of this
 * instance (409); it defaults to the file name without extension, the file name to the upload's name.
 */
export async function addFile(
  d: DB,
  bucket: R2Bucket,
  name: string,
  input: { file: FormFile | string; shortcode?: string; filename?: string },
  opts: { allowPrivate: boolean; limit: number; t: number },
): Promise<Record<string, string>> {
  const current = await packFiles(d, name);
  const upload = await uploadOf(input.file, opts.allowPrivate, opts.limit);
  const isZip =
    upload.bytes[0] === 0x50 && upload.bytes[1] === 0x4b && upload.bytes[2] === 0x03 && upload.bytes[3] === 0x04;
  if (isZip && typeof input.file !== "string") return addZip(d, bucket, name, upload.bytes, opts.limit, opts.t);
  const filename = (input.filename ?? upload.name).trim();
  const shortcode = (input.shortcode ?? baseName(filename)).trim();
  if (!shortcode || !filename) throw unprocessable("pack name, shortcode or filename cannot be empty");
  if (!SHORTCODE.test(shortcode)) throw unprocessable(`Invalid shortcode "${shortcode}": use letters, digits, _ and -`);
  if (!validFilename(filename)) throw unprocessable(`Invalid filename "${filename}"`);
  const key = packKey(name, filename);
  const [taken, keyUsed] = await d.$client.batch([
    statement(d, sql`SELECT 1 FROM custom_emojis WHERE domain IS NULL AND shortcode = ${shortcode}`),
    statement(d, sql`SELECT 1 FROM custom_emojis WHERE domain IS NULL AND file = ${key}`),
  ]);
  if (taken.results.length) throw conflict(`An emoji with the "${shortcode}" shortcode already exists`);
  // Never overwrite the file of another emoji of the pack.
  if (keyUsed.results.length) throw conflict(`A file named "${filename}" already exists in the pack`);
  await putEmojiFile(bucket, key, upload.bytes);
  const [inserted] = await d.$client.batch([
    statement(
      d,
      sql`INSERT INTO custom_emojis (shortcode, domain, file, category, visible_in_picker, created_at) VALUES (${shortcode}, NULL, ${key}, ${name}, 1, ${opts.t}) ON CONFLICT DO NOTHING RETURNING shortcode`,
    ),
    touch(d, name, opts.t),
    bumpVersion(d),
  ]);
  if (inserted.results.length === 0) {
    // A racing request took the shortcode between the check and the insert.
    await bucket.delete(key);
    throw conflict(`An emoji with the "${shortcode}" shortcode already exists`);
  }
  return { ...filesMap(name, current.files), [shortcode]: filename };
}

/** Pleroma's zip upload: every image file of the archive, shortcode from its name, existing shortcodes skipped. */
async function addZip(d: DB, bucket: R2Bucket, name: string, zip: Uint8Array, limit: number, t: number) {
  const want = (f: string) => !f.endsWith("/") && validFilename(f) && SHORTCODE.test(baseName(f));
  const entries = unzipOrRefuse(zip, want, limit, unprocessable("The archive could not be read"));
  const files = Object.entries(entries)
    .slice(0, PACK_FILES_MAX)
    .filter(([, bytes]) => emojiType(bytes));
  const rows = files.map(([filename]) => ({ shortcode: baseName(filename), file: packKey(name, filename) }));
  const existing = await d.$client
    .prepare(
      "SELECT shortcode FROM custom_emojis WHERE domain IS NULL AND shortcode IN (SELECT value FROM json_each(?))",
    )
    .bind(JSON.stringify(rows.map((r) => r.shortcode)))
    .all<{ shortcode: string }>();
  const skip = new Set(existing.results.map((r) => r.shortcode));
  const fresh = rows.filter((r) => !skip.has(r.shortcode));
  for (const [filename, bytes] of files)
    if (!skip.has(baseName(filename))) await putEmojiFile(bucket, packKey(name, filename), bytes);
  await d.$client.batch([insertRows(d, name, fresh, t), touch(d, name, t), bumpVersion(d)]);
  return filesMap(name, (await packFiles(d, name)).files);
}

/** Emoji rows of a pack from one JSON parameter; shortcodes already used are left alone. */
const insertRows = (d: DB, pack: string, rows: PackFile[], t: number) =>
  statement(
    d,
    sql`INSERT INTO custom_emojis (shortcode, domain, file, category, visible_in_picker, created_at)
        SELECT json_extract(value, '$.shortcode'), NULL, json_extract(value, '$.file'), ${pack}, 1, ${t} FROM json_each(${JSON.stringify(rows)}) WHERE true
        ON CONFLICT DO NOTHING`,
  );

/** Renames an emoji and/or its file; `force` replaces an emoji that already has the new shortcode. */
export async function updateFile(
  d: DB,
  bucket: R2Bucket,
  name: string,
  p: { shortcode: string; new_shortcode: string; new_filename: string; force?: boolean },
  t: number,
): Promise<Record<string, string>> {
  const current = await packFiles(d, name);
  const newShortcode = p.new_shortcode.trim();
  const newFilename = p.new_filename.trim();
  if (!newShortcode || !newFilename) throw unprocessable("new_shortcode or new_filename cannot be empty");
  const emoji = current.files.find((f) => f.shortcode === p.shortcode);
  if (!emoji) throw badRequest(`Emoji "${p.shortcode}" does not exist`);
  if (!SHORTCODE.test(newShortcode))
    throw unprocessable(`Invalid shortcode "${newShortcode}": use letters, digits, _ and -`);
  if (!validFilename(newFilename)) throw unprocessable(`Invalid filename "${newFilename}"`);
  const newKey = packKey(name, newFilename);
  const [other, keyUsed] = await d.$client.batch([
    statement(
      d,
      sql`SELECT shortcode, file, category FROM custom_emojis WHERE domain IS NULL AND shortcode = ${newShortcode} AND shortcode <> ${p.shortcode}`,
    ),
    statement(
      d,
      sql`SELECT 1 FROM custom_emojis WHERE domain IS NULL AND file = ${newKey} AND shortcode NOT IN (${p.shortcode}, ${newShortcode})`,
    ),
  ]);
  const replaced = other.results[0] as { shortcode: string; file: string; category: string | null } | undefined;
  if (replaced && !p.force)
    throw conflict(`New shortcode "${newShortcode}" is already used. If you want to override emoji use 'force' option`);
  if (keyUsed.results.length) throw conflict(`A file named "${newFilename}" already exists in the pack`);
  if (newKey !== emoji.file) {
    const object = await bucket.get(emoji.file);
    if (!object) throw badRequest(`Emoji "${p.shortcode}" does not exist`);
    await bucket.put(newKey, await object.arrayBuffer(), { httpMetadata: object.httpMetadata });
  }
  await d.$client.batch([
    statement(
      d,
      sql`DELETE FROM custom_emojis WHERE domain IS NULL AND shortcode = ${newShortcode} AND shortcode <> ${p.shortcode}`,
    ),
    statement(
      d,
      sql`UPDATE custom_emojis SET shortcode = ${newShortcode}, file = ${newKey} WHERE domain IS NULL AND shortcode = ${p.shortcode}`,
    ),
    touch(d, name, t),
    bumpVersion(d),
  ]);
  const stale = [
    ...(newKey !== emoji.file ? [emoji.file] : []),
    ...(replaced && replaced.file !== newKey && replaced.category ? [replaced.file] : []),
  ];
  if (stale.length) await bucket.delete(stale);
  const files = filesMap(name, current.files);
  delete files[p.shortcode];
  delete files[newShortcode];
  return { ...files, [newShortcode]: newFilename };
}

export async function deleteFile(
  d: DB,
  bucket: R2Bucket,
  name: string,
  shortcode: string,
  t: number,
): Promise<Record<string, string>> {
  if (!shortcode.trim()) throw unprocessable("pack name or shortcode cannot be empty");
  const current = await packFiles(d, name);
  const emoji = current.files.find((f) => f.shortcode === shortcode);
  if (!emoji) throw badRequest(`Emoji "${shortcode}" does not exist`);
  await d.$client.batch([
    statement(
      d,
      sql`DELETE FROM custom_emojis WHERE domain IS NULL AND category = ${name} AND shortcode = ${shortcode}`,
    ),
    touch(d, name, t),
    bumpVersion(d),
  ]);
  await bucket.delete(emoji.file);
  const files = filesMap(name, current.files);
  delete files[shortcode];
  return files;
}

// ---- import from R2 ----

const IMAGE_EXT = /\.(png|gif|jpe?g|webp|avif)$/i;

/** `name, file[, tags]` lines of an emoji.txt (Pleroma's pack manager format). */
function emojiTxt(text: string, pack: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const [code, file] = line.trim().split(/,\s*/);
    if (!code || !file) continue;
    const marker = `/emoji/${pack}/`;
    out[code] = file.includes(marker) ? file.slice(file.indexOf(marker) + marker.length) : file.replace(/^\//, "");
  }
  return out;
}

/**
 * Imports every pack found under `emoji/` in R2 (docs/emoji.md): `emoji/<pack>/pack.json` (Pleroma's manifest),
 * else `emoji.txt`, else every image file with its name as shortcode. Idempotent: metadata from a manifest is
 * written again, emoji already present (or whose shortcode another emoji has) are left alone, files listed but
 * absent are skipped. Answers the names of the packs imported.
 */
export async function importPacks(d: DB, bucket: R2Bucket, t: number): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: PACKS_PREFIX, delimiter: "/", cursor });
    for (const p of page.delimitedPrefixes) names.push(p.slice(PACKS_PREFIX.length, -1));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  const imported: string[] = [];
  for (const name of names.sort()) {
    try {
      packName(name);
    } catch {
      continue;
    }
    const keys = new Set<string>();
    let c: string | undefined;
    do {
      const page = await bucket.list({ prefix: packKey(name, ""), cursor: c });
      for (const o of page.objects) keys.add(o.key.slice(packKey(name, "").length));
      c = page.truncated ? page.cursor : undefined;
    } while (c);
    let files: Record<string, string> = {};
    let meta: Metadata | null = null;
    const manifest = keys.has("pack.json") ? await bucket.get(packKey(name, "pack.json")) : null;
    if (manifest) {
      try {
        const json = (await manifest.json()) as { files?: Record<string, string>; pack?: Record<string, unknown> };
        files = json.files && typeof json.files === "object" ? json.files : {};
        meta = cleanMetadata(json.pack ?? {});
      } catch {
        continue;
      }
    } else if (keys.has("emoji.txt")) {
      files = emojiTxt((await (await bucket.get(packKey(name, "emoji.txt")))?.text()) ?? "", name);
    } else {
      for (const k of keys) if (IMAGE_EXT.test(k)) files[baseName(k)] = k;
    }
    const rows = Object.entries(files)
      .filter(
        ([code, file]) => typeof file === "string" && SHORTCODE.test(code) && validFilename(file) && keys.has(file),
      )
      .slice(0, PACK_FILES_MAX * 10)
      .map(([shortcode, file]) => ({ shortcode, file: packKey(name, file) }));
    await d.$client.batch([
      meta
        ? statement(
            d,
            sql`INSERT INTO emoji_packs (name, license, homepage, description, fallback_src, fallback_src_sha256, share_files, created_at, updated_at)
                VALUES (${name}, ${meta.license ?? null}, ${meta.homepage ?? null}, ${meta.description ?? null}, ${meta["fallback-src"] ?? null},
                        ${meta["fallback-src-sha256"] ?? null}, ${meta["share-files"] === undefined ? null : meta["share-files"] ? 1 : 0}, ${t}, ${t})
                ON CONFLICT (name) DO UPDATE SET license = excluded.license, homepage = excluded.homepage, description = excluded.description,
                  fallback_src = excluded.fallback_src, fallback_src_sha256 = excluded.fallback_src_sha256, share_files = excluded.share_files`,
          )
        : statement(
            d,
            sql`INSERT INTO emoji_packs (name, created_at, updated_at) VALUES (${name}, ${t}, ${t}) ON CONFLICT (name) DO NOTHING`,
          ),
      insertRows(d, name, rows, t),
      bumpVersion(d),
    ]);
    imported.push(name);
  }
  return imported;
}

/** The metadata keys Starling keeps, from a manifest or a request, with their types checked. */
export function cleanMetadata(m: Record<string, unknown>): Metadata {
  const out: Metadata = {};
  for (const k of ["license", "homepage", "description", "fallback-src", "fallback-src-sha256"] as const)
    if (typeof m[k] === "string") out[k] = m[k] as string;
  if (typeof m["share-files"] === "boolean") out["share-files"] = m["share-files"];
  return out;
}

// ---- other servers ----

async function fetchBytes(url: string, allowPrivate: boolean, maxBytes: number): Promise<Uint8Array> {
  const res = await outboundFetch(url, { headers: { Accept: "*/*" } }, { allowPrivate, maxBytes, timeoutMs: 20_000 });
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`${url} answered ${res.status}`);
  }
  return new Uint8Array(await res.arrayBuffer());
}

async function fetchJson(url: string, allowPrivate: boolean): Promise<any> {
  const res = await outboundFetch(
    url,
    { headers: { Accept: "application/json" } },
    { allowPrivate, maxBytes: 5_000_000 },
  );
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`${url} answered ${res.status}`);
  }
  return res.json();
}

const NOT_SHAREABLE = "The requested instance does not support sharing emoji packs";

/** The instance's base URL when its nodeinfo lists `shareable_emoji_packs` (Pleroma's check), else 500. */
async function shareableBase(input: string, allowPrivate: boolean): Promise<URL> {
  let base: URL;
  try {
    base = new URL(input.trim());
  } catch {
    throw badRequest("url must be the address of an instance");
  }
  try {
    const links = (await fetchJson(new URL("/.well-known/nodeinfo", base).href, allowPrivate))?.links;
    const href = Array.isArray(links) ? links[links.length - 1]?.href : undefined;
    const nodeinfo = typeof href === "string" ? await fetchJson(new URL(href, base).href, allowPrivate) : null;
    const features = nodeinfo?.metadata?.features;
    if (Array.isArray(features) && features.includes("shareable_emoji_packs")) return base;
  } catch {
    // unreachable, refused by the guard, or not JSON: the same answer as a server without the feature
  }
  throw err500(NOT_SHAREABLE);
}

/** Another instance's packs, as its own list answers them. */
export async function remotePacks(url: string, page: number, pageSize: number, allowPrivate: boolean) {
  const base = await shareableBase(url, allowPrivate);
  try {
    return await fetchJson(
      new URL(`/api/v1/pleroma/emoji/packs?page=${page}&page_size=${pageSize}`, base).href,
      allowPrivate,
    );
  } catch (e) {
    throw err500(`Could not list the packs of ${base.host}`);
  }
}

/**
 * Copies a pack of another instance (saved `as` another name when given): its metadata, its archive (its own
 * when shared, else its `fallback-src`) checked against the announced SHA-256, the files into R2 and the rows in
 * one batch. Failures answer 500 with Pleroma's messages.
 */
export async function downloadPack(
  d: DB,
  bucket: R2Bucket,
  p: { url: string; name: string; as?: string },
  allowPrivate: boolean,
  limit: number,
  t: number,
) {
  const local = packName(p.as ?? p.name);
  const base = await shareableBase(p.url, allowPrivate);
  const packUrl = (size: number) =>
    new URL(`/api/v1/pleroma/emoji/pack?name=${encodeURIComponent(p.name)}&page_size=${size}`, base).href;
  let remote: { files?: Record<string, string>; files_count?: number; pack?: Record<string, unknown> };
  try {
    const head = await fetchJson(packUrl(0), allowPrivate);
    remote = await fetchJson(packUrl(Math.min(Number(head?.files_count) || 0, PACK_FILES_MAX)), allowPrivate);
  } catch {
    throw err500(`Pack ${p.name} could not be read from ${base.host}`);
  }
  const info = remote.pack ?? {};
  let source: { url: string; sha: string };
  if (info["share-files"] === true && info["can-download"] === true && typeof info["download-sha256"] === "string")
    source = {
      url: new URL(`/api/v1/pleroma/emoji/packs/archive?name=${encodeURIComponent(p.name)}`, base).href,
      sha: info["download-sha256"],
    };
  else if (typeof info["fallback-src"] === "string" && typeof info["fallback-src-sha256"] === "string")
    source = { url: info["fallback-src"], sha: info["fallback-src-sha256"] };
  else throw err500("The pack was not set as shared and there is no fallback src to download from");
  const archive = await fetchBytes(source.url, allowPrivate, ARCHIVE_MAX).catch(() => {
    throw err500(`The archive of pack ${p.name} could not be fetched`);
  });
  if ((await sha256Hex(archive)) !== source.sha.toUpperCase())
    throw err500("SHA256 for the pack doesn't match the one sent by the server");
  const wanted = Object.entries(remote.files ?? {}).filter(
    ([code, file]) => typeof file === "string" && SHORTCODE.test(code) && validFilename(file),
  );
  const names = new Set(wanted.map(([, f]) => f));
  const entries = unzipOrRefuse(
    archive,
    (f) => names.has(f),
    limit,
    err500(`The archive of pack ${p.name} could not be read`),
  );
  const rows = wanted
    .filter(([, f]) => entries[f] && emojiType(entries[f]))
    .map(([shortcode, f]) => ({ shortcode, file: packKey(local, f) }));
  const meta = cleanMetadata(info);
  if ((await d.$client.prepare("SELECT 1 FROM emoji_packs WHERE name = ?").bind(local).first()) !== null)
    throw conflict(`A pack named "${local}" already exists`);
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.file)) continue;
    seen.add(r.file);
    await putEmojiFile(bucket, r.file, entries[filenameOf(local, r.file)]);
  }
  // The pack and its emoji in one batch, once the files are in R2.
  await d.$client.batch([
    statement(
      d,
      sql`INSERT INTO emoji_packs (name, license, homepage, description, fallback_src, fallback_src_sha256, share_files, created_at, updated_at)
          VALUES (${local}, ${meta.license ?? null}, ${meta.homepage ?? null}, ${meta.description ?? null}, ${meta["fallback-src"] ?? null},
                  ${meta["fallback-src-sha256"] ?? null}, ${meta["share-files"] === undefined ? null : meta["share-files"] ? 1 : 0}, ${t}, ${t})
          ON CONFLICT (name) DO NOTHING`,
    ),
    insertRows(d, local, rows, t),
    bumpVersion(d),
  ]);
}
