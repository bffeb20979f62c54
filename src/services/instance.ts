/** Figures about the instance, read in one D1 round trip (routes/instance-stats.ts keeps them at the edge). */
import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now } from "../db/client";
import { accounts, instanceCounts, users } from "../db/schema";

const DAY = 24 * 3600 * 1000;

export interface InstanceStats {
  userCount: number;
  statusCount: number;
  domainCount: number;
  activeMonth: number;
  activeHalfyear: number;
  staff: string[];
}

export async function instanceStats(d: DB): Promise<InstanceStats> {
  const t = now();
  const [local, domains, month, halfyear, staff] = await d.batch([
    d
      .select({ users: count(), statuses: sql<number>`coalesce(sum(${accounts.statusesCount}), 0)` })
      .from(accounts)
      .where(and(isNull(accounts.domain), eq(accounts.deactivated, false))),
    // Kept by triggers as accounts come and go: counting distinct domains walked every remote account.
    d.select({ n: instanceCounts.domains }).from(instanceCounts).where(eq(instanceCounts.id, 1)),
    d
      .select({ n: count() })
      .from(users)
      .where(gt(users.lastActiveAt, t - 30 * DAY)),
    d
      .select({ n: count() })
      .from(users)
      .where(gt(users.lastActiveAt, t - 180 * DAY)),
    d
      .select({ uri: accounts.uri })
      .from(users)
      .innerJoin(accounts, eq(accounts.id, users.accountId))
      .where(eq(users.isAdmin, true)),
  ]);
  return {
    userCount: local[0]?.users ?? 0,
    statusCount: Number(local[0]?.statuses ?? 0),
    domainCount: domains[0]?.n ?? 0,
    activeMonth: month[0]?.n ?? 0,
    activeHalfyear: halfyear[0]?.n ?? 0,
    staff: staff.map((s) => s.uri),
  };
}

/**
 * Remote domains this instance knows of. A skip-scan of `accounts_domain`: each step seeks the next domain on the
 * index, so the rows read follow the number of domains, not of remote accounts (`SELECT DISTINCT` reads every
 * account's index entry, and the route is public).
 */
export async function peers(d: DB): Promise<string[]> {
  const rows = await d.all<{ domain: string }>(sql`
    WITH RECURSIVE known(domain) AS (
      SELECT min(domain) FROM accounts WHERE domain IS NOT NULL
      UNION ALL
      SELECT (SELECT min(domain) FROM accounts WHERE domain > known.domain) FROM known WHERE known.domain IS NOT NULL
    )
    SELECT domain FROM known WHERE domain IS NOT NULL`);
  return rows.map((r) => r.domain);
}
