import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ContextSchema, StatusSchema, StatusSourceSchema } from "../src/schemas/status";
import { countingD1 } from "./d1-counter";
import { BASE, call, json, post, registerUser, upload, valid, type TestUser } from "./helpers";

const get = (path: string, user?: TestUser, status = 200) => json(path, { token: user?.token, status });
const follow = (a: TestUser, b: TestUser) =>
  json(`/api/v1/accounts/${b.id}/follow`, { method: "POST", token: a.token });

describe("posting", () => {
  it("posts text with a mention, a hashtag and a link, and renders the whole Status", async () => {
    const [author, friend] = [await registerUser(), await registerUser()];
    const s = valid(
      StatusSchema,
      await post(author, {
        status: `Hi @${friend.username} see https://example.org/a #Starling\nbye`,
        visibility: "public",
        language: "en",
      }),
    );
    expect(s.content).toBe(
      `Hi <span class="h-card"><a class="u-url mention" data-user="${friend.id}" href="${BASE}/users/${friend.username}" rel="ugc">@<span>${friend.username}</span></a></span> see ` +
        `<a href="https://example.org/a" rel="ugc nofollow noopener noreferrer" target="_blank">https://example.org/a</a> ` +
        `<a class="hashtag" data-tag="starling" href="${BASE}/tag/starling" rel="tag ugc">#Starling</a><br/>bye`,
    );
    expect(s.mentions).toEqual([
      { id: friend.id, username: friend.username, acct: friend.username, url: `${BASE}/users/${friend.username}` },
    ]);
    expect(s.tags).toEqual([{ name: "starling", url: `${BASE}/tag/starling` }]);
    expect(s).toMatchObject({
      visibility: "public",
      language: "en",
      sensitive: false,
      spoiler_text: "",
      replies_count: 0,
      reblog: null,
      application: { name: "Test client", website: null },
    });
    expect(s.pleroma).toMatchObject({
      local: true,
      conversation_id: s.id,
      in_reply_to_account_acct: null,
      thread_muted: false,
      emoji_reactions: [],
      parent_visible: true,
      pinned_at: null,
      expires_at: null,
    });
    expect(s.pleroma.content["text/plain"]).toBe(`Hi @${friend.username} see https://example.org/a #Starling\nbye`);
    expect(s.uri).toBe(`${BASE}/objects/${s.id}`);
    expect((await get(`/api/v1/accounts/${author.id}`)).statuses_count).toBe(1);
    expect(await get(`/api/v1/statuses/${s.id}`, author)).toEqual(s);
  });

  it("renders markdown and sanitises HTML input", async () => {
    const u = await registerUser();
    const md = await post(u, { status: "**bold** and `code #notatag`", content_type: "text/markdown" });
    expect(md.content).toContain("<strong>bold</strong>");
    expect(md.tags).toEqual([]);
    const html = await post(u, {
      status: '<p onclick="x()">hi<script>alert(1)</script><a href="javascript:alert(1)">x</a></p>',
      content_type: "text/html",
    });
    expect(html.content).not.toMatch(/script|onclick|javascript/);
    const src = valid(StatusSourceSchema, await get(`/api/v1/statuses/${html.id}/source`, u));
    expect(src.content_type).toBe("text/html");
    expect(src.text).toContain("<script>");
  });

  it("refuses empty posts, polls with media, over-long text, early expiry and unknown formats", async () => {
    const u = await registerUser();
    expect((await post(u, { status: "  " }, 422)).error).toMatch(/can't be blank/);
    const media = await upload(u);
    expect(
      (await post(u, { status: "x", media_ids: [media.id], poll: { options: ["a", "b"], expires_in: 600 } }, 422))
        .error,
    ).toMatch(/Polls can't have media/);
    const long = await json("/api/v1/statuses", {
      method: "POST",
      token: u.token,
      body: { status: "x".repeat(11) },
      vars: { MAX_TOOT_CHARS: "10" },
      status: 422,
    });
    expect(long.error).toBe("The status is over the character limit");
    expect((await post(u, { status: "x", expires_in: 3600 }, 422)).error).toBe("Expiry date is too soon");
    await post(u, { status: "x", content_type: "text/x-unknown" }, 422);
    await post(u, { status: "x", visibility: "everyone" }, 422);
    await post(u, { status: "x", in_reply_to_id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" }, 404);
  });

  it("needs a user token with write:statuses", async () => {
    const u = await registerUser();
    const read = await json("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: u.app.client_id,
        client_secret: u.app.client_secret,
        username: u.username,
        password: u.password,
        scope: "read",
      },
    });
    expect(
      (await json("/api/v1/statuses", { method: "POST", token: read.access_token, body: { status: "x" }, status: 403 }))
        .error,
    ).toBe("Insufficient permissions: write:statuses.");
  });

  it("makes retries with the same Idempotency-Key return the same status", async () => {
    const [u, other] = [await registerUser(), await registerUser()];
    const key = crypto.randomUUID();
    const first = await post(u, { status: "once" }, 200, { "Idempotency-Key": key });
    const again = await post(u, { status: "once" }, 200, { "Idempotency-Key": key });
    expect(again.id).toBe(first.id);
    expect((await get(`/api/v1/accounts/${u.id}`)).statuses_count).toBe(1);
    expect((await post(other, { status: "once" }, 200, { "Idempotency-Key": key })).id).not.toBe(first.id);
  });

  it("counts the author's statuses as they are posted and deleted, reblogs not included", async () => {
    const [u, other] = [await registerUser(), await registerUser()];
    const theirs = await post(other, { status: "theirs" });
    const one = await post(u, { status: "one" });
    await post(u, { status: "two", in_reply_to_id: one.id });
    await json(`/api/v1/statuses/${theirs.id}/reblog`, { method: "POST", token: u.token });
    expect((await get(`/api/v1/accounts/${u.id}`)).statuses_count).toBe(2);
    await json(`/api/v1/statuses/${one.id}`, { method: "DELETE", token: u.token });
    expect((await get(`/api/v1/accounts/${u.id}`)).statuses_count).toBe(1);
    // The post's own answer carries the count after it.
    expect(valid(StatusSchema, await post(u, { status: "three" })).account.statuses_count).toBe(2);
    expect((await get(`/api/v1/accounts/${u.id}`)).statuses_count).toBe(2);
  });

  it("previews without storing anything", async () => {
    const u = await registerUser();
    const s = valid(StatusSchema, await post(u, { status: "just looking #tag", preview: true }));
    expect(s.content).toContain("#tag");
    await get(`/api/v1/statuses/${s.id}`, u, 404);
    expect((await get(`/api/v1/accounts/${u.id}`)).statuses_count).toBe(0);
  });

  it("shows expires_at to the author only", async () => {
    const [u, other] = [await registerUser(), await registerUser()];
    const s = await post(u, { status: "soon gone", expires_in: 7200 });
    expect(Date.parse(s.pleroma.expires_at)).toBeGreaterThan(Date.now() + 7000_000);
    expect((await get(`/api/v1/statuses/${s.id}`, other)).pleroma.expires_at).toBeNull();
  });
});

describe("privacy", () => {
  it("private statuses reach the author, followers and the mentioned only", async () => {
    const [author, follower, mentioned, stranger] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await follow(follower, author);
    const s = await post(author, { status: `for friends @${mentioned.username}`, visibility: "private" });
    for (const u of [author, follower, mentioned]) await get(`/api/v1/statuses/${s.id}`, u);
    await get(`/api/v1/statuses/${s.id}`, stranger, 404);
    await get(`/api/v1/statuses/${s.id}`, undefined, 404);
    await get(`/api/v1/statuses/${s.id}/context`, stranger, 404);
    await get(`/api/v1/statuses/${s.id}/reblogged_by`, stranger, 404);
    await get(`/api/v1/statuses/${s.id}/favourited_by`, stranger, 404);
    await get(`/api/v1/statuses/${s.id}/card`, stranger, 404);
    expect(await get(`/api/v1/statuses?ids[]=${s.id}`, stranger)).toEqual([]);
    for (const action of ["reblog", "favourite", "bookmark", "pin", "mute"]) {
      await json(`/api/v1/statuses/${s.id}/${action}`, { method: "POST", token: stranger.token, status: 404 });
    }
    await json(`/api/v1/pleroma/statuses/${s.id}/reactions/👍`, { method: "PUT", token: stranger.token, status: 404 });
    // Followers can see it but not spread it.
    await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: follower.token, status: 422 });
  });

  it("direct statuses reach only the addressed, and replies stay direct", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    await follow(c, a);
    const dm = await post(a, { status: `psst @${b.username}`, visibility: "direct" });
    await get(`/api/v1/statuses/${dm.id}`, b);
    await get(`/api/v1/statuses/${dm.id}`, c, 404);
    expect(dm.pleroma.direct_conversation_id).toEqual(expect.any(String));
    const reply = await post(b, { status: "ok", in_reply_to_id: dm.id, visibility: "public" });
    expect(reply.visibility).toBe("direct");
    await get(`/api/v1/statuses/${reply.id}`, a);
    await get(`/api/v1/statuses/${reply.id}`, c, 404);
    const ctx = valid(ContextSchema, await get(`/api/v1/statuses/${dm.id}/context`, a));
    expect(ctx.descendants.map((s) => s.id)).toEqual([reply.id]);
    // Answering the conversation addresses its recipients.
    const conv = await post(a, { status: "and more", in_reply_to_conversation_id: dm.pleroma.direct_conversation_id });
    expect(conv.visibility).toBe("direct");
    await get(`/api/v1/statuses/${conv.id}`, b);
    await get(`/api/v1/statuses/${conv.id}`, c, 404);
    await post(c, { status: "intrude", in_reply_to_conversation_id: dm.pleroma.direct_conversation_id }, 404);
  });

  it("explicit addressing with to[] turns implicit mention addressing off", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    const s = await post(a, { status: `hello @${c.username}`, visibility: "direct", to: [b.username] });
    await get(`/api/v1/statuses/${s.id}`, b);
    await get(`/api/v1/statuses/${s.id}`, c, 404);
  });

  it("to[] recipients appear in mentions, in the answer and when read, and are notified (Pleroma)", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    // Pleroma-FE and megalodon send to[] form-encoded; the text need not name them.
    const s = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        token: a.token,
        form: true,
        body: { status: "for your eyes", visibility: "public", to: [b.username, c.username] },
      }),
    );
    const ids = (m: { id: string }[]) => m.map((x) => x.id).sort();
    expect(ids(s.mentions)).toEqual([b.id, c.id].sort());
    expect(s.mentions.find((m) => m.id === b.id)).toMatchObject({ username: b.username, acct: b.username });
    expect(ids(valid(StatusSchema, await get(`/api/v1/statuses/${s.id}`, c)).mentions)).toEqual([b.id, c.id].sort());
    expect(ids(valid(StatusSchema, await get(`/api/v1/statuses/${s.id}`)).mentions)).toEqual([b.id, c.id].sort());
    const [n] = await json("/api/v1/notifications", { token: b.token });
    expect([n.type, n.status.id]).toEqual(["mention", s.id]);
  });

  it("a deactivated account's statuses are hidden wherever its profile is: by id, timelines, context, search, notifications, reblogs", async () => {
    const [author, viewer, other] = [await registerUser(), await registerUser(), await registerUser()];
    await json(`/api/v1/accounts/${author.id}/follow`, { method: "POST", token: viewer.token });
    const word = `zq${author.username}`;
    const tag = `t${author.username}`;
    const s = await post(author, { status: `${word} #${tag} hello @${viewer.username}` });
    const reply = await post(other, { status: "a reply", in_reply_to_id: s.id });
    const boost = await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: other.token });
    const seen = async () => {
      const ids = (list: { id: string; reblog?: { id: string } | null }[]) =>
        list.flatMap((x) => [x.id, ...(x.reblog ? [x.reblog.id] : [])]);
      const byId = [
        (await call(`/api/v1/statuses/${s.id}`)).status,
        (await call(`/api/v1/statuses/${s.id}`, { token: viewer.token })).status,
      ];
      const pub = [
        ...ids(await get("/api/v1/timelines/public?limit=40")),
        ...ids(await get("/api/v1/timelines/public?limit=40", viewer)),
      ];
      const home = ids(await get("/api/v1/timelines/home", viewer));
      const tagged = ids(await get(`/api/v1/timelines/tag/${tag}`, viewer));
      const ctx = valid(ContextSchema, await get(`/api/v1/statuses/${reply.id}/context`, viewer)).ancestors.map(
        (x) => x.id,
      );
      const found = (await get(`/api/v2/search?q=${word}&type=statuses`, viewer)).statuses.map(
        (x: { id: string }) => x.id,
      );
      const notes = (await get("/api/v1/notifications", viewer)).map((n: { type: string }) => n.type);
      const multi = ids(await get(`/api/v1/statuses?ids[]=${s.id}&ids[]=${boost.id}`, viewer));
      const boosts = ids(await get(`/api/v1/accounts/${other.id}/statuses`, viewer));
      return {
        byId,
        pub: pub.includes(s.id),
        boostShown: boosts.includes(boost.id),
        home: home.includes(s.id),
        tagged,
        ctx,
        found,
        notes,
        multi,
      };
    };
    expect(await seen()).toEqual({
      byId: [200, 200],
      pub: true,
      boostShown: true,
      home: true,
      tagged: [s.id],
      ctx: [s.id],
      found: [s.id],
      notes: ["mention"],
      multi: [s.id, boost.id, s.id],
    });
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(author.id).run();
    await get(`/api/v1/accounts/${author.id}`, viewer, 404);
    expect(await seen()).toEqual({
      byId: [404, 404],
      pub: false,
      boostShown: false,
      home: false,
      tagged: [],
      ctx: [],
      found: [],
      notes: [],
      multi: [],
    });
    await json(`/api/v1/statuses/${s.id}/favourite`, { method: "POST", token: viewer.token, status: 404 });
    // The other account's reply is still there, its parent hidden.
    expect(valid(StatusSchema, await get(`/api/v1/statuses/${reply.id}`, viewer)).in_reply_to_id).toBe(s.id);
    await env.DB.prepare("UPDATE accounts SET deactivated = 0 WHERE id = ?").bind(author.id).run();
    expect((await seen()).byId).toEqual([200, 200]);
  });

  it("no_rich_text: statuses come to that user with only paragraphs, breaks and links (Pleroma's StatusView), everywhere", async () => {
    const [author, plain, rich] = [await registerUser(), await registerUser(), await registerUser()];
    // Pleroma-FE's settings save: a form-encoded PATCH.
    const me = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: plain.token,
      body: new URLSearchParams({ no_rich_text: "true" }),
    });
    expect(me.source.pleroma.no_rich_text).toBe(true);
    await json(`/api/v1/accounts/${author.id}/follow`, { method: "POST", token: plain.token });
    const s = await post(author, {
      status: `**bold** @${plain.username} #plaintag\n\n- one\n- two\n\n\`x < y\``,
      content_type: "text/markdown",
    });
    expect(s.content).toContain("<strong>bold</strong>");
    const stripped = (html: string) => {
      expect(html).not.toMatch(/<(strong|ul|li|code)\b/);
      expect(html).toMatch(/^<p>bold <span class="h-card"><a [^>]*class="[^"]*mention/);
      expect(html).toMatch(/<a [^>]*class="[^"]*hashtag[^"]*"[^>]*>#(<span>)?plaintag(<\/span>)?<\/a>/);
      expect(html).toContain("x &lt; y");
      return html;
    };
    const byId = valid(StatusSchema, await get(`/api/v1/statuses/${s.id}`, plain));
    stripped(byId.content);
    expect(byId.pleroma.content["text/plain"]).toBe(
      valid(StatusSchema, await get(`/api/v1/statuses/${s.id}`, rich)).pleroma.content["text/plain"],
    );
    stripped((await get("/api/v1/timelines/home", plain)).find((x: { id: string }) => x.id === s.id).content);
    const [n] = await json("/api/v1/notifications", { token: plain.token });
    stripped(n.status.content);
    // Others, and anonymous readers, get the rich text.
    expect((await get(`/api/v1/statuses/${s.id}`, rich)).content).toBe(s.content);
    expect((await get(`/api/v1/statuses/${s.id}`)).content).toBe(s.content);
    // Streams render per listener: the user's stream brings it stripped.
    const { openSocket } = await import("./streams");
    const socket = await openSocket(`stream=user&access_token=${plain.token}`);
    const live = await post(author, {
      status: `**live** @${plain.username} #plaintag\n\n- one\n\n\`x < y\``,
      content_type: "text/markdown",
    });
    const frame = await socket.next((f) => f.event === "update" && JSON.parse(f.payload!).id === live.id);
    expect(JSON.parse(frame.payload!).content).not.toContain("<strong>");
    expect(JSON.parse(frame.payload!).content).toMatch(/^<p>live <span class="h-card">/);
    await socket.close();
    // The user's own post is answered stripped too.
    stripped(
      (
        await post(plain, {
          status: `**bold** @${plain.username} #plaintag\n\n- one\n\n\`x < y\``,
          content_type: "text/markdown",
        })
      ).content,
    );
  });

  it("local-only statuses need a signed-in viewer; list statuses reach the list's members", async () => {
    const [a, member, outsider] = [await registerUser(), await registerUser(), await registerUser()];
    const local = await post(a, { status: "just us", visibility: "local" });
    expect(local.visibility).toBe("local");
    await get(`/api/v1/statuses/${local.id}`, undefined, 404);
    await get(`/api/v1/statuses/${local.id}`, outsider);

    await follow(a, member);
    const list = await json("/api/v1/lists", { method: "POST", token: a.token, body: { title: "inner" } });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: a.token,
      body: { account_ids: [member.id] },
    });
    const s = await post(a, { status: "list only", visibility: `list:${list.id}` });
    expect(s.visibility).toBe("list");
    await get(`/api/v1/statuses/${s.id}`, member);
    await get(`/api/v1/statuses/${s.id}`, outsider, 404);
    await post(outsider, { status: "x", visibility: `list:${list.id}` }, 404);
  });

  it("a blocked viewer cannot see the blocker's statuses", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(a, { status: "public but not for you" });
    await get(`/api/v1/statuses/${s.id}`, b);
    await json(`/api/v1/accounts/${b.id}/block`, { method: "POST", token: a.token });
    await get(`/api/v1/statuses/${s.id}`, b, 404);
  });
});

