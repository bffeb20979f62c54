/**
 * What must follow an action once its batch is committed, described by the service that built the batch (and
 * so knows what it wrote): stream events, notifications to push, queued mail, link cards to fetch, stored files no
 * longer referenced, remote documents to fetch, a moved account's followers to move. Routes, the inbox, the cron
 * and the chat room hand it to the door, `runEffects` (src/effects/index.ts), after their answer. Outbox rows are
 * not among them: the door sees the batches that queued some (db/outbox-signal.ts). scripts/door.test.ts (in
 * `npm test`) fails on a `waitUntil` or a mail send outside the door, and on a `federate` flag set by hand.
 */
import type { StreamEvent } from "./events";
import type { OutboxBackfill } from "./backfill";

export interface Effects {
  /** Events for the live streams. */
  events?: StreamEvent[];
  /** The batch may have created notifications: push them (Web Push, `user:notification`). */
  push?: boolean;
  /**
   * Outbox rows were queued where the door cannot see the batch (a Durable Object's, answering the Worker): set by
   * `outboxEffects` (services/outbox.ts) alone. Elsewhere the door sees the batches itself (db/outbox-signal.ts).
   */
  federate?: boolean;
  /** Link cards to fetch and store (URLs). */
  cards?: string[];
  /** Stored files (R2 keys) no longer referenced by any row. */
  files?: string[];
  /** The batch queued mail (`mail_queue`, services/mail-queue.ts): send what is due. */
  mail?: boolean;
  /**
   * Links to mail to whoever has this login (a password reset, a confirmation again), made after the answer so
   * that it takes the same work whether or not such a user exists; the link and its mail are one batch.
   */
  mailLinks?: { link: "reset" | "confirmation"; login: string }[];
  /** Remote accounts whose outbox's first page is fetched into a reader's home (a new follow, a list member). */
  backfill?: OutboxBackfill[];
  /** Stored remote statuses whose thread's missing replies are fetched (someone opened its context). */
  threads?: string[];
  /** Stored remote replies whose missing ancestors are fetched (`parentUri`: what the reply answers). */
  ancestors?: { statusId: string; parentUri: string }[];
  /** Remote accounts (ids) shown while stale: refetched from their server, once a day at most. */
  refresh?: string[];
  /** Moved accounts (origin ids) whose local followers who allow it follow the target now (services/move.ts). */
  moves?: string[];
}

/** Several actions' effects as one. */
export function mergeEffects(...all: (Effects | undefined)[]): Effects {
  const out: Effects = {};
  for (const e of all) {
    if (!e) continue;
    if (e.events?.length) out.events = [...(out.events ?? []), ...e.events];
    if (e.push) out.push = true;
    if (e.federate) out.federate = true;
    if (e.cards?.length) out.cards = [...(out.cards ?? []), ...e.cards];
    if (e.files?.length) out.files = [...(out.files ?? []), ...e.files];
    if (e.mail) out.mail = true;
    if (e.mailLinks?.length) out.mailLinks = [...(out.mailLinks ?? []), ...e.mailLinks];
    if (e.backfill?.length) out.backfill = [...(out.backfill ?? []), ...e.backfill];
    if (e.threads?.length) out.threads = [...(out.threads ?? []), ...e.threads];
    if (e.ancestors?.length) out.ancestors = [...(out.ancestors ?? []), ...e.ancestors];
    if (e.refresh?.length) out.refresh = [...(out.refresh ?? []), ...e.refresh];
    if (e.moves?.length) out.moves = [...(out.moves ?? []), ...e.moves];
  }
  return out;
}
