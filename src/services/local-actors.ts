/** Local accounts as federation names them: by nickname (actor ids, WebFinger, collections). */
import { and, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts } from "../db/schema";

/** A local account by nickname, case-insensitively (as WebFinger and the client API look nicknames up). */
export async function localAccount(d: DB, username: string) {
  return (
    (await d
      .select()
      .from(accounts)
      .where(and(sql`${accounts.acctKey} = lower(${username})`, sql`${accounts.domain} IS NULL`))
      .get()) ?? null
  );
}

/** The actor id of the account an account moved to. */
export async function movedToUri(d: DB, id: string): Promise<URL | null> {
  const row = await d
    .select({ uri: accounts.uri })
    .from(accounts)
    .where(sql`${accounts.id} = ${id}`)
    .get();
  return row ? new URL(row.uri) : null;
}
