/**
 * Importing a Mastodon or Pleroma account archive (issue 50). The zip is checked (its directory: entries, sizes,
 * names, an `outbox.json` and an `actor.json`) and stored in the PRIVATE bucket with an `archive_imports` row; the
 * cron then imports it in steps (`stepArchiveImports`, one step a minute, at most one import at a time):
 *   1. queued → importing: `outbox.json` read (its declared size bounded before it is inflated or parsed), its
 *      posts chosen (content/archive-outbox.ts) and written back to PRIVATE in chunks of CHUNK, with where each
 *      attachment sits in the zip, so no later step reads more than a chunk and its own files;
 *   2. importing: the next posts of the chunk (at most POSTS_PER_STEP and FILES_PER_STEP files, for STEP_MS), their
 *      media read from the zip by range, sniffed and stored like any upload (metadata stripped), then ONE batch:
 *      statuses, the `imported_statuses` keys, tags, media, polls, search rows, counters and the row's progress.
 *      The batch fails as a whole when a post's key is already there (a racing step), so each post is written once.
 * Quiet: no outbox row, notification, home feed row or stream event is written; trends leave imported posts out.
 * An imported status has a new local id made from its original date (`newId(published)`: the profile lists it in
 * date order, the random part keeps ids apart), a new ActivityPub id, and the old page as its `url`.
 * The import waits while the day's budget or the database is at WARN_AT (`pauseReason`), and goes on after.
 */
import { sql, type SQL } from "drizzle-orm";
import { db, statement, type DB } from "../db/client";
import { newId } from "../db/ids";
import { config, type Env } from "../env";
import { ApiError } from "../lib/errors";
import { FormFile } from "../lib/form-file";
import { bytesReader, r2Reader, readDirectory, readEntry, type RangeReader, type ZipEntry } from "../lib/zip-ranges";
import { ZipOversize, ZipRefused } from "../lib/zip";
import { htmlToText, normalizeTag, sanitizeHtml } from "../content/format";
import {
  archiveActor,
  readOutbox,
  type ArchiveMedia,
  type ArchivePost,
  type ArchiveSkips,
} from "../content/archive-outbox";
import { configuredBase } from "./events";
import { sniffMedia } from "./media";
import { createUpload } from "./uploads";
import { hitAll } from "./rate-limit";
import { deletePrivate } from "./private-files";
import { fraction, fromRow, storageRow, WARN_AT } from "./storage";
import { budgetFrom, budgetRow, pausesFetching } from "./usage-budget";

/** The largest archive the API takes (the request body is read whole); larger ones go through the admin CLI. */
export const ARCHIVE_UPLOAD_BYTES = 64 * 1024 * 1024;
/** The archive and room for the form's part headers: past it 413 before the body is read (`route()`'s `bodyLimit`). */
export const archiveBodyLimit = () => ({
  bytes: ARCHIVE_UPLOAD_BYTES + 16_384,
  message: `The archive is larger than ${ARCHIVE_UPLOAD_BYTES / 1024 / 1024} MB; ask an admin to import it (npm run admin -- import-archive)`,
});
/** What a zip may hold (the CLI's archives too): files, and all of them uncompressed. */
export const ARCHIVE_LIMITS = { maxEntries: 20_000, maxTotalBytes: 4 * 1024 * 1024 * 1024 - 1 } as const;
/** `outbox.json` uncompressed: parsed whole once, so well within a Worker's 128 MB. */
export const OUTBOX_MAX_BYTES = 16 * 1024 * 1024;
const ACTOR_MAX_BYTES = 1024 * 1024;
/**
 * Values (`{`, `[` and `,`, counted in the text before it is parsed, strings included) `outbox.json` may hold:
 * 16 MB of `[{},{},…]` would parse into millions of objects, past a Worker's 128 MB. Real outboxes hold one
 * value per ~27 bytes (test/fixtures/archives.ts, terser than most), so about 600,000 in 16 MB; a million empty
 * objects take ~30 MB.
 */
