/**
 * Editing statuses (issue 31), as Mastodon 3.5+ and Pleroma 2.5 do:
 * - a local status's author changes its text, content warning, sensitivity, language, media (and their
 *   descriptions) and poll; visibility, reply target and addressing stay. Mentions an edit adds are addressed and
 *   notified once; hashtags, emoji, link card and the search index follow the new text; a poll whose options (or
 *   `multiple`) change loses its votes;
 * - every version is kept (`status_edits`): on the first edit the original too, so the history lists it first;
 * - the edit streams `status.update`, notifies (`update`) the local accounts that reblogged it, and goes out as an
 *   `Update` to the audience of its `Create` (services/audience.ts), all in the edit's one batch;
 * - an edit received from a remote author (services/remote-status-edits.ts `updateRemoteNote`) keeps its versions
 *   and notifies the same way, through `versionStatements` and `notifyEdit`.
 */
import { notifyQuoters } from "./quotes";
import type { Effects } from "./effects";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { now, readsWhere, statement } from "../db/client";
import { isId, newId } from "../db/ids";
import { mediaAttachments, polls, statusEdits, statusRecipients, statuses, type EditedMedia } from "../db/schema";
import { extract, renderContent, type ContentType } from "../content/format";
import type { Config } from "../env";
import { notFound, unprocessable } from "../lib/errors";
import type { AccountWithUser } from "./accounts";
import type { MediaRow, PollRow, StatusRow } from "./hydrate";
import { localEmojisNamed, resolveLocalEmojis } from "./emoji";
import { notify } from "./notifications";
import { outboxWrite } from "./outbox";
import { unsent } from "./approval-requests";
import { validatePost, type PollInput, type PostContext } from "./statuses";
import { accountsByAcctKey, knownMentions, mentionTargets, shortcodesOf } from "./post-mentions";
import { visibleTo } from "./visibility";
import { usableUploads, checkDescription, parseFocus } from "./uploads";
import {
  editStatements,
  mentionStatements,
  pollStatements,
  sameOptions,
  searchTextStatement,
  type Edited,
} from "./status-edit-writes";

export type EditRow = typeof statusEdits.$inferSelect;

export interface EditInput {
  status?: string;
  spoiler_text?: string;
  sensitive?: boolean;
  language?: string;
  content_type?: string;
  media_ids?: string[];
  /** Mastodon's `media_attributes[]`: new descriptions and focal points of the attached media (null: unchanged). */
  media_attributes?: { id: string; description?: string | null; focus?: string | null }[];
  poll?: PollInput;
}

/** A version of a status as `status_edits` keeps it. */
export interface Version {
  content: string;
  spoilerText: string;
  sensitive: boolean;
  emojis: StatusRow["emojis"];
  media: EditedMedia[];
  poll: { options: string[] } | null;
  createdAt: number;
}

export const editedMedia = (m: Pick<MediaRow, keyof EditedMedia>): EditedMedia => ({
  id: m.id,
  type: m.type,
  file: m.file,
  remoteUrl: m.remoteUrl,
  mimeType: m.mimeType,
  description: m.description,
  meta: m.meta,
});

/**
 * The statements keeping a status's versions: `before` (what it showed until now) only when no version is kept
 * yet, so the first edit keeps the original too; then `after`, the edit.
 */
export function versionStatements(d: DB, statusId: string, before: Version, after: Version): D1PreparedStatement[] {
  const row = (v: Version) => ({
    id: newId(v.createdAt),
    statusId,
    content: v.content,
    spoilerText: v.spoilerText,
    sensitive: v.sensitive,
    emojis: v.emojis,
    media: v.media,
    poll: v.poll,
    createdAt: v.createdAt,
  });
  const first = row(before);
  return [
    statement(
      d,
      sql`INSERT INTO status_edits (id, status_id, content, spoiler_text, sensitive, emojis, media, poll, created_at)
        SELECT ${first.id}, ${statusId}, ${first.content}, ${first.spoilerText}, ${first.sensitive ? 1 : 0}, ${JSON.stringify(first.emojis)},
          ${JSON.stringify(first.media)}, ${first.poll ? JSON.stringify(first.poll) : null}, ${first.createdAt}
        WHERE NOT EXISTS (SELECT 1 FROM status_edits WHERE status_id = ${statusId})`,
    ),
    statement(d, d.insert(statusEdits).values(row(after))),
    // The history is bounded, for local edits and remote Updates alike: the original and the newest versions stay.
    statement(
      d,
      sql`DELETE FROM status_edits WHERE status_id = ${statusId} AND id IN (
        SELECT id FROM status_edits WHERE status_id = ${statusId} ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ${VERSIONS_KEPT - 1})
        AND id <> (SELECT id FROM status_edits WHERE status_id = ${statusId} ORDER BY created_at, id LIMIT 1)`,
    ),
  ];
}

/** Versions kept of a status (the original among them); older ones but the original are dropped. */
export const VERSIONS_KEPT = 50;

