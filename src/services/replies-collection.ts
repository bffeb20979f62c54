/**
 * The `replies` collection of a local status (`/objects/<id>/replies`), as Mastodon's RepliesController serves
 * it: a `Collection` whose `first` is a `CollectionPage` of reply ids (`items`) with a `next` page. Only what may
 * be seen anonymously is listed, of a status that is served itself: the replies (local or remote) visible to
 * anyone (public and unlisted, authors active: the one visibility rule), oldest first, paged by status id.
 */
import { sql } from "drizzle-orm";
import { statement, type DB } from "../db/client";
import { isId } from "../db/ids";
import { visibleTo } from "./visibility";

/** Reply ids per page (Mastodon's DESCENDANTS_LIMIT for a page is 60; its pages hold far fewer). */
const REPLIES_PAGE = 20;

const anonymous = visibleTo(null, { id: sql`s.id`, accountId: sql`s.account_id`, visibility: sql`s.visibility` });

/**
 * One page of the replies of local status `id` after reply id `after` (null: the first), or null when the status is
 * not served (unknown, not local, not visible to anyone, a reblog). One round trip.
 */
export async function repliesPage(
  d: DB,
  id: string,
  after: string | null,
): Promise<{ items: string[]; next: string | null } | null> {
  if (!isId(id) || (after !== null && !isId(after))) return null;
  const [parent, replies] = await d.$client.batch<{ uri: string; id: string }>([
    statement(
      d,
      sql`SELECT s.id, s.uri FROM statuses s WHERE s.id = ${id} AND s.local = 1 AND s.reblog_of_id IS NULL AND ${anonymous}`,
    ),
    statement(
      d,
      sql`SELECT s.id, s.uri FROM statuses s WHERE s.in_reply_to_id = ${id} AND s.reblog_of_id IS NULL AND s.id > ${after ?? ""} AND ${anonymous}
        ORDER BY s.id LIMIT ${REPLIES_PAGE + 1}`,
    ),
  ]);
  if (!parent!.results.length) return null;
  const rows = replies!.results.slice(0, REPLIES_PAGE);
  return {
    items: rows.map((r) => r.uri),
    next: replies!.results.length > REPLIES_PAGE ? rows[rows.length - 1]!.id : null,
  };
}
