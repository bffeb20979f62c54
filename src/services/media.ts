/** Files in R2: type detection from the bytes themselves, size limits, keys and public URLs. */
import { ApiError } from "../lib/errors";
import { newId } from "../db/ids";
import { cleanImage } from "../content/image-metadata";

interface Sniffed {
  mime: string;
  ext: string;
}

const startsWith = (b: Uint8Array, sig: number[], at = 0) => sig.every((v, i) => b[at + i] === v);
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));

/** The image type the content really is, whatever name or type the client gave it. */
export function sniffImage(b: Uint8Array): Sniffed | null {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { mime: "image/png", ext: "png" };
  if (startsWith(b, [0xff, 0xd8, 0xff])) return { mime: "image/jpeg", ext: "jpg" };
  if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a") return { mime: "image/gif", ext: "gif" };
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP") return { mime: "image/webp", ext: "webp" };
  if (ascii(b, 4, 8) === "ftyp" && ["avif", "avis"].includes(ascii(b, 8, 12)))
    return { mime: "image/avif", ext: "avif" };
  return null;
}

export type MediaType = "image" | "gifv" | "video" | "audio" | "unknown";

/** Type of any upload from its bytes; files that are none of the known kinds are stored as opaque data. */
function sniffMedia(b: Uint8Array): Sniffed & { type: MediaType } {
  const image = sniffImage(b);
  if (image) return { ...image, type: "image" };
  if (ascii(b, 4, 8) === "ftyp") {
    const brand = ascii(b, 8, 12);
    if (brand === "M4A ") return { mime: "audio/mp4", ext: "m4a", type: "audio" };
    if (brand === "qt  ") return { mime: "video/quicktime", ext: "mov", type: "video" };
    return { mime: "video/mp4", ext: "mp4", type: "video" };
  }
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return { mime: "video/webm", ext: "webm", type: "video" };
  if (ascii(b, 0, 4) === "OggS") return { mime: "audio/ogg", ext: "ogg", type: "audio" };
  if (ascii(b, 0, 4) === "fLaC") return { mime: "audio/flac", ext: "flac", type: "audio" };
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WAVE") return { mime: "audio/wav", ext: "wav", type: "audio" };
  if (ascii(b, 0, 3) === "ID3" || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0))
    return { mime: "audio/mpeg", ext: "mp3", type: "audio" };
  return { mime: "application/octet-stream", ext: "bin", type: "unknown" };
}

export interface StoredFile {
  key: string;
  mime: string;
  size: number;
  /** An image's displayed size in pixels, when read (content/image-metadata.ts). */
  width?: number;
  height?: number;
}

const sizeOf = (c: { bytes: Uint8Array; width?: number; height?: number }) =>
  c.width && c.height ? { width: c.width, height: c.height } : {};

/** An image's bytes without their metadata (location, camera, time), and its size; other files as they are. */
async function cleaned(
  bytes: Uint8Array,
  mime: string,
  isImage: boolean,
): Promise<{ bytes: Uint8Array; width?: number; height?: number }> {
  return isImage ? cleanImage(bytes, mime) : { bytes };
}

/**
 * Stores an upload under `prefix` with its sniffed type, refusing files over `limit` bytes (413) and types not
 * in `types` (415).
 */
export async function storeUpload(
  bucket: R2Bucket,
  prefix: string,
  file: File,
  limit: number,
  types: string[],
): Promise<StoredFile & { type: MediaType }> {
  if (file.size > limit) throw new ApiError(413, "File is too large");
  const bytes = new Uint8Array(await file.arrayBuffer());
  const kind = sniffMedia(bytes.subarray(0, 32));
  if (!types.includes(kind.mime))
    throw new ApiError(415, `Unsupported media type: ${kind.mime} files are not accepted`);
  const clean = await cleaned(bytes, kind.mime, kind.type === "image");
  const key = `${prefix}/${newId().toLowerCase()}.${kind.ext}`;
  await bucket.put(key, clean.bytes, {
    httpMetadata: { contentType: kind.mime, cacheControl: "public, max-age=31536000, immutable" },
  });
  return { ...sizeOf(clean), key, mime: kind.mime, size: clean.bytes.byteLength, type: kind.type };
}

/** Stores an uploaded image under `prefix`, refusing non-images (415) and files over `limit` bytes (413). */
export async function storeImage(bucket: R2Bucket, prefix: string, file: File, limit: number): Promise<StoredFile> {
  if (file.size > limit) throw new ApiError(413, "File is too large");
  const bytes = new Uint8Array(await file.arrayBuffer());
  const type = sniffImage(bytes.subarray(0, 32));
  if (!type) throw new ApiError(415, "Unsupported media type: only images are accepted");
  const clean = await cleaned(bytes, type.mime, true);
  const key = `${prefix}/${newId().toLowerCase()}.${type.ext}`;
  await bucket.put(key, clean.bytes, {
    httpMetadata: { contentType: type.mime, cacheControl: "public, max-age=31536000, immutable" },
  });
  return { ...sizeOf(clean), key, mime: type.mime, size: clean.bytes.byteLength };
}

/** The images shown for an account without its own (served by routes/media.ts), relative to the instance origin. */
export const DEFAULT_AVATAR = "images/avi.png";
export const DEFAULT_HEADER = "images/banner.png";

/** Public URL of a stored file; absolute URLs (remote media) pass through. */
export function mediaUrl(base: string, keyOrUrl: string): string {
  return /^https?:\/\//.test(keyOrUrl) ? keyOrUrl : `${base}${mediaPath(keyOrUrl)}`;
}

/** The same, relative to this instance where the file is ours (`/media/<key>`), for answers that want a path. */
export function mediaPath(keyOrUrl: string): string {
  // Each segment percent-encoded: pack names and emoji file names may hold spaces, `#`, `?` or any character.
  return /^https?:\/\//.test(keyOrUrl) ? keyOrUrl : `/media/${keyOrUrl.split("/").map(encodeURIComponent).join("/")}`;
}

/** A key is ours when it is not an absolute URL. */
export const isStoredKey = (keyOrUrl: string | null | undefined): keyOrUrl is string =>
  Boolean(keyOrUrl) && !/^https?:\/\//.test(keyOrUrl!);
