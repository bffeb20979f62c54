/**
 * When outgoing federation runs: when an action's batch wrote outbox rows (db/outbox-signal.ts sees it), the one
 * door (src/effects/index.ts `runEffects`) runs `kickFederation` after the response (waitUntil): expansion (expand.ts), then the delivery objects of the hosts that got deliveries are woken
 * (deliver.ts). The cron (`sweepFederation`, each minute) expands whatever is left and wakes every host with due
 * deliveries, so nothing depends on waitUntil alone. `drainFederation` does all of it at once, in the caller
 * (tests, and instance B of the test harness, whose rows the objects — bound to A's env — never see).
 */
import { sql } from "drizzle-orm";
import { db, statement } from "../../db/client";
import type { Env } from "../../env";
import { GIVE_UP_MS } from "../../services/outbox";
import { deliverHost, UNREACHABLE_AFTER_MS, waiting } from "./deliver";
import { expandOutbox } from "./expand";

/** Delivery objects called directly by one invocation; more are woken through relays. */
const WAKE_FANOUT = 40;

/** Wakes the delivery objects of these hosts: directly up to `WAKE_FANOUT`, beyond that through relays. */
export async function wakeHosts(env: Env, hosts: string[]): Promise<void> {
  if (hosts.length === 0) return;
  const size = Math.ceil(hosts.length / WAKE_FANOUT);
  const groups: string[][] = [];
  for (let i = 0; i < hosts.length; i += size) groups.push(hosts.slice(i, i + size));
  await Promise.all(
    groups.map(([first, ...rest]) =>
      env.DELIVERY.get(env.DELIVERY.idFromName(first!))
        .kick(first!, rest)
        .catch((e: unknown) => console.error("delivery wake", first, e)),
    ),
  );
}

/**
 * How hosts are woken. The Worker wakes their objects; tests replace `run` to see which hosts would be woken
 * (the objects run with the pool's bindings, not an instance's) and drive delivery with `drainFederation`.
 */
export const deliveryWake: { run: (env: Env, hosts: string[]) => Promise<void> } = { run: wakeHosts };

/** After a federating action's response: expand what it wrote and wake the hosts that got deliveries. */
export async function kickFederation(env: Env): Promise<void> {
  try {
    const hosts = await expandOutbox(env, Date.now(), 1);
    await deliveryWake.run(env, hosts);
  } catch (e) {
    // The cron's sweep takes over.
    console.error("federation kick", e);
  }
}

/** Expanded rows whose deliveries are all done are removed after this long. */
const KEEP_EXPANDED_MS = 3600_000;

/**
 * The cron's sweep: expand what nobody expanded, wake every host with due deliveries (not those waiting for a
 * probe), drop what an unreachable host will never get in time, clear finished rows.
 */
export async function sweepFederation(env: Env, t: number = Date.now()): Promise<void> {
  const d = db(env);
  const woken = new Set(await expandOutbox(env, t));
  const due = await d.all<{ host: string }>(
    sql`SELECT DISTINCT host FROM federation_deliveries d WHERE next_at <= ${t} AND NOT ${waiting(t)} LIMIT 1600`,
  );
  due.forEach((r) => woken.add(r.host));
  await deliveryWake.run(env, [...woken]);
  await d.$client.batch([
    // Deliveries to an unreachable host wait for its probes, one every few hours: those past the give-up time
    // (dropped at their next failure anyway) are dropped now, so a dead host's queue does not grow. Walked from
    // the queue (CROSS JOIN keeps that order), each host looked up by key: dead hosts known but owed nothing cost
    // nothing.
    statement(
      d,
      sql`DELETE FROM federation_deliveries WHERE id IN (SELECT d.id FROM federation_deliveries d CROSS JOIN instances i
        ON i.domain = d.host WHERE d.created_at < ${t - GIVE_UP_MS} AND i.unreachable_since <= ${t - UNREACHABLE_AFTER_MS} LIMIT 1000)`,
    ),
    // Through `instances_unreachable_unmarked`: hosts already marked failing are not walked again.
    statement(
      d,
      sql`UPDATE instances SET failing_since = ${t} WHERE failing_since IS NULL AND unreachable_since <= ${t - GIVE_UP_MS}`,
    ),
    statement(
      d,
      sql`DELETE FROM federation_outbox WHERE id IN (SELECT o.id FROM federation_outbox o WHERE o.body IS NOT NULL AND o.expanded_at < ${t - KEEP_EXPANDED_MS}
        AND NOT EXISTS (SELECT 1 FROM federation_deliveries x WHERE x.outbox_id = o.id) LIMIT 1000)`,
    ),
  ]);
}

/**
 * Everything due for these bindings, now, in the caller: expansion, then each host's deliveries until none is
 * due at `t`. For tests (and instance B of the harness); the Worker uses the kicks and objects instead.
 */
export async function drainFederation(
  env: Env,
  t: number = Date.now(),
): Promise<{ delivered: number; attempted: number }> {
  const d = db(env);
  await expandOutbox(env, t, 100);
  let delivered = 0;
  let attempted = 0;
  for (let round = 0; round < 50; round++) {
    const due = await d.all<{ host: string }>(
      sql`SELECT DISTINCT host FROM federation_deliveries d WHERE next_at <= ${t} AND NOT ${waiting(t)}`,
    );
    if (due.length === 0) break;
    const runs = await Promise.all(due.map((r) => deliverHost(env, r.host, t)));
    for (const r of runs) {
      delivered += r.delivered;
      attempted += r.attempted;
    }
  }
  return { delivered, attempted };
}
