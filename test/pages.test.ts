import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { countingD1 } from "./d1-counter";
import { BASE, call, json, post, registerUser, remoteAccount, uniqueName, upload, type TestUser } from "./helpers";
import { newId } from "../src/db/ids";
import { wantsActivityJson } from "../src/http/negotiate";

const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
const AS = "application/activity+json";
const LD = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"';

/** GETs a page as a browser does; checks status and, for 200, that it is a cacheable script-free HTML page. */
async function page(path: string, opts: { status?: number; accept?: string; vars?: Record<string, unknown> } = {}) {
  const res = await call(path, { headers: { Accept: opts.accept ?? BROWSER }, vars: opts.vars as never });
  const text = await res.text();
  expect(res.status, `${path} -> ${text.slice(0, 300)}`).toBe(opts.status ?? 200);
  if (res.status === 200) {
    expect(res.headers.get("content-type")).toMatch(/^text\/html; charset=utf-8/i);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(res.headers.get("vary")).toMatch(/Accept/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("content-security-policy")).not.toContain("script");
    expect(text).not.toMatch(/<script/i);
    expect(text.startsWith("<!doctype html>")).toBe(true);
  }
  return { res, text };
}

/** The content of `<meta property|name="key" content="…">`. */
const meta = (text: string, key: string) =>
  new RegExp(`<meta (?:property|name)="${key.replace(/[:.]/g, "\\$&")}" content="([^"]*)">`).exec(text)?.[1];

const credentials = (u: TestUser, body: Record<string, unknown>) =>
  json("/api/v1/accounts/update_credentials", { method: "PATCH", token: u.token, body });

describe("content negotiation", () => {
  it("tells ActivityStreams requests from browsers", () => {
    expect(wantsActivityJson(BROWSER)).toBe(false);
    expect(wantsActivityJson(undefined)).toBe(false);
    expect(wantsActivityJson("*/*")).toBe(false);
    expect(wantsActivityJson("application/json")).toBe(false);
    expect(wantsActivityJson(AS)).toBe(true);
    expect(wantsActivityJson(LD)).toBe(true);
    expect(wantsActivityJson("application/activity+json, application/ld+json")).toBe(true);
    expect(wantsActivityJson("text/html;q=0.5, application/activity+json")).toBe(true);
    expect(wantsActivityJson("text/html, application/activity+json")).toBe(false);
    expect(wantsActivityJson("application/activity+json;q=0.4, text/html;q=0.9")).toBe(false);
    expect(wantsActivityJson("application/activity+json;q=0")).toBe(false);
  });

  it("answers 406 JSON, never HTML, to a request asking for ActivityStreams", async () => {
    const u = await registerUser();
    const s = await post(u, { status: "hello", visibility: "public" });
    // The actor (`/users/<nickname>`) and the status object (`/objects/<id>`) are answered by federation
    // (test/federation.test.ts, test/federation-notes.test.ts), never with HTML; the other pages have no
    // ActivityStreams form.
    for (const accept of [AS, LD]) {
      const actor = await call(`/users/${u.username}`, { headers: { Accept: accept } });
      expect(actor.status).toBe(200);
      expect(actor.headers.get("content-type")).toMatch(/^application\/(activity|ld)\+json/);
      expect(((await actor.json()) as { type: string }).type).toBe("Person");
    }
    // A status's page leads servers to its object (as Pleroma's /notice/:id), so a pasted link resolves.
    for (const accept of [AS, LD]) {
      const res = await call(`/notice/${s.id}`, { headers: { Accept: accept } });
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe(`http://localhost/objects/${s.id}`);
      expect(res.headers.get("vary")).toMatch(/Accept/);
    }
    for (const path of ["/", `/tag/birds`]) {
      for (const accept of [AS, LD]) {
        const res = await call(path, { headers: { Accept: accept } });
        expect(res.status, path).toBe(406);
        expect(res.headers.get("content-type")).toMatch(/^application\/json/);
        expect(res.headers.get("vary")).toMatch(/Accept/);
        expect(((await res.json()) as { error: string }).error).toMatch(/ActivityStreams/);
      }
    }
    // A browser that names ActivityStreams at a lower weight gets the page, from federation's side too.
    const browser = await call(`/objects/${s.id}`, {
      headers: { Accept: "text/html, application/activity+json;q=0.1" },
    });
    expect(browser.status).toBe(200);
    expect(browser.headers.get("content-type")).toMatch(/^text\/html/);
    // Without an Accept header (curl) or with a JSON API client's, the page is HTML.
    expect((await call(`/users/${u.username}`)).headers.get("content-type")).toMatch(/^text\/html/);
  });
});

