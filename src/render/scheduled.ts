/** The ScheduledStatus entity: the post's parameters as given, and its media. */
import { iso } from "../lib/iso";
import type { MediaRow } from "../services/hydrate";
import type { ScheduledRow, StoredParams } from "../services/scheduled";
import type { RenderContext } from "./account";
import { renderMedia } from "./status";

export function renderScheduled(ctx: RenderContext, row: ScheduledRow, media: MediaRow[]) {
  const p = row.params as unknown as StoredParams;
  return {
    id: row.id,
    scheduled_at: iso(row.scheduledAt),
    params: {
      text: p.status ?? null,
      media_ids: p.media_ids ?? null,
      sensitive: p.sensitive ?? null,
      spoiler_text: p.spoiler_text ?? null,
      visibility: p.visibility ?? "public",
      scheduled_at: null,
      poll: p.poll ?? null,
      idempotency: p.idempotency ?? null,
      in_reply_to_id: p.in_reply_to_id ?? null,
      application_id: row.appId,
      expires_in: p.expires_in ?? null,
      content_type: p.content_type ?? null,
      language: p.language ?? null,
    },
    media_attachments: media.map((m) => renderMedia(ctx, m)),
  };
}
