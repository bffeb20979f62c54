import { describe, expect, it } from "vitest";
import { fetchCard } from "../src/content/cards";
import { isFetchableUrl } from "../src/lib/outbound";
import { decodeEntities } from "../src/content/entities";

const HTML = { "content-type": "text/html; charset=utf-8" };

type Route = (req: Request) => Response | Promise<Response>;

/** A fake fetcher that serves fixed routes and records every URL it was asked for. */
function fakeFetcher(routes: Record<string, Route>) {
  const calls: Request[] = [];
  const fetcher = async (req: Request): Promise<Response> => {
    calls.push(req);
    const route = routes[req.url];
    if (!route) throw new Error(`unexpected fetch of ${req.url}`);
    return route(req);
  };
  return { fetcher, calls, urls: () => calls.map((r) => r.url) };
}

const html =
  (body: string, headers: Record<string, string> = HTML, status = 200) =>
  () =>
    new Response(body, { status, headers });
const redirect =
  (location: string, status = 302) =>
  () =>
    new Response(null, { status, headers: { location } });

const OG_PAGE = `<!doctype html>
<html><head>
  <meta charset="utf-8">
  <title>Fallback title</title>
  <meta property="og:title" content="  The  &quot;Great&quot; Article &amp; more ">
  <meta property="og:description" content="A long
     description">
  <meta property="og:image" content="https://cdn.example.org/img/cover.jpg">
  <meta property="og:image:width" content="1200">
  <meta property="og:image:height" content="630">
  <meta property="og:url" content="https://www.example.org/articles/great?utm=x">
  <meta property="og:site_name" content="Example News">
  <meta property="og:type" content="article">
  <meta property="article:author" content="Ada Lovelace">
  <meta name="twitter:title" content="Twitter title">
  <meta name="description" content="Plain description">
</head><body><h1>Hi</h1><meta property="og:title" content="Body meta is ignored"></body></html>`;

