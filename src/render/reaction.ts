/** A reaction list entry: Pleroma's EmojiReaction with the accounts behind it. */
import type { z } from "@hono/zod-openapi";
import type { EmojiReactionAccountsSchema } from "../schemas/status";
import type { ReactionGroup } from "../services/reactions";
import { renderAccount, type RenderContext } from "./account";
import { mediaUrl } from "../lib/media-urls";

export function renderReactions(
  ctx: RenderContext,
  groups: ReactionGroup[],
): z.infer<typeof EmojiReactionAccountsSchema>[] {
  return groups.map((g) => ({
    name: g.name,
    count: g.count,
    me: g.me,
    url: g.file === null ? null : mediaUrl(ctx, g.file),
    accounts: g.accounts.map((a) => renderAccount(ctx, a)),
  }));
}
