/**
 * Which local statuses federation may show, read for the anonymous viewer of the one visibility rule
 * (`visibleTo(null)`: public and unlisted statuses of active accounts) and narrowed to local ones: objects,
 * outbox pages and the featured collection. Followers-only, direct and list statuses are never served, signed
 * request or not (authorized fetch only narrows who reads the rest); local-only ones never leave this instance. Each read is ONE D1 round trip.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { isId } from "../db/ids";
import { hydrateWithParentUris, type Hydrated, type StatusRow } from "./hydrate";
import { accountPage, shown } from "./timelines";

/** Visibilities that federate unsigned. */
const SERVED_VISIBILITIES = ["public", "unlisted"] as const;
const NOT_SERVED = ["private", "direct", "list", "local"];
/** Items per outbox page (Mastodon's). */
const OUTBOX_PAGE = 20;
/** Pinned statuses are capped well below this (`MAX_PINNED`); featured is one unpaged collection. */
const FEATURED_MAX = 40;

export interface FederatedStatuses {
  h: Hydrated;
  parentUris: Map<string, string>;
  /** The ids served, in order. */
  ids: string[];
}

/** A status federation may serve: visible to anyone, written here, and (for a reblog) of a servable status. */
function servable(h: Hydrated, id: string): StatusRow | null {
  const s = h.statuses.get(id);
  if (!s || !h.visible.has(id) || !s.local || !(SERVED_VISIBILITIES as readonly string[]).includes(s.visibility))
    return null;
  if (!h.accounts.get(s.accountId) || h.accounts.get(s.accountId)!.account.domain !== null) return null;
  if (s.reblogOfId) {
    const o = h.statuses.get(s.reblogOfId);
    if (!o || !h.visible.has(o.id) || !(SERVED_VISIBILITIES as readonly string[]).includes(o.visibility)) return null;
  }
  return s;
}

async function load(d: DB, source: string[] | ReturnType<typeof accountPage>): Promise<FederatedStatuses> {
  const { h, parentUris } = await hydrateWithParentUris(d, source);
  const order = Array.isArray(source) ? source : h.page;
  return { h, parentUris, ids: order.filter((id) => servable(h, id)) };
}

/** One status by id (`/objects/<id>`, or a reblog at `/activities/<id>`), or null: 404. */
export async function federatedStatus(d: DB, id: string): Promise<FederatedStatuses | null> {
  if (!isId(id)) return null;
  const r = await load(d, [id]);
  return r.ids.length ? r : null;
}

/** A page of the account's outbox, newest first, by status id; `next` is the cursor of the page after it. */
export async function outboxPage(
  d: DB,
  accountId: string,
  maxId: string | undefined,
): Promise<FederatedStatuses & { next: string | null }> {
  const page = { limit: OUTBOX_PAGE, ...(maxId ? { max_id: maxId } : {}) };
  const r = await load(d, accountPage(null, accountId, page, { excludeVisibilities: NOT_SERVED }));
  return { ...r, next: r.h.page.length === OUTBOX_PAGE ? r.h.page[r.h.page.length - 1]! : null };
}

/** How many statuses the outbox holds (the same condition as its pages, uncapped). */
export async function outboxCount(d: DB, accountId: string): Promise<number> {
  const row = await d.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM statuses s WHERE s.account_id = ${accountId} AND s.local = 1 AND ${shown(null, { excludeVisibilities: NOT_SERVED, withMuted: true }, "account")}`,
  );
  return row?.n ?? 0;
}

/** How many of the account's pinned statuses federate. */
export async function featuredCount(d: DB, accountId: string): Promise<number> {
  const row = await d.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM statuses s WHERE s.account_id = ${accountId} AND s.local = 1 AND s.pinned_at IS NOT NULL AND s.reblog_of_id IS NULL AND ${shown(null, { excludeVisibilities: NOT_SERVED, withMuted: true }, "account")}`,
  );
  return row?.n ?? 0;
}

/** The account's pinned statuses that federate, most recently pinned first. */
export async function featuredStatuses(d: DB, accountId: string): Promise<FederatedStatuses> {
  return load(
    d,
    accountPage(
      null,
      accountId,
      { limit: FEATURED_MAX },
      { pinned: true, excludeReblogs: true, excludeVisibilities: NOT_SERVED },
    ),
  );
}
