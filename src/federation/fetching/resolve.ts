/**
 * Finding remote accounts (issue 13, "Resolving"): `user@domain`, `@user@domain` or an actor URL becomes an
 * `accounts` row. Local accounts first; a stored remote row that is fresh is used as it is; otherwise Fedify
 * looks it up (WebFinger, then the actor, through the guarded loaders) and `upsertActor` stores it with the
 * counters its collections report. A stale row is refreshed; when its server does not answer, the stored row is
 * kept. Every fetch is bounded in time: a slow server cannot hold a request for long.
 */
import { splitAcct } from "../../lib/acct";
import { applyNotePolicies, rejectedHost } from "../../services/federation-policies";
import type { DocumentLoader } from "@fedify/fedify";
import { isActor, type Actor, type Object as APObject } from "@fedify/vocab";
import { isPostLike } from "../documents/object-types";
import { eq, or, sql } from "drizzle-orm";
import { db, type DB } from "../../db/client";
import { accounts } from "../../db/schema";
import { config } from "../../env";
import { within } from "../../lib/within";
import { federationContext, freshDocumentLoader } from "../federation";
import type { AccountWithUser } from "../../services/accounts";
import { findByAcct, withUser } from "../../services/accounts";
import { isStale, type ReportedCounts } from "../../services/remote-accounts";
import { upsertActor } from "../documents/parse-actor";
import { storeRemoteNote } from "../../services/remote-statuses";
import { addressedAs } from "../../services/search";
import { parseNote } from "../documents/parse-note";
import { syncFeatured } from "./featured";
import type { ResolveEnv } from "./resolve-env";

export { resolveEnv, type ResolveEnv } from "./resolve-env";
import { background } from "../../effects";

/**
 * How long a look-up (WebFinger + actor) may hold a request: `RESOLVE_TIMEOUT_MS`, 5 s by default. A server
 * slower than that, on its first fetch say (a new Starling makes its keys then), is not taken for nonexistent:
 * given a `background`, the look-up goes on after the answer, up to `BACKGROUND_FACTOR` times as long in all, and
 * stores what it finds, so asking again finds it.
 */
const BACKGROUND_FACTOR = 3;
/** How long the counters (three collections, in parallel) may add to it. */
const COUNTS_MS = 2_000;

/** Where Starling is: its origin (`https://DOMAIN`) and host (`DOMAIN`, with a port if any). */

export type Handle = { kind: "acct"; username: string; host: string | null } | { kind: "url"; url: URL };

/** What a person typed: `alice`, `@alice@host`, `acct:alice@host[:port]`, or an http(s) URL; else null. */
export function parseHandle(q: string, localHost: string): Handle | null {
  const s = q.trim();
  if (/^https?:\/\//i.test(s)) {
    try {
      const url = new URL(s);
      return url.username || url.password ? null : { kind: "url", url };
    } catch {
      return null;
    }
  }
  const acct = splitAcct(s);
  if (!acct) return null;
  const host = acct.host;
  return {
    kind: "acct",
    username: acct.username,
    host: host === null || host === localHost.toLowerCase() ? null : host,
  };
}

/** True when `q` names something outside this instance that resolving could fetch (a remote acct or a URL). */
export function isResolvable(q: string, localHost: string): boolean {
  const h = parseHandle(q, localHost);
  return h !== null && (h.kind === "url" || h.host !== null);
}

/** A stored account (local or remote) whose ActivityPub id or profile URL is `url`. */
async function storedByUrl(d: DB, url: string): Promise<AccountWithUser | null> {
  return (
    (await withUser(d)
      .where(or(eq(accounts.uri, url), eq(accounts.url, url)))
      .orderBy(sql`${accounts.uri} = ${url} DESC`)
      .get()) ?? null
  );
}

/**
 * Fetches whatever `target` names (an `acct:` URI or a URL) through Fedify, its fetches aborted after `ms`.
 * Fedify refuses a document whose id is on another origin than where it was fetched from (it is not stored under
 * a wrong id), and WebFinger answers pointing at private addresses are refused by its own check (loaders: ours).
 */
async function lookup(
  r: ResolveEnv,
  target: string,
  ms: number,
): Promise<{ object: APObject | null; loader: DocumentLoader }> {
  const ctx = await federationContext(r.env, r.base);
  // Not the context's cached loader: resolving is when a stale row is refreshed, so it reads what the server
  // says now (and its collections' counts with it).
  const loader = freshDocumentLoader(r.env);
  // Fedify answers null for a document it could not load, whatever the reason: what the loader threw tells a
  // server that is down or unreachable (thrown on as `Unreachable`) from one that says the object is gone.
  let unreachable: unknown = null;
  const watched: DocumentLoader = (url, options) =>
    loader(url, options).catch((e: unknown) => {
      if (!/^HTTP (404|410)\b/.test((e as Error)?.message ?? "")) unreachable = e;
      throw e;
    });
  const object = await ctx.lookupObject(target, { signal: AbortSignal.timeout(ms), documentLoader: watched });
  if (!object && unreachable) throw new Unreachable(`${target}: ${(unreachable as Error)?.message ?? unreachable}`);
  return { object, loader };
}

