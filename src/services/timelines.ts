/**
 * Timeline pages as SQL: each returns ONE query selecting the page's status ids, with every filter applied in
 * the query so a page is full after filtering (public and tag pages: within a bounded walk of their index,
 * `PUBLIC_WALK`). `hydrate` embeds it, so page + rendering data is one batch.
 * Each walks an index newest first: home_feed (owner, status), the partial public-timeline indexes,
 * status_tags (tag, status), statuses (account, id).
 */
import { sql, type SQL } from "drizzle-orm";
import { rawPage, type Page } from "../db/paging";
import { precompiled } from "../db/json-rows";
import { ME, NOW, notSilenced, paramsCte, visibleTo } from "./visibility";
import { accountMatch } from "./accounts";
import type { Hydrated } from "./hydrate";
import { anyRow, type DB } from "../db/client";

// Pages run inside the hydration statement, whose `params` CTE binds the viewer (ME) and the time (NOW).
// `viewerId` only chooses between the signed-in and anonymous forms of a query.

export interface TimelineFilters {
  withMuted?: boolean;
  excludeVisibilities?: string[];
  replyVisibility?: "following" | "self";
  onlyMedia?: boolean;
  local?: boolean;
  remote?: boolean;
  instance?: string;
}

const s = { id: sql`s.id`, accountId: sql`s.account_id`, visibility: sql`s.visibility` };
const o = { id: sql`o.id`, accountId: sql`o.account_id`, visibility: sql`o.visibility` };

/**
 * Conditions on `s` (the status or reblog) for what the viewer may see and wants to see. `viewer` is how the
 * statement refers to the viewer: `ME` in pages, a listener's column when publishing to streams.
 */
export function shown(viewer: SQL | null, f: TimelineFilters, context: "home" | "public" | "thread" | "account"): SQL {
  const parts: SQL[] = [
    visibleTo(viewer, s),
    notSilenced(viewer, f.withMuted ?? false, sql`s.account_id`),
    // A reblog shows only if its original may be seen too, and its author is not silenced either.
    sql`(s.reblog_of_id IS NULL OR EXISTS (SELECT 1 FROM statuses o WHERE o.id = s.reblog_of_id AND ${visibleTo(viewer, o)} AND ${notSilenced(viewer, f.withMuted ?? false, sql`o.account_id`)}))`,
  ];
  if (viewer) {
    parts.push(
      sql`NOT EXISTS (SELECT 1 FROM thread_mutes tm WHERE tm.account_id = ${viewer} AND tm.thread_id = s.thread_id AND (tm.expires_at IS NULL OR tm.expires_at > ${NOW}))`,
    );
    if (context === "home") parts.push(notFilteredOut(viewer, "home", NOW));
  }
  if (f.excludeVisibilities?.length)
    parts.push(sql`s.visibility NOT IN (SELECT value FROM json_each(${JSON.stringify(f.excludeVisibilities)}))`);
  if (f.onlyMedia) parts.push(sql`s.has_media = 1`);
  if (f.local) parts.push(sql`s.local = 1`);
  if (f.remote) parts.push(sql`s.local = 0`);
  if (f.instance) parts.push(sql`s.account_id IN (SELECT id FROM accounts WHERE domain = ${f.instance.toLowerCase()})`);
  if (f.replyVisibility && viewer) {
    const toFollowed =
      f.replyVisibility === "following"
        ? sql`OR EXISTS (SELECT 1 FROM follows rf WHERE rf.account_id = ${viewer} AND rf.target_account_id = s.in_reply_to_account_id)`
        : sql``;
    parts.push(
      sql`(s.in_reply_to_id IS NULL OR s.in_reply_to_account_id = ${viewer} OR s.in_reply_to_account_id = s.account_id ${toFollowed})`,
    );
  }
  return sql.join(parts, sql` AND `);
}

/**
 * `shown` for the page statements (viewer `ME`, or anonymous): the same text for every request with the same
 * flags, so it is built once; filters that bind values (`exclude_visibilities`, `instance`) are built each time.
 */
