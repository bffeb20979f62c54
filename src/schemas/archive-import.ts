/** An account archive import's progress (issue 50: `/api/v1/pleroma/archive_import`; Starling's own entity). */
import { z } from "@hono/zod-openapi";

export const ArchiveImportSchema = z
  .object({
    id: z.string(),
    /** queued: stored, not read yet; importing: posts going in, a step a minute; done; failed (`error`). */
    state: z.enum(["queued", "importing", "done", "failed"]),
    file_size: z.number().int(),
    /** Items in the archive's outbox; the posts it imports (own posts and self-replies); handled so far. */
    posts_found: z.number().int(),
    posts_total: z.number().int(),
    posts_done: z.number().int(),
    posts_imported: z.number().int(),
    media_imported: z.number().int(),
    media_skipped: z.number().int(),
    /** Posts left out, by reason (announces, not_own, replies_to_others, direct, unreadable, future, over_limit, duplicates, already_imported). */
    skipped: z.record(z.string(), z.number().int()),
    /** Why it waits (the day's budget, the database's room), while it does. */
    paused: z.string().nullable(),
    error: z.string().nullable(),
    inserted_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("ArchiveImport");