describe("reading", () => {
  it("context lists visible ancestors and descendants in thread order, without blocked or muted authors", async () => {
    const [a, b, c, viewer] = [await registerUser(), await registerUser(), await registerUser(), await registerUser()];
    const root = await post(a, { status: "root" });
    const r1 = await post(b, { status: "r1", in_reply_to_id: root.id });
    const r2 = await post(a, { status: "r2", in_reply_to_id: r1.id });
    const r3 = await post(c, { status: "r3", in_reply_to_id: root.id });
    const hidden = await post(b, { status: "private", in_reply_to_id: root.id, visibility: "private" });
    const ctx = valid(ContextSchema, await get(`/api/v1/statuses/${r1.id}/context`, viewer));
    expect(ctx.ancestors.map((s) => s.id)).toEqual([root.id]);
    expect(ctx.descendants.map((s) => s.id)).toEqual([r2.id]);
    const all = await get(`/api/v1/statuses/${root.id}/context`, viewer);
    expect(all.descendants.map((s: any) => s.id)).toEqual([r1.id, r2.id, r3.id]);
    expect(all.descendants.map((s: any) => s.id)).not.toContain(hidden.id);
    expect(r1.pleroma.in_reply_to_account_acct).toBe(a.username);
    expect((await get(`/api/v1/statuses/${root.id}`)).replies_count).toBe(3);

    await json(`/api/v1/accounts/${c.id}/mute`, { method: "POST", token: viewer.token });
    await json(`/api/v1/accounts/${b.id}/block`, { method: "POST", token: viewer.token });
    expect((await get(`/api/v1/statuses/${root.id}/context`, viewer)).descendants.map((s: any) => s.id)).toEqual([
      r2.id,
    ]);
  });

  it("multi-get answers visible statuses in order, at most 100 ids", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s1 = await post(a, { status: "one" });
    const s2 = await post(a, { status: "two", visibility: "direct" });
    const s3 = await post(a, { status: "three" });
    const got = await get(`/api/v1/statuses?ids[]=${s3.id}&ids[]=${s2.id}&ids[]=${s1.id}&ids[]=nonsense`, b);
    expect(got.map((s: any) => s.id)).toEqual([s3.id, s1.id]);
    const many = Array.from({ length: 101 }, () => `ids[]=${s1.id}`).join("&");
    await get(`/api/v1/statuses?${many}`, b, 400);
  });

  it("deleting answers the status with its source, removes it and its reblogs, and recounts", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const root = await post(b, { status: "root" });
    const s = await post(a, { status: "to delete #gone", in_reply_to_id: root.id });
    await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: b.token });
    await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: b.token, status: 404 });
    const deleted = valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: a.token }));
    expect(deleted.text).toBe("to delete #gone");
    await get(`/api/v1/statuses/${s.id}`, a, 404);
    expect((await get(`/api/v1/accounts/${a.id}`)).statuses_count).toBe(0);
    expect((await get(`/api/v1/statuses/${root.id}`)).replies_count).toBe(0);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM statuses WHERE reblog_of_id = ?")
      .bind(s.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("renders a rich status and a page of statuses in a fixed number of D1 round trips", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    const plain = await post(a, { status: "plain" });
    const m1 = await upload(a);
    const m2 = await upload(a);
    const rich = await post(a, {
      status: `@${b.username} @${c.username} #one #two https://example.org`,
      media_ids: [m1.id, m2.id],
    });
    expect(rich.media_attachments.map((m: any) => m.id)).toEqual([m1.id, m2.id]);
    const trips = async (path: string) => {
      const counter = countingD1();
      const res = await call(path, { token: b.token, vars: { DB: counter.db } as never });
      expect(res.status).toBe(200);
      return counter.count();
    };
    const simple = await trips(`/api/v1/statuses/${plain.id}`);
    expect(await trips(`/api/v1/statuses/${rich.id}`)).toBe(simple);
    expect(simple).toBeLessThanOrEqual(3);
    const ten = [];
    for (let i = 0; i < 10; i++) ten.push((await post(c, { status: `n${i} #t @${a.username}` })).id);
    expect(await trips(`/api/v1/statuses?${ten.map((id) => `ids[]=${id}`).join("&")}`)).toBe(
      await trips(`/api/v1/statuses?ids[]=${ten[0]}`),
    );
  });
});

describe("secrets", () => {
  it("never appear in answers, even the owner's", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(a, { status: `@${b.username} hello` });
    for (const [path, u] of [
      [`/api/v1/statuses/${s.id}`, a],
      ["/api/v1/timelines/home", a],
      ["/api/v1/accounts/verify_credentials", a],
      [`/api/v1/statuses/${s.id}`, b],
    ] as const) {
      const text = await (await call(path, { token: u.token })).text();
      expect(text).not.toMatch(/pbkdf2|PRIVATE KEY|password_hash|passwordHash|privateKey|token_hash/);
    }
  });
});
