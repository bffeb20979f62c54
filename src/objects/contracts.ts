/**
 * What the Durable Objects answer, as interfaces their classes implement (src/objects/): env.ts types its bindings
 * with these, so the bottom of the house (env.ts, and everything that names `Env`) names no class above it.
 * Plain data and row types only (db/schema.ts imports nothing of the house).
 */
import type { chatMessages, mediaAttachments, StatusEmoji } from "../db/schema";

/** Outgoing deliveries of one destination host (objects/host-delivery.ts). */
export interface HostDeliveryMethods extends Rpc.DurableObjectBranded {
  /** Runs the host's due deliveries now, and wakes the `relay` hosts' objects (a fan-out beyond one invocation). */
  kick(host: string, relay?: string[]): Promise<void>;
}

/** One event for the connections of one listener (token) subscribed to one stream (objects/streams.ts `Frame`). */
export interface StreamFrame {
  stream: string;
  arg: string;
  tokenId: string;
  event: string;
  payload?: string;
}

/** The connections of one user's (or one public or hashtag stream's) listeners (objects/streams.ts). */
export interface StreamMethods extends Rpc.DurableObjectBranded {
  fetch(request: Request): Promise<Response>;
  deliver(object: string, frames: StreamFrame[]): Promise<void>;
  relay(batches: { object: string; frames: StreamFrame[] }[]): Promise<void>;
  refreshPresence(object: string): Promise<void>;
}

/** A checked chat message to write (services/chats.ts `draftMessage`, or an incoming ChatMessage). */
export interface MessageDraft {
  chatId: string;
  senderId: string;
  recipientId: string;
  /** HTML. */
  content: string;
  emojis: StatusEmoji[];
  mediaId: string | null;
  idempotencyKey: string | null;
  /** ActivityPub id of a remote message. */
  uri: string | null;
}

/** What follows a chat write (a subset of services/effects.ts `Effects`). */
export interface ChatEffects {
  push?: boolean;
  /** From `outboxEffects` (services/outbox.ts): the object's batch queued outbox rows. */
  federate?: boolean;
}

export interface SentMessage {
  message: typeof chatMessages.$inferSelect;
  media: typeof mediaAttachments.$inferSelect | null;
  /** False when an idempotent resend found the first message. */
  created: boolean;
  /** What follows a new message: push of its `pleroma:chat_mention`, delivery of a local sender's ChatMessage. */
  effects: ChatEffects;
}

/** The single writer of one chat's messages and unread counts (objects/chat-room.ts). */
export interface ChatWriterMethods {
  send(draft: MessageDraft, base: string): Promise<SentMessage>;
  read(chatId: string, reader: string, lastReadId: string | null): Promise<void>;
  readOne(chatId: string, reader: string, messageId: string): Promise<void>;
  /** Deletes a local sender's message; answers what follows (the delivery of its Delete). */
  deleteMessage(chatId: string, sender: string, recipient: string, messageId: string): Promise<ChatEffects>;
  clear(chatId: string, who: string): Promise<void>;
}

export interface ChatRoomMethods extends ChatWriterMethods, Rpc.DurableObjectBranded {}
