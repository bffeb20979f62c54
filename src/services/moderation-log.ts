/**
 * Recording what staff did (the admin API's moderation log). The entry is a statement to put in the action's
 * own batch, so an action is never done without its entry nor logged without being done.
 */
import { statement, type DB } from "../db/client";
import { newId } from "../db/ids";
import { sql, type SQL } from "drizzle-orm";

/** The staff member who acted. */
export interface Actor {
  id: string;
  username: string;
}

/** Pleroma's `user_to_map`: how the log names a user, kept as it was when the action was done. */
export const userRef = (a: { id: string; username: string; domain?: string | null }) => ({
  id: a.id,
  nickname: a.domain ? `${a.username}@${a.domain}` : a.username,
  type: "user",
});

/**
 * The entry of an action, with Pleroma's `data`: the actor (by nickname as of now), the action in Pleroma's words
 * (`deactivate`, `report_update`, `config_update`…), its subject as it was then (ids, nicknames, values), and the
 * message, so the log still reads right after the subject is gone.
 */
export function logEntry(
  d: DB,
  actor: Actor,
  action: string,
  data: Record<string, unknown>,
  message: string,
  t: number,
  opts: { onlyIf?: SQL } = {},
) {
  const entry = JSON.stringify({ actor: userRef(actor), action, ...data, message });
  // `onlyIf`: a condition the action's batch makes true only when the action took place (the row it changes exists).
  return statement(
    d,
    sql`INSERT INTO moderation_log (id, actor_id, action, data, created_at) SELECT ${newId(t)}, ${actor.id}, ${action}, ${entry}, ${t} WHERE ${opts.onlyIf ?? sql`1`}`,
  );
}
