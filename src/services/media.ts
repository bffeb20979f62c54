/** Files in R2: type detection from the bytes themselves, size limits, keys and public URLs. */
import { ApiError } from "../http/errors";
import { newId } from "../db/ids";

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
  if (ascii(b, 4, 8) === "ftyp" && ["avif", "avis"].includes(ascii(b, 8, 12))) return { mime: "image/avif", ext: "avif" };
  return null;
}

export interface StoredFile {
  key: string;
  mime: string;
  size: number;
}

/** Stores an uploaded image under `prefix`, refusing non-images (415) and files over `limit` bytes (413). */
export async function storeImage(bucket: R2Bucket, prefix: string, file: File, limit: number): Promise<StoredFile> {
  if (file.size > limit) throw new ApiError(413, "File is too large");
  const bytes = new Uint8Array(await file.arrayBuffer());
  const type = sniffImage(bytes.subarray(0, 32));
  if (!type) throw new ApiError(415, "Unsupported media type: only images are accepted");
  const key = `${prefix}/${newId().toLowerCase()}.${type.ext}`;
  await bucket.put(key, bytes, { httpMetadata: { contentType: type.mime, cacheControl: "public, max-age=31536000, immutable" } });
  return { key, mime: type.mime, size: bytes.byteLength };
}

/** Public URL of a stored file; absolute URLs (remote media) pass through. */
export function mediaUrl(base: string, keyOrUrl: string): string {
  return /^https?:\/\//.test(keyOrUrl) ? keyOrUrl : `${base}/media/${keyOrUrl}`;
}

/** A key is ours when it is not an absolute URL. */
export const isStoredKey = (keyOrUrl: string | null | undefined): keyOrUrl is string =>
  Boolean(keyOrUrl) && !/^https?:\/\//.test(keyOrUrl!);
