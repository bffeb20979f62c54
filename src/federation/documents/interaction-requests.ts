/**
 * GoToSocial's interaction controls, answering side (its docs/federation/interaction_controls.md): the `Accept`
 * or `Reject` of a polite `LikeRequest` / `ReplyRequest` / `AnnounceRequest` (an outbox row's document), and the
 * `LikeAuthorization` / `ReplyAuthorization` / `AnnounceAuthorization` an Accept hands over as its `result`,
 * served at its id (services/interaction-requests.ts says which).
 */
import type { FederationBuilder } from "@fedify/fedify";
import {
  Accept,
  AnnounceAuthorization,
  AnnounceRequest,
  LikeAuthorization,
  LikeRequest,
  Reject,
  ReplyAuthorization,
  ReplyRequest,
} from "@fedify/vocab";
import { AUTHORIZATION_PATHS, localAuthorization, type InteractionKind } from "../../services/interaction-requests";
import type { OutboxActivity } from "../../services/outbox";
import type { FederationData } from "../data";
import { fetchAllowed, ownerByUsername } from "../door/authorized-fetch";

const url = (u: string) => new URL(u);
const REQUESTS = { LikeRequest, ReplyRequest, AnnounceRequest };

/**
 * The answer to a polite request, as GoToSocial writes its own (`InteractionReqToASAccept`): the request itself
 * as `object` (its id, the requester, the post, the interaction as `instrument`), the authorization as `result`,
 * to the requester alone.
 */
export function interactionAnswer(
  outboxId: string,
  actorUri: string,
  requester: { uri: string } | undefined,
  a: Extract<OutboxActivity, { type: "InteractionAccept" | "InteractionReject" }>,
): Accept | Reject | null {
  if (!requester) return null;
  const accepted = a.type === "InteractionAccept";
  const Answer = accepted ? Accept : Reject;
  return new Answer({
    id: url(`${actorUri}#${accepted ? "accepts" : "rejects"}/interaction_requests/${outboxId}`),
    actor: url(actorUri),
    object: new REQUESTS[a.request]({
      id: url(a.requestUri),
      actor: url(requester.uri),
      object: url(a.objectUri),
      instrument: url(a.instrument),
    }),
    result: accepted ? url(a.uri) : null,
    to: url(requester.uri),
  });
}

const AUTHORIZATIONS = {
  like: LikeAuthorization,
  reply: ReplyAuthorization,
  announce: AnnounceAuthorization,
} as const;

/**
 * The three authorizations, each at its own path under the post's author (a favourite's, a reply's or a reblog's
 * row id), while the interaction stands; under authorized fetch, readable by whom the author does not block.
 */
export function registerInteractionAuthorizations(builder: FederationBuilder<FederationData>): void {
  for (const kind of Object.keys(AUTHORIZATIONS) as InteractionKind[]) {
    const Type = AUTHORIZATIONS[kind] as typeof LikeAuthorization;
    builder
      .setObjectDispatcher(Type, `/users/{identifier}/${AUTHORIZATION_PATHS[kind]}/{id}`, async (ctx, values) => {
        const found = await localAuthorization(ctx.data.d, kind, values.identifier, values.id);
        if (!found) return null;
        return new Type({
          id: url(found.uri),
          attribution: url(found.authorUri),
          interactingObject: url(found.interactionUri),
          interactionTarget: url(found.targetUri),
        });
      })
      .authorize((ctx, values) => fetchAllowed(ctx, ownerByUsername(values.identifier)));
  }
}
