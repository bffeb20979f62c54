/**
 * Reports: stored for moderators, each of whom gets a `pleroma:report` notification. A report about a remote
 * account made with `forward` is also sent to its server (a `Flag` by the instance actor, in the report's
 * batch); a `Flag` received from another server becomes a report here (`receiveFlag`).
 */
import type { Effects } from "./effects";
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { mixedBatch, now, statement } from "../db/client";
import { newId, seqIds } from "../db/ids";
import { accounts, reports, statuses } from "../db/schema";
import { visibleTo } from "./visibility";
import { badRequest } from "../lib/errors";
import { outboxWrite } from "./outbox";
import type { AccountRow } from "./accounts";
import { reportsRemoved } from "./federation-policies";
import { sha256 } from "../lib/crypto";

export type ReportRow = typeof reports.$inferSelect;

/** A received report's comment is kept to this many characters (Mastodon's own limit on a local one is 1000). */
const REMOTE_COMMENT_MAX = 5000;
/** Objects of a received Flag looked at (accounts and statuses together). */
const FLAG_OBJECTS_MAX = 100;

/**
 * The `pleroma:report` notification of every active admin and moderator but the reporter, once the report row
 * exists (set-based, one statement, so a report whose insert was a no-op notifies nobody again).
 */
function notifyModerators(d: DB, reportId: string, reporterId: string, t: number) {
  return statement(
    d,
    sql`INSERT INTO notifications (id, account_id, from_account_id, type, status_id, report_id, target_account_id, emoji, is_seen, created_at)
      SELECT ${seqIds("notifications", t)}, u.account_id, ${reporterId}, 'pleroma:report', NULL, ${reportId}, NULL, NULL, 0, ${t}
      FROM users u JOIN accounts a ON a.id = u.account_id
      WHERE (u.is_admin = 1 OR u.is_moderator = 1) AND a.deactivated = 0 AND u.account_id <> ${reporterId}
        AND EXISTS (SELECT 1 FROM reports WHERE id = ${reportId})`,
  );
}

export async function createReport(
  d: DB,
  reporterId: string,
  input: { accountId: string; statusIds: string[]; comment: string; forward: boolean },
): Promise<{ report: ReportRow; effects: Effects }> {
  if (input.accountId === reporterId) throw badRequest("You cannot report yourself");
  // Only statuses of the reported account, and ones the reporter can see, go with the report.
  const found = input.statusIds.length
    ? await d
        .select({ id: statuses.id, uri: statuses.uri })
        .from(statuses)
        .where(
          and(
            sql`${statuses.id} IN (SELECT value FROM json_each(${JSON.stringify(input.statusIds)}))`,
            eq(statuses.accountId, input.accountId),
            visibleTo(reporterId),
          ),
        )
    : [];
  const uris = new Map(found.map((r) => [r.id, r.uri]));
  const t = now();
  const report: ReportRow = {
    id: newId(t),
    accountId: reporterId,
    targetAccountId: input.accountId,
    statusIds: input.statusIds.filter((id) => uris.has(id)),
    comment: input.comment,
    forward: input.forward,
    state: "open",
    createdAt: t,
    uri: null,
  };
  await mixedBatch(d, [
    d.insert(reports).values(report),
    notifyModerators(d, report.id, reporterId, t),
    // Forwarded: the reported account's server hears of it (nothing is written for a local account).
    ...(input.forward
      ? [
          outboxWrite(
            d,
            reporterId,
            {
              type: "Flag",
              reportId: report.id,
              targetId: input.accountId,
              objectUris: report.statusIds.map((id) => uris.get(id)!),
              comment: report.comment,
            },
            t,
          ),
        ]
      : []),
  ]);
  // Moderators are notified (a forwarded report's Flag is in the batch).
  return { report, effects: { push: true } };
}

/**
 * A `Flag` from another server (Mastodon's and Pleroma's forwarded reports, usually sent by their instance
 * actor): one report per local account it names, or whose local statuses it names, with those statuses, by
 * `from`. Dropped from hosts with the `report_removal` policy. Received again (same `uri`), it changes nothing.
 * Answers how many local accounts it reports (0: dropped).
 */
export async function receiveFlag(
  d: DB,
  from: AccountRow,
  flag: { uri: string | null; objectUris: string[]; comment: string },
  t: number = now(),
): Promise<number> {
  if (reportsRemoved(d, from.domain!)) return 0;
  const uris = JSON.stringify([...new Set(flag.objectUris)].slice(0, FLAG_OBJECTS_MAX));
  const [named, reported] = await d.batch([
    d
      .select({ id: accounts.id })
      .from(accounts)
      .where(
        sql`${accounts.domain} IS NULL AND NOT ${accounts.deactivated} AND ${accounts.uri} IN (SELECT value FROM json_each(${uris}))`,
      ),
    d
      .select({ id: statuses.id, accountId: statuses.accountId })
      .from(statuses)
      .where(sql`${statuses.local} = 1 AND ${statuses.uri} IN (SELECT value FROM json_each(${uris}))`),
  ]);
  const targets = new Map<string, string[]>(named.map((a) => [a.id, []]));
  for (const s of reported) targets.set(s.accountId, [...(targets.get(s.accountId) ?? []), s.id]);
  targets.delete(from.id);
  if (targets.size === 0) return 0;
  const comment = flag.comment.slice(0, REMOTE_COMMENT_MAX);
  // A Flag without an id of its own is known again by what it says (sender, objects, comment), so that one
  // delivered twice is still one report.
  const uri = flag.uri ?? `urn:starling:flag:${from.id}:${await sha256(`${uris}\n${comment}`)}`;
  const writes = [...targets].flatMap(([targetId, statusIds]) => {
    const row: ReportRow = {
      id: newId(t),
      accountId: from.id,
      targetAccountId: targetId,
      statusIds,
      comment,
      forward: false,
      state: "open",
      createdAt: t,
      uri,
    };
    // (uri, target) is unique: a Flag delivered again writes nothing, and so notifies nobody.
    return [d.insert(reports).values(row).onConflictDoNothing(), notifyModerators(d, row.id, from.id, t)];
  });
  await mixedBatch(d, writes);
  return targets.size;
}
