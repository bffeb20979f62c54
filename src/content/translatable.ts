/**
 * A status's rendered HTML as pieces a translator may change and pieces it must not (issue 47): the markup, the
 * text of links (mentions, hashtags, URLs), code and custom emoji shortcodes stay as they are; the text between them
 * is translated run by run and put back, escaped, where it was. Reads HTML the sanitiser already wrote.
 */
import { decodeEntities } from "./entities";
import { escapeHtml } from "./text";

/** Elements whose text is kept: a link's text is a mention, a hashtag or an address; code is code. */
const KEPT = new Set(["a", "code", "pre"]);
const SHORTCODE = /(:[\w+-]+:)/;

export interface Translatable {
  /** The runs of text to translate, in order, whitespace trimmed. */
  units: string[];
  /** The HTML again with each unit replaced by its translation (escaped), whitespace around it kept. */
  rebuild(translated: string[]): string;
}

type Piece = string | { unit: number; before: string; after: string };

/** Splits sanitised HTML (or plain text, `html: false`) into what is translated and what is kept. */
export function translatable(input: string, html = true): Translatable {
  const units: string[] = [];
  const pieces: Piece[] = [];
  const addText = (text: string) => {
    for (const part of text.split(SHORTCODE)) {
      if (!part) continue;
      const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(part)!;
      if (SHORTCODE.test(part) || !/\p{L}/u.test(m[2])) {
        pieces.push(html ? escapeHtml(part) : part);
        continue;
      }
      pieces.push({ unit: units.length, before: m[1], after: m[3] });
      units.push(m[2]);
    }
  };
  if (!html) {
    addText(input);
  } else {
    let kept = 0;
    for (const part of input.split(/(<[^>]*>)/)) {
      if (!part) continue;
      const tag = /^<(\/?)([a-zA-Z][\w-]*)/.exec(part);
      if (tag) {
        const name = tag[2].toLowerCase();
        if (KEPT.has(name)) kept = Math.max(0, kept + (tag[1] ? -1 : 1));
        pieces.push(part);
      } else if (kept > 0 || part.startsWith("<")) {
        pieces.push(part);
      } else {
        addText(decodeEntities(part));
      }
    }
  }
  return {
    units,
    rebuild: (translated) =>
      pieces
        .map((p) =>
          typeof p === "string"
            ? p
            : p.before +
              (html ? escapeHtml(translated[p.unit] ?? units[p.unit]) : (translated[p.unit] ?? units[p.unit])) +
              p.after,
        )
        .join(""),
  };
}
