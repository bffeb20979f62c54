import { describe, expect, it } from "vitest";
import {
  CONTENT_TYPES,
  extract,
  htmlToText,
  renderContent,
  sanitizeHtml,
  type ContentType,
  type MentionTarget,
  type RenderOptions,
} from "../src/content/format";
import { plainTextToHtml } from "../src/content/text";

const HOST = "social.example";
const BASE = "https://social.example";

const alice: MentionTarget = { id: "A1", username: "alice", acct: "alice", url: "https://social.example/@alice" };
const bob: MentionTarget = {
  id: "B2",
  username: "bob",
  acct: "bob@remote.example",
  url: "https://remote.example/@bob",
};

const opts: RenderOptions = {
  base: BASE,
  localHost: HOST,
  mentions: new Map([
    ["alice", alice],
    ["bob@remote.example", bob],
  ]),
};

const ALICE = `<span class="h-card"><a class="u-url mention" data-user="A1" href="https://social.example/@alice" rel="ugc">@<span>alice</span></a></span>`;
const BOB = `<span class="h-card"><a class="u-url mention" data-user="B2" href="https://remote.example/@bob" rel="ugc">@<span>bob@remote.example</span></a></span>`;
const tag = (name: string, written = name) =>
  `<a class="hashtag" data-tag="${name}" href="https://social.example/tag/${name}" rel="tag ugc">#${written}</a>`;
const link = (url: string) => `<a href="${url}" rel="ugc nofollow noopener noreferrer" target="_blank">${url}</a>`;

const plain = (text: string) => renderContent(text, "text/plain", opts);
const md = (text: string) => renderContent(text, "text/markdown", opts);
const html = (text: string) => renderContent(text, "text/html", opts);

