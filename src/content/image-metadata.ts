/**
 * What leaves the server of an uploaded image (issue 32): its pixels, not where or with what it was taken. A phone
 * photo's EXIF carries the GPS position, the camera's serial number and the time; Mastodon and GoToSocial strip
 * it, and so does Starling, for every stored image (post media, avatars, headers, backgrounds, emoji, chat
 * attachments), without re-encoding (no CPU for pixels on the request):
 * - JPEG: the APP1 (EXIF, XMP), APP13 (IPTC, Photoshop), COM and other application segments go, and whatever
 *   follows the end of the image (phones append previews with EXIF of their own); the orientation is kept as the
 *   only tag (a minimal EXIF block), so nothing turns sideways; JFIF, ICC profiles and Adobe's segment stay;
 * - PNG: only the chunks that draw the picture stay (text, EXIF, time, C2PA and private chunks go);
 * - WebP: only the chunks that draw the picture stay (EXIF, XMP, C2PA go, and their VP8X flags);
 * - GIF: only the screen, colour tables, frames, graphic controls and the looping extension stay (comments, XMP
 *   and other applications' blocks go); every frame must lie within the screen;
 * - AVIF and HEIF: their items cannot be cut out here (content/isobmff.ts reads them): services/media.ts
 *   re-encodes them through the Images binding (HEIC into JPEG), or refuses what names metadata.
 * Its size in pixels is read on the way (displayed size: a rotated JPEG's width and height swap); a file that is
 * not a complete image of its type, or has more than `MAX_PIXELS`, is refused (422). The result is a list of
 * views of the input (and a few new bytes), in order: joined only where one buffer is needed, so a photo's
 * megabytes are not copied on the way to R2.
 */
import { ApiError } from "../lib/errors";

/** Mastodon's limit (MAX_MATRIX_LIMIT, 7680 × 4320): beyond it, a decoder's memory is the attacker's. */
export const MAX_PIXELS = 33_177_600;

/** A file as its parts, in order (`joined` makes them one buffer), and its length. */
export interface Parts {
  parts: Uint8Array[];
  size: number;
}

export interface CleanImage extends Parts {
  width: number;
  height: number;
}

export const broken = () => new ApiError(422, "Validation failed: the file is not a complete image of its type");

/** Big- and little-endian integers, and a four-character code, read at a place (shared by the media readers). */
const u16 = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
export const u32 = (b: Uint8Array, at: number) =>
  ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const u16le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u24le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
