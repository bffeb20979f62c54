/** The Announcement entity (Mastodon's, with Pleroma's `pleroma.raw_content`). */
import { iso } from "../lib/iso";
import { plainTextToHtml } from "../content/text";
import type { AnnouncementRow } from "../services/announcements";

export function renderAnnouncement(a: AnnouncementRow, read: boolean | null) {
  return {
    id: a.id,
    content: plainTextToHtml(a.content),
    starts_at: a.startsAt === null ? null : iso(a.startsAt),
    ends_at: a.endsAt === null ? null : iso(a.endsAt),
    all_day: a.allDay,
    published_at: iso(a.createdAt),
    updated_at: iso(a.updatedAt),
    // Without a signed-in viewer nothing was dismissed.
    read: read ?? false,
    mentions: [] as never[],
    statuses: [] as never[],
    tags: [] as never[],
    emojis: [] as never[],
    reactions: [] as never[],
    pleroma: { raw_content: a.content },
  };
}