/** No element or attribute in `out` can run script. */
function expectInert(out: string) {
  expect(out).not.toMatch(
    /<(script|img|svg|iframe|object|embed|style|math|form|input|textarea|button|template|title)\b/i,
  );
  expect(out).not.toMatch(/<[^>]*\son\w+\s*=/i);
  expect(out).not.toMatch(/<[^>]*\s(style|src|srcdoc|id|formaction)\s*=/i);
  expect(out).not.toMatch(/href="(?!https?:|mailto:)/i);
  for (const tagMatch of out.matchAll(/<\/?([a-z0-9]+)/gi)) {
    expect([
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
    ]).toContain(tagMatch[1].toLowerCase());
  }
}

describe("content types", () => {
  it("lists the three accepted source formats", () => {
    expect(CONTENT_TYPES).toEqual(["text/plain", "text/markdown", "text/html"]);
  });
});

describe("extract", () => {
  it("finds mentions, hashtags, emoji and links in plain text", async () => {
    const found = await extract(
      "Hi @Alice and @bob@Remote.Example, also @alice@social.example and @carol! #Cats #cats #café :blob: :blob_cat: https://news.example/a?b=1. See https://x.org/#anchor",
      "text/plain",
      HOST,
    );
    expect(found.mentions).toEqual(["alice", "bob@remote.example", "carol"]);
    expect(found.tags).toEqual(["cats", "café"]);
    expect(found.emojis).toEqual(["blob", "blob_cat"]);
    expect(found.links).toEqual(["https://news.example/a?b=1", "https://x.org/#anchor"]);
  });

  it("does not take e-mail addresses, paths, numbers or times for mentions, tags or emoji", async () => {
    const found = await extract(
      "mail a@b.com or me@social.example, see https://remote.example/@bob and example.org/@eve; #123 #1st; at 12:30:45; x#y",
      "text/plain",
      HOST,
    );
    expect(found.mentions).toEqual([]);
    expect(found.tags).toEqual(["1st"]);
    expect(found.emojis).toEqual([]);
    expect(found.links).toEqual(["https://remote.example/@bob"]);
  });

  it("handles hosts with ports, dotted remote usernames and a local host with a port", async () => {
    expect((await extract("@al.ice@remote.example:8443 @bob-x@other.example.", "text/plain", HOST)).mentions).toEqual([
      "al.ice@remote.example:8443",
      "bob-x@other.example",
    ]);
    expect(
      (await extract("@Alice@localhost:8787 @bob@localhost:8787", "text/plain", "localhost:8787")).mentions,
    ).toEqual(["alice", "bob"]);
    expect((await extract("@alice@localhost", "text/plain", "localhost")).mentions).toEqual(["alice"]);
    // A bare word after a second @ is no server.
    expect((await extract("@alice@home", "text/plain", HOST)).mentions).toEqual([]);
  });

  it("finds adjacent custom emoji", async () => {
    expect((await extract(":blob::cat: and :Party_Parrot:", "text/plain", HOST)).emojis).toEqual([
      "blob",
      "cat",
      "Party_Parrot",
    ]);
  });

  it("reads Markdown: links count, code does not", async () => {
    const found = await extract(
      "**Hi** @alice #Tag [site](https://site.example/page) `@bob@remote.example #code https://code.example`\n\n```\n#block @carol\n```\n\nhttps://bare.example :wave:",
      "text/markdown",
      HOST,
    );
    expect(found.mentions).toEqual(["alice"]);
    expect(found.tags).toEqual(["tag"]);
    expect(found.emojis).toEqual(["wave"]);
    expect(found.links).toEqual(["https://site.example/page", "https://bare.example"]);
  });

  it("reads HTML: skips mention and hashtag links, code and scripts", async () => {
    const found = await extract(
      `<p>${BOB} ${tag("cats")} <a href="https://link.example/x?a=1&amp;b=2">a link</a> <a href="javascript:alert(1)">no</a> ` +
        `@alice #Dogs <code>@carol #code</code> https://bare.example</p><script>@dave #script https://script.example</script>` +
        `<a class="hashtag" href="https://remote.example/tags/x">#x</a> <a rel="tag" href="https://remote.example/tags/y">#y</a> &#64;erin`,
      "text/html",
      HOST,
    );
    expect(found.mentions).toEqual(["alice", "erin"]);
    expect(found.tags).toEqual(["dogs"]);
    expect(found.links).toEqual(["https://link.example/x?a=1&b=2", "https://bare.example"]);
  });

  it("finds the same things in the same text whatever the content type", async () => {
    const text = "Hello @alice, #Tag https://a.example :e:";
    const expected = { mentions: ["alice"], tags: ["tag"], emojis: ["e"], links: ["https://a.example"] };
    for (const type of CONTENT_TYPES) expect(await extract(text, type as ContentType, HOST)).toEqual(expected);
  });
});

describe("plain text rendering", () => {
  it("escapes, links URLs and keeps line breaks without a paragraph", async () => {
    expect(await plain(`a < b & "c" 'd'\nnext\r\nline https://x.org/a?b=1&c=2.`)).toBe(
      `a &lt; b &amp; &quot;c&quot; &#39;d&#39;<br/>next<br/>line ${link("https://x.org/a?b=1&amp;c=2")}.`,
    );
  });

  it("matches plainTextToHtml when there is nothing to mention or tag", async () => {
    const text = "one <two>\n\nthree https://x.org/y, (https://z.org/) end";
    expect(await plain(text)).toBe(plainTextToHtml(text));
  });

  it("renders resolved mentions as h-cards and leaves unresolved ones as text", async () => {
    expect(await plain("hi @Alice and @bob@remote.example and @carol and @dave@nowhere.example")).toBe(
      `hi ${ALICE} and ${BOB} and @carol and @dave@nowhere.example`,
    );
    expect(await plain("@alice@social.example!")).toBe(`${ALICE}!`);
  });

  it("links hashtags, keeping the written case and unicode, but not inside URLs", async () => {
    expect(await plain("#Cats and #café, not #123 or https://x.org/#anchor")).toBe(
      `${tag("cats", "Cats")} and ${tag("café")}, not #123 or ${link("https://x.org/#anchor")}`,
    );
    expect(await plain("日本語 #日本語")).toBe(`日本語 ${tag("日本語")}`);
  });

  it("does not link e-mail addresses as mentions", async () => {
    expect(await plain("write alice@social.example")).toBe("write alice@social.example");
  });

  it("escapes markup so nothing runs", async () => {
    const out = await plain(`<script>alert(1)</script><img src=x onerror=alert(1)> " onmouseover="x`);
    expect(out).toBe(
      "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; &quot; onmouseover=&quot;x",
    );
  });

  it("uses a base with a trailing slash correctly", async () => {
    expect(await renderContent("#x", "text/plain", { ...opts, base: "https://social.example/" })).toBe(tag("x"));
  });
});

describe("markdown rendering", () => {
  it("renders emphasis and paragraphs, linking mentions, tags and URLs", async () => {
    expect(await md("**bold** _em_ @alice #Tag https://x.org\n\nsecond line\nwith a break")).toBe(
      `<p><strong>bold</strong> <em>em</em> ${ALICE} ${tag("tag", "Tag")} ${link("https://x.org")}</p><p>second line<br/>with a break</p>`,
    );
  });

  it("renders lists, quotes, headings and links", async () => {
    expect(
      await md(
        '- one\n- two @bob@remote.example\n\n1. first\n\n> quoted\n\n## Heading\n\n[site](https://site.example "t")',
      ),
    ).toBe(
      `<ul><li>one</li><li>two ${BOB}</li></ul><ol><li>first</li></ol><blockquote><p>quoted</p></blockquote><h2>Heading</h2>` +
        `<p><a href="https://site.example" rel="nofollow noopener noreferrer">site</a></p>`,
    );
  });

  it("does not link inside code spans, code blocks or existing links", async () => {
    expect(await md("`@alice #tag https://x.org` [#tag @alice](https://y.org)\n\n```\n@alice #tag <b>\n```")).toBe(
      `<p><code>@alice #tag https://x.org</code> <a href="https://y.org" rel="nofollow noopener noreferrer">#tag @alice</a></p>` +
        `<pre><code>@alice #tag &lt;b&gt;\n</code></pre>`,
    );
  });

  it("sanitises raw HTML in the Markdown source", async () => {
    const out = await md(
      `Hi <b onclick="x()">there</b> <u>u</u>\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))\n\n<a href="javascript:alert(1)">y</a>`,
    );
    expectInert(out);
    expect(out).toContain("<b>there</b> <u>u</u>");
    expect(out).not.toContain("alert(1)</");
    expect(out).not.toContain("javascript");
  });

  it("keeps escaped characters escaped", async () => {
    expect(await md("a < b & c > d \\<i>")).toBe("<p>a &lt; b &amp; c &gt; d &lt;i&gt;</p>");
  });

  it("turns inline images into links named by their alt text, and keeps table text", async () => {
    expect(await md("![a *cat*](https://img.example/cat.png) ![](javascript:alert(1))")).toBe(
      `<p><a href="https://img.example/cat.png" rel="nofollow noopener noreferrer">a cat</a> <a rel="nofollow noopener noreferrer">javascript:alert(1)</a></p>`,
    );
    expect(await md("| a | b |\n|---|---|\n| 1 | 2 |")).toBe("a\nb\n1\n2");
    expect((await extract("![x](https://img.example/x.png)", "text/markdown", HOST)).links).toEqual([
      "https://img.example/x.png",
    ]);
  });

  it("does not turn mentions into mailto links", async () => {
    expect(await md("@bob@remote.example and me@mail.example")).toBe(`<p>${BOB} and me@mail.example</p>`);
  });
});

describe("html rendering and sanitising", () => {
  it("keeps allowed markup and links text nodes only", async () => {
    expect(
      await html(
        `<p>Hi @alice <em>#tag</em> https://x.org</p><p><a href="https://y.org">@alice #tag</a></p><pre>#no @alice</pre>`,
      ),
    ).toBe(
      `<p>Hi ${ALICE} <em>${tag("tag")}</em> ${link("https://x.org")}</p>` +
        `<p><a href="https://y.org" rel="nofollow noopener noreferrer">@alice #tag</a></p><pre>#no @alice</pre>`,
    );
  });

  it("keeps remote mention and hashtag links with their classes", async () => {
    expect(
      await sanitizeHtml(
        `<p><span class="h-card evil"><a href="https://remote.example/@bob" class="u-url mention big" data-user="B2" rel="ugc" style="color:red" id="x" target="_blank">@<span>bob</span></a></span> ` +
          `<a href="https://remote.example/tags/cats" class="mention hashtag" rel="tag noopener" data-tag="cats">#<span>Cats</span></a></p>`,
      ),
    ).toBe(
      `<p><span class="h-card"><a class="u-url mention" data-user="B2" href="https://remote.example/@bob" rel="ugc nofollow noopener noreferrer">@<span>bob</span></a></span> ` +
        `<a class="mention hashtag" data-tag="cats" href="https://remote.example/tags/cats" rel="tag nofollow noopener noreferrer">#<span>Cats</span></a></p>`,
    );
  });

  it("drops dangerous elements with their content and unknown elements but not their text", async () => {
    expect(
      await sanitizeHtml(
        `<div class="x"><p>a<!-- secret --><font color=red>b</font></p><script>alert(1)</script><style>p{}</style>` +
          `<iframe src="https://evil.example">frame</iframe><form><input value=x><button>go</button></form><table><tr><td>cell</td></tr></table></div>`,
      ),
    ).toBe("<p>ab</p>cell");
  });

  it("allows only http, https and mailto hrefs", async () => {
    expect(
      await sanitizeHtml(
        `<a href="mailto:a@b.example">m</a><a href="/relative">r</a><a href="ftp://x">f</a><a href=" https://ok.example ">o</a>`,
      ),
    ).toBe(
      `<a href="mailto:a@b.example" rel="nofollow noopener noreferrer">m</a><a rel="nofollow noopener noreferrer">r</a>` +
        `<a rel="nofollow noopener noreferrer">f</a><a href="https://ok.example" rel="nofollow noopener noreferrer">o</a>`,
    );
  });

  const payloads = [
    `<img src=x onerror=alert(1)>`,
    `<a href="javascript:alert(1)">x</a>`,
    `<a href="JaVaScRiPt:alert(1)">x</a>`,
    `<a href=" javascript:alert(1)">x</a>`,
    `<a href="java\tscript:alert(1)">x</a>`,
    `<a href="java&#x09;script:alert(1)">x</a>`,
    `<a href="&#106;avascript:alert(1)">x</a>`,
    `<a href="&#106avascript:alert(1)">x</a>`,
    `<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1)">x</a>`,
    `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`,
    `<a href="vbscript:msgbox(1)">x</a>`,
    `<svg><script>alert(1)</script></svg>`,
    `<svg onload=alert(1)>`,
    `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
    `<scr<script>ipt>alert(1)</script>`,
    `<<script>script>alert(1)<</script>/script>`,
    `<a href="https://ok.example" onclick="alert(1)">x</a>`,
    `<a href="https://ok.example"" onmouseover="alert(1)">x</a>`,
    `<a href='https://ok.example/"onmouseover="alert(1)'>x</a>`,
    `<p title="</p><img src=x onerror=alert(1)>">x</p>`,
    `<p style="background:url(javascript:alert(1))">x</p>`,
    `<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
    `<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)">`,
    `<textarea></textarea><img src=x onerror=alert(1)></textarea>`,
    `<title><img src=x onerror=alert(1)></title>`,
    `<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>`,
    `<template><img src=x onerror=alert(1)></template>`,
    `<!--<img src=x onerror=alert(1)>-->`,
    `<!--><img src=x onerror=alert(1)>-->`,
    `&lt;img src=x onerror=alert(1)&gt;`,
    `<xmp><img src=x onerror=alert(1)></xmp>`,
    `<body onload=alert(1)>`,
    `<details open ontoggle=alert(1)>`,
    `<form action="javascript:alert(1)"><button formaction="javascript:alert(1)">x</button></form>`,
    `<select><option><img src=x onerror=alert(1)></option></select>`,
    `<a href="https://ok.example">x</a><a href="javascript:alert(1)" class="mention">y</a>`,
    `<span class="h-card" onmouseover="alert(1)">x</span>`,
    `<plaintext><img src=x onerror=alert(1)>`,
    `</p><img src=x onerror=alert(1)><p>`,
    `<img src="x` + "`" + `onerror=alert(1)">`,
  ];

  it.each(payloads)("neutralises %s", async (payload) => {
    for (const out of [await sanitizeHtml(payload), await html(payload), await md(payload)]) {
      expectInert(out);
      expect(out).not.toMatch(/javascript:|vbscript:|data:/i);
    }
  });

  it("is idempotent on its own output", async () => {
    for (const payload of payloads) {
      const once = await sanitizeHtml(payload);
      expect(await sanitizeHtml(once)).toBe(once);
    }
  });

  // Payloads aimed at the mention set (who a direct post is addressed to) rather than at script execution.
  const mentionPayloads: [string, string[]][] = [
    [`<p>@alice <a href="https://x.example">@bob</a> <code>@carol</code> <pre>@dave</pre></p>`, ["alice"]],
    [
      `<script>@erin</script><style>@frank{}</style><textarea>@gus</textarea><title>@hal</title><noscript>@ivy</noscript>@jo`,
      ["jo"],
    ],
    [`<!-- @kim --><!--> @lee --> <xmp>@mo</xmp><template>@ned</template><svg><text>@ole</text></svg>`, ["lee"]],
    [`&#64;pam &commat;quinn &#x40;rob @s&#97;m`, ["pam", "quinn", "rob", "sam"]],
    [`<p title="@tom">x</p><a href="https://y.example" title="@una">u</a><img alt="@vic">`, []],
    [`<plaintext>@wes`, []],
    [`<b>@xa</b><i>vi</i> <span>@yo</span>@zed@social.example`, ["xa", "yo", "zed"]],
    [`<a href="https://x.example">@in<a href="https://y.example">@also</a>@after</a>`, ["after"]],
  ];

  it("extracts mentions the way it renders: the same set from the source, its sanitised form and that again", async () => {
    const mentions = async (html: string) => (await extract(html, "text/html", HOST)).mentions;
    for (const payload of [...payloads, ...mentionPayloads.map(([p]) => p)]) {
      const once = await sanitizeHtml(payload);
      const twice = await sanitizeHtml(once);
      expect(twice, payload).toBe(once);
      const found = await mentions(payload);
      expect(await mentions(once), payload).toEqual(found);
      expect(await mentions(twice), payload).toEqual(found);
    }
    for (const [payload, expected] of mentionPayloads) expect(await mentions(payload), payload).toEqual(expected);
  });

  it("keeps the text of an escaped payload as text", async () => {
    expect(await sanitizeHtml(`&lt;img src=x onerror=alert(1)&gt;`)).toBe("&lt;img src=x onerror=alert(1)&gt;");
    expect(await sanitizeHtml(`<scr<script>ipt>alert(1)</script>`)).toBe("ipt&gt;alert(1)");
    expect(await sanitizeHtml(`a < b > c &amp; d &copy; &#x263A; &bogus;`)).toBe(
      "a &lt; b &gt; c &amp; d © ☺ &amp;bogus;",
    );
  });

  it("closes what is left open and ignores stray end tags", async () => {
    expect(
      await sanitizeHtml(
        `<p>one<p>two</b></p></p><ul><li>a<li>b</ul><b><i>x</b>y</i><a href="https://a.example">1<a href="https://b.example">2`,
      ),
    ).toBe(
      `<p>one</p><p>two</p><ul><li>a</li><li>b</li></ul><b><i>x</i></b>y` +
        `<a href="https://a.example" rel="nofollow noopener noreferrer">1</a><a href="https://b.example" rel="nofollow noopener noreferrer">2</a>`,
    );
  });

  it("normalises line breaks and rules to self-closing tags", async () => {
    expect(await sanitizeHtml(`a<br>b<br class="x"/>c<hr id=y>`)).toBe("a<br/>b<br/>c<hr/>");
  });
});