function shownInPage(signedIn: boolean, f: TimelineFilters, context: "home" | "public" | "thread" | "account"): SQL {
  const viewer = signedIn ? ME : null;
  if (f.excludeVisibilities?.length || f.instance) return shown(viewer, f, context);
  const flags = [f.withMuted, f.replyVisibility, f.onlyMedia, f.local, f.remote].map((x) => String(x ?? "")).join(",");
  return precompiled(`shown ${signedIn ? "me" : "anonymous"} ${context} ${flags}`, () => shown(viewer, f, context));
}

/**
 * Irreversible filters of a context drop matching statuses outright: by any keyword (a whole-word keyword must
 * stand between non-alphanumeric characters: GLOB with the keyword's own GLOB characters escaped) or by naming
 * the status.
 */
function notFilteredOut(viewer: SQL, context: "home" | "notifications", now: SQL, status: SQL = sql`s`): SQL {
  const body = sql`lower(' ' || ${status}.spoiler_text || ' ' || CASE WHEN ${status}.text <> '' THEN ${status}.text ELSE ${status}.content END || ' ')`;
  const phrase = sql`lower(replace(replace(replace(kk.keyword, '[', '[[]'), '*', '[*]'), '?', '[?]'))`;
  const inForce = sql`kf.account_id = ${viewer} AND kf.irreversible = 1 AND (kf.expires_at IS NULL OR kf.expires_at > ${now})
    AND EXISTS (SELECT 1 FROM json_each(kf.context) WHERE value = ${sql.raw(`'${context}'`)})`;
  // The viewer's filters are walked per status only when one of them is irreversible (read once per statement
  // where the viewer is bound once): most viewers' filters only mark statuses, and walking them cost a row each.
  // Keywords per user are capped (services/filters.ts); a named status is one probe of `filter_statuses_status`.
  return sql`CASE WHEN EXISTS (SELECT 1 FROM filters kfv WHERE kfv.account_id = ${viewer} AND kfv.irreversible = 1) THEN NOT EXISTS (SELECT 1 FROM filters kf JOIN filter_keywords kk ON kk.filter_id = kf.id WHERE ${inForce}
    AND CASE WHEN kk.whole_word THEN ${body} GLOB '*[^a-z0-9]' || ${phrase} || '[^a-z0-9]*'
             ELSE instr(${body}, lower(kk.keyword)) > 0 END)
    AND NOT EXISTS (SELECT 1 FROM filter_statuses ks JOIN filters kf ON kf.id = ks.filter_id WHERE ks.status_id = ${status}.id AND ${inForce}) ELSE 1 END`;
}

/** Members up to which a list's page is walked member by member rather than along the owner's whole home feed. */
const LIST_WALK_MEMBERS = 8;

/**
 * A list's part of the owner's home feed. Walking the feed and keeping the members' statuses reads the whole
 * feed between two of them: a list of a few quiet accounts among hundreds followed read thousands of rows a page.
 * A small list is walked member by member instead (each member's newest statuses on `statuses_account` that are
 * in the owner's feed, at most a page each: about 160 rows a member, where the feed walk costs about 40 rows per
 * page for each 1/m of the feed the list is, so the walks cost the same near m = sqrt(followed / 4): 8 for 300
 * followed accounts); a bigger list is a share of the feed large enough for the feed walk to stay short. Which walk runs is chosen by their LIMITs (0 for the other one),
 * which SQLite evaluates before walking anything; the list's size is one probe past the threshold, not a count.
 */
