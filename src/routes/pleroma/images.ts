/**
 * Profile images the Pleroma way: the mascot (Pleroma-FE's corner picture) and `update_avatar` / `update_banner` /
 * `update_background`, which store through the same code as `update_credentials`.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { db } from "../../db/client";
import { config } from "../../env";
import { ApiError, badRequest } from "../../lib/errors";
import { FormFile } from "../../lib/form-file";
import { fileParam } from "../../http/params";
import { after, route, type Ctx } from "../../http/route";
import { baseUrl, originsOf, renderContext } from "../../http/urls";
import { renderMedia } from "../../render/status";
import { MediaAttachmentSchema } from "../../schemas/status";
import { saveCredentials, updateCredentials, type CredentialsInput } from "../../services/update-credentials";
import { storeImage } from "../../services/media";
import { isStoredKey, mediaUrl } from "../../lib/media-urls";
import { newId } from "../../db/ids";

/** Pleroma-FE ships this picture; Pleroma's default mascot points at it. */
const DEFAULT_MASCOT = { id: "default-mascot", path: "/images/pleroma-fox-tan-smol.png", mime: "image/png" };

interface StoredMascot {
  id: string;
  key: string;
  mime: string;
}

/** The mascot as the one MediaAttachment renderer shows it (the default one is this instance's own file). */
function renderMascot(c: Ctx, viewerId: string, m: StoredMascot | null) {
  return renderMedia(renderContext(c, viewerId), {
    id: m?.id ?? DEFAULT_MASCOT.id,
    type: "image",
    file: m ? m.key : baseUrl(c) + DEFAULT_MASCOT.path,
    remoteUrl: null,
    description: null,
    mimeType: m?.mime ?? DEFAULT_MASCOT.mime,
  });
}

/** An image as clients send it here: a multipart file, or a `data:image/...;base64,` URL (Pleroma-FE). */
const imageValue = () => z.union([fileParam(), z.string()]).optional();

function toFile(value: FormFile | string): FormFile | "" {
  if (typeof value !== "string") return value;
  if (value === "") return "";
  const m = /^data:[^;,]*(;[^,]*)?,(.*)$/s.exec(value);
  if (!m || !(m[1] ?? "").includes("base64")) throw badRequest("Invalid image: expected a file or a base64 data URL");
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(m[2].replace(/\s+/g, "")), (ch) => ch.charCodeAt(0));
  } catch {
    throw badRequest("Invalid image: the data URL is not valid base64");
  }
  return new FormFile("image", "", bytes);
}

export function registerImageRoutes(app: OpenAPIHono<AppEnv>) {
  route(app, {
    method: "get",
    path: "/api/v1/pleroma/mascot",
    summary: "The user's mascot (the instance default when none is set)",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["read:accounts"],
    response: MediaAttachmentSchema,
    handler: (c, _p, auth) => c.json(renderMascot(c, auth.account.id, auth.user.mascot as StoredMascot | null)),
  });

  route(app, {
    method: "put",
    path: "/api/v1/pleroma/mascot",
    summary: "Set the mascot from an uploaded image (415 for anything else)",
    tags: ["Pleroma"],
    auth: "user",
    scopes: ["write:accounts"],
    params: z.object({ file: fileParam() }),
    response: MediaAttachmentSchema,
    handler: async (c, p, auth) => {
      let stored;
      try {
        stored = await storeImage(
          c.env.MEDIA,
          `accounts/${auth.account.id.toLowerCase()}`,
          p.file,
          config(c.env).uploadLimit,
        );
      } catch (e) {
        // Pleroma's words for a non-image.
        if (e instanceof ApiError && e.status === 415) throw new ApiError(415, "mascots can only be images");
        throw e;
      }
      const mascot: StoredMascot = { id: newId(), key: stored.key, mime: stored.mime };
      const old = (auth.user.mascot as StoredMascot | null)?.key;
      const replaced = isStoredKey(old) ? [old] : [];
      // The replaced file is queued in the batch and goes through the one door, as a replaced avatar's does.
      await saveCredentials(
        db(c.env),
        auth.account.id,
        { account: {}, user: { mascot: { ...mascot } } },
        undefined,
        replaced,
      );
      after(c, { files: replaced });
      return c.json(renderMascot(c, auth.account.id, mascot));
    },
  });

  // Pleroma's field names: `img` for the avatar and background, `banner` for the banner; "" removes the image.
  const images = [
    ["update_avatar", "img", "avatar"],
    ["update_banner", "banner", "header"],
    ["update_background", "img", "pleroma_background_image"],
  ] as const;
  for (const [path, field, input] of images) {
    route(app, {
      method: "patch",
      path: `/api/v1/pleroma/accounts/${path}`,
      summary: `Set or remove (empty value) the ${input === "header" ? "banner" : input === "avatar" ? "avatar" : "background image"}`,
      tags: ["Pleroma"],
      auth: "user",
      scopes: ["write:accounts"],
      params: z.object({ [field]: imageValue(), file: fileParam().optional() }),
      response: z.object({ url: z.string().nullable() }),
      handler: async (c: Ctx, p: Record<string, FormFile | string | undefined>, auth) => {
        const value = p[field] ?? p.file;
        if (value === undefined) throw badRequest(`Missing field: ${field}.`);
        const change: CredentialsInput = { [input]: toFile(value) };
        const { saved, effects } = await updateCredentials(
          db(c.env),
          config(c.env),
          { bucket: c.env.MEDIA, images: c.env.IMAGES },
          auth,
          change,
        );
        after(c, effects);
        const column = input === "avatar" ? "avatar" : input === "header" ? "header" : "background";
        const key = saved.account[column];
        return c.json({ url: key ? mediaUrl(originsOf(c), key) : null });
      },
    });
  }
}