describe("htmlToText", () => {
  it("turns line breaks and paragraphs into newlines", () => {
    expect(htmlToText("<p>one<br>two<br/>three</p><p>four</p>")).toBe("one\ntwo\nthree\n\nfour");
    expect(htmlToText("a<br/>b")).toBe("a\nb");
  });

  it("separates lists, quotes and headings", () => {
    expect(htmlToText("<h1>Title</h1><ul><li>a</li><li>b</li></ul><blockquote><p>q</p></blockquote><p>end</p>")).toBe(
      "Title\n\na\nb\n\nq\n\nend",
    );
  });

  it("decodes entities", () => {
    expect(htmlToText("&amp; &lt;b&gt; &quot;q&quot; &#39;s&#39; &#65;&#x42; a&nbsp;b &hellip;")).toBe(
      `& <b> "q" 's' AB a\u00a0b …`,
    );
  });

  it("strips tags and ignores source whitespace between blocks", () => {
    expect(
      htmlToText(`<p>\n  Hi ${ALICE} ${tag("cats", "Cats")}\n</p>\n\n<p>second</p>\n<script>x()</script><!-- c -->`),
    ).toBe("Hi @alice #Cats\n\nsecond");
  });

  it("treats <!--> as an empty comment, as browsers do", () => {
    expect(htmlToText("a<!-->b<!--->c<!-- x -->d")).toBe("abcd");
  });

  it("collapses runs of blank lines and trims the end", () => {
    expect(htmlToText("a<br><br><br><br>b<br><br>")).toBe("a\n\nb");
  });

  it("round-trips plain text rendering", async () => {
    const text = "Hi @alice, see https://x.org?a=1&b=2\n#Cats <3";
    expect(htmlToText(await plain(text))).toBe(text);
  });

  it("reads rendered Markdown back", async () => {
    expect(htmlToText(await md("Hello **world**\n\n- a\n- b\n\n`x < y`"))).toBe("Hello world\n\na\nb\n\nx < y");
  });
});
