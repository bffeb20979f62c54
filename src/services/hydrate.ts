/**
 * Loads everything needed to render a set of statuses for a viewer in ONE D1 round trip: the statuses and the
 * ones they reblog, authors and mentioned accounts, tags, media, polls and votes, the viewer's favourites,
 * reblogs, bookmarks, thread mutes and conversation participations, emoji reactions, applications, cards,
 * parent visibility and custom emojis. One round trip whatever the page size; in D1 rows, about three per status
 * (the status, read twice, and its author) plus what it has (media, poll, mentions...), see `hydrationQuery`.
 */
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import { columnOf, fromJson, jsonObject, precompiled, unionAll } from "../db/json-rows";
import type { DB } from "../db/client";
import { newestFirst } from "../db/ids";
import { statement } from "../db/client";
import {
  accounts,
  apps,
  customEmojis,
  filterKeywords,
  filters,
  filterStatuses,
  mediaAttachments,
  polls,
  quotes,
  statuses,
  tokens,
  userColumns,
  users,
} from "../db/schema";
import type { TokenFound } from "../http/auth";
import type { AccountWithUser } from "./accounts";
import type { Filter } from "./filters";
import { ME, NOW, notSilenced, notSilencedByLists, paramsCte, visibleTo } from "./visibility";
import { REACTION_ACCOUNTS_MAX } from "./reaction-limits";

export type StatusRow = typeof statuses.$inferSelect;

/** `users` columns outside the `userColumns` allowlist: they stay in the database. */
const visibleUserColumns = new Set<unknown>(Object.values(userColumns));
const SECRETS = Object.values(getTableColumns(users))
  .filter((col) => !visibleUserColumns.has(col))
  .map((col) => col.name);
/**
 * Account columns no rendering reads (federation keys and endpoints): left out of hydration, whose rows come
 * back as null for them. A public key alone is a few hundred bytes per account on every page.
 */
const UNRENDERED_ACCOUNT_COLUMNS = ["public_key", "inbox_url", "shared_inbox_url", "outbox_url", "followers_url"];
export type MediaRow = typeof mediaAttachments.$inferSelect;
export type PollRow = typeof polls.$inferSelect;
export type EmojiRow = typeof customEmojis.$inferSelect;
export type QuoteRow = typeof quotes.$inferSelect;

export interface Hydrated {
  viewerId: string | null;
  /** With a page query as the source: the page's ids, newest first. */
  page: string[];
  /** The loaded statuses the viewer may see: the renderer shows no other. */
  visible: Set<string>;
  statuses: Map<string, StatusRow>;
  /** Without their federation keys and endpoints (`UNRENDERED_ACCOUNT_COLUMNS`, null here). */
  accounts: Map<string, AccountWithUser>;
  mentions: Map<string, string[]>;
  tags: Map<string, string[]>;
  media: Map<string, MediaRow[]>;
  polls: Map<string, PollRow>;
  pollCounts: Map<string, Map<number, number>>;
  pollVoters: Map<string, number>;
  ownVotes: Map<string, number[]>;
  favourited: Set<string>;
  bookmarked: Set<string>;
  reblogged: Set<string>;
  mutedThreads: Set<string>;
  /** Per status, its reactions the viewer may see; `accountIds`: the first REACTION_ACCOUNTS_MAX reactors each. */
  reactions: Map<string, { name: string; count: number; me: boolean; accountIds: string[] }[]>;
  apps: Map<string, { name: string; website: string | null }>;
  cards: Map<string, Record<string, unknown> | null>;
  visibleParents: Set<string>;
  participations: Map<string, string>;
  /** The custom emoji named by the loaded reactions, by reaction name (`shortcode`, or `shortcode@domain` for another server's). */
  emojis: Map<string, EmojiRow>;
  /** The viewer asked for statuses without rich text (Pleroma's `no_rich_text`). */
  plainText: boolean;
  /** The viewer's filters in force (rendered as `filtered` where they match). */
  filters: Filter[];
  /** The quote each loaded quoting status makes (its quoted status, when stored, is loaded too). */
  quotes: Map<string, QuoteRow>;
  /** Loaded statuses whose author the viewer follows, among those only followers may quote. */
  followsAuthor: Set<string>;
  /** Every row read, parsed, by kind: the caller's own parts (`HydrateOptions.parts`) are read from here. */
  extra: Map<string, any[]>;
}

/**
 * What a route reads alongside the page in the same statement: CTEs the page may use (placed before it, after
 * `params`), and parts tagged with kinds of its own (their rows come back in `Hydrated.extra`): a list's owner,
 * the account whose statuses these are, a page of notifications and what they name.
 */
