/** Files in R2: type detection from the bytes themselves, size limits, keys and public URLs. */
import { isStoredKey, thumbnailKey } from "../lib/media-urls";
import { ApiError } from "../lib/errors";
import { newId } from "../db/ids";
import { broken, cleanImage, MAX_PIXELS, type Parts } from "../content/image-metadata";
import { avifHasMetadata, cleanIsobmff, ftypKind, heifSize, type MediaFacts } from "../content/isobmff";
import { cleanMatroska } from "../content/matroska";
import { cleanOgg } from "../content/ogg";
import { cleanAudio } from "../content/audio-metadata";
import type { FormFile } from "../lib/form-file";
import { decode as decodePng } from "fast-png";
import { encode as encodeBlurhash } from "blurhash";

interface Sniffed {
  mime: string;
  ext: string;
}

const startsWith = (b: Uint8Array, sig: number[], at = 0) => sig.every((v, i) => b[at + i] === v);
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));

/** The image type the content really is, whatever name or type the client gave it (HEIC: stored as JPEG). */
export function sniffImage(b: Uint8Array): Sniffed | null {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { mime: "image/png", ext: "png" };
  if (startsWith(b, [0xff, 0xd8, 0xff])) return { mime: "image/jpeg", ext: "jpg" };
  if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a") return { mime: "image/gif", ext: "gif" };
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP") return { mime: "image/webp", ext: "webp" };
  const ftyp = ftypKind(b);
  if (ftyp === "avif") return { mime: "image/avif", ext: "avif" };
  if (ftyp === "heic") return { mime: "image/heic", ext: "heic" };
  return null;
}

export type MediaType = "image" | "gifv" | "video" | "audio" | "unknown";

/** Type of any upload from its bytes; files that are none of the known kinds are stored as opaque data. */
export function sniffMedia(b: Uint8Array): Sniffed & { type: MediaType } {
  const image = sniffImage(b);
  if (image) return { ...image, type: "image" };
  const ftyp = ftypKind(b);
  if (ftyp === "audio") return { mime: "audio/mp4", ext: "m4a", type: "audio" };
  if (ftyp === "mov") return { mime: "video/quicktime", ext: "mov", type: "video" };
  if (ftyp === "mp4") return { mime: "video/mp4", ext: "mp4", type: "video" };
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return { mime: "video/webm", ext: "webm", type: "video" };
  if (ascii(b, 0, 4) === "OggS") return { mime: "audio/ogg", ext: "ogg", type: "audio" };
  if (ascii(b, 0, 4) === "fLaC") return { mime: "audio/flac", ext: "flac", type: "audio" };
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WAVE") return { mime: "audio/wav", ext: "wav", type: "audio" };
  if (ascii(b, 0, 3) === "ID3" || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0))
    return { mime: "audio/mpeg", ext: "mp3", type: "audio" };
  return { mime: "application/octet-stream", ext: "bin", type: "unknown" };
}

/**
 * A file (as parts: content/image-metadata.ts), for an image its size in pixels when read, for a video or audio what
 * its container says; and its type when cleaning changed it (HEIC made JPEG, an MP4 with sound alone).
 */
type Clean = Parts & { width?: number; height?: number; facts?: MediaFacts; as?: Sniffed & { type?: MediaType } };

/**
 * A file's parts as a stream of as many chunks, for the Images binding. Its client (workerd's
 * `cloudflare-internal:images-api`) copies the input stream chunk by chunk in JavaScript, and `Blob.stream()`
 * yields 4 KiB chunks: 1,400 of them for a phone photo, about 20 ms of CPU for each transformation
 * (bench/README.md).
 */
const partsStream = ({ parts }: Parts) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of parts) controller.enqueue(p);
      controller.close();
    },
  });

/**
 * Puts a file given as parts, joined by the runtime (a Blob: one native copy). Measured against joining them in
 * JavaScript (a zeroed buffer, then copies, then the binding's own copy) and against writing them to a
 * FixedLengthStream (the stream's pumping): the cheapest of the three (bench/README.md).
 */
