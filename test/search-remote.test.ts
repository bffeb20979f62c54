/**
 * What of remote posts is searchable (issue 42: a full-text row is two rows written per stored post): those
 * addressed to a local account or answering a local status on arrival, the others from the first time a local
 * user favourites, boosts, bookmarks, answers or votes in them, once; a remote post nobody here touched is found
 * by its hashtag and its URL, not by its words. Through the inbox and the client API.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { json, registerUser, valid, type TestUser } from "./helpers";
import { A } from "./instances";
import { StatusSchema } from "../src/schemas/status";
import { expectAccepted, fill, followPeer, q, setup, unroute, type Setup } from "./inbound";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";

let s: Setup;
let n = 0;

beforeEach(async () => {
  s = await setup();
  await followPeer(s);
});
afterEach(unroute);

/** A public post by the followed peer with `words` and a hashtag; `mention` addresses the local user. */
async function remotePost(words: string, opts: { mention?: boolean; visibility?: "private" } = {}) {
  const a = fill(mastodonCreate, { ...s.vars, N: `${s.vars.N}s${n++}` });
  const html = `<p>${words} <a href="${s.peer.origin}/tags/Quokka" class="mention hashtag" rel="tag">#<span>Quokka</span></a></p>`;
  a.object.content = a.object.contentMap.en = opts.mention
    ? html.replace("<p>", `<p><a href="${s.target}" class="u-url mention">@${s.user.username}</a> `)
    : html;
  a.object.attachment = [];
  a.object.tag = [
    { type: "Hashtag", href: `${s.peer.origin}/tags/quokka`, name: "#Quokka" },
    ...(opts.mention ? a.object.tag.filter((t: { type: string }) => t.type === "Mention") : []),
  ];
  const audience =
    opts.visibility === "private" ? [`${s.actor}/followers`] : ["https://www.w3.org/ns/activitystreams#Public"];
  for (const o of [a, a.object]) {
    o.to = audience;
    o.cc = opts.mention ? [s.target] : opts.visibility === "private" ? [] : [`${s.actor}/followers`];
  }
  await expectAccepted(await s.peer.send(s.actor, a));
  const [row] = await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", a.object.id);
  expect(row, "stored").toBeDefined();
  return { id: row!.id, uri: a.object.id as string, note: { "@context": a["@context"], ...a.object } };
}

const found = async (words: string, u: TestUser = s.user) => {
  const r = await json(`/api/v2/search?q=${encodeURIComponent(words)}&type=statuses`, { instance: A, token: u.token });
  r.statuses.forEach((x: unknown) => valid(StatusSchema, x));
  return r.statuses.map((x: { id: string }) => x.id) as string[];
};
const ftsRows = async (id: string) =>
  (
    await q<{ n: number }>(
      "SELECT count(*) AS n FROM statuses_fts WHERE rowid = (SELECT search_rowid FROM statuses WHERE id = ?)",
      id,
    )
  )[0]!.n;
const act = (path: string, u: TestUser = s.user, body?: Record<string, unknown>) =>
  json(path, { instance: A, method: "POST", token: u.token, body });