describe("fetchCard", () => {
  it("reads a full Open Graph page", async () => {
    const f = fakeFetcher({ "https://example.org/articles/great": html(OG_PAGE) });
    const card = await fetchCard("https://example.org/articles/great", { fetcher: f.fetcher });
    expect(card).toEqual({
      url: "https://www.example.org/articles/great?utm=x",
      title: 'The "Great" Article & more',
      description: "A long description",
      image: "https://cdn.example.org/img/cover.jpg",
      type: "link",
      provider_name: "Example News",
      provider_url: "https://example.org",
      author_name: "Ada Lovelace",
      html: "",
      width: 1200,
      height: 630,
      opengraph: {
        title: 'The  "Great" Article & more',
        description: "A long\n     description",
        image: "https://cdn.example.org/img/cover.jpg",
        "image:width": "1200",
        "image:height": "630",
        url: "https://www.example.org/articles/great?utm=x",
        site_name: "Example News",
        type: "article",
      },
    });
    expect(f.calls).toHaveLength(1);
    const req = f.calls[0];
    expect(req.method).toBe("GET");
    expect(req.redirect).toBe("manual");
    expect(req.headers.get("accept")).toBe("text/html,application/xhtml+xml");
    expect(req.headers.get("user-agent")).toBe("Starling (link preview)");
  });

  it("falls back to <title>, meta description and meta author, with the host as provider", async () => {
    const page = `<html><head><title>
      Caf&eacute; &amp; Bar &#8212; &#x263A; &copy 2024</title>
      <meta name="description" content="Tea &amp; cakes">
      <meta name="author" content="Grace">
      </head><body><svg><title>not this</title></svg></body></html>`;
    const f = fakeFetcher({ "http://blog.example.net:8080/post/1": html(page) });
    const card = await fetchCard("http://blog.example.net:8080/post/1", { fetcher: f.fetcher });
    expect(card).toMatchObject({
      url: "http://blog.example.net:8080/post/1",
      title: "Café & Bar — ☺ © 2024",
      description: "Tea & cakes",
      image: null,
      type: "link",
      provider_name: "blog.example.net",
      provider_url: "http://blog.example.net:8080",
      author_name: "Grace",
      html: "",
      width: 0,
      height: 0,
      opengraph: {},
    });
  });

  it("prefers twitter:* over plain HTML when Open Graph is missing", async () => {
    const page = `<head><title>Plain</title><meta name="twitter:title" content="Tweety"><meta name="twitter:description" content="Chirp">
      <meta name="twitter:image" content="/t.png"><meta name="description" content="plain"></head>`;
    const f = fakeFetcher({ "https://example.org/": html(page) });
    const card = await fetchCard("https://example.org/", { fetcher: f.fetcher });
    expect(card).toMatchObject({ title: "Tweety", description: "Chirp", image: "https://example.org/t.png" });
  });

  it("resolves a relative og:image against the final page URL and refuses non-http images", async () => {
    const page = `<head><meta property="og:title" content="T"><meta property="og:image" content="../img/a%20b.png?x=1&amp;y=2"></head>`;
    const f = fakeFetcher({
      "https://example.org/start": redirect("/blog/posts/one"),
      "https://example.org/blog/posts/one": html(page),
    });
    const card = await fetchCard("https://example.org/start", { fetcher: f.fetcher });
    expect(card?.image).toBe("https://example.org/blog/img/a%20b.png?x=1&y=2");
    expect(card?.url).toBe("https://example.org/blog/posts/one");

    const bad = `<head><meta property="og:title" content="T"><meta property="og:image" content="javascript:alert(1)"><meta property="og:image:width" content="9"></head>`;
    const g = fakeFetcher({ "https://example.org/": html(bad) });
    const card2 = await fetchCard("https://example.org/", { fetcher: g.fetcher });
    expect(card2).toMatchObject({ image: null, width: 0 });
  });

  it("maps og:type to video/photo and ignores a non-numeric image size", async () => {
    const page = `<head><meta property="og:title" content="Clip"><meta property="og:type" content="video.movie">
      <meta property="og:image" content="https://example.org/p.jpg"><meta property="og:image:width" content="wide"></head>`;
    const f = fakeFetcher({ "https://example.org/v": html(page) });
    expect(await fetchCard("https://example.org/v", { fetcher: f.fetcher })).toMatchObject({
      type: "video",
      width: 0,
      height: 0,
    });
    const g = fakeFetcher({
      "https://example.org/p": html(
        `<head><meta property="og:title" content="Pic"><meta property="og:type" content="photo"></head>`,
      ),
    });
    expect((await fetchCard("https://example.org/p", { fetcher: g.fetcher }))?.type).toBe("photo");
  });

  it("ignores an og:url that points at another site or a private address", async () => {
    for (const ogUrl of ["https://evil.example.com/", "http://127.0.0.1/", "javascript:alert(1)"]) {
      const page = `<head><meta property="og:title" content="T"><meta property="og:url" content="${ogUrl}"></head>`;
      const f = fakeFetcher({ "https://example.org/a": html(page) });
      expect((await fetchCard("https://example.org/a", { fetcher: f.fetcher }))?.url).toBe("https://example.org/a");
    }
    const rel = fakeFetcher({
      "https://example.org/a": html(
        `<head><meta property="og:title" content="T"><meta property="og:url" content="/canonical"></head>`,
      ),
    });
    expect((await fetchCard("https://example.org/a", { fetcher: rel.fetcher }))?.url).toBe(
      "https://example.org/canonical",
    );
  });

  it("truncates the title to 300 and the description to 1000 characters", async () => {
    const page = `<head><meta property="og:title" content="${"t".repeat(500)}"><meta property="og:description" content="${"d".repeat(1500)}"></head>`;
    const f = fakeFetcher({ "https://example.org/": html(page) });
    const card = await fetchCard("https://example.org/", { fetcher: f.fetcher });
    expect(card?.title).toHaveLength(300);
    expect(card?.description).toHaveLength(1000);
  });

  it("accepts application/xhtml+xml", async () => {
    const f = fakeFetcher({
      "https://example.org/x": html("<html><head><title>X</title></head></html>", {
        "content-type": "application/xhtml+xml",
      }),
    });
    expect((await fetchCard("https://example.org/x", { fetcher: f.fetcher }))?.title).toBe("X");
  });

  it("parses pages in a legacy charset and survives an unknown one", async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode("<title>Caf"),
      0xe9,
      ...new TextEncoder().encode("</title>"),
    ]);
    const f = fakeFetcher({
      "https://example.org/": () =>
        new Response(bytes, { headers: { "content-type": "text/html; charset=ISO-8859-1" } }),
    });
    expect((await fetchCard("https://example.org/", { fetcher: f.fetcher }))?.title).toBe("Café");
    const g = fakeFetcher({
      "https://example.org/": html("<title>Hello</title>", { "content-type": "text/html; charset=made-up" }),
    });
    expect((await fetchCard("https://example.org/", { fetcher: g.fetcher }))?.title).toBe("Hello");
  });

  it("returns null for a non-HTML content type", async () => {
    for (const type of ["application/json", "image/png", "text/plain; charset=utf-8", ""]) {
      const f = fakeFetcher({
        "https://example.org/data": html("<title>Looks like HTML</title>", type ? { "content-type": type } : {}),
      });
      expect(await fetchCard("https://example.org/data", { fetcher: f.fetcher })).toBeNull();
    }
  });

  it("returns null for 404 and 500 responses", async () => {
    for (const status of [404, 500]) {
      const f = fakeFetcher({ "https://example.org/missing": html("<title>Not Found</title>", HTML, status) });
      expect(await fetchCard("https://example.org/missing", { fetcher: f.fetcher })).toBeNull();
    }
  });

  it("returns null for a page without any title", async () => {
    const f = fakeFetcher({
      "https://example.org/": html(`<head><meta name="description" content="d"><title>   </title></head>`),
    });
    expect(await fetchCard("https://example.org/", { fetcher: f.fetcher })).toBeNull();
  });

  it("returns null without fetching when the URL itself is not fetchable", async () => {
    const f = fakeFetcher({});
    for (const url of ["http://localhost/", "http://10.0.0.1/", "ftp://example.org/", "not a url"]) {
      expect(await fetchCard(url, { fetcher: f.fetcher })).toBeNull();
    }
    expect(f.calls).toHaveLength(0);
  });

  it("follows redirects by hand and refuses one to a private address without fetching it", async () => {
    const f = fakeFetcher({
      "https://example.org/go": redirect("https://short.example.net/x", 301),
      "https://short.example.net/x": redirect("http://169.254.169.254/latest/meta-data/", 307),
      "http://169.254.169.254/latest/meta-data/": html("<title>secrets</title>"),
    });
    expect(await fetchCard("https://example.org/go", { fetcher: f.fetcher })).toBeNull();
    expect(f.urls()).toEqual(["https://example.org/go", "https://short.example.net/x"]);

    for (const location of [
      "http://localhost:8080/",
      "http://[::1]/",
      "http://2130706433/",
      "file:///etc/passwd",
      "http://user:pw@example.org/",
    ]) {
      const g = fakeFetcher({ "https://example.org/go": redirect(location) });
      expect(await fetchCard("https://example.org/go", { fetcher: g.fetcher })).toBeNull();
      expect(g.urls()).toEqual(["https://example.org/go"]);
    }
  });

  it("follows up to three redirects and gives up on the fourth", async () => {
    const routes: Record<string, Route> = {
      "https://example.org/0": redirect("/1"),
      "https://example.org/1": redirect("/2", 303),
      "https://example.org/2": redirect("/3", 308),
      "https://example.org/3": html("<title>Arrived</title>"),
    };
    const ok = fakeFetcher(routes);
    expect((await fetchCard("https://example.org/0", { fetcher: ok.fetcher }))?.title).toBe("Arrived");
    expect(ok.calls).toHaveLength(4);

    const tooMany = fakeFetcher({
      ...routes,
      "https://example.org/3": redirect("/4"),
      "https://example.org/4": html("<title>Too far</title>"),
    });
    expect(await fetchCard("https://example.org/0", { fetcher: tooMany.fetcher })).toBeNull();
    expect(tooMany.urls()).toEqual([
      "https://example.org/0",
      "https://example.org/1",
      "https://example.org/2",
      "https://example.org/3",
    ]);

    const loop = fakeFetcher({ "https://example.org/loop": redirect("/loop") });
    expect(await fetchCard("https://example.org/loop", { fetcher: loop.fetcher })).toBeNull();
    expect(loop.calls).toHaveLength(4);

    const noLocation = fakeFetcher({ "https://example.org/": () => new Response(null, { status: 302 }) });
    expect(await fetchCard("https://example.org/", { fetcher: noLocation.fetcher })).toBeNull();
  });

  it("returns null quickly when the fetcher is slower than timeoutMs, even if it ignores the signal", async () => {
    const never = async () => new Promise<Response>(() => {});
    let start = Date.now();
    expect(await fetchCard("https://example.org/slow", { fetcher: never, timeoutMs: 50 })).toBeNull();
    expect(Date.now() - start).toBeGreaterThanOrEqual(45); // the timer, not an early failure, ended it
    expect(Date.now() - start).toBeLessThan(1000);

    let aborted = false;
    const honours = (req: Request) =>
      new Promise<Response>((_, reject) => {
        req.signal.addEventListener("abort", () => {
          aborted = true;
          reject(new Error("aborted"));
        });
      });
    start = Date.now();
    expect(await fetchCard("https://example.org/slow", { fetcher: honours, timeoutMs: 50 })).toBeNull();
    expect(Date.now() - start).toBeLessThan(1000);
    expect(aborted).toBe(true);
  });

  it("returns null when the body stalls past the deadline", async () => {
    const stalled = async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("<html><head><title>Partial"));
        },
        pull() {
          return new Promise(() => {});
        },
      });
      return new Response(body, { headers: HTML });
    };
    const start = Date.now();
    expect(await fetchCard("https://example.org/stall", { fetcher: stalled, timeoutMs: 50 })).toBeNull();
    expect(Date.now() - start).toBeLessThan(1000);
  });

  it("returns null rather than throwing when the fetcher throws", async () => {
    const broken = async (): Promise<Response> => {
      throw new TypeError("network down");
    };
    await expect(fetchCard("https://example.org/", { fetcher: broken })).resolves.toBeNull();
  });

  it("parses the head of a body larger than maxBytes and stops reading", async () => {
    const head = `<html><head><title>Big page</title><meta property="og:description" content="head only"></head><body>`;
    const filler = new TextEncoder().encode("<p>" + "x".repeat(16 * 1024 - 7) + "</p>");
    let chunksPulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(head));
      },
      pull(controller) {
        chunksPulled++;
        controller.enqueue(filler);
      },
    });
    const f = fakeFetcher({ "https://example.org/big": () => new Response(endless, { headers: HTML }) });
    const card = await fetchCard("https://example.org/big", { fetcher: f.fetcher, maxBytes: 64 * 1024 });
    expect(card).toMatchObject({ title: "Big page", description: "head only" });
    expect(chunksPulled).toBeLessThan(10);

    // No <body> tag to stop at: the byte limit alone ends the read, and a head cut mid-way still parses.
    let pulled = 0;
    const headless = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          new TextEncoder().encode(`<title>Cut</title><meta name="description" content="${"y".repeat(5000)}`),
        );
      },
      pull(controller) {
        pulled++;
        controller.enqueue(filler);
      },
    });
    const g = fakeFetcher({ "https://example.org/cut": () => new Response(headless, { headers: HTML }) });
    const cut = await fetchCard("https://example.org/cut", { fetcher: g.fetcher, maxBytes: 100 });
    expect(cut).toMatchObject({ title: "Cut", description: "" });
    expect(pulled).toBeLessThan(3);
  });

  it("does not see a title that starts beyond maxBytes", async () => {
    const page = `<html><head>${"<!-- padding -->".repeat(100)}<title>Too late</title></head></html>`;
    const f = fakeFetcher({ "https://example.org/": html(page) });
    expect(await fetchCard("https://example.org/", { fetcher: f.fetcher, maxBytes: 200 })).toBeNull();
    expect((await fetchCard("https://example.org/", { fetcher: f.fetcher }))?.title).toBe("Too late");
  });
});

