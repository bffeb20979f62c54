/** Pleroma-only entities that Starling answers with its (for now empty) data. */
import { z } from "@hono/zod-openapi";
import { AccountSchema } from "./account";

export const BookmarkFolderSchema = z
  .object({ id: z.string(), name: z.string(), emoji: z.string().nullable(), emoji_url: z.string().nullable() })
  .openapi("BookmarkFolder");

export const ScrobbleSchema = z
  .object({
    id: z.string(),
    account: AccountSchema,
    title: z.string(),
    artist: z.string(),
    album: z.string(),
    length: z.number().int().nullable(),
    created_at: z.string(),
  })
  .openapi("Scrobble");

/** Pleroma's Backup (BackupView). */
export const BackupSchema = z
  .object({
    id: z.string(),
    content_type: z.string(),
    url: z.string(),
    file_size: z.number().int(),
    processed: z.boolean(),
    inserted_at: z.string(),
  })
  .openapi("Backup");