export const u32le = (b: Uint8Array, at: number) => u24le(b, at) + b[at + 3]! * 0x1000000;
export const tag = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/** The parts as one buffer (the only part itself when there is one). */
export function joined({ parts, size }: Parts): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Parts with neighbours that are adjacent views of one buffer merged (a JPEG's kept segments, mostly). */
function partsOf(views: Uint8Array[]): Parts {
  const parts: Uint8Array[] = [];
  let size = 0;
  for (const v of views) {
    size += v.length;
    const last = parts[parts.length - 1];
    if (last && last.buffer === v.buffer && last.byteOffset + last.length === v.byteOffset)
      parts[parts.length - 1] = new Uint8Array(v.buffer, last.byteOffset, last.length + v.length);
    else if (v.length) parts.push(v);
  }
  return { parts, size };
}

/** A byte range replaced by bytes of the same length (a box turned into `free`, an element into EBML Void). */
export interface Edit {
  at: number;
  bytes: Uint8Array;
}

/**
 * The file with each edit written over its range, as views of the input and the edits' bytes: nothing moves, so no
 * offset inside the file (chunk offsets, seek positions) needs fixing, and the input itself is not changed.
 */
export function patched(b: Uint8Array, edits: Edit[]): Parts {
  const sorted = [...edits].sort((x, y) => x.at - y.at);
  const views: Uint8Array[] = [];
  let at = 0;
  for (const e of sorted) {
    if (e.at < at) continue; // inside an edit already made (a box within a removed box)
    views.push(b.subarray(at, e.at), e.bytes);
    at = e.at + e.bytes.length;
  }
  views.push(b.subarray(at));
  return partsOf(views);
}

function sized(parts: Uint8Array[], width: number, height: number): CleanImage {
  if (!(width > 0 && height > 0)) throw broken();
  if (width * height > MAX_PIXELS)
    throw new ApiError(422, `Validation failed: the image has more than ${MAX_PIXELS} pixels (${width} × ${height})`);
  return { ...partsOf(parts), width, height };
}

/** An APP1 EXIF segment holding the orientation alone (big-endian TIFF, one IFD entry). */
function orientationSegment(orientation: number): Uint8Array {
  // "Exif\0\0", TIFF header MM 42 offset 8, IFD: 1 entry (0x0112 SHORT count 1 value), next IFD 0.
  const body = [
    ...[0x45, 0x78, 0x69, 0x66, 0, 0],
    ...[0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8],
    ...[0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0],
    ...[0, 0, 0, 0],
  ];
  const length = body.length + 2;
  return Uint8Array.from([0xff, 0xe1, length >> 8, length & 0xff, ...body]);
}

/**
 * Segments a JPEG keeps: the codec's, ICC profiles (APP2 "ICC_PROFILE", not the multi-picture index: the pictures
 * it indexes are cut off with everything after the end of the image) and Adobe's (APP14).
 */
function keepSegment(b: Uint8Array, at: number, m: number): boolean {
  if (m === 0xe2) return String.fromCharCode(...b.subarray(at + 4, at + 15)) === "ICC_PROFILE";
  // The codec's segments (below APP0); Adobe's colour transform. Not APP0 (JFIF and JFXX carry thumbnails of the
  // original picture), not the other applications', not comments (0xFE), not the JPEG extensions (0xF0–0xFD).
  return m < 0xe0 || m === 0xee;
}

/**
 * The image from the start of scan at `at`: its entropy-coded data (an 0xFF is followed by 0 or a restart marker
 * there) and the segments between scans (progressive JPEGs: tables, more scans; application segments and comments
 * there are dropped too), to the end-of-image marker. Anything after it (a phone's appended previews, with their
 * own EXIF) is not part of the image.
 */
function scans(b: Uint8Array, at: number): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let i = at;
  for (;;) {
    if (i + 4 > b.length) throw broken();
    const marker = b[i + 1]!;
    const length = u16(b, i + 2);
    if (length < 2 || i + 2 + length > b.length) throw broken();
    // A segment (the scan's header, a table between scans): kept unless it is an application's or a comment.
    const segmentEnd = i + 2 + length;
    const dropped = (marker >= 0xe0 && marker <= 0xef) || marker === 0xfe;
    const start = i;
    i = segmentEnd;
    // Entropy-coded data up to the next marker (jumping between 0xFF bytes: a photo's megabytes cost little CPU).
    for (;;) {
      i = b.indexOf(0xff, i);
      if (i < 0 || i + 1 >= b.length) throw broken();
      const next = b[i + 1]!;
      if (next !== 0 && !(next >= 0xd0 && next <= 0xd7) && next !== 0xff) break;
      i++;
    }
    // Entropy-coded data follows only a start of scan; any other segment is followed directly by a marker.
    parts.push(b.subarray(dropped ? segmentEnd : start, i));
    if (b[i + 1] === 0xd9) {
      parts.push(b.subarray(i, i + 2));
      return parts;
    }
  }
}

/**
 * The orientation tag (0x0112) of the EXIF block in the APP1 segment at `at` (its IFD0), or undefined: a TIFF
 * header (byte order, 42, IFD0's offset) after "Exif\0\0", then IFD0's 12-byte entries. A few lines in place of
 * a whole EXIF library in the bundle (bench/README.md); anything out of bounds reads as no orientation.
 */
