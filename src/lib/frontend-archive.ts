/**
 * Reading a frontend's build archive (issue 34): Pleroma's artifacts are zips with the site under a folder
 * (`build_dir`, `dist` by default). What a hostile or broken archive could do is bounded here, before anything
 * is stored: the number of entries and each file's and the total uncompressed size (lib/zip.ts checks them
 * before inflating), paths that would climb out of the build (`..`, absolute, backslashes, control characters),
 * and an archive without an `index.html`. Files are inflated one at a time, so memory holds the archive and one
 * file, never the whole site. Shared by the Worker's install and the command line (scripts/admin.ts).
 */
import { listZip, zipEntryBytes, ZipRefused, type ZipEntry, type ZipLimits } from "./zip";

export const FRONTEND_LIMITS: ZipLimits & { maxArchiveBytes: number; maxFiles: number } = {
  // In the Worker (128 MB): the request body, its parsed File, the bytes read from it, and files being inflated.
  // The command line reads larger archives (`maxArchiveBytes` of listFrontendArchive).
  maxArchiveBytes: 32_000_000,
  // Each file stored is one R2 write in the install's request, which may make 1,000 operations in all: the rest
  // is room for the request's other calls. What no browser fetches is not stored (`unserved`), so a large build
  // (Soapbox: 1,600 files with its source maps) fits.
  maxFiles: 960,
  maxEntries: 5_000,
  maxFileBytes: 32_000_000,
  maxTotalBytes: 150_000_000,
};

/** A frontend's name or ref as a path segment: letters, digits, `.`, `_`, `-`; not `.` or `..`. */
export const FRONTEND_SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,64}$/;

export interface ArchiveFile {
  /** The path inside the build, as served (no leading slash). */
  path: string;
  /** The entry in the archive. */
  entry: ZipEntry;
  type: string;
  size: number;
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  map: "application/json",
  webmanifest: "application/manifest+json",
  txt: "text/plain; charset=utf-8",
  xml: "application/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  ico: "image/x-icon",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
  otf: "font/otf",
  eot: "application/vnd.ms-fontobject",
  wasm: "application/wasm",
  mp3: "audio/mpeg",
  ogg: "audio/ogg",
  wav: "audio/wav",
  mp4: "video/mp4",
  webm: "video/webm",
};

export const contentTypeOf = (path: string) =>
  TYPES[path.slice(path.lastIndexOf(".") + 1).toLowerCase()] ?? "application/octet-stream";

/**
 * Whether a file's name carries a content hash (`main.DinL-YV_.js`, `app.1a2b3c4d.css`, `2b0cfde38bdc93337f7f.wasm`):
 * such a file never changes under its name and may be cached for a year. The hash is a run of 8 or more letters,
 * digits, `_` or `-` after a `.`/`-`, with a digit or both cases in it (or a whole stem of 16+ hex), so `bootstrap.css`
 * `sw-pleroma.js`, `favicon-32x32.png` or `Roboto-Regular.woff2` are not mistaken for one.
 */
export function isHashedAsset(path: string): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1);
  const stem = base.slice(0, base.lastIndexOf("."));
  if (!stem) return false;
  // A whole stem counts only as a long hex run (`2b0cfde38bdc93337f7f.wasm`), never `Roboto-Regular`.
  if (/^[0-9a-f]{16,}$/.test(stem)) return true;
  const parts = stem.split(".");
  const candidates = [...parts.slice(1), ...(stem.includes("-") ? [stem.slice(stem.lastIndexOf("-") + 1)] : [])];
  return candidates.some(
    (h) => /^[A-Za-z0-9_-]{8,64}$/.test(h) && (/\d/.test(h) || (/[a-z]/.test(h) && /[A-Z]/.test(h))),
  );
}

/** The path an entry has inside the build, or null for what is not part of it (other folders, directories). */
function buildPath(entry: string, prefix: string): string | null {
  if (entry.endsWith("/") || !entry.startsWith(prefix)) return null;
  return entry.slice(prefix.length);
}