export interface HydrateOptions {
  withMuted?: boolean;
  ctes?: SQL;
  parts?: SQL[];
}

/**
 * `source` is either status ids, or a query selecting one column of status ids (a timeline page). Everything is
 * read by ONE statement: one row per status shown (the page's, those they reblog and those these quote), each
 * with all it shows (see `statusesPart`), plus a few tagged rows of other kinds (`UNION ALL`), so the cost is
 * one round trip whatever the page holds.
 */
export async function hydrate(
  d: DB,
  source: string[] | SQL,
  viewerId: string | null,
  opts: HydrateOptions = {},
): Promise<Hydrated> {
  const q = hydrationQuery(source, viewerId, opts);
  const rows = await d.all<{ k: string; v: string }>(sql`${q.preamble} ${unionAll(q.parts)}`);
  return fromRows(rows, viewerId);
}

/**
 * `hydrate` for the anonymous viewer plus the uri of each loaded status's parent (ActivityPub `inReplyTo`, which
 * names the parent whatever its visibility), in the same one statement: federation's objects and outbox pages.
 */
export async function hydrateWithParentUris(
  d: DB,
  source: string[] | SQL,
): Promise<{ h: Hydrated; parentUris: Map<string, string> }> {
  // From the loaded statuses, each parent looked up by its key, in that order (CROSS JOIN: left to right). Left to
  // the planner, an `IN (…)` over them walked every status, and a join every reply.
  const parents = sql`SELECT 'parentUri' AS k, json_object('id', p.id, 'uri', p.uri) AS v FROM loaded ll
    CROSS JOIN statuses ls ON ls.id = ll.id CROSS JOIN statuses p ON p.id = ls.in_reply_to_id`;
  // A local reply's or boost's approval by a remote author (issue 49): what its document carries.
  const approvals = sql`SELECT 'approval' AS k, json_object('id', ir.interaction_id, 'authorization', ir.authorization_uri, 'accept', ir.accept_uri) AS v
    FROM loaded ll CROSS JOIN interaction_requests ir ON ir.interaction_id = ll.id WHERE ir.state = 'approved'`;
  const q = hydrationQuery(source, null, { parts: [parents, approvals] }, true);
  const h = fromRows(await d.all<{ k: string; v: string }>(sql`${q.preamble} ${unionAll(q.parts)}`), null);
  const parentUris = new Map((h.extra.get("parentUri") ?? []).map((o: { id: string; uri: string }) => [o.id, o.uri]));
  return { h, parentUris };
}

/**
 * Hydration for a viewer known only by a bearer token: the same single statement also reads the token (with its
 * app, account and user), so the request costs one round trip. The caller checks the token before using the
 * result, and sets `viewerId` from it.
 *
 * `knownAccountId`: the account this token was found to belong to before (see `tokenAccount`), bound as the
 * viewer rather than read from the token at every place the statement names the viewer (a row read each). The
 * token is still read and checked: a revoked or expired token answers no `auth` row, and the caller discards
 * the result; a token's account never changes.
 */
export async function hydrateForToken(
  d: DB,
  source: SQL,
  tokenHash: string,
  opts: HydrateOptions = {},
): Promise<{ h: Hydrated; token: TokenFound | null }> {
  const known = tokenAccounts.get(tokenHash);
  const q = hydrationQuery(source, known ?? { tokenHash }, opts);
  const t = Date.now();
  const authPart = sql`SELECT 'auth' AS k, json_object('token', ${jsonObject(tokens, "tk")}, 'app', CASE WHEN ap.id IS NULL THEN NULL ELSE ${jsonObject(apps, "ap")} END,
      'account', CASE WHEN a.id IS NULL THEN NULL ELSE ${jsonObject(accounts, "a")} END, 'user', CASE WHEN u.account_id IS NULL THEN NULL ELSE ${jsonObject(users, "u", SECRETS)} END) AS v
    FROM tokens tk LEFT JOIN apps ap ON ap.id = tk.app_id LEFT JOIN accounts a ON a.id = tk.account_id LEFT JOIN users u ON u.account_id = tk.account_id
    WHERE tk.token_hash = ${tokenHash} AND tk.expires_at > ${t}`;
  const rows = await d.all<{ k: string; v: string }>(sql`${q.preamble} ${unionAll([...q.parts, authPart])}`);
  const found = rows.find((r) => r.k === "auth");
  let token: TokenFound | null = null;
  if (found) {
    const o = JSON.parse(found.v);
    token = {
      token: fromJson(tokens, o.token),
      app: o.app ? fromJson(apps, o.app) : null,
      account: o.account ? fromJson(accounts, o.account) : null,
      user: o.user ? fromJson(users, o.user) : null,
    };
  }
  const accountId = token?.account?.id ?? null;
  // Read as another viewer than the token's (cannot happen: a token keeps its account): not used.
  if (known !== undefined && known !== accountId) token = null;
  if (token && accountId) rememberTokenAccount(tokenHash, accountId);
  else tokenAccounts.delete(tokenHash);
  return {
    h: fromRows(
      rows.filter((r) => r.k !== "auth"),
      accountId,
    ),
    token,
  };
}

