/**
 * ISO base media files (MP4, MOV, M4A; HEIF and AVIF are the same boxes): what they are from their `ftyp` brands,
 * and a video's or audio's metadata removed without re-encoding (issue 44). A phone writes where and with what a
 * video was recorded into `moov`: `udta` (QuickTime `©xyz` ISO 6709 place, `©mak`/`©mod` device, iTunes tags of
 * an M4A), `meta` (QuickTime `keys`/`ilst`: `com.apple.quicktime.location.ISO6709`, make, model, software,
 * creation date), XMP in `uuid` boxes; and the recording dates in `mvhd`, `tkhd` and `mdhd`. Each such box, at the
 * top, in `moov` and in each `trak`, becomes a `free` box of the same size with its contents zeroed, and the dates
 * become 0 (unknown): nothing moves, so the chunk offsets (`stco`/`co64`) into `mdat` stay right whichever comes
 * first. Duration, size and frame rate are read on the way (`mvhd`, `tkhd`, `mdhd`, `stts`).
 * Bounded for hostile files: a box whose size runs past its parent is refused (422), a walk goes down only
 * through the few containers named here, and it looks at most `MAX_BOXES` boxes (more is refused).
 */
import { ApiError } from "../lib/errors";
import { patched, tag, u32, type Edit, type Parts } from "./image-metadata";

const u64 = (b: Uint8Array, at: number) => u32(b, at) * 2 ** 32 + u32(b, at + 4);

/** More boxes than any real file's `moov` walk meets (a phone video has a few dozen here). */
const MAX_BOXES = 10_000;

export const brokenFile = () => new ApiError(422, "Validation failed: the file is not a complete file of its type");

export interface Box {
  type: string;
  /** Where the box starts, its payload starts, and it ends. */
  start: number;
  from: number;
  to: number;
}

/** How many more boxes a walk may look at (one budget for a whole walk). */
export interface Budget {
  left: number;
}

/**
 * The children of a box's payload (`from`..`to`); a size past the parent, or more boxes than the walk's budget, is
 * refused (422).
 */
export function* boxes(
  b: Uint8Array,
  from: number,
  to: number,
  broken = brokenFile,
  budget: Budget = { left: MAX_BOXES },
): Generator<Box> {
  let at = from;
  while (at + 8 <= to) {
    if (--budget.left < 0) throw broken();
    let size = u32(b, at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > to) throw broken();
      size = u64(b, at + 8);
      header = 16;
    } else if (size === 0) size = to - at;
    if (size < header || at + size > to) throw broken();
    yield { type: tag(b, at + 4), start: at, from: at + header, to: at + size };
    at += size;
  }
}

/** The first child of type `type`, if any. */
function child(b: Uint8Array, box: Box, type: string, broken: () => ApiError, budget: Budget): Box | undefined {
  for (const c of boxes(b, box.from, box.to, broken, budget)) if (c.type === type) return c;
  return undefined;
}

/** The `ftyp` brands (major first), read from at most the first 256 bytes; none when the file does not start so. */
export function brands(b: Uint8Array): string[] {
  if (b.length < 16 || tag(b, 4) !== "ftyp") return [];
  const size = Math.min(u32(b, 0), b.length, 256);
  const out = [tag(b, 8)];
  for (let at = 16; at + 4 <= size; at += 4) out.push(tag(b, at));
  return out;
}

/** What an ISO base media file is, from its brands: an image container is an image, whatever comes first. */
export function ftypKind(b: Uint8Array): "avif" | "heic" | "audio" | "mov" | "mp4" | null {
  const all = brands(b);
  if (!all.length) return null;
  const has = (...names: string[]) => names.some((n) => all.includes(n));
  if (has("avif", "avis")) return "avif";
  // HEIF: HEVC-coded images (heic, heix, …), or the generic image brands (mif1, msf1, miaf) of any codec.
  if (has("heic", "heix", "heim", "heis", "hevc", "hevx", "heif", "mif1", "mif2", "msf1", "miaf")) return "heic";
  if (all[0] === "M4A " || all[0] === "M4B " || all[0] === "M4P ") return "audio";
  if (all[0] === "qt  ") return "mov";
  return "mp4";
}

