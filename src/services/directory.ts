/** The profile directory (`GET /api/v1/directory`). */
import { and, desc, eq, isNull, ne, or, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, users } from "../db/schema";
import { withUser } from "./accounts";
import { notSilenced } from "./visibility";

/**
 * The profile directory (Pleroma's rule): discoverable, active accounts, newest activity (`active`) or newest
 * account (`new`) first, without the viewer and accounts the viewer blocks, mutes or whose domain they block.
 */
export function directory(
  d: DB,
  q: { viewerId: string | null; order: "active" | "new"; local: boolean; limit: number; offset: number },
) {
  // Unconfirmed local users are not active yet.
  const conds = [
    eq(accounts.discoverable, true),
    eq(accounts.deactivated, false),
    or(isNull(users.accountId), and(eq(users.confirmed, true), eq(users.approvalPending, false)))!,
  ];
  if (q.local) conds.push(isNull(accounts.domain));
  if (q.viewerId) conds.push(ne(accounts.id, q.viewerId), notSilenced(q.viewerId, false, accounts.id));
  const order =
    q.order === "new"
      ? [desc(accounts.createdAt), desc(accounts.id)]
      : [sql`${accounts.lastStatusAt} IS NULL`, desc(accounts.lastStatusAt), desc(accounts.id)];
  return withUser(d)
    .where(and(...conds))
    .orderBy(...order)
    .limit(q.limit)
    .offset(q.offset);
}