/** Token hash -> its account, as found by earlier reads in this isolate (bounded; the oldest go first). */
const tokenAccounts = new Map<string, string>();
const TOKEN_ACCOUNTS_MAX = 1000;
function rememberTokenAccount(tokenHash: string, accountId: string) {
  tokenAccounts.delete(tokenHash);
  tokenAccounts.set(tokenHash, accountId);
  if (tokenAccounts.size > TOKEN_ACCOUNTS_MAX) tokenAccounts.delete(tokenAccounts.keys().next().value!);
}

/**
 * The statement's pieces: the page CTE, and the parts: the page's statuses with all they show (`statusesPart`),
 * the viewer's settings, and the caller's own parts.
 *
 * What a statement costs in D1 rows is every row it steps on: an index entry or a table row found, each row of a
 * materialised CTE each time it is scanned, each value of `json_each`; a look-up that finds nothing costs none.
 * So the page is read once, each status is looked up once and everything it shows is read by correlated look-ups
 * that cost only what they find (most statuses have no media, poll, tags, mentions, reactions, and the viewer
 * has favourited few); parts scanning the page once per kind of row cost a page's rows per part.
 *
 * D1 keeps prepared statements by their text (workerd's SqlStorage cache), which is why the text must stay the
 * same for every viewer (`params`): built once per kind of viewer (`precompiled`).
 */
function hydrationQuery(
  source: string[] | SQL,
  who: string | null | { tokenHash: string },
  opts: HydrateOptions = {},
  withLoaded = false,
) {
  const signedIn = typeof who === "object" ? who !== null : Boolean(who);
  const scope: ViewerScope = { me: ME, viewer: signedIn ? ME : null, from: sql``, by: sql``, tag: (v) => v, one: true };
  const parts = precompiled(`hydrate ${signedIn ? "me" : "anonymous"} ${opts.withMuted ? "with muted" : ""}`, () =>
    unionAll([statusesPart(scope, opts), ...viewerSettingParts(scope)]),
  );
  const ctes = opts.ctes ? sql`${opts.ctes},` : sql``;
  return {
    preamble: sql`WITH ${paramsCte(who)}, ${ctes} ${pageCtes(source, withLoaded)}`,
    parts: [sql`SELECT * FROM (${parts})`, ...(opts.parts ?? [])],
  };
}

/** An account as `accountFromJson` reads it, from `accounts` as `a` and its LEFT JOINed `users` row as `u`. */
const accountObject = (a: string, u: string) =>
  sql`json_object('account', ${jsonObject(accounts, a, UNRENDERED_ACCOUNT_COLUMNS)}, 'user', CASE WHEN ${sql.raw(u)}.account_id IS NULL THEN NULL ELSE ${jsonObject(users, u, SECRETS)} END)`;

/** The account of id `id` as `accountFromJson` reads it, looked up (one row read; none when `id` is null). */
export const accountById = (id: SQL) =>
  sql`(SELECT ${accountObject("xa", "xu")} FROM accounts xa LEFT JOIN users xu ON xu.account_id = xa.id WHERE xa.id = ${id})`;

/** The id of an account as `accountObject` gives it (without reading the rest). */
const accountIdOf = (o: { account: unknown }) => columnOf(accounts, o.account, "id") as string;

/** An account row of `accountsPart`. */
export const accountFromJson = (o: {
  account: Record<string, unknown>;
  user: Record<string, unknown> | null;
}): AccountWithUser => ({
  account: fromJson(accounts, o.account),
  user: o.user ? fromJson(users, o.user) : null,
});

const part = (kind: string, value: SQL, rest: SQL) => sql`SELECT ${sql.raw(`'${kind}'`)} AS k, ${value} AS v ${rest}`;

/**
 * `page`: the source's ids. Read by one part only, it is not materialised (scanning a materialised CTE costs a
 * row per row); `withLoaded` materialises it and adds `loaded` (the page and the statuses it reblogs) for parts
 * of the caller that read the loaded statuses.
 */