describe("isFetchableUrl", () => {
  const accepted = [
    "https://example.org/",
    "http://example.org/path?q=1#frag",
    "https://EXAMPLE.org./",
    "https://sub.domain.example.co.uk:8443/x",
    "http://example.org:80/",
    "https://bücher.example/",
    "http://8.8.8.8/",
    "http://93.184.216.34:8080/",
    "http://172.32.0.1/",
    "http://100.128.0.1/",
    "http://192.169.0.1/",
    "http://134744072/", // 8.8.8.8 in decimal
    "http://[2606:4700:4700::1111]/",
    "http://[2001:4860:4860::8888]:8080/",
    "http://[::ffff:8.8.8.8]/",
    "http://[64:ff9b::808:808]/",
  ];
  const refused = [
    "ftp://example.org/",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "data:text/html,hi",
    "ws://example.org/",
    "not a url",
    "",
    "http://user@example.org/",
    "http://user:pass@example.org/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://localhost:8080/",
    "http://app.localhost/",
    "http://printer.local/",
    "http://db.internal/",
    "http://metadata.google.internal/",
    "http://nas.home.arpa/",
    "http://intranet/",
    "http://0.0.0.0/",
    "http://0.1.2.3/",
    "http://10.1.2.3/",
    "http://100.64.0.1/",
    "http://100.127.255.254/",
    "http://127.0.0.1/",
    "http://127.0.0.1:8080/",
    "http://127.8.9.10/",
    "http://169.254.169.254/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.0.0.8/",
    "http://192.0.2.1/",
    "http://192.168.1.1/",
    "http://198.18.0.1/",
    "http://198.19.255.255/",
    "http://198.51.100.7/",
    "http://203.0.113.9/",
    "http://224.0.0.1/",
    "http://239.255.255.250/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://2130706433/", // 127.0.0.1 in decimal
    "http://0x7f000001/", // 127.0.0.1 in hex
    "http://0x7f.1/", // 127.0.0.1, shorthand
    "http://0177.0.0.1/", // 127.0.0.1, octal
    "http://127.1/",
    "http://3232235777/", // 192.168.1.1
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::]/",
    "http://[fc00::1]/",
    "http://[fd12:3456:789a::1]/",
    "http://[fe80::1]/",
    "http://[febf::1]/",
    "http://[ff02::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:c0a8:101::1]/", // 6to4 around 192.168.1.1
    "http://[2001:db8::1]/",
    "http://[fe80::1%25eth0]/",
  ];

  it.each(accepted)("accepts %s", (url) => {
    expect(isFetchableUrl(url)).toBe(true);
  });

  it.each(refused)("refuses %s", (url) => {
    expect(isFetchableUrl(url)).toBe(false);
  });
});

describe("decodeEntities", () => {
  it("decodes named, numeric and legacy references", () => {
    expect(decodeEntities("&lt;b&gt; &amp;amp; &quot;&apos;&#39; &nbsp;&eacute;&Eacute;&yuml;&szlig;", false)).toBe(
      "<b> &amp; \"'' \u00a0éÉÿß",
    );
    expect(decodeEntities("&alpha;&Omega;&sigmaf;&hellip;&euro;&rang;", false)).toBe("αΩς…€⟩");
    expect(decodeEntities("&#x1F600; &#128512; &#0; &#x110000; &#150;", false)).toBe("😀 😀 \uFFFD \uFFFD –");
    expect(decodeEntities("&unknown; & &amp", false)).toBe("&unknown; & &");
    expect(decodeEntities("&notit; &copy2024", false)).toBe("¬it; ©2024");
  });

  it("leaves query-string-like references alone in attributes", () => {
    expect(decodeEntities("?a=1&copy=2&amp;b=3&notx", true)).toBe("?a=1&copy=2&b=3&notx");
    expect(decodeEntities("&copy 2024", true)).toBe("© 2024");
  });
});
