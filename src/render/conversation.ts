/** The Conversation entity (a direct-message participation). */
import type { z } from "@hono/zod-openapi";
import type { ConversationSchema } from "../schemas/social";
import type { LoadedConversations } from "../services/conversations";
import { renderAccount, type RenderContext } from "./account";
import { renderStatuses } from "./status";

type Conversation = z.infer<typeof ConversationSchema>;

/** Conversations from what `loadConversations` (services/conversations.ts) read, for its viewer. */
export function renderConversations(ctx: RenderContext, loaded: LoadedConversations): Conversation[] {
  const me = ctx.viewerId!;
  const { parts, statuses, accounts } = loaded;
  const lastIds = parts.flatMap((p) => (p.lastStatusId ? [p.lastStatusId] : []));
  const last = new Map(renderStatuses(ctx, statuses, lastIds).map((s) => [s.id, s]));
  const acc = (id: string) => {
    const a = accounts.get(id);
    return a ? [renderAccount(ctx, a)] : [];
  };
  return parts.map((p) => ({
    id: p.id,
    accounts: p.recipients.flatMap(acc),
    unread: p.unread,
    last_status: (p.lastStatusId && last.get(p.lastStatusId)) || null,
    pleroma: { recipients: [me, ...p.recipients].flatMap(acc) },
  }));
}
