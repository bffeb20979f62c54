import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { FilterSchema as Filter, ListSchema as List } from "../src/schemas/social";
import worker from "../src/index";
import { eventSinks, type StreamEvent } from "../src/services/events";
import { call, json, registerUser, valid, type TestUser } from "./helpers";

// The shared entity schemas, made strict: no field beyond those of the entity.
const ListSchema = List.strict();
const FilterSchema = Filter.strict();

const post = (path: string, user: TestUser, body: Record<string, unknown> = {}, status = 200) =>
  json(path, { method: "POST", token: user.token, body, status });

async function followAll(user: TestUser, targets: TestUser[]) {
  for (const t of targets) await post(`/api/v1/accounts/${t.id}/follow`, user);
}

describe("lists", () => {
  it("creates, renames, lists and deletes lists", async () => {
    const u = await registerUser();
    const list = valid(ListSchema, await post("/api/v1/lists", u, { title: "Friends" }));
    expect(await json("/api/v1/lists", { token: u.token })).toEqual([list]);
    const renamed = await json(`/api/v1/lists/${list.id}`, {
      method: "PUT",
      token: u.token,
      body: { title: "Close friends" },
    });
    expect(renamed).toEqual({ id: list.id, title: "Close friends" });
    expect(await json(`/api/v1/lists/${list.id}`, { token: u.token })).toEqual(renamed);
    expect((await post("/api/v1/lists", u, { title: "  " }, 400)).error).toMatch(/title/);
    expect((await post("/api/v1/lists", u, {}, 400)).error).toBe("Missing field: title.");
    expect(await json(`/api/v1/lists/${list.id}`, { method: "DELETE", token: u.token })).toEqual({});
    await json(`/api/v1/lists/${list.id}`, { token: u.token, status: 404 });
    expect(await json("/api/v1/lists", { token: u.token })).toEqual([]);
  });

  it("holds followed accounts only, and another user's list does not exist for you", async () => {
    const [u, f1, f2, stranger, other] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await followAll(u, [f1, f2]);
    const list = await post("/api/v1/lists", u, { title: "L" });
    expect(await post(`/api/v1/lists/${list.id}/accounts`, u, { account_ids: [f1.id, f2.id] })).toEqual({});
    const refused = await post(`/api/v1/lists/${list.id}/accounts`, u, { account_ids: [stranger.id] }, 422);
    expect(refused.error).toMatch(/only add accounts you follow/);
    await post(`/api/v1/lists/${list.id}/accounts`, u, {}, 400);

    const members = await json(`/api/v1/lists/${list.id}/accounts`, { token: u.token });
    expect(members.map((m: any) => m.id)).toEqual([f2.id, f1.id]);
    expect((await json(`/api/v1/accounts/${f1.id}/lists`, { token: u.token })).map((l: any) => l.id)).toEqual([
      list.id,
    ]);
    expect(await json(`/api/v1/accounts/${stranger.id}/lists`, { token: u.token })).toEqual([]);

    // Someone else's list: 404 everywhere, nothing changed.
    await json(`/api/v1/lists/${list.id}`, { token: other.token, status: 404 });
    await json(`/api/v1/lists/${list.id}/accounts`, { token: other.token, status: 404 });
    await json(`/api/v1/lists/${list.id}`, { method: "PUT", token: other.token, body: { title: "mine" }, status: 404 });
    await json(`/api/v1/lists/${list.id}`, { method: "DELETE", token: other.token, status: 404 });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "DELETE",
      token: other.token,
      body: { account_ids: [f1.id] },
      status: 404,
    });
    expect((await json(`/api/v1/lists/${list.id}/accounts`, { token: u.token })).length).toBe(2);

    // limit=0 gives everyone without a Link header; a limit pages.
    const all = await call(`/api/v1/lists/${list.id}/accounts?limit=0`, { token: u.token });
    expect(((await all.json()) as unknown[]).length).toBe(2);
    expect(all.headers.get("link")).toBeNull();
    const one = await call(`/api/v1/lists/${list.id}/accounts?limit=1`, { token: u.token });
    expect(((await one.json()) as { id: string }[]).map((m) => m.id)).toEqual([f2.id]);
    expect(one.headers.get("link")).toContain('rel="next"');

    // Unfollowing removes from lists; removing does too.
    await post(`/api/v1/accounts/${f2.id}/unfollow`, u);
    expect((await json(`/api/v1/lists/${list.id}/accounts`, { token: u.token })).map((m: any) => m.id)).toEqual([
      f1.id,
    ]);
    expect(
      await json(`/api/v1/lists/${list.id}/accounts`, {
        method: "DELETE",
        token: u.token,
        body: { account_ids: [f1.id] },
      }),
    ).toEqual({});
    expect(await json(`/api/v1/lists/${list.id}/accounts`, { token: u.token })).toEqual([]);
  });

  it("deleting a list removes its memberships", async () => {
    const [u, f] = [await registerUser(), await registerUser()];
    await followAll(u, [f]);
    const list = await post("/api/v1/lists", u, { title: "gone" });
    await post(`/api/v1/lists/${list.id}/accounts`, u, { "account_ids[]": [f.id] });
    await json(`/api/v1/lists/${list.id}`, { method: "DELETE", token: u.token });
    const left = await env.DB.prepare("SELECT count(*) AS n FROM list_accounts WHERE list_id = ?")
      .bind(list.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("needs the list scopes", async () => {
    const u = await registerUser();
    const token = await json("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: u.app.client_id,
        client_secret: u.app.client_secret,
        username: u.username,
        password: u.password,
        scope: "read:lists",
      },
    });
    await json("/api/v1/lists", { token: token.access_token });
    expect(
      (await json("/api/v1/lists", { method: "POST", token: token.access_token, body: { title: "x" }, status: 403 }))
        .error,
    ).toBe("Insufficient permissions: write:lists.");
  });
});

