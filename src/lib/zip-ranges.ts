/**
 * Reading a zip a piece at a time (issue 50: an account archive of hundreds of MB sits in R2 and is imported in
 * steps): the central directory is read from the end, then each entry wanted by its own range, so no step holds
 * the whole archive. Bounded like `lib/zip.ts`: the number of entries, the directory's size, each entry's declared
 * size (inflating stops as soon as it passes it: `inflateBounded`, one claiming less than it holds is refused), and
 * names that would climb out of the archive (`..`, absolute paths, backslashes, NUL) refuse the archive.
 * ZIP64 archives (over 4 GB or 65,535 entries) and encrypted entries are refused.
 */
import { inflateBounded, ZipRefused } from "./zip";

/** Bytes `[offset, offset + length)` of the archive. */
export type RangeReader = (offset: number, length: number) => Promise<Uint8Array>;

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
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** The end record (22 bytes) and the longest comment. */
const TAIL = 22 + 0xffff;
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

/** The central directory of an archive of `size` bytes: its files (directories left out). */
export async function readDirectory(read: RangeReader, size: number, limits: DirectoryLimits): Promise<ZipEntry[]> {
  if (size < 22) throw new ZipRefused("The file is not a zip archive");
  const tailStart = Math.max(0, size - TAIL);
  const tail = await read(tailStart, size - tailStart);
  let end = -1;
  for (let i = tail.length - 22; i >= 0; i--)
    if (u32(tail, i) === EOCD && i + 22 + u16(tail, i + 20) <= tail.length) {
      end = i;
      break;
    }
  if (end < 0) throw new ZipRefused("The file is not a zip archive");
  const count = u16(tail, end + 10);
  const dirSize = u32(tail, end + 12);
  const dirOffset = u32(tail, end + 16);
  if (count === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff)
    throw new ZipRefused("ZIP64 archives (over 4 GB or 65,535 files) are not supported");
  if (u16(tail, end + 4) !== 0 || u16(tail, end + 6) !== 0) throw new ZipRefused("Split archives are not supported");
  if (count > limits.maxEntries) throw new ZipRefused(`The archive has more than ${limits.maxEntries} entries`);
  if (dirOffset + dirSize > size) throw new ZipRefused("The archive's directory is damaged");
  if (dirSize > DIRECTORY_MAX) throw new ZipRefused("The archive's directory is too large");
  const dir = await read(dirOffset, dirSize);
  const entries: ZipEntry[] = [];
  let total = 0;
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > dir.length || u32(dir, at) !== CENTRAL) throw new ZipRefused("The archive's directory is damaged");
    const flags = u16(dir, at + 8);
    const method = u16(dir, at + 10);
    const compressedSize = u32(dir, at + 20);
    const declared = u32(dir, at + 24);
    const nameLength = u16(dir, at + 28);
    const next = at + 46 + nameLength + u16(dir, at + 30) + u16(dir, at + 32);
    const offset = u32(dir, at + 42);
    if (nameLength > NAME_MAX || next > dir.length) throw new ZipRefused("The archive's directory is damaged");
    const raw = dir.subarray(at + 46, at + 46 + nameLength);
    const name = new TextDecoder(flags & 0x800 ? "utf-8" : "latin1").decode(raw);
    at = next;
    if (unsafeName(name)) throw new ZipRefused(`The archive holds an unsafe file name: ${JSON.stringify(name)}`);
    if (name.endsWith("/")) continue;
    if (compressedSize === 0xffffffff || declared === 0xffffffff || offset === 0xffffffff)
      throw new ZipRefused("ZIP64 archives (over 4 GB or 65,535 files) are not supported");
    if (flags & 1) throw new ZipRefused(`${name} is encrypted`);
    if (offset + 30 + compressedSize > size) throw new ZipRefused("The archive's directory is damaged");
    if ((total += declared) > limits.maxTotalBytes)
      throw new ZipRefused(`The archive is larger than ${limits.maxTotalBytes} bytes uncompressed`);
    entries.push({ name, method, compressedSize, size: declared, offset });
  }
  return entries;
}

/**
 * One entry's bytes, at most `maxBytes` uncompressed (its declared size; more is refused before reading).
 * Two reads: the local header (its name and extra field may differ from the directory's), then the data.
 */
export async function readEntry(read: RangeReader, entry: ZipEntry, maxBytes: number): Promise<Uint8Array> {
  if (entry.size > maxBytes) throw new ZipRefused(`${entry.name} is larger than ${maxBytes} bytes uncompressed`);
  // The bytes read are the compressed ones: never more than the declared size can come from (deflate adds at most
  // a few bytes per 16 KiB block; a stored entry is its size), so a small declared size cannot pull in a big range.
  const most = entry.method === 0 ? entry.size : entry.size + (entry.size >> 10) + 1024;
  if (entry.compressedSize > most) throw new ZipRefused(`${entry.name}: damaged entry`);
  const header = await read(entry.offset, 30);
  if (header.length < 30 || u32(header, 0) !== LOCAL) throw new ZipRefused(`${entry.name}: damaged entry`);
  const start = entry.offset + 30 + u16(header, 26) + u16(header, 28);
  const data = entry.compressedSize ? await read(start, entry.compressedSize) : new Uint8Array(0);
  if (data.length < entry.compressedSize) throw new ZipRefused(`${entry.name}: damaged entry`);
  if (entry.method === 0) return data.subarray(0, entry.size);
  if (entry.method !== 8) throw new ZipRefused(`${entry.name}: unsupported compression`);
  return inflateBounded(data, entry.size, entry.name);
}

/** A reader over bytes in memory (an upload, a test). */
export const bytesReader =
  (bytes: Uint8Array): RangeReader =>
  async (offset, length) =>
    bytes.subarray(offset, offset + length);

/** A reader over an object in an R2 bucket (one ranged GET per read). */
export const r2Reader =
  (bucket: R2Bucket, key: string): RangeReader =>
  async (offset, length) => {
    if (length === 0) return new Uint8Array(0);
    const o = await bucket.get(key, { range: { offset, length } });
    if (!o) throw new ZipRefused("The archive is gone");
    return new Uint8Array(await o.arrayBuffer());
  };