/**
 * `update` notifications of an edit to the local accounts that reblogged the status and may still see it (as
 * Mastodon 4 notifies: not those who only favourited or replied). One statement whatever their number.
 */
export function notifyEdit(d: DB, status: { id: string; accountId: string }, t: number): D1PreparedStatement {
  const rebloggers = sql`(SELECT DISTINCT r.account_id FROM statuses r JOIN users u ON u.account_id = r.account_id
    WHERE r.reblog_of_id = ${status.id} AND r.account_id <> ${status.accountId})`;
  return notify(d, {
    type: "update",
    to: [],
    toQuery: rebloggers,
    from: status.accountId,
    statusId: status.id,
    onlyIf: sql`EXISTS (SELECT 1 FROM statuses WHERE statuses.id = ${status.id} AND ${visibleTo(sql`n.to_id`)})`,
    at: t,
  });
}

/**
 * Edits a local status of `ctx.author` (404 for anyone else's, a reblog, or an unknown id). Answers its id and
 * what must follow the edit; an edit that changes nothing writes nothing.
 */
export async function editStatus(
  ctx: PostContext,
  id: string,
  p: EditInput,
  t: number = now(),
): Promise<{ statusId: string; effects: Effects }> {
  const { d, author } = ctx;
  const me = author.account.id;
  const status = await editableStatus(d, me, id);
  const contentType = (p.content_type ?? status.contentType) as ContentType;
  validatePost(ctx, { ...p, content_type: contentType });
  const text = p.status ?? "";
  const spoiler = p.spoiler_text ?? "";
  const found = await extract(text, contentType, ctx.host);
  const shortcodes = await shortcodesOf(ctx.host, found, spoiler, p.poll?.options ?? []);
  const mediaIds = [...new Set(p.media_ids ?? [])];
  const acctKeys = [...new Set(found.mentions)];
  const [mediaRows, currentMedia, pollRows, recipientRows, mentionRows, emojiRows] = await readEdit(
    d,
    me,
    id,
    mediaIds,
    acctKeys,
    shortcodes,
  );
  if (mediaRows.length !== mediaIds.length)
    throw unprocessable("Invalid media_ids: not found, not yours, or already used");
  const attributes = p.media_attributes ?? [];
  if (attributes.some((a) => !mediaIds.includes(a.id)))
    throw unprocessable("media_attributes name media that are not among media_ids");

  const { byKey, mentioned, newMentions } = await editMentions(ctx, found.mentions, mentionRows, recipientRows);
  const content = await renderContent(text, contentType, {
    base: ctx.base,
    localHost: ctx.host,
    mentions: mentionTargets(found.mentions, byKey),
  });
  const media = editedMediaRows(ctx.cfg, mediaIds, mediaRows, attributes);
  const poll = pollRows[0] ?? null;
  const edited: Edited = {
    text,
    content,
    contentType,
    spoilerText: spoiler,
    sensitive: p.sensitive ?? (spoiler !== "" || (media.length > 0 && author.user.sensitive)),
    language: p.language ?? status.language,
    emojis: resolveLocalEmojis(shortcodes, emojiRows),
    cardUrl: found.links[0] ?? null,
    tags: found.tags,
    mediaIds,
    media,
  };
  const before = shownVersion(status, currentMedia, poll);
  const after = editedVersion(edited, p.poll, t);
  if (changesNothing(status, edited, before, after, poll, p.poll)) return { statusId: id, effects: {} };

  const stmts: D1PreparedStatement[] = [
    ...editStatements(d, me, id, edited, t),
    ...pollStatements(d, id, poll, p.poll, t),
    searchTextStatement(d, id, edited),
    ...versionStatements(d, id, before, after),
    ...mentionStatements(d, id, mentioned, newMentions),
    ...(unsent(status) ? [] : [outboxWrite(d, me, { type: "Update", statusId: id }, t)]),
  ];
  const notifying = stmts.length;
  if (newMentions.length) stmts.push(notify(d, { type: "mention", to: newMentions, from: me, statusId: id, at: t }));
  stmts.push(notifyEdit(d, status, t), notifyQuoters(d, status, t));
  const notifyingEnd = stmts.length;
  const results = await d.$client.batch(stmts);
  return {
    statusId: id,
    effects: {
      events: [{ accountId: null, event: "status.update", payload: id }],
      push: results.slice(notifying, notifyingEnd).some((r) => (r.meta?.changes ?? 0) > 0),
      cards: edited.cardUrl && edited.cardUrl !== status.cardUrl ? [edited.cardUrl] : [],
    },
  };
}

/** The author's own status of that id, not a reblog: anyone else's is not found, as an unknown id is. */
async function editableStatus(d: DB, me: string, id: string): Promise<StatusRow> {
  const status = isId(id)
    ? await d
        .select()
        .from(statuses)
        .where(and(eq(statuses.id, id), eq(statuses.accountId, me), isNull(statuses.reblogOfId)))
        .get()
    : undefined;
  if (!status) throw notFound();
  return status;
}

