/** Answering with statuses: one hydration round trip for the whole set, one renderer. */
import { db } from "../db/client";
import type { bookmarks, favourites } from "../db/schema";
import { setLinkHeader } from "../http/pagination";
import { type Page } from "../db/paging";
import { markedStatuses } from "../services/account-pages";
import type { Ctx } from "../http/route";
import { renderContext } from "../http/urls";
import { renderStatuses, type StatusRenderOptions } from "../render/status";
import type { Status } from "../schemas/status";
import { hydrate } from "../services/hydrate";

export async function loadStatuses(
  c: Ctx,
  ids: string[],
  viewerId: string | null,
  opts: StatusRenderOptions & { withMuted?: boolean } = {},
): Promise<Status[]> {
  if (ids.length === 0) return [];
  const h = await hydrate(db(c.env), ids, viewerId, opts);
  return renderStatuses(renderContext(c, viewerId), h, ids, opts);
}

export async function loadStatus(
  c: Ctx,
  id: string,
  viewerId: string | null,
  opts: StatusRenderOptions = {},
): Promise<Status> {
  const [status] = await loadStatuses(c, [id], viewerId, opts);
  if (!status) throw new Error(`status ${id} vanished while rendering`);
  return status;
}

/**
 * Answers the statuses an account favourited or bookmarked that the viewer may see (`markedStatuses`), with
 * the Link header.
 */
export async function answerMarked(
  c: Ctx,
  table: typeof favourites | typeof bookmarks,
  ownerId: string,
  viewerId: string | null,
  page: Page,
) {
  const rows = await markedStatuses(db(c.env), table, ownerId, viewerId, page);
  setLinkHeader(
    c,
    rows.map((r) => r.cursor),
  );
  return c.json(
    await loadStatuses(
      c,
      rows.map((r) => r.statusId),
      viewerId,
    ),
  );
}
