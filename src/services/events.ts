/**
 * Events for live streams. Services describe what happened in their `Effects`; the effects door hands the events,
 * after the response, to every registered sink (`dispatch`). The Worker registers the sink that delivers them to
 * the streaming Durable Objects (src/effects/stream-delivery.ts), which decides who may receive each one. Tests
 * register a sink to see what was published.
 */
import type { Env } from "../env";
import { config } from "../env";

export interface FollowCounts {
  id: string;
  follower_count: number;
  following_count: number;
}

/** Who could have seen a deleted status: decided before it is gone, since afterwards nothing says. */
export interface DeletedAudience {
  authorId: string;
  visibility: string;
  /** Local accounts it addressed. */
  recipients: string[];
}

export type StreamEvent =
  | {
      /** The local user whose `user` stream receives the event. */
      accountId: string;
      event: "pleroma:follow_relationships_update";
      payload: {
        state: "follow_pending" | "follow_accept" | "follow_reject";
        follower: FollowCounts;
        following: FollowCounts;
      };
    }
  | { accountId: string; event: "filters_changed"; payload: null }
  /** A new status or reblog (its id): every stream whose timeline would show it, to each listener allowed to see it. */
  | { accountId: null; event: "update"; payload: string }
  /** An edited status (its id): the streams that would show it, as for `update` (Mastodon's `status.update`). */
  | { accountId: null; event: "status.update"; payload: string }
  /** A chat changed by a new message: the Chat as `accountId` sees it (its `user` and `user:pleroma_chat` streams). */
  | { accountId: string; event: "pleroma:chat_update"; payload: import("../schemas/chat").Chat }
  /** A notification created for `accountId` (its id). */
  | { accountId: string; event: "notification"; payload: string }
  /** A deleted status (its id), to the streams of those who could have seen it. */
  | { accountId: null; event: "delete"; payload: string; audience: DeletedAudience };

/** `base`: the instance origin the rendered entities' links hang off. */
export type EventSink = (events: StreamEvent[], env: Env, base: string) => Promise<void> | void;

export const eventSinks: EventSink[] = [];

/** The configured origin, for work outside a request (the cron). */
export const configuredBase = (env: Env) => {
  const domain = config(env).domain;
  return domain ? `https://${domain}` : "";
};

/** Hands events to the sinks now (the effects door calls it after the response). A failing sink is logged. */
export async function dispatch(env: Env, events: StreamEvent[], base: string = configuredBase(env)): Promise<void> {
  if (events.length === 0 || eventSinks.length === 0) return;
  await Promise.all(eventSinks.map(async (sink) => sink(events, env, base))).catch((e) =>
    console.error("stream events", e),
  );
}