describe("the instance page", () => {
  it("shows name, description, figures, registrations and how to sign in, escaped", async () => {
    const u = await registerUser();
    await post(u, { status: "counted", visibility: "public" });
    const { text } = await page("/");
    const stats = await json("/api/v1/instance");
    expect(text).toContain(`<h1>${stats.title}</h1>`);
    expect(text).toContain(`<strong>${stats.stats.user_count}</strong> users`);
    expect(text).toContain(`<strong>${stats.stats.status_count}</strong> posts`);
    expect(text).toContain("Registrations are <strong>open</strong>");
    expect(text).toMatch(/Use a Mastodon or Pleroma app and enter this server's address, <code>localhost<\/code>/);
    for (const app of ["Tusky", "Elk", "Phanpy", "Pleroma-FE"]) expect(text).toContain(`>${app}</a>`);
    expect(text).not.toContain("/oauth/authorize");
    expect(meta(text, "og:type")).toBe("website");
    expect(meta(text, "og:title")).toBe(stats.title);
    expect(meta(text, "og:url")).toBe(`${BASE}/`);
    expect(meta(text, "og:image")).toBe(`${BASE}/images/banner.png`);

    const closed = await page("/", {
      vars: {
        REGISTRATIONS_OPEN: "false",
        INSTANCE_NAME: "<script>alert(1)</script> & co",
        INSTANCE_DESCRIPTION: 'A "quoted" <b>place</b>',
      },
    });
    expect(closed.text).toContain("Registrations are <strong>by invitation only</strong>");
    expect(closed.text).toContain("<h1>&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</h1>");
    expect(closed.text).toContain("<p>A &quot;quoted&quot; &lt;b&gt;place&lt;/b&gt;</p>");
    expect(meta(closed.text, "og:description")).toBe("A &quot;quoted&quot; &lt;b&gt;place&lt;/b&gt;");
  });

  it("costs one D1 round trip", async () => {
    const counter = countingD1();
    await page("/", { vars: { DB: counter.db } });
    expect(counter.count()).toBe(1);
  });
});

describe("actor pages", () => {
  it("show name, avatar, bio, fields and public posts only, escaped, with OpenGraph and the actor link", async () => {
    const [u, member] = [await registerUser(), await registerUser()];
    await credentials(u, {
      display_name: "<script>alert('x')</script> Ann",
      note: "I <3 <script>bad()</script> birds",
      fields_attributes: { "0": { name: "<i>site</i>", value: "https://example.org" } },
      hide_followers_count: true,
    });
    const pub = await post(u, { status: "a public post", visibility: "public" });
    const reply = await post(member, { status: "hi" });
    await post(u, {
      status: `@${member.username} a public reply to someone`,
      visibility: "public",
      in_reply_to_id: reply.id,
    });
    await post(u, { status: "an unlisted post", visibility: "unlisted" });
    await post(u, { status: "a private post", visibility: "private" });
    await post(u, { status: `@${member.username} a direct post`, visibility: "direct" });
    await post(u, { status: "a local post", visibility: "local" });
    const list = await json("/api/v1/lists", { method: "POST", token: u.token, body: { title: "l" } });
    await json(`/api/v1/accounts/${member.id}/follow`, { method: "POST", token: u.token });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: u.token,
      body: { account_ids: [member.id] },
    });
    await post(u, { status: "a list post", visibility: `list:${list.id}` });
    await json(`/api/v1/statuses/${reply.id}/reblog`, { method: "POST", token: u.token });

    const { text } = await page(`/users/${u.username}`);
    expect(text).toContain("a public post");
    expect(text).toContain(`href="${BASE}/notice/${pub.id}"`);
    for (const hidden of [
      "public reply",
      "unlisted post",
      "private post",
      "direct post",
      "local post",
      "list post",
      ">hi<",
    ])
      expect(text).not.toContain(hidden);
    expect(text).not.toContain("<script>");
    expect(text).toContain("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; Ann");
    expect(text).toContain("I &lt;3 &lt;script&gt;bad()&lt;/script&gt; birds");
    expect(text).toContain("<dt>&lt;i&gt;site&lt;/i&gt;</dt>");
    expect(text).toContain('href="https://example.org"');
    expect(text).toContain(`@${u.username}@localhost`);
    // Hidden follower count: not shown; following count shown.
    expect(text).not.toContain("followers</li>");
    expect(text).toContain("<strong>1</strong> following");

    const uri = `${BASE}/users/${u.username}`;
    expect(text).toContain(`<link rel="alternate" type="application/activity+json" href="${uri}">`);
    expect(text).toContain(`<link rel="canonical" href="${uri}">`);
    expect(meta(text, "og:type")).toBe("profile");
    expect(meta(text, "og:title")).toBe(
      `&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; Ann (@${u.username}@localhost)`,
    );
    expect(meta(text, "og:description")).toBe("I &lt;3 &lt;script&gt;bad()&lt;/script&gt; birds");
    expect(meta(text, "og:image")).toBe(`${BASE}/images/avi.png`);
    expect(meta(text, "og:url")).toBe(uri);
    // Not discoverable (the default): kept out of search engines.
    expect(meta(text, "robots")).toBe("noindex, noarchive");
    await credentials(u, { discoverable: true });
    expect(meta((await page(`/users/${u.username}`)).text, "robots")).toBeUndefined();
    // Trailing slash and any case of the nickname.
    expect((await page(`/users/${u.username.toUpperCase()}/`)).text).toContain("a public post");
  });

  it("counts in words that agree: a profile link's preview says 1 post, not 1 posts (issue 45)", async () => {
    const u = await registerUser();
    const fresh = await page(`/users/${u.username}`);
    expect(meta(fresh.text, "og:description")).toBe("0 posts");
    expect(fresh.text).toContain("<strong>0</strong> followers");
    await post(u, { status: "the only one", visibility: "public" });
    const follower = await registerUser();
    await json(`/api/v1/accounts/${u.id}/follow`, { method: "POST", token: follower.token });
    const one = await page(`/users/${u.username}`);
    expect(meta(one.text, "og:description")).toBe("1 post");
    expect(one.text).toContain("<strong>1</strong> post</li>");
    expect(one.text).toContain("<strong>1</strong> follower</li>");
    await post(u, { status: "a second", visibility: "public" });
    expect(meta((await page(`/users/${u.username}`)).text, "og:description")).toBe("2 posts");
  });

  it("404 for unknown, remote-looking and deactivated accounts", async () => {
    const u = await registerUser();
    await page("/users/nobody_here_at_all", { status: 404 });
    await page(`/users/${u.username}@elsewhere.example`, { status: 404 });
    await page(`/users/${u.username}%40localhost`, { status: 404 });
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(u.id).run();
    const res = await page(`/users/${u.username}`, { status: 404 });
    expect(JSON.parse(res.text)).toEqual({ error: "Can't find user" });
  });

  it("pages older posts with max_id, ignoring a malformed one", async () => {
    const u = await registerUser();
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) ids.push((await post(u, { status: `post number ${i} end`, visibility: "public" })).id);
    const first = await page(`/users/${u.username}`);
    expect(first.text).toContain("post number 20 end");
    expect(first.text).toContain("post number 1 end");
    expect(first.text).not.toContain("post number 0 end");
    const next = /<a rel="next" href="([^"]+)">/.exec(first.text)?.[1];
    expect(next).toBe(`?max_id=${ids[1]}`);
    const second = await page(`/users/${u.username}${next}`);
    expect(second.text).toContain("post number 0 end");
    expect(second.text).not.toContain("post number 1 end");
    expect(second.text).not.toContain('rel="next"');
    expect((await page(`/users/${u.username}?max_id=%27;--`)).text).toContain("post number 20 end");
  });

  it("costs the same two D1 round trips for 1 or 6 posts", async () => {
    const trips = async (n: number) => {
      const u = await registerUser();
      for (let i = 0; i < n; i++) await post(u, { status: `p${i}`, visibility: "public" });
      const counter = countingD1();
      const { text } = await page(`/users/${u.username}`, { vars: { DB: counter.db } });
      expect(text.match(/<article/g)?.length).toBe(n);
      return counter.count();
    };
    const one = await trips(1);
    expect(await trips(6)).toBe(one);
    expect(one).toBe(2);
  });
});

