/**
 * Inbox listeners for blocks and reports: `Block` and `Undo{Block}` of local accounts by remote actors
 * (services/inbound-blocks.ts) and `Flag` (forwarded reports, services/reports.ts). The signature proved the
 * actor: a Block or Flag speaks only for it, its id is kept only when it lives on the actor's origin, and only
 * the blocker undoes its block.
 */
import type { InboxContext } from "@fedify/fedify";
import type { Block, Flag, Undo } from "@fedify/vocab";
import { receiveBlock, receiveUndoBlock } from "../../services/inbound-blocks";
import { receiveFlag } from "../../services/reports";
import { htmlToText } from "../../content/format";
import type { AccountRow } from "../../services/accounts";
import type { FederationData } from "../data";
import { after, localAccountAt, sender } from "./context";

/** The activity's id when it is the sender's (same origin), else null: an id is not trusted for anyone else. */
const ownId = (id: URL | null, from: AccountRow) => (id && id.origin === new URL(from.uri).origin ? id.href : null);

export async function onBlock(ctx: InboxContext<FederationData>, block: Block): Promise<void> {
  // A Block of nobody here is acknowledged and dropped, its sender not even fetched.
  const target = await localAccountAt(ctx, block.objectId);
  if (!target) return;
  const from = await sender(ctx, block);
  if (!from || from.deactivated) return;
  await receiveBlock(ctx.data.d, from, target, ownId(block.id, from));
}

/** `Undo` of an embedded Block: only the Block's own actor withdraws it. */
export async function onUndoBlock(ctx: InboxContext<FederationData>, undo: Undo, block: Block): Promise<void> {
  const from = await sender(ctx, undo);
  if (!from || block.actorId?.href !== from.uri) return;
  const target = await localAccountAt(ctx, block.objectId);
  await receiveUndoBlock(ctx.data.d, from, { uri: ownId(block.id, from), targetId: target?.id ?? null });
}

export async function onFlag(ctx: InboxContext<FederationData>, flag: Flag): Promise<void> {
  const from = await sender(ctx, flag);
  if (!from || from.deactivated) return;
  // A report's comment is plain text here; some servers send HTML (tags dropped, entities decoded).
  const content = flag.content;
  const comment = htmlToText(typeof content === "string" ? content : (content?.toString() ?? ""));
  const n = await receiveFlag(ctx.data.d, from, {
    uri: ownId(flag.id, from),
    objectUris: flag.objectIds.map((u) => u.href),
    comment,
  });
  if (n === 0) console.log("inbox: Flag from", from.uri, "dropped (report_removal, or nobody here named)");
  // The moderators' `pleroma:report` notifications: pushed and streamed after the response.
  else after(ctx, { push: true });
}