describe("searching remote posts", () => {
  it("a post nobody here touched: not by its words, but by its hashtag and its URL; searchable from a favourite on, once", async () => {
    const word = `wombat${Date.now()}`;
    const p = await remotePost(`plain ${word} words`);
    expect(await found(word)).toEqual([]);
    expect((await q("SELECT search_rowid FROM statuses WHERE id = ?", p.id))[0]).toEqual({ search_rowid: null });
    const tag = await json("/api/v1/timelines/tag/quokka?limit=40", { instance: A, token: s.user.token });
    expect(tag.map((x: { id: string }) => x.id)).toContain(p.id);
    const byUrl = await json(`/api/v2/search?q=${encodeURIComponent(p.uri)}&type=statuses&resolve=true`, {
      instance: A,
      token: s.user.token,
    });
    expect(byUrl.statuses.map((x: { id: string }) => x.id)).toEqual([p.id]);
    // By its web address (not its id): only local statuses' addresses are indexed (migration 0064), so it is
    // fetched from its server, which answers with the post, and found by its id; no second copy is stored.
    const web = p.note.url as string;
    expect(web).not.toBe(p.uri);
    s.peer.objects.set(web, p.note);
    const byWeb = await json(`/api/v2/search?q=${encodeURIComponent(web)}&type=statuses&resolve=true`, {
      instance: A,
      token: s.user.token,
    });
    expect(byWeb.statuses.map((x: { id: string }) => valid(StatusSchema, x).id)).toEqual([p.id]);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", p.uri)).toHaveLength(1);
    // The remote-only timeline shows it (walking every public status past local ones), the local one does not.
    const timeline = async (q: string) =>
      (await json(`/api/v1/timelines/public?${q}&limit=40`, { instance: A, token: s.user.token })).map(
        (x: { id: string }) => x.id,
      );
    expect(await timeline("remote=true")).toContain(p.id);
    expect(await timeline("local=true")).not.toContain(p.id);

    await act(`/api/v1/statuses/${p.id}/favourite`);
    expect(await found(word)).toEqual([p.id]);
    // Undone and done again, then bookmarked: still one full-text row.
    await act(`/api/v1/statuses/${p.id}/unfavourite`);
    await act(`/api/v1/statuses/${p.id}/favourite`);
    await act(`/api/v1/statuses/${p.id}/bookmark`);
    expect(await ftsRows(p.id)).toBe(1);
    expect(await found(word)).toEqual([p.id]);
    // Anyone here who may see it finds it now, signed in or not.
    const other = await registerUser({ instance: A });
    expect(await found(word, other)).toEqual([p.id]);
  });

  it("a boost, a bookmark, a reaction or a local reply makes a post searchable", async () => {
    const stamp = Date.now();
    const boosted = await remotePost(`boosted numbat${stamp}`);
    const bookmarked = await remotePost(`bookmarked numbat${stamp}`);
    const answered = await remotePost(`answered numbat${stamp}`);
    const reacted = await remotePost(`reacted numbat${stamp}`);
    const untouched = await remotePost(`untouched numbat${stamp}`);
    expect(await found(`numbat${stamp}`)).toEqual([]);
    await act(`/api/v1/statuses/${boosted.id}/reblog`);
    await act(`/api/v1/statuses/${bookmarked.id}/bookmark`);
    await json(`/api/v1/pleroma/statuses/${reacted.id}/reactions/${encodeURIComponent("👍")}`, {
      instance: A,
      method: "PUT",
      token: s.user.token,
    });
    const reply = await act("/api/v1/statuses", s.user, { status: "a reply", in_reply_to_id: answered.id });
    valid(StatusSchema, reply);
    const hits = await found(`numbat${stamp}`);
    expect(hits.sort()).toEqual([boosted.id, bookmarked.id, answered.id, reacted.id].sort());
    expect(hits).not.toContain(untouched.id);
    // The local reply itself is searchable, as every local post.
    expect(await found("a reply")).toContain(reply.id);
  });

  it("a post addressed to a local user is searchable on arrival; another user's interaction does not show what they may not see", async () => {
    const stamp = Date.now();
    const mention = await remotePost(`hello dingo${stamp}`, { mention: true });
    expect(await found(`dingo${stamp}`)).toEqual([mention.id]);
    expect(await ftsRows(mention.id)).toBe(1);

    // Followers-only: the follower favourites it (searchable from then on), a stranger still finds nothing.
    const priv = await remotePost(`followers only bilby${stamp}`, { visibility: "private" });
    await act(`/api/v1/statuses/${priv.id}/favourite`);
    expect(await found(`bilby${stamp}`)).toEqual([priv.id]);
    const stranger = await registerUser({ instance: A });
    expect(await found(`bilby${stamp}`, stranger)).toEqual([]);
    // And a stranger cannot make it searchable: the status is not found for them (404), nothing is written.
    const other = await remotePost(`followers only quoll${stamp}`, { visibility: "private" });
    const r = await json(`/api/v1/statuses/${other.id}/favourite`, {
      instance: A,
      method: "POST",
      token: stranger.token,
      status: 404,
    });
    expect(r.error).toBeTruthy();
    expect((await q("SELECT search_rowid FROM statuses WHERE id = ?", other.id))[0]).toEqual({ search_rowid: null });
  });
});
