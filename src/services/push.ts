/**
 * Web Push (RFC 8030), encrypted with RFC 8291 `aes128gcm` and signed with RFC 8292 VAPID by
 * @block65/webcrypto-web-push. Delivery happens after the response: `deliverPending` atomically claims
 * notifications not yet pushed (a partial index holds only those), so concurrent or repeated runs never send
 * one twice; it is triggered after actions that notify, and by the cron.
 */
import { buildPushPayload } from "@block65/webcrypto-web-push";
import { eq, sql } from "drizzle-orm";
import type { Env } from "../env";
import { config } from "../env";
import { anyRow, db, now, type DB, inJson } from "../db/client";
import { newId } from "../db/ids";
import { accounts, chatMessages, notifications, pushSubscriptions, statuses, users } from "../db/schema";
import { htmlToText } from "../content/format";
import { notFound, unprocessable } from "../lib/errors";
import { fromBase64 } from "../lib/crypto";
import { allowPrivateAddress, OutboundRefused, outboundFetch } from "../lib/outbound";
import { dispatch } from "./events";
import { ALERTS, alertsFrom, type Alerts } from "../lib/push-alerts";
import { vapidKeys } from "./instance-keys";
import { builtInImageUrl, DEFAULT_AVATAR, mediaUrl, origins } from "../lib/media-urls";

/** Which alert a notification type is sent under. */
const ALERT_OF: Record<string, (typeof ALERTS)[number] | undefined> = {
  follow: "follow",
  follow_request: "follow",
  favourite: "favourite",
  reblog: "reblog",
  mention: "mention",
  status: "status",
  poll: "poll",
  update: "update",
  quote: "quote",
  quoted_update: "quoted_update",
  "pleroma:chat_mention": "pleroma:chat_mention",
  "pleroma:emoji_reaction": "pleroma:emoji_reaction",
};

const MAX_ATTEMPTS = 3;

export type SubscriptionRow = typeof pushSubscriptions.$inferSelect;

function decodeKey(value: string): Uint8Array | null {
  try {
    return fromBase64(value);
  } catch {
    return null;
  }
}

/** The client's keys must be a P-256 public point and a 16-byte secret, or nothing can be encrypted to it. */
async function checkKeys(p256dh: string, auth: string): Promise<void> {
  const point = decodeKey(p256dh);
  if (!point || point.length !== 65 || point[0] !== 4)
    throw unprocessable(
      "Invalid subscription[keys][p256dh]: expected the base64url of an uncompressed P-256 point (65 bytes)",
    );
  try {
    await crypto.subtle.importKey("raw", point, { name: "ECDH", namedCurve: "P-256" }, false, []);
  } catch {
    throw unprocessable("Invalid subscription[keys][p256dh]: not a point on P-256");
  }
  const secret = decodeKey(auth);
  if (!secret || secret.length !== 16)
    throw unprocessable("Invalid subscription[keys][auth]: expected the base64url of 16 bytes");
}

/** Stores a subscription for the token, replacing the token's previous one (one batch). */
export async function subscribe(
  d: DB,
  tokenId: string,
  accountId: string,
  input: { endpoint: string; p256dh: string; auth: string; alerts: Alerts },
): Promise<SubscriptionRow> {
  await checkKeys(input.p256dh, input.auth);
  const row: SubscriptionRow = { id: newId(), tokenId, accountId, ...input, createdAt: now() };
  await d.batch([
    d.delete(pushSubscriptions).where(eq(pushSubscriptions.tokenId, tokenId)),
    d.insert(pushSubscriptions).values(row),
  ]);
  return row;
}

/** The token's subscription (404 without one). */
export async function tokenSubscription(d: DB, tokenId: string): Promise<SubscriptionRow> {
  const row = await d.select().from(pushSubscriptions).where(eq(pushSubscriptions.tokenId, tokenId)).get();
  if (!row) throw notFound();
  return row;
}

/** Changes which alerts the token's subscription receives; the others stay. */
export async function setAlerts(
  d: DB,
  tokenId: string,
  given: Partial<Record<string, boolean>> | undefined,
): Promise<SubscriptionRow> {
  const row = await tokenSubscription(d, tokenId);
  const alerts = alertsFrom(given, row.alerts);
  await d.update(pushSubscriptions).set({ alerts }).where(eq(pushSubscriptions.id, row.id));
  return { ...row, alerts };
}

export async function unsubscribe(d: DB, tokenId: string): Promise<void> {
  await d.delete(pushSubscriptions).where(eq(pushSubscriptions.tokenId, tokenId));
}

