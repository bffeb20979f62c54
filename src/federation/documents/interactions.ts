/**
 * The documents of what local users do to statuses, as other servers expect them: `Like` (Mastodon's, to the
 * status's author alone), Pleroma's `EmojiReact` (`content` the emoji; a custom emoji as `:code:` with its `Emoji`
 * tag), `Announce` of a reblog (notes.ts), and the `Undo` of each, whose object repeats the activity it withdraws
 * (ids stored with the rows: `favourites.uri`, `emoji_reactions.uri`, a reblog's uri).
 */
import { Announce, EmojiReact, Emoji, Image, Like, Undo } from "@fedify/vocab";
import { addressing } from "../../services/addressing";
import { mediaUrl } from "../../lib/media-urls";
import type { OutboxActivity } from "../../services/outbox";
import type { NoteContext } from "./notes";
import { imageType } from "./emoji-tags";

type Actor = { uri: string; username: string };
const url = (u: string) => new URL(u);

export function likeActivity(
  me: Actor,
  target: Actor,
  a: Extract<OutboxActivity, { type: "Like" | "UndoLike" }>,
): Like | Undo {
  const like = new Like({ id: url(a.uri), actor: url(me.uri), object: url(a.objectUri), to: url(target.uri) });
  if (a.type === "Like") return like;
  return new Undo({ id: url(`${a.uri}/undo`), actor: url(me.uri), object: like, to: url(target.uri) });
}

export function emojiReactActivity(
  nc: NoteContext,
  me: Actor,
  target: Actor,
  a: Extract<OutboxActivity, { type: "EmojiReact" | "UndoEmojiReact" }>,
): EmojiReact | Undo {
  const custom = a.emojiFile !== null;
  const icon = custom ? mediaUrl(nc, a.emojiFile!) : null;
  // A remote custom emoji (`blob@example.com`) goes by its shortcode, its image where its server keeps it.
  const code = `:${a.emoji.split("@")[0]}:`;
  const react = new EmojiReact({
    id: url(a.uri),
    actor: url(me.uri),
    object: url(a.objectUri),
    content: custom ? code : a.emoji,
    tags: icon
      ? [
          new Emoji({
            id: url(icon),
            name: code,
            icon: new Image({ url: url(icon), mediaType: imageType(a.emojiFile!) }),
          }),
        ]
      : [],
    to: url(target.uri),
  });
  if (a.type === "EmojiReact") return react;
  return new Undo({ id: url(`${a.uri}/undo`), actor: url(me.uri), object: react, to: url(target.uri) });
}

/** The Undo of a reblog's Announce, addressed as the Announce was. */
export function undoAnnounceActivity(
  nc: NoteContext,
  me: Actor,
  originalAuthor: Actor | undefined,
  a: Extract<OutboxActivity, { type: "UndoAnnounce" }>,
): Undo | null {
  const to = addressing({
    visibility: a.visibility,
    followers: nc.followersOf(me.username).href,
    mentioned: originalAuthor ? [originalAuthor.uri] : [],
  });
  if (!to) return null;
  const tos = to.to.map(url);
  const ccs = to.cc.map(url);
  return new Undo({
    id: url(`${a.uri}/undo`),
    actor: url(me.uri),
    object: new Announce({ id: url(a.uri), actor: url(me.uri), object: url(a.objectUri), tos, ccs }),
    tos,
    ccs,
  });
}
