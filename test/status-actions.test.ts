import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/index";
import { AccountSchema } from "../src/schemas/account";
import {
  CardSchema,
  MediaAttachmentSchema,
  PollSchema,
  ScheduledStatusSchema,
  StatusSchema,
} from "../src/schemas/status";
import { call, json, post, registerUser, type TestUser, upload, valid } from "./helpers";
import { dnsAnswer } from "./outbound";

const act = (u: TestUser, id: string, action: string, body?: Record<string, unknown>, status = 200) =>
  json(`/api/v1/statuses/${id}/${action}`, { method: "POST", token: u.token, body, status });
const get = (path: string, u?: TestUser, status = 200) => json(path, { token: u?.token, status });

async function runCron(at: number) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(at), cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("reblogs and favourites", () => {
  it("reblog once, count, list and undo", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    const s = await post(a, { status: "share me" });
    const r = valid(StatusSchema, await act(b, s.id, "reblog"));
    expect(r.reblog?.id).toBe(s.id);
    expect(r.reblogged).toBe(true);
    expect((await act(b, s.id, "reblog")).id).toBe(r.id);
    await act(c, s.id, "reblog");
    expect((await get(`/api/v1/statuses/${s.id}`, b)).reblogs_count).toBe(2);
    const by = await get(`/api/v1/statuses/${s.id}/reblogged_by`);
    expect(by.map((x: any) => x.id)).toEqual([c.id, b.id]);
    by.forEach((x: unknown) => valid(AccountSchema, x));
    const undone = await act(b, s.id, "unreblog");
    expect(undone).toMatchObject({ id: s.id, reblogged: false, reblogs_count: 1 });
    // Your own direct status cannot be reblogged either.
    const dm = await post(a, { status: "dm", visibility: "direct" });
    await act(a, dm.id, "reblog", undefined, 422);
  });

  it("favourite, count, list, undo", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(a, { status: "like me" });
    expect(await act(b, s.id, "favourite")).toMatchObject({ favourited: true, favourites_count: 1 });
    expect(await act(b, s.id, "favourite")).toMatchObject({ favourites_count: 1 });
    expect((await get(`/api/v1/statuses/${s.id}/favourited_by`)).map((x: any) => x.id)).toEqual([b.id]);
    expect(await act(b, s.id, "unfavourite")).toMatchObject({ favourited: false, favourites_count: 0 });
    expect(await get(`/api/v1/statuses/${s.id}/favourited_by`)).toEqual([]);
  });
});

describe("pins, thread mutes, bookmarks", () => {
  it("pins own public statuses only", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(a, { status: "pin me" });
    const pinned = await act(a, s.id, "pin");
    expect(pinned.pinned).toBe(true);
    expect(pinned.pleroma.pinned_at).toEqual(expect.any(String));
    expect((await act(b, s.id, "pin", undefined, 422)).error).toBe("Someone else's status cannot be pinned");
    const priv = await post(a, { status: "private", visibility: "private" });
    expect((await act(a, priv.id, "pin", undefined, 422)).error).toBe("Non-public status cannot be pinned");
    expect(await act(a, s.id, "unpin")).toMatchObject({ pinned: false, pleroma: { pinned_at: null } });
  });

  it("mutes and unmutes a thread", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const root = await post(a, { status: "thread" });
    const reply = await post(a, { status: "reply", in_reply_to_id: root.id });
    expect(await act(b, root.id, "mute", { expires_in: 3600 })).toMatchObject({
      muted: true,
      pleroma: { thread_muted: true },
    });
    expect((await get(`/api/v1/statuses/${reply.id}`, b)).pleroma.thread_muted).toBe(true);
    expect((await get(`/api/v1/statuses/${reply.id}`, a)).pleroma.thread_muted).toBe(false);
    expect(await act(b, root.id, "unmute")).toMatchObject({ muted: false });
  });

  it("bookmarks, listed newest first with Link headers", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s1 = await post(a, { status: "one" });
    const s2 = await post(a, { status: "two" });
    expect((await act(b, s1.id, "bookmark")).bookmarked).toBe(true);
    await act(b, s2.id, "bookmark");
    const res = await call("/api/v1/bookmarks?limit=1", { token: b.token });
    expect(((await res.json()) as any[]).map((s) => s.id)).toEqual([s2.id]);
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get("link")!)![1];
    expect((await get(next.replace("http://localhost", ""), b)).map((s: any) => s.id)).toEqual([s1.id]);
    expect((await act(b, s1.id, "unbookmark")).bookmarked).toBe(false);
    expect((await get("/api/v1/bookmarks", b)).map((s: any) => s.id)).toEqual([s2.id]);
    expect(await get("/api/v1/bookmarks", a)).toEqual([]);
  });
});

