/** Media uploads as rows: stored in R2 (`media.ts`), owned by their uploader until a status or scheduled status takes them. */
import { and, eq } from "drizzle-orm";
import { now, type DB } from "../db/client";
import { newId } from "../db/ids";
import { mediaAttachments } from "../db/schema";
import type { Config } from "../env";
import { notFound, unprocessable } from "../lib/errors";
import type { MediaRow } from "./hydrate";
import { storeUpload } from "./media";

function checkDescription(cfg: Config, description: string | undefined) {
  if (description !== undefined && description.length > cfg.descriptionLimit)
    throw unprocessable("Description is too long");
}

/** Stores an uploaded file (checked against the upload limit and types) and its unattached row. */
export async function createUpload(
  d: DB,
  cfg: Config,
  bucket: R2Bucket,
  accountId: string,
  file: File,
  description: string | undefined,
): Promise<MediaRow> {
  checkDescription(cfg, description);
  const stored = await storeUpload(bucket, `media/${accountId.toLowerCase()}`, file, cfg.uploadLimit, cfg.uploadTypes);
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

/** Changes an upload's description (absent: unchanged). */
export async function describeUpload(
  d: DB,
  cfg: Config,
  accountId: string,
  id: string,
  description: string | undefined,
): Promise<MediaRow> {
  checkDescription(cfg, description);
  const row = await ownUpload(d, accountId, id);
  const next = description ?? row.description;
  await d.update(mediaAttachments).set({ description: next }).where(eq(mediaAttachments.id, row.id));
  return { ...row, description: next };
}
