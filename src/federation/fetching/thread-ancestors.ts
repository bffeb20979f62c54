/**
 * A remote thread's missing ancestors (issue 18): when a remote status is stored whose `inReplyTo` is not, its
 * parent is fetched (through the guarded loader, bounded in time), stored as a fetched status is
 * (`storeFetchedStatus`: the author must live on the object's origin and is resolved first; the object is
 * Fedify's only when its id is where it was fetched from), and linked; then its own parent, up to
 * `MAX_ANCESTORS` levels. Runs after the response (the inbox's waitUntil), so a sender never waits for it.
 * Each ancestor is stored under the storing rule's `requested` case: a local account has its reply in view.
 */
import { Article, Note, Question, type Object as APObject } from "@fedify/vocab";
import { sql } from "drizzle-orm";
import { db, statement, type DB } from "../../db/client";
import { federationContext } from "../federation";
import { guardedDocumentLoader, USER_AGENT } from "../door/loaders";
import { allowPrivateAddress } from "../../lib/outbound";
import { rejectedHost } from "../../services/federation-policies";
import { storeFetchedStatus, type ResolveEnv } from "./resolve";

/** Levels of ancestors fetched for one stored status. */
export const MAX_ANCESTORS = 5;
/** Time one ancestor's fetch may take. */
const FETCH_MS = 5_000;

/** The stored status `childId` replies to the status at `parentUri`: link them, and merge the child's thread into the parent's. */
function link(d: DB, childId: string, parentId: string): D1PreparedStatement[] {
  const child = sql`(SELECT thread_id FROM statuses WHERE id = ${childId})`;
  return [
    statement(
      d,
      sql`UPDATE statuses SET thread_id = (SELECT thread_id FROM statuses WHERE id = ${parentId}), context = (SELECT context FROM statuses WHERE id = ${parentId})
        WHERE thread_id = ${child} AND ${child} <> (SELECT thread_id FROM statuses WHERE id = ${parentId})`,
    ),
    statement(
      d,
      sql`UPDATE statuses SET in_reply_to_id = ${parentId}, in_reply_to_account_id = (SELECT account_id FROM statuses WHERE id = ${parentId})
        WHERE id = ${childId} AND in_reply_to_id IS NULL`,
    ),
  ];
}

/**
 * Fetches and stores the ancestors of stored status `childId`, whose parent is `parentUri`, at most `max` levels;
 * stops at the first one already stored (linking to it), at a local one, or at anything that cannot be fetched
 * or stored. Answers how many were stored. Never throws.
 */
export async function fetchAncestors(
  r: ResolveEnv,
  childId: string,
  parentUri: string,
  max = MAX_ANCESTORS,
): Promise<number> {
  const d = db(r.env);
  let stored = 0;
  let child = childId;
  let uri: string | null = parentUri;
  try {
    const ctx = await federationContext(r.env, r.base);
    const loader = guardedDocumentLoader(allowPrivateAddress(r.env), USER_AGENT);
    for (let level = 0; uri && level < max; level++) {
      const known = await d.get<{ id: string } | undefined>(sql`SELECT id FROM statuses WHERE uri = ${uri}`);
      if (known) {
        await d.$client.batch(link(d, child, known.id));
        break;
      }
      const target = new URL(uri);
      // This instance's own statuses are never fetched (a missing one is gone); nor a rejected domain's.
      if (target.origin === new URL(r.base).origin || rejectedHost(d, target.hostname)) break;
      const object: APObject | null = await ctx
        .lookupObject(uri, { documentLoader: loader, signal: AbortSignal.timeout(FETCH_MS) })
        .catch(() => null);
      if (
        !(object instanceof Note || object instanceof Article || object instanceof Question) ||
        object.id?.href !== uri
      )
        break;
      const parentId = await storeFetchedStatus(r, object);
      if (!parentId) break;
      await d.$client.batch(link(d, child, parentId));
      stored++;
      child = parentId;
      uri = object.replyTargetId?.href ?? null;
    }
  } catch (e) {
    console.warn("thread ancestors", parentUri, (e as Error)?.message ?? e);
  }
  return stored;
}