/** A box's payload zeroed under the type `free` (its header's length kept: a 64-bit size stays one). */
function freed(b: Uint8Array, box: Box): Edit {
  const bytes = new Uint8Array(box.to - box.start);
  bytes.set(b.subarray(box.start, box.from));
  bytes.set([0x66, 0x72, 0x65, 0x65], 4);
  return { at: box.start, bytes };
}

/** A full box's creation and modification times (version 0: two 32-bit fields; 1: two 64-bit) set to 0. */
function undated(b: Uint8Array, box: Box): Edit | null {
  const version = b[box.from];
  const length = version === 1 ? 16 : 8;
  if (box.from + 4 + length > box.to) return null;
  return { at: box.from + 4, bytes: new Uint8Array(length) };
}

/** What a video or audio says of itself (Mastodon's `meta.original`). */
export interface MediaFacts {
  width?: number;
  height?: number;
  /** Frames per second as a fraction ("30/1", "30000/1001"). */
  frameRate?: string;
  /** Seconds. */
  duration?: number;
  /** Bits per second of the whole file. */
  bitrate?: number;
}

const gcd = (a: number, c: number): number => (c ? gcd(c, a % c) : a);
/** `n/d` reduced. */
export const fraction = (n: number, d: number) => {
  const g = gcd(n, d) || 1;
  return `${n / g}/${d / g}`;
};

/** Boxes that carry metadata, wherever they sit in the walk. */
const METADATA = new Set(["udta", "meta", "uuid", "XMP_"]);

export interface CleanMedia extends Parts {
  facts: MediaFacts;
  /** Whether a video track was seen (an MP4 with sound tracks alone is audio). */
  video: boolean;
}

/** An MP4, MOV or M4A without its metadata, and what it says of itself. */
export function cleanIsobmff(b: Uint8Array): CleanMedia {
  const edits: Edit[] = [];
  const facts: MediaFacts = {};
  const budget = { left: MAX_BOXES };
  let moov = false;
  let video = false;
  const each = (from: number, to: number) => boxes(b, from, to, brokenFile, budget);
  const date = (box: Box) => {
    const e = undated(b, box);
    if (e) edits.push(e);
  };
  for (const top of each(0, b.length)) {
    if (METADATA.has(top.type)) edits.push(freed(b, top));
    if (top.type !== "moov") continue;
    moov = true;
    for (const m of each(top.from, top.to)) {
      if (METADATA.has(m.type)) edits.push(freed(b, m));
      else if (m.type === "mvhd") {
        date(m);
        const v1 = b[m.from] === 1;
        const scale = u32(b, m.from + (v1 ? 20 : 12));
        const length = v1 ? u64(b, m.from + 24) : u32(b, m.from + 16);
        if (scale && m.to >= m.from + (v1 ? 32 : 20)) facts.duration = Math.round((length / scale) * 1000) / 1000;
      } else if (m.type === "trak") {
        let handler = "";
        let size: [number, number] | null = null;
        let rate: string | undefined;
        for (const t of each(m.from, m.to)) {
          if (METADATA.has(t.type)) edits.push(freed(b, t));
          else if (t.type === "tkhd") {
            date(t);
            // Width and height, 16.16 fixed point, are the last 8 bytes of the header.
            if (t.to - t.from >= 84) size = [u32(b, t.to - 8) >>> 16, u32(b, t.to - 4) >>> 16];
          } else if (t.type === "mdia") {
            let scale = 0;
            for (const d of each(t.from, t.to)) {
              if (METADATA.has(d.type)) edits.push(freed(b, d));
              else if (d.type === "mdhd") {
                date(d);
                scale = u32(b, d.from + (b[d.from] === 1 ? 20 : 12));
              } else if (d.type === "hdlr" && d.to - d.from >= 12) handler = tag(b, d.from + 8);
              else if (d.type === "minf") {
                const stbl = child(b, d, "stbl", brokenFile, budget);
                const stts = stbl && child(b, stbl, "stts", brokenFile, budget);
                if (stts && scale) rate = frameRate(b, stts, scale);
              }
            }
          }
        }
        if (handler === "vide") {
          video = true;
          if (size && size[0] && size[1] && !facts.width) [facts.width, facts.height] = size;
          if (rate && !facts.frameRate) facts.frameRate = rate;
        }
      }
    }
  }
  if (!moov) throw brokenFile();
  if (facts.duration) facts.bitrate = Math.round((b.length * 8) / facts.duration);
  return { ...patched(b, edits), facts, video };
}

