/**
 * A custom emoji as an ActivityPub tag, as Mastodon writes it (`{type: "Emoji", id, name: ":code:", icon: Image}`)
 * for notes, chat messages and actors alike. `keyOrUrl` is an R2 key of this instance (a URL of its public files)
 * or an absolute URL.
 */
import { Emoji, Image } from "@fedify/vocab";
import { mediaUrl, type Origins } from "../../lib/media-urls";

/** Mime type of an emoji image from its file name (custom emoji are stored by key or URL, without a type). */
export function imageType(file: string): string | null {
  const ext = /\.([a-z0-9]+)(?:$|\?)/i.exec(file)?.[1]?.toLowerCase();
  return ext
    ? ((
        {
          png: "image/png",
          gif: "image/gif",
          webp: "image/webp",
          jpg: "image/jpeg",
          jpeg: "image/jpeg",
          svg: "image/svg+xml",
          avif: "image/avif",
        } as Record<string, string>
      )[ext] ?? null)
    : null;
}

export function emojiTag(o: Origins, shortcode: string, keyOrUrl: string): Emoji {
  const url = mediaUrl(o, keyOrUrl);
  return new Emoji({
    id: new URL(url),
    name: `:${shortcode}:`,
    icon: new Image({ url: new URL(url), mediaType: imageType(keyOrUrl) }),
  });
}