describe("filters", () => {
  const seen: StreamEvent[] = [];
  const sink = (events: StreamEvent[]) => void seen.push(...events);
  eventSinks.push(sink);
  afterEach(() => void (seen.length = 0));

  it("creates, reads, updates and deletes filters, each change an event", async () => {
    const u = await registerUser();
    const f = valid(
      FilterSchema,
      await post("/api/v1/filters", u, {
        phrase: "spoilers",
        context: ["home", "public"],
        irreversible: true,
        whole_word: false,
      }),
    );
    expect(f).toMatchObject({
      phrase: "spoilers",
      context: ["home", "public"],
      irreversible: true,
      whole_word: false,
      expires_at: null,
    });
    expect(await json("/api/v1/filters", { token: u.token })).toEqual([f]);
    expect(await json(`/api/v1/filters/${f.id}`, { token: u.token })).toEqual(f);

    const form = new URLSearchParams([
      ["phrase", "bad words"],
      ["context[]", "notifications"],
      ["context[]", "thread"],
      ["expires_in", "3600"],
    ]);
    const updated = valid(
      FilterSchema,
      await json(`/api/v1/filters/${f.id}`, { method: "PUT", token: u.token, body: form }),
    );
    expect(updated).toMatchObject({
      phrase: "bad words",
      context: ["notifications", "thread"],
      irreversible: true,
      whole_word: false,
    });
    const expiry = Date.parse(updated.expires_at!);
    expect(expiry).toBeGreaterThan(Date.now() + 3500_000);

    // A blank expires_in on PUT keeps the expiry.
    const kept = await json(`/api/v1/filters/${f.id}`, {
      method: "PUT",
      token: u.token,
      body: { phrase: "bad words", context: ["home"], expires_in: "" },
    });
    expect(kept.expires_at).toBe(updated.expires_at);
    // On POST blank means none.
    expect(
      (await post("/api/v1/filters", u, { phrase: "x", context: ["home"], expires_in: "" })).expires_at,
    ).toBeNull();

    expect(await json(`/api/v1/filters/${f.id}`, { method: "DELETE", token: u.token })).toEqual({});
    await json(`/api/v1/filters/${f.id}`, { token: u.token, status: 404 });
    await expect.poll(() => seen.filter((e) => e.accountId === u.id && e.event === "filters_changed").length).toBe(5);
  });

  it("refuses bad contexts with 422 and other users' filters with 404", async () => {
    const [u, other] = [await registerUser(), await registerUser()];
    expect((await post("/api/v1/filters", u, { phrase: "x", context: ["home", "everywhere"] }, 422)).error).toMatch(
      /everywhere is not a valid context/,
    );
    expect((await post("/api/v1/filters", u, { phrase: "x", context: [] }, 422)).error).toMatch(
      /Context can't be blank/,
    );
    await post("/api/v1/filters", u, { context: ["home"] }, 400);
    await post("/api/v1/filters", u, { phrase: "x", context: ["home"], expires_in: -5 }, 400);
    const f = await post("/api/v1/filters", u, { phrase: "mine", context: ["home"] });
    await json(`/api/v1/filters/${f.id}`, { token: other.token, status: 404 });
    await json(`/api/v1/filters/${f.id}`, {
      method: "PUT",
      token: other.token,
      body: { phrase: "y", context: ["home"] },
      status: 404,
    });
    await json(`/api/v1/filters/${f.id}`, { method: "DELETE", token: other.token, status: 404 });
    expect(await json("/api/v1/filters", { token: other.token })).toEqual([]);
  });

  it("statuses carry the viewer's matching filters in `filtered` (Mastodon 4: how Tusky and Phanpy apply v2 filters)", async () => {
    const { StatusSchema } = await import("../src/schemas/status");
    const [u, author] = [await registerUser(), await registerUser()];
    await followAll(u, [author]);
    const warn = await post("/api/v1/filters", u, { phrase: "Spoiler", context: ["home", "thread"], whole_word: true });
    const hide = await post("/api/v1/filters", u, {
      phrase: "crypto",
      context: ["public"],
      whole_word: false,
      irreversible: true,
    });
    // Profiles are a context too (Mastodon 3.1), as v2 clients send it.
    const profiles = await post("/api/v2/filters", u, {
      title: "ads",
      context: ["account"],
      filter_action: "warn",
      keywords_attributes: [{ keyword: "advert", whole_word: true }],
    });
    expect(profiles.context).toEqual(["account"]);
    const hit = await post("/api/v1/statuses", author, { status: "big spoiler: it was cryptocurrency all along" });
    const cw = await post("/api/v1/statuses", author, { status: "nothing here", spoiler_text: "Spoiler" });
    const partial = await post("/api/v1/statuses", author, { status: "a spoilersport and an advertiser" });
    const own = await post("/api/v1/statuses", u, { status: "my own spoiler" });
    const byId = async (id: string) => valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { token: u.token }));
    const s = await byId(hit.id);
    expect(s.filtered!.map((r) => [r.filter.id, r.filter.filter_action, r.keyword_matches])).toEqual([
      [warn.id, "warn", ["Spoiler"]],
      [hide.id, "hide", ["crypto"]],
    ]);
    expect(s.filtered![0].filter.context).toEqual(["home", "thread"]);
    expect((await byId(cw.id)).filtered!.map((r) => r.filter.id)).toEqual([warn.id]);
    // Whole words only where asked: "spoilersport" and "advertiser" match nothing.
    expect((await byId(partial.id)).filtered).toEqual([]);
    // Never on the viewer's own posts, and nothing for anonymous readers or other users.
    expect((await byId(own.id)).filtered).toBeUndefined();
    expect((await json(`/api/v1/statuses/${hit.id}`)).filtered).toBeUndefined();
    expect((await json(`/api/v1/statuses/${hit.id}`, { token: author.token })).filtered).toBeUndefined();
    // Timelines carry it too, and a reblog carries its original's.
    const home = await json("/api/v1/timelines/home", { token: u.token });
    expect(home.find((x: any) => x.id === hit.id).filtered.map((r: any) => r.filter.id)).toEqual([warn.id, hide.id]);
    const reblogger = await registerUser();
    await followAll(u, [reblogger]);
    const rb = await post(`/api/v1/statuses/${hit.id}/reblog`, reblogger);
    const again = await json("/api/v1/timelines/home", { token: u.token });
    expect(again.find((x: any) => x.id === rb.id).filtered.map((r: any) => r.filter.id)).toEqual([warn.id, hide.id]);
  });

  it("keeps Mastodon 4.4's blur action (stored, rendered, on statuses), changes it by v2 only, and ignores unknown actions", async () => {
    const { FilterV2Schema } = await import("../src/schemas/filter");
    const { StatusSchema } = await import("../src/schemas/status");
    const [u, author, other] = [await registerUser(), await registerUser(), await registerUser()];
    const blur = valid(
      FilterV2Schema,
      await post("/api/v2/filters", u, {
        title: "gore",
        context: ["home", "thread"],
        filter_action: "blur",
        keywords_attributes: [{ keyword: "gore", whole_word: true }],
      }),
    );
    expect(blur.filter_action).toBe("blur");
    // The v1 view of a blur filter: not irreversible (the post is shown).
    const v1Id = blur.keywords[0]!.id;
    expect((await json(`/api/v1/filters/${v1Id}`, { token: u.token })).irreversible).toBe(false);
    const hit = await post("/api/v1/statuses", author, { status: "some gore here" });
    const s = valid(StatusSchema, await json(`/api/v1/statuses/${hit.id}`, { token: u.token }));
    expect(s.filtered!.map((r) => [r.filter.id, r.filter.filter_action])).toEqual([[blur.id, "blur"]]);
    // No action given, or one this server does not know: unchanged.
    const v2 = (id: string, body: Record<string, unknown>, token = u.token, status = 200) =>
      json(`/api/v2/filters/${id}`, { method: "PUT", token, body, status });
    expect((await v2(blur.id, { title: "gore", context: ["home"] })).filter_action).toBe("blur");
    expect((await v2(blur.id, { filter_action: "explode" })).filter_action).toBe("blur");
    // A v1 change of other fields keeps it; irreversible wins.
    await json(`/api/v1/filters/${v1Id}`, {
      method: "PUT",
      token: u.token,
      body: { phrase: "gore", context: ["home"] },
    });
    expect((await json(`/api/v2/filters/${blur.id}`, { token: u.token })).filter_action).toBe("blur");
    expect((await v2(blur.id, { filter_action: "hide" })).filter_action).toBe("hide");
    expect((await v2(blur.id, { filter_action: "blur" })).filter_action).toBe("blur");
    expect((await v2(blur.id, { filter_action: "warn" })).filter_action).toBe("warn");
    // Another user's filter: 404, and theirs untouched.
    await v2(blur.id, { filter_action: "blur" }, other.token, 404);
    expect((await json(`/api/v2/filters/${blur.id}`, { token: u.token })).filter_action).toBe("warn");
    // Form bodies too (Phanpy posts a form).
    const form = valid(
      FilterV2Schema,
      await json("/api/v2/filters", {
        method: "POST",
        token: u.token,
        body: new URLSearchParams([
          ["title", "spiders"],
          ["context[]", "public"],
          ["filter_action", "blur"],
        ]),
      }),
    );
    expect(form.filter_action).toBe("blur");
  });

  it("serves a keyword at Mastodon's /api/v2/filters/keywords/:id as at /api/v2/filter_keywords/:id", async () => {
    const [u, other] = [await registerUser(), await registerUser()];
    const f = await post("/api/v2/filters", u, {
      title: "x",
      context: ["home"],
      keywords_attributes: [{ keyword: "kw" }],
    });
    const k = f.keywords[0];
    expect(await json(`/api/v2/filters/keywords/${k.id}`, { token: u.token })).toEqual(k);
    expect(await json(`/api/v2/filter_keywords/${k.id}`, { token: u.token })).toEqual(k);
    const changed = await json(`/api/v2/filters/keywords/${k.id}`, {
      method: "PUT",
      token: u.token,
      body: { keyword: "kw2" },
    });
    expect(changed.keyword).toBe("kw2");
    await json(`/api/v2/filters/keywords/${k.id}`, { token: other.token, status: 404 });
    await json(`/api/v2/filters/keywords/${k.id}`, { method: "DELETE", token: other.token, status: 404 });
    await json(`/api/v2/filters/keywords/${k.id}`, { method: "DELETE", token: u.token });
    expect((await json(`/api/v2/filters/${f.id}`, { token: u.token })).keywords).toEqual([]);
  });

  it("expired filters are not shown, and the cron deletes them and tells the owner's streams", async () => {
    const u = await registerUser();
    const f = await post("/api/v1/filters", u, { phrase: "brief", context: ["home"], expires_in: 60 });
    await env.DB.prepare("UPDATE filters SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, f.id)
      .run();
    expect(await json("/api/v1/filters", { token: u.token })).toEqual([]);
    await json(`/api/v1/filters/${f.id}`, { token: u.token, status: 404 });
    seen.length = 0;
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const row = await env.DB.prepare("SELECT id FROM filters WHERE id = ?").bind(f.id).first();
    expect(row).toBeNull();
    expect(seen).toContainEqual({ accountId: u.id, event: "filters_changed", payload: null });
  });
});

describe("mute expiry by the cron", () => {
  it("deletes mutes past their expiry", async () => {
    const [u, t] = [await registerUser(), await registerUser()];
    await post(`/api/v1/accounts/${t.id}/mute`, u, { expires_in: 60 });
    await env.DB.prepare("UPDATE mutes SET expires_at = ? WHERE account_id = ?")
      .bind(Date.now() - 1, u.id)
      .run();
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await json("/api/v1/mutes", { token: u.token })).toEqual([]);
  });
});
