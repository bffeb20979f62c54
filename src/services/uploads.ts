/** Media uploads as rows: stored in R2 (`media.ts`), owned by their uploader until a status or scheduled status takes them. */
import { and, eq, isNull, or } from "drizzle-orm";
import { inJson, now, type DB } from "../db/client";
import { newId } from "../db/ids";
import { mediaAttachments, type MediaMeta } from "../db/schema";
import type { Config } from "../env";
import { notFound, unprocessable } from "../lib/errors";
import type { FormFile } from "../lib/form-file";
import type { MediaRow } from "./hydrate";
import { storeUpload, type StoredFile } from "./media";

export function checkDescription(cfg: Config, description: string | undefined) {
  if (description !== undefined && description.length > cfg.descriptionLimit)
    throw unprocessable("Description is too long");
}

/**
 * Mastodon's `focus`: "x,y", each in -1..1 ((0, 0) the centre, (-1, 1) the top left). Out of range is clamped (apps
 * round); anything else is refused (422). Absent or empty: none given.
 */
export function parseFocus(focus: string | undefined): MediaMeta["focus"] | undefined {
  if (focus === undefined || focus.trim() === "") return undefined;
  const parts = focus.split(",").map((v) => Number(v.trim()));
  if (parts.length !== 2 || parts.some((v) => !Number.isFinite(v)))
    throw unprocessable('Invalid focus: expected "x,y" with each between -1.0 and 1.0');
  const clamp = (v: number) => Math.round(Math.min(1, Math.max(-1, v)) * 100) / 100;
  return { x: clamp(parts[0]!), y: clamp(parts[1]!) };
}

/**
 * The largest upload body read: the file limit and room for the form's other fields (a description of
 * `descriptionLimit` characters, up to 4 bytes each, a focus, the parts' headers). Past it, 413 before reading.
 */
export const uploadBodyLimit = (cfg: Config) => ({
  bytes: cfg.uploadLimit + 4 * cfg.descriptionLimit + 16_384,
  message: "File is too large",
});

/** What is known of the file itself (Mastodon's `meta.original`): size, frame rate, duration, bit rate. */
function original(s: StoredFile): MediaMeta["original"] {
  const o = {
    ...(s.width && s.height ? { width: s.width, height: s.height } : {}),
    ...(s.frameRate ? { frameRate: s.frameRate } : {}),
    ...(s.duration ? { duration: s.duration } : {}),
    ...(s.bitrate ? { bitrate: s.bitrate } : {}),
  };
  return Object.keys(o).length ? o : undefined;
}

/** Stores an uploaded file (checked against the upload limit and types, images without metadata) and its row. */
export async function createUpload(
  d: DB,
  cfg: Config,
  bucket: R2Bucket,
  accountId: string,
  file: FormFile,
  description: string | undefined,
  focus?: string,
  images?: ImagesBinding,
): Promise<MediaRow> {
  checkDescription(cfg, description);
  const point = parseFocus(focus);
  const stored = await storeUpload(
    bucket,
    `media/${accountId.toLowerCase()}`,
    file,
    cfg.uploadLimit,
    cfg.uploadTypes,
    images,
  );
  const meta: MediaMeta = {
    ...(original(stored) ? { original: original(stored) } : {}),
    ...(stored.small ? { small: stored.small } : {}),
    ...(stored.blurhash ? { blurhash: stored.blurhash } : {}),
    ...(point ? { focus: point } : {}),
  };
  const row = {
    id: newId(),
    accountId,
    statusId: null,
    scheduledStatusId: null,
    file: stored.key,
    remoteUrl: null,
    mimeType: stored.mime,
    type: stored.type,
    description: description ?? null,
    size: stored.size,
    position: 0,
    createdAt: now(),
    chatMessageId: null,
    removedByEdit: false,
    pending: null,
    meta: Object.keys(meta).length ? meta : null,
  };
  await d.insert(mediaAttachments).values(row);
  return row;
}

/** One of the user's own uploads (404 for anyone else's). */
export async function ownUpload(d: DB, accountId: string, id: string): Promise<MediaRow> {
  const row = await d
    .select()
    .from(mediaAttachments)
    .where(and(eq(mediaAttachments.id, id), eq(mediaAttachments.accountId, accountId)))
    .get();
  if (!row) throw notFound();
  return row;
}

/**
 * Changes an upload's description and focal point (absent: unchanged). For media already on a status (Pleroma-FE
 * sends them just before its edit) the change waits in `pending` for that edit (services/status-edits.ts), so the
 * edit is seen and the history keeps what the status showed; the answer shows it as it will be.
 */
export async function describeUpload(
  d: DB,
  cfg: Config,
  accountId: string,
  id: string,
  description: string | undefined,
  focus?: string,
): Promise<MediaRow> {
  checkDescription(cfg, description);
  const point = parseFocus(focus);
  const row = await ownUpload(d, accountId, id);
  const next = description ?? row.description;
  const meta = point ? { ...row.meta, focus: point } : row.meta;
  if (row.statusId !== null && !row.removedByEdit) {
    const pending = {
      ...row.pending,
      ...(description !== undefined ? { description } : {}),
      ...(point ? { focus: point } : {}),
    };
    await d.update(mediaAttachments).set({ pending }).where(eq(mediaAttachments.id, row.id));
    return { ...row, description: row.pending?.description ?? next, meta, pending };
  }
  await d.update(mediaAttachments).set({ description: next, meta }).where(eq(mediaAttachments.id, row.id));
  return { ...row, description: next, meta };
}

/**
 * The uploads among `ids` of `accountId` that a post may take: on no other status (`status`: those already on
 * this one count as free), chat message or, unless `scheduled` (a scheduled post being posted), scheduled post.
 */
export function usableUploads(
  d: DB,
  accountId: string,
  ids: string[],
  on: { status?: string; scheduled?: boolean } = {},
) {
  return d
    .select()
    .from(mediaAttachments)
    .where(
      and(
        inJson(mediaAttachments.id, ids),
        eq(mediaAttachments.accountId, accountId),
        on.status
          ? or(eq(mediaAttachments.statusId, on.status), isNull(mediaAttachments.statusId))
          : isNull(mediaAttachments.statusId),
        isNull(mediaAttachments.chatMessageId),
        ...(on.scheduled ? [] : [isNull(mediaAttachments.scheduledStatusId)]),
      ),
    );
}