function pageCtes(source: string[] | SQL, withLoaded: boolean): SQL {
  const src = Array.isArray(source)
    ? sql`SELECT value FROM json_each(${JSON.stringify([...new Set(source)])})`
    : source;
  // Distinct: notifications name a status many times.
  if (!withLoaded) return sql`page(id) AS NOT MATERIALIZED (SELECT DISTINCT * FROM (${src}))`;
  return sql`page(id) AS MATERIALIZED (SELECT DISTINCT * FROM (${src})),
    loaded(id) AS (SELECT id FROM page UNION SELECT lr.reblog_of_id FROM page lp JOIN statuses lr ON lr.id = lp.id WHERE lr.reblog_of_id IS NOT NULL
      UNION SELECT lq.quoted_status_id FROM page lqp JOIN quotes lq ON lq.status_id = lqp.id WHERE lq.quoted_status_id IS NOT NULL)`;
}

/**
 * One row per status shown: each page status, the status it reblogs, and the status each of those quotes, as
 * `statusObject` makes it, the statement naming that object once (it was written four times a page row: the
 * status, its reblog, and each one's quoted post). `pg`: it is the page status itself. A status shown twice
 * (boosted twice on the page, quoted by two) comes twice: the first copy is kept (`fromRows`).
 */
function statusesPart(scope: ViewerScope, opts: { withMuted?: boolean }): SQL {
  const quotedBy = (id: string) => sql.raw(`(SELECT q.quoted_status_id FROM quotes q WHERE q.status_id = ${id})`);
  // `r`, the page status, is read for the status it reblogs; `x`, each status shown, is looked up on its key by
  // each term of the OR (a "multi-index OR": the guards keep SQLite from making it an `IN (…)` list, a temporary
  // table costing two rows per page row). A page status is read twice: one row more than each object nested in
  // the page status's row, written four times in the statement.
  return part(
    "st",
    statusObject("x", sql`x.id = r.id`, scope, opts),
    sql`FROM page p CROSS JOIN statuses r ON r.id = p.id CROSS JOIN statuses x ON x.id = r.id
      OR (r.reblog_of_id IS NOT NULL AND x.id = r.reblog_of_id)
      OR (r.id IS NOT NULL AND x.id = ${quotedBy("r.id")})
      OR (r.reblog_of_id IS NOT NULL AND x.id = ${quotedBy("r.reblog_of_id")})`,
  );
}

/**
 * A status (alias `x`) and everything it shows, as one JSON object: the row, its author, the account it replies
 * to, its mentions (with their accounts), tags, media, poll (with its tallies), application, card, the quote it
 * makes (its quoted status is a row of its own), and what the viewer may see and did (`viewerFacts`); `pg`: it
 * is one of the page's statuses (not only reblogged or quoted by one). Each is a correlated look-up on an index:
 * a status without media, poll, tags... reads nothing for them.
 */
function statusObject(x: string, pg: SQL, scope: ViewerScope, opts: { withMuted?: boolean }): SQL {
  const c = (col: string) => sql.raw(`${x}.${col}`);
  return sql`json_object('pg', ${pg}, 's', ${jsonObject(statuses, x)},
    'a', ${accountById(c("account_id"))},
    'ra', CASE WHEN ${c("in_reply_to_account_id")} <> ${c("account_id")} THEN ${accountById(c("in_reply_to_account_id"))} END,
    'm', (SELECT json_group_array(${accountById(sql`mr.account_id`)}) FROM status_recipients mr WHERE mr.status_id = ${c("id")} AND mr.mention = 1),
    't', (SELECT json_group_array(st.tag) FROM status_tags st WHERE st.status_id = ${c("id")}),
    'md', (SELECT json_group_array(${jsonObject(mediaAttachments, "m")}) FROM media_attachments m WHERE m.status_id = ${c("id")} AND m.removed_by_edit = 0),
    'p', (SELECT json_object('row', ${jsonObject(polls, "pl")},
        'c', (SELECT json_group_array(json_array(pc.choice, pc.n)) FROM (SELECT pvc.choice AS choice, count(*) AS n FROM poll_votes pvc WHERE pvc.poll_id = pl.id GROUP BY pvc.choice) pc),
        'n', (SELECT count(DISTINCT pvn.account_id) FROM poll_votes pvn WHERE pvn.poll_id = pl.id))
      FROM polls pl WHERE pl.status_id = ${c("id")}),
    'app', (SELECT json_object('id', ap.id, 'name', ap.name, 'website', ap.website) FROM apps ap WHERE ap.id = ${c("app_id")}),
    'card', (SELECT json_object('url', lc.url, 'data', lc.data) FROM link_cards lc WHERE lc.url = ${c("card_url")}),
    'q', (SELECT ${jsonObject(quotes, "qr")} FROM quotes qr WHERE qr.status_id = ${c("id")}),
    'x', ${viewerFacts(x, scope, opts)})`;
}

