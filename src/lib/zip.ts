/**
 * Reading zip archives from outside (emoji pack uploads, packs downloaded from other instances) without letting
 * a small archive turn into a huge one (issue 28: a 300 KB zip became a 300 MB file in R2 and froze the server for
 * 38 s). fflate inflates each entry into a buffer of its declared size, and asks `filter` before each one: so the
 * number of entries, each declared size and their running sum are checked before anything is inflated, and an
 * entry whose data claims less than it holds is cut at its declared size, never grown.
 */
import { Inflate, unzipSync } from "fflate";

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

/**
 * Compressed bytes fed to the inflater at a time. Deflate inflates at most ~1,032 times, so each push makes at
 * most ~17 MB: fflate's one-shot inflate given a fixed buffer drops what overflows it but decodes the stream to its
 * end (a 1 MB entry could cost a GB of work), where this stops within one push of the declared size.
 */
const INFLATE_CHUNK = 16 * 1024;

/** Raw deflate `data`, at most `size` bytes out: `ZipOversize` as soon as it would make more, `ZipRefused` when damaged. */
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
    throw new ZipRefused(`${name}: damaged entry`);
  }
  return made === size ? out : out.subarray(0, made);
}

/**
 * The entries `want` asks for, inflated; throws `ZipRefused` (saying which limit) past a limit, and fflate's
 * error for an archive it cannot read.
 */
export function unzipBounded(
  zip: Uint8Array,
  want: (name: string, declaredSize: number) => boolean,
  limits: ZipLimits,
): Record<string, Uint8Array> {
  let entries = 0;
  let total = 0;
  // Thrown from the filter, it stops fflate's walk of the directory at once (an archive can claim billions of
  // entries).
  return unzipSync(zip, {
    filter: (f) => {
      if (++entries > limits.maxEntries) throw new ZipRefused(`The archive has more than ${limits.maxEntries} entries`);
      if (!want(f.name, f.originalSize)) return false;
      if (f.originalSize > limits.maxFileBytes)
        throw new ZipRefused(`${f.name} is larger than ${limits.maxFileBytes} bytes uncompressed`);
      if ((total += f.originalSize) > limits.maxTotalBytes)
        throw new ZipRefused(`The archive is larger than ${limits.maxTotalBytes} bytes uncompressed`);
      return true;
    },
  });
}
