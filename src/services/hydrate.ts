/**
 * Loads everything needed to render a set of statuses for a viewer in ONE D1 round trip: the statuses and the
 * ones they reblog, authors and mentioned accounts, tags, media, polls and votes, the viewer's favourites,
 * reblogs, bookmarks, thread mutes and conversation participations, emoji reactions, applications, cards,
 * parent visibility and custom emojis. The cost is fixed whatever the page size.
 */
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import { fromJson, jsonObject, precompiled, unionAll } from "../db/json-rows";
import type { DB } from "../db/client";
import { group } from "../lib/group";
import { newestFirst } from "../db/ids";
import { statement } from "../db/client";
import {
  accounts,
  apps,
  customEmojis,
  filters,
  mediaAttachments,
  polls,
  statuses,
  tokens,
  userColumns,
  users,
} from "../db/schema";
import type { TokenFound } from "../http/auth";
import type { AccountWithUser } from "./accounts";
import { ME, NOW, notSilenced, notSilencedByLists, paramsCte, visibleTo } from "./visibility";
import { REACTION_ACCOUNTS_MAX } from "./reactions";

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
  filters: (typeof filters.$inferSelect)[];
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
 * read by ONE statement: the page is a materialised CTE evaluated once, and each kind of row comes back as a
 * tagged JSON object (`UNION ALL`), so the cost is one round trip whatever the page holds.
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
  const parents = sql`SELECT 'parentUri' AS k, json_object('id', p.id, 'uri', p.uri) AS v FROM statuses p WHERE p.id IN ${ofLoaded("in_reply_to_id")}`;
  const h = await hydrate(d, source, null, { parts: [parents] });
  const parentUris = new Map((h.extra.get("parentUri") ?? []).map((o: { id: string; uri: string }) => [o.id, o.uri]));
  return { h, parentUris };
}

/**
 * Hydration for a viewer known only by a bearer token: the same single statement also reads the token (with its
 * app, account and user), so the request costs one round trip. The caller checks the token before using the
 * result, and sets `viewerId` from it.
 */
export async function hydrateForToken(
  d: DB,
  source: SQL,
  tokenHash: string,
  opts: HydrateOptions = {},
): Promise<{ h: Hydrated; token: TokenFound | null }> {
  const q = hydrationQuery(source, { tokenHash }, opts);
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
  return {
    h: fromRows(
      rows.filter((r) => r.k !== "auth"),
      token?.account?.id ?? null,
    ),
    token,
  };
}

/**
 * The statement's pieces: the page and id CTEs, and one tagged part per kind of row.
 *
 * Preparing the statement costs far more than running it (a signed-in home page: ~50 ms to prepare in SQLite
 * 3.40, under 1 ms to run), because every part that reads `all_ids` gets its own compiled copy of the page
 * query. D1 keeps prepared statements by their text (workerd's SqlStorage cache, 1 MiB of SQL text), which is
 * why the text must stay the same for every viewer (`params`) and why adding parts or variants of the text is
 * not free: each new text is prepared once per database object, and again whenever the cache evicts it.
 */
function hydrationQuery(source: string[] | SQL, who: string | null | { tokenHash: string }, opts: HydrateOptions = {}) {
  const signedIn = typeof who === "object" ? who !== null : Boolean(who);
  // The viewer and the time are bound once (`params`), so the parts are the same text for every viewer of a kind:
  // built once. Viewer-specific parts match nothing for anonymous viewers.
  const parts = precompiled(
    `hydrate ${signedIn ? "me" : "anonymous"} ${opts.withMuted ? "with muted" : ""}`,
    () =>
      sql`SELECT * FROM (${unionAll([...sharedParts(), ...viewerParts({ me: ME, viewer: signedIn ? ME : null, from: sql``, by: sql``, tag: (v) => v, one: true }, opts)])})`,
  );
  const ctes = opts.ctes ? sql`${opts.ctes},` : sql``;
  return { preamble: sql`WITH ${paramsCte(who)}, ${ctes} ${idCtes(source)}`, parts: [parts, ...(opts.parts ?? [])] };
}

