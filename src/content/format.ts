/**
 * The status content pipeline: what a status text refers to (mentions, hashtags, custom emoji,
 * links), its safe HTML in each of the three source formats, the sanitiser used for any untrusted
 * HTML (remote content too), and the plain-text alternate of rendered HTML.
 *
 * The output follows Pleroma 2.5: mentions are h-card links, hashtags are `rel="tag ugc"` links to
 * `/tag/NAME`, plain text keeps its line breaks as `<br/>` without a `<p>` wrapper.
 *
 * Safety does not depend on HTMLRewriter's output: the sanitiser only reads elements, attributes
 * and text from it and writes every byte of the result itself: allowlisted tags, allowlisted
 * attributes whose values are decoded and re-escaped, and text that is decoded and re-escaped.
 */
import { Marked } from "marked";
import { decodeEntities } from "./entities";
import { VOID_ELEMENTS, walkHtml } from "./html-scan";
import { escapeHtml, linkify } from "./text";

export type ContentType = "text/plain" | "text/markdown" | "text/html";
export const CONTENT_TYPES: ContentType[] = ["text/plain", "text/markdown", "text/html"];

/** What a status text refers to, before any database look-up. */
export interface Extracted {
  /** acct keys, lower-cased, deduplicated, in order: "alice" (local) or "bob@remote.example". */
  mentions: string[];
  /** hashtag names, lower-cased, deduplicated, in order. */
  tags: string[];
  /** custom emoji shortcodes written as :shortcode:, deduplicated, in order. */
  emojis: string[];
  /** http(s) URLs, deduplicated, in order, that are not mention or hashtag links. */
  links: string[];
}

export interface MentionTarget {
  id: string;
  username: string;
  acct: string;
  url: string;
}

export interface RenderOptions {
  /** e.g. "https://social.example": hashtag links are `${base}/tag/${name}`. */
  base: string;
  /** e.g. "social.example" or "localhost:8787". */
  localHost: string;
  /** Keyed by acct key as in Extracted.mentions; unknown mentions stay plain text. */
  mentions: Map<string, MentionTarget>;
}

// ---------------------------------------------------------------------------------------------
// Finding mentions, hashtags, URLs and emoji in a run of text

