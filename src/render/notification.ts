/** The Notification entity. */
import { iso } from "../lib/iso";
import { renderChatMessage } from "./chat";
import type { z } from "@hono/zod-openapi";
import type { NotificationSchema, RelationshipSeveranceEventSchema } from "../schemas/social";
import type { SeveranceEvent } from "../services/severed-relationships";
import type {
  GroupedNotificationsResultsSchema,
  NotificationGroupSchema,
  NotificationPolicySchema,
  NotificationPolicyV1Schema,
  NotificationRequestSchema,
  PartialAccountWithAvatarSchema,
} from "../schemas/notification-groups";
import type { Policy, RequestRow } from "../services/notification-policy";
import type { Hydrated } from "../services/hydrate";
import type { AccountWithUser } from "../services/accounts";
import type { NotificationGroup } from "../services/notification-groups";

type Notification = z.infer<typeof NotificationSchema>;
import type { NotificationRow, NotificationType, NotificationsNamed } from "../services/notifications";
import { renderAccount, type RenderContext } from "./account";
import { renderStatuses } from "./status";

export type { NotificationRow };

/** Notifications whose statuses, accounts, reports and chat messages are loaded (`named`). */
export function renderNotifications(
  ctx: RenderContext,
  rows: NotificationRow[],
  named: NotificationsNamed,
): Notification[] {
  const { h, people, reports: reportsById, chats: chatById, events } = named;
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
    const event = r.type === "severed_relationships" ? events.get(r.id) : undefined;
    if (r.type === "severed_relationships" && !event) return [];
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
        ...(event ? { event: renderSeveranceEvent(event) } : {}),
        pleroma: { is_seen: r.isSeen, is_muted: Boolean(r.isMuted) },
      },
    ];
  });
}

/** Mastodon 4.3's RelationshipSeveranceEvent. */
export const renderSeveranceEvent = (e: SeveranceEvent): z.infer<typeof RelationshipSeveranceEventSchema> => ({
  id: e.id,
  type: e.type,
  purged: e.purged,
  target_name: e.targetName,
  followers_count: e.followersCount,
  following_count: e.followingCount,
  created_at: iso(e.createdAt),
});

type Results = z.infer<typeof GroupedNotificationsResultsSchema>;
type Group = z.infer<typeof NotificationGroupSchema>;
type Account = ReturnType<typeof renderAccount>;

/**
 * Notification groups as Mastodon's `GroupedNotificationsResults`: the accounts and statuses they name once each
 * beside the groups. With `partial` (`expand_accounts=partial_avatars`) only a group's newest sender is a full
 * account; the others are `partial_accounts`. `paged`: the page's own range (`page_min_id`, …) is given.
 */
export function renderNotificationGroups(
  ctx: RenderContext,
  groups: NotificationGroup[],
  named: NotificationsNamed,
  opts: { partial: boolean; paged: boolean },
): Results {
  const rendered = new Map(
    renderNotifications(
      ctx,
      groups.map((g) => g.row),
      named,
    ).map((n) => [n.id, n]),
  );
  const accounts = new Map<string, Account>();
  const partials = new Map<string, z.infer<typeof PartialAccountWithAvatarSchema>>();
  const statuses = new Map<string, NonNullable<Notification["status"]>>();
  const out = groups.flatMap((g): Group[] => {
    const n = rendered.get(g.row.id);
    if (!n) return [];
    if (n.status) statuses.set(n.status.id, n.status);
    if (n.target) accounts.set(n.target.id, n.target);
    const ids = g.sampleIds.filter((id) => named.people.has(id));
    ids.forEach((id, i) => {
      if (accounts.has(id)) return;
      const a = id === n.account.id ? n.account : renderAccount(ctx, named.people.get(id)!);
      if (!opts.partial || i === 0) accounts.set(id, a);
      else
        partials.set(id, {
          id: a.id,
          acct: a.acct,
          url: a.url,
          avatar: a.avatar,
          avatar_static: a.avatar_static,
          locked: a.locked,
          bot: a.bot,
        });
    });
    return [
      {
        group_key: g.key,
        notifications_count: g.count,
        type: n.type,
        most_recent_notification_id: n.id,
        ...(opts.paged
          ? { page_min_id: g.pageMinId, page_max_id: g.pageMaxId, latest_page_notification_at: n.created_at }
          : {}),
        sample_account_ids: ids,
        ...(n.status ? { status_id: n.status.id } : {}),
        ...(n.report ? { report: n.report } : {}),
        ...(n.emoji ? { emoji: n.emoji } : {}),
        ...(n.event ? { event: n.event } : {}),
      },
    ];
  });
  for (const id of accounts.keys()) partials.delete(id);
  return {
    accounts: [...accounts.values()],
    ...(opts.partial ? { partial_accounts: [...partials.values()] } : {}),
    statuses: [...statuses.values()],
    notification_groups: out,
  };
}

/** Mastodon 4.3's NotificationRequest: the sender and their newest filtered status. */
export function renderNotificationRequests(
  ctx: RenderContext,
  rows: RequestRow[],
  named: { h: Hydrated; people: Map<string, AccountWithUser> },
): z.infer<typeof NotificationRequestSchema>[] {
  const statuses = new Map(
    renderStatuses(
      ctx,
      named.h,
      rows.flatMap((r) => (r.lastStatusId ? [r.lastStatusId] : [])),
    ).map((s) => [s.id, s]),
  );
  return rows.flatMap((r) => {
    const from = named.people.get(r.fromAccountId);
    if (!from) return [];
    const status = r.lastStatusId ? statuses.get(r.lastStatusId) : undefined;
    return [
      {
        id: r.id,
        created_at: iso(r.createdAt),
        updated_at: iso(r.updatedAt),
        account: renderAccount(ctx, from),
        notifications_count: String(r.notificationsCount),
        ...(status ? { last_status: status } : {}),
      },
    ];
  });
}

/** The policy, v2 (`accept`/`filter`/`drop`) or v1 (whether each is filtered), with its summary. */
export function renderPolicy(p: { policy: Policy; requests: number; notifications: number }) {
  const summary = { pending_requests_count: p.requests, pending_notifications_count: p.notifications };
  return {
    v2: { ...p.policy, summary } satisfies z.infer<typeof NotificationPolicySchema>,
    v1: {
      filter_not_following: p.policy.for_not_following !== "accept",
      filter_not_followers: p.policy.for_not_followers !== "accept",
      filter_new_accounts: p.policy.for_new_accounts !== "accept",
      filter_private_mentions: p.policy.for_private_mentions !== "accept",
      summary,
    } satisfies z.infer<typeof NotificationPolicyV1Schema>,
  };
}
