/** The StatusEdit entity (Mastodon 3.5): one version of a status, from `status_edits` or the status as it is. */
import { iso } from "../lib/iso";
import type { Account } from "../schemas/account";
import type { Status, StatusEdit } from "../schemas/status";
import type { EditRow } from "../services/status-edits";
import type { RenderContext } from "./account";
import { renderMedia, renderStatusEmojis } from "./status";

export function renderStatusEdit(ctx: RenderContext, row: EditRow, account: Account): StatusEdit {
  return {
    content: row.content,
    spoiler_text: row.spoilerText,
    sensitive: row.sensitive,
    created_at: iso(row.createdAt),
    account,
    poll: row.poll ? { options: row.poll.options.map((title) => ({ title })) } : null,
    media_attachments: row.media.map((m) => renderMedia(ctx, m)),
    emojis: renderStatusEmojis(ctx, row.emojis),
  };
}

/** A status never edited has one version: itself (as Mastodon answers its history). */
export function currentVersion(s: Status): StatusEdit {
  return {
    content: s.content,
    spoiler_text: s.spoiler_text,
    sensitive: s.sensitive,
    created_at: s.created_at,
    account: s.account,
    poll: s.poll ? { options: s.poll.options.map((o) => ({ title: o.title })) } : null,
    media_attachments: s.media_attachments,
    emojis: s.emojis,
  };
}