function exifOrientation(b: Uint8Array, at: number, end: number): number | undefined {
  const tiff = at + 10;
  if (tiff + 8 > end || tag(b, at + 4) !== "Exif" || b[at + 8] !== 0 || b[at + 9] !== 0) return undefined;
  const little = b[tiff] === 0x49 && b[tiff + 1] === 0x49;
  if (!little && !(b[tiff] === 0x4d && b[tiff + 1] === 0x4d)) return undefined;
  const r16 = (o: number) => (little ? u16le(b, o) : u16(b, o));
  const r32 = (o: number) => (little ? u32le(b, o) : u32(b, o));
  if (r16(tiff + 2) !== 42) return undefined;
  const ifd = tiff + r32(tiff + 4);
  if (ifd + 2 > end) return undefined;
  const count = r16(ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > end) return undefined;
    if (r16(entry) !== 0x0112) continue;
    const type = r16(entry + 2);
    // SHORT as the standard says (LONG from a few writers), its value in the entry itself.
    return type === 3 ? r16(entry + 8) : type === 4 ? r32(entry + 8) : undefined;
  }
  return undefined;
}

async function jpeg(b: Uint8Array): Promise<CleanImage> {
  let orientation: number | undefined;
  let exifSeen = false;
  const parts: Uint8Array[] = [b.subarray(0, 2)];
  let width = 0;
  let height = 0;
  let at = 2;
  for (;;) {
    if (at + 4 > b.length || b[at] !== 0xff) throw broken();
    const marker = b[at + 1]!;
    // Fill bytes before a marker.
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = u16(b, at + 2);
    const end = at + 2 + length;
    if (length < 2 || end > b.length) throw broken();
    // Start of frame (baseline, progressive, …): the size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      height = u16(b, at + 5);
      width = u16(b, at + 7);
    }
    if (marker === 0xda) {
      // Start of scan: the image data follows, kept as it is to the end of the image.
      if (orientation && orientation > 1 && orientation <= 8) parts.splice(1, 0, orientationSegment(orientation));
      parts.push(...scans(b, at));
      const [w, h] = orientation && orientation >= 5 && orientation <= 8 ? [height, width] : [width, height];
      return sized(parts, w, h);
    }
    // The first EXIF block holds the orientation (as EXIF readers take it).
    if (marker === 0xe1 && !exifSeen && tag(b, at + 4) === "Exif") {
      exifSeen = true;
      orientation = exifOrientation(b, at, end);
    }
    if (keepSegment(b, at, marker)) parts.push(b.subarray(at, end));
    at = end;
  }
}

/** PNG chunks that draw the picture (animation included); everything else (text, EXIF, C2PA, private) goes. */
const PNG_KEEP = new Set([
  ...["IHDR", "PLTE", "IDAT", "IEND", "tRNS", "cHRM", "gAMA", "iCCP", "sBIT", "sRGB", "cICP", "mDCV", "cLLI"],
  ...["bKGD", "hIST", "pHYs", "sPLT", "acTL", "fcTL", "fdAT"],
]);

function png(b: Uint8Array): CleanImage {
  const parts: Uint8Array[] = [b.subarray(0, 8)];
  let width = 0;
  let height = 0;
  let at = 8;
  for (;;) {
    if (at + 12 > b.length) throw broken();
    const length = u32(b, at);
    const type = tag(b, at + 4);
    const end = at + 12 + length;
    if (end > b.length) throw broken();
    if (type === "IHDR") {
      width = u32(b, at + 8);
      height = u32(b, at + 12);
    }
    if (PNG_KEEP.has(type)) parts.push(b.subarray(at, end));
    at = end;
    if (type === "IEND") return sized(parts, width, height);
  }
}

/** WebP chunks that draw the picture; EXIF, XMP, C2PA and unknown chunks go. */
const WEBP_KEEP = new Set(["VP8 ", "VP8L", "VP8X", "ALPH", "ANIM", "ANMF", "ICCP"]);

