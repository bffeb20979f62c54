/**
 * What a local reply or boost carries once the remote author approved it (issue 49; GoToSocial's interaction
 * controls): the authorization their server serves (`replyAuthorization` / `announceAuthorization`, which
 * GoToSocial checks since 0.20) and the `Accept` that handed it over (`approvedBy`, which older GoToSocial
 * checks). Read from the `approval` rows `hydrateWithParentUris` loads with the statuses.
 */
import type { Hydrated } from "../../services/hydrate";

interface Approved {
  id: string;
  authorization: string | null;
  accept: string | null;
}

function approvalOf(h: Hydrated, statusId: string): Approved | undefined {
  return (h.extra.get("approval") as Approved[] | undefined)?.find((a) => a.id === statusId);
}

const url = (u: string | null | undefined) => (u ? new URL(u) : null);

/** A reply's: its `approvedBy` and `replyAuthorization` (nothing when none was needed or it is not approved). */
export function replyApproval(h: Hydrated, statusId: string) {
  const a = approvalOf(h, statusId);
  return a ? { approvedBy: url(a.accept), replyAuthorization: url(a.authorization) } : {};
}

/** A boost's: its `approvedBy` and `announceAuthorization`. */
export function announceApproval(h: Hydrated, statusId: string) {
  const a = approvalOf(h, statusId);
  return a ? { approvedBy: url(a.accept), announceAuthorization: url(a.authorization) } : {};
}
