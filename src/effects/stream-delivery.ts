/**
 * Delivery of stream events to the streaming Durable Objects (the sink `src/index.ts` registers).
 * For a batch of events:
 * 1. one D1 round trip finds every listener (a `stream_presence` row: object, account, token, stream) that may
 *    receive each event: for a new status the timeline rules of the stream in SQL (the same `shown` conditions
 *    as the timeline pages: visibility, blocks, mutes, domain blocks, thread mutes, irreversible filters, list
 *    membership, home feed), for a deleted one those who could have seen it, for a personal event its account;
 *    a revoked token's listeners, and a disabled account's, match nothing;
 * 2. payloads are rendered once per listening account (the status hydrations of all of them in one batch);
 * 3. each object with a listener gets one call with all its frames (through a relay object when there are more
 *    than STREAM_FANOUT of them).
 * Nobody listening costs the first query and nothing else.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Env } from "../env";
import { config } from "../env";
import { db, statement, type DB } from "../db/client";
import { precompiled } from "../db/json-rows";
import type { Frame } from "../objects/streams";
import { renderConversations } from "../render/conversation";
import { renderNotifications } from "../render/notification";
import { renderStatuses } from "../render/status";
import type { RenderContext } from "../render/account";
import { group } from "../lib/group";
import { loadNotificationsNamed, notificationsByIds } from "../services/notifications";
import { loadConversations, participationsByIds } from "../services/conversations";
import type { StreamEvent } from "../services/events";
import { hydrateEach, type Hydrated } from "../services/hydrate";
import { origins } from "../lib/media-urls";
import { PUBLIC_STREAMS, streamObject, type StreamName } from "../services/streams";
import { shown } from "../services/timelines";
import { NOW, notSilenced, paramsCte, visibleTo } from "../services/visibility";

/** A listener that may receive something: `ref` says what (a status, participation or event index). */
interface Recipient {
  object: string;
  accountId: string;
  tokenId: string;
  stream: StreamName;
  arg: string;
  ref: string;
}

const LISTENER = sql`p.account_id`;
const list = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(", "));
const columns = (ref: SQL) =>
  sql`SELECT p.object, p.account_id AS accountId, p.token_id AS tokenId, p.stream, p.arg, ${ref} AS ref`;
// A listener whose token was revoked or expired, or whose account was disabled, hears nothing more.
const liveToken = sql`(p.token_id = '' OR EXISTS (SELECT 1 FROM tokens tk JOIN accounts ta ON ta.id = tk.account_id
  WHERE tk.id = p.token_id AND tk.expires_at > ${NOW} AND ta.deactivated = 0))`;

/** Listeners of new statuses: public and hashtag streams, and the home (`user`) and list streams they enter. */
function updateListeners(ids: string[]): SQL {
  return sql`WITH ${paramsCte(null)}, ids(id) AS (SELECT value FROM json_each(${JSON.stringify(ids)})) ${precompiled("stream update listeners", updateListenersOf)}`;
}

