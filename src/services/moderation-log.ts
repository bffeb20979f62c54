/**
 * Recording what staff did (the admin API's moderation log). The entry is a statement to put in the action's
 * own batch, so an action is never done without its entry nor logged without being done.
 */
import { statement, type DB } from "../db/client";
import { newId } from "../db/ids";
import { moderationLog as log } from "../db/schema";

/**
 * `action` names what was done in Pleroma's words (`deactivate`, `report_update`, `updated_users`…); `data` holds
 * its subject as it was then (ids, nicknames, values), for the log's message after the subject is gone.
 */
export function moderationLog(d: DB, actorId: string, action: string, data: Record<string, unknown>, t: number) {
  return statement(d, d.insert(log).values({ id: newId(t), actorId, action, data, createdAt: t }));
}
