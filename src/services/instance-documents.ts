/**
 * Pleroma's instance documents (admin-fe's Settings → Instance and Other): the instance panel Pleroma-FE shows
 * beside the timeline (`/instance/panel.html`) and the terms of service of its sign-up form
 * (`/static/terms-of-service.html`, which overrides the one a frontend ships). HTML an admin uploads, kept in the
 * private bucket (HTML is never served from the media domain: services/private-files.ts).
 */
import type { Env } from "../env";
import { ApiError, notFound } from "../lib/errors";
import { deletePrivate, readPrivateBody } from "./private-files";
import type { FormFile } from "../lib/form-file";

/** Document name → the path it is served at. */
export const INSTANCE_DOCUMENTS: Record<string, string> = {
  "instance-panel": "/instance/panel.html",
  "terms-of-service": "/static/terms-of-service.html",
  // Not Pleroma's: what Mastodon's `/api/v1/instance/privacy_policy` answers (apps' About screens).
  "privacy-policy": "/static/privacy-policy.html",
};

export const DOCUMENT_MAX_BYTES = 512 * 1024;

const keyOf = (name: string) => `instance-documents/${name}.html`;

function known(name: string): string {
  const path = INSTANCE_DOCUMENTS[name];
  if (!path) throw notFound("Not found");
  return path;
}

/** The document's HTML as uploaded, or null when none was (404 for a name that is not a document's). */
export async function readDocument(env: Pick<Env, "MEDIA" | "PRIVATE">, name: string): Promise<string | null> {
  known(name);
  const obj = await readPrivateBody(env, keyOf(name));
  return obj ? obj.text() : null;
}

/** The document's HTML and when it was uploaded, or null when none was (Mastodon's ToS and privacy policy). */
export async function datedDocument(
  env: Pick<Env, "MEDIA" | "PRIVATE">,
  name: string,
): Promise<{ html: string; uploaded: Date } | null> {
  known(name);
  const obj = await readPrivateBody(env, keyOf(name));
  return obj ? { html: await obj.text(), uploaded: obj.uploaded } : null;
}

/** The path a document is served at (404 for a name that is not a document's). */
export const documentPath = (name: string) => known(name);

/** The document served at `path`, if one was uploaded (null: the path is not a document's, or none is stored). */
export async function documentAt(env: Pick<Env, "MEDIA" | "PRIVATE">, path: string): Promise<R2ObjectBody | null> {
  const name = Object.entries(INSTANCE_DOCUMENTS).find(([, p]) => p === path)?.[0];
  return name ? readPrivateBody(env, keyOf(name)) : null;
}

/** Stores an uploaded document; answers the path it is served at. */
export async function writeDocument(env: Pick<Env, "PRIVATE">, name: string, file: FormFile): Promise<string> {
  const path = known(name);
  if (file.size > DOCUMENT_MAX_BYTES)
    throw new ApiError(413, `The document is larger than ${DOCUMENT_MAX_BYTES} bytes`);
  const text = file.text();
  if (text.includes("\u0000")) throw new ApiError(422, "The document is not text");
  await env.PRIVATE.put(keyOf(name), text, { httpMetadata: { contentType: "text/html; charset=utf-8" } });
  return path;
}

export async function deleteDocument(env: Pick<Env, "MEDIA" | "PRIVATE">, name: string): Promise<string> {
  const path = known(name);
  await deletePrivate(env, [keyOf(name)]);
  return path;
}