/**
 * How the viewer-specific facts name their viewer: one viewer (`ME`), or every row of a `viewers` CTE (`w.id`,
 * joined in by `from`, grouped by `by`, and written into each row as `w` by `tag`).
 */
interface ViewerScope {
  me: SQL;
  /** Null for an anonymous viewer. */
  viewer: SQL | null;
  from: SQL;
  by: SQL;
  tag: (value: SQL) => SQL;
  /** One viewer, bound once (`ME`): per-row silencing checks can read the viewer's lists once (`notSilencedByLists`). */
  one: boolean;
}

/**
 * What the viewer may see and did, about the status `x`: may see it (`v`), favourited, bookmarked, reblogged it
 * (0/1), the thread if they muted it (`tm`), the parent if they may see it (`pv`), their poll votes (`ov`), the
 * status's reactions as they see them (`rx`, with the custom emoji each names), their direct conversation in
 * the thread (`pa`). For an anonymous viewer the viewer's own facts match nothing.
 */
function viewerFacts(x: string, { me, viewer, one }: ViewerScope, opts: { withMuted?: boolean }): SQL {
  const c = (col: string) => sql.raw(`${x}.${col}`);
  const t = NOW;
  const shownReactor = (accountId: SQL, domain: SQL) =>
    one
      ? notSilencedByLists(viewer, opts.withMuted ?? false, accountId, domain)
      : notSilenced(viewer, opts.withMuted, accountId);
  // Each emoji's reactors: all are counted, the first few listed (`a`: the first REACTION_ACCOUNTS_MAX reactions
  // by id, then those the viewer does not silence, as [reaction id, account id]). Deactivated accounts are left
  // out, as Pleroma leaves inactive users out of reactions. Remote reactions name another server's emoji as
  // `shortcode@domain`: each name is looked up on the (shortcode, domain) index. Asked only of a status with
  // reactions: the grouping subquery costs a row to open, even empty.
  const named = (part: "shortcode" | "domain") =>
    part === "shortcode"
      ? sql`(CASE WHEN instr(er.emoji, '@') > 0 THEN substr(er.emoji, 1, instr(er.emoji, '@') - 1) ELSE er.emoji END)`
      : sql`(CASE WHEN instr(er.emoji, '@') > 0 THEN substr(er.emoji, instr(er.emoji, '@') + 1) ELSE '' END)`;
  return sql`json_object('v', ${visibleTo(viewer, { id: c("id"), accountId: c("account_id"), visibility: c("visibility") })},
    'fav', EXISTS (SELECT 1 FROM favourites fa WHERE fa.account_id = ${me} AND fa.status_id = ${c("id")}),
    'bm', EXISTS (SELECT 1 FROM bookmarks bm WHERE bm.account_id = ${me} AND bm.status_id = ${c("id")}),
    'rb', EXISTS (SELECT 1 FROM statuses rb WHERE rb.account_id = ${me} AND rb.reblog_of_id = ${c("id")}),
    'tm', (SELECT tmu.thread_id FROM thread_mutes tmu WHERE tmu.account_id = ${me} AND tmu.thread_id = ${c("thread_id")} AND (tmu.expires_at IS NULL OR tmu.expires_at > ${t})),
    'fo', CASE WHEN ${c("quote_policy")} = 'followers' THEN EXISTS (SELECT 1 FROM follows fo WHERE fo.account_id = ${me} AND fo.target_account_id = ${c("account_id")}) ELSE 0 END,
    'pv', (SELECT p.id FROM statuses p WHERE p.id = ${c("in_reply_to_id")} AND ${visibleTo(viewer, { id: sql`p.id`, accountId: sql`p.account_id`, visibility: sql`p.visibility` })}),
    'ov', (SELECT json_group_array(ov.choice) FROM polls op JOIN poll_votes ov ON ov.poll_id = op.id WHERE op.status_id = ${c("id")} AND ov.account_id = ${me}),
    'pa', (SELECT pa.id FROM conversations cv JOIN participations pa ON pa.conversation_id = cv.id WHERE cv.thread_id = ${c("thread_id")} AND pa.account_id = ${me}),
    'rx', CASE WHEN EXISTS (SELECT 1 FROM emoji_reactions er0 WHERE er0.status_id = ${c("id")}) THEN (SELECT json_group_array(json(rx.v)) FROM (
      SELECT json_object('e', er.emoji, 'n', count(*), 'me', max(er.account_id = ${me}), 'first', min(er.id), 'a', (
          SELECT json_group_array(json_array(firsts.id, firsts.account_id)) FROM (SELECT r.id, r.account_id, fra.domain FROM emoji_reactions r JOIN accounts fra ON fra.id = r.account_id AND fra.deactivated = 0
            WHERE r.status_id = er.status_id AND r.emoji = er.emoji ORDER BY r.id LIMIT ${sql.raw(String(REACTION_ACCOUNTS_MAX))}) firsts
          WHERE ${shownReactor(sql`firsts.account_id`, sql`firsts.domain`)}),
        'em', (SELECT ${jsonObject(customEmojis, "ce")} FROM custom_emojis ce WHERE ce.shortcode = ${named("shortcode")} AND ifnull(ce.domain, '') = ${named("domain")})) AS v
      FROM emoji_reactions er JOIN accounts ra ON ra.id = er.account_id AND ra.deactivated = 0
      WHERE er.status_id = ${c("id")} AND ${shownReactor(sql`er.account_id`, sql`ra.domain`)} GROUP BY er.emoji) rx) ELSE json_array() END)`;
}