/** The VAPID public key subscriptions are made against (`server_key`). */
export async function serverKey(env: Env): Promise<string> {
  return (await vapidKeys(env)).publicKey;
}

function title(type: string, name: string, emoji: string | null): string {
  switch (type) {
    case "mention":
      return `${name} mentioned you`;
    case "status":
      return `${name} just posted`;
    case "follow":
      return `${name} followed you`;
    case "follow_request":
      return `${name} requested to follow you`;
    case "reblog":
      return `${name} boosted your post`;
    case "favourite":
      return `${name} favourited your post`;
    case "poll":
      return "A poll has ended";
    case "update":
      return `${name} edited a post`;
    case "quote":
      return `${name} quoted your post`;
    case "quoted_update":
      return `${name} edited a post you quoted`;
    case "pleroma:emoji_reaction":
      return `${name} reacted with ${emoji ?? ""}`.trim();
    case "pleroma:chat_mention":
      return `${name} sent you a chat message`;
    default:
      return `New notification from ${name}`;
  }
}

/** Sends one message, retrying transient failures; answers whether the subscription is gone (404/410). */
async function send(request: () => Promise<Request>, allowPrivate: boolean): Promise<"sent" | "gone" | "failed"> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      // Endpoints are URLs a client gave: through the SSRF guard, no redirects (a push service answers, it
      // does not redirect), 10 s.
      const res = await outboundFetch(await request(), undefined, {
        allowPrivate,
        maxRedirects: 0,
        timeoutMs: 10_000,
        maxBytes: 64_000,
      });
      await res.body?.cancel();
      if (res.status === 404 || res.status === 410) return "gone";
      if (res.ok) return "sent";
      if (res.status < 500 && res.status !== 429) return "failed";
    } catch (e) {
      // A refused address never becomes acceptable: give up. A network failure: try again.
      if (e instanceof OutboundRefused) return "failed";
    }
    if (attempt < MAX_ATTEMPTS) await new Promise((r) => setTimeout(r, 250 * attempt));
  }
  return "failed";
}

/**
 * Delivers the notifications not yet delivered (at most `max` a run): to their recipients' open streams, and
 * pushed to their subscriptions that want them. A subscription whose push service answers 404 or 410 is
 * deleted. After an action (`fresh`) the newest are claimed first, so what the action just caused goes out at
 * once even behind a backlog (a post to thousands of subscribers); the cron claims the oldest first and drains
 * the backlog. A run is bounded because each delivery is a subrequest, which a plan limits per invocation.
 */
export async function deliverPending(env: Env, base: string, max = 50, fresh = false): Promise<number> {
  const d = db(env);
  const allowPrivate = allowPrivateAddress(env);
  const claimed = await claimPending(d, max, fresh);
  if (claimed.length === 0) return 0;
  const o = origins(env, base);
  const streamed = dispatch(
    env,
    claimed.map((n) => ({ accountId: n.accountId, event: "notification" as const, payload: n.id })),
    base,
  );
  const loaded = await loadPushes(d, claimed);
  if (loaded.subs.length === 0) {
    await streamed;
    return 0;
  }
  const vapid = await vapidOf(env, base);
  const gone = new Set<string>();
  let sent = 0;
  await Promise.all(
    claimed.flatMap((n) => {
      const push = pushPayload(o, loaded, n);
      if (!push) return [];
      return loaded.subs
        .filter((s) => s.accountId === n.accountId && s.alerts[push.alert])
        .map(async (s) => {
          const result = await pushTo(s, push.payload, vapid, allowPrivate);
          if (result === "gone") gone.add(s.id);
          if (result === "sent") sent++;
        });
    }),
  );
  if (gone.size) await d.delete(pushSubscriptions).where(inJson(pushSubscriptions.id, [...gone]));
  await streamed;
  return sent;
}

type NotificationRow = typeof notifications.$inferSelect;

/** Marks up to `max` notifications delivered and answers them (newest first when `fresh`, else oldest first). */
async function claimPending(d: DB, max: number, fresh: boolean): Promise<NotificationRow[]> {
  // The cron's sweep looks first (a claim that finds nothing reads more); after a notification there is one.
  if (!fresh && !(await anyRow(d, sql`notifications WHERE pushed = 0`))) return [];
  return d
    .update(notifications)
    .set({ pushed: true })
    .where(
      fresh
        ? sql`${notifications.id} IN (SELECT id FROM notifications WHERE pushed = 0 ORDER BY id DESC LIMIT ${max})`
        : sql`${notifications.id} IN (SELECT id FROM notifications WHERE pushed = 0 ORDER BY id LIMIT ${max})`,
    )
    .returning();
}

