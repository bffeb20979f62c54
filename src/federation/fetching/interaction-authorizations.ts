/**
 * Checking the authorization a remote author's `Accept` hands over for a local interaction request (issue 49;
 * GoToSocial's `LikeAuthorization`, `ReplyAuthorization`, `AnnounceAuthorization`): fetched from its id, which
 * must be on the post's (and its author's) own server, typed for the interaction, attributed to the post's
 * author, naming this very interaction and the post. Anything else approves nothing.
 */
import type { Context } from "@fedify/fedify";
import { AnnounceAuthorization, LikeAuthorization, ReplyAuthorization } from "@fedify/vocab";
import type { InteractionKind } from "../../db/schema";
import type { FederationData } from "../data";

const TYPES = { reply: ReplyAuthorization, like: LikeAuthorization, announce: AnnounceAuthorization } as const;

export async function verifyAuthorization(
  ctx: Context<FederationData>,
  authorization: string,
  expected: { kind: InteractionKind; interactionUri: string; targetUri: string; authorUri: string },
): Promise<boolean> {
  let origin: string;
  try {
    origin = new URL(authorization).origin;
  } catch {
    return false;
  }
  if (origin !== new URL(expected.targetUri).origin || origin !== new URL(expected.authorUri).origin) return false;
  if (origin === new URL(ctx.canonicalOrigin).origin) return false;
  const doc = await ctx.lookupObject(authorization).catch(() => null);
  return (
    doc instanceof TYPES[expected.kind] &&
    doc.id?.href === authorization &&
    doc.attributionId?.href === expected.authorUri &&
    doc.interactingObjectId?.href === expected.interactionUri &&
    doc.interactionTargetId?.href === expected.targetUri
  );
}
