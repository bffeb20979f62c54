/**
 * Pleroma's backups (`/api/v1/pleroma/backups`): an account asks for an archive of itself, at most one per
 * `BACKUP_LIMIT_DAYS` (Pleroma's `limit_days`); the cron builds it (`processBackups`, one archive per run): a zip
 * (fflate) of ActivityStreams JSON as Pleroma's `User.Backup` writes it — `actor.json`, `outbox.json` (Create and
 * Announce activities), `likes.json` and `bookmarks.json` (object ids), plus `following.json` (actor ids) — put
 * in the private bucket under an unguessable key, served by the Worker's `/media/` route only (never by
 * MEDIA_DOMAIN: services/private-files.ts), its link mailed to the account's address. Archives are
 * deleted with their row after `BACKUP_KEEP_DAYS`, and older ones when a newer one is ready (Pleroma's
 * `remove_outdated`).
 */
import { sql } from "drizzle-orm";
import { ZipUpload } from "../lib/zip-upload";
import { config, type Env } from "../env";
import { db, statement, type DB } from "../db/client";
import { iso } from "../lib/iso";
import { newId } from "../db/ids";
import type { Visibility } from "../db/schema";
import { badRequest } from "../lib/errors";
import { randomToken, safeEqual } from "../lib/crypto";
import { escapeHtml } from "../content/text";
import { addressing } from "./addressing";
import { configuredBase } from "./events";
import { instanceSignature } from "./instance-keys";
import { queueMailStatement } from "./mail-queue";
import { mediaPath, mediaUrl, origins, type Origins } from "../lib/media-urls";
import { deletePrivate } from "./private-files";

/** Pleroma's default `limit_days` (its message: "Last export was less than 7 days ago"). */
const BACKUP_LIMIT_DAYS = 7;
export const BACKUP_KEEP_DAYS = 7;
const DAY = 24 * 3600_000;
/** Rows read per query while building (a few queries per thousand statuses). */
const PAGE = 1000;
/** Builds tried before a backup is failed (each counted when it starts: one that stopped the isolate counts). */
const MAX_ATTEMPTS = 3;
/** How long a claimed build is left to the run that claimed it (a cron invocation's wall-time limit). */
const LEASE_MS = 15 * 60_000;

export interface BackupRow {
  id: string;
  account_id: string;
  state: string;
  file_key: string;
  size: number;
  base: string;
  created_at: number;
  processed_at: number | null;
  attempts: number;
  lease_until: number | null;
}

/** Where archives live in the private bucket (served only through `backupReadable`). */
export const BACKUPS_PREFIX = "backups/";
/** How long the link in the list (shown to the signed-in owner) works. */
const LISTED_LINK_MS = DAY;

/**
 * An archive's download link: signed by the instance, valid until `expiresAt`. An archive holds the account's
 * private and direct posts, so it is served only to its owner: with the owner's credentials (token, session), or
 * with a link the instance handed the owner (the backups list, the mail).
 */
export async function signedBackupUrl(env: Env, base: string, key: string, expiresAt: number): Promise<string> {
  const signature = await instanceSignature(env, `backup:${key}:${expiresAt}`);
  // The Worker's route, whatever MEDIA_DOMAIN says: the bucket's domain serves only the public bucket.
  return `${base}${mediaPath(key)}?expires=${expiresAt}&signature=${signature}`;
}

/** Whether the archive at `key` may be served: a valid, unexpired signed link, or the owner's own credentials. */
export async function backupReadable(
  env: Env,
  d: DB,
  key: string,
  query: URLSearchParams,
  viewerId: string | null,
  t: number,
): Promise<boolean> {
  const expires = Number(query.get("expires"));
  const signature = query.get("signature");
  if (
    signature &&
    Number.isSafeInteger(expires) &&
    expires > t &&
    safeEqual(signature, await instanceSignature(env, `backup:${key}:${expires}`))
  )
    return true;
  if (!viewerId) return false;
  return (
    (await d.get(sql`SELECT 1 AS ok FROM backups WHERE file_key = ${key} AND account_id = ${viewerId}`)) !== undefined
  );
}

/** Pleroma's BackupView. */
export async function renderBackup(env: Env, base: string, b: BackupRow, t: number) {
  return {
    id: b.id,
    content_type: "application/zip",
    url: await signedBackupUrl(
      env,
      base,
      b.file_key,
      Math.min(t + LISTED_LINK_MS, b.created_at + BACKUP_KEEP_DAYS * DAY),
    ),
    file_size: b.size,
    processed: b.state === "complete",
    inserted_at: iso(b.created_at),
  };
}