async function putParts(bucket: R2Bucket, key: string, file: Parts, options: R2PutOptions): Promise<void> {
  if (file.parts.length <= 1) {
    await bucket.put(key, file.parts[0] ?? new Uint8Array(0), options);
    return;
  }
  await bucket.put(key, new Blob(file.parts), options);
}

export interface StoredFile extends MediaFacts {
  key: string;
  mime: string;
  size: number;
  /** An image's displayed size in pixels, when read (content/image-metadata.ts). */
  width?: number;
  height?: number;
  /** A thumbnail's size (at `thumbnailKey(key)`) and the blurhash, when the Images binding made them. */
  small?: { width: number; height: number };
  blurhash?: string;
}

/** The longest side of a thumbnail (Mastodon's `small` is 640 pixels at most on its long side). */
export const THUMBNAIL_SIDE = 640;

/** Deletes stored files and what was made from them (thumbnails). R2 ignores keys that are not there. */
export async function deleteStoredFiles(bucket: R2Bucket, keys: string[]): Promise<void> {
  const all = keys.filter(isStoredKey).flatMap((k) => [k, thumbnailKey(k)]);
  // R2 deletes at most 1,000 keys per call (an old frontend build has hundreds of files).
  for (let i = 0; i < all.length; i += 1000) await bucket.delete(all.slice(i, i + 1000));
}

/**
 * A picture's thumbnail (WebP, at most THUMBNAIL_SIDE on its long side, stored beside it) and blurhash, made by the
 * Images binding (not on this request's CPU). Best effort: without the binding, or when it fails, none.
 */
async function derive(
  images: ImagesBinding | undefined,
  bucket: R2Bucket,
  key: string,
  image: Clean,
  mime: string,
): Promise<Pick<StoredFile, "small" | "blurhash">> {
  if (!images) return {};
  const input = () => partsStream(image);
  try {
    // The size read while stripping (content/image-metadata.ts), else asked of the binding (AVIF).
    const seen = image.width && image.height ? null : await images.info(input());
    const [w, h] =
      image.width && image.height
        ? [image.width, image.height]
        : seen && "width" in seen
          ? [seen.width, seen.height]
          : [THUMBNAIL_SIDE, THUMBNAIL_SIDE];
    // The long side bounded, the other following (one dimension given keeps the aspect; never enlarged).
    const scale = Math.min(1, THUMBNAIL_SIDE / Math.max(w, h));
    const small = { width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(h * scale)) };
    // An animated GIF keeps being shown as itself (a still thumbnail would stop it in every timeline).
    if (mime !== "image/gif") {
      const thumb = await images
        .input(input())
        .transform(w >= h ? { width: small.width } : { height: small.height })
        .output({ format: "image/webp", quality: 80 });
      await bucket.put(thumbnailKey(key), new Uint8Array(await thumb.response().arrayBuffer()), {
        httpMetadata: { contentType: "image/webp", cacheControl: "public, max-age=31536000, immutable" },
      });
    }
    // The blurhash from a 32-pixel PNG (the binding has no raw pixel output locally), decoded here: 4 KB of pixels.
    const tiny = await images
      .input(input())
      .transform(w >= h ? { width: 32 } : { height: 32 })
      .output({ format: "image/png" });
    const png = decodePng(new Uint8Array(await tiny.response().arrayBuffer()));
    const blurhash = encodeBlurhash(toRgba(png), png.width, png.height, 4, 3);
    return { ...(mime !== "image/gif" ? { small } : {}), blurhash };
  } catch (e) {
    console.warn(`thumbnail of ${key}: ${(e as Error)?.message ?? e}`);
    return {};
  }
}

