/**
 * A small synchronous HTML tokenizer, for reading (never for producing) HTML that the sanitiser already
 * wrote: turning rendered content into plain text (`htmlToText`). Untrusted HTML is read by the sanitiser
 * (HTMLRewriter) alone, extraction of mentions included.
 */

export type HtmlToken =
  | { type: "start"; name: string; attrs: Map<string, string> }
  | { type: "end"; name: string }
  | { type: "text"; text: string }; // raw: character references not decoded

/** Elements whose content is not markup. */
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"]);

export const VOID_ELEMENTS = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "keygen",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);

const SPACE = /[\t\n\f\r ]/;

function tokenizeHtml(html: string): HtmlToken[] {
  const tokens: HtmlToken[] = [];
  let pos = 0;
  let text = "";
  let lower: string | undefined;
  const pushText = () => {
    if (text) tokens.push({ type: "text", text });
    text = "";
  };
  while (pos < html.length) {
    const lt = html.indexOf("<", pos);
    if (lt < 0) {
      text += html.slice(pos);
      break;
    }
    text += html.slice(pos, lt);
    pos = lt;
    const next = html[pos + 1] ?? "";
    if (html.startsWith("<!--", pos)) {
      pushText(); // text either side of a comment is two text nodes
      const abrupt = /^<!--->?|^<!-->/.exec(html.slice(pos, pos + 6)); // <!--> and <!---> are empty comments
      if (abrupt && abrupt[0].endsWith(">")) {
        pos += abrupt[0].length;
        continue;
      }
      const end = html.indexOf("-->", pos + 4);
      pos = end < 0 ? html.length : end + 3;
      continue;
    }
    if (next === "!" || next === "?") {
      pushText();
      const end = html.indexOf(">", pos);
      pos = end < 0 ? html.length : end + 1;
      continue;
    }
    if (next === "/" && /[A-Za-z]/.test(html[pos + 2] ?? "")) {
      const end = html.indexOf(">", pos);
      const name = /^<\/([^\t\n\f\r />]+)/.exec(html.slice(pos))![1].toLowerCase();
      pushText();
      tokens.push({ type: "end", name });
      pos = end < 0 ? html.length : end + 1;
      continue;
    }
    if (!/[A-Za-z]/.test(next)) {
      text += "<";
      pos += 1;
      continue;
    }
    const tag = readStartTag(html, pos);
    if (!tag) break; // a tag cut off by the end of the input is dropped, as browsers do
    const { name, attrs } = tag;
    pushText();
    tokens.push({ type: "start", name, attrs });
    pos = tag.end;
    if (name === "plaintext") {
      text = html.slice(pos);
      pushText();
      break;
    }
    if (RAW_TEXT.has(name)) {
      const close = (lower ??= html.toLowerCase()).indexOf(`</${name}`, pos);
      text = html.slice(pos, close < 0 ? html.length : close);
      pushText();
      pos = close < 0 ? html.length : close;
    }
  }
  pushText();
  return tokens;
}

/** A start tag at `pos` (`<` then a letter): its name, attributes (the first of a repeated name wins) and end. */
function readStartTag(html: string, pos: number): { name: string; attrs: Map<string, string>; end: number } | null {
  let i = pos + 1;
  while (i < html.length && !SPACE.test(html[i]) && html[i] !== "/" && html[i] !== ">") i++;
  const name = html.slice(pos + 1, i).toLowerCase();
  const attrs = new Map<string, string>();
  while (i < html.length) {
    const c = html[i];
    if (SPACE.test(c) || c === "/") {
      i++;
      continue;
    }
    if (c === ">") return { name, attrs, end: i + 1 };
    const attr = readAttribute(html, i);
    if (!attrs.has(attr.name)) attrs.set(attr.name, attr.value);
    i = attr.end;
  }
  return null; // no `>` before the end of the input
}

/** An attribute at `i`: its name, its value (quoted, unquoted or none: "") and where it ends. */
function readAttribute(html: string, i: number): { name: string; value: string; end: number } {
  let j = i + 1;
  while (j < html.length && !SPACE.test(html[j]) && !"/>=".includes(html[j])) j++;
  const name = html.slice(i, j).toLowerCase();
  i = j;
  while (i < html.length && SPACE.test(html[i])) i++;
  let value = "";
  if (html[i] === "=") {
    i++;
    while (i < html.length && SPACE.test(html[i])) i++;
    const q = html[i];
    if (q === '"' || q === "'") {
      const end = html.indexOf(q, i + 1);
      value = html.slice(i + 1, end < 0 ? html.length : end);
      i = end < 0 ? html.length : end + 1;
    } else {
      let k = i;
      while (k < html.length && !SPACE.test(html[k]) && html[k] !== ">") k++;
      value = html.slice(i, k);
      i = k;
    }
  }
  return { name, value, end: i };
}

/** Walks tokens keeping a stack of open elements; `open` is innermost last. */
export function walkHtml(html: string, visit: (token: HtmlToken, open: readonly string[]) => void): void {
  const open: string[] = [];
  for (const token of tokenizeHtml(html)) {
    if (token.type === "start") {
      if (token.name === "a" && open.includes("a")) open.length = open.lastIndexOf("a");
      visit(token, open);
      if (!VOID_ELEMENTS.has(token.name)) open.push(token.name);
    } else if (token.type === "end") {
      const at = open.lastIndexOf(token.name);
      if (at >= 0) open.length = at;
      visit(token, open);
    } else {
      visit(token, open);
    }
  }
}