export const OUTBOX_MAX_VALUES = 1_000_000;
/** Posts imported from one archive at most (the newest; the others counted as `over_limit`). */
export const MAX_POSTS = 10_000;
/** Posts per chunk file, and what one step may do. */
const CHUNK = 500;
export const STEP = { posts: 100, files: 24, ms: 20_000 };
/** Steps in a row that may fail (R2 or D1 hiccups) before the import is given up. */
const MAX_ATTEMPTS = 5;
/** How long a step may hold an import: its own time and room for its batch (a step that died frees it then). */
const LEASE_MS = STEP.ms + 40_000;
export const ARCHIVE_PREFIX = "archive-imports/";

export interface ArchiveImportRow {
  id: string;
  account_id: string;
  state: "queued" | "importing" | "done" | "failed";
  file_key: string;
  size: number;
  base: string;
  found: number;
  total: number;
  position: number;
  imported: number;
  media: number;
  media_skipped: number;
  skipped: string;
  paused: string | null;
  error: string | null;
  attempts: number;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
}

/** A post as a chunk keeps it: each attachment with where it sits in the zip. */
type ChunkPost = Omit<ArchivePost, "media"> & { media: (ArchiveMedia & { zip: ZipEntry })[] };

/** An archive this importer cannot take, said in words (a 422 at upload, the import's `error` later). */
class ArchiveRefused extends Error {}

const refusal = (e: unknown) => (e instanceof ZipRefused || e instanceof ArchiveRefused ? (e as Error).message : null);

/** Where the archive's files sit: its `outbox.json` at the root, or in one folder (an archive unpacked and zipped again). */
function layout(entries: ZipEntry[]): { prefix: string; outbox: ZipEntry; actor: ZipEntry } {
  const outbox = entries.find((e) => /^(?:[^/]+\/)?outbox\.json$/.test(e.name));
  if (!outbox) throw new ArchiveRefused("The archive has no outbox.json: is it a Mastodon or Pleroma account archive?");
  const prefix = outbox.name.slice(0, -"outbox.json".length);
  const actor = entries.find((e) => e.name === `${prefix}actor.json`);
  if (!actor) throw new ArchiveRefused("The archive has no actor.json");
  if (outbox.size > OUTBOX_MAX_BYTES)
    throw new ArchiveRefused(`outbox.json is larger than ${OUTBOX_MAX_BYTES} bytes uncompressed`);
  if (actor.size > ACTOR_MAX_BYTES)
    throw new ArchiveRefused(`actor.json is larger than ${ACTOR_MAX_BYTES} bytes uncompressed`);
  return { prefix, outbox, actor };
}

/** The checks made before an archive is stored (the API, the admin CLI): its directory and layout. */
export async function inspectArchive(read: RangeReader, size: number): Promise<ZipEntry[]> {
  try {
    const entries = await readDirectory(read, size, ARCHIVE_LIMITS);
    layout(entries);
    return entries;
  } catch (e) {
    const message = refusal(e);
    if (message) throw new ApiError(422, message);
    throw e;
  }
}

/** The row statement the API and the CLI write: nothing while the account has an import going on. */
export const queueStatement = (row: {
  id: string;
  accountId: string;
  key: string;
  size: number;
  base: string;
  t: number;
}) =>
  sql`INSERT INTO archive_imports (id, account_id, state, file_key, size, base, created_at, updated_at)
    SELECT ${row.id}, ${row.accountId}, 'queued', ${row.key}, ${row.size}, ${row.base}, ${row.t}, ${row.t}
    WHERE NOT EXISTS (SELECT 1 FROM archive_imports WHERE account_id = ${row.accountId} AND state IN ('queued', 'importing'))`;

export const archiveKey = (accountId: string, id: string) => `${ARCHIVE_PREFIX}${accountId.toLowerCase()}/${id}.zip`;
const chunkKey = (job: Pick<ArchiveImportRow, "file_key">, n: number) =>
  `${job.file_key.replace(/\.zip$/, "")}.posts-${String(n).padStart(4, "0")}.json`;

/**
 * Takes an uploaded archive: 413 over ARCHIVE_UPLOAD_BYTES, 422 for what `inspectArchive` refuses, 409 while the
 * account has an import going on, 429 past the `archiveImports` limit. Stored in PRIVATE, then queued for the cron.
 */
