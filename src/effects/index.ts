/**
 * The door for after-commit work: `runEffects` hands an action's `Effects` (src/services/effects.ts) to their
 * sinks after the answer: stream events to the streaming objects, notifications to Web Push, outbox rows (which
 * it sees the batches queue, db/outbox-signal.ts) to delivery, queued mail to the mailer, link cards to the card fetcher, orphaned files to R2, remote documents to
 * fetch, a moved account's followers to its target. `background` starts work that is no action's effect. Each
 * runs under `waitUntil`, which scripts/door.test.ts allows in this file alone; what must not be lost is durable
 * before it gets here (outbox rows, queued mail, unpushed notifications, pending moves: the cron sweeps them too).
 */
import { db } from "../db/client";
import { takeOutboxQueued } from "../db/outbox-signal";
import { allowPrivateAddress } from "../lib/outbound";
import { ensureCard } from "../services/cards";
import { mergeEffects, type Effects } from "../services/effects";
import { dispatch } from "../services/events";
import { deliverPending } from "../services/push";
import { deleteStoredFiles } from "../services/media";
import { sendQueuedMail } from "../services/mail-queue";
import { mailResetLink } from "../services/passwords";
import { resendConfirmation } from "../services/registration-mail";
import { config, type Env } from "../env";
import { moveFollowersOf } from "../services/move";
import { background, type WaitUntil } from "./background";

export { background, type WaitUntil };

/**
 * What reaches other servers: delivery's wake-up, a followed account's outbox, a thread's replies. federation/
 * hands its own effects to this door, so the door does not import federation/: the Worker's entry (src/index.ts)
 * registers these, as it registers the streaming sink.
 */
export interface FederationSinks {
  kick(env: Env): Promise<unknown>;
  /** The fetching sinks hand what storing a fetched status causes to `after` (this door again). */
  backfill(env: Env, base: string, accounts: NonNullable<Effects["backfill"]>, after: After): Promise<unknown>;
  threads(env: Env, base: string, statusIds: string[], after: After): Promise<unknown>;
  ancestors(env: Env, base: string, asks: NonNullable<Effects["ancestors"]>, after: After): Promise<unknown>;
  refresh(env: Env, base: string, accountIds: string[], after: After): Promise<unknown>;
}
type After = (e: Effects) => void;
let federation: FederationSinks | null = null;
export function registerFederationSinks(sinks: FederationSinks): void {
  federation = sinks;
}

export function runEffects(env: Env, ctx: WaitUntil, base: string, e: Effects | undefined): void {
  // Delivery wakes when a batch queued outbox rows (db/outbox-signal.ts sees it): no action needs to say so.
  // `federate` carries it from where this door cannot see the batch (a Durable Object's answer).
  if ((takeOutboxQueued(env.DB) || e?.federate) && federation) ctx.waitUntil(federation.kick(env));
  if (!e) return;
  if (e.events?.length) ctx.waitUntil(dispatch(env, e.events, base));
  if (e.push) ctx.waitUntil(deliverPending(env, base, 50, true).catch((err) => console.error("push delivery", err)));
  for (const url of new Set(e.cards ?? [])) ctx.waitUntil(ensureCard(db(env), url, allowPrivateAddress(env)));
  // With what was made from them (thumbnails). The fast path: a deleted status's files were queued in its batch
  // (services/file-deletions.ts), so what fails here is deleted by the cron.
  if (e.files?.length)
    ctx.waitUntil(deleteStoredFiles(env.MEDIA, e.files).catch((err) => console.error("deleting files", err)));
  // Best effort reads of other servers (nothing is lost if they fail): a followed account's outbox, a remote
  // thread's missing replies, a reply's missing ancestors, a stale account. What they store goes through this door
  // too, awaited within the same waitUntil (no work is handed on after it).
  const f = base ? federation : null;
  if (f && e.backfill?.length)
    ctx.waitUntil(fetching(env, base, "backfill", (a) => f.backfill(env, base, e.backfill!, a)));
  if (f && e.threads?.length) ctx.waitUntil(fetching(env, base, "threads", (a) => f.threads(env, base, e.threads!, a)));
  if (f && e.ancestors?.length)
    ctx.waitUntil(fetching(env, base, "ancestors", (a) => f.ancestors(env, base, e.ancestors!, a)));
  if (f && e.refresh?.length)
    ctx.waitUntil(fetching(env, base, "refresh", (a) => f.refresh(env, base, [...new Set(e.refresh)], a)));
  // A moved account's local followers follow its target now, as Mastodon's MoveWorker does; what their follows
  // wrote goes through this door too. A pass that fails leaves its `pending_moves` row: the cron retries it.
  for (const origin of new Set(e.moves ?? []))
    ctx.waitUntil(
      moveFollowersOf(db(env), origin)
        .then((pass) => nested(env, base, pass.effects))
        .catch((err) => console.error("moving followers of", origin, err)),
    );
  for (const { link, login } of e.mailLinks ?? []) {
    const make = link === "reset" ? mailResetLink : resendConfirmation;
    ctx.waitUntil(
      make(db(env), config(env), base, login)
        .then((made) => nested(env, base, made))
        .catch((err) => console.error(`mail link (${link})`, err)),
    );
  }
  // Queued in the action's batch: what fails here waits for its retry, by this door or the cron.
  if (e.mail) ctx.waitUntil(sendQueuedMail(env, db(env)).catch((err) => console.error("mail", err)));
}

/** A fetching sink's work, then the effects of what it stored, through this door (errors logged, never thrown). */
async function fetching(env: Env, base: string, name: string, work: (after: After) => Promise<unknown>) {
  const found: Effects[] = [];
  await work((e) => found.push(e)).catch((err) => console.error(`federation ${name}`, err));
  await nested(env, base, mergeEffects(...found));
}

/** Effects made by work this door started, run within that work's own `waitUntil` (nothing is handed on after it). */
async function nested(env: Env, base: string, e: Effects): Promise<void> {
  const inner: Promise<unknown>[] = [];
  runEffects(env, { waitUntil: (p) => inner.push(p) }, base, e);
  await Promise.allSettled(inner);
}