function webp(b: Uint8Array): CleanImage {
  if (b.length < 20) throw broken();
  const chunks: Uint8Array[] = [];
  let width = 0;
  let height = 0;
  let at = 12;
  const riffEnd = Math.min(b.length, 8 + u32le(b, 4));
  while (at + 8 <= riffEnd) {
    const type = tag(b, at);
    const length = u32le(b, at + 4);
    const end = at + 8 + length + (length & 1);
    if (at + 8 + length > b.length) throw broken();
    const data = at + 8;
    if (type === "VP8X") {
      width = u24le(b, data + 4) + 1;
      height = u24le(b, data + 7) + 1;
    } else if (type === "VP8 " && !width) {
      width = u16le(b, data + 6) & 0x3fff;
      height = u16le(b, data + 8) & 0x3fff;
    } else if (type === "VP8L" && !width) {
      const bits = u32le(b, data + 1);
      width = (bits & 0x3fff) + 1;
      height = ((bits >> 14) & 0x3fff) + 1;
    }
    if (WEBP_KEEP.has(type)) {
      const chunk = b.slice(at, Math.min(end, b.length));
      // VP8X's flags: no EXIF (bit 3), no XMP (bit 2) any more.
      if (type === "VP8X") chunk[8] = chunk[8]! & ~0x0c;
      chunks.push(chunk);
    }
    at = end;
  }
  const header = new Uint8Array(12);
  header.set(b.subarray(0, 12));
  const size = partsOf(chunks).size + 4;
  header.set([size & 0xff, (size >> 8) & 0xff, (size >> 16) & 0xff, (size >>> 24) & 0xff], 4);
  return sized([header, ...chunks], width, height);
}

/** Application extensions that make a GIF loop (Netscape's and its older twin); any other (XMP, …) goes. */
const GIF_LOOPS = new Set(["NETSCAPE2.0", "ANIMEXTS1.0"]);

/**
 * A GIF with only what draws and loops it: the screen, colour tables, frames, graphic controls and the looping
 * extension; comments, plain text and other applications' extensions (XMP carries GPS) go, as does anything after
 * the trailer. Every frame must lie within the screen (a 64 × 48 screen with a 65535 × 65535 frame is refused).
 */
function gif(b: Uint8Array): CleanImage {
  if (b.length < 13) throw broken();
  const width = u16le(b, 6);
  const height = u16le(b, 8);
  const table = (packed: number) => (packed & 0x80 ? 3 << ((packed & 7) + 1) : 0);
  let at = 13 + table(b[10]!);
  const parts: Uint8Array[] = [b.subarray(0, at)];
  // The data sub-blocks from `i` (each a length byte and as many bytes) to the empty one: where they end.
  const blocks = (i: number) => {
    while (i < b.length && b[i] !== 0) i += 1 + b[i]!;
    if (i >= b.length) throw broken();
    return i + 1;
  };
  for (;;) {
    if (at >= b.length) throw broken();
    const kind = b[at]!;
    if (kind === 0x3b) break;
    if (kind === 0x2c) {
      if (at + 11 > b.length) throw broken();
      const [left, top, w, h] = [u16le(b, at + 1), u16le(b, at + 3), u16le(b, at + 5), u16le(b, at + 7)];
      if (left + w > width || top + h > height)
        throw new ApiError(422, `Validation failed: a frame (${w} × ${h} at ${left}, ${top}) lies outside the picture`);
      const end = blocks(at + 10 + table(b[at + 9]!) + 1);
      parts.push(b.subarray(at, end));
      at = end;
    } else if (kind === 0x21) {
      if (at + 3 > b.length) throw broken();
      const label = b[at + 1]!;
      const end = blocks(at + 2);
      const app = label === 0xff && b[at + 2] === 11 ? String.fromCharCode(...b.subarray(at + 3, at + 14)) : "";
      if (label === 0xf9 || GIF_LOOPS.has(app)) parts.push(b.subarray(at, end));
      at = end;
    } else throw broken();
  }
  parts.push(Uint8Array.of(0x3b));
  return sized(parts, width, height);
}

/**
 * The image without its metadata, and its displayed size. `mime` is the sniffed type (services/media.ts
 * `sniffImage`); a type not handled here is returned as it is, with no size.
 */
export async function cleanImage(bytes: Uint8Array, mime: string): Promise<CleanImage | Parts> {
  switch (mime) {
    case "image/jpeg":
      return jpeg(bytes);
    case "image/png":
      return png(bytes);
    case "image/webp":
      return webp(bytes);
    case "image/gif":
      return gif(bytes);
    default:
      return partsOf([bytes]);
  }
}