export function listBackups(d: DB, accountId: string): Promise<BackupRow[]> {
  return d.all<BackupRow>(sql`SELECT * FROM backups WHERE account_id = ${accountId} ORDER BY id DESC`);
}

/** Asks for a backup; 400 Pleroma's message when the last one is too recent. */
export async function requestBackup(
  d: DB,
  account: { id: string; username: string },
  base: string,
  t: number,
): Promise<void> {
  const last = await d.get<{ created_at: number }>(
    sql`SELECT created_at FROM backups WHERE account_id = ${account.id} ORDER BY id DESC LIMIT 1`,
  );
  if (last && t - last.created_at <= BACKUP_LIMIT_DAYS * DAY) {
    throw badRequest(`Last export was less than ${BACKUP_LIMIT_DAYS} days ago`);
  }
  const stamp = new Date(t)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "");
  const key = `${BACKUPS_PREFIX}archive-${account.username}-${stamp}-${randomToken(24)}.zip`;
  await d.run(
    sql`INSERT INTO backups (id, account_id, state, file_key, base, created_at) VALUES (${newId(t)}, ${account.id}, 'pending', ${key}, ${base}, ${t})`,
  );
}

type Pages<T> = (each: (items: T[]) => Promise<void>) => Promise<void>;

/**
 * One `OrderedCollection` file of the archive, its items written a page at a time (`orderedItems`, then
 * `totalItems`, as a whole object would be written).
 */
