/**
 * Events for live streams. Services describe what happened; `publish` hands the events, after the response, to
 * every registered sink. The streaming Durable Objects register the sink that delivers them to connections;
 * until then events have no receiver. Tests register a sink to see exactly what was published.
 */
import type { Env } from "../env";

export interface FollowCounts {
  id: string;
  follower_count: number;
  following_count: number;
}

export type StreamEvent =
  | {
      /** The local user whose `user` stream receives the event. */
      accountId: string;
      event: "pleroma:follow_relationships_update";
      payload: { state: "follow_pending" | "follow_accept" | "follow_reject"; follower: FollowCounts; following: FollowCounts };
    }
  | { accountId: string; event: "filters_changed"; payload: null }
  /** A deleted status: `accountId` null means every stream that may have shown it (the payload is its id). */
  | { accountId: null; event: "delete"; payload: string };

export type EventSink = (events: StreamEvent[], env: Env) => Promise<void> | void;

export const eventSinks: EventSink[] = [];

export function publish(env: Env, ctx: { waitUntil(p: Promise<unknown>): void }, events: StreamEvent[]): void {
  if (events.length === 0 || eventSinks.length === 0) return;
  ctx.waitUntil(Promise.all(eventSinks.map(async (sink) => sink(events, env))).then(() => undefined));
}