/** The same URLs linkify() links (its pattern is private to text.ts). */
const URL_PATTERN = /\bhttps?:\/\/[^\s<>"']*[^\s<>"'.,;:!?)\]}]/gi;

const LABEL = "[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]*[\\p{L}\\p{N}])?";
/**
 * `@user` or `@user@host[:port]`, not preceded by a word character, `@` or `/` (so neither an
 * e-mail address nor a path like /@user). Remote usernames may have `.` and `-` inside.
 */
const MENTION_PATTERN = new RegExp(
  "(?<![\\p{L}\\p{M}\\p{N}_@/])@(?:" +
    `([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)@(${LABEL}(?:\\.${LABEL})*(?::\\d{1,5})?)` +
    "|([A-Za-z0-9_]+))(?![\\p{L}\\p{M}\\p{N}_@])",
  "gu",
);

/** `#name`: letters (any script), marks, digits and `_`, not preceded by a word character, `&`, `#` or `/`. */
const HASHTAG_PATTERN = /(?<![\p{L}\p{M}\p{N}_&#/])#([\p{L}\p{M}\p{N}_]+)/gu;

/** `:shortcode:` not glued to letters or digits on either side (so not 12:30:45). */
// Shortcodes as packs name them (services/emoji-packs.ts SHORTCODE): letters, digits, `_` and `-`.
const EMOJI_PATTERN = /(?<![\p{L}\p{N}]):([A-Za-z0-9_-]+):(?![\p{L}\p{N}])/gu;

type Segment =
  | { kind: "text"; text: string }
  | { kind: "url"; text: string }
  | { kind: "mention"; text: string; key: string }
  | { kind: "tag"; text: string; name: string };

function mentionKey(
  user: string | undefined,
  host: string | undefined,
  local: string | undefined,
  localHost: string,
): string | null {
  if (local !== undefined) return local.toLowerCase();
  const h = host!.toLowerCase();
  if (h === localHost.toLowerCase()) return user!.toLowerCase();
  // A bare word after the second @ (no dot, no port) is not a server name.
  if (!h.includes(".") && !h.includes(":")) return null;
  return `${user!.toLowerCase()}@${h}`;
}

function tagName(name: string): string {
  return name.normalize("NFC").toLowerCase();
}

/** Longest hashtag name taken from a client (a path or parameter); longer ones are not hashtags. */
const TAG_NAME_MAX = 200;

/** A hashtag name as a client gives it (with or without `#`), as statuses store it; null if it is not one. */
export function normalizeTag(given: string): string | null {
  const name = given.replace(/^#/, "");
  return name.length > 0 && name.length <= TAG_NAME_MAX && /^[\p{L}\p{M}\p{N}_]+$/u.test(name) ? tagName(name) : null;
}

/** Splits decoded text into plain runs, URLs, mentions and hashtags. URLs win over anything inside them. */
function segmentText(text: string, localHost: string): Segment[] {
  type Found = { start: number; end: number; segment: Segment };
  const urls: Found[] = [];
  for (const m of text.matchAll(URL_PATTERN)) {
    urls.push({ start: m.index!, end: m.index! + m[0].length, segment: { kind: "url", text: m[0] } });
  }
  const candidates: Found[] = [];
  for (const m of text.matchAll(MENTION_PATTERN)) {
    const key = mentionKey(m[1], m[2], m[3], localHost);
    if (key)
      candidates.push({ start: m.index!, end: m.index! + m[0].length, segment: { kind: "mention", text: m[0], key } });
  }
  for (const m of text.matchAll(HASHTAG_PATTERN)) {
    if (/^\d+$/.test(m[1])) continue; // #123 is not a hashtag
    candidates.push({
      start: m.index!,
      end: m.index! + m[0].length,
      segment: { kind: "tag", text: m[0], name: tagName(m[1]) },
    });
  }
  candidates.sort((a, b) => a.start - b.start);
  const found = [...urls];
  for (const c of candidates) {
    if (!found.some((f) => c.start < f.end && f.start < c.end)) found.push(c);
  }
  found.sort((a, b) => a.start - b.start);
  const segments: Segment[] = [];
  let last = 0;
  for (const f of found) {
    if (f.start > last) segments.push({ kind: "text", text: text.slice(last, f.start) });
    segments.push(f.segment);
    last = f.end;
  }
  if (last < text.length) segments.push({ kind: "text", text: text.slice(last) });
  return segments;
}

function mentionHtml(target: MentionTarget): string {
  const shown = target.acct.includes("@") ? target.acct : target.username;
  return (
    `<span class="h-card"><a class="u-url mention" data-user="${escapeHtml(target.id)}" href="${escapeHtml(target.url)}" rel="ugc">` +
    `@<span>${escapeHtml(shown)}</span></a></span>`
  );
}

function hashtagHtml(name: string, written: string, base: string): string {
  const href = `${base.replace(/\/+$/, "")}/tag/${name}`;
  return `<a class="hashtag" data-tag="${escapeHtml(name)}" href="${escapeHtml(href)}" rel="tag ugc">${escapeHtml(written)}</a>`;
}

/** Decoded text to HTML with its URLs, resolved mentions and hashtags linked. */
function linkText(text: string, opts: RenderOptions): string {
  let out = "";
  for (const s of segmentText(text, opts.localHost)) {
    if (s.kind === "url") out += linkify(s.text);
    else if (s.kind === "tag") out += hashtagHtml(s.name, s.text, opts.base);
    else if (s.kind === "mention") {
      const target = opts.mentions.get(s.key);
      out += target ? mentionHtml(target) : escapeHtml(s.text);
    } else out += escapeHtml(s.text);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Markdown

const markdown = new Marked({ gfm: true, breaks: true });
markdown.use({
  // Bare URLs (and e-mail addresses) are left as text: the linker links URLs exactly as plain text
  // does, and mentions like @bob@remote.example must not become mailto: links.
  tokenizer: { url: () => undefined },
  // Statuses carry images as attachments; an inline image becomes a link to it, named by its alt text.
  renderer: {
    image({ href, text, tokens }) {
      const alt = tokens ? this.parser.parseInline(tokens, this.parser.textRenderer) : text;
      return `<a href="${escapeHtml(href)}">${escapeHtml(alt || href)}</a>`;
    },
  },
});

function markdownToHtml(text: string): string {
  return markdown.parse(text.replace(/\r\n?/g, "\n"), { async: false });
}

// ---------------------------------------------------------------------------------------------
// Sanitising

const ALLOWED = new Set([
  "p",
  "br",
  "span",
  "a",
  "b",
  "strong",
  "i",
  "em",
  "u",
  "s",
  "del",
  "code",
  "pre",
  "blockquote",
  "ul",
  "ol",
  "li",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "sub",
  "sup",
  "hr",
]);

/** Removed together with everything inside them. */
const DROP = new Set([
  "script",
  "style",
  "iframe",
  "object",
  "embed",
  "template",
  "noscript",
  "svg",
  "math",
  "form",
  "input",
  "textarea",
  "select",
  "button",
  // Also raw-text or script-like elements whose content is not meant to be shown.
  "title",
  "xmp",
  "noembed",
  "noframes",
  "plaintext",
  "applet",
  "frameset",
  "frame",
]);

/** Text inside these is never linked. */
const NO_LINK = new Set(["a", "code", "pre"]);
const PRE = new Set(["pre"]);
const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
/** Starting one of these closes an open <p>, as browsers do. */
const CLOSES_P = new Set(["p", "ul", "ol", "li", "pre", "blockquote", "hr", ...HEADINGS]);
/** An <li> does not close an <li> outside one of these. */
const LI_SCOPE = new Set(["ul", "ol", "blockquote", "pre", ...HEADINGS]);
/** Block-level output, for dropping insignificant newlines between blocks. */
const BLOCKS = new Set(["p", "ul", "ol", "li", "pre", "blockquote", "hr", "br", ...HEADINGS]);

const A_CLASSES = new Set(["mention", "u-url", "hashtag"]);
const A_RELS = new Set(["ugc", "tag"]);
const FORCED_REL = ["nofollow", "noopener", "noreferrer"];

/** The href as the browser would see it if it is http:, https: or mailto:, else null. */
function safeHref(raw: string): string | null {
  const value = decodeEntities(raw, true)
    .replace(/[\t\n\r]/g, "")
    .replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
  return /^(?:https?|mailto):/i.test(value) ? value : null;
}

function words(value: string | undefined): string[] {
  return value === undefined
    ? []
    : [
        ...new Set(
          decodeEntities(value, true)
            .toLowerCase()
            .split(/[\t\n\f\r ]+/)
            .filter(Boolean),
        ),
      ];
}

function allowedAttributes(name: string, attributes: Iterable<string[]>): string {
  const given = new Map<string, string>();
  for (const [key, value] of attributes) {
    const k = key.toLowerCase();
    if (!given.has(k)) given.set(k, value ?? "");
  }
  const kept: [string, string][] = [];
  if (name === "a") {
    const href = given.has("href") ? safeHref(given.get("href")!) : null;
    if (href) kept.push(["href", href]);
    const classes = words(given.get("class")).filter((c) => A_CLASSES.has(c));
    if (classes.length) kept.push(["class", classes.join(" ")]);
    for (const data of ["data-user", "data-tag"]) {
      if (given.has(data)) kept.push([data, decodeEntities(given.get(data)!, true)]);
    }
    kept.push(["rel", [...words(given.get("rel")).filter((r) => A_RELS.has(r)), ...FORCED_REL].join(" ")]);
  } else if (name === "span") {
    if (words(given.get("class")).includes("h-card")) kept.push(["class", "h-card"]);
  }
  kept.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  return kept.map(([k, v]) => ` ${k}="${escapeHtml(v)}"`).join("");
}

interface Frame {
  name: string;
  /** Written to the output (an allowlisted element). */
  emit: boolean;
  /** Everything inside is dropped. */
  drop: boolean;
}

interface SanitizeOptions {
  /** Turns decoded text outside <a>, <code> and <pre> into HTML; default escapes it. */
  linker?: (text: string) => string;
  /** Drops whitespace-only text with a newline between block elements (Markdown's output). */
  compact?: boolean;
  /**
   * Receives what the output refers to: the text and links exactly as the sanitiser emits them, so mentions (who
   * a direct post is addressed to) are read by the same parser that makes the HTML, never by a second one.
   */
  collect?: Collector;
}

const ANCHOR = new Set(["a"]);
const CODE = new Set(["code", "pre"]);

async function rewriteHtml(html: string, options: SanitizeOptions = {}): Promise<string> {
  const output = new SanitizedOutput(options);
  await new HTMLRewriter()
    .on("*", { element: (el) => output.element(el) })
    .onDocument({ text: (chunk) => output.text(chunk.text), comments: () => output.flush() })
    .transform(new Response(html))
    .text();
  return output.end();
}

/**
 * The sanitiser's state while HTMLRewriter streams the input through it: the output so far, the elements open in
 * it (`Frame`s), and the text and whitespace not yet written (text arrives in chunks; whitespace waits to see
 * whether a block follows).
 */
class SanitizedOutput {
  private out = "";
  private readonly stack: Frame[] = [];
  private pendingText = "";
  private pendingSpace = "";

  constructor(private readonly options: SanitizeOptions) {}

  /** A start tag: dropped with its content, unwrapped (its content kept), or written with its allowed attributes. */
  element(el: Element): void {
    this.flush();
    if (this.dropping()) return;
    const name = el.tagName.toLowerCase();
    if (DROP.has(name)) {
      this.track(el, { name, emit: false, drop: true });
      return;
    }
    if (!ALLOWED.has(name)) {
      if (!VOID_ELEMENTS.has(name)) this.track(el, { name, emit: false, drop: false });
      return;
    }
    this.closeImplied(name);
    if (name === "a" && this.options.collect) collectLink(this.options.collect, el);
    const attrs = allowedAttributes(name, el.attributes);
    if (name === "br" || name === "hr") {
      this.write(`<${name}/>`, true);
      return;
    }
    this.write(`<${name}${attrs}>`, BLOCKS.has(name));
    if (!this.track(el, { name, emit: true, drop: false })) this.write(`</${name}>`, BLOCKS.has(name));
  }

  text(chunk: string): void {
    this.pendingText += chunk;
  }

  /** Writes the text gathered since the last tag: decoded, collected, then linked or escaped. */
  flush(): void {
    if (!this.pendingText) return;
    const raw = this.pendingText;
    this.pendingText = "";
    if (this.dropping()) return;
    const text = decodeEntities(raw).replace(/\u0000/g, "");
    if (!text) return;
    if (this.options.collect && !this.within(CODE)) this.options.collect.text(text, !this.within(ANCHOR));
    const literal = this.within(NO_LINK);
    if (this.options.compact && !this.within(PRE) && /^[\t\n\f\r ]*$/.test(text) && text.includes("\n")) {
      // Insignificant: kept as one newline, and only between inline content.
      if (this.out && !/\s$/.test(this.out)) this.pendingSpace = "\n";
      return;
    }
    this.write(this.options.linker && !literal ? this.options.linker(text) : escapeHtml(text), false);
  }

  /** The output, every element still open closed. */
  end(): string {
    this.flush();
    if (this.stack.length) this.closeTo(this.stack[0]);
    return this.out;
  }

  private dropping(): boolean {
    return this.stack.some((f) => f.drop);
  }

  private within(names: Set<string>): boolean {
    return this.stack.some((f) => f.emit && names.has(f.name));
  }

  private write(markup: string, block: boolean): void {
    if (this.pendingSpace && !block) this.out += this.pendingSpace;
    this.pendingSpace = "";
    this.out += markup;
  }

  private closeTo(frame: Frame): void {
    const at = this.stack.lastIndexOf(frame);
    if (at < 0) return;
    while (this.stack.length > at) {
      const f = this.stack.pop()!;
      if (f.emit) this.write(`</${f.name}>`, BLOCKS.has(f.name));
    }
  }

  private openEmitted(name: string): Frame | undefined {
    for (let i = this.stack.length - 1; i >= 0; i--) {
      if (this.stack[i].emit && this.stack[i].name === name) return this.stack[i];
    }
    return undefined;
  }

  /** The elements a start tag of `name` closes (HTML's implied end tags: <a> in <a>, <li> in <li>, <p> before a block…). */
  private closeImplied(name: string): void {
    if (name === "a") {
      const a = this.openEmitted("a");
      if (a) this.closeTo(a);
    }
    if (name === "li") {
      for (let i = this.stack.length - 1; i >= 0; i--) {
        const f = this.stack[i];
        if (!f.emit) continue;
        if (f.name === "li") {
          this.closeTo(f);
          break;
        }
        if (LI_SCOPE.has(f.name)) break;
      }
    }
    if (CLOSES_P.has(name)) {
      const p = this.openEmitted("p");
      if (p) this.closeTo(p);
    }
    if (HEADINGS.has(name)) {
      const top = [...this.stack].reverse().find((f) => f.emit);
      if (top && HEADINGS.has(top.name)) this.closeTo(top);
    }
  }

  /** Pushes `frame` until the element's end tag; false for elements that cannot have content. */
  private track(el: Element, frame: Frame): boolean {
    try {
      el.onEndTag(() => {
        this.flush();
        this.closeTo(frame);
      });
    } catch {
      return false;
    }
    this.stack.push(frame);
    return true;
  }
}

/** Safe HTML for any untrusted HTML (used for remote content too). */
export async function sanitizeHtml(html: string): Promise<string> {
  return rewriteHtml(html);
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** Safe HTML for the status body. */
export async function renderContent(text: string, contentType: ContentType, opts: RenderOptions): Promise<string> {
  const linker = (t: string) => linkText(t, opts);
  switch (contentType) {
    case "text/markdown":
      return rewriteHtml(markdownToHtml(text), { linker, compact: true });
    case "text/html":
      return rewriteHtml(text, { linker });
    default:
      return linkText(text.replace(/\r\n?/g, "\n"), opts).replace(/\n/g, "<br/>");
  }
}

// ---------------------------------------------------------------------------------------------
// Extraction

class Collector {
  private readonly mentions = new Set<string>();
  private readonly tags = new Set<string>();
  private readonly emojis = new Set<string>();
  private readonly links = new Set<string>();

  constructor(private readonly localHost: string) {}

  /** Decoded text; `linkable` is false inside an existing link, where only emoji count. */
  text(text: string, linkable: boolean) {
    for (const s of segmentText(text, this.localHost)) {
      if (s.kind === "text") {
        for (const m of s.text.matchAll(EMOJI_PATTERN)) this.emojis.add(m[1]);
      } else if (!linkable) continue;
      else if (s.kind === "url") this.links.add(s.text);
      else if (s.kind === "mention") this.mentions.add(s.key);
      else this.tags.add(s.name);
    }
  }

  link(url: string) {
    this.links.add(url);
  }

  result(): Extracted {
    return { mentions: [...this.mentions], tags: [...this.tags], emojis: [...this.emojis], links: [...this.links] };
  }
}

/** An existing http(s) link of the source, unless it is a mention or hashtag link. */
function collectLink(into: Collector, el: Element) {
  const raw = el.getAttribute("href");
  const href = raw === null ? null : safeHref(raw);
  if (!href || !/^https?:/i.test(href)) return;
  const classes = words(el.getAttribute("class") ?? undefined);
  if (
    classes.includes("mention") ||
    classes.includes("hashtag") ||
    words(el.getAttribute("rel") ?? undefined).includes("tag")
  )
    return;
  into.link(href);
}

/**
 * What a status text refers to, before any database look-up. HTML and Markdown are read by the sanitiser itself
 * (its output is discarded here): what it would show is exactly what is extracted.
 */
export async function extract(text: string, contentType: ContentType, localHost: string): Promise<Extracted> {
  const into = new Collector(localHost);
  if (contentType === "text/markdown") await rewriteHtml(markdownToHtml(text), { compact: true, collect: into });
  else if (contentType === "text/html") await rewriteHtml(text, { collect: into });
  else into.text(text, true);
  return into.result();
}

// ---------------------------------------------------------------------------------------------
// Plain text alternate

const PARAGRAPHS = new Set(["p", "blockquote", "pre", "hr", "ul", "ol", "table", ...HEADINGS]);
const LINES = new Set(["li", "div", "tr", "dt", "dd", "section", "article", "header", "footer"]);

/** The text/plain alternate of rendered HTML: tags stripped, <br> and block ends become newlines, entities decoded. */
export function htmlToText(html: string): string {
  let out = "";
  /** At least `n` line breaks at the end of the output, unless it is empty. */
  const breakLines = (n: number) => {
    out = out.replace(/[ \t]+$/, "");
    if (!out) return;
    const have = /\n*$/.exec(out)![0].length;
    if (have < n) out += "\n".repeat(n - have);
  };
  walkHtml(html, (token, open) => {
    if (open.some((name) => DROP.has(name))) return;
    if (token.type === "text") {
      let text = decodeEntities(token.text);
      if (!open.includes("pre")) {
        // Source line breaks are spaces in HTML.
        text = text.replace(/[ \t\f]*[\r\n]+[ \t\f]*/g, " ");
        if (!out || out.endsWith("\n")) text = text.replace(/^[ \t\f]+/, "");
      }
      out += text;
    } else if (token.name === "br") {
      if (token.type === "start") out = out.replace(/[ \t]+$/, "") + "\n";
    } else if ((token.name === "ul" || token.name === "ol") && open.includes("li")) {
      breakLines(1);
    } else if (PARAGRAPHS.has(token.name)) {
      breakLines(2);
    } else if (LINES.has(token.name)) {
      breakLines(1);
    }
  });
  return out
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd();
}
