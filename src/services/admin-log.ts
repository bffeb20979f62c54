/** Reading the moderation log (Pleroma 2.5's `ModerationLog.get_all` and `ModerationLogView`). */
import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { accounts, moderationLog } from "../db/schema";

export interface LogQuery {
  page: number;
  pageSize: number;
  startDate?: number;
  endDate?: number;
  userId?: string;
  search?: string;
}

export async function readLog(d: DB, q: LogQuery) {
  const where: SQL[] = [];
  if (q.startDate !== undefined) where.push(sql`${moderationLog.createdAt} >= ${q.startDate}`);
  if (q.endDate !== undefined) where.push(sql`${moderationLog.createdAt} <= ${q.endDate}`);
  if (q.userId) where.push(sql`${moderationLog.actorId} = ${q.userId}`);
  if (q.search) {
    const p = `%${q.search.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    where.push(sql`lower(json_extract(${moderationLog.data}, '$.message')) LIKE ${p} ESCAPE '\\'`);
  }
  const cond = where.length ? and(...where) : undefined;
  const [rows, [total]] = await d.batch([
    d
      .select({ entry: moderationLog, nickname: accounts.username })
      .from(moderationLog)
      .leftJoin(accounts, eq(accounts.id, moderationLog.actorId))
      .where(cond)
      .orderBy(desc(moderationLog.id))
      .limit(q.pageSize)
      .offset((q.page - 1) * q.pageSize),
    d
      .select({ n: sql<number>`count(*)` })
      .from(moderationLog)
      .where(cond),
  ]);
  return {
    items: rows.map(({ entry: r, nickname }) => ({
      id: r.id,
      data: r.data,
      // Pleroma answers seconds since the epoch.
      time: Math.floor(r.createdAt / 1000),
      // Entries written before every action kept its message: the actor by nickname, and the action.
      message: typeof r.data.message === "string" ? r.data.message : `@${nickname ?? r.actorId} ${r.action}`,
    })),
    total: total?.n ?? 0,
  };
}