describe("emoji reactions", () => {
  it("react, list with accounts, hide muted reactors, undo", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    const s = await post(a, { status: "react" });
    const path = (e: string) => `/api/v1/pleroma/statuses/${s.id}/reactions/${encodeURIComponent(e)}`;
    const reacted = valid(StatusSchema, await json(path("👍"), { method: "PUT", token: b.token }));
    expect(reacted.pleroma.emoji_reactions).toEqual([
      { name: "👍", count: 1, me: true, url: null, account_ids: [b.id] },
    ]);
    await json(path("👍"), { method: "PUT", token: c.token });
    await json(path("🎉"), { method: "PUT", token: c.token });
    const list = await get(`/api/v1/pleroma/statuses/${s.id}/reactions`, b);
    expect(list.map((r: any) => [r.name, r.count, r.me, r.accounts.map((x: any) => x.id)])).toEqual([
      ["👍", 2, true, [b.id, c.id]],
      ["🎉", 1, false, [c.id]],
    ]);
    expect(
      (await get(`/api/v1/statuses/${s.id}/reactions/${encodeURIComponent("🎉")}`)).map((r: any) => r.name),
    ).toEqual(["🎉"]);
    await json(`/api/v1/accounts/${c.id}/mute`, { method: "POST", token: b.token });
    expect((await get(`/api/v1/pleroma/statuses/${s.id}/reactions`, b)).map((r: any) => [r.name, r.count])).toEqual([
      ["👍", 1],
    ]);
    expect((await get(`/api/v1/pleroma/statuses/${s.id}/reactions?with_muted=true`, b)).length).toBe(2);
    expect((await get(`/api/v1/statuses/${s.id}`, b)).pleroma.emoji_reactions).toEqual([
      { name: "👍", count: 1, me: true, url: null, account_ids: [b.id] },
    ]);
    await json(path("not an emoji"), { method: "PUT", token: b.token, status: 400 });
    expect((await json(path("👍"), { method: "DELETE", token: b.token })).pleroma.emoji_reactions).toEqual([]);
  });
});

describe("media", () => {
  it("uploads, describes and attaches files; refuses what is too big, too long or not yours", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const m = valid(MediaAttachmentSchema, await upload(a));
    expect(m).toMatchObject({ type: "image", description: null, pleroma: { mime_type: "image/png" } });
    expect((await call(m.url)).headers.get("content-type")).toBe("image/png");
    const described = await json(`/api/v1/media/${m.id}`, {
      method: "PUT",
      token: a.token,
      body: { description: "a pixel" },
    });
    expect(described.description).toBe("a pixel");
    expect((await get(`/api/v1/media/${m.id}`, a)).description).toBe("a pixel");
    await get(`/api/v1/media/${m.id}`, b, 404);
    await json(`/api/v1/media/${m.id}`, {
      method: "PUT",
      token: a.token,
      body: { description: "x".repeat(10) },
      vars: { DESCRIPTION_LIMIT: "5" },
      status: 422,
    });
    const form = new FormData();
    form.set("file", new File([new Uint8Array(2000)], "big.bin"));
    await json("/api/v2/media", {
      method: "POST",
      token: a.token,
      body: form,
      vars: { UPLOAD_LIMIT: "1000" },
      status: 413,
    });
    const other = await upload(a, new TextEncoder().encode("<html><script>x</script>"), "page.html");
    expect(other).toMatchObject({ type: "unknown", pleroma: { mime_type: "application/octet-stream" } });

    await post(b, { status: "steal", media_ids: [m.id] }, 422);
    const s = await post(a, { status: "", media_ids: [m.id, other.id] });
    expect(s.media_attachments.map((x: any) => x.id)).toEqual([m.id, other.id]);
    await post(a, { status: "again", media_ids: [m.id] }, 422);
  });
});