/** A part (of kind `kind`) of the accounts whose ids `ids` selects, as hydration renders them (`accountFromJson`). */
export function accountsPart(kind: string, ids: SQL): SQL {
  return part(
    kind,
    sql`json_object('account', ${jsonObject(accounts, "a", UNRENDERED_ACCOUNT_COLUMNS)}, 'user', CASE WHEN u.account_id IS NULL THEN NULL ELSE ${jsonObject(users, "u", SECRETS)} END)`,
    sql`FROM accounts a LEFT JOIN users u ON u.account_id = a.id WHERE a.id IN (${ids})`,
  );
}

/** An account row of `accountsPart`. */
export const accountFromJson = (o: {
  account: Record<string, unknown>;
  user: Record<string, unknown> | null;
}): AccountWithUser => ({
  account: fromJson(accounts, o.account),
  user: o.user ? fromJson(users, o.user) : null,
});

const inAll = (col: string) => sql.raw(`${col} IN (SELECT id FROM all_ids)`);
/** A column of the loaded statuses (`loaded`), read once for every part that needs it. */
const ofLoaded = (col: string) => sql.raw(`(SELECT ${col} FROM loaded)`);
const part = (kind: string, value: SQL, rest: SQL) => sql`SELECT ${sql.raw(`'${kind}'`)} AS k, ${value} AS v ${rest}`;

function idCtes(source: string[] | SQL): SQL {
  const src = Array.isArray(source)
    ? sql`SELECT value FROM json_each(${JSON.stringify([...new Set(source)])})`
    : source;
  // `all_ids`: the page and the statuses it reblogs. It names `page` once: SQLite copies a CTE's text into every
  // place that names it (materialised or not) and compiles each copy, so each mention of `page` here is paid
  // again by every part that reads `all_ids` or `loaded`; with a home page's filters that is most of the time
  // spent preparing the statement (see the comment on `hydrationQuery`).
  // `loaded`: the columns of the loaded statuses that other parts look up (authors, parents, threads, apps,
  // cards, visibility), read from `statuses` once rather than once per part.
  return sql`page(id) AS MATERIALIZED (${src}),
    all_ids(id) AS MATERIALIZED (SELECT DISTINCT pj.value FROM page pg LEFT JOIN statuses pgr ON pgr.id = pg.id, json_each(json_array(pg.id, pgr.reblog_of_id)) pj WHERE pj.value IS NOT NULL),
    loaded(id, account_id, visibility, in_reply_to_id, in_reply_to_account_id, thread_id, app_id, card_url) AS MATERIALIZED (
      SELECT id, account_id, visibility, in_reply_to_id, in_reply_to_account_id, thread_id, app_id, card_url FROM statuses WHERE id IN (SELECT id FROM all_ids))`;
}