/** The text of `updateListeners` after its CTEs: the same for every post, so built once (`ids`: the statuses). */
function updateListenersOf(): SQL {
  const topic = sql`CASE p.stream
    WHEN 'public' THEN 1
    WHEN 'public:local' THEN s.local = 1
    WHEN 'public:media' THEN s.has_media = 1
    WHEN 'public:local:media' THEN s.local = 1 AND s.has_media = 1
    WHEN 'public:remote' THEN EXISTS (SELECT 1 FROM accounts ra WHERE ra.id = s.account_id AND ra.domain = p.arg)
    WHEN 'public:remote:media' THEN s.has_media = 1 AND EXISTS (SELECT 1 FROM accounts ra WHERE ra.id = s.account_id AND ra.domain = p.arg)
    WHEN 'hashtag' THEN EXISTS (SELECT 1 FROM status_tags st WHERE st.status_id = s.id AND st.tag = p.arg)
    WHEN 'hashtag:local' THEN s.local = 1 AND EXISTS (SELECT 1 FROM status_tags st WHERE st.status_id = s.id AND st.tag = p.arg)
    ELSE 0 END`;
  // As the public and tag timelines: no reblogs, never unlisted; local-only statuses for signed-in listeners.
  const onTopic = sql`p.stream IN (${list(PUBLIC_STREAMS)}) AND s.reblog_of_id IS NULL AND s.visibility IN ('public', 'local') AND ${topic}
    AND CASE WHEN p.account_id = '' THEN s.visibility = 'public' AND ${shown(null, {}, "public")} ELSE ${shown(LISTENER, {}, "public")} END`;
  // As the home timeline: the status is in the listener's feed (or pulled from a followed account), and for a
  // list stream its author is a member of the listener's list.
  const inHome = sql`(EXISTS (SELECT 1 FROM home_feed h WHERE h.account_id = p.account_id AND h.status_id = s.id)
    OR (s.home_pull = 1 AND EXISTS (SELECT 1 FROM follows hp WHERE hp.account_id = p.account_id AND hp.target_account_id = s.account_id AND (s.reblog_of_id IS NULL OR hp.show_reblogs = 1))))`;
  const ofList = sql`EXISTS (SELECT 1 FROM lists l JOIN list_accounts la ON la.list_id = l.id WHERE l.id = p.arg AND l.account_id = p.account_id AND la.account_id = s.account_id)`;
  // A followed hashtag's public post enters the user stream (not lists), as it enters the home timeline.
  const ofFollowedTag = sql`(p.stream = 'user' AND s.reblog_of_id IS NULL AND s.visibility IN ('public', 'local')
    AND EXISTS (SELECT 1 FROM status_tags st JOIN followed_tags ft ON ft.account_id = p.account_id AND ft.tag = st.tag WHERE st.status_id = s.id))`;
  const atHome = sql`p.account_id <> '' AND (p.stream = 'user' OR (p.stream = 'list' AND ${ofList})) AND (${inHome} OR ${ofFollowedTag}) AND ${shown(LISTENER, {}, "home")}`;
  return sql`${columns(sql`s.id`)} FROM statuses s JOIN stream_presence p ON p.stream IN (${list([...PUBLIC_STREAMS, "user", "list"])})
    WHERE s.id IN (SELECT id FROM ids) AND ${liveToken} AND ((${onTopic}) OR (${atHome}))`;
}

/** Listeners of `direct` streams whose conversation a new direct status updated. */
function conversationListeners(ids: string[]): SQL {
  return sql`WITH ${paramsCte(null)}, ids(id) AS (SELECT value FROM json_each(${JSON.stringify(ids)}))
    ${precompiled(
      "stream conversation listeners",
      () => sql`${columns(sql`pa.id`)} FROM statuses s
      JOIN conversations c ON c.thread_id = s.thread_id
      JOIN participations pa ON pa.conversation_id = c.id AND pa.last_status_id = s.id
      JOIN stream_presence p ON p.account_id = pa.account_id AND p.stream = 'direct'
    WHERE s.id IN (SELECT id FROM ids) AND s.visibility = 'direct' AND ${liveToken}
      AND ${visibleTo(LISTENER, { id: sql`s.id`, accountId: sql`s.account_id`, visibility: sql`s.visibility` })} AND ${notSilenced(LISTENER, false, sql`s.account_id`)}`,
    )}`;
}

/** Listeners who could have seen deleted statuses: public ones everywhere, others on the streams of their audience. */
function deleteListeners(deletes: Extract<StreamEvent, { event: "delete" }>[]): SQL {
  const json = JSON.stringify(
    deletes.map((e) => [e.payload, e.audience.authorId, e.audience.visibility, e.audience.recipients]),
  );
  const [id, author, visibility, recipients] = ["$[0]", "$[1]", "$[2]", "$[3]"].map(
    (path) => sql`json_extract(e.value, ${sql.raw(`'${path}'`)})`,
  );
  return sql`WITH ${paramsCte(null)}
    ${columns(id)} FROM json_each(${json}) e JOIN stream_presence p ON p.stream NOT IN ('user:notification', 'user:pleroma_chat')
    WHERE ${liveToken} AND (${visibility} = 'public' OR (p.account_id <> '' AND (${visibility} = 'local'
      OR (p.stream IN ('user', 'list', 'direct') AND (${visibility} = 'unlisted' OR p.account_id = ${author}
        OR p.account_id IN (SELECT value FROM json_each(${recipients}))
        OR (${visibility} = 'private' AND EXISTS (SELECT 1 FROM follows f WHERE f.account_id = p.account_id AND f.target_account_id = ${author})))))))`;
}