/**
 * What an edit reads, in one round trip: the media it names, the status's media, poll and addressees as they
 * are, the accounts it mentions and the emoji it names (none of a kind it does not need).
 */
function readEdit(d: DB, me: string, id: string, mediaIds: string[], acctKeys: string[], shortcodes: string[]) {
  return readsWhere(d, [
    // Already this status's (shown, or taken off by an earlier edit), or an upload not used yet.
    mediaIds.length ? usableUploads(d, me, mediaIds, { status: id }) : null,
    d
      .select()
      .from(mediaAttachments)
      .where(and(eq(mediaAttachments.statusId, id), eq(mediaAttachments.removedByEdit, false)))
      .orderBy(asc(mediaAttachments.position)),
    d.select().from(polls).where(eq(polls.statusId, id)),
    d
      .select({ accountId: statusRecipients.accountId, mention: statusRecipients.mention })
      .from(statusRecipients)
      .where(eq(statusRecipients.statusId, id)),
    acctKeys.length ? accountsByAcctKey(d, acctKeys) : null,
    shortcodes.length ? localEmojisNamed(d, shortcodes) : null,
  ] as const);
}

/**
 * Who the edited text mentions, as a post finds them (unknown remote accounts looked up on their servers), and
 * who of them it did not mention before: those are addressed and notified once.
 */
async function editMentions(
  ctx: PostContext,
  mentions: string[],
  mentionRows: AccountWithUser[],
  recipientRows: { accountId: string; mention: boolean }[],
): Promise<{ byKey: Map<string, AccountWithUser>; mentioned: Set<string>; newMentions: string[] }> {
  const { byKey } = await knownMentions([...new Set(mentions)], mentionRows, ctx.resolveMentions);
  const mentioned = new Set(mentions.flatMap((k) => byKey.get(k)?.account.id ?? []));
  mentioned.delete(ctx.author.account.id);
  const wasMentioned = new Set(recipientRows.filter((r) => r.mention).map((r) => r.accountId));
  return { byKey, mentioned, newMentions: [...mentioned].filter((a) => !wasMentioned.has(a)) };
}

/**
 * The media after the edit, in its order, with the descriptions and focal points it names (checked as uploads
 * check them); else those waiting from PUT /api/v1/media/:id (services/uploads.ts), else their own.
 */
function editedMediaRows(
  cfg: Config,
  mediaIds: string[],
  rows: MediaRow[],
  attributes: NonNullable<EditInput["media_attributes"]>,
): MediaRow[] {
  for (const a of attributes) checkDescription(cfg, a.description ?? undefined);
  const described = new Map(attributes.flatMap((a) => (a.description == null ? [] : [[a.id, a.description]])));
  const focused = new Map(attributes.flatMap((a) => (a.focus == null ? [] : [[a.id, parseFocus(a.focus)]])));
  const byId = new Map(rows.map((m) => [m.id, m]));
  return mediaIds.map((mid, position) => {
    const m = byId.get(mid)!;
    const focus = focused.get(mid) ?? m.pending?.focus;
    return {
      ...m,
      position,
      description: described.has(mid) ? described.get(mid)! : (m.pending?.description ?? m.description),
      meta: focus ? { ...(m.meta ?? {}), focus } : m.meta,
    };
  });
}

/** What the status showed until now, as a version: the original, or an edit made before versions were kept. */
function shownVersion(status: StatusRow, media: MediaRow[], poll: PollRow | null): Version {
  return {
    content: status.content,
    spoilerText: status.spoilerText,
    sensitive: status.sensitive,
    emojis: status.emojis,
    media: media.map(editedMedia),
    poll: poll ? { options: poll.options } : null,
    createdAt: status.editedAt ?? status.createdAt,
  };
}

/** The edit as a version. */
function editedVersion(e: Edited, poll: PollInput | undefined, t: number): Version {
  return {
    content: e.content,
    spoilerText: e.spoilerText,
    sensitive: e.sensitive,
    emojis: e.emojis,
    media: e.media.map(editedMedia),
    poll: poll ? { options: poll.options } : null,
    createdAt: t,
  };
}

/**
 * An edit that changes nothing a reader sees (the text as typed, its format and language, what a version keeps,
 * the poll's settings): it writes nothing, sends nothing.
 */
function changesNothing(
  status: StatusRow,
  e: Edited,
  before: Version,
  after: Version,
  poll: PollRow | null,
  next: PollInput | undefined,
): boolean {
  return (
    status.text === e.text &&
    status.contentType === e.contentType &&
    status.language === e.language &&
    JSON.stringify({ ...before, createdAt: 0 }) === JSON.stringify({ ...after, createdAt: 0 }) &&
    (!poll || !next || (sameOptions(poll, next) && poll.hideTotals === (next.hide_totals ?? false)))
  );
}

/** The kept versions of a status, oldest first (none when it was never edited). */
export async function statusVersions(d: DB, statusId: string): Promise<EditRow[]> {
  return d.select().from(statusEdits).where(eq(statusEdits.statusId, statusId)).orderBy(asc(statusEdits.createdAt));
}