function listFeed(listId: string, walkFeed: (limit: SQL) => SQL, kept: SQL, order: SQL, n: SQL): SQL {
  const small = sql`NOT EXISTS (SELECT 1 FROM list_accounts lc WHERE lc.list_id = ${listId} LIMIT 1 OFFSET ${LIST_WALK_MEMBERS})`;
  const perMember = sql`SELECT q.id AS id FROM list_accounts la JOIN statuses q ON q.id IN (
      SELECT s.id FROM statuses s JOIN home_feed h ON h.account_id = ${ME} AND h.status_id = s.id
      WHERE s.account_id = la.account_id AND ${kept} ORDER BY ${order} LIMIT ${n})
    WHERE la.list_id = ${listId} AND EXISTS (SELECT 1 FROM lists l WHERE l.id = ${listId} AND l.account_id = ${ME})
    LIMIT CASE WHEN ${small} THEN ${n} * ${LIST_WALK_MEMBERS} ELSE 0 END`;
  return sql`SELECT * FROM (${perMember}) UNION ALL SELECT * FROM (${walkFeed(sql`CASE WHEN ${small} THEN 0 ELSE ${n} END`)})`;
}

/** Pages of a followed tag's public posts looked at per home read (see `homePage`). */
const TAG_WALK = 4;

/** The viewer's home page; with `listId`, of that list's members, if the list is the viewer's. */
export function homePage(page: Page, f: TimelineFilters, listId?: string): SQL {
  const fed = rawPage(sql`h.status_id`, page);
  const pend = rawPage(sql`s.id`, page);
  const n = fed.limit;
  const shownHere = shownInPage(true, f, "home");
  // Unfollowing takes effect at once: a status stays only while its author is followed (or the group that
  // brought it: federation/listening/group-posts.ts), or it is yours or addressed to you.
  // The author is looked up alone first (one index entry found), the status's own account only when another
  // brought it: an IN list of both costs a row more per status.
  const stillFollowed = sql`(s.account_id = ${ME}
    OR EXISTS (SELECT 1 FROM follows hf WHERE hf.account_id = ${ME} AND hf.target_account_id = h.author_id)
    OR (h.author_id <> s.account_id AND EXISTS (SELECT 1 FROM follows hs WHERE hs.account_id = ${ME} AND hs.target_account_id = s.account_id))
    OR EXISTS (SELECT 1 FROM status_recipients hr WHERE hr.status_id = s.id AND hr.account_id = ${ME}))`;
  const members = (col: SQL) =>
    listId
      ? sql`AND EXISTS (SELECT 1 FROM list_accounts la WHERE la.list_id = ${listId} AND la.account_id = ${col}) AND EXISTS (SELECT 1 FROM lists l WHERE l.id = ${listId} AND l.account_id = ${ME})`
      : sql``;
  const walkFeed = (limit: SQL) => sql`SELECT h.status_id AS id FROM home_feed h JOIN statuses s ON s.id = h.status_id
    WHERE h.account_id = ${ME} AND ${fed.where} ${members(sql`h.author_id`)} AND ${stillFollowed} AND ${shownHere}
    ORDER BY ${fed.order} LIMIT ${limit}`;
  const fromFeed = listId
    ? listFeed(listId, walkFeed, sql`${pend.where} AND ${stillFollowed} AND ${shownHere}`, pend.order, n)
    : walkFeed(n);
  // Statuses of accounts with many followers are pulled: for each followed account, its newest pulled
  // statuses that pass the filters, at most a page, walked on the partial index. Filtering inside the per-account
  // walk keeps paging exact (nothing is skipped between pages).
  // Only the few accounts marked as pulled are visited (`accounts_home_pull`), each looked up among the reader's
  // follows by its pair: probing every followed account cost ~3 rows each on every read, an empty poll included.
  const pulled = sql`SELECT q.id AS id FROM accounts pa CROSS JOIN follows pf JOIN statuses q ON q.id IN (
      SELECT s.id FROM statuses s WHERE s.home_pull = 1 AND s.account_id = pf.target_account_id
        AND (s.reblog_of_id IS NULL OR pf.show_reblogs = 1) AND ${pend.where} AND ${shownHere}
      ORDER BY ${pend.order} LIMIT ${n})
    WHERE pa.home_pull = 1 AND pf.account_id = ${ME} AND pf.target_account_id = pa.id ${members(sql`pf.target_account_id`)}`;
  // Followed hashtags (not in lists, as Mastodon): each tag's newest public posts that pass the filters, at most a
  // page, walked on `status_tags_tag` (followed_tags.ts bounds their number). The walk itself is bounded too: only
  // the tag's newest TAG_WALK pages of public posts are looked at, so posts the reader may not see (a flood by a
  // blocked author or domain) cost a bounded number of checks, at worst leaving the tag's posts out of this page.
  const tagged = rawPage(sql`st.status_id`, page);
  const followedTags = listId
    ? sql``
    : sql`UNION SELECT * FROM (SELECT q.id AS id FROM followed_tags ft JOIN statuses q ON q.id IN (
      SELECT s.id FROM statuses s WHERE s.id IN (
        SELECT st.status_id FROM status_tags st JOIN statuses ts ON ts.id = st.status_id
        WHERE st.tag = ft.tag AND ts.reblog_of_id IS NULL AND ts.visibility IN ('public', 'local') AND ${tagged.where}
        ORDER BY ${tagged.order} LIMIT ${n} * ${TAG_WALK})
      AND ${shownHere} ORDER BY ${rawPage(sql`s.id`, page).order} LIMIT ${n})
    WHERE ft.account_id = ${ME})`;
  return sql`SELECT id FROM (SELECT * FROM (${fromFeed}) UNION SELECT * FROM (${pulled}) ${followedTags}) ORDER BY ${rawPage(sql`id`, page).order} LIMIT ${n}`;
}