/**
 * Listeners of personal events: the account's `user` stream, `user:notification` for notifications and
 * `user:pleroma_chat` for chat updates.
 */
function personalListeners(events: Extract<StreamEvent, { accountId: string }>[]): SQL {
  const json = JSON.stringify(events.map((e, i) => [String(i), e.accountId, e.event]));
  return sql`WITH ${paramsCte(null)}
    ${columns(sql`json_extract(e.value, '$[0]')`)} FROM json_each(${json}) e JOIN stream_presence p ON p.account_id = json_extract(e.value, '$[1]')
    WHERE ${liveToken} AND (p.stream = 'user' OR (p.stream = 'user:notification' AND json_extract(e.value, '$[2]') = 'notification')
      OR (p.stream = 'user:pleroma_chat' AND json_extract(e.value, '$[2]') = 'pleroma:chat_update'))`;
}

/** The steps above: find the listeners, render what they receive, call their objects. */
export async function deliverToStreams(events: StreamEvent[], env: Env, base: string): Promise<void> {
  const d = db(env);
  const listening = await findListeners(d, events);
  if (!listening) return;

  const host = base ? new URL(base).host : "";
  const o = origins(env, base);
  const frames: (Frame & { object: string })[] = [];
  const out: Out = {
    d,
    ctxFor: (viewer) => ({ ...o, host, viewerId: viewer || null }),
    frame: (r, event, payload) =>
      frames.push({ object: r.object, tokenId: r.tokenId, stream: r.stream, arg: r.arg, event, payload }),
  };
  const { hydrated, participations, notificationRows } = await loadPayloads(d, listening);
  statusFrames(out, listening, hydrated);
  for (const r of listening.found.get("delete") ?? []) out.frame(r, "delete", r.ref);
  await Promise.all([
    ...conversationFrames(out, listening, participations),
    ...personalFrames(out, listening, notificationRows),
  ]);
  await callObjects(env, frames);
}

/** The events of a batch by kind, and the listeners each kind found (by query name). */
interface Listening {
  updates: string[];
  edits: string[];
  personal: Extract<StreamEvent, { accountId: string }>[];
  found: Map<string, Recipient[]>;
}

/** Where rendered payloads go: a frame for a listener (the render context is the listening account's). */
interface Out {
  d: DB;
  ctxFor: (viewer: string) => RenderContext;
  frame: (r: Recipient, event: string, payload?: string) => void;
}

/** 1. One round trip for every listener of the batch; null when nobody is listening. */
async function findListeners(d: DB, events: StreamEvent[]): Promise<Listening | null> {
  const updates = [...new Set(events.flatMap((e) => (e.event === "update" ? [e.payload] : [])))];
  const edits = [...new Set(events.flatMap((e) => (e.event === "status.update" ? [e.payload] : [])))];
  const deletes = events.filter((e): e is Extract<StreamEvent, { event: "delete" }> => e.event === "delete");
  const personal = events.filter((e): e is Extract<StreamEvent, { accountId: string }> => e.accountId !== null);
  const queries: [string, SQL][] = [];
  if (updates.length)
    queries.push(["update", updateListeners(updates)], ["conversation", conversationListeners(updates)]);
  // An edit reaches whoever a new status would (the same timeline rules), as `status.update`.
  if (edits.length) queries.push(["status.update", updateListeners(edits)]);
  if (deletes.length) queries.push(["delete", deleteListeners(deletes)]);
  if (personal.length) queries.push(["personal", personalListeners(personal)]);
  if (queries.length === 0) return null;
  const results = await d.$client.batch<Recipient>(queries.map(([, q]) => statement(d, q)));
  const found = new Map(queries.map(([kind], i) => [kind, results[i].results]));
  if ([...found.values()].every((rows) => rows.length === 0)) return null;
  return { updates, edits, personal, found };
}

/** 2a. What the payloads are made of, loaded together: statuses per viewer, participations, notifications. */
async function loadPayloads(d: DB, { updates, edits, personal, found }: Listening) {
  const updateRows = found.get("update") ?? [];
  const editRows = found.get("status.update") ?? [];
  const notificationIds = (found.get("personal") ?? []).flatMap((r) => {
    const e = personal[Number(r.ref)];
    return e.event === "notification" ? [e.payload] : [];
  });
  const [hydrated, participations, notificationRows] = await Promise.all([
    updateRows.length || editRows.length
      ? hydrateEach(
          d,
          [...new Set([...updates, ...edits])],
          [...updateRows, ...editRows].map((r) => r.accountId),
        )
      : new Map<string, Hydrated>(),
    participationsByIds(
      d,
      (found.get("conversation") ?? []).map((r) => r.ref),
    ),
    notificationsByIds(d, notificationIds),
  ]);
  return { hydrated, participations, notificationRows };
}

