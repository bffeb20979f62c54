/**
 * Reading zip archives from outside (emoji pack uploads, packs downloaded from other instances, frontend builds,
 * and through `lib/zip-ranges.ts` account archives) without letting a small archive turn into a huge one (issue
 * 28: a 300 KB zip became a 300 MB file in R2 and froze the server for 38 s). The central directory is read first,
 * so the number of entries, each declared size and their sum are checked before anything is inflated; each entry
 * is then inflated a piece at a time and refused as soon as it passes its declared size (`inflateBounded`).
 * ZIP64 archives (over 4 GB or 65,535 entries), split and encrypted ones are refused.
 */
import { Inflate } from "fflate";

export interface ZipLimits {
  /** Entries in the archive, directories and skipped files included. */
  maxEntries: number;
  /** One entry, uncompressed. */
  maxFileBytes: number;
  /** All the entries taken, uncompressed. */
  maxTotalBytes: number;
}

/** Entries: a pack's 500 files and their metadata, with room to spare. Total: within a Worker's 128 MB. */
export const ZIP_LIMITS = { maxEntries: 1_000, maxTotalBytes: 48_000_000 } as const;

export class ZipRefused extends Error {}

/** An entry whose data inflates past its declared size: a lie no zip writer tells, so the whole archive is refused. */
export class ZipOversize extends ZipRefused {}

/** Not a zip, or one whose structure is damaged or of a kind not read here (ZIP64, split, encrypted). */
export class ZipDamaged extends ZipRefused {}

/** A refusal for going past a limit (the archive could be read), as opposed to `ZipDamaged`. */
export const pastZipLimit = (e: unknown): e is ZipRefused => e instanceof ZipRefused && !(e instanceof ZipDamaged);

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  compressedSize: number;
  size: number;
  /** Where its local header starts. */
  offset: number;
}

export interface DirectoryLimits {
  maxEntries: number;
  /** The sum of the declared sizes of every entry. */
  maxTotalBytes: number;
  /** Names are left to the caller to check (it looks entries up by name, or refuses with its own message). */
  keepUnsafeNames?: boolean;
}