/** One round trip for what the pushes need: the recipients' subscriptions and settings, senders, texts. */
async function loadPushes(d: DB, claimed: NotificationRow[]) {
  const recipients = [...new Set(claimed.map((n) => n.accountId))];
  const [subs, senders, settings, texts, chatTexts] = await d.batch([
    d.select().from(pushSubscriptions).where(inJson(pushSubscriptions.accountId, recipients)),
    d
      .select({
        id: accounts.id,
        username: accounts.username,
        displayName: accounts.displayName,
        avatar: accounts.avatar,
      })
      .from(accounts)
      .where(inJson(accounts.id, [...new Set(claimed.map((n) => n.fromAccountId))])),
    d
      .select({ id: users.accountId, locale: users.locale, settings: users.notificationSettings })
      .from(users)
      .where(inJson(users.accountId, recipients)),
    d
      .select({ id: statuses.id, content: statuses.content, spoiler: statuses.spoilerText })
      .from(statuses)
      .where(inJson(statuses.id, [...new Set(claimed.flatMap((n) => (n.statusId ? [n.statusId] : [])))].concat(""))),
    d
      .select({ id: chatMessages.id, content: chatMessages.content })
      .from(chatMessages)
      .where(inJson(chatMessages.id, claimed.flatMap((n) => (n.chatMessageId ? [n.chatMessageId] : [])).concat(""))),
  ]);
  return {
    subs,
    senderOf: new Map(senders.map((s) => [s.id, s])),
    userOf: new Map(settings.map((u) => [u.id, u])),
    textOf: new Map(texts.map((t) => [t.id, t.spoiler || htmlToText(t.content)])),
    chatTextOf: new Map(chatTexts.map((t) => [t.id, htmlToText(t.content)])),
  };
}

/** The instance's VAPID identity: its contact address (or its URL) and key pair. */
async function vapidOf(env: Env, base: string) {
  const keys = await vapidKeys(env);
  const cfg = config(env);
  return {
    subject: cfg.email ? `mailto:${cfg.email}` : base,
    publicKey: keys.publicKey,
    privateKey: keys.privateJwk.d!,
  };
}

/**
 * What a notification pushes, and under which alert; null when it is pushed to nobody (a type with no alert, a
 * sender or recipient gone). Contents stay out when the recipient hides them.
 */
function pushPayload(
  o: ReturnType<typeof origins>,
  loaded: Awaited<ReturnType<typeof loadPushes>>,
  n: NotificationRow,
) {
  const alert = ALERT_OF[n.type];
  const sender = loaded.senderOf.get(n.fromAccountId);
  const user = loaded.userOf.get(n.accountId);
  if (!alert || !sender || !user) return null;
  const hidden = user.settings.hide_notification_contents;
  const name = sender.displayName || sender.username;
  const payload = {
    notification_id: n.id,
    notification_type: n.type,
    title: hidden ? "New notification" : title(n.type, name, n.emoji),
    body: hidden
      ? ""
      : (n.statusId
          ? (loaded.textOf.get(n.statusId) ?? "")
          : n.chatMessageId
            ? (loaded.chatTextOf.get(n.chatMessageId) ?? "")
            : ""
        ).slice(0, 140),
    icon: sender.avatar ? mediaUrl(o, sender.avatar) : builtInImageUrl(o, DEFAULT_AVATAR),
    preferred_locale: user.locale,
  };
  return { alert, payload };
}

/** Encrypts and sends one push to one subscription (the message is built afresh for each attempt). */
function pushTo(
  s: SubscriptionRow,
  payload: NonNullable<ReturnType<typeof pushPayload>>["payload"],
  vapid: Awaited<ReturnType<typeof vapidOf>>,
  allowPrivate: boolean,
): Promise<"sent" | "gone" | "failed"> {
  const subscription = { endpoint: s.endpoint, expirationTime: null, keys: { p256dh: s.p256dh, auth: s.auth } };
  return send(async () => {
    const msg = await buildPushPayload(
      { data: payload, options: { ttl: 86400, urgency: "normal" } },
      subscription,
      vapid,
    );
    return new Request(s.endpoint, { method: "POST", headers: msg.headers, body: msg.body });
  }, allowPrivate);
}