describe("status pages", () => {
  it("show a public status with its media, OpenGraph and the object link, at its url and its uri", async () => {
    const u = await registerUser();
    await credentials(u, { display_name: "Bea <b>", discoverable: true });
    const media = await upload(u);
    await json(`/api/v1/media/${media.id}`, { method: "PUT", token: u.token, body: { description: 'a "red" <dot>' } });
    const s = await post(u, {
      status: "look at <this> & that",
      visibility: "public",
      media_ids: [media.id],
      language: "en",
    });
    expect(s.url).toBe(`${BASE}/notice/${s.id}`);
    const { text } = await page(`/notice/${s.id}`);
    expect(text).toContain("look at &lt;this&gt; &amp; that");
    // The page shows the thumbnail (linking the file), and link previews use it too.
    expect(media.preview_url).not.toBe(media.url);
    expect(text).toContain(
      `<a href="${media.url}"><img src="${media.preview_url}" alt="a &quot;red&quot; &lt;dot&gt;" loading="lazy">`,
    );
    expect(text).toContain('lang="en"');
    expect(text).toContain(`<link rel="alternate" type="application/activity+json" href="${s.uri}">`);
    expect(text).toContain(`<link rel="canonical" href="${s.url}">`);
    expect(meta(text, "og:type")).toBe("article");
    expect(meta(text, "og:title")).toBe("Bea &lt;b&gt;: &quot;look at &lt;this&gt; &amp; that&quot;");
    expect(meta(text, "og:description")).toBe("look at &lt;this&gt; &amp; that");
    expect(meta(text, "og:image")).toBe(media.preview_url);
    expect(meta(text, "og:image:alt")).toBe("a &quot;red&quot; &lt;dot&gt;");
    expect(meta(text, "twitter:card")).toBe("summary_large_image");
    expect(meta(text, "article:published_time")).toBe(s.created_at);
    expect(meta(text, "robots")).toBeUndefined();
    // The uri shows the same page.
    expect((await page(`/objects/${s.id}`)).text).toBe(text);
  });

  it("folds spoilers and sensitive media, escapes the spoiler, links a visible parent", async () => {
    const u = await registerUser();
    const parent = await post(u, { status: "parent", visibility: "public" });
    const media = await upload(u);
    const cw = await post(u, {
      status: "hidden text",
      spoiler_text: "<i>spoiler</i>",
      visibility: "public",
      in_reply_to_id: parent.id,
    });
    const sensitive = await post(u, { status: "nsfw", sensitive: true, media_ids: [media.id], visibility: "public" });
    const a = (await page(`/notice/${cw.id}`)).text;
    expect(a).toContain("<details><summary>&lt;i&gt;spoiler&lt;/i&gt;</summary>");
    expect(a).toContain(`<a href="/notice/${parent.id}">@${u.username}</a>`);
    expect(meta(a, "og:description")).toBe("CW: &lt;i&gt;spoiler&lt;/i&gt;");
    const b = (await page(`/notice/${sensitive.id}`)).text;
    expect(b).toContain("<details><summary>Sensitive media</summary>");
    // A sensitive image is not the preview: the avatar is.
    expect(meta(b, "og:image")).toBe(`${BASE}/images/avi.png`);
    expect(meta(b, "twitter:card")).toBe("summary");
  });

  it("unlisted statuses have a page search engines skip; private, direct, list and local-only ones 404", async () => {
    const [u, member] = [await registerUser(), await registerUser()];
    await credentials(u, { discoverable: true });
    const unlisted = await post(u, { status: "quiet", visibility: "unlisted" });
    expect(meta((await page(`/notice/${unlisted.id}`)).text, "robots")).toBe("noindex, noarchive");
    const list = await json("/api/v1/lists", { method: "POST", token: u.token, body: { title: "l" } });
    await json(`/api/v1/accounts/${member.id}/follow`, { method: "POST", token: u.token });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: u.token,
      body: { account_ids: [member.id] },
    });
    const hidden = [
      await post(u, { status: "private", visibility: "private" }),
      await post(u, { status: `@${member.username} direct`, visibility: "direct" }),
      await post(u, { status: "listed", visibility: `list:${list.id}` }),
      await post(u, { status: "local", visibility: "local" }),
    ];
    for (const s of hidden) {
      for (const path of [`/notice/${s.id}`, `/objects/${s.id}`]) {
        const { text, res } = await page(path, { status: 404 });
        expect(res.headers.get("content-type")).toMatch(/^application\/json/);
        expect(text).not.toContain(s.content);
      }
    }
    for (const bad of ["nope", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "%3Cscript%3E"])
      await page(`/notice/${bad}`, { status: 404 });
  });

  it("404 for a deactivated author's statuses", async () => {
    const u = await registerUser();
    const s = await post(u, { status: "soon gone", visibility: "public" });
    await page(`/notice/${s.id}`);
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(u.id).run();
    await page(`/notice/${s.id}`, { status: 404 });
  });

  it("a reblog leads to the status it shares, unless that may not be seen", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(a, { status: "share me", visibility: "public" });
    const rb = await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: b.token });
    for (const path of [`/notice/${rb.id}`, `/activities/${rb.id}`]) {
      const { res } = await page(path, { status: 302 });
      expect(res.headers.get("location")).toBe(s.url);
    }
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(a.id).run();
    await page(`/notice/${rb.id}`, { status: 404 });
  });

  it("a remote status leads to where it lives; one with a non-http url has no page", async () => {
    const { id, domain } = await remoteAccount();
    const t = Date.now();
    const insert = (sid: string, url: string) =>
      env.DB.prepare(
        "INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, visibility, local, created_at) VALUES (?, ?, ?, ?, ?, ?, 'far away', 'public', 0, ?)",
      )
        .bind(sid, `https://${domain}/objects/${sid}`, url, id, sid, `https://${domain}/contexts/${sid}`, t)
        .run();
    const [ok, evil] = [newId(), newId()];
    await insert(ok, `https://${domain}/@far/1`);
    await insert(evil, "javascript:alert(1)");
    const { res } = await page(`/notice/${ok}`, { status: 302 });
    expect(res.headers.get("location")).toBe(`https://${domain}/@far/1`);
    await page(`/notice/${evil}`, { status: 404 });
    // Remote accounts have no profile page here.
    await page(`/users/far@${domain}`, { status: 404 });
  });

  it("answers HEAD with the headers and no body", async () => {
    const u = await registerUser();
    const s = await post(u, { status: "head", visibility: "public" });
    const res = await call(`/notice/${s.id}`, { method: "HEAD", headers: { Accept: BROWSER } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(await res.text()).toBe("");
  });

  it("costs one D1 round trip", async () => {
    const u = await registerUser();
    const media = await upload(u);
    const s = await post(u, { status: "counted", visibility: "public", media_ids: [media.id] });
    const counter = countingD1();
    await page(`/notice/${s.id}`, { vars: { DB: counter.db } });
    expect(counter.count()).toBe(1);
  });
});

