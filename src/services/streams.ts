/**
 * Streams a client may listen to, and who is listening. A connection names streams (`user`, `public:local`,
 * `hashtag` with a tag, ...); `resolveStream` checks each against the listener's token, as Pleroma does: public
 * streams for anyone, user streams and lists only for their owner with a reading scope. The streaming Durable
 * Objects report their subscriptions to `stream_presence` (`presenceStatements`), which publishing reads.
 */
import { and, eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { statement } from "../db/client";
import { lists } from "../db/schema";
import { hasAnyScope } from "./scopes";
import { isId } from "../db/ids";
import type { Env } from "../env";
import type { StreamMethods } from "../objects/contracts";

export const PUBLIC_STREAMS = [
  "public",
  "public:local",
  "public:media",
  "public:local:media",
  "public:remote",
  "public:remote:media",
  "hashtag",
  "hashtag:local",
] as const;
export const USER_STREAMS = ["user", "user:notification", "direct", "user:pleroma_chat", "list"] as const;
export type StreamName = (typeof PUBLIC_STREAMS)[number] | (typeof USER_STREAMS)[number];

/** One subscribed stream: its name and its tag, list id or instance ('' when it takes none). */
export interface Subscription {
  stream: StreamName;
  arg: string;
}

/** Who listens on a connection: '' ids for an anonymous one. */
export interface Listener {
  accountId: string;
  tokenId: string;
  scopes: string[];
}

export const ANONYMOUS: Listener = { accountId: "", tokenId: "", scopes: [] };

/** The `stream` field of a frame: `["hashtag", "cats"]`, `["user"]`. */
export const streamField = (s: Subscription): string[] => (s.arg ? [s.stream, s.arg] : [s.stream]);

export const sameSubscription = (a: Subscription, b: Subscription) => a.stream === b.stream && a.arg === b.arg;

/** Why a stream was refused: Pleroma's error names, with the HTTP status and message a connection attempt gets. */
export interface StreamRefusal {
  error: "bad_topic" | "unauthorized";
  status: 400 | 401 | 404;
  message: string;
}

const refuse = (error: StreamRefusal["error"], status: StreamRefusal["status"], message: string): StreamRefusal => ({
  error,
  status,
  message,
});

const ARG_OF: Partial<Record<StreamName, "tag" | "list" | "instance">> = {
  hashtag: "tag",
  "hashtag:local": "tag",
  "public:remote": "instance",
  "public:remote:media": "instance",
  list: "list",
};

/** Scopes a user stream needs (any one); `read` grants each. */
const SCOPES_OF: Partial<Record<StreamName, string[]>> = {
  user: ["read:statuses"],
  "user:notification": ["read:notifications"],
  direct: ["read:statuses"],
  "user:pleroma_chat": ["read:chats"],
  list: ["read:lists"],
};

const isStream = (name: string): name is StreamName =>
  (PUBLIC_STREAMS as readonly string[]).includes(name) || (USER_STREAMS as readonly string[]).includes(name);

/** Checks a stream request; answers the subscription, or why it is refused. */
export async function resolveStream(
  d: DB,
  who: Listener,
  name: string | undefined,
  params: { tag?: string; list?: string; instance?: string },
): Promise<Subscription | StreamRefusal> {
  if (!name || !isStream(name)) return refuse("bad_topic", 404, "Unknown stream type");
  const argName = ARG_OF[name];
  let arg = "";
  if (argName) {
    arg = (params[argName] ?? "").trim();
    // As statuses store their tags (src/content/format.ts).
    if (argName === "tag") arg = arg.replace(/^#/, "").normalize("NFC").toLowerCase();
    if (argName === "instance") arg = arg.toLowerCase();
    if (!arg) return refuse("bad_topic", 400, `No ${argName} for stream provided`);
  }
  const scopes = SCOPES_OF[name];
  if (scopes) {
    if (!who.accountId) return refuse("unauthorized", 401, "Missing access token");
    if (!hasAnyScope(who.scopes, scopes))
      return refuse("unauthorized", 401, `Insufficient permissions: ${scopes.join(" | ")}.`);
  }
  if (name === "list") {
    const own =
      isId(arg) &&
      (await d
        .select({ id: lists.id })
        .from(lists)
        .where(and(eq(lists.id, arg), eq(lists.accountId, who.accountId)))
        .get());
    if (!own) return refuse("bad_topic", 404, "Record not found");
  }
  return { stream: name, arg };
}

export const isRefusal = (r: Subscription | StreamRefusal): r is StreamRefusal => "error" in r;

/** Whether a listener's scopes still allow a subscription it holds (after its socket changed tokens). */
export function scopesAllow(who: Listener, s: Subscription): boolean {
  const scopes = SCOPES_OF[s.stream];
  return !scopes || (Boolean(who.accountId) && hasAnyScope(who.scopes, scopes));
}

/** A connection's subscriptions as the presence table holds them. */
export interface PresenceRow extends Subscription {
  accountId: string;
  tokenId: string;
}

/**
 * The statements that make `object`'s presence rows exactly `rows` (one batch): rows no longer listened to go,
 * new ones come. Run on every connect, subscribe, unsubscribe and close.
 */
export function presenceStatements(d: DB, object: string, rows: PresenceRow[]): D1PreparedStatement[] {
  const keyed = [...new Map(rows.map((r) => [`${r.tokenId}\n${r.stream}\n${r.arg}`, r])).values()];
  const json = JSON.stringify(keyed.map((r) => [r.accountId, r.tokenId, r.stream, r.arg]));
  const keys = JSON.stringify(keyed.map((r) => `${r.tokenId}\n${r.stream}\n${r.arg}`));
  const t = Date.now();
  return [
    statement(
      d,
      sql`DELETE FROM stream_presence WHERE object = ${object} AND token_id || char(10) || stream || char(10) || arg NOT IN (SELECT value FROM json_each(${keys}))`,
    ),
    statement(
      d,
      // Every row the object still holds is marked seen now: rows not seen for long are checked by the collector.
      sql`INSERT INTO stream_presence (object, account_id, token_id, stream, arg, created_at, seen_at)
        SELECT ${object}, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'), ${t}, ${t} FROM json_each(${json}) WHERE true
        ON CONFLICT (object, token_id, stream, arg) DO UPDATE SET seen_at = excluded.seen_at`,
    ),
  ];
}

/** The object an object name (`user:<shard>`, `user:<account id>` of earlier versions, or `topic:<stream>`) stands for. */
export function streamObject(env: Env, object: string): DurableObjectStub<StreamMethods> {
  const [kind, name] = [object.slice(0, object.indexOf(":")), object.slice(object.indexOf(":") + 1)];
  const ns = kind === "user" ? env.USER_STREAMS : env.TOPIC_STREAMS;
  return ns.get(ns.idFromName(name));
}