export async function queueArchiveImport(
  env: Env,
  d: DB,
  accountId: string,
  file: FormFile,
  base: string,
  t: number,
): Promise<ArchiveImportRow> {
  if (file.size > ARCHIVE_UPLOAD_BYTES) throw new ApiError(413, archiveBodyLimit().message);
  if (await activeImport(d, accountId)) throw new ApiError(409, "An import of this account is already going on");
  const bytes = file.bytes();
  await inspectArchive(bytesReader(bytes), bytes.byteLength);
  // Each archive queued may cost the cron steps of inflating and parsing, a failing one too (one refused here cost
  // only its directory's reading).
  await hitAll(d, [{ key: `archiveImports:key:${accountId}`, limit: config(env).rateLimits.archiveImports }]);
  const id = newId(t);
  const key = archiveKey(accountId, id);
  await env.PRIVATE.put(key, bytes, { httpMetadata: { contentType: "application/zip" } });
  const written = await d.run(queueStatement({ id, accountId, key, size: bytes.byteLength, base, t }));
  if (!written.meta.changes) {
    await deletePrivate(env, [key]);
    throw new ApiError(409, "An import of this account is already going on");
  }
  return (await ownImport(d, accountId, id))!;
}

const activeImport = (d: DB, accountId: string) =>
  d.get<{ id: string }>(
    sql`SELECT id FROM archive_imports WHERE account_id = ${accountId} AND state IN ('queued', 'importing') LIMIT 1`,
  );

/** The account's imports, newest first (the last 20). */
export function listArchiveImports(d: DB, accountId: string): Promise<ArchiveImportRow[]> {
  return d.all<ArchiveImportRow>(
    sql`SELECT * FROM archive_imports WHERE account_id = ${accountId} ORDER BY id DESC LIMIT 20`,
  );
}

export function ownImport(d: DB, accountId: string, id: string): Promise<ArchiveImportRow | undefined> {
  return d.get<ArchiveImportRow>(sql`SELECT * FROM archive_imports WHERE id = ${id} AND account_id = ${accountId}`);
}

/** Why bulk importing waits now, or null: the database or the day's budget at WARN_AT (deferrable work, as fetching). */
async function pauseReason(d: DB, t: number): Promise<string | null> {
  const [storage, budget] = await d.batch([storageRow(d), budgetRow(d, t)]);
  const s = fromRow(storage);
  if (s && fraction(s) >= WARN_AT) return `The database is ${Math.round(fraction(s) * 100)}% full`;
  if (pausesFetching(budgetFrom(budget[0], t))) return "Today's usage budget is nearly spent: the import goes on later";
  return null;
}

/**
 * The cron job: one step of the oldest import going on. Answers a report for the job's heartbeat, or null when
 * there is nothing to do (one probe of a partial index).
 */
export async function stepArchiveImports(env: Env, t: number): Promise<{ report: Record<string, number> } | null> {
  const d = db(env);
  const job = await d.get<ArchiveImportRow>(
    sql`SELECT * FROM archive_imports WHERE state IN ('queued', 'importing')
      AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = account_id AND a.deactivated = 0) ORDER BY id LIMIT 1`,
  );
  // A deactivated account's import waits (its deletion removes it).
  if (!job) return null;
  const paused = await pauseReason(d, t);
  if (paused) {
    if (job.paused !== paused)
      await d.run(sql`UPDATE archive_imports SET paused = ${paused}, updated_at = ${t} WHERE id = ${job.id}`);
    return { report: { paused: 1 } };
  }
  // One step at a time: a cron run that outlasts its minute must not meet the next one here (a step's batch would
  // fail on the other's keys, its uploads wasted).
  // The claim counts the attempt: a step that stopped the isolate (memory, CPU) never reaches the catch below, and
  // must not be claimed again every minute ahead of every other account's import.
  const claimed = await d.run(
    sql`UPDATE archive_imports SET lease_until = ${Date.now() + LEASE_MS}, attempts = attempts + 1 WHERE id = ${job.id} AND (lease_until IS NULL OR lease_until <= ${Date.now()})`,
  );
  if (!claimed.meta.changes) return { report: { busy: 1 } };
  if (job.attempts >= MAX_ATTEMPTS) {
    await d.run(
      sql`UPDATE archive_imports SET state = 'failed', error = 'a step of this import stopped without finishing', lease_until = NULL, updated_at = ${t} WHERE id = ${job.id}`,
    );
    await removeImportFiles(env, job);
    return { report: { failed: 1 } };
  }
  try {
    if (job.state === "queued") return { report: { prepared: await prepare(env, d, job, t) } };
    return { report: await importStep(env, d, job, t) };
  } catch (e) {
    const message = refusal(e);
    const error = message ?? (e instanceof Error ? e.message : String(e)).slice(0, 500);
    const give = message !== null || job.attempts + 1 >= MAX_ATTEMPTS;
    if (!message) console.error(`archive import ${job.id}: ${error}`);
    await d.run(
      sql`UPDATE archive_imports SET error = ${error}, lease_until = NULL, updated_at = ${t}${give ? sql`, state = 'failed'` : sql``} WHERE id = ${job.id}`,
    );
    if (give) await removeImportFiles(env, job);
    return { report: { failed: give ? 1 : 0 } };
  }
}

