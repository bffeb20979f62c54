/**
 * Profile changes of local accounts, as other servers see them: a change to anything the actor document shows
 * writes an `UpdateActor` outbox row (the whole actor, to the remote followers) in the same batch as the change.
 * Changes nobody else sees (settings, hidden counts, the settings store) send nothing.
 */
import type { DB } from "../db/client";
import type { accounts } from "../db/schema";
import { outboxWrite } from "./outbox";

type AccountRow = typeof accounts.$inferSelect;

/** The columns the actor document (src/federation/documents/local-actor.ts `localActor`) is made of. */
const SHOWN = [
  "displayName",
  "note",
  "avatar",
  "header",
  "fields",
  "emojis",
  "locked",
  "discoverable",
  "actorType",
  "alsoKnownAs",
  "url",
] as const;

/** Whether `changes` alter what the actor document of `before` shows. */
function profileChanged(before: AccountRow, changes: Partial<AccountRow>): boolean {
  return SHOWN.some((k) => k in changes && JSON.stringify(changes[k]) !== JSON.stringify(before[k]));
}

/** The outbox write announcing the change, to put in the change's own batch ([] when nothing shown changes). */
export function profileUpdateWrites(
  d: DB,
  before: AccountRow,
  changes: Partial<AccountRow>,
  t: number,
): D1PreparedStatement[] {
  if (before.domain !== null || !profileChanged(before, changes)) return [];
  return [outboxWrite(d, before.id, { type: "UpdateActor" }, t)];
}
