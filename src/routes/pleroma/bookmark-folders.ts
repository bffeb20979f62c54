/** Pleroma's bookmark folders. Starling has none yet: the list is empty. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { route } from "../../http/route";
import { BookmarkFolderSchema } from "../../schemas/pleroma";

export function registerBookmarkFolderRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/bookmark_folders",
    summary: "The user's bookmark folders (none: folders are not offered yet)",
    tags: ["Bookmarks"],
    auth: "user",
    scopes: ["read:bookmarks"],
    response: z.array(BookmarkFolderSchema),
    handler: (c) => c.json([]),
  });
}