/** The zip and its chunks (done, failed or the account deleted: kept no longer). */
export async function removeImportFiles(env: Pick<Env, "MEDIA" | "PRIVATE">, job: ArchiveImportRow) {
  const chunks = Math.ceil(job.total / CHUNK);
  await deletePrivate(env, [job.file_key, ...Array.from({ length: chunks }, (_, n) => chunkKey(job, n))]);
}

/** Refuses JSON text holding more than `max` values (an upper bound: each starts a container or follows a comma). */
function boundValues(bytes: Uint8Array, name: string, max: number) {
  let values = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if ((b === 0x2c || b === 0x5b || b === 0x7b) && ++values > max)
      throw new ArchiveRefused(`${name} holds more than ${max} values`);
  }
}

const readJson = (bytes: Uint8Array, name: string, maxValues = OUTBOX_MAX_VALUES): unknown => {
  boundValues(bytes, name, maxValues);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ArchiveRefused(`${name} is not valid JSON`);
  }
};

/** Step 1: the posts chosen from `outbox.json`, written in chunks; the row says how many. */
async function prepare(env: Env, d: DB, job: ArchiveImportRow, t: number): Promise<number> {
  const read = r2Reader(env.PRIVATE, job.file_key);
  const entries = await readDirectory(read, job.size, ARCHIVE_LIMITS);
  const { prefix, outbox, actor } = layout(entries);
  const owner = archiveActor(readJson(await readEntry(read, actor, ACTOR_MAX_BYTES), "actor.json"));
  if (!owner) throw new ArchiveRefused("actor.json names no account");
  const byName = new Map(entries.map((e) => [e.name, e]));
  const parsed = readJson(await readEntry(read, outbox, OUTBOX_MAX_BYTES), "outbox.json");
  const { found, posts, skipped } = readOutbox(parsed, owner, prefix, new Set(byName.keys()), MAX_POSTS, t);
  const chunked: ChunkPost[] = posts.map((p) => ({
    ...p,
    media: p.media.map((m) => ({ ...m, zip: byName.get(m.entry)! })),
  }));
  for (let n = 0; n * CHUNK < chunked.length; n++)
    await env.PRIVATE.put(chunkKey(job, n), JSON.stringify(chunked.slice(n * CHUNK, (n + 1) * CHUNK)), {
      httpMetadata: { contentType: "application/json" },
    });
  const done = chunked.length === 0;
  await d.run(
    sql`UPDATE archive_imports SET state = ${done ? "done" : "importing"}, found = ${found}, total = ${chunked.length},
      skipped = ${JSON.stringify(skipped)}, paused = NULL, error = NULL, attempts = 0, lease_until = NULL, updated_at = ${t}
      WHERE id = ${job.id} AND state = 'queued'`,
  );
  if (done) await removeImportFiles(env, job);
  return chunked.length;
}

interface Parent {
  original_uri: string;
  id: string;
  thread_id: string;
  context: string;
}

/** What a step writes per status (bound as one JSON parameter). */
interface NewStatus {
  n: number;
  id: string;
  uri: string;
  url: string;
  reply: string | null;
  thread: string;
  context: string;
  content: string;
  text: string;
  spoiler: string;
  visibility: string;
  sensitive: number;
  language: string | null;
  media: number;
  at: number;
  original: string;
  body: string;
}