describe("polls", () => {
  it("enforces the voting rules and shows results", async () => {
    const [a, b, c] = [await registerUser(), await registerUser(), await registerUser()];
    const s = await post(a, { status: "pick", poll: { options: ["red", "blue", "green"], expires_in: 3600 } });
    const poll = valid(PollSchema, s.poll);
    expect(poll).toMatchObject({ multiple: false, expired: false, votes_count: 0, voted: true, own_votes: [] });
    const vote = (u: TestUser, choices: number[], status = 200) =>
      json(`/api/v1/polls/${poll.id}/votes`, { method: "POST", token: u.token, body: { choices }, status });
    expect((await vote(a, [0], 422)).error).toBe("Poll's author can't vote");
    expect((await vote(b, [0, 1], 422)).error).toBe("Too many choices");
    expect((await vote(b, [7], 422)).error).toBe("Invalid indices");
    const voted = valid(PollSchema, await vote(b, [1]));
    expect(voted).toMatchObject({ voted: true, own_votes: [1], votes_count: 1, voters_count: 1 });
    expect(voted.options.map((o) => o.votes_count)).toEqual([0, 1, 0]);
    expect((await vote(b, [2], 422)).error).toBe("Already voted");
    expect((await get(`/api/v1/polls/${poll.id}`, c)).voted).toBe(false);
    await env.DB.prepare("UPDATE polls SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, poll.id)
      .run();
    expect((await vote(c, [0], 422)).error).toBe("Poll's closed");
    expect(await get(`/api/v1/polls/${poll.id}`)).toMatchObject({ expired: true, votes_count: 1 });
  });

  it("multiple choice, hidden totals, and validation on posting", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(a, {
      status: "many",
      poll: { options: ["x", "y"], expires_in: 600, multiple: true, hide_totals: true },
    });
    const voted = await json(`/api/v1/polls/${s.poll.id}/votes`, {
      method: "POST",
      token: b.token,
      body: { choices: [0, 1] },
    });
    expect(voted.own_votes).toEqual([0, 1]);
    expect(voted.options.map((o: any) => o.votes_count)).toEqual([null, null]);
    expect((await get(`/api/v1/polls/${s.poll.id}`, a)).options.map((o: any) => o.votes_count)).toEqual([1, 1]);
    expect((await post(a, { status: "x", poll: { options: ["only"], expires_in: 600 } }, 422)).error).toMatch(
      /at least 2/,
    );
    await post(
      a,
      { status: "x", poll: { options: Array.from({ length: 21 }, (_, i) => `o${i}`), expires_in: 600 } },
      422,
    );
    await post(a, { status: "x", poll: { options: ["a", "x".repeat(201)], expires_in: 600 } }, 422);
    await post(a, { status: "x", poll: { options: ["a", "b"], expires_in: 400 * 86400 } }, 422);
    const form = new URLSearchParams([
      ["status", "form poll"],
      ["poll[options][]", "a"],
      ["poll[options][]", "b"],
      ["poll[expires_in]", "600"],
    ]);
    expect(
      (await json("/api/v1/statuses", { method: "POST", token: a.token, body: form })).poll.options.map(
        (o: any) => o.title,
      ),
    ).toEqual(["a", "b"]);
  });
});