/**
 * Direct statuses the viewer wrote or is addressed in: the viewer's own statuses (`statuses_account`) and those
 * addressed to them (`status_recipients_account`), each walked newest first, merged.
 */
export function directPage(page: Page, f: TimelineFilters): SQL {
  const own = rawPage(sql`s.id`, page);
  const addressed = rawPage(sql`r.status_id`, page);
  const n = own.limit;
  const shownHere = shownInPage(true, f, "thread");
  const mine = sql`SELECT s.id AS id FROM statuses s
    WHERE s.account_id = ${ME} AND s.visibility = 'direct' AND s.reblog_of_id IS NULL AND ${own.where} AND ${shownHere}
    ORDER BY ${own.order} LIMIT ${n}`;
  const toMe = sql`SELECT r.status_id AS id FROM status_recipients r JOIN statuses s ON s.id = r.status_id
    WHERE r.account_id = ${ME} AND ${addressed.where} AND s.visibility = 'direct' AND s.reblog_of_id IS NULL AND ${shownHere}
    ORDER BY ${addressed.order} LIMIT ${n}`;
  return sql`SELECT id FROM (SELECT * FROM (${mine}) UNION SELECT * FROM (${toMe})) ORDER BY ${rawPage(sql`id`, page).order} LIMIT ${n}`;
}

/**
 * Index entries a public or tag page looks at per status it answers. The index holds every public status ever
 * stored; the filters it cannot answer (the audience, `exclude_visibilities`, `only_media`, `remote`, `instance`,
 * blocks and mutes) are checked on these entries only, so a filter matching little costs a bounded walk, not the
 * whole index. A page that comes back short after a cut walk links past it (`walkEnd`), so paging goes on.
 */
const PUBLIC_WALK = 4;

/** A page that reads nothing (one the audience may see nothing of). */
const NOTHING = sql`SELECT id FROM statuses WHERE 0`;

/** Whether `exclude_visibilities` leaves out all a public page could show its viewer. */
function audienceExcluded(viewerId: string | null, f: TimelineFilters): boolean {
  const seen = viewerId ? ["public", "local"] : ["public"];
  return seen.every((v) => f.excludeVisibilities?.includes(v));
}

/**
 * The public index's newest `n × PUBLIC_WALK` entries past the page's cursor (oldest first for `min_id`), with
 * only the conditions the partial index itself answers; `last` picks the walk's last entry instead.
 */