const addSkip = (s: ArchiveSkips & Record<string, number>, reason: string) => (s[reason] = (s[reason] ?? 0) + 1);

/** What a step writes, built from its posts. */
interface Built {
  rows: NewStatus[];
  tags: [string, string][];
  media: { id: string; status: string; position: number }[];
  polls: unknown[];
  /** Statuses answered by this step's (their reply counts change). */
  parents: Set<string>;
  /** Posts of the chunk this step took (imported or left out). */
  handled: number;
  mediaSkipped: number;
  skipped: Record<string, number>;
}

/** Step 2: the next posts of the current chunk, written in one batch with the import's progress. */
async function importStep(env: Env, d: DB, job: ArchiveImportRow, t: number): Promise<Record<string, number>> {
  const posts = await nextPosts(env, job);
  const known = await knownPosts(d, job.account_id, posts);
  const built = await buildStep(env, d, job, posts, known);
  const position = job.position + built.handled;
  const done = position >= job.total;
  // Uploads of a failed batch stay unattached: the cron's `collect_media` deletes them with their files.
  await d.$client.batch([...statusStatements(d, job.account_id, built), progressStatement(d, job, built, position, t)]);
  if (done) await removeImportFiles(env, job);
  return { imported: built.rows.length, handled: built.handled, media: built.media.length };
}

/** The posts from `position` on, within its chunk (at most STEP.posts). */
async function nextPosts(env: Env, job: ArchiveImportRow): Promise<ChunkPost[]> {
  const chunkNo = Math.floor(job.position / CHUNK);
  const stored = await env.PRIVATE.get(chunkKey(job, chunkNo));
  if (!stored) throw new ArchiveRefused("The archive's prepared posts are gone");
  const from = job.position - chunkNo * CHUNK;
  return (JSON.parse(await stored.text()) as ChunkPost[]).slice(from, from + STEP.posts);
}

/** The account's statuses already imported among these posts and the posts they answer, by original id. */
async function knownPosts(d: DB, accountId: string, posts: ChunkPost[]): Promise<Map<string, Parent>> {
  const wanted = [...new Set(posts.flatMap((p) => [p.uri, ...(p.inReplyTo ? [p.inReplyTo] : [])]))];
  const rows = await d.all<Parent>(
    sql`SELECT i.original_uri, s.id, s.thread_id, s.context FROM imported_statuses i JOIN statuses s ON s.id = i.status_id
      WHERE i.account_id = ${accountId} AND i.original_uri IN (SELECT value FROM json_each(${JSON.stringify(wanted)}))`,
  );
  return new Map(rows.map((r) => [r.original_uri, r]));
}

/**
 * The rows of as many posts as the step may take (STEP: posts, files, time; at least one), their media stored on
 * the way. A post already imported, or answering one that was not, is left out and counted.
 */
async function buildStep(
  env: Env,
  d: DB,
  job: ArchiveImportRow,
  posts: ChunkPost[],
  known: Map<string, Parent>,
): Promise<Built> {
  const started = Date.now();
  const base = configuredBase(env) || job.base;
  const read = r2Reader(env.PRIVATE, job.file_key);
  const b: Built = {
    rows: [],
    tags: [],
    media: [],
    polls: [],
    parents: new Set(),
    handled: 0,
    mediaSkipped: 0,
    skipped: JSON.parse(job.skipped) as Record<string, number>,
  };
  let files = 0;
  for (const p of posts) {
    if (b.handled > 0 && (files + p.media.length > STEP.files || Date.now() - started > STEP.ms)) break;
    b.handled++;
    if (known.has(p.uri)) {
      addSkip(b.skipped, "already_imported");
      continue;
    }
    const parent = p.inReplyTo ? known.get(p.inReplyTo) : undefined;
    if (p.inReplyTo && !parent) {
      // Its post was not imported (deleted here since, or refused): an answer to nothing is left out too.
      addSkip(b.skipped, "replies_to_others");
      continue;
    }
    const id = newId(p.published);
    files += p.media.length;
    const attached = await storeMedia(env, d, read, job.account_id, id, p);
    b.media.push(...attached);
    b.mediaSkipped += p.media.length - attached.length + p.missingMedia;
    const row = await statusRow(base, id, p, parent, attached.length > 0, b.rows.length + 1);
    b.rows.push(row);
    if (parent) b.parents.add(parent.id);
    for (const tag of new Set(p.tags.flatMap((x) => normalizeTag(x) ?? []))) b.tags.push([id, tag]);
    if (p.poll) b.polls.push(pollRow(id, p.published, p.poll));
    known.set(p.uri, { original_uri: p.uri, id, thread_id: row.thread, context: row.context });
  }
  return b;
}