/** 2b. New and edited statuses: each rendered once per distinct viewer state (listeners alike share a Hydrated: hydrateEach). */
function statusFrames(out: Out, { updates, edits, found }: Listening, hydrated: Map<string, Hydrated>): void {
  for (const [event, rowsOf, ids] of [
    ["update", found.get("update") ?? [], updates],
    ["status.update", found.get("status.update") ?? [], edits],
  ] as const) {
    const renderings = new Map<Hydrated, Map<string, string>>();
    for (const [viewer, rows] of group(rowsOf, (r) => r.accountId)) {
      const h = hydrated.get(viewer)!;
      let rendered = renderings.get(h);
      if (!rendered)
        renderings.set(
          h,
          (rendered = new Map(
            renderStatuses(out.ctxFor(h.viewerId ?? ""), h, ids).map((s) => [s.id, JSON.stringify(s)]),
          )),
        );
      for (const r of rows) {
        const payload = rendered.get(r.ref);
        if (payload) out.frame(r, event, payload);
      }
    }
  }
}

/** 2c. Updated conversations, rendered per listening account. */
function conversationFrames(
  out: Out,
  { found }: Listening,
  participations: Awaited<ReturnType<typeof participationsByIds>>,
): Promise<void>[] {
  return [...group(found.get("conversation") ?? [], (r) => r.accountId)].map(async ([viewer, rows]) => {
    const mine = participations.filter((p) => p.accountId === viewer);
    const rendered = new Map(
      renderConversations(out.ctxFor(viewer), await loadConversations(out.d, viewer, mine)).map((c) => [
        c.id,
        JSON.stringify(c),
      ]),
    );
    for (const r of rows) if (rendered.has(r.ref)) out.frame(r, "conversation", rendered.get(r.ref));
  });
}

/** 2d. Personal events: notifications rendered per account (muted ones left out), other events as they came. */
function personalFrames(
  out: Out,
  { personal, found }: Listening,
  notificationRows: Awaited<ReturnType<typeof notificationsByIds>>,
): Promise<void>[] {
  return [...group(found.get("personal") ?? [], (r) => r.accountId)].map(async ([viewer, rows]) => {
    const own = notificationRows.filter((n) => n.accountId === viewer && !n.isMuted);
    const rendered = new Map(
      (own.length
        ? renderNotifications(out.ctxFor(viewer), own, await loadNotificationsNamed(out.d, viewer, own))
        : []
      ).map((n) => [n.id, JSON.stringify(n)]),
    );
    for (const r of rows) {
      const e = personal[Number(r.ref)];
      if (e.event === "notification") {
        if (rendered.has(e.payload)) out.frame(r, "notification", rendered.get(e.payload));
      } else if (r.stream === "user" || r.stream === "user:pleroma_chat")
        out.frame(r, e.event, e.payload === null ? undefined : JSON.stringify(e.payload));
    }
  });
}

/**
 * 3. One call per object with all its frames. Up to STREAM_FANOUT objects are called directly; more, in groups
 * through the group's first object, so no invocation calls more than STREAM_FANOUT objects.
 */
async function callObjects(env: Env, frames: (Frame & { object: string })[]): Promise<void> {
  const batches = [...group(frames, (f) => f.object)].map(([object, list]) => ({
    object,
    frames: list.map(({ object: _o, ...f }) => f),
  }));
  const fanout = config(env).streamFanout;
  const groups =
    batches.length <= fanout
      ? batches.map((b) => [b])
      : Array.from({ length: Math.ceil(batches.length / fanout) }, (_, i) =>
          batches.slice(i * fanout, (i + 1) * fanout),
        );
  await Promise.all(
    groups.map((group) => {
      const head = streamObject(env, group[0].object);
      const call = group.length === 1 ? head.deliver(group[0].object, group[0].frames) : head.relay(group);
      return call.catch((e: unknown) => console.error("stream delivery", group[0].object, e));
    }),
  );
}
