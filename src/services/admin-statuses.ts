/** The admin API's rules about statuses (Pleroma 2.5's `AdminAPI.StatusController` and the user's statuses). */
import type { Effects } from "./effects";
import { and, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { DB } from "../db/client";
import { mixedBatch, now } from "../db/client";
import { accounts, statuses } from "../db/schema";
import { badRequest, notFound } from "../lib/errors";
import { logEntry, type Actor } from "./moderation-log";
import { deleteStatuses } from "./statuses";
import { hydrate, type Hydrated } from "./hydrate";

/**
 * A page of statuses for staff, newest first. Without `godmode` only public and unlisted ones (what anyone may
 * see); with it every visibility, since moderators must see what they act on.
 */
export async function adminStatusIds(
  d: DB,
  q: {
    accountId?: string;
    /** Only statuses of accounts on this remote host. */
    domain?: string;
    localOnly: boolean;
    withReblogs: boolean;
    godmode: boolean;
    page: number;
    pageSize: number;
    withTotal?: boolean;
  },
): Promise<{ ids: string[]; total: number }> {
  const where: SQL[] = [];
  if (q.accountId) where.push(eq(statuses.accountId, q.accountId));
  if (q.domain)
    where.push(
      sql`${statuses.accountId} IN (SELECT ${accounts.id} FROM ${accounts} WHERE ${accounts.domain} = ${q.domain})`,
    );
  if (q.localOnly) where.push(eq(statuses.local, true));
  if (!q.withReblogs) where.push(isNull(statuses.reblogOfId));
  if (!q.godmode) where.push(sql`${statuses.visibility} IN ('public', 'unlisted')`);
  const cond = and(...where);
  const [rows, [total]] = await d.batch([
    d
      .select({ id: statuses.id })
      .from(statuses)
      .where(cond)
      .orderBy(desc(statuses.id))
      .limit(q.pageSize)
      .offset((q.page - 1) * q.pageSize),
    d
      .select({ n: q.withTotal ? sql<number>`count(*)` : sql<number>`0` })
      .from(statuses)
      .where(q.withTotal ? cond : sql`0`),
  ]);
  return { ids: rows.map((r) => r.id), total: total?.n ?? 0 };
}

export async function anyStatus(d: DB, id: string) {
  const row = await d.select().from(statuses).where(eq(statuses.id, id)).get();
  if (!row) throw notFound();
  return row;
}

/** Visibilities staff may set (`PUT /statuses/:id`), as Pleroma's `update_activity_scope`. */
export const ADMIN_VISIBILITIES = ["public", "unlisted", "private"] as const;

/**
 * Changes `sensitive` and/or `visibility`. Who may see the status follows from its `visibility` column
 * (`visibleTo`), so the change holds everywhere at once.
 */
export async function updateStatus(
  d: DB,
  actor: Actor,
  id: string,
  change: { sensitive?: boolean; visibility?: string },
): Promise<void> {
  await anyStatus(d, id);
  if (change.visibility !== undefined && !(ADMIN_VISIBILITIES as readonly string[]).includes(change.visibility))
    throw badRequest("Unsupported visibility");
  if (change.sensitive === undefined && change.visibility === undefined) return;
  const t = now();
  const set: { sensitive?: boolean; visibility?: (typeof ADMIN_VISIBILITIES)[number]; editedAt?: number } = {};
  if (change.sensitive !== undefined) set.sensitive = change.sensitive;
  if (change.visibility !== undefined) set.visibility = change.visibility as (typeof ADMIN_VISIBILITIES)[number];
  const parts = [
    ...(change.sensitive !== undefined ? [`sensitive: '${change.sensitive}'`] : []),
    ...(change.visibility !== undefined ? [`visibility: '${change.visibility}'`] : []),
  ];
  await mixedBatch(d, [
    d.update(statuses).set(set).where(eq(statuses.id, id)),
    logEntry(
      d,
      actor,
      "status_update",
      { subject: { id, type: "status" }, sensitive: change.sensitive ?? null, visibility: change.visibility ?? null },
      `@${actor.username} updated status #${id}, set ${parts.join(", ")}`,
      t,
    ),
  ]);
}

/** Deletes through the one delete path (federation, streams, counters follow), the log entry in its batch. */
export async function adminDeleteStatus(d: DB, actor: Actor, id: string): Promise<Effects> {
  const s = await anyStatus(d, id);
  const author = await d
    .select({ username: accounts.username, domain: accounts.domain })
    .from(accounts)
    .where(eq(accounts.id, s.accountId))
    .get();
  const t = now();
  const log = logEntry(
    d,
    actor,
    "status_delete",
    {
      subject_id: id,
      subject_actor: author
        ? {
            id: s.accountId,
            nickname: author.domain ? `${author.username}@${author.domain}` : author.username,
            type: "user",
          }
        : null,
    },
    `@${actor.username} deleted status #${id}`,
    t,
  );
  return (await deleteStatuses(d, [id], { extra: [log] })).effects;
}

/**
 * Statuses for staff to see (`AdminAPI.StatusView`), in one read: callers chose `ids` by the admin rules (godmode
 * or not), so every loaded status is shown whatever its visibility to the staff member personally. Null when
 * there are none (nothing read).
 */
export async function loadAdminStatuses(d: DB, ids: string[], viewerId: string | null): Promise<Hydrated | null> {
  if (ids.length === 0) return null;
  const h = await hydrate(d, ids, viewerId);
  for (const id of h.statuses.keys()) h.visible.add(id);
  return h;
}