/** Parts every viewer sees alike. */
function sharedParts(): SQL[] {
  return [
    part("page", sql`json_object('id', id)`, sql`FROM page`),
    part("status", jsonObject(statuses, "s"), sql`FROM statuses s WHERE ${inAll("s.id")}`),
    accountsPart(
      "account",
      sql`SELECT account_id FROM loaded
    UNION SELECT in_reply_to_account_id FROM loaded
    UNION SELECT account_id FROM status_recipients WHERE ${inAll("status_id")} AND mention = 1`,
    ),
    part(
      "mention",
      sql`json_object('s', status_id, 'a', account_id)`,
      sql`FROM status_recipients WHERE ${inAll("status_id")} AND mention = 1`,
    ),
    part("tag", sql`json_object('s', status_id, 't', tag)`, sql`FROM status_tags WHERE ${inAll("status_id")}`),
    part(
      "media",
      jsonObject(mediaAttachments, "m"),
      // What an edit took off stays for the history only.
      sql`FROM media_attachments m WHERE ${inAll("m.status_id")} AND m.removed_by_edit = 0`,
    ),
    part("poll", jsonObject(polls, "p"), sql`FROM polls p WHERE ${inAll("p.status_id")}`),
    part(
      "pollCount",
      sql`json_object('p', poll_id, 'c', choice, 'n', count(*))`,
      sql`FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE ${inAll("status_id")}) GROUP BY poll_id, choice`,
    ),
    part(
      "pollVoters",
      sql`json_object('p', poll_id, 'n', count(DISTINCT account_id))`,
      sql`FROM poll_votes WHERE poll_id IN (SELECT id FROM polls WHERE ${inAll("status_id")}) GROUP BY poll_id`,
    ),
    part(
      "app",
      sql`json_object('id', id, 'name', name, 'website', website)`,
      sql`FROM apps WHERE id IN ${ofLoaded("app_id")}`,
    ),
    part("card", sql`json_object('url', url, 'data', data)`, sql`FROM link_cards WHERE url IN ${ofLoaded("card_url")}`),
    part(
      "emoji",
      jsonObject(customEmojis, "e"),
      // Statuses carry their own resolved emoji (`statuses.emojis`); reactions name this instance's, or another
      // server's as `shortcode@domain` (remote reactions): each name looked up on the (shortcode, domain) index.
      sql`FROM (SELECT DISTINCT emoji AS name, instr(emoji, '@') AS at FROM emoji_reactions WHERE ${inAll("status_id")}) rn
        JOIN custom_emojis e ON e.shortcode = (CASE WHEN rn.at > 0 THEN substr(rn.name, 1, rn.at - 1) ELSE rn.name END)
          AND ifnull(e.domain, '') = (CASE WHEN rn.at > 0 THEN substr(rn.name, rn.at + 1) ELSE '' END)`,
    ),
  ];
}

/**
 * How the viewer-specific parts name their viewer: one viewer (`ME`), or every row of a `viewers` CTE (`w.id`,
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

const VIEWER_KINDS = new Set(["flags", "ownVote", "reaction", "participation", "plainText", "filter"]);

/** Parts that depend on who looks: what they may see, their own favourites, votes, mutes, reactions... */
function viewerParts({ me, viewer, from, by, tag, one }: ViewerScope, opts: { withMuted?: boolean }): SQL[] {
  const t = NOW;
  const shownReactor = (accountId: SQL, domain: SQL) =>
    one
      ? notSilencedByLists(viewer, opts.withMuted ?? false, accountId, domain)
      : notSilenced(viewer, opts.withMuted, accountId);
  return [
    part(
      "flags",
      // Per loaded status, one row of what the viewer may see and did: may see it (`v`), favourited, bookmarked,
      // reblogged it (0/1), the thread if they muted it (`tm`), the parent if they may see it (`pv`). One part
      // rather than one per fact: each part that reads the loaded ids compiles its own copy of the page query
      // (see `hydrationQuery`).
      tag(
        sql`json_object('id', v.id, 'v', ${visibleTo(viewer, { id: sql`v.id`, accountId: sql`v.account_id`, visibility: sql`v.visibility` })},
          'fav', EXISTS (SELECT 1 FROM favourites fa WHERE fa.account_id = ${me} AND fa.status_id = v.id),
          'bm', EXISTS (SELECT 1 FROM bookmarks bm WHERE bm.account_id = ${me} AND bm.status_id = v.id),
          'rb', EXISTS (SELECT 1 FROM statuses rb WHERE rb.account_id = ${me} AND rb.reblog_of_id = v.id),
          'tm', (SELECT tmu.thread_id FROM thread_mutes tmu WHERE tmu.account_id = ${me} AND tmu.thread_id = v.thread_id AND (tmu.expires_at IS NULL OR tmu.expires_at > ${t})),
          'pv', (SELECT p.id FROM statuses p WHERE p.id = v.in_reply_to_id AND ${visibleTo(viewer, { id: sql`p.id`, accountId: sql`p.account_id`, visibility: sql`p.visibility` })}))`,
      ),
      sql`FROM ${from} loaded v`,
    ),
    part(
      "ownVote",
      tag(sql`json_object('p', pv.poll_id, 'c', pv.choice)`),
      sql`FROM ${from} poll_votes pv WHERE pv.account_id = ${me} AND pv.poll_id IN (SELECT id FROM polls WHERE ${inAll("status_id")})`,
    ),
    part(
      "reaction",
      // Each emoji's reactors: all are counted, the first few listed (`a`: the first REACTION_ACCOUNTS_MAX
      // reactions by id, then those the viewer does not silence, as [reaction id, account id]). Deactivated
      // accounts are left out, as Pleroma leaves inactive users out of reactions. The first few are one
      // LIMIT walk per emoji: a window function over every reaction of the page cost several times more.
      tag(
        sql`json_object('s', er.status_id, 'e', er.emoji, 'n', count(*), 'me', max(er.account_id = ${me}), 'first', min(er.id), 'a', (
          SELECT json_group_array(json_array(firsts.id, firsts.account_id)) FROM (SELECT r.id, r.account_id, fra.domain FROM emoji_reactions r JOIN accounts fra ON fra.id = r.account_id AND fra.deactivated = 0
            WHERE r.status_id = er.status_id AND r.emoji = er.emoji ORDER BY r.id LIMIT ${sql.raw(String(REACTION_ACCOUNTS_MAX))}) firsts
          WHERE ${shownReactor(sql`firsts.account_id`, sql`firsts.domain`)}))`,
      ),
      sql`FROM ${from} emoji_reactions er JOIN accounts ra ON ra.id = er.account_id AND ra.deactivated = 0
        WHERE ${inAll("er.status_id")} AND ${shownReactor(sql`er.account_id`, sql`ra.domain`)} GROUP BY ${by} er.status_id, er.emoji`,
    ),
    part(
      "participation",
      tag(sql`json_object('id', pa.id, 't', c.thread_id)`),
      sql`FROM ${from} participations pa JOIN conversations c ON c.id = pa.conversation_id WHERE pa.account_id = ${me} AND c.thread_id IN ${ofLoaded("thread_id")}`,
    ),
    part(
      "plainText",
      tag(sql`json_object()`),
      sql`FROM ${from} users nr WHERE nr.account_id = ${me} AND nr.no_rich_text = 1`,
    ),
    part(
      "filter",
      tag(jsonObject(filters, "fl")),
      sql`FROM ${from} filters fl WHERE fl.account_id = ${me} AND (fl.expires_at IS NULL OR fl.expires_at > ${t})`,
    ),
  ];
}

