/**
 * Emoji packs, Pleroma 2.5's `/api/v1/pleroma/emoji/pack…` (also `/api/pleroma/…`): reading is public, changing
 * needs the `emoji_manage_emoji` privilege and `admin:write` (Pleroma's scopes). Rules in services/emoji-packs.ts.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { config } from "../env";
import { db, now } from "../db/client";
import { boolParam, fileParam, intParam } from "../http/params";
import { route } from "../http/route";
import { allowPrivateAddress } from "../lib/outbound";
import { EmojiPackListSchema, EmojiPackSchema, PackFilesSchema, PackMetadataSchema } from "../schemas/emoji";
import {
  addFile,
  cleanMetadata,
  createPack,
  deleteFile,
  deletePack,
  downloadPack,
  importPacks,
  listPacks,
  packName,
  packNotFound,
  readPack,
  remotePacks,
  renderPack,
  shareInfo,
  updateFile,
  updateMetadata,
} from "../services/emoji-packs";

const page = () => intParam().pipe(z.number().int().min(1).max(100_000)).optional();
const pageSize = () => intParam().pipe(z.number().int().min(0).max(100_000)).optional();
const admin = {
  auth: "user" as const,
  scopes: ["admin:write"],
  privilege: "emoji_manage_emoji" as const,
  tags: ["Emoji pack administration"],
};
const name = z.object({ name: z.string() });

export function registerEmojiPackRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/emoji/packs",
    summary: "This instance's emoji packs, a page at a time",
    tags: ["Emoji packs"],
    auth: "none",
    params: z.object({ page: page(), page_size: pageSize() }),
    response: EmojiPackListSchema,
    handler: async (c, p) => {
      const list = await listPacks(db(c.env), p.page ?? 1, p.page_size ?? 50);
      const packs: Record<string, unknown> = {};
      for (const entry of list.packs)
        packs[entry.pack.name] = await renderPack(c.env, { ...entry, count: entry.files.length });
      return c.json({ packs, count: list.count });
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/emoji/packs/archive",
    summary: "A shared pack as a zip archive (pack.json and its files)",
    tags: ["Emoji packs"],
    auth: "none",
    params: name,
    produces: "application/zip",
    handler: async (c, p) => {
      const n = packName(p.name);
      const pack = await readPack(db(c.env), n);
      if (!pack) throw packNotFound(n);
      const share = await shareInfo(c.env, pack.pack, pack.files);
      if (!share)
        return c.json(
          {
            error: `Pack ${n} cannot be downloaded from this instance, either pack sharing was disabled for this pack or some files are missing`,
          },
          403,
        );
      return c.body(share.archive as Uint8Array<ArrayBuffer>, 200, {
        "Content-Type": "application/zip",
        "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(`${n}.zip`)}`,
      });
    },
  });

  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/emoji/packs/import",
    summary: "Imports the packs found under emoji/ in R2 (docs/emoji.md); answers their names",
    response: z.array(z.string()),
    handler: async (c) => c.json(await importPacks(db(c.env), c.env.MEDIA, now())),
  });

  route(app, {
    ...admin,
    method: "get",
    path: "/api/v1/pleroma/emoji/packs/remote",
    summary: "Another instance's packs",
    params: z.object({ url: z.string(), page: page(), page_size: pageSize() }),
    response: z.record(z.string(), z.unknown()),
    handler: async (c, p) =>
      c.json(await remotePacks(p.url, p.page ?? 1, p.page_size ?? 50, allowPrivateAddress(c.env))),
  });

  route(app, {
    ...admin,
    method: "post",
    path: "/api/v1/pleroma/emoji/packs/download",
    summary: "Copies a pack of another instance (saved as `as` when given)",
    params: z.object({ url: z.string(), name: z.string(), as: z.string().optional() }),
    response: z.literal("ok"),
    handler: async (c, p) => {
      await downloadPack(
        db(c.env),
        c.env.MEDIA,
        { url: p.url, name: p.name, as: p.as || undefined },
        allowPrivateAddress(c.env),
        config(c.env).uploadLimit,
        now(),
      );
      return c.json("ok");
    },
  });

  route(app, {
    method: "get",
    path: "/api/v1/pleroma/emoji/pack",
    summary: "One pack with a page of its files",
    tags: ["Emoji packs"],
    auth: "none",
    params: z.object({ name: z.string(), page: page(), page_size: pageSize() }),
    response: EmojiPackSchema,
    handler: async (c, p) => {
      const n = packName(p.name);
      const d = db(c.env);
      const size = p.page_size ?? 30;
      const shown = await readPack(d, n, p.page ?? 1, size);
      if (!shown) throw packNotFound(n);
      // The archive covers every file: the page is all of them when it holds the count.
      const all = shown.files.length === shown.count ? shown.files : (await readPack(d, n))!.files;
      return c.json(await renderPack(c.env, shown, all));
    },
  });

  route(app, {
    ...admin,
    method: "post",
    path: "/api/v1/pleroma/emoji/pack",
    summary: "Creates an empty pack",
    params: name,
    response: z.literal("ok"),
    handler: async (c, p) => {
      await createPack(db(c.env), packName(p.name), now());
      return c.json("ok");
    },
  });

  route(app, {
    ...admin,
    method: "patch",
    path: "/api/v1/pleroma/emoji/pack",
    summary: "Replaces a pack's metadata",
    params: z.object({
      name: z.string(),
      metadata: z.object({
        license: z.string().optional(),
        homepage: z.string().optional(),
        description: z.string().optional(),
        "fallback-src": z.string().url().optional(),
        "fallback-src-sha256": z.string().optional(),
        // Pack metadata is JSON kept as given: a boolean, or its "true"/"false" spelling (as Pleroma's schema
        // casts it), never the lenient any-string-is-true of form and query parameters (bad metadata is 400).
        "share-files": z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), z.boolean()).optional(),
      }),
    }),
    response: PackMetadataSchema,
    handler: async (c, p) =>
      c.json(
        await updateMetadata(
          db(c.env),
          c.env.MEDIA,
          packName(p.name),
          cleanMetadata(p.metadata),
          allowPrivateAddress(c.env),
          now(),
        ),
      ),
  });

  route(app, {
    ...admin,
    method: "delete",
    path: "/api/v1/pleroma/emoji/pack",
    summary: "Deletes a pack, its emoji and its files",
    params: name,
    response: z.literal("ok"),
    handler: async (c, p) => {
      await deletePack(db(c.env), c.env, packName(p.name));
      return c.json("ok");
    },
  });

  route(app, {
    ...admin,
    method: "post",
    path: "/api/v1/pleroma/emoji/packs/files",
    summary: "Adds a file (an upload, a zip of images, or a remote URL) to a pack",
    params: z.object({
      name: z.string(),
      file: z.union([fileParam(), z.string()]),
      shortcode: z.string().optional(),
      filename: z.string().optional(),
    }),
    response: PackFilesSchema,
    handler: async (c, p) =>
      c.json(
        await addFile(
          db(c.env),
          c.env.MEDIA,
          packName(p.name),
          { file: p.file, shortcode: p.shortcode, filename: p.filename },
          {
            allowPrivate: allowPrivateAddress(c.env),
            limit: config(c.env).uploadLimit,
            t: now(),
          },
        ),
      ),
  });

  route(app, {
    ...admin,
    method: "patch",
    path: "/api/v1/pleroma/emoji/packs/files",
    summary: "Renames an emoji of a pack and/or its file (`force` replaces an emoji holding the new shortcode)",
    params: z.object({
      name: z.string(),
      shortcode: z.string(),
      new_shortcode: z.string(),
      new_filename: z.string(),
      force: boolParam().optional(),
    }),
    response: PackFilesSchema,
    handler: async (c, p) => c.json(await updateFile(db(c.env), c.env.MEDIA, packName(p.name), p, now())),
  });

  route(app, {
    ...admin,
    method: "delete",
    path: "/api/v1/pleroma/emoji/packs/files",
    summary: "Deletes an emoji of a pack with its file",
    params: z.object({ name: z.string(), shortcode: z.string() }),
    response: PackFilesSchema,
    handler: async (c, p) => c.json(await deleteFile(db(c.env), c.env.MEDIA, packName(p.name), p.shortcode, now())),
  });
}
