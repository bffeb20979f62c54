/**
 * Editing statuses (issue 31): PUT /api/v1/statuses/:id and GET /api/v1/statuses/:id/history through the Worker,
 * in the shapes the apps send (masto.js and megalodon JSON, Pleroma-FE multipart, Rack-style forms), with the
 * rules around an edit: who may, what changes and what stays, mentions, media, polls, notifications, streams.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { StatusEditSchema, StatusSchema, StatusSourceSchema } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { call, json, post, registerUser, scopedToken, upload, valid, type TestUser } from "./helpers";
import { openSocket } from "./streams";

const edit = (u: TestUser, id: string, body: Record<string, unknown> | FormData | string, status = 200) =>
  json(`/api/v1/statuses/${id}`, { method: "PUT", token: u.token, body, status });
const history = async (id: string, token?: string) =>
  ((await json(`/api/v1/statuses/${id}/history`, { token })) as unknown[]).map((e) => valid(StatusEditSchema, e));
const notifications = async (u: TestUser) =>
  ((await json("/api/v1/notifications", { token: u.token })) as unknown[]).map((n) => valid(NotificationSchema, n));

describe("editing a status", () => {
  it("changes text, content warning, sensitivity and language; keeps visibility and reply; history lists both", async () => {
    const a = await registerUser();
    const parent = valid(StatusSchema, await post(a, { status: "first" }));
    const s = valid(
      StatusSchema,
      await post(a, { status: "helo wrld", visibility: "unlisted", in_reply_to_id: parent.id, language: "en" }),
    );
    expect(s.edited_at).toBeNull();
    const edited = valid(
      StatusSchema,
      await edit(a, s.id, {
        status: "hello world",
        spoiler_text: "typo fixed",
        sensitive: true,
        language: "de",
        // Not editable: ignored, as Mastodon does.
        visibility: "public",
        in_reply_to_id: null,
      }),
    );
    expect(edited).toMatchObject({
      id: s.id,
      content: "hello world",
      spoiler_text: "typo fixed",
      sensitive: true,
      language: "de",
      visibility: "unlisted",
      in_reply_to_id: parent.id,
    });
    expect(edited.edited_at).not.toBeNull();
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`)).content).toBe("hello world");
    expect(valid(StatusSourceSchema, await json(`/api/v1/statuses/${s.id}/source`, { token: a.token }))).toEqual({
      id: s.id,
      text: "hello world",
      spoiler_text: "typo fixed",
      content_type: "text/plain",
    });
    const h = await history(s.id);
    expect(h.map((v) => [v.content, v.spoiler_text, v.sensitive])).toEqual([
      ["helo wrld", "", false],
      ["hello world", "typo fixed", true],
    ]);
    expect(h[0]!.created_at).toBe(s.created_at);
    expect(h[1]!.created_at).toBe(edited.edited_at);
    expect(h.every((v) => v.account.id === a.id)).toBe(true);

    // A second edit adds one version (the original is kept once).
    await edit(a, s.id, { status: "hello, world" });
    expect((await history(s.id)).map((v) => v.content)).toEqual(["helo wrld", "hello world", "hello, world"]);
  });

  it("a status never edited has one version, itself; an edit that changes nothing writes nothing", async () => {
    const a = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: "as it was", spoiler_text: "cw" }));
    const [only] = await history(s.id);
    expect(only).toMatchObject({ content: s.content, spoiler_text: "cw", created_at: s.created_at, poll: null });
    const same = valid(StatusSchema, await edit(a, s.id, { status: "as it was", spoiler_text: "cw", sensitive: true }));
    expect(same.edited_at).toBeNull();
    expect(await history(s.id)).toHaveLength(1);
  });

  it("edits are throttled per status and address, and the history keeps the original and the newest 49 (issue 44)", async () => {
    const a = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: "version 0" }));
    const put = (n: number, vars?: Record<string, string>) =>
      call(`/api/v1/statuses/${s.id}`, {
        method: "PUT",
        token: a.token,
        body: { status: `version ${n}` },
        headers: { "cf-connecting-ip": "192.0.2.77" },
        vars,
      });
    for (let n = 1; n <= 20; n++) expect((await put(n)).status).toBe(200);
    const refused = await put(21);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: string }).error).toBeTruthy();
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`, { token: a.token })).content).toContain(
      "version 20",
    );
    // With a wider limit, the history still stops at 50 versions: the original, then the newest.
    for (let n = 21; n <= 60; n++) expect((await put(n, { STATUS_EDITS: "1000" })).status).toBe(200);
    const versions = await history(s.id, a.token);
    expect(versions).toHaveLength(50);
    expect(versions[0]!.content).toContain("version 0");
    expect(versions[1]!.content).toContain("version 12");
    expect(versions.at(-1)!.content).toContain("version 60");
  });

  it("only the author edits; bad input is a clear 4xx and changes nothing", async () => {
    const a = await registerUser();
    const other = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: "mine" }));
    await edit(other, s.id, { status: "theirs now" }, 404);
    const reblog = valid(StatusSchema, await json(`/api/v1/statuses/${s.id}/reblog`, { token: a.token, body: {} }));
    await edit(a, reblog.id, { status: "through the reblog" }, 404);
    await edit(a, "not-an-id", { status: "x" }, 404);
    // Pleroma's answer to a user endpoint without a user (BEHAVIOUR.md).
    const anon = await call(`/api/v1/statuses/${s.id}`, { method: "PUT", body: { status: "anon" } });
    expect([anon.status, await anon.json()]).toEqual([403, { error: "Invalid credentials." }]);
    const readOnly = await scopedToken(a, "read");
    await json(`/api/v1/statuses/${s.id}`, { method: "PUT", token: readOnly, body: { status: "x" }, status: 403 });
    expect((await edit(a, s.id, { status: "" }, 422)).error).toMatch(/can't be blank/);
    expect((await edit(a, s.id, { status: "x".repeat(6000) }, 422)).error).toMatch(/character limit/);
    expect((await edit(a, s.id, { status: "x", content_type: "text/bbcode" }, 422)).error).toMatch(/content type/);
    expect((await edit(a, s.id, { status: "x", poll: { options: ["only"], expires_in: 3600 } }, 422)).error).toMatch(
      /at least 2 options/,
    );
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`)).content).toBe("mine");
    expect(await history(s.id)).toHaveLength(1);
  });

  it("a private status's history is as private as the status", async () => {
    const a = await registerUser();
    const stranger = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: "followers only", visibility: "private" }));
    await edit(a, s.id, { status: "followers only, edited" });
    await json(`/api/v1/statuses/${s.id}/history`, { token: stranger.token, status: 404 });
    await json(`/api/v1/statuses/${s.id}/history`, { status: 404 });
    expect(await history(s.id, a.token)).toHaveLength(2);
  });
});

describe("Pleroma-FE's order of calls", () => {
  it("a description sent with PUT /api/v1/media/:id just before the edit is the edit's, and the history keeps the old", async () => {
    const a = await registerUser();
    const m = await upload(a);
    await json(`/api/v1/media/${m.id}`, { method: "PUT", token: a.token, body: { description: "old alt" } });
    const s = valid(StatusSchema, await post(a, { status: "a picture", media_ids: [m.id] }));
    expect(s.media_attachments[0]!.description).toBe("old alt");

    // Only the description changes: still an edit, with both versions kept.
    const described = await json(`/api/v1/media/${m.id}`, {
      method: "PUT",
      token: a.token,
      body: { description: "new alt" },
    });
    expect(described.description).toBe("new alt");
    // Until the edit, the post shows what it showed.
    expect((await json(`/api/v1/statuses/${s.id}`, { token: a.token })).media_attachments[0].description).toBe(
      "old alt",
    );
    const edited = valid(StatusSchema, await edit(a, s.id, { status: "a picture", media_ids: [m.id] }));
    expect(edited.edited_at).not.toBeNull();
    expect(edited.media_attachments[0]!.description).toBe("new alt");
    expect((await history(s.id)).map((v) => v.media_attachments[0]!.description)).toEqual(["old alt", "new alt"]);

    // Text and description together: the first version keeps its own description.
    await json(`/api/v1/media/${m.id}`, { method: "PUT", token: a.token, body: { description: "newest alt" } });
    await edit(a, s.id, { status: "a picture, renamed", media_ids: [m.id] });
    expect((await history(s.id)).map((v) => v.media_attachments[0]!.description)).toEqual([
      "old alt",
      "new alt",
      "newest alt",
    ]);
  });
});

describe("the shapes apps send", () => {
  it("masto.js and megalodon (JSON), Pleroma-FE (multipart), Rack forms with media_attributes[][id]", async () => {
    const a = await registerUser();
    const [m1, m2] = [await upload(a), await upload(a)];
    const s = valid(StatusSchema, await post(a, { status: "with media", media_ids: [m1.id] }));

    // masto.js 6+: `statuses.$select(id).update({...})`, JSON with camel-cased keys snake-cased.
    const viaMasto = valid(
      StatusSchema,
      await edit(a, s.id, {
        status: "masto.js edit",
        media_ids: [m1.id, m2.id],
        media_attributes: [{ id: m2.id, description: "second picture", focus: "0.5,-0.2" }],
      }),
    );
    expect(viaMasto.media_attachments.map((m) => [m.id, m.description])).toEqual([
      [m1.id, null],
      [m2.id, "second picture"],
    ]);
    // The focal point is kept, as an upload's is; `null` leaves a value as it is (what masto.js apps send).
    expect(viaMasto.media_attachments[1]!.meta).toMatchObject({ focus: { x: 0.5, y: -0.2 } });
    const nulls = valid(
      StatusSchema,
      await edit(a, s.id, {
        status: "masto.js edit, again",
        media_ids: [m1.id, m2.id],
        media_attributes: [{ id: m2.id, description: null, focus: null }],
      }),
    );
    expect(nulls.media_attachments[1]).toMatchObject({
      description: "second picture",
      meta: { focus: { x: 0.5, y: -0.2 } },
    });
    // Beyond the description limit: refused as an upload's description is, not cut.
    await edit(
      a,
      s.id,
      { status: "too long", media_ids: [m2.id], media_attributes: [{ id: m2.id, description: "x".repeat(5001) }] },
      422,
    );

    // megalodon's Pleroma `editStatus`: JSON, empty values left out, poll as an object.
    const p = valid(StatusSchema, await post(a, { status: "poll", poll: { options: ["a", "b"], expires_in: 3600 } }));
    const viaMegalodon = valid(
      StatusSchema,
      await edit(a, p.id, {
        status: "poll, edited",
        sensitive: false,
        poll: { options: ["a", "b", "c"], expires_in: 7200, multiple: true, hide_totals: false },
      }),
    );
    expect(viaMegalodon.poll).toMatchObject({
      multiple: true,
      options: [{ title: "a" }, { title: "b" }, { title: "c" }],
    });

    // Pleroma-FE's `editStatus`: multipart FormData, arrays as `media_ids[]`, content_type only when set.
    const form = new FormData();
    form.append("status", "*Pleroma-FE* edit");
    form.append("content_type", "text/markdown");
    form.append("media_ids[]", m2.id);
    const viaFe = valid(StatusSchema, await edit(a, s.id, form));
    expect(viaFe.content).toBe("<p><em>Pleroma-FE</em> edit</p>");
    expect(viaFe.media_attachments.map((m) => m.id)).toEqual([m2.id]);

    // A Rack-style form: `media_attributes[][id]` and `[description]` fill one object each.
    const rack = new URLSearchParams();
    rack.append("status", "form edit");
    rack.append("media_ids[]", m1.id);
    rack.append("media_ids[]", m2.id);
    rack.append("media_attributes[][id]", m1.id);
    rack.append("media_attributes[][description]", "first");
    rack.append("media_attributes[][id]", m2.id);
    rack.append("media_attributes[][description]", "second");
    const viaForm = valid(StatusSchema, await edit(a, s.id, rack.toString()));
    expect(viaForm.media_attachments.map((m) => [m.id, m.description])).toEqual([
      [m1.id, "first"],
      [m2.id, "second"],
    ]);
  });
});

describe("media in an edit", () => {
  it("removed media stay in the history (and their files), others' or used media are refused", async () => {
    const a = await registerUser();
    const b = await registerUser();
    const [m1, m2] = [await upload(a), await upload(a)];
    const s = valid(StatusSchema, await post(a, { status: "two pictures", media_ids: [m1.id, m2.id] }));
    const edited = valid(StatusSchema, await edit(a, s.id, { status: "one picture", media_ids: [m2.id] }));
    expect(edited.media_attachments.map((m) => m.id)).toEqual([m2.id]);
    const h = await history(s.id);
    expect(h.map((v) => v.media_attachments.map((m) => m.id))).toEqual([[m1.id, m2.id], [m2.id]]);
    const key = new URL(m1.url).pathname.replace(/^\/media\//, "");
    expect(await env.MEDIA.head(key)).not.toBeNull();
    // Put back by a later edit.
    expect(
      valid(
        StatusSchema,
        await edit(a, s.id, { status: "both again", media_ids: [m1.id, m2.id] }),
      ).media_attachments.map((m) => m.id),
    ).toEqual([m1.id, m2.id]);

    // Someone else's upload, an upload on another status, a description for a medium not attached: 422.
    const theirs = await upload(b);
    await edit(a, s.id, { status: "x", media_ids: [theirs.id] }, 422);
    const used = await upload(a);
    await post(a, { status: "elsewhere", media_ids: [used.id] });
    await edit(a, s.id, { status: "x", media_ids: [used.id] }, 422);
    await edit(a, s.id, { status: "x", media_ids: [m1.id], media_attributes: [{ id: m2.id, description: "no" }] }, 422);
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`)).media_attachments).toHaveLength(2);

    // Deleting the status takes its versions and every file, the removed ones included.
    await edit(a, s.id, { status: "none", media_ids: [] });
    await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: a.token });
    const left = await env.DB.prepare("SELECT count(*) AS n FROM status_edits WHERE status_id = ?").bind(s.id).first();
    expect(left).toEqual({ n: 0 });
    await expect.poll(async () => await env.MEDIA.head(key)).toBeNull();
  });
});

describe("polls in an edit", () => {
  it("new options reset the votes; the same options keep them; no poll removes it", async () => {
    const a = await registerUser();
    const voter = await registerUser();
    const s = valid(
      StatusSchema,
      await post(a, { status: "which?", poll: { options: ["tea", "coffee"], expires_in: 3600 } }),
    );
    const pollId = s.poll!.id;
    await json(`/api/v1/polls/${pollId}/votes`, { token: voter.token, body: { choices: [1] } });
    const kept = valid(
      StatusSchema,
      await edit(a, s.id, { status: "which one?", poll: { options: ["tea", "coffee"], expires_in: 3600 } }),
    );
    expect(kept.poll).toMatchObject({ votes_count: 1 });
    const reset = valid(
      StatusSchema,
      await json(`/api/v1/statuses/${s.id}`, {
        method: "PUT",
        token: a.token,
        body: { status: "which one?", poll: { options: ["tea", "coffee", "water"], expires_in: 3600 } },
      }),
    );
    expect(reset.poll).toMatchObject({
      votes_count: 0,
      options: [{ title: "tea" }, { title: "coffee" }, { title: "water" }],
    });
    const seen = valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`, { token: voter.token }));
    expect(seen.poll).toMatchObject({ voted: false, own_votes: [] });
    // The voter may vote again, on the new options.
    await json(`/api/v1/polls/${pollId}/votes`, { token: voter.token, body: { choices: [2] } });
    expect((await history(s.id)).map((v) => v.poll?.options.map((o) => o.title))).toEqual([
      ["tea", "coffee"],
      ["tea", "coffee"],
      ["tea", "coffee", "water"],
    ]);
    const gone = valid(StatusSchema, await edit(a, s.id, { status: "never mind" }));
    expect(gone.poll).toBeNull();
  });
});

describe("who hears of an edit", () => {
  it("a mention added by an edit is notified once; removed mentions keep their access, silently", async () => {
    const a = await registerUser();
    const b = await registerUser();
    const c = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: `hi @${c.username}`, visibility: "private" }));
    await edit(a, s.id, { status: `hi @${b.username}` });
    await edit(a, s.id, { status: `hi again @${b.username}` });
    const mentions = (await notifications(b)).filter((n) => n.type === "mention");
    expect(mentions.map((n) => n.status!.id)).toEqual([s.id]);
    // B was not a follower: the mention is what lets B see the private status, as a mention at posting does.
    expect(
      valid(StatusSchema, await json(`/api/v1/statuses/${s.id}`, { token: b.token })).mentions.map((m) => m.id),
    ).toEqual([b.id]);
    // C, no longer mentioned, still sees it (Mastodon keeps removed mentions, silent).
    await json(`/api/v1/statuses/${s.id}`, { token: c.token });
  });

  it("those who reblogged get an `update` notification (not those who only favourited), and streams get status.update", async () => {
    const a = await registerUser();
    const booster = await registerUser();
    const fan = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: "before" }));
    await json(`/api/v1/statuses/${s.id}/reblog`, { token: booster.token, body: {} });
    await json(`/api/v1/statuses/${s.id}/favourite`, { token: fan.token, body: {} });
    const ws = await openSocket(`access_token=${a.token}&stream=user`);
    try {
      await edit(a, s.id, { status: "after" });
      const frame = await ws.next((f) => f.event === "status.update");
      expect(valid(StatusSchema, JSON.parse(frame.payload!))).toMatchObject({ id: s.id, content: "after" });
    } finally {
      await ws.close();
    }
    const updates = (await notifications(booster)).filter((n) => n.type === "update");
    expect(updates.map((n) => [n.account.id, n.status!.id, n.status!.content])).toEqual([[a.id, s.id, "after"]]);
    expect((await notifications(fan)).filter((n) => n.type === "update")).toEqual([]);
    expect((await notifications(a)).filter((n) => n.type === "update")).toEqual([]);
  });

  it("hashtags and search follow the new text", async () => {
    const a = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: "about #oldtopic and zebras" }));
    await edit(a, s.id, { status: "about #newtopic and giraffes" });
    const tagged = async (tag: string) =>
      ((await json(`/api/v1/timelines/tag/${tag}`, { token: a.token })) as { id: string }[]).map((x) => x.id);
    expect(await tagged("oldtopic")).not.toContain(s.id);
    expect(await tagged("newtopic")).toContain(s.id);
    const found = async (q: string) =>
      ((await json(`/api/v2/search?q=${q}&type=statuses`, { token: a.token })).statuses as { id: string }[]).map(
        (x) => x.id,
      );
    expect(await found("giraffes")).toContain(s.id);
    expect(await found("zebras")).not.toContain(s.id);
  });
});

describe("advertised", () => {
  it("nodeinfo and the instance list `editing` (Pleroma-FE shows Edit only then)", async () => {
    const links = await json("/.well-known/nodeinfo");
    for (const l of links.links as { href: string }[]) {
      const doc = await json(new URL(l.href).pathname);
      expect(doc.metadata.features).toContain("editing");
    }
    const instance = await json("/api/v1/instance");
    expect(instance.pleroma.metadata.features).toContain("editing");
  });
});
