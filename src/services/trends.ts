/**
 * Trending hashtags, computed from the last week's public statuses (archive imports left out) in one query: the tag rows of statuses newer
 * than a week are walked on `status_tags_pair` (status id first, and ids are time-ordered), grouped by tag and day.
 */
import { sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { idFloor } from "../db/ids";

const DAY = 86_400_000;
const DAYS = 7;

export interface TrendingTag {
  name: string;
  /** Newest day first, `DAYS` entries; day = the day's start in Unix seconds. */
  history: { day: number; uses: number; accounts: number }[];
}

/**
 * Uses per tag and day since `since`, walking the tag rows of newer statuses on `status_tags_pair`. Without
 * statistics SQLite would rather scan every original status (`statuses_reblog_of`): CROSS JOIN keeps the tag
 * rows outermost.
 */
export function trendingTagsQuery(since: number) {
  return sql`SELECT st.tag AS tag, s.created_at / ${sql.raw(String(DAY))} AS day, count(*) AS uses, count(DISTINCT s.account_id) AS accounts
    FROM status_tags st INDEXED BY status_tags_pair CROSS JOIN statuses s ON s.id = st.status_id CROSS JOIN accounts a ON a.id = s.account_id
    WHERE st.status_id >= ${idFloor(since)} AND s.visibility = 'public' AND s.reblog_of_id IS NULL AND a.deactivated = 0
      AND NOT EXISTS (SELECT 1 FROM imported_statuses i WHERE i.status_id = s.id)
    GROUP BY st.tag, day`;
}

/**
 * Tags of public, original statuses by active accounts over the last 7 days, ranked by how many accounts used
 * them in the last two days, then over the week.
 */
export async function trendingTags(d: DB, t: number, limit: number, offset: number): Promise<TrendingTag[]> {
  const today = Math.floor(t / DAY) * DAY;
  const since = today - (DAYS - 1) * DAY;
  const rows = await statement(d, trendingTagsQuery(since)).all<{
    tag: string;
    day: number;
    uses: number;
    accounts: number;
  }>();
  const byTag = new Map<string, Map<number, { uses: number; accounts: number }>>();
  for (const r of rows.results) {
    const days = byTag.get(r.tag) ?? new Map();
    days.set(r.day * DAY, { uses: r.uses, accounts: r.accounts });
    byTag.set(r.tag, days);
  }
  const score = (days: Map<number, { accounts: number }>, from: number) =>
    [...days].reduce((n, [day, v]) => (day >= from ? n + v.accounts : n), 0);
  const ranked = [...byTag].sort(
    ([a, da], [b, db]) =>
      score(db, today - DAY) - score(da, today - DAY) || score(db, since) - score(da, since) || a.localeCompare(b),
  );
  return ranked.slice(offset, offset + limit).map(([name, days]) => ({ name, history: history(days, today) }));
}

/** `DAYS` days of figures, newest first, from the days that had any. */
function history(days: Map<number, { uses: number; accounts: number }>, today: number): TrendingTag["history"] {
  return Array.from({ length: DAYS }, (_, i) => {
    const day = today - i * DAY;
    const v = days.get(day);
    return { day: day / 1000, uses: v?.uses ?? 0, accounts: v?.accounts ?? 0 };
  });
}

/**
 * One tag's last 7 days, counted as trends count (public, original statuses by active accounts), walking only
 * that tag's rows of the week on `status_tags_tag`: a statement to batch with others.
 */
export function tagHistoryQuery(d: DB, tag: string, t: number) {
  const since = Math.floor(t / DAY) * DAY - (DAYS - 1) * DAY;
  return statement(
    d,
    sql`SELECT s.created_at / ${sql.raw(String(DAY))} AS day, count(*) AS uses, count(DISTINCT s.account_id) AS accounts
      FROM status_tags st INDEXED BY status_tags_tag CROSS JOIN statuses s ON s.id = st.status_id CROSS JOIN accounts a ON a.id = s.account_id
      WHERE st.tag = ${tag} AND st.status_id >= ${idFloor(since)} AND s.visibility = 'public' AND s.reblog_of_id IS NULL AND a.deactivated = 0
      AND NOT EXISTS (SELECT 1 FROM imported_statuses i WHERE i.status_id = s.id)
      GROUP BY day`,
  );
}

/** The history of a `tagHistoryQuery`'s rows. */
export function tagHistory(rows: { day: number; uses: number; accounts: number }[], t: number): TrendingTag["history"] {
  return history(
    new Map(rows.map((r) => [r.day * DAY, { uses: r.uses, accounts: r.accounts }])),
    Math.floor(t / DAY) * DAY,
  );
}