/** Where the end record says the central directory is. */
export interface EndRecord {
  count: number;
  dirSize: number;
  dirOffset: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** The end record (22 bytes) and the longest comment: what is read from the end of the archive. */
export const ZIP_TAIL = 22 + 0xffff;
const NAME_MAX = 1024;
/** The central directory, read whole: 20,000 entries with long names and extra fields fit. */
const DIRECTORY_MAX = 8 * 1024 * 1024;

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** A name that could be taken for a path outside the archive, or that hides a character. */
export function unsafeName(name: string): boolean {
  return (
    name.startsWith("/") ||
    name.includes("\\") ||
    /[\u0000-\u001f]/.test(name) ||
    /^[A-Za-z]:/.test(name) ||
    name.split("/").some((part) => part === "..")
  );
}

/** The end record in `tail`, the last bytes of an archive of `size` bytes, checked against the limits. */
export function endRecord(tail: Uint8Array, size: number, limits: DirectoryLimits): EndRecord {
  let end = -1;
  for (let i = tail.length - 22; i >= 0; i--)
    if (u32(tail, i) === EOCD && i + 22 + u16(tail, i + 20) <= tail.length) {
      end = i;
      break;
    }
  if (size < 22 || end < 0) throw new ZipDamaged("The file is not a zip archive");
  const count = u16(tail, end + 10);
  const dirSize = u32(tail, end + 12);
  const dirOffset = u32(tail, end + 16);
  if (count === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff)
    throw new ZipDamaged("ZIP64 archives (over 4 GB or 65,535 files) are not supported");
  if (u16(tail, end + 4) !== 0 || u16(tail, end + 6) !== 0) throw new ZipDamaged("Split archives are not supported");
  if (count > limits.maxEntries) throw new ZipRefused(`The archive has more than ${limits.maxEntries} entries`);
  if (dirOffset + dirSize > size) throw new ZipDamaged("The archive's directory is damaged");
  if (dirSize > DIRECTORY_MAX) throw new ZipRefused("The archive's directory is too large");
  return { count, dirSize, dirOffset };
}

/** The files (directories left out) of the central directory `dir` of an archive of `size` bytes. */
export function directoryEntries(dir: Uint8Array, count: number, size: number, limits: DirectoryLimits): ZipEntry[] {
  const entries: ZipEntry[] = [];
  let total = 0;
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > dir.length || u32(dir, at) !== CENTRAL) throw new ZipDamaged("The archive's directory is damaged");
    const flags = u16(dir, at + 8);
    const method = u16(dir, at + 10);
    const compressedSize = u32(dir, at + 20);
    const declared = u32(dir, at + 24);
    const nameLength = u16(dir, at + 28);
    const next = at + 46 + nameLength + u16(dir, at + 30) + u16(dir, at + 32);
    const offset = u32(dir, at + 42);
    if (nameLength > NAME_MAX || next > dir.length) throw new ZipDamaged("The archive's directory is damaged");
    const raw = dir.subarray(at + 46, at + 46 + nameLength);
    const name = (flags & 0x800 ? UTF8 : LATIN1).decode(raw);
    at = next;
    if (!limits.keepUnsafeNames && unsafeName(name))
      throw new ZipRefused(`The archive holds an unsafe file name: ${JSON.stringify(name)}`);
    if (name.endsWith("/")) continue;
    if (compressedSize === 0xffffffff || declared === 0xffffffff || offset === 0xffffffff)
      throw new ZipDamaged("ZIP64 archives (over 4 GB or 65,535 files) are not supported");
    if (flags & 1) throw new ZipDamaged(`${name} is encrypted`);
    if (offset + 30 + compressedSize > size) throw new ZipDamaged("The archive's directory is damaged");
    if ((total += declared) > limits.maxTotalBytes)
      throw new ZipRefused(`The archive is larger than ${limits.maxTotalBytes} bytes uncompressed`);
    entries.push({ name, method, compressedSize, size: declared, offset });
  }
  return entries;
}

const UTF8 = new TextDecoder("utf-8");
const LATIN1 = new TextDecoder("latin1");

/** The central directory of an archive held in memory. */
export function zipDirectory(zip: Uint8Array, limits: DirectoryLimits): ZipEntry[] {
  const end = endRecord(zip.subarray(Math.max(0, zip.length - ZIP_TAIL)), zip.length, limits);
  return directoryEntries(zip.subarray(end.dirOffset, end.dirOffset + end.dirSize), end.count, zip.length, limits);
}

/**
 * Refuses, before its data is read, an entry over `maxBytes` uncompressed, or whose compressed bytes are more than
 * its declared size can come from (deflate adds at most a few bytes per 16 KiB block; a stored entry is its size),
 * so a small declared size cannot pull in a big range.
 */
export function checkEntry(entry: ZipEntry, maxBytes: number): void {
  if (entry.size > maxBytes) throw new ZipRefused(`${entry.name} is larger than ${maxBytes} bytes uncompressed`);
  const most = entry.method === 0 ? entry.size : entry.size + (entry.size >> 10) + 1024;
  if (entry.compressedSize > most) throw new ZipDamaged(`${entry.name}: damaged entry`);
}

/** Where an entry's data starts, from its local header (whose name and extra field may differ from the directory's). */
export function entryDataStart(header: Uint8Array, entry: ZipEntry): number {
  if (header.length < 30 || u32(header, 0) !== LOCAL) throw new ZipDamaged(`${entry.name}: damaged entry`);
  return entry.offset + 30 + u16(header, 26) + u16(header, 28);
}

