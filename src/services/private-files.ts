/**
 * The two buckets. MEDIA holds the public files (uploads and their thumbnails, avatars, headers, backgrounds,
 * mascots, emoji, the built-in default pictures): what MEDIA_DOMAIN, its custom domain, serves to anyone as it is.
 * PRIVATE holds what only the Worker serves, with its own checks or at its own paths: account archives (private
 * posts), frontend builds and instance documents (HTML and scripts, never to be served from the media domain), and
 * emoji pack archives (packs an admin may not share). Nothing under PRIVATE_PREFIXES is written to MEDIA.
 *
 * Instances from before the split kept everything in MEDIA. The cron (`settlePublicBucket`) moves those files,
 * a batch a run, and then writes READY_KEY into MEDIA; until then a miss is looked for in MEDIA too. The deploy
 * script (scripts/deploy.ts) attaches MEDIA_DOMAIN to the bucket only once READY_KEY is there.
 */
import type { Env } from "../env";

/** Key prefixes of private files (services/backups.ts, frontends.ts, instance-documents.ts, emoji-packs.ts, archive-import.ts). */
export const PRIVATE_PREFIXES = [
  "backups/",
  "frontends/",
  "instance-documents/",
  "emoji-archives/",
  "archive-imports/",
] as const;

export const isPrivateKey = (key: string) => PRIVATE_PREFIXES.some((p) => key.startsWith(p));

/** Written into MEDIA once it holds nothing private and has the built-in pictures (version: BUILT_IN_VERSION). */
export const READY_KEY = "starling/ready";
/** Bumped when the built-in pictures change, so that the cron writes them again. */
const BUILT_IN_VERSION = "1";
/** Files moved per cron run: each is a read and a write (R2 calls count against the invocation's 1,000). */
const MOVE_BATCH = 50;

/** Public buckets this isolate saw READY_KEY in (nothing private left: no more looking there). */
const moved = new WeakSet<object>();
/** …and with the current built-in pictures (the cron job has nothing left to do). */
const settled = new WeakSet<object>();

/** Whether MEDIA may still hold private files: one read of READY_KEY per isolate once it is there. */
async function unmoved(env: Pick<Env, "MEDIA">): Promise<boolean> {
  if (moved.has(env.MEDIA)) return false;
  if (!(await env.MEDIA.head(READY_KEY))) return true;
  moved.add(env.MEDIA);
  return false;
}

/**
 * A private file: from PRIVATE, or (an instance from before the split, until the cron moved it) from MEDIA. A miss
 * (an instance document never uploaded) costs one more read per isolate, or two a miss while the move lasts.
 */
export async function readPrivate(
  env: Pick<Env, "MEDIA" | "PRIVATE">,
  key: string,
  options?: R2GetOptions,
): Promise<R2ObjectBody | R2Object | null> {
  const found = await env.PRIVATE.get(key, options);
  if (found || !(await unmoved(env))) return found;
  return env.MEDIA.get(key, options);
}

/** The same, for callers that read the body (no conditional request). */
export const readPrivateBody = (env: Pick<Env, "MEDIA" | "PRIVATE">, key: string) =>
  readPrivate(env, key) as Promise<R2ObjectBody | null>;

/** Deletes private files wherever they are (an unmoved copy in MEDIA too). R2 ignores keys that are not there. */
export async function deletePrivate(env: Pick<Env, "MEDIA" | "PRIVATE">, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const part = keys.slice(i, i + 1000);
    await Promise.all([env.PRIVATE.delete(part), moved.has(env.MEDIA) ? null : env.MEDIA.delete(part)]);
  }
}

/**
 * The cron job: once per isolate, checks READY_KEY (one R2 read); while it is missing or old, moves up to
 * MOVE_BATCH private files out of MEDIA, and when none is left writes the built-in pictures (`images`: key →
 * bytes, served by the media domain as the Worker serves them at `/images/`) and READY_KEY. Answers what it did.
 */
export async function settlePublicBucket(
  env: Pick<Env, "MEDIA" | "PRIVATE">,
  images: Record<string, Uint8Array>,
): Promise<{ moved: number; ready: number } | null> {
  if (settled.has(env.MEDIA)) return null;
  const marker = await env.MEDIA.head(READY_KEY);
  if (marker) moved.add(env.MEDIA);
  if (marker?.customMetadata?.version === BUILT_IN_VERSION) {
    settled.add(env.MEDIA);
    return null;
  }
  let count = 0;
  let left = false;
  for (const prefix of PRIVATE_PREFIXES) {
    const listing = await env.MEDIA.list({ prefix, limit: MOVE_BATCH - count });
    for (const o of listing.objects) {
      // A newer copy already in PRIVATE (written since the upgrade) wins.
      if (await env.PRIVATE.head(o.key)) continue;
      const body = await env.MEDIA.get(o.key);
      if (body)
        await env.PRIVATE.put(o.key, await body.arrayBuffer(), {
          httpMetadata: body.httpMetadata,
          customMetadata: body.customMetadata,
        });
    }
    if (listing.objects.length) await env.MEDIA.delete(listing.objects.map((o) => o.key));
    count += listing.objects.length;
    if (listing.truncated || count >= MOVE_BATCH) {
      left = true;
      break;
    }
  }
  if (left) return { moved: count, ready: 0 };
  for (const [key, bytes] of Object.entries(images))
    await env.MEDIA.put(key, bytes, {
      httpMetadata: { contentType: "image/png", cacheControl: "public, max-age=86400" },
    });
  await env.MEDIA.put(READY_KEY, "", { customMetadata: { version: BUILT_IN_VERSION } });
  moved.add(env.MEDIA);
  settled.add(env.MEDIA);
  return { moved: count, ready: 1 };
}
