/**
 * Where stored files and built-in pictures are linked from: the instance's origin, or the public bucket's own
 * domain (`MEDIA_DOMAIN`). Pure: renderers and services both build URLs with these.
 */
import { config, type Env } from "../env";

/** Where a stored picture's thumbnail is: beside it. */
export const thumbnailKey = (key: string) => `${key}.small.webp`;

/**
 * The images shown for an account without its own, as paths: served by routes/media.ts at the instance's origin,
 * and kept at the same keys in the public bucket (services/public-bucket.ts) for MEDIA_DOMAIN.
 */
export const DEFAULT_AVATAR = "images/avi.png";
export const DEFAULT_HEADER = "images/banner.png";

/**
 * Where this instance's links point: its own origin, and the origin its public files are served from when the
 * public bucket has a domain of its own (`MEDIA_DOMAIN`, so that loading a picture costs no Worker request).
 */
export interface Origins {
  base: string;
  /** `https://MEDIA_DOMAIN`, or null: files are served by the Worker at `<base>/media/`. */
  media: string | null;
}

export function origins(env: Env, base: string): Origins {
  const domain = config(env).mediaDomain;
  return { base, media: domain ? `https://${domain}` : null };
}

/** Each segment percent-encoded: pack names and emoji file names may hold spaces, `#`, `?` or any character. */
const encodeKey = (key: string) => key.split("/").map(encodeURIComponent).join("/");

/** Public URL of a stored file; absolute URLs (remote media) pass through. */
export function mediaUrl(o: Origins, keyOrUrl: string): string {
  if (/^https?:\/\//.test(keyOrUrl)) return keyOrUrl;
  // The bucket's domain serves a key at its path (R2 decodes it).
  return o.media ? `${o.media}/${encodeKey(keyOrUrl)}` : `${o.base}${mediaPath(keyOrUrl)}`;
}

/** A built-in picture (DEFAULT_AVATAR, DEFAULT_HEADER): from the media domain when there is one. */
export const builtInImageUrl = (o: Origins, path: string) => `${o.media ?? o.base}/${path}`;

/**
 * A stored file relative to this instance (`/media/<key>`), for answers that want a path (Pleroma's emoji map:
 * Pleroma-FE puts its server in front of it, so it stays on the Worker whatever MEDIA_DOMAIN says).
 */
export function mediaPath(keyOrUrl: string): string {
  return /^https?:\/\//.test(keyOrUrl) ? keyOrUrl : `/media/${encodeKey(keyOrUrl)}`;
}

/** A key is ours when it is not an absolute URL. */
export const isStoredKey = (keyOrUrl: string | null | undefined): keyOrUrl is string =>
  Boolean(keyOrUrl) && !/^https?:\/\//.test(keyOrUrl!);