/** An entry's bytes from its compressed `data`: stored, or inflated within its declared size. */
export function decodeEntry(data: Uint8Array, entry: ZipEntry): Uint8Array {
  if (data.length < entry.compressedSize) throw new ZipDamaged(`${entry.name}: damaged entry`);
  if (entry.method === 0) return data.subarray(0, entry.size);
  if (entry.method !== 8) throw new ZipDamaged(`${entry.name}: unsupported compression`);
  return inflateBounded(data, entry.size, entry.name);
}

/** One entry of an archive held in memory, at most `maxBytes` uncompressed. */
export function zipEntryBytes(zip: Uint8Array, entry: ZipEntry, maxBytes: number): Uint8Array {
  checkEntry(entry, maxBytes);
  const start = entryDataStart(zip.subarray(entry.offset, entry.offset + 30), entry);
  return decodeEntry(zip.subarray(start, start + entry.compressedSize), entry);
}

/**
 * Compressed bytes fed to the inflater at a time. Deflate inflates at most ~1,032 times, so each push makes at
 * most ~17 MB: fflate's one-shot inflate given a fixed buffer drops what overflows it but decodes the stream to its
 * end (a 1 MB entry could cost a GB of work), where this stops within one push of the declared size.
 */
const INFLATE_CHUNK = 16 * 1024;

/** Raw deflate `data`, at most `size` bytes out: `ZipOversize` as soon as it would make more, `ZipDamaged` when damaged. */
export function inflateBounded(data: Uint8Array, size: number, name: string): Uint8Array {
  const out = new Uint8Array(size);
  let made = 0;
  const inflater = new Inflate((chunk) => {
    if (made + chunk.length > size) throw new ZipOversize(`${name} inflates to more than its declared ${size} bytes`);
    out.set(chunk, made);
    made += chunk.length;
  });
  try {
    let at = 0;
    do inflater.push(data.subarray(at, at + INFLATE_CHUNK), at + INFLATE_CHUNK >= data.length);
    while ((at += INFLATE_CHUNK) < data.length);
  } catch (e) {
    if (e instanceof ZipRefused) throw e;
    throw new ZipDamaged(`${name}: damaged entry`);
  }
  return made === size ? out : out.subarray(0, made);
}

/**
 * The entries `want` asks for, inflated (names are not checked: the callers look entries up by name). Throws
 * `ZipRefused` saying which limit is passed (the entry count, a wanted entry's declared size, the sum of theirs,
 * an entry inflating past its declared size), `ZipDamaged` for an archive that cannot be read.
 */
export function unzipBounded(
  zip: Uint8Array,
  want: (name: string, declaredSize: number) => boolean,
  limits: ZipLimits,
): Record<string, Uint8Array> {
  const taken = wantedEntries(zip, want, limits);
  const out: Record<string, Uint8Array> = {};
  for (const e of taken) out[e.name] = zipEntryBytes(zip, e, limits.maxFileBytes);
  return out;
}

/** An archive's files, nothing inflated and no limit but the number of entries: for callers that check the rest. */
export const listZip = (zip: Uint8Array, maxEntries: number): ZipEntry[] =>
  zipDirectory(zip, { maxEntries, maxTotalBytes: Infinity, keepUnsafeNames: true });

/** The entries `want` asks for, their declared sizes checked: nothing is inflated. */
function wantedEntries(
  zip: Uint8Array,
  want: (name: string, declaredSize: number) => boolean,
  limits: ZipLimits,
): ZipEntry[] {
  let total = 0;
  return listZip(zip, limits.maxEntries).filter((e) => {
    if (!want(e.name, e.size)) return false;
    if (e.size > limits.maxFileBytes)
      throw new ZipRefused(`${e.name} is larger than ${limits.maxFileBytes} bytes uncompressed`);
    if ((total += e.size) > limits.maxTotalBytes)
      throw new ZipRefused(`The archive is larger than ${limits.maxTotalBytes} bytes uncompressed`);
    return true;
  });
}
