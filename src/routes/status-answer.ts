/** Answering with statuses: one hydration round trip for the whole set, one renderer. */
import { and, eq } from "drizzle-orm";
import { db } from "../db/client";
import { bookmarks, favourites, statuses } from "../db/schema";
import { inOrder, pageQuery, setLinkHeader, type Page } from "../http/pagination";
import { visibleTo } from "../services/visibility";
import type { Ctx } from "../http/route";
import { renderContext } from "../http/urls";
import { renderStatuses, type StatusRenderOptions } from "../render/status";
import type { Status } from "../schemas/status";
import { hydrate } from "../services/hydrate";

export async function loadStatuses(c: Ctx, ids: string[], viewerId: string | null, opts: StatusRenderOptions & { withMuted?: boolean } = {}): Promise<Status[]> {
  if (ids.length === 0) return [];
  const h = await hydrate(db(c.env), ids, viewerId, opts);
  return renderStatuses(renderContext(c, viewerId), h, ids, opts);
}

export async function loadStatus(c: Ctx, id: string, viewerId: string | null, opts: StatusRenderOptions = {}): Promise<Status> {
  const [status] = await loadStatuses(c, [id], viewerId, opts);
  if (!status) throw new Error(`status ${id} vanished while rendering`);
  return status;
}

/**
 * The statuses an account favourited or bookmarked that the viewer may see, newest mark first, paged by the
 * mark's id (Link-only).
 */
export async function answerMarked(c: Ctx, table: typeof favourites | typeof bookmarks, ownerId: string, viewerId: string | null, page: Page) {
  const q = pageQuery(table.id, page);
  const rows = inOrder(
    await db(c.env)
      .select({ cursor: table.id, statusId: table.statusId })
      .from(table as typeof favourites)
      .innerJoin(statuses, eq(statuses.id, table.statusId))
      .where(and(eq(table.accountId, ownerId), q.where, visibleTo(viewerId)))
      .orderBy(q.orderBy)
      .limit(q.limit),
    q,
  );
  setLinkHeader(c, rows.map((r) => r.cursor));
  return c.json(await loadStatuses(c, rows.map((r) => r.statusId), viewerId));
}
