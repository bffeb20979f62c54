/** The Notification entity. */
import type { DB } from "../db/client";
import { inJson } from "../db/client";
import { iso } from "../lib/iso";
import { chatMessages, mediaAttachments, reports } from "../db/schema";
import { eq } from "drizzle-orm";
import { renderChatMessage } from "./chat";
import type { z } from "@hono/zod-openapi";
import type { NotificationSchema } from "../schemas/social";

type Notification = z.infer<typeof NotificationSchema>;
import { accountsById } from "../services/conversations";
import { hydrate } from "../services/hydrate";
import type { NotificationRow, NotificationType, NotificationsNamed } from "../services/notifications";
import { renderAccount, type RenderContext } from "./account";
import { renderStatuses } from "./status";

export type { NotificationRow };

/** Notifications with their accounts, statuses, reports and chat messages: reads in parallel, whatever their number. */
export async function renderNotifications(d: DB, ctx: RenderContext, rows: NotificationRow[]): Promise<Notification[]> {
  const me = ctx.viewerId;
  const statusIds = [...new Set(rows.flatMap((r) => (r.statusId ? [r.statusId] : [])))];
  const reportIds = [...new Set(rows.flatMap((r) => (r.reportId ? [r.reportId] : [])))];
  const chatIds = [...new Set(rows.flatMap((r) => (r.chatMessageId ? [r.chatMessageId] : [])))];
  const [h, people, reportRows, chatRows] = await Promise.all([
    hydrate(d, statusIds, me),
    accountsById(
      d,
      rows.flatMap((r) => [r.fromAccountId, ...(r.targetAccountId ? [r.targetAccountId] : [])]),
    ),
    reportIds.length ? d.select().from(reports).where(inJson(reports.id, reportIds)) : Promise.resolve([]),
    chatIds.length
      ? d
          .select({ message: chatMessages, media: mediaAttachments })
          .from(chatMessages)
          .leftJoin(mediaAttachments, eq(mediaAttachments.id, chatMessages.mediaId))
          .where(inJson(chatMessages.id, chatIds))
      : Promise.resolve([]),
  ]);
  return renderLoadedNotifications(ctx, rows, {
    h,
    people,
    reports: new Map(reportRows.map((r) => [r.id, r])),
    chats: new Map(chatRows.map((r) => [r.message.id, r])),
  });
}

/** Notifications whose statuses, accounts, reports and chat messages are loaded (`named`). */
export function renderLoadedNotifications(
  ctx: RenderContext,
  rows: NotificationRow[],
  named: NotificationsNamed,
): Notification[] {
  const { h, people, reports: reportsById, chats: chatById } = named;
  const statusIds = [...new Set(rows.flatMap((r) => (r.statusId ? [r.statusId] : [])))];
  const statuses = new Map(renderStatuses(ctx, h, statusIds).map((s) => [s.id, s]));
  return rows.flatMap((r) => {
    const from = people.get(r.fromAccountId);
    if (!from) return [];
    const status = r.statusId ? statuses.get(r.statusId) : undefined;
    if (r.statusId && !status) return [];
    const target = r.targetAccountId ? people.get(r.targetAccountId) : undefined;
    const report = r.reportId ? reportsById.get(r.reportId) : undefined;
    const chat = r.chatMessageId ? chatById.get(r.chatMessageId) : undefined;
    // A chat mention whose message is gone is not shown.
    if (r.chatMessageId && !chat) return [];
    return [
      {
        id: r.id,
        type: r.type as NotificationType,
        created_at: iso(r.createdAt),
        account: renderAccount(ctx, from),
        ...(status ? { status } : {}),
        ...(r.emoji ? { emoji: r.emoji } : {}),
        ...(target ? { target: renderAccount(ctx, target) } : {}),
        ...(report
          ? {
              report: {
                id: report.id,
                action_taken: report.state !== "open",
                comment: report.comment,
                created_at: iso(report.createdAt),
              },
            }
          : {}),
        ...(chat ? { chat_message: renderChatMessage(ctx, chat.message, chat.media) } : {}),
        pleroma: { is_seen: r.isSeen, is_muted: Boolean(r.isMuted) },
      },
    ];
  });
}
