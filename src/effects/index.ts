/**
 * The one door for after-commit work: `runEffects` hands an action's `Effects` (src/services/effects.ts) to
 * their sinks after the answer: stream events to the streaming objects, notifications to Web Push, outbox rows
 * to delivery, link cards to the card fetcher, orphaned files to R2, a moved account's followers to its target.
 * Each runs under `waitUntil`; what must not be lost is durable before it gets here (outbox rows, unpushed
 * notifications, pending moves, which the cron sweeps too).
 */
import type { Env } from "../env";
import { db } from "../db/client";
import { allowPrivateAddress } from "../lib/outbound";
import { ensureCard } from "../services/cards";
import type { Effects } from "../services/effects";
import { publish } from "../services/events";
import { deliverPending } from "../services/push";
import { deleteStoredFiles } from "../services/media";
import { sendQueuedMail } from "../services/mail-queue";
import { moveFollowersOf } from "../services/move";

type WaitUntil = { waitUntil(p: Promise<unknown>): void };

/**
 * What reaches other servers: delivery's wake-up, a followed account's outbox, a thread's replies. federation/
 * hands its own effects to this door, so the door does not import federation/: the Worker's entry (src/index.ts)
 * registers these, as it registers the streaming sink.
 */
export interface FederationSinks {
  kick(env: Env): Promise<unknown>;
  backfill(env: Env, base: string, accounts: NonNullable<Effects["backfill"]>): Promise<unknown>;
  threads(env: Env, base: string, statusIds: string[]): Promise<Effects>;
}
let federation: FederationSinks | null = null;
export function registerFederationSinks(sinks: FederationSinks): void {
  federation = sinks;
}

export function runEffects(env: Env, ctx: WaitUntil, base: string, e: Effects | undefined): void {
  if (!e) return;
  if (e.events?.length) publish(env, ctx, e.events, base);
  if (e.push) ctx.waitUntil(deliverPending(env, base, 50, true).catch((err) => console.error("push delivery", err)));
  if (e.federate && federation) ctx.waitUntil(federation.kick(env));
  for (const url of new Set(e.cards ?? [])) ctx.waitUntil(ensureCard(db(env), url, allowPrivateAddress(env)));
  // With what was made from them (thumbnails).
  if (e.files?.length) ctx.waitUntil(deleteStoredFiles(env.MEDIA, e.files));
  // Best effort reads of other servers (nothing is lost if they fail): a followed account's outbox.
  if (e.backfill?.length && base && federation) ctx.waitUntil(federation.backfill(env, base, e.backfill));
  // …and a remote thread's missing replies; what it stored then goes through this door too, awaited within the
  // same waitUntil (no work is handed on after it).
  if (e.threads?.length && base && federation) {
    const found = federation.threads(env, base, e.threads);
    ctx.waitUntil(found.then((more) => nested(env, base, more)));
  }
  // A moved account's local followers follow its target now, as Mastodon's MoveWorker does; what their follows
  // wrote goes through this door too. A pass that fails leaves its `pending_moves` row: the cron retries it.
  for (const origin of new Set(e.moves ?? []))
    ctx.waitUntil(
      moveFollowersOf(db(env), origin)
        .then((pass) => nested(env, base, pass.effects))
        .catch((err) => console.error("moving followers of", origin, err)),
    );
  // Queued in the action's batch: what fails here waits for its retry, by this door or the cron.
  if (e.mail) ctx.waitUntil(sendQueuedMail(env, db(env)).catch((err) => console.error("mail", err)));
}

/** Effects made by work this door started, run within that work's own `waitUntil` (nothing is handed on after it). */
async function nested(env: Env, base: string, e: Effects): Promise<void> {
  const inner: Promise<unknown>[] = [];
  runEffects(env, { waitUntil: (p) => inner.push(p) }, base, e);
  await Promise.allSettled(inner);
}
