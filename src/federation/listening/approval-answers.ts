/**
 * A remote author's `Accept` or `Reject` of a local user's interaction request (issue 49; GoToSocial's
 * interaction controls; rules: services/approval-answers.ts). The request is named by its id (the `object`,
 * embedded as GoToSocial sends it or by id); only the post's author answers it, and an `Accept` approves only
 * with an authorization (`result`) its server serves for this very interaction.
 */
import type { InboxContext } from "@fedify/fedify";
import { AnnounceRequest, LikeRequest, ReplyRequest, type Accept, type Reject } from "@fedify/vocab";
import { receiveInteractionAnswer, requestOf } from "../../services/approval-answers";
import type { FederationData } from "../data";
import { verifyAuthorization } from "../fetching/interaction-authorizations";
import { after, embedded, sender } from "./context";

type Ctx = InboxContext<FederationData>;

/** The id form of a local request (services/approval-requests.ts). */
const REQUEST_ID = /#(reply|like|announce)_requests\/[0-9A-Za-z]+$/;

/** False when the answer is of no interaction request (a follow's or a quote's, then). */
export async function onInteractionAnswer(ctx: Ctx, answer: Accept | Reject, accepted: boolean): Promise<boolean> {
  const object = await embedded((o) => answer.getObject(o));
  if (object && !(object instanceof ReplyRequest || object instanceof LikeRequest || object instanceof AnnounceRequest))
    return false;
  const requestUri = (object?.id ?? answer.objectId)?.href;
  if (!requestUri || !REQUEST_ID.test(requestUri) || !requestUri.startsWith(`${new URL(ctx.canonicalOrigin).origin}/`))
    return false;
  const from = await sender(ctx, answer);
  if (!from) return true;
  const r = await requestOf(ctx.data.d, from, requestUri);
  if (!r) return true;
  let approval: { accept: string; authorization: string } | null = null;
  if (accepted) {
    const authorization = answer.resultId?.href;
    if (!authorization || !answer.id) return true;
    const expected = { kind: r.kind, interactionUri: r.interactionUri, targetUri: r.targetUri, authorUri: from.uri };
    // Approved only by an authorization its server serves for this interaction; else it stays pending.
    if (!(await verifyAuthorization(ctx, authorization, expected))) return true;
    approval = { accept: answer.id.href, authorization };
  }
  after(ctx, await receiveInteractionAnswer(ctx.data.d, r, approval));
  return true;
}
