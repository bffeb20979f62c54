/** The Conversation entity (a direct-message participation). */
import type { DB } from "../db/client";
import type { z } from "@hono/zod-openapi";
import type { ConversationSchema } from "../schemas/social";

type Conversation = z.infer<typeof ConversationSchema>;
import * as conv from "../services/conversations";
import { hydrate } from "../services/hydrate";
import { renderAccount, type RenderContext } from "./account";
import { renderStatuses } from "./status";

/** Conversations with their last statuses and accounts: two reads whatever their number. */
export async function renderConversations(
  d: DB,
  ctx: RenderContext,
  parts: conv.ParticipationRow[],
): Promise<Conversation[]> {
  const me = ctx.viewerId!;
  const lastIds = parts.flatMap((p) => (p.lastStatusId ? [p.lastStatusId] : []));
  const [h, people] = await Promise.all([
    hydrate(d, lastIds, me),
    conv.accountsById(d, [me, ...parts.flatMap((p) => p.recipients)]),
  ]);
  const last = new Map(renderStatuses(ctx, h, lastIds).map((s) => [s.id, s]));
  const acc = (id: string) => {
    const a = people.get(id);
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