describe("hashtag pages", () => {
  it("show public posts with the tag only, where hashtag links lead", async () => {
    const u = await registerUser();
    const tag = uniqueName("tag");
    const s = await post(u, { status: `public #${tag} post`, visibility: "public" });
    for (const visibility of ["unlisted", "private", "local"])
      await post(u, { status: `${visibility} #${tag} hidden`, visibility });
    await post(u, { status: "no tag here", visibility: "public" });
    const link = s.tags[0].url;
    expect(link).toBe(`${BASE}/tag/${tag}`);
    const { text } = await page(link.slice(BASE.length));
    expect(text).toContain(`<h1>#${tag}</h1>`);
    expect(text).toContain(`href="${s.url}"`);
    expect(text.match(/<article/g)?.length).toBe(1);
    expect(text).not.toContain("hidden");
    expect(meta(text, "og:url")).toBe(link);
    expect((await page(`/tag/${tag.toUpperCase()}`)).text).toContain(s.url);
    const odd = await page("/tag/%3Cb%3Ex%3C%2Fb%3E");
    expect(odd.text).toContain("<h1>#&lt;b&gt;x&lt;/b&gt;</h1>");
    expect(odd.text).toContain("No public posts with this hashtag");
  });

  it("costs one D1 round trip, and one more when the page comes back short", async () => {
    const counter = countingD1();
    await page("/tag/anything", { vars: { DB: counter.db } });
    // The second probes where the page's bounded walk stopped (test/timeline-walk.test.ts).
    expect(counter.count()).toBe(2);
  });
});