/** A post's attachments stored as uploads, in order; those left out are not in the answer. */
async function storeMedia(env: Env, d: DB, read: RangeReader, accountId: string, statusId: string, p: ChunkPost) {
  const cfg = config(env);
  const stored: Built["media"] = [];
  for (const m of p.media) {
    const upload = await importMedia(env, d, cfg, read, accountId, m).catch((e) => {
      // An entry inflating past its declared size fails the import (a hostile archive: no later step reads it again).
      if (e instanceof ApiError || (e instanceof ZipRefused && !(e instanceof ZipOversize))) return null;
      throw e;
    });
    if (upload) stored.push({ id: upload, status: statusId, position: stored.length });
  }
  return stored;
}

/** A status's values: sanitised HTML, its text, a new id and ActivityPub id, the old page as its url. */
async function statusRow(
  base: string,
  id: string,
  p: ChunkPost,
  parent: Parent | undefined,
  hasMedia: boolean,
  n: number,
): Promise<NewStatus> {
  const content = await sanitizeHtml(p.content);
  const text = htmlToText(content);
  const spoiler = htmlToText(p.summary);
  const thread = parent?.thread_id ?? id;
  return {
    n,
    id,
    uri: `${base}/objects/${id}`,
    url: p.url || `${base}/notice/${id}`,
    reply: parent?.id ?? null,
    thread,
    context: parent?.context ?? `${base}/contexts/${thread}`,
    content,
    text,
    spoiler,
    visibility: p.visibility,
    sensitive: p.sensitive ? 1 : 0,
    language: p.language,
    media: hasMedia ? 1 : 0,
    at: p.published,
    original: p.uri,
    body: [spoiler, text].filter(Boolean).join("\n"),
  };
}

/** A closed poll with the archive's counts (shown as a remote poll's tallies: nobody here voted). */
const pollRow = (statusId: string, published: number, poll: NonNullable<ArchivePost["poll"]>) => ({
  id: newId(published),
  status: statusId,
  options: JSON.stringify(poll.options),
  multiple: poll.multiple ? 1 : 0,
  ends: poll.endedAt,
  at: published,
  tallies: JSON.stringify(poll.counts),
  voters: poll.voters ?? (poll.multiple ? null : poll.counts.reduce((a, c) => a + c, 0)),
});

const field = (name: string) => sql.raw(`json_extract(value, '$.${name}')`);