const VIEWER_KINDS = new Set(["facts", "plainText", "filter"]);

/** The viewer's settings that shape every status: plain text (Pleroma's `no_rich_text`) and their filters. */
function viewerSettingParts({ me, from, tag }: ViewerScope): SQL[] {
  return [
    part(
      "plainText",
      tag(sql`json_object()`),
      sql`FROM ${from} users nr WHERE nr.account_id = ${me} AND nr.no_rich_text = 1`,
    ),
    part(
      "filter",
      // Each filter with its keywords and named statuses (both capped per user: services/filters.ts).
      tag(
        sql`json_object('row', ${jsonObject(filters, "fl")}, 'kw', (SELECT json_group_array(${jsonObject(filterKeywords, "fk")}) FROM filter_keywords fk WHERE fk.filter_id = fl.id), 'st', (SELECT json_group_array(${jsonObject(filterStatuses, "fs")}) FROM filter_statuses fs WHERE fs.filter_id = fl.id))`,
      ),
      sql`FROM ${from} filters fl WHERE fl.account_id = ${me} AND (fl.expires_at IS NULL OR fl.expires_at > ${NOW})`,
    ),
  ];
}

/**
 * The same statuses hydrated for each of several signed-in viewers ('' for anonymous), for publishing to
 * streams: everything is read once for the anonymous viewer, and the viewer-specific facts (`viewerFacts`) and
 * settings for all viewers by one more statement over a `viewers` CTE; both in one batch. A viewer's `Hydrated`
 * is the shared rows plus their own; viewers in the same state share one (render each distinct `Hydrated` once).
 */
export async function hydrateEach(d: DB, ids: string[], viewers: string[]): Promise<Map<string, Hydrated>> {
  const out = new Map<string, Hydrated>();
  const unique = [...new Set(viewers)];
  if (unique.length === 0) return out;
  const signedIn = unique.filter(Boolean);
  const shared = hydrationQuery(ids, null);
  const many: ViewerScope = {
    me: sql`w.id`,
    viewer: sql`w.id`,
    from: sql`viewers w,`,
    by: sql`w.id,`,
    tag: (v) => sql`json_set(${v}, '$.w', w.id)`,
    one: false,
  };
  const perViewer = sql`WITH ${paramsCte(null)}, viewers(id) AS (SELECT value FROM json_each(${JSON.stringify(signedIn)})), ${pageCtes(ids, true)}
    ${precompiled("hydrate each viewer", () =>
      unionAll([
        part(
          "facts",
          sql`json_object('w', w.id, 'id', f.id, 'x', ${viewerFacts("f", many, {})})`,
          // In this order (CROSS JOIN: left to right): left to the planner, it walked every status.
          sql`FROM viewers w CROSS JOIN loaded lf CROSS JOIN statuses f ON f.id = lf.id`,
        ),
        ...viewerSettingParts(many),
      ]),
    )}`;
  const [base, own] = await d.$client.batch<{ k: string; v: string }>([
    statement(d, sql`${shared.preamble} ${unionAll(shared.parts)}`),
    statement(d, perViewer),
  ]);
  const anonymous = fromRows(base.results, null);
  if (unique.includes("")) out.set("", anonymous);
  const alike = base.results.filter((r) => !VIEWER_KINDS.has(r.k));
  const mine = new Map<string, { k: string; v: string }[]>(signedIn.map((v) => [v, []]));
  const states = new Map<string, string[]>(signedIn.map((v) => [v, []]));
  for (const r of own.results) {
    const { w, ...rest } = JSON.parse(r.v) as { w: string };
    mine.get(w)?.push(r);
    states.get(w)?.push(`${r.k} ${JSON.stringify(rest)}`);
  }
  // Viewers with the same own rows who are none of the loaded statuses' accounts (authors, mentioned, replied
  // to) see the same rendering: they share one Hydrated, so a post to a thousand followers is rendered a few
  // times, not a thousand (its `viewerId` is the first such viewer's).
  const byState = new Map<string, Hydrated>();
  for (const v of signedIn) {
    const state = anonymous.accounts.has(v) ? `viewer ${v}` : states.get(v)!.sort().join("\n");
    let h = byState.get(state);
    if (!h) byState.set(state, (h = fromRows([...alike, ...mine.get(v)!], v)));
    out.set(v, h);
  }
  return out;
}

