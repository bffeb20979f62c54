/** An archive import's progress as the API answers it (schemas/archive-import.ts). */
import type { z } from "@hono/zod-openapi";
import { iso } from "../lib/iso";
import type { ArchiveImportSchema } from "../schemas/archive-import";
import type { ArchiveImportRow } from "../services/archive-import";

export function renderArchiveImport(r: ArchiveImportRow): z.infer<typeof ArchiveImportSchema> {
  return {
    id: r.id,
    state: r.state,
    file_size: r.size,
    posts_found: r.found,
    posts_total: r.total,
    posts_done: r.position,
    posts_imported: r.imported,
    media_imported: r.media,
    media_skipped: r.media_skipped,
    skipped: JSON.parse(r.skipped) as Record<string, number>,
    paused: r.paused,
    error: r.error,
    inserted_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