async function writeCollection(zip: ZipUpload, name: string, pages: Pages<unknown>): Promise<void> {
  const head = JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${name}.json`,
    type: "OrderedCollection",
  });
  await zip.file(`${name}.json`, async (piece) => {
    let total = 0;
    await piece(`${head.slice(0, -1)},"orderedItems":[`);
    await pages(async (items) => {
      if (!items.length) return;
      await piece((total ? "," : "") + items.map((i) => JSON.stringify(i)).join(","));
      total += items.length;
    });
    await piece(`],"totalItems":${total}}`);
  });
}

interface StatusRow {
  id: string;
  uri: string;
  url: string;
  content: string;
  spoiler_text: string;
  visibility: Visibility;
  sensitive: number;
  created_at: number;
  edited_at: number | null;
  in_reply_to: string | null;
  reblog_uri: string | null;
  recipients: string;
  media: string;
}

/** The rows of a keyset-paged query, PAGE at a time, each page mapped and handed on before the next is read. */
function pagesOf<T extends { id: string }, U>(read: (after: string) => Promise<T[]>, map: (row: T) => U): Pages<U> {
  return async (each) => {
    let after = "";
    for (;;) {
      const page = await read(after);
      await each(page.map(map));
      if (page.length < PAGE) return;
      after = page[page.length - 1]!.id;
    }
  };
}

interface ArchivedAccount {
  uri: string;
  url: string;
  username: string;
  display_name: string;
  note: string;
  avatar: string | null;
  header: string | null;
  locked: number;
  also_known_as: string;
  created_at: number;
  fields: string;
}

/**
 * Writes the archive's files: the actor, its outbox, and the ids it liked, bookmarked and follows, a page at a
 * time (an account's tens of thousands of statuses are never all in memory). Answers false when the account is
 * gone.
 */
async function writeArchive(d: DB, accountId: string, o: Origins, zip: ZipUpload): Promise<boolean> {
  const a = await d.get<ArchivedAccount>(
    sql`SELECT uri, url, username, display_name, note, avatar, header, locked, also_known_as, created_at, fields FROM accounts WHERE id = ${accountId} AND domain IS NULL`,
  );
  if (!a) return false;
  const actor = archivedActor(a, o);
  await zip.file("actor.json", (piece) => piece(JSON.stringify(actor)));
  const outbox = pagesOf(
    (after) =>
      d.all<StatusRow>(
        sql`SELECT s.id, s.uri, s.url, s.content, s.spoiler_text, s.visibility, s.sensitive, s.created_at, s.edited_at, p.uri AS in_reply_to, r.uri AS reblog_uri,
          (SELECT json_group_array(ra.uri) FROM status_recipients sr JOIN accounts ra ON ra.id = sr.account_id WHERE sr.status_id = s.id) AS recipients,
          (SELECT json_group_array(json_object('url', m.file, 'mediaType', m.mime_type, 'name', m.description)) FROM media_attachments m WHERE m.status_id = s.id AND m.removed_by_edit = 0) AS media
        FROM statuses s LEFT JOIN statuses p ON p.id = s.in_reply_to_id LEFT JOIN statuses r ON r.id = s.reblog_of_id
        WHERE s.account_id = ${accountId} AND s.id > ${after} ORDER BY s.id LIMIT ${PAGE}`,
      ),
    (s: StatusRow) => archivedActivity(a, s, o),
  );
  await writeCollection(zip, "outbox", outbox);
  for (const [name, pages] of Object.entries(archivedIds(d, accountId))) await writeCollection(zip, name, pages);
  return true;
}

/** `actor.json`: the account as an ActivityStreams Person, its collections named by their files in the archive. */
function archivedActor(a: ArchivedAccount, o: Origins) {
  const followers = `${a.uri}/followers`;
  return {
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
    id: a.uri,
    type: "Person",
    preferredUsername: a.username,
    name: a.display_name,
    summary: a.note,
    url: a.url,
    published: iso(a.created_at),
    manuallyApprovesFollowers: a.locked === 1,
    alsoKnownAs: JSON.parse(a.also_known_as),
    attachment: (JSON.parse(a.fields) as { name: string; value: string }[]).map((f) => ({
      type: "PropertyValue",
      name: f.name,
      value: f.value,
    })),
    icon: a.avatar ? { type: "Image", url: mediaUrl(o, a.avatar) } : undefined,
    image: a.header ? { type: "Image", url: mediaUrl(o, a.header) } : undefined,
    inbox: `${a.uri}/inbox`,
    outbox: "outbox.json",
    followers,
    following: "following.json",
    likes: "likes.json",
    bookmarks: "bookmarks.json",
  };
}

/** One status of `outbox.json`: an Announce for a reblog, else a Create of its Note (as Pleroma's backup writes them). */
function archivedActivity(a: ArchivedAccount, s: StatusRow, o: Origins) {
  const followers = `${a.uri}/followers`;
  const recipients = JSON.parse(s.recipients) as string[];
  const to = addressing({ visibility: s.visibility, followers, mentioned: recipients, recipients }) ?? {
    to: [a.uri],
    cc: [],
  };
  const published = iso(s.created_at);
  if (s.reblog_uri)
    return { id: s.uri, type: "Announce", actor: a.uri, published, to: to.to, cc: to.cc, object: s.reblog_uri };
  const media = JSON.parse(s.media) as { url: string; mediaType: string; name: string | null }[];
  return {
    id: `${s.uri}/activity`,
    type: "Create",
    actor: a.uri,
    published,
    to: to.to,
    cc: to.cc,
    object: {
      id: s.uri,
      type: "Note",
      attributedTo: a.uri,
      url: s.url,
      content: s.content,
      summary: s.spoiler_text || null,
      sensitive: s.sensitive === 1,
      inReplyTo: s.in_reply_to,
      published,
      updated: s.edited_at ? iso(s.edited_at) : undefined,
      to: to.to,
      cc: to.cc,
      attachment: media.map((m) => ({
        type: "Document",
        mediaType: m.mediaType,
        url: mediaUrl(o, m.url),
        name: m.name,
      })),
    },
  };
}

/**
 * The ids of what the account liked and bookmarked (statuses) and follows (actors), in the order it did so, by
 * the file they go in.
 */
function archivedIds(d: DB, accountId: string): Record<"likes" | "bookmarks" | "following", Pages<unknown>> {
  const uri = (r: { id: string; uri: string }) => r.uri;
  const pairs = (table: "favourites" | "bookmarks") =>
    pagesOf(
      (after) =>
        d.all<{ id: string; uri: string }>(
          sql`SELECT x.id, s.uri FROM ${sql.raw(table)} x JOIN statuses s ON s.id = x.status_id WHERE x.account_id = ${accountId} AND x.id > ${after} ORDER BY x.id LIMIT ${PAGE}`,
        ),
      uri,
    );
  return {
    likes: pairs("favourites"),
    bookmarks: pairs("bookmarks"),
    following: pagesOf(
      (after) =>
        d.all<{ id: string; uri: string }>(
          sql`SELECT f.id, a.uri FROM follows f JOIN accounts a ON a.id = f.target_account_id WHERE f.account_id = ${accountId} AND f.id > ${after} ORDER BY f.id LIMIT ${PAGE}`,
        ),
      uri,
    ),
  };
}

/**
 * The cron job: builds the oldest pending backup (one a run), mails its link, removes the account's older
 * archives, and deletes archives past `BACKUP_KEEP_DAYS` (files first, then rows).
 */
export async function processBackups(env: Env, t: number): Promise<void> {
  const d = db(env);
  const expired = await d.all<{ id: string; file_key: string }>(
    sql`SELECT id, file_key FROM backups WHERE created_at < ${t - BACKUP_KEEP_DAYS * DAY} LIMIT 100`,
  );
  if (expired.length) {
    await deletePrivate(
      env,
      expired.map((b) => b.file_key),
    );
    await d.run(
      sql`DELETE FROM backups WHERE id IN (SELECT value FROM json_each(${JSON.stringify(expired.map((b) => b.id))}))`,
    );
  }
  const b = await claimBackup(d, t);
  if (!b) return;
  try {
    await buildBackup(env, d, b, t);
  } catch (e) {
    // Free for the next run, or failed for good after the last attempt (the cron records the error).
    await d.run(
      sql`UPDATE backups SET lease_until = NULL, state = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN 'failed' ELSE state END,
        processed_at = CASE WHEN attempts >= ${MAX_ATTEMPTS} THEN ${t} ELSE processed_at END WHERE id = ${b.id}`,
    );
    throw e;
  }
}

/**
 * The oldest pending backup no run is building, claimed with its attempt counted before the build starts: a build
 * that stops the isolate never reaches a catch, and must not be picked every minute ahead of the others. One
 * tried MAX_ATTEMPTS times is failed on the way. Answers null when there is none.
 */
async function claimBackup(d: DB, t: number): Promise<BackupRow | null> {
  for (let tries = 0; tries < 5; tries++) {
    const b = await d.get<BackupRow>(
      sql`SELECT * FROM backups WHERE state = 'pending' AND (lease_until IS NULL OR lease_until <= ${t}) ORDER BY created_at LIMIT 1`,
    );
    if (!b) return null;
    if (b.attempts >= MAX_ATTEMPTS) {
      await d.run(
        sql`UPDATE backups SET state = 'failed', lease_until = NULL, processed_at = ${t} WHERE id = ${b.id} AND state = 'pending'`,
      );
      continue;
    }
    const claimed = await d.run(
      sql`UPDATE backups SET attempts = attempts + 1, lease_until = ${t + LEASE_MS}
        WHERE id = ${b.id} AND state = 'pending' AND attempts = ${b.attempts}`,
    );
    if (claimed.meta.changes) return { ...b, attempts: b.attempts + 1 };
  }
  return null;
}

/** Builds the claimed backup's archive, stores it, mails its link and removes the account's older archives. */
async function buildBackup(env: Env, d: DB, b: BackupRow, t: number): Promise<void> {
  const base = configuredBase(env) || b.base;
  const zip = new ZipUpload(env.PRIVATE, b.file_key, {
    httpMetadata: {
      contentType: "application/zip",
      contentDisposition: `attachment; filename="${b.file_key.split("/").pop()}"`,
    },
  });
  let size: number;
  try {
    if (!(await writeArchive(d, b.account_id, origins(env, base), zip))) {
      await d.run(sql`UPDATE backups SET state = 'failed', processed_at = ${t}, lease_until = NULL WHERE id = ${b.id}`);
      return;
    }
    size = await zip.finish();
  } catch (e) {
    await zip.abort();
    throw e;
  }
  const older = await d.all<{ id: string; file_key: string }>(
    sql`SELECT id, file_key FROM backups WHERE account_id = ${b.account_id} AND id < ${b.id}`,
  );
  if (older.length)
    await deletePrivate(
      env,
      older.map((o) => o.file_key),
    );
  const user = await d.get<{ email: string; username: string }>(
    sql`SELECT u.email, a.username FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.account_id = ${b.account_id}`,
  );
  // Valid as long as the archive is kept: the mail goes to the owner's own address (queued with the completion;
  // the cron's `mail` job sends it).
  const link = await signedBackupUrl(env, base, b.file_key, b.created_at + BACKUP_KEEP_DAYS * DAY);
  await d.$client.batch([
    statement(
      d,
      sql`UPDATE backups SET state = 'complete', size = ${size}, processed_at = ${t}, lease_until = NULL WHERE id = ${b.id}`,
    ),
    statement(
      d,
      sql`DELETE FROM backups WHERE id IN (SELECT value FROM json_each(${JSON.stringify(older.map((o) => o.id))}))`,
    ),
    ...(user?.email
      ? [
          queueMailStatement(d, config(env), base, {
            to: user.email,
            subject: "Your account archive is ready",
            text: `Hello ${user.username},\n\nThe archive of your account you asked for is ready. Download it here (it is kept for ${BACKUP_KEEP_DAYS} days):\n\n${link}\n`,
            html: `<p>Hello ${escapeHtml(user.username)},</p><p>The archive of your account you asked for is ready. <a href="${escapeHtml(link)}">Download it</a> (it is kept for ${BACKUP_KEEP_DAYS} days).</p>`,
          }),
        ]
      : []),
  ]);
}
