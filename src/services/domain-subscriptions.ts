/**
 * Domain permission subscriptions (issue 48), as GoToSocial has them: a blocklist or allow-list at a URL, fetched
 * daily by the cron through the outbound guard (2 MB, 20 s, `ETag` / `Last-Modified` so an unchanged list costs
 * one request and no rows), each rule it makes remembering it (`source` `subscription:<id>`). A rule written by
 * hand, imported, or made by a list of higher `priority` is left alone. A domain that leaves the list is lifted
 * (`remove_retracted`, the default) or kept as an orphan. A new list starts as a draft (`as_draft`): fetched and
 * counted, not applied, until an admin turns drafting off.
 */
import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { newId } from "../db/ids";
import { domainSubscriptions } from "../db/schema";
import type { Env } from "../env";
import { unprocessable } from "../lib/errors";
import { allowPrivateAddress, isFetchableUrl, outboundFetch } from "../lib/outbound";
import { MAX_LIST_BYTES, parseList, type Format } from "./blocklist-formats";
import { allowListStatements, blockStatements, planImport } from "./domain-rules";
import { logEntry, type Actor } from "./moderation-log";
import { refreshSettings } from "./instance-settings";

export type Subscription = typeof domainSubscriptions.$inferSelect;
const DAY = 24 * 3600 * 1000;
/** Lists fetched per cron run at most (each a subrequest and a parse). */
const PER_RUN = 2;

/** GoToSocial's `content_type` values and the format each is read as. */
export const CONTENT_TYPES: Record<string, Format> = {
  "text/csv": "mastodon_csv",
  "application/json": "gotosocial_json",
  "text/plain": "plain",
};

export interface SubscriptionInput {
  uri: string;
  contentType: string;
  permissionType: "block" | "allow";
  priority?: number;
  title?: string;
  asDraft?: boolean;
  removeRetracted?: boolean;
}

export async function createSubscription(d: DB, input: SubscriptionInput, by: string, t: number) {
  if (!isFetchableUrl(input.uri, true) || !/^https?:/i.test(input.uri))
    throw unprocessable("uri is not an http(s) URL");
  if (!CONTENT_TYPES[input.contentType])
    throw unprocessable("content_type is text/csv, application/json or text/plain");
  const row = {
    id: newId(t),
    title: input.title ?? "",
    uri: input.uri,
    contentType: input.contentType,
    permissionType: input.permissionType,
    priority: Math.max(0, Math.min(255, input.priority ?? 0)),
    asDraft: input.asDraft ?? true,
    removeRetracted: input.removeRetracted ?? true,
    createdBy: by,
    createdAt: t,
    nextFetchAt: t,
  };
  const made = await d.insert(domainSubscriptions).values(row).onConflictDoNothing().returning();
  if (!made[0]) throw unprocessable("A subscription to this uri exists already");
  return made[0];
}

export const listSubscriptions = (d: DB) =>
  d
    .select()
    .from(domainSubscriptions)
    .orderBy(asc(domainSubscriptions.priority), asc(domainSubscriptions.id))
    .limit(200);

export const subscriptionById = (d: DB, id: string) =>
  d.select().from(domainSubscriptions).where(eq(domainSubscriptions.id, id)).get();

export async function updateSubscription(d: DB, id: string, change: Partial<SubscriptionInput>) {
  const set: Partial<Subscription> = {};
  if (change.title !== undefined) set.title = change.title;
  if (change.priority !== undefined) set.priority = Math.max(0, Math.min(255, change.priority));
  if (change.asDraft !== undefined) set.asDraft = change.asDraft;
  if (change.removeRetracted !== undefined) set.removeRetracted = change.removeRetracted;
  // Turning drafting off applies the list at the next run: due now, fetched again even if unchanged.
  if (change.asDraft === false) Object.assign(set, { nextFetchAt: 0, etag: null, lastModified: null });
  const [row] = Object.keys(set).length
    ? await d.update(domainSubscriptions).set(set).where(eq(domainSubscriptions.id, id)).returning()
    : [await subscriptionById(d, id)];
  return row ?? null;
}

/** Removes a subscription; its rules stay (orphans) unless `removeChildren`, as GoToSocial's. */
export async function deleteSubscription(d: DB, sub: Subscription, removeChildren: boolean) {
  await d.$client.batch([
    ...(removeChildren
      ? [statement(d, sql`DELETE FROM federation_policies WHERE source = ${"subscription:" + sub.id}`)]
      : [
          statement(
            d,
            sql`UPDATE federation_policies SET source = 'import' WHERE source = ${"subscription:" + sub.id}`,
          ),
        ]),
    statement(d, sql`DELETE FROM domain_subscriptions WHERE id = ${sub.id}`),
  ]);
}