function publicWalk(page: Page, f: TimelineFilters, last = false): SQL {
  const p = rawPage(sql`w.id`, page);
  // Without statistics SQLite may pick an index it then has to sort; the partial index walks ids in order. The
  // remote-only timeline walks them all past the local ones (few next to remote ones: no index for remote rows
  // to pay for).
  const index = sql.raw(f.local ? "statuses_local_tl" : "statuses_public_tl");
  return sql`SELECT w.id FROM statuses w INDEXED BY ${index}
    WHERE w.reblog_of_id IS NULL AND w.visibility IN ('public', 'local') ${f.local ? sql`AND w.local = 1` : sql``} AND ${p.where}
    ORDER BY ${p.order} ${walkLimit(page, last)}`;
}

/** A tag's newest `n × PUBLIC_WALK` entries on `status_tags_tag` past the page's cursor (see `publicWalk`). */
function tagWalk(tag: string, page: Page, last = false): SQL {
  const p = rawPage(sql`st.status_id`, page);
  return sql`SELECT st.status_id AS id FROM status_tags st WHERE st.tag = ${tag.toLowerCase()} AND ${p.where}
    ORDER BY ${p.order} ${walkLimit(page, last)}`;
}

function walkLimit(page: Page, last: boolean): SQL {
  const n = Math.trunc(page.limit) * PUBLIC_WALK;
  return sql.raw(last ? `LIMIT 1 OFFSET ${n - 1}` : `LIMIT ${n}`);
}

/** The walked entries that pass the page's filters, in the page's order (the walk is read in order, unsorted). */
function walked(viewerId: string | null, walk: SQL, page: Page, f: TimelineFilters, more: SQL): SQL {
  const p = rawPage(sql`s.id`, page);
  const audience = viewerId ? sql`` : sql`AND s.visibility = 'public'`;
  return sql`SELECT s.id FROM statuses s
    WHERE s.id IN (${walk}) ${more} ${audience} AND ${shownInPage(Boolean(viewerId), f, "public")}
    ORDER BY ${p.order} LIMIT ${p.limit}`;
}

/** Public statuses, and local-only ones for signed-in viewers; never unlisted; no reblogs. */
export function publicPage(viewerId: string | null, page: Page, f: TimelineFilters): SQL {
  if (audienceExcluded(viewerId, f)) return NOTHING;
  return walked(viewerId, publicWalk(page, f), page, f, f.remote ? sql`AND s.local = 0` : sql``);
}

export function tagPage(viewerId: string | null, tag: string, page: Page, f: TimelineFilters): SQL {
  if (audienceExcluded(viewerId, f)) return NOTHING;
  const indexed = sql`AND s.reblog_of_id IS NULL AND s.visibility IN ('public', 'local')`;
  return walked(viewerId, tagWalk(tag, page), page, f, indexed);
}

/**
 * Where a public or tag page's walk stopped, when it was cut before the index ran out: the cursor past it for a
 * page that came back short (`older` for newest-first pages, `newer` for `min_id` ones). One probe of the walk's
 * last entry, index only; asked only of short pages.
 */
export async function walkEnd(
  d: DB,
  viewerId: string | null,
  page: Page,
  f: TimelineFilters,
  tag?: string,
): Promise<{ older?: string; newer?: string }> {
  if (audienceExcluded(viewerId, f)) return {};
  const probe = tag === undefined ? publicWalk(page, f, true) : tagWalk(tag, page, true);
  const id = (await d.all<{ id: string }>(probe))[0]?.id;
  if (id === undefined) return {};
  return page.min_id ? { newer: id } : { older: id };
}

/** Further walks a public or tag page may take past a cut walk that found too little (each: one read, one probe). */
const WALK_ROUNDS = 4;

/**
 * A public or tag page that came back empty (or short when read with `since_id` / `min_id`, which a client takes
 * as caught up) after its walk was cut, walked on from where the walk stopped, at most WALK_ROUNDS more times:
 * a client that pages by the last status it holds (Mastodon's web app, Pleroma-FE) rather than by the Link header
 * gets past a run of statuses it does not see (a muted bot's). `ids`: what the page found, newest first. Returns
 * the page's ids and, when still short after a cut walk, where it stopped (`walkEnd`).
 */
