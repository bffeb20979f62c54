/**
 * One destination host's deliveries (`federation_deliveries` rows of that host), named by the host. Woken by
 * `kick` (after a federating action, or by the cron's sweep), it delivers with its alarm (`deliverHost`) and sets
 * the next alarm for the host's next due delivery; a run that cannot finish leaves its claims to expire and the
 * alarm to try again. `kick` also relays wake-ups to other hosts' objects, so that one invocation never calls
 * more than a few dozen objects (subrequest limits).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { HostDeliveryMethods } from "./contracts";
import { deliverHost } from "../federation/delivery/deliver";
import { wakeHosts } from "../federation/delivery/wake";

const RETRY_AFTER_ERROR_MS = 60_000;

export class HostDelivery extends DurableObject<Env> implements HostDeliveryMethods {
  /** Deliver `host`'s due deliveries soon; then wake the `relay` hosts' objects. */
  async kick(host: string, relay: string[] = []): Promise<void> {
    // The object's name is not readable from inside it: the host is kept in its storage for the alarm.
    if ((await this.ctx.storage.get<string>("host")) !== host) await this.ctx.storage.put("host", host);
    const at = await this.ctx.storage.getAlarm();
    if (at === null || at > Date.now()) await this.ctx.storage.setAlarm(Date.now());
    if (relay.length) await wakeHosts(this.env, relay);
  }

  override async alarm(): Promise<void> {
    const host = await this.ctx.storage.get<string>("host");
    if (!host) return;
    try {
      const { next } = await deliverHost(this.env, host);
      if (next !== null) await this.ctx.storage.setAlarm(Math.max(next, Date.now()));
    } catch (e) {
      console.error("delivery run failed", host, e);
      await this.ctx.storage.setAlarm(Date.now() + RETRY_AFTER_ERROR_MS);
    }
  }
}