describe("scheduled and expiring statuses", () => {
  it("schedules at least 5 minutes ahead, lists, moves, cancels", async () => {
    const a = await registerUser();
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect((await post(a, { status: "x", scheduled_at: soon }, 422)).error).toMatch(/at least 5 minutes/);
    const when = new Date(Date.now() + 3600_000).toISOString();
    const m = await upload(a);
    const sch = valid(
      ScheduledStatusSchema,
      await post(a, { status: "later", scheduled_at: when, media_ids: [m.id], expires_in: 7200 }),
    );
    expect(sch.params).toMatchObject({ text: "later", expires_in: 7200, media_ids: [m.id] });
    expect(sch.media_attachments.map((x) => x.id)).toEqual([m.id]);
    expect((await get("/api/v1/scheduled_statuses", a)).map((x: any) => x.id)).toEqual([sch.id]);
    const moved = await json(`/api/v1/scheduled_statuses/${sch.id}`, {
      method: "PUT",
      token: a.token,
      body: { scheduled_at: new Date(Date.now() + 7200_000).toISOString() },
    });
    expect(Date.parse(moved.scheduled_at)).toBeGreaterThan(Date.parse(sch.scheduled_at));
    await json(`/api/v1/scheduled_statuses/${sch.id}`, {
      method: "PUT",
      token: a.token,
      body: { scheduled_at: soon },
      status: 422,
    });
    const other = await registerUser();
    await get(`/api/v1/scheduled_statuses/${sch.id}`, other, 404);
    expect(await json(`/api/v1/scheduled_statuses/${sch.id}`, { method: "DELETE", token: a.token })).toEqual({});
    await get(`/api/v1/scheduled_statuses/${sch.id}`, a, 404);
  });

  it("lists scheduled statuses in pages with limit and a Link header, newest first", async () => {
    const a = await registerUser();
    const m = await upload(a);
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(
        await post(a, {
          status: `later ${i}`,
          scheduled_at: new Date(Date.now() + (3 - i) * 3600_000).toISOString(),
          ...(i === 0 ? { media_ids: [m.id] } : {}),
        }),
      );
    }
    const res = await call("/api/v1/scheduled_statuses?limit=2", { token: a.token });
    expect(res.status).toBe(200);
    const first = ((await res.json()) as unknown[]).map((x) => valid(ScheduledStatusSchema, x));
    expect(first.map((x) => x.id)).toEqual([made[2].id, made[1].id]);
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get("link")!)![1];
    expect(new URL(next).searchParams.get("limit")).toBe("2");
    const second = (await json(next.replace("http://localhost", ""), { token: a.token })).map((x: unknown) =>
      valid(ScheduledStatusSchema, x),
    );
    expect(second.map((x: any) => [x.id, x.media_attachments.map((ma: any) => ma.id)])).toEqual([[made[0].id, [m.id]]]);
    expect(
      await json(`/api/v1/scheduled_statuses?min_id=${made[0].id}`, { token: a.token }).then((r) =>
        r.map((x: any) => x.id),
      ),
    ).toEqual([made[2].id, made[1].id]);
    expect(await json("/api/v1/scheduled_statuses", { token: (await registerUser()).token })).toEqual([]);
  });

  it("refuses the 51st of a day and the 301st in all", async () => {
    const a = await registerUser();
    const day = Date.UTC(2030, 0, 1, 12);
    const rows = Array.from({ length: 50 }, (_, i) =>
      env.DB.prepare(
        "INSERT INTO scheduled_statuses (id, account_id, scheduled_at, params, created_at) VALUES (?, ?, ?, '{}', ?)",
      ).bind(`S${String(i).padStart(25, "0")}${a.id.slice(-4)}`.slice(0, 30), a.id, day + i, Date.now()),
    );
    await env.DB.batch(rows);
    expect((await post(a, { status: "x", scheduled_at: new Date(day + 3600_000).toISOString() }, 422)).error).toBe(
      "daily limit exceeded",
    );
    await post(a, { status: "x", scheduled_at: new Date(day + 86400_000).toISOString() });
    const more = Array.from({ length: 250 }, (_, i) =>
      env.DB.prepare(
        "INSERT INTO scheduled_statuses (id, account_id, scheduled_at, params, created_at) VALUES (?, ?, ?, '{}', ?)",
      ).bind(`T${i}-${a.id}`, a.id, day + (i + 2) * 86400_000, Date.now()),
    );
    await env.DB.batch(more);
    expect(
      (await post(a, { status: "x", scheduled_at: new Date(day + 400 * 86400_000).toISOString() }, 422)).error,
    ).toBe("total limit exceeded");
  });

  it("the cron posts due statuses once, with their media, then deletes them when they expire", async () => {
    const a = await registerUser();
    const at = Date.now() + 10 * 60_000;
    const m = await upload(a);
    const sch = await post(a, {
      status: "from the future",
      scheduled_at: new Date(at).toISOString(),
      media_ids: [m.id],
      expires_in: 7200,
    });
    await runCron(at - 60_000);
    expect(await get("/api/v1/scheduled_statuses", a)).toHaveLength(1);
    await runCron(at + 1000);
    await runCron(at + 2000);
    expect(await get("/api/v1/scheduled_statuses", a)).toEqual([]);
    const { results } = await env.DB.prepare("SELECT id FROM statuses WHERE account_id = ?")
      .bind(a.id)
      .all<{ id: string }>();
    expect(results).toHaveLength(1);
    const s = valid(StatusSchema, await get(`/api/v1/statuses/${results[0].id}`, a));
    expect(s.content).toBe("from the future");
    expect(s.media_attachments.map((x) => x.id)).toEqual([m.id]);
    expect(s.pleroma.expires_at).toEqual(expect.any(String));
    expect(sch.id).not.toBe(s.id);

    await runCron(Date.parse(s.pleroma.expires_at!) + 1000);
    await get(`/api/v1/statuses/${s.id}`, a, 404);
    expect((await get(`/api/v1/accounts/${a.id}`)).statuses_count).toBe(0);
    await runCron(Date.parse(s.pleroma.expires_at!) + 2000);
  });
});