/**
 * Files of a build no browser fetches, left out of the install: source maps (only developer tools ask, and they
 * reveal the source), precompressed copies (`x.js.gz`, `x.js.br` beside `x.js`: compression is the edge's job),
 * and a `.woff` font beside a `.woff2` of the same font (every browser that runs a current frontend takes the
 * woff2 a stylesheet lists first). Fontsource-style builds hold a pair of each subset and weight.
 */
export function unservedFiles(paths: string[]): Set<string> {
  const all = new Set(paths);
  // A font's name without the build's content hash (`inter-latin-400-normal-BOlQeZGp.woff2` → `…-normal`).
  const fontKey = (p: string) => {
    const stem = p.slice(0, p.lastIndexOf("."));
    return isHashedAsset(p) ? stem.replace(/[.-][A-Za-z0-9_-]{8,64}$/, "") : stem;
  };
  const woff2 = new Set(paths.filter((p) => p.toLowerCase().endsWith(".woff2")).map(fontKey));
  const out = new Set<string>();
  for (const p of paths) {
    const lower = p.toLowerCase();
    if (lower.endsWith(".map")) out.add(p);
    else if ((lower.endsWith(".gz") || lower.endsWith(".br")) && all.has(p.slice(0, -3))) out.add(p);
    else if (lower.endsWith(".woff") && woff2.has(fontKey(p))) out.add(p);
  }
  return out;
}

/** Whether a path is safe to store and serve: relative, no empty, `.` or `..` segment, no backslash or control. */
function safePath(path: string): boolean {
  if (!path || path.length > 512 || path.startsWith("/") || /[\\\u0000-\u001f\u007f]/.test(path)) return false;
  return path.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

/**
 * The files of the build in `zip` under `buildDir` (or at the archive's root when nothing is under it and the
 * root has an `index.html`). Throws `ZipRefused` saying what is wrong (`ZipDamaged` for an unreadable zip).
 */
export function listFrontendArchive(
  zip: Uint8Array,
  buildDir: string,
  maxArchiveBytes = FRONTEND_LIMITS.maxArchiveBytes,
): ArchiveFile[] {
  if (zip.byteLength > maxArchiveBytes) throw new ZipRefused(`The archive is larger than ${maxArchiveBytes} bytes`);
  // Names and declared sizes only: nothing is inflated, the entries are still counted against the limit.
  const entries = listZip(zip, FRONTEND_LIMITS.maxEntries);
  const dir = buildDir.replace(/^\/+|\/+$/g, "");
  for (const prefix of dir ? [`${dir}/`, ""] : [""]) {
    let files: ArchiveFile[] = [];
    for (const e of entries) {
      const path = buildPath(e.name, prefix);
      if (path === null) continue;
      if (!safePath(path)) throw new ZipRefused(`The archive holds an unsafe path: ${JSON.stringify(e.name)}`);
      files.push({ path, entry: e, type: contentTypeOf(path), size: e.size });
    }
    if (!files.some((f) => f.path === "index.html")) continue;
    if (new Set(files.map((f) => f.path)).size !== files.length)
      throw new ZipRefused("The archive holds the same path twice");
    const unserved = unservedFiles(files.map((f) => f.path));
    files = files.filter((f) => !unserved.has(f.path));
    if (files.length > FRONTEND_LIMITS.maxFiles)
      throw new ZipRefused(`The build has more than ${FRONTEND_LIMITS.maxFiles} files`);
    const big = files.find((f) => f.size > FRONTEND_LIMITS.maxFileBytes);
    if (big)
      throw new ZipRefused(`${big.entry.name} is larger than ${FRONTEND_LIMITS.maxFileBytes} bytes uncompressed`);
    if (files.reduce((n, f) => n + f.size, 0) > FRONTEND_LIMITS.maxTotalBytes)
      throw new ZipRefused(`The build is larger than ${FRONTEND_LIMITS.maxTotalBytes} bytes uncompressed`);
    return files;
  }
  throw new ZipRefused(`The archive has no ${dir ? `${dir}/` : ""}index.html`);
}

/** One file of the archive, inflated (refused as soon as it passes its declared size, which `listFrontendArchive` checked). */
export function inflateFrontendFile(zip: Uint8Array, file: ArchiveFile): Uint8Array {
  return zipEntryBytes(zip, file.entry, FRONTEND_LIMITS.maxFileBytes);
}
