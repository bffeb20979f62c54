/**
 * Backfill on follow of a remote account (issue 36): after the follow's response, the first page of the account's
 * outbox is read (through the guarded, instance-signed loader, bounded in items and time), its `Create`s of the
 * account's own posts stored as fetched posts are (`storeRemoteNote`, `requested`: the storage guard applies, as
 * do the federation policies), and the readers' home feeds filled from what is stored (`backfillHome`, the one
 * visibility rule); only for a new follow request or list membership, and at most once an hour per account
 * (`claimOutboxBackfill`). Objects are taken only when they are the account's own: attributed to it and on its origin,
 * embedded in a page served from that origin, or fetched from their id there. Boosts in the outbox are skipped.
 * Never throws.
 */
import { Collection, Create, type Object as APObject } from "@fedify/vocab";
import { db } from "../../db/client";
import { config } from "../../env";
import { within } from "../../lib/within";
import { applyNotePolicies, rejectedHost } from "../../services/federation-policies";
import { eq } from "drizzle-orm";
import { accounts } from "../../db/schema";
import { backfillHome, BACKFILL_MAX, claimOutboxBackfill, type OutboxBackfill } from "../../services/backfill";
import { storeRemoteNote } from "../../services/remote-statuses";
import { federationContext, freshDocumentLoader } from "../federation";
import { embeddedOnly } from "../door/loaders";
import { isPostLike } from "../documents/object-types";
import { parseNote, type RemoteObject } from "../documents/parse-note";
import type { ResolveEnv } from "./resolve";
import { fetchingPaused } from "../../services/usage-budget";

/** Time one account's outbox may take, fetches and storing together. */
const OUTBOX_MS = 8_000;
const MAX_ACCOUNTS = 3;

/** Fetches each account's outbox once and fills every reader who asked for it. Answers how many posts were stored. */
export async function backfillFromOutboxes(
  r: ResolveEnv,
  asks: OutboxBackfill[],
  t: number = Date.now(),
): Promise<number> {
  // From 80% of any of the plan's caps, backfill waits (nothing claimed: a later follow reads the outbox).
  if (await fetchingPaused(r.env, t)) return 0;
  const byAccount = new Map<string, string[]>();
  for (const a of asks) byAccount.set(a.accountId, [...(byAccount.get(a.accountId) ?? []), a.readerId]);
  let stored = 0;
  // A few accounts a call (one after another, each within OUTBOX_MS, all under one waitUntil): the others are not
  // claimed, so a later ask reads them.
  for (const [accountId, readers] of [...byAccount].slice(0, MAX_ACCOUNTS)) {
    // At most once an hour per account (what an earlier read stored reaches a new follower's home through the
    // follow's or the Accept's own backfill).
    if (!(await claimOutboxBackfill(db(r.env), accountId, t).catch(() => false))) continue;
    stored += (await within(backfillOne(r, accountId, [...new Set(readers)]), OUTBOX_MS)) ?? 0;
  }
  return stored;
}

async function backfillOne(r: ResolveEnv, accountId: string, readers: string[]): Promise<number> {
  const d = db(r.env);
  try {
    const account = await d.select().from(accounts).where(eq(accounts.id, accountId)).get();
    if (!account || account.domain === null || account.deactivated || !account.outboxUrl) return 0;
    const origin = new URL(account.uri).origin;
    if (new URL(account.outboxUrl).origin !== origin || rejectedHost(d, new URL(origin).hostname)) return 0;
    const ctx = await federationContext(r.env, r.base);
    const loader = freshDocumentLoader(r.env);
    const opts = { documentLoader: loader, suppressError: true };
    const outbox = await ctx.lookupObject(account.outboxUrl, { documentLoader: loader }).catch(() => null);
    if (!(outbox instanceof Collection) || outbox.id?.origin !== origin) return 0;
    // Items inline (a small collection), else the first page (Mastodon, Pleroma, Starling page their outboxes).
    let page: Collection | null = outbox;
    if (outbox.totalItems !== 0 && outbox.itemIds.length === 0 && outbox.firstId) {
      if (outbox.firstId.origin !== origin) return 0;
      page = await outbox.getFirst(opts).catch(() => null);
    }
    if (!page) return 0;
    const objects: RemoteObject[] = [];
    let looked = 0;
    // Embedded items only (as Mastodon, Pleroma and Starling write their pages): an item given by id is not fetched.
    for await (const item of page.getItems({ documentLoader: embeddedOnly, suppressError: true })) {
      if (looked++ >= BACKFILL_MAX || objects.length >= BACKFILL_MAX) break;
      if (!(item instanceof Create)) continue;
      const own = (o: APObject | null): o is RemoteObject =>
        isPostLike(o) && o.id?.origin === origin && o.attributionIds.some((a) => a.href === account.uri);
      let object: APObject | null = await item.getObject({ documentLoader: embeddedOnly }).catch(() => null);
      if (!object && item.objectId?.origin === origin)
        object = await ctx.lookupObject(item.objectId.href, { documentLoader: loader }).catch(() => null);
      if (own(object)) objects.push(object);
    }
    let stored = 0;
    const cfg = config(r.env);
    // Oldest first: ids follow publication dates anyway, but a partial run keeps the newest for next time.
    for (const object of objects.reverse()) {
      const note = applyNotePolicies(d, account.domain, await parseNote(object, account, account.domain));
      const result = await storeRemoteNote(d, account, note, {
        inlineFanoutMax: cfg.inlineFanoutMax,
        base: r.base,
        requested: true,
      });
      if (result.stored) stored++;
    }
    await d.$client.batch(readers.map((reader) => backfillHome(d, reader, [account.id])));
    return stored;
  } catch (e) {
    console.warn("outbox backfill", accountId, (e as Error)?.message ?? e);
    return 0;
  }
}