/** The statements of a step's statuses and what they carry (none when it imported nothing). */
function statusStatements(d: DB, accountId: string, b: Built): D1PreparedStatement[] {
  if (!b.rows.length) return [];
  const rows = JSON.stringify(b.rows);
  const optional = (items: unknown[], query: () => SQL) => (items.length ? [statement(d, query())] : []);
  return [
    statement(
      d,
      sql`INSERT INTO statuses (id, uri, url, account_id, in_reply_to_id, in_reply_to_account_id, thread_id, context, content, text, content_type,
          spoiler_text, visibility, sensitive, language, local, has_media, emojis, created_at, search_rowid, home_pull)
        SELECT ${field("id")}, ${field("uri")}, ${field("url")}, ${accountId}, ${field("reply")},
          CASE WHEN ${field("reply")} IS NULL THEN NULL ELSE ${accountId} END, ${field("thread")}, ${field("context")},
          ${field("content")}, ${field("text")}, 'text/plain', ${field("spoiler")}, ${field("visibility")}, ${field("sensitive")},
          ${field("language")}, 1, ${field("media")}, '[]', ${field("at")},
          (SELECT coalesce(max(rowid), 0) FROM statuses_fts) + ${field("n")}, 0
        FROM json_each(${rows})`,
    ),
    // The import's key: a racing step's batch fails here as a whole.
    statement(
      d,
      sql`INSERT INTO imported_statuses (account_id, original_uri, status_id)
        SELECT ${accountId}, ${field("original")}, ${field("id")} FROM json_each(${rows})`,
    ),
    statement(
      d,
      sql`INSERT INTO statuses_fts (rowid, body) SELECT s.search_rowid, json_extract(e.value, '$.body')
        FROM json_each(${rows}) e JOIN statuses s ON s.id = json_extract(e.value, '$.id')`,
    ),
    ...optional(
      b.tags,
      () =>
        sql`INSERT OR IGNORE INTO status_tags (status_id, tag) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(${JSON.stringify(b.tags)})`,
    ),
    ...optional(
      b.media,
      () =>
        sql`UPDATE media_attachments SET status_id = json_extract(m.value, '$.status'), position = json_extract(m.value, '$.position')
          FROM json_each(${JSON.stringify(b.media)}) m WHERE media_attachments.id = json_extract(m.value, '$.id') AND media_attachments.account_id = ${accountId}`,
    ),
    ...optional(
      b.polls,
      () =>
        sql`INSERT INTO polls (id, status_id, options, multiple, hide_totals, expires_at, closed_at, created_at, remote_tallies, remote_voters)
          SELECT ${field("id")}, ${field("status")}, ${field("options")}, ${field("multiple")}, 0, ${field("ends")}, ${field("ends")},
            ${field("at")}, ${field("tallies")}, ${field("voters")} FROM json_each(${JSON.stringify(b.polls)})`,
    ),
    statement(
      d,
      sql`UPDATE accounts SET statuses_count = statuses_count + ${b.rows.length},
        last_status_at = max(coalesce(last_status_at, 0), ${Math.max(...b.rows.map((r) => r.at))})
        WHERE id = ${accountId} AND domain IS NULL`,
    ),
    ...optional(
      [...b.parents],
      () =>
        sql`UPDATE statuses SET replies_count = (SELECT count(*) FROM statuses r WHERE r.in_reply_to_id = statuses.id)
          WHERE id IN (SELECT value FROM json_each(${JSON.stringify([...b.parents])})) AND local = 1`,
    ),
  ];
}

/** The import's progress after a step (guarded by where the step started: a racing step's batch writes nothing). */
function progressStatement(d: DB, job: ArchiveImportRow, b: Built, position: number, t: number) {
  const done = position >= job.total;
  return statement(
    d,
    sql`UPDATE archive_imports SET position = ${position}, imported = imported + ${b.rows.length}, media = media + ${b.media.length},
      media_skipped = media_skipped + ${b.mediaSkipped}, skipped = ${JSON.stringify(b.skipped)}, paused = NULL, error = NULL,
      attempts = 0, lease_until = NULL, updated_at = ${t}${done ? sql`, state = 'done'` : sql``}
      WHERE id = ${job.id} AND position = ${job.position}`,
  );
}

/** The family a type names (`image/png` → `image`). */
const family = (mime: string) => mime.split("/")[0] ?? "";

/**
 * One attachment: read from the zip (at most the upload limit), its bytes sniffed (a file that is not the kind
 * the archive claims is left out), stored like an upload (metadata stripped, thumbnail). Answers the upload's id;
 * ApiError or ZipRefused when it is left out.
 */
async function importMedia(
  env: Env,
  d: DB,
  cfg: ReturnType<typeof config>,
  read: RangeReader,
  accountId: string,
  m: ArchiveMedia & { zip: ZipEntry },
): Promise<string> {
  const bytes = await readEntry(read, m.zip, cfg.uploadLimit);
  const sniffed = sniffMedia(bytes.subarray(0, 256));
  if (m.claimed && family(m.claimed) !== family(sniffed.mime))
    throw new ApiError(415, `${m.zip.name} is not the ${m.claimed} it claims to be`);
  const name = m.zip.name.split("/").pop() ?? "file";
  const row = await createUpload(
    d,
    cfg,
    env.MEDIA,
    accountId,
    new FormFile(name, sniffed.mime, bytes),
    m.description.slice(0, cfg.descriptionLimit) || undefined,
    m.focus ? `${m.focus.x},${m.focus.y}` : undefined,
    env.IMAGES,
  );
  return row.id;
}
