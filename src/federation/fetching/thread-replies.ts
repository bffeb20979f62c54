/**
 * Whole threads (issue 36): when someone here opens a remote status's context, after the response its thread is
 * completed from the other servers, as Mastodon 4.4's "fetch all replies" does: the missing ancestors of the
 * thread's top status (`fetchAncestors`), then, breadth first from that top, the `replies` collection of each
 * status of the thread (its first pages), each reply not stored yet fetched from its id and stored as a fetched
 * post (`storeFetchedStatus`: the author on the object's origin, the federation policies, the storage guard),
 * linked to its parent. Bounded by what it tries, not only by what it stores: `MAX_DEPTH` levels, `MAX_STORED` new
 * statuses, `PAGES` pages per collection and `PER_PAGE` ids read from each (Mastodon's FetchRepliesService reads
 * 5), `MAX_FETCHES` documents fetched in all (statuses, collections, pages), and a deadline of `THREAD_MS` checked
 * in every loop, so that a run `within` gave up on stops too; at most once per thread per hour
 * (`claimThreadFetch`). What was stored reaches the streams
 * as new statuses, and the opened status gets a `status.update`, so an open client can load the context again.
 * Never throws.
 */
import { Collection, CollectionPage, Object as APObject } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/fedify";
import { sql } from "drizzle-orm";
import { db } from "../../db/client";
import { within } from "../../lib/within";
import { claimThreadFetch } from "../../services/context";
import { mergeEffects, type Effects } from "../../services/effects";
import { rejectedHost } from "../../services/federation-policies";
import { federationContext, freshDocumentLoader } from "../federation";
import { embeddedOnly } from "../door/loaders";
import { isPostLike } from "../documents/object-types";
import { storeFetchedStatus, type ResolveEnv } from "./resolve";
import { fetchAncestors } from "./thread-ancestors";
import { fetchingPaused } from "../../services/usage-budget";

/** Levels of replies below the thread's top that are walked. */
export const MAX_DEPTH = 4;
/** New statuses stored per thread fetch. */
export const MAX_STORED = 40;
/** Statuses whose `replies` collection is read per thread fetch. */
const MAX_VISITED = 40;
/** Pages read per `replies` collection (Mastodon's first page holds the author's self-replies, the next the others'). */
const PAGES = 3;
/** Ids read from one page of a `replies` collection (the rest of a huge page is not tried). */
export const PER_PAGE = 20;
/** Documents fetched (statuses, collections, pages) per thread fetch, whatever they turn out to be. */
export const MAX_FETCHES = 60;
/** Time one thread's fetch may take in all. */
const THREAD_MS = 15_000;

/** What a thread fetch may still spend: fetches, and time. */
interface Budget {
  fetches: number;
  deadline: number;
}
const spent = (b: Budget) => b.fetches <= 0 || Date.now() >= b.deadline;

/** Completes the threads of these statuses (each at most once an hour); answers what follows for the streams. */
export async function fetchThreads(r: ResolveEnv, statusIds: string[], t: number = Date.now()): Promise<Effects> {
  // From 80% of any of the plan's caps, thread fetching waits (nothing claimed: the next opening fetches it).
  if (await fetchingPaused(r.env, t)) return {};
  const out: Effects[] = [];
  for (const id of new Set(statusIds)) {
    if (!(await claimThreadFetch(db(r.env), id, t).catch(() => false))) continue;
    const effects: Effects[] = [];
    await within(fetchThread(r, id, effects, { fetches: MAX_FETCHES, deadline: Date.now() + THREAD_MS }), THREAD_MS);
    out.push(...effects);
    if (effects.length) out.push({ events: [{ accountId: null, event: "status.update", payload: id }] });
  }
  return mergeEffects(...out);
}

type Row = { id: string; uri: string; local: number; in_reply_to_id: string | null };