describe("link cards", () => {
  afterEach(() => vi.restoreAllMocks());

  it("fetches the first link's page once and serves its card; private addresses are never fetched", async () => {
    const page = `<html><head><title>Fallback</title><meta property="og:title" content="A good read"><meta property="og:description" content="About things"><meta property="og:image" content="/img.png"><meta property="og:site_name" content="News"></head><body></body></html>`;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      // The SSRF guard resolves names: news.example is public, intranet.example is not.
      const dns = dnsAnswer(url, { "news.example": ["93.184.215.14"], "intranet.example": ["192.168.10.2"] });
      if (dns) return dns;
      if (url === "https://news.example/story" || url === "https://intranet.example/secret")
        return new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
      return new Response("nope", { status: 404 });
    });
    const a = await registerUser();
    const s = await post(a, { status: "read https://news.example/story now" });
    const card = valid(CardSchema, await get(`/api/v1/statuses/${s.id}/card`, a));
    expect(card).toMatchObject({
      title: "A good read",
      description: "About things",
      image: "https://news.example/img.png",
      provider_name: "News",
      type: "link",
    });
    expect((await get(`/api/v1/statuses/${s.id}`, a)).card).toMatchObject({ title: "A good read" });
    const calls = spy.mock.calls.filter(
      ([i]) => (i instanceof Request ? i.url : String(i)) === "https://news.example/story",
    ).length;
    expect(calls).toBe(1);

    const local = await post(a, { status: "http://127.0.0.1/admin and http://localhost:8787/x" });
    expect(await get(`/api/v1/statuses/${local.id}/card`, a)).toEqual({});
    expect(spy.mock.calls.some(([i]) => /127\.0\.0\.1|localhost/.test(i instanceof Request ? i.url : String(i)))).toBe(
      false,
    );

    // A public-looking name that resolves to a private address: resolved, never fetched.
    const inside = await post(a, { status: "look https://intranet.example/secret" });
    expect(await get(`/api/v1/statuses/${inside.id}/card`, a)).toEqual({});
    const urls = spy.mock.calls.map(([i]) => (i instanceof Request ? i.url : String(i)));
    expect(urls.some((u) => u.startsWith("https://cloudflare-dns.com/dns-query?name=intranet.example"))).toBe(true);
    expect(urls).not.toContain("https://intranet.example/secret");
  });
});

describe("custom emoji and delete events", () => {
  it("turns known :shortcodes: into emojis and accepts them as reactions", async () => {
    const code = `blob${Date.now()}`;
    await env.DB.prepare(
      "INSERT INTO custom_emojis (shortcode, file, category, visible_in_picker, created_at) VALUES (?, ?, 'blobs', 1, ?)",
    )
      .bind(code, `emoji/${code}.png`, Date.now())
      .run();
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(a, { status: `hello :${code}: and :unknown_thing:` });
    expect(s.emojis).toEqual([
      {
        shortcode: code,
        url: `http://localhost/media/emoji/${code}.png`,
        static_url: `http://localhost/media/emoji/${code}.png`,
        visible_in_picker: true,
      },
    ]);
    const reacted = await json(`/api/v1/pleroma/statuses/${s.id}/reactions/:${code}:`, {
      method: "PUT",
      token: b.token,
    });
    expect(reacted.pleroma.emoji_reactions).toEqual([
      { name: code, count: 1, me: true, url: `http://localhost/media/emoji/${code}.png`, account_ids: [b.id] },
    ]);
    await json(`/api/v1/pleroma/statuses/${s.id}/reactions/:unknown_thing:`, {
      method: "PUT",
      token: b.token,
      status: 400,
    });
  });

  it("publishes a delete event for a deleted status and its reblogs", async () => {
    const { eventSinks } = await import("../src/services/events");
    const seen: unknown[] = [];
    const sink = (events: unknown[]) => void seen.push(...events);
    eventSinks.push(sink);
    try {
      const [a, b] = [await registerUser(), await registerUser()];
      const s = await post(a, { status: "short-lived" });
      const r = await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: b.token });
      await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: a.token });
      await expect
        .poll(() => seen)
        .toEqual(
          expect.arrayContaining([
            {
              accountId: null,
              event: "delete",
              payload: s.id,
              audience: { authorId: a.id, visibility: "public", recipients: [] },
            },
            {
              accountId: null,
              event: "delete",
              payload: r.id,
              audience: { authorId: b.id, visibility: "public", recipients: [] },
            },
          ]),
        );
    } finally {
      eventSinks.splice(eventSinks.indexOf(sink), 1);
    }
  });
});
