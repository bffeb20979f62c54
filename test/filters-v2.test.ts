/** Mastodon v2 filters: a title, several keywords, named statuses; the v1 view of them; matching. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FilterKeywordSchema, FilterV2Schema } from "../src/schemas/filter";
import { FilterSchema } from "../src/schemas/social";
import { StatusSchema } from "../src/schemas/status";
import { MAX_KEYWORDS, MAX_KEYWORDS_PER_FILTER } from "../src/services/filters";
import { json, registerUser, valid, type TestUser } from "./helpers";

const Filter = FilterV2Schema.strict();
const V1 = FilterSchema.strict();

const post = (path: string, user: TestUser, body: Record<string, unknown> = {}, status = 200) =>
  json(path, { method: "POST", token: user.token, body, status });
const put = (path: string, user: TestUser, body: Record<string, unknown> = {}, status = 200) =>
  json(path, { method: "PUT", token: user.token, body, status });
const del = (path: string, user: TestUser, status = 200) => json(path, { method: "DELETE", token: user.token, status });
const ids = async (path: string, user: TestUser) =>
  ((await json(path, { token: user.token })) as { id: string }[]).map((s) => s.id);

describe("v2 filters", () => {
  it("keep their title and several keywords, changed through keywords_attributes", async () => {
    const u = await registerUser();
    const f = valid(
      Filter,
      await post("/api/v2/filters", u, {
        title: "spoilers",
        context: ["home", "public"],
        keywords_attributes: [{ keyword: "colour" }, { keyword: "ending", whole_word: false }],
      }),
    );
    expect(f.title).toBe("spoilers");
    expect(f.keywords.map((k) => [k.keyword, k.whole_word])).toEqual([
      ["colour", true],
      ["ending", false],
    ]);
    expect(f.statuses).toEqual([]);
    expect(await json(`/api/v2/filters/${f.id}`, { token: u.token })).toEqual(f);
    expect(await json("/api/v2/filters", { token: u.token })).toEqual([f]);

    // A form with indexed entries (Rails' `[0][keyword]`): add one, change one, remove one.
    const [colour, ending] = f.keywords;
    const form = new URLSearchParams([
      ["title", "plot"],
      ["keywords_attributes[0][keyword]", "twist"],
      ["keywords_attributes[1][id]", colour!.id],
      ["keywords_attributes[1][keyword]", "color"],
      ["keywords_attributes[1][whole_word]", "false"],
      ["keywords_attributes[2][id]", ending!.id],
      ["keywords_attributes[2][_destroy]", "true"],
    ]);
    const changed = valid(Filter, await json(`/api/v2/filters/${f.id}`, { method: "PUT", token: u.token, body: form }));
    expect(changed.title).toBe("plot");
    expect(changed.context).toEqual(["home", "public"]);
    expect(changed.keywords.map((k) => [k.id === colour!.id, k.keyword, k.whole_word])).toEqual([
      [true, "color", false],
      [false, "twist", true],
    ]);
    // Deleting the filter takes its keywords.
    await del(`/api/v2/filters/${f.id}`, u);
    await json(`/api/v2/filters/${f.id}`, { token: u.token, status: 404 });
    await json(`/api/v2/filter_keywords/${colour!.id}`, { token: u.token, status: 404 });
    const left = await env.DB.prepare("SELECT count(*) AS n FROM filter_keywords WHERE filter_id = ?")
      .bind(f.id)
      .first();
    expect(left).toEqual({ n: 0 });
  });

  it("manage keywords through the keyword endpoints", async () => {
    const [u, other] = [await registerUser(), await registerUser()];
    const f = await post("/api/v2/filters", u, { title: "empty for now", context: ["home"] });
    expect(f.keywords).toEqual([]);
    const a = valid(FilterKeywordSchema, await post(`/api/v2/filters/${f.id}/keywords`, u, { keyword: "alpha" }));
    const b = await post(`/api/v2/filters/${f.id}/keywords`, u, { keyword: "beta", whole_word: false });
    expect(b).toMatchObject({ keyword: "beta", whole_word: false });
    expect(await json(`/api/v2/filters/${f.id}/keywords`, { token: u.token })).toEqual([a, b]);
    expect(await put(`/api/v2/filter_keywords/${a.id}`, u, { whole_word: false })).toEqual({ ...a, whole_word: false });
    await del(`/api/v2/filter_keywords/${b.id}`, u);
    expect(
      (await json(`/api/v2/filters/${f.id}`, { token: u.token })).keywords.map((k: { id: string }) => k.id),
    ).toEqual([a.id]);
    // Another user's filter and keywords do not exist for you.
    await json(`/api/v2/filters/${f.id}/keywords`, { token: other.token, status: 404 });
    await post(`/api/v2/filters/${f.id}/keywords`, other, { keyword: "x" }, 404);
    await put(`/api/v2/filter_keywords/${a.id}`, other, { keyword: "x" }, 404);
    await del(`/api/v2/filter_keywords/${a.id}`, other, 404);
    await put(`/api/v2/filters/${f.id}`, other, { title: "mine" }, 404);
    await put(`/api/v2/filters/${f.id}`, u, { keywords_attributes: [{ id: a.id, _destroy: true }] }, 200);
    // …nor can one of theirs be moved into yours by id.
    const theirs = await post("/api/v2/filters", other, {
      title: "t",
      context: ["home"],
      keywords_attributes: [{ keyword: "theirs" }],
    });
    await put(
      `/api/v2/filters/${f.id}`,
      u,
      { keywords_attributes: [{ id: theirs.keywords[0].id, keyword: "x" }] },
      404,
    );
    expect((await json(`/api/v2/filters/${theirs.id}`, { token: other.token })).keywords[0].keyword).toBe("theirs");
    await del(`/api/v2/filters/${theirs.id}`, u, 404);
  });

  it("refuse bad input with 422 and an error, and cap keywords", async () => {
    const u = await registerUser();
    const bad = async (body: Record<string, unknown>, path = "/api/v2/filters") => {
      const r = await post(path, u, body, 422);
      expect(typeof r.error).toBe("string");
    };
    await bad({ title: " ", context: ["home"] });
    await bad({ title: "t", context: [] });
    await bad({ title: "t", context: ["everywhere"] });
    await bad({ title: "t", context: ["home"], keywords_attributes: [{ keyword: " " }] });
    const many = Array.from({ length: MAX_KEYWORDS_PER_FILTER + 1 }, (_, i) => ({ keyword: `k${i}` }));
    await bad({ title: "t", context: ["home"], keywords_attributes: many });
    expect(await json("/api/v2/filters", { token: u.token })).toEqual([]);
    const f = await post("/api/v2/filters", u, {
      title: "t",
      context: ["home"],
      keywords_attributes: many.slice(0, MAX_KEYWORDS_PER_FILTER),
    });
    await bad({ keyword: "one too many" }, `/api/v2/filters/${f.id}/keywords`);
    await bad({ keyword: "" }, `/api/v2/filters/${f.id}/keywords`);
    await put(`/api/v2/filters/${f.id}`, u, { keywords_attributes: [{ keyword: "over" }] }, 422);
    await put(`/api/v2/filters/${f.id}`, u, { title: "" }, 422);
    expect((await json(`/api/v2/filters/${f.id}`, { token: u.token })).keywords).toHaveLength(MAX_KEYWORDS_PER_FILTER);
    // The account's cap (200 keywords): an edit adding one more is refused whole, its title not written either.
    for (let i = 1; i < MAX_KEYWORDS / MAX_KEYWORDS_PER_FILTER; i++)
      await post("/api/v2/filters", u, {
        title: `full${i}`,
        context: ["home"],
        keywords_attributes: many.slice(0, MAX_KEYWORDS_PER_FILTER),
      });
    const last = await post("/api/v2/filters", u, { title: "last", context: ["home"] });
    await put(`/api/v2/filters/${last.id}`, u, { title: "renamed", keywords_attributes: [{ keyword: "over" }] }, 422);
    expect(await json(`/api/v2/filters/${last.id}`, { token: u.token })).toMatchObject({ title: "last", keywords: [] });
  });

  it("are seen by v1 clients as one filter per keyword", async () => {
    const u = await registerUser();
    const f = await post("/api/v2/filters", u, {
      title: "spoilers",
      context: ["home"],
      filter_action: "hide",
      keywords_attributes: [{ keyword: "colour" }, { keyword: "ending", whole_word: false }],
    });
    const v1 = (await json("/api/v1/filters", { token: u.token })) as unknown[];
    expect(v1.map((x) => valid(V1, x))).toEqual([
      {
        id: f.keywords[0].id,
        phrase: "colour",
        context: ["home"],
        whole_word: true,
        irreversible: true,
        expires_at: null,
      },
      {
        id: f.keywords[1].id,
        phrase: "ending",
        context: ["home"],
        whole_word: false,
        irreversible: true,
        expires_at: null,
      },
    ]);
    // Editing a v1 filter edits its keyword and its filter's context.
    const edited = await put(`/api/v1/filters/${f.keywords[1].id}`, u, {
      phrase: "finale",
      context: ["home", "thread"],
      whole_word: true,
    });
    expect(edited).toMatchObject({ id: f.keywords[1].id, phrase: "finale", context: ["home", "thread"] });
    const after = await json(`/api/v2/filters/${f.id}`, { token: u.token });
    expect(after.title).toBe("spoilers");
    expect(after.context).toEqual(["home", "thread"]);
    expect(after.keywords.map((k: { keyword: string }) => k.keyword)).toEqual(["colour", "finale"]);
    // Deleting a v1 filter removes its keyword; the last one takes the filter.
    await del(`/api/v1/filters/${f.keywords[1].id}`, u);
    expect((await json(`/api/v2/filters/${f.id}`, { token: u.token })).keywords).toHaveLength(1);
    await del(`/api/v1/filters/${f.keywords[0].id}`, u);
    await json(`/api/v2/filters/${f.id}`, { token: u.token, status: 404 });
    // A v1 filter is a v2 filter titled by its phrase, under the same id.
    const one = await post("/api/v1/filters", u, { phrase: "brexit", context: ["public"] });
    const two = await json(`/api/v2/filters/${one.id}`, { token: u.token });
    expect(two).toMatchObject({ id: one.id, title: "brexit", keywords: [{ id: one.id, keyword: "brexit" }] });
  });

  it("match statuses by any keyword or by naming them, in home, public and notifications", async () => {
    const [me, a] = [await registerUser(), await registerUser()];
    await post(`/api/v1/accounts/${a.id}/follow`, me);
    const f = await post("/api/v2/filters", me, {
      title: "weather",
      context: ["home", "public", "notifications"],
      keywords_attributes: [{ keyword: "rain" }, { keyword: "snow" }],
    });
    const rain = await post("/api/v1/statuses", a, { status: "rain again" });
    const snow = await post("/api/v1/statuses", a, { status: `snow for @${me.username}` });
    const sun = await post("/api/v1/statuses", a, { status: "sunny, snowless" });
    const named = await post("/api/v1/statuses", a, { status: "nothing to see" });
    const fs = await post(`/api/v2/filters/${f.id}/statuses`, me, { status_id: named.id });
    expect(fs).toEqual({ id: expect.any(String), status_id: named.id });
    expect(await json(`/api/v2/filters/${f.id}/statuses`, { token: me.token })).toEqual([fs]);
    expect(await json(`/api/v2/filter_statuses/${fs.id}`, { token: me.token })).toEqual(fs);
    const filteredOf = (list: unknown[]) =>
      Object.fromEntries(
        list.map((x) => {
          const s = valid(StatusSchema, x);
          return [s.id, (s.filtered ?? []).map((r) => [r.filter.title, r.keyword_matches, r.status_matches])];
        }),
      );
    const home = filteredOf(await json("/api/v1/timelines/home", { token: me.token }));
    expect(home[rain.id]).toEqual([["weather", ["rain"], null]]);
    expect(home[snow.id]).toEqual([["weather", ["snow"], null]]);
    expect(home[sun.id]).toEqual([]);
    expect(home[named.id]).toEqual([["weather", null, [named.id]]]);
    const pub = filteredOf(await json("/api/v1/timelines/public", { token: me.token }));
    expect(pub[rain.id]).toEqual([["weather", ["rain"], null]]);
    const notes = (await json("/api/v1/notifications", { token: me.token })) as { status?: unknown }[];
    const mention = notes.map((n) => valid(StatusSchema, n.status)).find((s) => s.id === snow.id);
    expect(mention!.filtered!.map((r) => r.keyword_matches)).toEqual([["snow"]]);
    // Status filters: bad input and other users.
    const other = await registerUser();
    await post(`/api/v2/filters/${f.id}/statuses`, other, { status_id: named.id }, 404);
    await json(`/api/v2/filter_statuses/${fs.id}`, { token: other.token, status: 404 });
    await del(`/api/v2/filter_statuses/${fs.id}`, other, 404);
    expect((await post(`/api/v2/filters/${f.id}/statuses`, me, { status_id: "nope" }, 422)).error).toBeTypeOf("string");
    await del(`/api/v2/filter_statuses/${fs.id}`, me);
    expect(await json(`/api/v2/filters/${f.id}/statuses`, { token: me.token })).toEqual([]);
  });

  it("hide drops statuses matching any keyword or named from home; blur and warn only mark them", async () => {
    const [me, a] = [await registerUser(), await registerUser()];
    await post(`/api/v1/accounts/${a.id}/follow`, me);
    const one = await post("/api/v1/statuses", a, { status: "about cats" });
    const two = await post("/api/v1/statuses", a, { status: "about dogs" });
    const three = await post("/api/v1/statuses", a, { status: "about birds" });
    const four = await post("/api/v1/statuses", a, { status: "about fish" });
    const f = await post("/api/v2/filters", me, {
      title: "pets",
      context: ["home"],
      filter_action: "hide",
      keywords_attributes: [{ keyword: "cats" }, { keyword: "dog", whole_word: false }],
    });
    await post(`/api/v2/filters/${f.id}/statuses`, me, { status_id: three.id });
    const home = await ids("/api/v1/timelines/home", me);
    expect(home).not.toContain(one.id);
    expect(home).not.toContain(two.id);
    expect(home).not.toContain(three.id);
    expect(home).toContain(four.id);
    await put(`/api/v2/filters/${f.id}`, me, { filter_action: "blur" });
    const blurred = (await json("/api/v1/timelines/home", { token: me.token })) as {
      id: string;
      filtered: unknown[];
    }[];
    expect(blurred.map((s) => s.id)).toEqual(expect.arrayContaining([one.id, two.id, three.id, four.id]));
    const byId = Object.fromEntries(blurred.map((s) => [s.id, valid(StatusSchema, s).filtered!]));
    expect(byId[two.id]!.map((r) => [r.filter.filter_action, r.keyword_matches])).toEqual([["blur", ["dog"]]]);
    expect(byId[four.id]).toEqual([]);
  });
});