export async function walkOn(
  d: DB,
  viewerId: string | null,
  page: Page,
  f: TimelineFilters,
  ids: string[],
  tag?: string,
): Promise<{ ids: string[]; past: { older?: string; newer?: string } }> {
  const enough = (n: number) => (page.since_id || page.min_id ? n >= page.limit : n > 0);
  // An instance no account here is on: nothing further to find (else a stranger's cheapest way to make every
  // page walk all its rounds).
  if (f.instance && !ids.length && !(await anyRow(d, sql`accounts WHERE domain = ${f.instance.toLowerCase()}`)))
    return { ids, past: {} };
  let past = ids.length < page.limit ? await walkEnd(d, viewerId, page, f, tag) : {};
  let found = ids;
  let at = page;
  for (let round = 0; round < WALK_ROUNDS && !enough(found.length) && (past.older ?? past.newer); round++) {
    at = page.min_id ? { ...at, min_id: past.newer } : { ...at, max_id: past.older };
    const next = tag === undefined ? publicPage(viewerId, at, f) : tagPage(viewerId, tag, at, f);
    const rows = await d.all<{ id: string }>(sql`WITH ${paramsCte(viewerId)} ${next}`);
    const more = rows.map((r) => r.id).sort((a, b) => (a < b ? 1 : -1));
    // Newest first: a min_id page keeps the oldest of what it found, the others the newest.
    found = page.min_id ? [...more, ...found].slice(-page.limit) : [...found, ...more].slice(0, page.limit);
    past = found.length < page.limit ? await walkEnd(d, viewerId, at, f, tag) : {};
  }
  return { ids: found, past };
}

export interface AccountStatusFilters extends TimelineFilters {
  excludeReplies?: boolean;
  excludeReblogs?: boolean;
  tagged?: string;
  pinned?: boolean;
}

/**
 * The account whose statuses a page shows, read in the page's statement (`HydrateOptions`): a `target` CTE for
 * `accountPage`, and a `target` row when it is found. A deactivated account is found only by itself.
 */
export function targetAccount(idOrNickname: string, localHost: string) {
  return {
    ctes: sql`target(id) AS MATERIALIZED (SELECT id FROM accounts WHERE ${accountMatch(idOrNickname, localHost)} AND (deactivated = 0 OR id = ${ME}))`,
    parts: [sql`SELECT 'target' AS k, json_object('id', id) AS v FROM target`],
    id: sql`(SELECT id FROM target)`,
    found: (h: Hydrated) => h.extra.has("target"),
  };
}

export function accountPage(
  viewerId: string | null,
  accountId: string | SQL,
  page: Page,
  f: AccountStatusFilters,
): SQL {
  const p = rawPage(sql`s.id`, page);
  const extra: SQL[] = [];
  // Replies to others are left out; a thread of one's own stays.
  if (f.excludeReplies) extra.push(sql`(s.in_reply_to_id IS NULL OR s.in_reply_to_account_id = s.account_id)`);
  if (f.excludeReblogs) extra.push(sql`s.reblog_of_id IS NULL`);
  if (f.tagged)
    extra.push(
      sql`EXISTS (SELECT 1 FROM status_tags tt WHERE tt.status_id = s.id AND tt.tag = ${f.tagged.toLowerCase()})`,
    );
  if (f.pinned) extra.push(sql`s.pinned_at IS NOT NULL`);
  const more = extra.length ? sql`AND ${sql.join(extra, sql` AND `)}` : sql``;
  // Visiting a profile shows it even when muted; blocks still hold.
  return sql`SELECT s.id FROM statuses s
    WHERE s.account_id = ${accountId} AND ${p.where} ${more} AND ${shownInPage(Boolean(viewerId), { ...f, withMuted: true }, "account")}
    ORDER BY ${f.pinned ? sql`s.pinned_at DESC` : p.order} LIMIT ${p.limit}`;
}
