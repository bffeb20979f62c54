/**
 * A custom emoji as an ActivityPub tag, as Mastodon writes it (`{type: "Emoji", id, name: ":code:", icon: Image}`)
 * for notes, chat messages and actors alike. `keyOrUrl` is an R2 key of this instance (made absolute on `base`)
 * or an absolute URL.
 */
import { Emoji, Image } from "@fedify/vocab";
import { mediaUrl } from "../services/media";
import { imageType } from "./notes";

export function emojiTag(base: string, shortcode: string, keyOrUrl: string): Emoji {
  const url = mediaUrl(base, keyOrUrl);
  return new Emoji({
    id: new URL(url),
    name: `:${shortcode}:`,
    icon: new Image({ url: new URL(url), mediaType: imageType(keyOrUrl) }),
  });
}