/** The remote server did not answer in time, or could not be reached (`strict` look-ups throw it). */
class Unreachable extends Error {}

/** The counters the actor's followers/following/outbox collections report (`totalItems`), best effort. */
async function reportedCounts(original: Actor, loader: DocumentLoader, ms: number): Promise<ReportedCounts> {
  // On a copy: Fedify keeps what a getter fetched in the object, dropping the document it parsed, which
  // `upsertActor` still reads (properties Fedify has no name for, such as Pleroma's capabilities).
  const actor = original.clone();
  const opts = { documentLoader: loader, suppressError: true };
  const total = async (get: () => Promise<{ totalItems: number | null } | null>) => {
    const c = await within(get(), ms);
    const n = c?.totalItems;
    return typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  };
  const [followersCount, followingCount, statusesCount] = await Promise.all([
    actor.followersId ? total(() => actor.getFollowers(opts)) : undefined,
    actor.followingId ? total(() => actor.getFollowing(opts)) : undefined,
    actor.outboxId ? total(() => actor.getOutbox(opts)) : undefined,
  ]);
  const out: ReportedCounts = {};
  if (followersCount !== undefined) out.followersCount = followersCount;
  if (followingCount !== undefined) out.followingCount = followingCount;
  if (statusesCount !== undefined) out.statusesCount = statusesCount;
  return out;
}

/** Stores a fetched actor with its counters; null when it is not an account or cannot be stored. */
async function storeActor(
  r: ResolveEnv,
  d: DB,
  actor: Actor,
  loader: DocumentLoader,
  light = false,
): Promise<AccountWithUser | null> {
  // The light path (a relayed post's author): the actor's row only, no counters, no pinned posts.
  const counts = light ? undefined : await reportedCounts(actor, loader, COUNTS_MS);
  try {
    const row = await upsertActor(d, actor, counts);
    // Its pinned statuses, as its featured collection lists them now.
    if (row && !light)
      await syncFeatured(r, actor, row, loader, COUNTS_MS).catch((e) =>
        console.warn(`resolve: featured of ${row.uri}: ${(e as Error)?.message ?? e}`),
      );
    return row ? { account: row, user: null } : null;
  } catch (e) {
    // e.g. another actor already holds this user@host (a renamed or re-created account): keep what is stored.
    console.warn(`resolve: cannot store ${actor.id?.href}: ${(e as Error)?.message ?? e}`);
    return null;
  }
}

/**
 * A status fetched while resolving a URL (a `Note`, `Article`, `Question`, or a page, video, event… shown as one:
 * federation/documents/object-types.ts), stored as the inbox would store it
 * and its id returned. Its author must live on the object's origin (as the inbox requires) and is resolved
 * (stored or refreshed) first. Visibility is the caller's to check, as for a stored status.
 */
export async function storeFetchedStatus(
  r: ResolveEnv,
  object: APObject,
  opts: {
    /** Brought by a relay (issue 36), not asked for: stored only when public. */
    relayed?: boolean;
    /** Store an unknown author the light way (no counters, no pinned posts): a relayed or a thread's post. */
    lightAuthor?: boolean;
  } = {},
): Promise<string | null> {
  if (!isPostLike(object)) return null;
  const id = object.id;
  const authorId = object.attributionId;
  if (!id || !authorId || authorId.origin !== id.origin) return null;
  // A relayed post's author, or a thread's, is stored the light way (no counters, no featured collection: its
  // pinned posts are not asked for by anyone here, and a thread's fetches stay within its budget).
  const author = await resolveAccount(r, authorId.href, opts.relayed || opts.lightAuthor ? { light: true } : {});
  if (!author || author.account.domain === null || author.account.uri !== authorId.href) return null;
  const d = db(r.env);
  const note = applyNotePolicies(
    d,
    author.account.domain,
    await parseNote(object, author.account, author.account.domain),
  );
  const stored = await storeRemoteNote(d, author.account, note, {
    inlineFanoutMax: config(r.env).inlineFanoutMax,
    base: r.base,
    ...(opts.relayed ? { relayed: true } : { requested: true }),
  });
  if (stored.stored) {
    r.after(stored.effects);
    return stored.statusId;
  }
  if (stored.reason !== "exists") return null;
  const row = await d.get<{ id: string }>(sql`SELECT id FROM statuses WHERE uri = ${note.uri}`);
  return row?.id ?? null;
}

export interface ResolveOptions {
  /** Fetch from the remote server when unknown or stale (false: stored rows only). Default true. */
  fetch?: boolean;
  /** Time budget for the remote look-up (default: the configured `resolveTimeoutMs`). */
  timeoutMs?: number;
  /** Refetch a known remote account even when fresh (a move checks the target's current aliases). */
  refresh?: boolean;
  /** Where a look-up that outlasts its budget goes on after the answer (a request's execution context). */
  background?: { waitUntil(p: Promise<unknown>): void };
  /** Throw `Unreachable` instead of answering what is stored when the server cannot be reached in time. */
  strict?: boolean;
  /** An actor fetched is stored without its counters and pinned posts (a relayed post's author). */
  light?: boolean;
}