/** The most common sample duration's rate (`stts`: entries of sample count and delta), as a fraction. */
function frameRate(b: Uint8Array, stts: Box, scale: number): string | undefined {
  const count = Math.min(u32(b, stts.from + 4), Math.floor((stts.to - stts.from - 8) / 8));
  let best = 0;
  let delta = 0;
  for (let i = 0; i < count; i++) {
    const at = stts.from + 8 + i * 8;
    const n = u32(b, at);
    if (n > best && u32(b, at + 4)) [best, delta] = [n, u32(b, at + 4)];
  }
  return delta ? fraction(scale, delta) : undefined;
}

/**
 * A HEIF or AVIF picture's size: the largest image spatial extents (`ispe`) among the item properties
 * (`meta` → `iprp` → `ipco`): the primary item, or the grid it is made of, is the largest. Undefined when the file
 * names no picture (then it is not one, whatever a decoder makes of it).
 */
export function heifSize(b: Uint8Array, broken: () => ApiError): { width: number; height: number } | undefined {
  let best: { width: number; height: number } | undefined;
  const budget = { left: MAX_BOXES };
  for (const top of boxes(b, 0, b.length, broken, budget)) {
    if (top.type !== "meta") continue;
    for (const m of boxes(b, top.from + 4, top.to, broken, budget)) {
      if (m.type !== "iprp") continue;
      const ipco = child(b, m, "ipco", broken, budget);
      if (!ipco) continue;
      for (const p of boxes(b, ipco.from, ipco.to, broken, budget)) {
        if (p.type !== "ispe" || p.to - p.from < 12) continue;
        const width = u32(b, p.from + 4);
        const height = u32(b, p.from + 8);
        if (width && height && (!best || width * height > best.width * best.height)) best = { width, height };
      }
    }
  }
  return best;
}

/**
 * Whether an AVIF (or HEIF) names an EXIF or XMP item (`meta` → `iinf` → `infe` of type `Exif`, or `mime` items:
 * XMP is `application/rdf+xml`). Starling cannot take such items out of the file itself; media.ts re-encodes it
 * through the Images binding, or refuses it.
 */
export function avifHasMetadata(b: Uint8Array, broken: () => ApiError): boolean {
  const budget = { left: MAX_BOXES };
  for (const top of boxes(b, 0, b.length, broken, budget)) {
    if (top.type !== "meta") continue;
    for (const m of boxes(b, top.from + 4, top.to, broken, budget)) {
      if (m.type !== "iinf") continue;
      const version = b[m.from]!;
      for (const e of boxes(b, m.from + 4 + (version === 0 ? 2 : 4), m.to, broken, budget)) {
        if (e.type !== "infe") continue;
        const v = b[e.from]!;
        if (v < 2) continue;
        const itemType = tag(b, e.from + 4 + (v === 2 ? 2 : 4) + 2);
        if (itemType === "Exif" || itemType === "mime") return true;
      }
    }
  }
  return false;
}