/** An image cropped to fill `box`, in its own format; as it was if the binding fails (best effort). */
async function fitted(
  images: ImagesBinding,
  image: Clean,
  mime: string,
  box: { width: number; height: number },
): Promise<Clean> {
  try {
    const format = (["image/jpeg", "image/png", "image/webp", "image/avif"].includes(mime) ? mime : "image/webp") as
      "image/jpeg" | "image/png" | "image/webp" | "image/avif";
    const out = await images
      .input(partsStream(image))
      .transform({ width: box.width, height: box.height, fit: "cover" })
      .output({ format });
    const bytes = new Uint8Array(await out.response().arrayBuffer());
    return { parts: [bytes], size: bytes.byteLength, width: box.width, height: box.height };
  } catch (e) {
    console.warn(`resizing an image: ${(e as Error)?.message ?? e}`);
    return image;
  }
}

/** A decoded PNG's pixels as 8-bit RGBA. */
function toRgba(png: { data: ArrayLike<number>; width: number; height: number; channels: number; depth: number }) {
  const n = png.width * png.height;
  const out = new Uint8ClampedArray(n * 4);
  const scale = png.depth === 16 ? 1 / 257 : 1;
  for (let i = 0; i < n; i++) {
    const c = png.channels;
    const v = (k: number) => Math.round(png.data[i * c + k]! * scale);
    const [r, g, b] = c >= 3 ? [v(0), v(1), v(2)] : [v(0), v(0), v(0)];
    out.set([r, g, b, c === 4 ? v(3) : c === 2 ? v(1) : 255], i * 4);
  }
  return out;
}

const sizeOf = (c: Clean) => (c.width && c.height ? { width: c.width, height: c.height } : {});

/**
 * What an AVIF or HEIF says its picture is (content/isobmff.ts `heifSize`): a file that names no picture is none,
 * whatever a decoder makes of it (a 40-byte box of a huge size), and too many pixels are refused, as for any image.
 */
function heifPicture(bytes: Uint8Array): { width: number; height: number } {
  const size = heifSize(bytes, broken);
  if (!size) throw broken();
  if (size.width * size.height > MAX_PIXELS)
    throw new ApiError(
      422,
      `Validation failed: the image has more than ${MAX_PIXELS} pixels (${size.width} × ${size.height})`,
    );
  return size;
}

/** A picture re-encoded by the Images binding as `format`; null without the binding or when it fails. */
async function reencoded(bytes: Uint8Array, format: "image/avif" | "image/jpeg", images?: ImagesBinding) {
  if (!images) return null;
  try {
    const out = await images.input(partsStream({ parts: [bytes], size: bytes.byteLength })).output({ format });
    return new Uint8Array(await out.response().arrayBuffer());
  } catch (e) {
    console.warn(`${format} not made`, (e as Error)?.message ?? e);
    return null;
  }
}

/** An image's bytes without their metadata (location, camera, time), and its size. */
export async function cleanedImage(bytes: Uint8Array, mime: string, images?: ImagesBinding): Promise<Clean> {
  if (mime === "image/heic") {
    // HEIC is shown by few apps and browsers: made a JPEG (as Mastodon does), which the binding writes without
    // metadata, and stripped as any JPEG. No binding, no picture: its items cannot be cut out here.
    heifPicture(bytes);
    const jpeg = await reencoded(bytes, "image/jpeg", images);
    if (!jpeg || sniffImage(jpeg)?.mime !== "image/jpeg")
      throw new ApiError(422, "Validation failed: this HEIC picture cannot be converted to JPEG");
    return { ...(await cleanImage(jpeg, "image/jpeg")), as: { mime: "image/jpeg", ext: "jpg" } };
  }
  if (mime === "image/avif") {
    // Its items cannot be cut out here: re-encoded (the binding writes no metadata). Without the binding, or when it
    // fails (a broken file, its quota), refused when it names metadata or carries its marks (an XMP packet, an Exif
    // header: long enough marks that compressed bytes do not make them by chance).
    const size = heifPicture(bytes);
    const encoded = await reencoded(bytes, "image/avif", images);
    if (encoded && sniffImage(encoded)?.mime === "image/avif")
      return { parts: [encoded], size: encoded.byteLength, ...size };
    const text = new TextDecoder("latin1").decode(bytes);
    if (avifHasMetadata(bytes, broken) || /Exif\0\0|<x:xmpmeta|<rdf:RDF/.test(text))
      throw new ApiError(
        422,
        "Validation failed: this AVIF carries metadata (location, camera) that cannot be removed",
      );
    return { parts: [bytes], size: bytes.byteLength, ...size };
  }
  return cleanImage(bytes, mime);
}

