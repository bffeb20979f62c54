/**
 * Relays on the federation side (issue 36; rows and rules: services/relays.ts): looking a relay's URL up (an actor
 * document: a LitePub relay; an inbox that serves none: a Mastodon-style relay), the cron's settling of rows the
 * command line added or removed. What an accepted relay sends: listening/relay-announces.ts.
 */
import { isActor } from "@fedify/vocab";
import { db } from "../../db/client";
import type { Env } from "../../env";
import { within } from "../../lib/within";
import { rejectedHost } from "../../services/federation-policies";
import {
  addRelay,
  followRelay,
  relayActingAdmin,
  relaysToSettle,
  relayLookupFailed,
  removeRelay,
  type FoundRelay,
  type RelayRow,
} from "../../services/relays";
import { federationContext, freshDocumentLoader } from "../federation";

/** Time a relay's look-up may take. */
const LOOKUP_MS = 8_000;

/** What `url` is: a relay's actor (LitePub), or else an inbox (Mastodon-style, as Mastodon's admins enter it). */
export async function lookupRelay(env: Env, base: string, url: string): Promise<FoundRelay | null> {
  const u = new URL(url);
  if (rejectedHost(db(env), u.hostname)) return null;
  const ctx = await federationContext(env, base);
  const object = await within(
    ctx.lookupObject(url, { documentLoader: freshDocumentLoader(env) }).catch(() => null),
    LOOKUP_MS,
  );
  if (object && isActor(object) && object.id?.href === url) {
    const inbox = object.inboxId ?? object.endpoints?.sharedInbox;
    return inbox && inbox.origin === u.origin ? { kind: "litepub", actorUri: url, inboxUrl: inbox.href } : null;
  }
  // Not an actor: an inbox (pub-relay, Activity-Relay and aode-relay all answer `/inbox`).
  return /\/inbox\/?$/.test(u.pathname) ? { kind: "mastodon", actorUri: null, inboxUrl: url } : null;
}

/**
 * Adds and follows the relay at `url` now (the admin API; `log`: its moderation log entry, in the follow's batch);
 * "not found" when the URL is neither a relay actor nor an inbox (nothing kept). A relay followed already is
 * answered as it is, unless rejected, being removed or failed: that one is followed anew.
 */
export async function followRelayNow(
  env: Env,
  base: string,
  url: string,
  adminId: string,
  log: D1PreparedStatement,
): Promise<RelayRow | "not found"> {
  const d = db(env);
  let row = await addRelay(d, url);
  // Rejected, being removed or failed: followed again, as a new row (a new Follow id; the old Follow undone).
  if (row.state === "rejected" || row.state === "removing" || row.state === "failed") {
    await removeRelay(d, row, adminId);
    row = await addRelay(d, row.url);
  }
  if (row.kind) return row;
  const found = await lookupRelay(env, base, row.url).catch(() => null);
  if (!found) {
    await removeRelay(d, row, null);
    return "not found";
  }
  await followRelay(d, row, found, base, adminId, [log]);
  return { ...row, ...found };
}

/** Time the cron's relay job may take in a run (the federation sweep comes after it). */
const SETTLE_MS = 12_000;
/** Look-ups per run (each up to `LOOKUP_MS`). */
const LOOKUPS_PER_RUN = 2;

/**
 * The cron's part: relays the command line removed are unfollowed (first: nothing fetched), those it added are
 * looked up and followed (a few a run, within `SETTLE_MS`; a failed look-up is backed off, and `failed` after
 * `RELAY_ATTEMPTS`). Answers whether anything was written for delivery.
 */
export async function settleRelays(env: Env, base: string, t: number = Date.now()): Promise<boolean> {
  const d = db(env);
  const rows = await relaysToSettle(d, t);
  if (rows.length === 0) return false;
  const deadline = Date.now() + SETTLE_MS;
  const adminId = await relayActingAdmin(d);
  let lookups = 0;
  let wrote = false;
  for (const row of rows) {
    if (Date.now() >= deadline) break;
    if (row.state === "removing") {
      await removeRelay(d, row, adminId);
      wrote = true;
      continue;
    }
    if (lookups++ >= LOOKUPS_PER_RUN) break;
    const found = adminId
      ? await within(
          lookupRelay(env, base, row.url).catch(() => null),
          Math.max(0, deadline - Date.now()),
        )
      : null;
    if (found && adminId) {
      await followRelay(d, row, found, base, adminId);
      wrote = true;
    } else {
      console.warn("relay: cannot follow", row.url, adminId ? "(not found)" : "(no admin to send it)");
      await relayLookupFailed(d, row, t);
    }
  }
  return wrote;
}
