/**
 * Hashtags (issue 29): the Tag entity (`/api/v1/tags/:name`), following and unfollowing tags, the followed tags,
 * and what following does: public posts with the tag, local and arriving from other servers, join the home
 * timeline and the user stream.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { newId } from "../src/db/ids";
import { TrendTagSchema } from "../src/schemas/instance";
import { StatusSchema } from "../src/schemas/status";
import { FOLLOWED_TAGS_MAX } from "../src/services/followed-tags";
import { call, json, post, registerUser, scopedToken, uniqueName, valid, type TestUser } from "./helpers";
import { expectAccepted, fill, setup, unroute } from "./inbound";
import { A } from "./instances";
import { openSocket, payloads } from "./streams";
import mastodonCreate from "./fixtures/federation/mastodon-create-note.json";

afterEach(unroute);

const tag = (u: TestUser | null, name: string, status = 200) =>
  json(`/api/v1/tags/${name}`, { token: u?.token, status });
const act = (u: TestUser, name: string, action: "follow" | "unfollow", status = 200) =>
  json(`/api/v1/tags/${name}/${action}`, { method: "POST", token: u.token, status });
const home = async (u: TestUser, query = "") =>
  (await json(`/api/v1/timelines/home${query}`, { token: u.token })).map((s: unknown) => valid(StatusSchema, s).id);

describe("the Tag entity", () => {
  it("any well-formed name, with its week counted as trends count; following only for a signed-in viewer", async () => {
    const name = uniqueName("Café");
    const [a, b, viewer] = [await registerUser(), await registerUser(), await registerUser()];
    await post(a, { status: `one #${name}` });
    await post(b, { status: `two #${name.toUpperCase()}` });
    await post(b, { status: `quiet #${name}`, visibility: "unlisted" });
    const anonymous = valid(TrendTagSchema, await tag(null, encodeURIComponent(name)));
    expect(anonymous.name).toBe(name.toLowerCase());
    expect(anonymous.url).toMatch(new RegExp(`/tag/${encodeURIComponent(name.toLowerCase())}$`));
    expect(anonymous.history).toHaveLength(7);
    expect(anonymous.history[0]).toMatchObject({ uses: "2", accounts: "2" });
    expect(anonymous.history.slice(1).every((h) => h.uses === "0")).toBe(true);
    expect(Number(anonymous.history[0].day)).toBe(Math.floor(Date.now() / 86_400_000) * 86_400);
    expect("following" in anonymous).toBe(false);
    // `#` given too, any case: the same tag. Never used: zeros.
    expect(await tag(viewer, encodeURIComponent(`#${name.toUpperCase()}`))).toMatchObject({
      name: name.toLowerCase(),
      following: false,
    });
    expect((await tag(viewer, "neverused")).history.every((h: any) => h.uses === "0")).toBe(true);
    // Not a hashtag: 404.
    for (const bad of ["a-b", "a%20b", "x".repeat(201), "%23"]) await tag(viewer, bad, 404);
  });
});

describe("following hashtags", () => {
  it("follow and unfollow answer the tag; followed_tags lists them newest first with a Link header; scopes hold", async () => {
    const u = await registerUser();
    const [t1, t2, t3] = [uniqueName("t"), uniqueName("t"), uniqueName("t")];
    expect(valid(TrendTagSchema, await act(u, t1, "follow"))).toMatchObject({ name: t1, following: true });
    await act(u, t1, "follow"); // again: no change
    await act(u, t2.toUpperCase(), "follow");
    await act(u, t3, "follow");
    expect((await tag(u, t1)).following).toBe(true);
    const res = await call("/api/v1/followed_tags?limit=2", { token: u.token });
    const first = ((await res.json()) as unknown[]).map((t) => valid(TrendTagSchema, t));
    expect(first.map((t) => [t.name, t.following])).toEqual([
      [t3, true],
      [t2, true],
    ]);
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get("link")!)![1]!;
    expect((await json(next.replace(/^https?:\/\/[^/]+/, ""), { token: u.token })).map((t: any) => t.name)).toEqual([
      t1,
    ]);
    expect(valid(TrendTagSchema, await act(u, t2, "unfollow"))).toMatchObject({ name: t2, following: false });
    await act(u, t2, "unfollow"); // again: no change
    expect((await json("/api/v1/followed_tags", { token: u.token })).map((t: any) => t.name)).toEqual([t3, t1]);
    // Another user's follows are their own.
    const other = await registerUser();
    expect(await json("/api/v1/followed_tags", { token: other.token })).toEqual([]);
    expect((await tag(other, t1)).following).toBe(false);
    // Scopes: following needs write:follows, the list read:follows; anonymous callers are refused.
    await json(`/api/v1/tags/${t1}/follow`, { method: "POST", status: 403 });
    await json(`/api/v1/tags/${t1}/follow`, {
      method: "POST",
      token: await scopedToken(u, "read write:statuses"),
      status: 403,
    });
    await json("/api/v1/followed_tags", { token: await scopedToken(u, "read:statuses"), status: 403 });
    await json("/api/v1/followed_tags", { status: 403 });
    await act(u, "not-a-tag", "follow", 404);
  });

  it(`at most ${FOLLOWED_TAGS_MAX} followed tags: then 422, and following one already followed still answers`, async () => {
    const u = await registerUser();
    const stmt = env.DB.prepare("INSERT INTO followed_tags (id, account_id, tag, created_at) VALUES (?, ?, ?, ?)");
    await env.DB.batch(
      Array.from({ length: FOLLOWED_TAGS_MAX }, (_, i) => stmt.bind(newId(), u.id, `cap${i}`, Date.now())),
    );
    expect((await act(u, "onemore", "follow", 422)).error).toMatch(/at most 100/);
    expect((await act(u, "cap7", "follow")).following).toBe(true);
    await act(u, "cap7", "unfollow");
    expect((await act(u, "onemore", "follow")).following).toBe(true);
  });
});

describe("a followed tag's posts in the home timeline and stream", () => {
  it("public posts with the tag join home (not lists); unlisted, private, reblogs, muted and blocked authors do not", async () => {
    const name = uniqueName("home");
    const [me, stranger, muted, blocked, friend] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await json(`/api/v1/accounts/${muted.id}/mute`, { method: "POST", token: me.token });
    await json(`/api/v1/accounts/${me.id}/block`, { method: "POST", token: blocked.token });
    await json(`/api/v1/accounts/${friend.id}/follow`, { method: "POST", token: me.token });
    const before = await post(stranger, { status: `before following #${name}` });
    await act(me, name, "follow");
    const shown = await post(stranger, { status: `shown #${name.toUpperCase()}` });
    await post(stranger, { status: `unlisted #${name}`, visibility: "unlisted" });
    await post(stranger, { status: `private #${name}`, visibility: "private" });
    await post(muted, { status: `muted #${name}` });
    await post(blocked, { status: `blocked #${name}` });
    await json(`/api/v1/statuses/${shown.id}/reblog`, { method: "POST", token: muted.token });
    const fromFriend = await post(friend, { status: `from a friend #${name}` });
    // The tag's earlier posts count too (home reads pull them); the friend's shows once.
    expect(await home(me)).toEqual([fromFriend.id, shown.id, before.id]);
    expect(await home(me, "?limit=1")).toEqual([fromFriend.id]);
    expect(await home(me, `?max_id=${fromFriend.id}&limit=1`)).toEqual([shown.id]);
    expect(await home(me, `?min_id=${before.id}`)).toEqual([fromFriend.id, shown.id]);
    expect(await home(me, `?since_id=${shown.id}`)).toEqual([fromFriend.id]);
    // Lists show their members only.
    const list = await json("/api/v1/lists", { method: "POST", token: me.token, body: { title: "friends" } });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: me.token,
      body: { account_ids: [friend.id] },
    });
    expect((await json(`/api/v1/timelines/list/${list.id}`, { token: me.token })).map((s: any) => s.id)).toEqual([
      fromFriend.id,
    ]);
    // Nobody else's home changes.
    expect(await home(stranger)).not.toContain(fromFriend.id);
    // Unfollowing the tag takes it out at once.
    await act(me, name, "unfollow");
    expect(await home(me)).toEqual([fromFriend.id]);
  });

  it("the user stream carries a followed tag's new public posts, and nothing else of the tag", async () => {
    const name = uniqueName("live");
    const [me, stranger] = [await registerUser(), await registerUser()];
    await act(me, name, "follow");
    const socket = await openSocket(`stream=user&access_token=${me.token}`);
    await post(stranger, { status: `unlisted #${name}`, visibility: "unlisted" });
    const shown = await post(stranger, { status: `public #${name}` });
    await post(stranger, { status: `untagged` });
    await socket.fence();
    expect(payloads(socket.frames, "update").map((s: any) => valid(StatusSchema, s).id)).toEqual([shown.id]);
    await socket.close();
  });

  it("a remote public post with the tag that arrives joins the home of a local user following the tag", async () => {
    const s = await setup();
    const fan = await registerUser({ instance: A });
    await json("/api/v1/tags/fediverse/follow", { instance: A, method: "POST", token: fan.token });
    const create = fill(mastodonCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, create));
    const [arrived] = (await json("/api/v1/timelines/home", { instance: A, token: fan.token })).map((x: unknown) =>
      valid(StatusSchema, x),
    );
    expect(arrived?.uri).toBe(create.object.id);
    expect(arrived?.tags.map((t: { name: string }) => t.name)).toContain("fediverse");
  });
});
