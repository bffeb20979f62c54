/**
 * A remote author's answer to a local user's interaction request (issue 49; services/approval-requests.ts
 * asks). Their `Accept` (its authorization verified by federation/listening) approves: the reply's Create or the
 * boost's Announce goes out to its whole audience, carrying the authorization; a `Reject` leaves the reply
 * `rejected` (kept for its author, never sent) and undoes the boost or the like. The user is notified of either.
 */
import { and, eq, getTableColumns } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, statement } from "../db/client";
import { favourites, interactionRequests, statuses } from "../db/schema";
import type { AccountRow } from "./accounts";
import type { Effects } from "./effects";
import { markApproval, type InteractionRequestRow } from "./approval-requests";
import { notify } from "./notifications";
import { outboxWrite } from "./outbox";
import { deleteStatuses, recountFavourites } from "./statuses";

/** The local request `requestUri` asked of `from` (the post's author), or nothing. */
export function requestOf(
  d: DB,
  from: AccountRow,
  requestUri: string,
): Promise<(InteractionRequestRow & { targetUri: string }) | undefined> {
  return d
    .select({ ...getTableColumns(interactionRequests), targetUri: statuses.uri })
    .from(interactionRequests)
    .innerJoin(statuses, eq(statuses.id, interactionRequests.statusId))
    .where(and(eq(interactionRequests.requestUri, requestUri), eq(interactionRequests.targetAccountId, from.id)))
    .get();
}

/**
 * The author's answer to a pending request: approved (`approval`: their Accept's id and the authorization it
 * handed over, verified by the caller) or rejected. Answers after the first change nothing.
 */
export async function receiveInteractionAnswer(
  d: DB,
  r: InteractionRequestRow,
  approval: { accept: string; authorization: string } | null,
  t: number = now(),
): Promise<Effects> {
  if (r.state !== "pending") return {};
  const row = statement(
    d,
    d
      .update(interactionRequests)
      .set({
        state: approval ? "approved" : "rejected",
        acceptUri: approval?.accept ?? null,
        authorizationUri: approval?.authorization ?? null,
        updatedAt: t,
      })
      .where(and(eq(interactionRequests.id, r.id), eq(interactionRequests.state, "pending"))),
  );
  // The user hears of it on the post they interacted with: their reply, else the author's post.
  const about = r.kind === "reply" ? r.interactionId : r.statusId;
  const told = notify(d, {
    type: approval ? "interaction_approved" : "interaction_rejected",
    to: r.accountId,
    from: r.targetAccountId,
    statusId: about,
    at: t,
  });
  const events = [{ accountId: null, event: "status.update" as const, payload: about }];
  if (approval) {
    await d.$client.batch([row, told, ...approvedWrites(d, r, t)]);
    return { events, push: true };
  }
  if (r.kind === "announce") {
    // The boost goes (no Undo: it was never announced).
    const gone = await deleteStatuses(d, [r.interactionId], { silent: true, extra: [row, told] });
    return { ...gone.effects, events: gone.events, push: true };
  }
  await d.$client.batch([row, told, ...rejectedWrites(d, r)]);
  return { events, push: true };
}

/** Approved: the reply's Create or the boost's Announce to its whole audience (the like reached its author). */
function approvedWrites(d: DB, r: InteractionRequestRow, t: number): D1PreparedStatement[] {
  if (r.kind === "like") return [];
  const mine = eq(statuses.accountId, r.accountId);
  return [
    statement(
      d,
      d
        .update(statuses)
        .set({ approval: "approved" })
        .where(and(eq(statuses.id, r.interactionId), mine)),
    ),
    outboxWrite(d, r.accountId, { type: r.kind === "reply" ? "Create" : "Announce", statusId: r.interactionId }, t),
  ];
}

/** Rejected: the reply stays its author's, marked; the like goes. */
function rejectedWrites(d: DB, r: InteractionRequestRow): D1PreparedStatement[] {
  if (r.kind === "reply") return [markApproval(d, r.interactionId, "rejected")];
  return [
    statement(d, d.delete(favourites).where(eq(favourites.id, r.interactionId))),
    statement(d, recountFavourites(r.statusId)),
  ];
}