/** The list at the subscription's URL, parsed; `null` when unchanged since the last fetch (304). */
export async function fetchList(env: Env, sub: Subscription, conditional: boolean) {
  const headers: Record<string, string> = { accept: sub.contentType };
  if (conditional && sub.etag) headers["if-none-match"] = sub.etag;
  if (conditional && sub.lastModified) headers["if-modified-since"] = sub.lastModified;
  const res = await outboundFetch(
    sub.uri,
    { headers },
    {
      allowPrivate: allowPrivateAddress(env),
      timeoutMs: 20_000,
      maxBytes: MAX_LIST_BYTES,
    },
  );
  if (res.status === 304) return null;
  if (!res.ok) throw new Error(`the list answered ${res.status}`);
  const text = await res.text();
  return {
    blocks: parseList(text, CONTENT_TYPES[sub.contentType]!),
    etag: res.headers.get("etag"),
    lastModified: res.headers.get("last-modified"),
  };
}

/** Fetches one subscription and applies it (unless a draft); the row says what happened. */
export async function runSubscription(env: Env, d: DB, sub: Subscription, t: number): Promise<void> {
  const source = `subscription:${sub.id}`;
  try {
    const got = await fetchList(env, sub, true);
    if (!got) {
      await d
        .update(domainSubscriptions)
        .set({ fetchedAt: t, successfullyFetchedAt: t, error: null, nextFetchAt: t + DAY })
        .where(eq(domainSubscriptions.id, sub.id));
      return;
    }
    const record = statement(
      d,
      sql`UPDATE domain_subscriptions SET fetched_at = ${t}, successfully_fetched_at = ${t}, error = NULL,
        count = ${got.blocks.length}, next_fetch_at = ${t + DAY},
        etag = ${sub.asDraft ? null : got.etag}, last_modified = ${sub.asDraft ? null : got.lastModified}
        WHERE id = ${sub.id}`,
    );
    if (sub.asDraft) return void (await record.run());
    const actor: Actor = { id: sub.createdBy, username: "subscription" };
    let stmts: D1PreparedStatement[];
    let message: string;
    if (sub.permissionType === "allow") {
      const listed = new Set(got.blocks.map((b) => b.domain));
      const { results } = await statement(
        d,
        sql`SELECT domain FROM federation_policies WHERE policy = 'accept' AND source = ${source}`,
      ).all<{ domain: string }>();
      const lift = sub.removeRetracted ? results.map((r) => r.domain).filter((x) => !listed.has(x)) : [];
      stmts = allowListStatements(d, [...listed], source, t, lift);
      message = `subscription ${sub.uri}: ${listed.size} allowed, ${lift.length} lifted`;
    } else {
      const plan = await planImport(d, got.blocks, source, sub.removeRetracted);
      const lift = plan.removed.map((b) => b.domain);
      stmts = blockStatements(d, [...plan.added, ...plan.changed.map((c) => c.after)], source, t, lift);
      message = `subscription ${sub.uri}: ${plan.added.length} added, ${plan.changed.length} changed, ${lift.length} lifted`;
    }
    await d.$client.batch([
      ...stmts,
      record,
      logEntry(d, actor, "domain_subscription_fetch", { source, uri: sub.uri }, message, t),
    ]);
    await refreshSettings(env, true);
  } catch (e) {
    const error = (e instanceof Error ? e.message : String(e)).slice(0, 500);
    await d
      .update(domainSubscriptions)
      .set({ fetchedAt: t, error, nextFetchAt: t + DAY })
      .where(eq(domainSubscriptions.id, sub.id));
  }
}

/** The cron's step: the subscriptions due (an index probe when none is), a few a run. */
export async function runDueSubscriptions(env: Env, d: DB, t: number) {
  const due = await d
    .select()
    .from(domainSubscriptions)
    .where(and(lte(domainSubscriptions.nextFetchAt, t)))
    .orderBy(asc(domainSubscriptions.nextFetchAt))
    .limit(PER_RUN);
  for (const sub of due) await runSubscription(env, d, sub, t);
  return due.length ? { report: { fetched: due.length } } : null;
}
