/**
 * Registration with approval (issue 17): accounts registered while `account_approval_required` is on wait
 * (`users.approval_pending`) until an admin approves them; admins are mailed when one asks.
 */
import { and, eq, sql } from "drizzle-orm";
import { statement, type DB } from "../db/client";
import { accounts, users } from "../db/schema";

/** The e-mail addresses of active admins (told about accounts awaiting approval). */
export async function adminEmails(d: DB): Promise<string[]> {
  return emailsOf(await adminEmailsQuery(d));
}

/** `adminEmails` as a query, for a batch of reads (`emailsOf` its rows). */
export function adminEmailsQuery(d: DB) {
  return d
    .select({ email: users.email })
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(and(eq(users.isAdmin, true), eq(accounts.deactivated, false)))
    .limit(20);
}

export const emailsOf = (rows: { email: string }[]) => rows.map((r) => r.email).filter(Boolean);

/**
 * Approves local users awaiting approval (for the admin API's `PATCH /admin/users/approve`, ADMIN's lane): a
 * statement to put in the action's own batch with its moderation log entry (`approve`). Answers the ids' rows
 * it changed when run (RETURNING account_id).
 */
export function approveUsers(d: DB, accountIds: string[]): D1PreparedStatement {
  return statement(
    d,
    sql`UPDATE users SET approval_pending = 0
      WHERE approval_pending = 1 AND account_id IN (SELECT value FROM json_each(${JSON.stringify(accountIds)}))
      RETURNING account_id`,
  );
}
