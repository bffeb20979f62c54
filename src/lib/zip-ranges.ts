/**
 * Reading a zip a piece at a time (issue 50: an account archive of hundreds of MB sits in R2 and is imported in
 * steps): the central directory is read from the end, then each entry wanted by its own range, so no step holds
 * the whole archive. The format and its bounds are `lib/zip.ts`'s: the number of entries, the directory's size, each
 * entry's declared size (inflating stops as soon as it passes it: `inflateBounded`), and names that would climb out
 * of the archive (`..`, absolute paths, backslashes, NUL) refuse the archive.
 */
import {
  checkEntry,
  decodeEntry,
  directoryEntries,
  endRecord,
  entryDataStart,
  ZIP_TAIL,
  ZipRefused,
  type DirectoryLimits,
  type ZipEntry,
} from "./zip";

export type { DirectoryLimits, ZipEntry } from "./zip";

/** Bytes `[offset, offset + length)` of the archive. */
export type RangeReader = (offset: number, length: number) => Promise<Uint8Array>;

/** The central directory of an archive of `size` bytes: its files (directories left out). */
export async function readDirectory(read: RangeReader, size: number, limits: DirectoryLimits): Promise<ZipEntry[]> {
  const tailStart = Math.max(0, size - ZIP_TAIL);
  const end = endRecord(await read(tailStart, size - tailStart), size, limits);
  return directoryEntries(await read(end.dirOffset, end.dirSize), end.count, size, limits);
}

/** One entry's bytes, at most `maxBytes` uncompressed (its declared size; more is refused before reading). */
export async function readEntry(read: RangeReader, entry: ZipEntry, maxBytes: number): Promise<Uint8Array> {
  checkEntry(entry, maxBytes);
  const start = entryDataStart(await read(entry.offset, 30), entry);
  return decodeEntry(entry.compressedSize ? await read(start, entry.compressedSize) : new Uint8Array(0), entry);
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
