/** The Marker entity: reading positions, keyed by timeline; `notifications` also carries Pleroma's unread count. */
import { iso } from "../lib/iso";
import type { MarkerRow } from "../services/notifications";

export function renderMarkers(rows: MarkerRow[], unread: number) {
  const out: Record<
    string,
    { last_read_id: string; version: number; updated_at: string; pleroma?: { unread_count: number } }
  > = {};
  for (const m of rows) {
    out[m.timeline] = {
      last_read_id: m.lastReadId,
      version: m.version,
      updated_at: iso(m.updatedAt),
      ...(m.timeline === "notifications" ? { pleroma: { unread_count: unread } } : {}),
    };
  }
  return out;
}
