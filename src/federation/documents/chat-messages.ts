/**
 * Pleroma's chat messages over ActivityPub: a `Create` of a LitePub `ChatMessage` (`to`: the one recipient actor,
 * one attachment at most, custom emoji as tags), and its `Delete` with a `Tombstone`. The object's id is
 * `<actor uri>#chat_messages/<id>`, as the actor's other activities are named (src/services/accounts.ts).
 */
import { ChatMessage, Create, Delete, Document, Link, Tombstone } from "@fedify/vocab";
import type { ChatMessageRow } from "../../services/chats";
import type { MediaRow } from "../../services/hydrate";
import { mediaUrl, type Origins } from "../../lib/media-urls";
import { embedded, href, httpUrl, readEmoji, text } from "./remote-objects";
import { sanitizeHtml } from "../../content/format";
import type { StatusEmoji } from "../../db/schema";
import { instant } from "./notes";
import { emojiTag } from "./emoji-tags";

const chatMessageUri = (actorUri: string, id: string) => `${actorUri}#chat_messages/${id}`;

export function createChatMessage(
  o: Origins,
  actorUri: string,
  recipientUri: string,
  m: ChatMessageRow,
  media: MediaRow | null,
): Create {
  const id = new URL(chatMessageUri(actorUri, m.id));
  const to = new URL(recipientUri);
  const object = new ChatMessage({
    id,
    attribution: new URL(actorUri),
    tos: [to],
    content: m.content,
    published: instant(m.createdAt),
    tags: m.emojis.map((e) => emojiTag(o, e.shortcode, e.file)),
    attachments: media
      ? [
          new Document({
            mediaType: media.mimeType,
            url: new URL(mediaUrl(o, media.file)),
            name: media.description || null,
          }),
        ]
      : [],
  });
  return new Create({
    id: new URL(`${id.href}/activity`),
    actor: new URL(actorUri),
    tos: [to],
    object,
    published: instant(m.createdAt),
  });
}

export function deleteChatMessage(actorUri: string, recipientUri: string, messageId: string): Delete {
  const uri = chatMessageUri(actorUri, messageId);
  return new Delete({
    id: new URL(`${uri}#delete`),
    actor: new URL(actorUri),
    object: new Tombstone({ id: new URL(uri) }),
    tos: [new URL(recipientUri)],
  });
}

export interface ParsedChatMessage {
  uri: string;
  to: string[];
  /** Sanitised HTML. */
  content: string;
  emojis: StatusEmoji[];
  attachment: { url: string; mimeType: string; description: string | null } | null;
}

const MAX_CONTENT = 50_000;

/** A received ChatMessage, read from its embedded data only. */
export async function parseChatMessage(object: ChatMessage, host: string): Promise<ParsedChatMessage> {
  const emojis: StatusEmoji[] = [];
  try {
    for await (const tag of object.getTags(embedded)) {
      const emoji = await readEmoji(tag);
      if (emoji && emojis.length < 50 && !emojis.some((e) => e.shortcode === emoji.shortcode))
        emojis.push({ shortcode: emoji.shortcode, domain: host, file: emoji.url, visible_in_picker: false });
    }
  } catch {
    // An unreadable tag leaves the rest.
  }
  let attachment: ParsedChatMessage["attachment"] = null;
  try {
    for await (const a of object.getAttachments(embedded)) {
      if (!(a instanceof Document)) continue;
      const url = httpUrl(href(a.url as URL | Link | null));
      if (url)
        attachment = {
          url,
          mimeType: text(a.mediaType).slice(0, 100) || "application/octet-stream",
          description: a.name ? text(a.name).slice(0, 1500) : null,
        };
      break;
    }
  } catch {
    // No attachment then.
  }
  return {
    uri: object.id!.href,
    to: object.toIds.map((u) => u.href),
    content: await sanitizeHtml(text(object.content).slice(0, MAX_CONTENT)),
    emojis,
    attachment,
  };
}