/**
 * A video's or audio's bytes without their metadata (place, device, dates: content/isobmff.ts, matroska.ts,
 * ogg.ts, audio-metadata.ts), and what its container says of it; other files as they are.
 */
function cleanedMedia(bytes: Uint8Array, mime: string): Clean {
  switch (mime) {
    case "video/mp4":
    case "video/quicktime":
    case "audio/mp4": {
      const { video, ...clean } = cleanIsobmff(bytes);
      // Sound alone is audio, whatever the brand says (an M4A written with an `isom` brand).
      return video || mime === "audio/mp4" ? clean : { ...clean, as: { mime: "audio/mp4", ext: "m4a", type: "audio" } };
    }
    case "video/webm": {
      const { video: _, ...clean } = cleanMatroska(bytes);
      return clean;
    }
    case "audio/ogg":
      return cleanOgg(bytes);
    case "audio/flac":
    case "audio/mpeg":
    case "audio/wav":
      return cleanAudio(bytes, mime);
    default:
      return { parts: [bytes], size: bytes.byteLength };
  }
}

/**
 * Stores an upload under `prefix` with its sniffed type, refusing files over `limit` bytes (413) and types not
 * in `types` (415).
 */
export async function storeUpload(
  bucket: R2Bucket,
  prefix: string,
  file: FormFile,
  limit: number,
  types: string[],
  images?: ImagesBinding,
): Promise<StoredFile & { type: MediaType }> {
  if (file.size > limit) throw new ApiError(413, "File is too large");
  const bytes = file.bytes();
  const sniffed = sniffMedia(bytes.subarray(0, 256));
  if (!types.includes(sniffed.mime))
    throw new ApiError(415, `Unsupported media type: ${sniffed.mime} files are not accepted`);
  const clean =
    sniffed.type === "image" ? await cleanedImage(bytes, sniffed.mime, images) : cleanedMedia(bytes, sniffed.mime);
  const kind = { ...sniffed, ...clean.as };
  const key = `${prefix}/${newId().toLowerCase()}.${kind.ext}`;
  await putParts(bucket, key, clean, {
    httpMetadata: { contentType: kind.mime, cacheControl: "public, max-age=31536000, immutable" },
  });
  const derived = kind.type === "image" ? await derive(images, bucket, key, clean, kind.mime) : {};
  const facts = clean.facts ?? {};
  return { ...facts, ...sizeOf(clean), ...derived, key, mime: kind.mime, size: clean.size, type: kind.type };
}

/**
 * Stores an uploaded image under `prefix`, refusing non-images (415) and files over `limit` bytes (413); with a
 * `box` and the Images binding, cropped to fill it (animated GIFs stay as they are: not yet made still).
 */
export async function storeImage(
  bucket: R2Bucket,
  prefix: string,
  file: FormFile,
  limit: number,
  opts: { images?: ImagesBinding; box?: { width: number; height: number } | null } = {},
): Promise<StoredFile> {
  if (file.size > limit) throw new ApiError(413, "File is too large");
  const bytes = file.bytes();
  const sniffed = sniffImage(bytes.subarray(0, 256));
  if (!sniffed) throw new ApiError(415, "Unsupported media type: only images are accepted");
  let clean = await cleanedImage(bytes, sniffed.mime, opts.images);
  const type = { ...sniffed, ...clean.as };
  if (opts.images && opts.box && type.mime !== "image/gif")
    clean = await fitted(opts.images, clean, type.mime, opts.box);
  const key = `${prefix}/${newId().toLowerCase()}.${type.ext}`;
  await putParts(bucket, key, clean, {
    httpMetadata: { contentType: type.mime, cacheControl: "public, max-age=31536000, immutable" },
  });
  return { ...sizeOf(clean), key, mime: type.mime, size: clean.size };
}
