/** Answering with statuses: one hydration round trip for the whole set, one renderer. */
import { db } from "../db/client";
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