/**
 * An account by handle or actor URL: local accounts, then a fresh stored remote row, else fetched (and stored
 * or refreshed). A stale row whose server fails is returned as stored. Null when nothing is found.
 */
export async function resolveAccount(
  r: ResolveEnv,
  q: string,
  opts: ResolveOptions = {},
): Promise<AccountWithUser | null> {
  const found = await resolveAny(r, q, opts);
  return found && "account" in found ? found : null;
}

/**
 * Like `resolveAccount`, but a URL may also name a status: `{ statusId }` when the URL is a stored status
 * (visibility is the caller's to check) or a fetched one that could be stored (`storeFetchedStatus`).
 */
export async function resolveAny(
  r: ResolveEnv,
  q: string,
  opts: ResolveOptions = {},
): Promise<AccountWithUser | { statusId: string; parentUri?: string } | null> {
  const h = parseHandle(q, r.localHost);
  if (!h) return null;
  const d = db(r.env);
  const fetch = opts.fetch ?? true;
  const ms = opts.timeoutMs ?? config(r.env).resolveTimeoutMs;
  let stored: AccountWithUser | null;
  if (h.kind === "acct") {
    stored = await findByAcct(d, h.host ? `${h.username}@${h.host}` : h.username, r.localHost);
    if (!h.host) return stored;
  } else {
    stored = await storedByUrl(d, h.url.href);
    if (!stored) {
      const status = await d.get<{ id: string }>(
        // By its web address only when local (`statuses_url_local`): a remote one is fetched, then found by its uri.
        sql`SELECT id FROM statuses WHERE ${addressedAs(h.url.href, "statuses")} AND reblog_of_id IS NULL LIMIT 1`,
      );
      if (status) return { statusId: status.id };
    }
    if (h.url.host.toLowerCase() === r.localHost.toLowerCase()) return stored;
  }
  if (stored && (stored.account.domain === null || (!isStale(stored.account) && !opts.refresh))) return stored;
  if (!fetch) return stored;
  // A known account is refreshed from its id (no WebFinger needed); an unknown one looked up by what was typed.
  const target = stored ? stored.account.uri : h.kind === "acct" ? `acct:${h.username}@${h.host}` : h.url.href;
  // Nothing is fetched from a rejected domain (federation policies).
  const targetHost = stored?.account.domain ?? (h.kind === "acct" ? h.host! : h.url.hostname);
  if (rejectedHost(d, targetHost.replace(/:\d+$/, ""))) return stored;
  // The fetch and what is stored from it, one piece of work: when it outlasts `ms`, it is not abandoned.
  const work = (async () => {
    const { object, loader } = await lookup(r, target, opts.background ? ms * BACKGROUND_FACTOR : ms);
    if (object && isActor(object)) return (await storeActor(r, d, object, loader, opts.light)) ?? stored;
    if (object && !stored && h.kind === "url") {
      const statusId = await storeFetchedStatus(r, object);
      // The replied-to status's id, for the caller to fetch the missing ancestors after its response.
      if (statusId) return { statusId, parentUri: object.replyTargetId?.href };
    }
    return stored;
  })().then(
    (found) => ({ found }),
    (error: unknown) => {
      console.warn(`resolve: ${target}: ${(error as Error)?.message ?? error}`);
      return { error };
    },
  );
  const outcome = await within(work, ms);
  if (outcome && "found" in outcome) return outcome.found;
  // Too slow: it goes on after the answer (bounded by the clock too, whatever a fetch does with its signal).
  if (!outcome && opts.background) background(opts.background, "resolve", within(work, ms * (BACKGROUND_FACTOR - 1)));
  if (opts.strict)
    throw new Unreachable(
      outcome
        ? `${target}: ${(outcome.error as Error)?.message ?? outcome.error}`
        : `${target} did not answer within ${ms} ms`,
    );
  return stored;
}

/** The most unknown remote mentions one post resolves, and the time all of them may take together. */
const MENTION_RESOLVE_MAX = 5;
const MENTION_RESOLVE_MS = 6_000;

/**
 * Resolves the mentioned remote accounts a post does not know yet (acct keys `user@host`), the first
 * `MENTION_RESOLVE_MAX` distinct ones, in parallel, within `MENTION_RESOLVE_MS`. Those that fail stay unknown
 * (the mention stays plain text, as Mastodon does). Returns the accounts found, keyed by the acct key asked.
 */
export async function resolveMentions(r: ResolveEnv, acctKeys: string[]): Promise<Map<string, AccountWithUser>> {
  const wanted = [...new Set(acctKeys.filter((k) => k.includes("@")))].slice(0, MENTION_RESOLVE_MAX);
  const out = new Map<string, AccountWithUser>();
  await Promise.all(
    wanted.map(async (k) => {
      const a = await within(resolveAccount(r, k, { timeoutMs: MENTION_RESOLVE_MS - 500 }), MENTION_RESOLVE_MS);
      if (a && !a.account.deactivated) out.set(k, a);
    }),
  );
  return out;
}

/** The `ResolveEnv` of a request (its bindings, `baseUrl`, `hostOf`). */