/** A reaction's `[reaction id, account id]` pairs (JSON, in no set order) as ids in the order of reacting. */
function reactorIds(pairs: unknown): string[] {
  const list = (typeof pairs === "string" ? JSON.parse(pairs) : pairs) as [string, string][] | null;
  return (list ?? []).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((p) => p[1]);
}

/** A JSON value as a row gives it: parsed already when nested in an object, text when read as a column. */
export const parsed = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;

interface Facts {
  v: number;
  fav: number;
  bm: number;
  rb: number;
  tm: string | null;
  pv: string | null;
  ov: number[];
  pa: string | null;
  fo: number;
  rx: { e: string; n: number; me: number; first: string; a: unknown; em: Record<string, unknown> | null }[];
}

interface StatusObject {
  pg: number;
  s: Record<string, unknown>;
  a: Parameters<typeof accountFromJson>[0] | null;
  ra: Parameters<typeof accountFromJson>[0] | null;
  m: Parameters<typeof accountFromJson>[0][];
  t: string[];
  md: Record<string, unknown>[];
  p: { row: Record<string, unknown>; c: [number, number][]; n: number } | null;
  app: { id: string; name: string; website: string | null } | null;
  card: { url: string; data: string | null } | null;
  q: unknown[] | null;
  x: Facts;
}

/** The statement's rows as a `Hydrated`: each kind parsed into its map, each status once. */
function fromRows(rows: { k: string; v: string }[], viewerId: string | null): Hydrated {
  const by = rowsByKind(rows);
  const h = emptyHydrated(viewerId, by);
  // The viewer's own facts when read apart (`hydrateEach`): they replace the anonymous ones.
  const ownFacts = new Map<string, Facts>(
    (by.get("facts") ?? []).map((o: { id: string; x: unknown }) => [o.id, parsed(o.x)]),
  );
  const page = new Set<string>();
  const add = (item: unknown) => {
    const o = parsed<StatusObject>(item);
    const s = fromJson(statuses, o.s);
    if (o.pg) page.add(s.id);
    if (h.statuses.has(s.id)) return;
    h.statuses.set(s.id, s);
    if (o.q !== null) h.quotes.set(s.id, fromJson(quotes, parsed(o.q)));
    addShown(h, s, o);
    const pollId = addPoll(h, s, o.p);
    addViewerFacts(h, s, ownFacts.get(s.id) ?? parsed<Facts>(o.x), pollId);
  };
  for (const item of by.get("st") ?? []) add(item);
  h.page = [...page].sort(newestFirst);
  return h;
}

/** The rows by kind (`k`), each value parsed: the caller's own kinds are read from here (`Hydrated.extra`). */
function rowsByKind(rows: { k: string; v: string }[]): Map<string, any[]> {
  const by = new Map<string, any[]>();
  for (const r of rows) {
    const list = by.get(r.k) ?? [];
    list.push(JSON.parse(r.v));
    by.set(r.k, list);
  }
  return by;
}

/** A `Hydrated` with no status yet, with the viewer's settings (plain text, filters) from their rows. */
function emptyHydrated(viewerId: string | null, by: Map<string, any[]>): Hydrated {
  return {
    viewerId,
    page: [],
    visible: new Set(),
    statuses: new Map(),
    accounts: new Map(),
    mentions: new Map(),
    tags: new Map(),
    media: new Map(),
    polls: new Map(),
    pollCounts: new Map(),
    pollVoters: new Map(),
    ownVotes: new Map(),
    favourited: new Set(),
    bookmarked: new Set(),
    reblogged: new Set(),
    mutedThreads: new Set(),
    reactions: new Map(),
    apps: new Map(),
    cards: new Map(),
    visibleParents: new Set(),
    participations: new Map(),
    emojis: new Map(),
    quotes: new Map(),
    followsAuthor: new Set(),
    plainText: (by.get("plainText") ?? []).length > 0,
    filters: (by.get("filter") ?? []).map((o) => ({
      ...fromJson(filters, o.row),
      keywords: parsed<unknown[]>(o.kw).map((k) => fromJson(filterKeywords, k)),
      statuses: parsed<unknown[]>(o.st).map((x) => fromJson(filterStatuses, x)),
    })),
    extra: by,
  };
}