/**
 * The same statuses hydrated for each of several signed-in viewers ('' for anonymous), for publishing to
 * streams: the parts alike for everyone are read once (anonymously), and the viewer-specific parts for all
 * viewers by one more statement over a `viewers` CTE; both in one batch. A viewer's `Hydrated` is the shared
 * rows plus their own; viewers in the same state share one (render each distinct `Hydrated` once).
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
  const perViewer = sql`WITH ${paramsCte(null)}, viewers(id) AS (SELECT value FROM json_each(${JSON.stringify(signedIn)})), ${idCtes(ids)}
    ${precompiled("hydrate each viewer", () => unionAll(viewerParts(many, {})))}`;
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

function fromRows(rows: { k: string; v: string }[], viewerId: string | null): Hydrated {
  const by = new Map<string, any[]>();
  for (const r of rows) {
    const list = by.get(r.k) ?? [];
    list.push(JSON.parse(r.v));
    by.set(r.k, list);
  }
  const of = (k: string) => by.get(k) ?? [];
  const statusRows = of("status").map((o) => fromJson(statuses, o));
  const accountRows = of("account").map(accountFromJson);
  const mentionRows = of("mention").map((o) => ({ statusId: o.s as string, accountId: o.a as string }));
  const tagRows = of("tag").map((o) => ({ statusId: o.s as string, tag: o.t as string }));
  const mediaRows = of("media")
    .map((o) => fromJson(mediaAttachments, o))
    .sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1));
  const pollRows = of("poll").map((o) => fromJson(polls, o));
  const pollCountRows = of("pollCount").map((o) => ({
    pollId: o.p as string,
    choice: o.c as number,
    n: o.n as number,
  }));
  const voterRows = of("pollVoters").map((o) => ({ pollId: o.p as string, n: o.n as number }));
  const ownVoteRows = of("ownVote").map((o) => ({ pollId: o.p as string, choice: o.c as number }));
  const flagRows = of("flags") as {
    id: string;
    v: number;
    fav: number;
    bm: number;
    rb: number;
    tm: string | null;
    pv: string | null;
  }[];
  const reactionRows = of("reaction")
    .sort((a, b) => (a.first < b.first ? -1 : 1))
    .map((o) => ({
      statusId: o.s as string,
      emoji: o.e as string,
      n: o.n as number,
      me: o.me as number,
      accountIds: reactorIds(o.a),
    }));
  const appRows = of("app") as { id: string; name: string; website: string | null }[];
  const cardRows = of("card").map((o) => ({
    url: o.url as string,
    data: o.data === null ? null : (JSON.parse(o.data) as Record<string, unknown>),
  }));
  const participationRows = of("participation").map((o) => ({ id: o.id as string, threadId: o.t as string }));
  const emojiRows = of("emoji").map((o) => fromJson(customEmojis, o));
  const pageRows = of("page") as { id: string }[];

  const pollCounts = new Map<string, Map<number, number>>();
  for (const r of pollCountRows) {
    if (!pollCounts.has(r.pollId)) pollCounts.set(r.pollId, new Map());
    pollCounts.get(r.pollId)!.set(r.choice, r.n);
  }
  // A remote poll shows its server's tallies (services/remote-polls.ts), not only the votes cast here.
  const pollVoters = new Map(voterRows.map((r) => [r.pollId, r.n]));
  for (const p of pollRows) {
    if (!p.remoteTallies) continue;
    pollCounts.set(p.id, new Map(p.remoteTallies.map((n, i) => [i, n])));
    pollVoters.set(p.id, p.remoteVoters ?? p.remoteTallies.reduce((a, b) => a + b, 0));
  }
  return {
    viewerId,
    page: pageRows.map((r) => r.id).sort(newestFirst),
    visible: new Set(flagRows.filter((f) => f.v).map((f) => f.id)),
    statuses: new Map(statusRows.map((s) => [s.id, s])),
    accounts: new Map(accountRows.map((a) => [a.account.id, a])),
    mentions: group(
      mentionRows,
      (r) => r.statusId,
      (r) => r.accountId,
    ),
    tags: group(
      tagRows,
      (r) => r.statusId,
      (r) => r.tag,
    ),
    media: group(
      mediaRows,
      (r) => r.statusId!,
      (r) => r,
    ),
    polls: new Map(pollRows.map((p) => [p.statusId, p])),
    pollCounts,
    pollVoters,
    ownVotes: group(
      ownVoteRows,
      (r) => r.pollId,
      (r) => r.choice,
    ),
    favourited: new Set(flagRows.filter((f) => f.fav).map((f) => f.id)),
    bookmarked: new Set(flagRows.filter((f) => f.bm).map((f) => f.id)),
    reblogged: new Set(flagRows.filter((f) => f.rb).map((f) => f.id)),
    mutedThreads: new Set(flagRows.flatMap((f) => (f.tm === null ? [] : [f.tm]))),
    reactions: group(
      reactionRows,
      (r) => r.statusId,
      (r) => ({ name: r.emoji, count: r.n, me: Boolean(r.me), accountIds: r.accountIds }),
    ),
    apps: new Map(appRows.map((a) => [a.id, { name: a.name, website: a.website }])),
    cards: new Map(cardRows.map((c) => [c.url, c.data ?? null])),
    visibleParents: new Set(flagRows.flatMap((f) => (f.pv === null ? [] : [f.pv]))),
    participations: new Map(participationRows.map((r) => [r.threadId, r.id])),
    emojis: new Map(emojiRows.map((e) => [e.domain === null ? e.shortcode : `${e.shortcode}@${e.domain}`, e])),
    plainText: of("plainText").length > 0,
    filters: of("filter").map((o) => fromJson(filters, o)),
    extra: by,
  };
}
