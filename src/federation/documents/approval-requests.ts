/**
 * GoToSocial's interaction requests, as a local user sends them (issue 49; docs/federation/interaction_controls.md
 * there): the remote post as `object`, the interaction itself embedded as `instrument` (the reply's Note, the
 * Like, the Announce), to the post's author alone. Its `Accept` names it by id (federation/listening).
 */
import { AnnounceRequest, Like, LikeRequest, ReplyRequest, type Activity } from "@fedify/vocab";
import type { Hydrated } from "../../services/hydrate";
import type { OutboxActivity } from "../../services/outbox";
import { announceActivity, statusObject, type NoteContext } from "./notes";

type Request = Extract<OutboxActivity, { type: "InteractionRequest" }>;

/** What the document is built from (documents/activities.ts `ActivitySources`). */
interface Sources {
  nc: NoteContext;
  h: Hydrated;
  parentUris: Map<string, string>;
  accounts: Map<string, { uri: string }>;
  listRecipients: Map<string, string[]>;
}

export function interactionRequestActivity(
  src: Sources,
  actorId: string,
  actorUri: string,
  a: Request,
): Activity | null {
  const target = src.accounts.get(a.targetId);
  if (!target) return null;
  const common = {
    id: new URL(a.uri),
    actor: new URL(actorUri),
    object: new URL(a.objectUri),
    to: new URL(target.uri),
  };
  switch (a.kind) {
    case "reply": {
      if (!a.statusId || src.h.statuses.get(a.statusId)?.accountId !== actorId) return null;
      const instrument = statusObject(src.nc, src.h, src.parentUris, a.statusId, src.listRecipients.get(a.statusId));
      return instrument ? new ReplyRequest({ ...common, instrument }) : null;
    }
    case "like": {
      if (!a.likeUri) return null;
      const like = new Like({ id: new URL(a.likeUri), actor: common.actor, object: common.object, to: common.to });
      return new LikeRequest({ ...common, instrument: like });
    }
    case "announce": {
      if (!a.statusId || src.h.statuses.get(a.statusId)?.accountId !== actorId) return null;
      const instrument = announceActivity(src.nc, src.h, a.statusId);
      return instrument ? new AnnounceRequest({ ...common, instrument }) : null;
    }
  }
}