/** An account of the rows, unless loaded already (the first copy stays). */
function addAccount(h: Hydrated, json: unknown): void {
  const o = json === null || json === undefined ? null : parsed<Parameters<typeof accountFromJson>[0]>(json);
  if (o && !h.accounts.has(accountIdOf(o))) h.accounts.set(accountIdOf(o), accountFromJson(o));
}

/** What a status shows that is the same for every viewer: its accounts, mentions, tags, media, app and card. */
function addShown(h: Hydrated, s: StatusRow, o: StatusObject): void {
  addAccount(h, o.a);
  addAccount(h, o.ra);
  const mentioned = parsed<unknown[]>(o.m).map((a) => parsed<Parameters<typeof accountFromJson>[0]>(a));
  for (const a of mentioned) addAccount(h, a);
  if (mentioned.length)
    h.mentions.set(
      s.id,
      mentioned.map((a) => accountIdOf(a)),
    );
  const tags = parsed<string[]>(o.t);
  if (tags.length) h.tags.set(s.id, tags);
  const media = parsed<Record<string, unknown>[]>(o.md)
    .map((m) => fromJson(mediaAttachments, m))
    .sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1));
  if (media.length) h.media.set(s.id, media);
  const app = o.app === null ? null : parsed<NonNullable<StatusObject["app"]>>(o.app);
  if (app) h.apps.set(app.id, { name: app.name, website: app.website });
  const card = o.card === null ? null : parsed<NonNullable<StatusObject["card"]>>(o.card);
  if (card) h.cards.set(card.url, card.data === null ? null : JSON.parse(card.data));
}

/** A status's poll and its tallies; answers the poll's id (null without a poll). */
function addPoll(h: Hydrated, s: StatusRow, json: StatusObject["p"]): string | null {
  const p = json === null ? null : parsed<NonNullable<StatusObject["p"]>>(json);
  if (!p) return null;
  const poll = fromJson(polls, p.row);
  h.polls.set(s.id, poll);
  // A remote poll shows its server's tallies (services/remote-polls.ts), not only the votes cast here.
  if (poll.remoteTallies) {
    h.pollCounts.set(poll.id, new Map(poll.remoteTallies.map((n, i) => [i, n])));
    h.pollVoters.set(poll.id, poll.remoteVoters ?? poll.remoteTallies.reduce((a, b) => a + b, 0));
  } else {
    const counts = parsed<[number, number][]>(p.c);
    if (counts.length) h.pollCounts.set(poll.id, new Map(counts));
    h.pollVoters.set(poll.id, p.n);
  }
  return poll.id;
}

/**
 * What the viewer's relation to a status decides (`viewerFacts`): may see it, favourited, bookmarked, reblogged,
 * thread muted, parent visible, conversation, follows its author, own votes; and the reactions they may see.
 */
function addViewerFacts(h: Hydrated, s: StatusRow, x: Facts, pollId: string | null): void {
  if (x.v) h.visible.add(s.id);
  if (x.fav) h.favourited.add(s.id);
  if (x.bm) h.bookmarked.add(s.id);
  if (x.rb) h.reblogged.add(s.id);
  if (x.tm !== null) h.mutedThreads.add(x.tm);
  if (x.pv !== null) h.visibleParents.add(x.pv);
  if (x.pa !== null) h.participations.set(s.threadId, x.pa);
  if (x.fo) h.followsAuthor.add(s.id);
  const own = parsed<number[]>(x.ov);
  if (own.length && pollId !== null) h.ownVotes.set(pollId, own);
  const reactions = parsed<unknown[]>(x.rx)
    .map((r) => parsed<Facts["rx"][number]>(r))
    .sort((a, b) => (a.first < b.first ? -1 : 1));
  if (reactions.length)
    h.reactions.set(
      s.id,
      reactions.map((r) => ({ name: r.e, count: r.n, me: Boolean(r.me), accountIds: reactorIds(r.a) })),
    );
  for (const r of reactions) {
    if (!r.em) continue;
    const e = fromJson(customEmojis, parsed(r.em));
    h.emojis.set(e.domain === null ? e.shortcode : `${e.shortcode}@${e.domain}`, e);
  }
}