async function fetchThread(r: ResolveEnv, statusId: string, effects: Effects[], budget: Budget): Promise<void> {
  const d = db(r.env);
  try {
    // The thread's top status as stored: walked up from the opened one.
    const topOf = (id: string) =>
      d.get<Row>(
        sql`WITH RECURSIVE up(id, n) AS (SELECT ${id}, 0 UNION ALL SELECT s.in_reply_to_id, up.n + 1 FROM up JOIN statuses s ON s.id = up.id WHERE s.in_reply_to_id IS NOT NULL AND up.n < 64)
          SELECT s.id, s.uri, s.local, s.in_reply_to_id FROM up JOIN statuses s ON s.id = up.id ORDER BY up.n DESC LIMIT 1`,
      );
    const top = await topOf(statusId);
    if (!top) return;
    const ctx = await federationContext(r.env, r.base);
    const fresh = freshDocumentLoader(r.env);
    // Every document fetched counts against the budget (the status, its collection, each page).
    const loader: typeof fresh = (url, options) => {
      if (spent(budget)) return Promise.reject(new Error("thread fetch budget spent"));
      budget.fetches--;
      return fresh(url, options);
    };
    // The document at the id, as its origin serves it (no WebFinger fallback: one fetch per id tried).
    const fetchObject = async (uri: string): Promise<APObject | null> => {
      try {
        const doc = await loader(uri);
        if (new URL(doc.documentUrl).origin !== new URL(uri).origin) return null;
        return await APObject.fromJsonLd(doc.document, { documentLoader: loader, contextLoader: ctx.contextLoader });
      } catch {
        return null;
      }
    };
    const local = new URL(r.base).origin;
    // Each document is read once (a reply stored at one level is read again for its replies at the next).
    const memo = new Map<string, Promise<APObject | null>>();
    const load = (uri: string) => {
      const known = memo.get(uri);
      if (known) return known;
      const p =
        new URL(uri).origin === local || rejectedHost(d, new URL(uri).hostname)
          ? Promise.resolve(null)
          : fetchObject(uri);
      memo.set(uri, p);
      return p;
    };

    // Missing ancestors, as a reply's arrival fetches them: the top status's own parent, if it names one.
    let root: Row = top;
    if (!top.local) {
      const object = await load(top.uri);
      const parent = isPostLike(object) && object.id?.href === top.uri ? object.replyTargetId?.href : undefined;
      if (parent && (await fetchAncestors(r, top.id, parent)) > 0) {
        root = (await topOf(top.id)) ?? top;
      }
    }

    // Replies, breadth first from the top: each status's `replies` collection (a local status's replies come
    // to this instance by delivery: its known replies are walked, its collection not read).
    let stored = 0;
    let visited = 0;
    let level: Row[] = [root];
    for (let depth = 0; depth < MAX_DEPTH && level.length && stored < MAX_STORED && !spent(budget); depth++) {
      const next: Row[] = [];
      for (const status of level) {
        if (visited++ >= MAX_VISITED || stored >= MAX_STORED || spent(budget)) break;
        if (!status.local) {
          const uris = await replyUris(status.uri, load, loader);
          // Which of them are stored already: one query.
          const known = new Set(
            uris.length
              ? (
                  await d.all<{ uri: string }>(
                    sql`SELECT uri FROM statuses WHERE uri IN (SELECT value FROM json_each(${JSON.stringify(uris)}))`,
                  )
                ).map((k) => k.uri)
              : [],
          );
          for (const uri of uris) {
            if (stored >= MAX_STORED || spent(budget)) break;
            if (known.has(uri)) continue;
            const object = await load(uri);
            if (!isPostLike(object) || object.id?.href !== uri || object.replyTargetId?.href !== status.uri) continue;
            const id = await storeFetchedStatus(r, object, { lightAuthor: true, onStored: (e) => effects.push(e) });
            if (id) stored++;
          }
        }
        // Every reply stored now (fetched or known before) is walked next.
        next.push(
          ...(await d.all<Row>(
            sql`SELECT id, uri, local, in_reply_to_id FROM statuses WHERE in_reply_to_id = ${status.id} AND reblog_of_id IS NULL ORDER BY id LIMIT ${MAX_VISITED}`,
          )),
        );
      }
      level = next;
    }
  } catch (e) {
    console.warn("thread replies", statusId, (e as Error)?.message ?? e);
  }
}

/**
 * The ids a status's `replies` collection lists, first pages only (items inline, then `first` and its `next`s on
 * the status's origin). Embedded items count by their id only: each is fetched again from it.
 */
async function replyUris(
  uri: string,
  load: (uri: string) => Promise<APObject | null>,
  loader: DocumentLoader,
): Promise<string[]> {
  const origin = new URL(uri).origin;
  const object = await load(uri);
  if (!isPostLike(object) || object.id?.href !== uri || !object.repliesId || object.repliesId.origin !== origin)
    return [];
  const opts = { documentLoader: loader, suppressError: true };
  const replies = await object.getReplies(opts).catch(() => null);
  if (!(replies instanceof Collection)) return [];
  const out: string[] = [];
  // A few ids per page: a page listing hundreds is not tried in full.
  const take = (page: Collection | CollectionPage) => out.push(...page.itemIds.slice(0, PER_PAGE).map((u) => u.href));
  take(replies);
  // The first page may be embedded (Mastodon's is) or an id on the same origin.
  let page: CollectionPage | null = null;
  if (replies.firstId === null || replies.firstId.origin === origin)
    page = (await replies
      .getFirst({ ...opts, documentLoader: replies.firstId ? loader : embeddedOnly })
      .catch(() => null)) as CollectionPage | null;
  for (let n = 0; page && n < PAGES; n++) {
    take(page);
    if (!page.nextId || page.nextId.origin !== origin) break;
    page = (await page.getNext(opts).catch(() => null)) as CollectionPage | null;
  }
  return [...new Set(out)].filter((u) => u !== uri);
}
