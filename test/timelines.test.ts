import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { StatusSchema } from "../src/schemas/status";
import { countingD1 } from "./d1-counter";
import { sql, type SQL } from "drizzle-orm";
import { paramsCte } from "../src/services/visibility";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { newId } from "../src/db/ids";
import { accountPage, homePage, publicPage, tagPage } from "../src/services/timelines";
import { call, json, post, registerUser, type TestUser, upload, valid } from "./helpers";

const ids = async (path: string, u?: TestUser) => {
  const list = await json(path, { token: u?.token });
  list.forEach((s: unknown) => valid(StatusSchema, s));
  return list.map((s: any) => s.id) as string[];
};
const follow = (a: TestUser, b: TestUser, body?: Record<string, unknown>) =>
  json(`/api/v1/accounts/${b.id}/follow`, { method: "POST", token: a.token, body });

describe("home timeline", () => {
  it("shows own posts, followed accounts' posts and what is addressed to you — nothing else", async () => {
    const [me, friend, stranger, other] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await follow(me, friend);
    const mine = await post(me, { status: "mine" });
    const pub = await post(friend, { status: "friend public" });
    const priv = await post(friend, { status: "friend private", visibility: "private" });
    const unl = await post(friend, { status: "friend unlisted", visibility: "unlisted" });
    const dmToMe = await post(stranger, { status: `hi @${me.username}`, visibility: "direct" });
    const dmToOther = await post(friend, { status: `psst @${other.username}`, visibility: "direct" });
    const strangerPub = await post(stranger, { status: "stranger public" });
    const home = await ids("/api/v1/timelines/home", me);
    expect(home).toEqual([dmToMe.id, unl.id, priv.id, pub.id, mine.id]);
    expect(home).not.toContain(dmToOther.id);
    expect(home).not.toContain(strangerPub.id);
    // A post after following shows; so do the ones from before, put in by the follow itself (backfill, issue 36).
    const later = await post(stranger, { status: "later" });
    await follow(me, stranger);
    const after = await post(stranger, { status: "after follow" });
    const home2 = await ids("/api/v1/timelines/home", me);
    expect(home2.slice(0, 2)).toEqual([after.id, later.id]);
    expect(home2).toContain(strangerPub.id);
  });

  it("unfollow, block and mute take effect at once; deletes vanish; with_muted shows muted", async () => {
    const [me, a, b, c] = [await registerUser(), await registerUser(), await registerUser(), await registerUser()];
    for (const u of [a, b, c]) await follow(me, u);
    const sa = await post(a, { status: "a" });
    const sb = await post(b, { status: "b" });
    const sc = await post(c, { status: "c" });
    expect(await ids("/api/v1/timelines/home", me)).toEqual([sc.id, sb.id, sa.id]);
    await json(`/api/v1/accounts/${a.id}/unfollow`, { method: "POST", token: me.token });
    await json(`/api/v1/accounts/${b.id}/mute`, { method: "POST", token: me.token });
    await json(`/api/v1/accounts/${me.id}/block`, { method: "POST", token: c.token });
    expect(await ids("/api/v1/timelines/home", me)).toEqual([]);
    await follow(me, a);
    expect(await ids("/api/v1/timelines/home?with_muted=true", me)).toEqual([sb.id, sa.id]);
    await json(`/api/v1/statuses/${sa.id}`, { method: "DELETE", token: a.token });
    expect(await ids("/api/v1/timelines/home?with_muted=true", me)).toEqual([sb.id]);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM home_feed WHERE status_id = ?")
      .bind(sa.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("reblogs reach followers unless they hide the booster's reblogs", async () => {
    const [me, booster, author, quiet] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await follow(me, booster);
    await follow(quiet, booster, { reblogs: false });
    const s = await post(author, { status: "worth sharing" });
    const r = await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: booster.token });
    const home = await json("/api/v1/timelines/home", { token: me.token });
    expect(home.map((x: any) => [x.id, x.reblog?.id])).toEqual([[r.id, s.id]]);
    expect(await ids("/api/v1/timelines/home", quiet)).toEqual([]);
    // A reblog of someone the reader blocks does not show.
    await json(`/api/v1/accounts/${author.id}/block`, { method: "POST", token: me.token });
    expect(await ids("/api/v1/timelines/home", me)).toEqual([]);
  });

  it("applies exclude_visibilities, only_media, reply_visibility, thread mutes and irreversible filters", async () => {
    const [me, a, b] = [await registerUser(), await registerUser(), await registerUser()];
    await follow(me, a);
    const m = await upload(a);
    const withMedia = await post(a, { status: "picture", media_ids: [m.id] });
    const priv = await post(a, { status: "private one", visibility: "private" });
    const other = await post(b, { status: "b's post" });
    const replyToStranger = await post(a, { status: "reply to b", in_reply_to_id: other.id });
    const spoiler = await post(a, { status: "this has SPOILERS inside" });
    const partial = await post(a, { status: "spoilersmith is a word" });
    expect(await ids("/api/v1/timelines/home?only_media=true", me)).toEqual([withMedia.id]);
    expect(
      await ids("/api/v1/timelines/home?exclude_visibilities[]=private&exclude_visibilities[]=public", me),
    ).toEqual([]);
    expect(await ids("/api/v1/timelines/home?reply_visibility=following", me)).not.toContain(replyToStranger.id);
    expect(await ids("/api/v1/timelines/home", me)).toContain(replyToStranger.id);
    await json("/api/v1/filters", {
      method: "POST",
      token: me.token,
      body: { phrase: "spoilers", context: ["home"], irreversible: true, whole_word: true },
    });
    const filtered = await ids("/api/v1/timelines/home", me);
    expect(filtered).not.toContain(spoiler.id);
    expect(filtered).toContain(partial.id);
    await json(`/api/v1/statuses/${priv.id}/mute`, { method: "POST", token: me.token });
    expect(await ids("/api/v1/timelines/home", me)).not.toContain(priv.id);
    // Unknown visibilities are ignored, the known ones still apply.
    expect(
      await ids("/api/v1/timelines/home?exclude_visibilities[]=everyone&exclude_visibilities[]=public", me),
    ).toEqual([]);
  });

  it("pages through every status exactly once, forwards and backwards", async () => {
    const [me, a] = [await registerUser(), await registerUser()];
    await follow(me, a);
    const posted: string[] = [];
    for (let i = 0; i < 7; i++) posted.push((await post(a, { status: `n${i}` })).id);
    const newestFirst = [...posted].reverse();
    const seen: string[] = [];
    let url: string | null = "/api/v1/timelines/home?limit=3";
    while (url) {
      const res = await call(url, { token: me.token });
      const page = ((await res.json()) as any[]).map((s) => s.id);
      if (page.length === 0) break;
      seen.push(...page);
      url = /<([^>]+)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1]?.replace("http://localhost", "") ?? null;
    }
    expect(seen).toEqual(newestFirst);
    expect(await ids(`/api/v1/timelines/home?min_id=${posted[1]}&limit=2`, me)).toEqual([posted[3], posted[2]]);
    expect(await ids(`/api/v1/timelines/home?since_id=${posted[1]}&limit=2`, me)).toEqual([posted[6], posted[5]]);
    const prev = /<([^>]+)>; rel="prev"/.exec(
      (await call(`/api/v1/timelines/home?max_id=${posted[3]}&limit=2`, { token: me.token })).headers.get("link")!,
    )![1];
    expect(new URL(prev).searchParams.get("min_id")).toBe(posted[2]);
  });

  it("applies the auth rules to the token read inside the timeline query", async () => {
    const u = await registerUser();
    await json("/api/v1/timelines/home", { status: 403 });
    expect((await json("/api/v1/timelines/home", { token: "not-a-token", status: 403 })).error).toBe(
      "Invalid credentials.",
    );
    const appOnly = await json("/oauth/token", {
      body: { grant_type: "client_credentials", client_id: u.app.client_id, client_secret: u.app.client_secret },
    });
    expect((await json("/api/v1/timelines/home", { token: appOnly.access_token, status: 403 })).error).toBe(
      "Invalid credentials.",
    );
    const writeOnly = await json("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: u.app.client_id,
        client_secret: u.app.client_secret,
        username: u.username,
        password: u.password,
        scope: "write",
      },
    });
    expect((await json("/api/v1/timelines/home", { token: writeOnly.access_token, status: 403 })).error).toBe(
      "Insufficient permissions: read:statuses.",
    );
    // On public timelines such tokens read as anonymous: no local-only statuses.
    const local = await post(u, { status: "members only", visibility: "local" });
    for (const token of ["not-a-token", appOnly.access_token, writeOnly.access_token]) {
      expect(await ids(`/api/v1/timelines/public?limit=40`, { token } as TestUser)).not.toContain(local.id);
    }
    expect(await ids(`/api/v1/timelines/public?limit=40`, u)).toContain(local.id);
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(u.id).run();
    expect((await json("/api/v1/timelines/public", { token: u.token, status: 403 })).identifier).toBe(
      "account_is_disabled",
    );
  });

  it("a token revoked after a read reads nothing more, though the read bound its account (services/hydrate.ts)", async () => {
    const u = await registerUser();
    const mine = await post(u, { status: "private words", visibility: "private" });
    // Read twice: the second read binds the account the first one found for this token.
    expect(await ids("/api/v1/timelines/home", u)).toContain(mine.id);
    expect(await ids("/api/v1/timelines/home", u)).toContain(mine.id);
    await json("/oauth/revoke", {
      body: { client_id: u.app.client_id, client_secret: u.app.client_secret, token: u.token },
    });
    await json("/api/v1/timelines/home", { token: u.token, status: 403 });
    await json("/api/v1/notifications", { token: u.token, status: 403 });
    // On an optional-auth page the revoked token reads as anonymous: its owner's followers-only post stays out.
    const page = await json(`/api/v1/accounts/${u.id}/statuses`, { token: u.token });
    expect(page.map((s: { id: string }) => s.id)).not.toContain(mine.id);
  });
});

describe("accounts with many followers are pulled, not fanned out", () => {
  it("writes no follower rows, yet followers see the posts, in order, with filters, lists, reblog settings and paging", async () => {
    const [star, fan, quiet, stranger, small] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    const vars = { FANOUT_INLINE_MAX: "1" };
    await follow(fan, star);
    await follow(quiet, star, { reblogs: false });
    await follow(fan, small);
    const asStar = (status: string) =>
      json("/api/v1/statuses", { method: "POST", token: star.token, body: { status }, vars });
    const posted: string[] = [];
    for (let i = 0; i < 3; i++) {
      posted.push((await asStar(`star ${i}`)).id);
      posted.push((await post(small, { status: `small ${i}` })).id);
    }
    const rows = await env.DB.prepare(
      "SELECT count(*) AS n FROM home_feed WHERE status_id IN (SELECT id FROM statuses WHERE account_id = ?) AND account_id <> ?",
    )
      .bind(star.id, star.id)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
    const newestFirst = [...posted].reverse();
    expect(await ids("/api/v1/timelines/home", fan)).toEqual(newestFirst);
    // Paging walks both sources, each status once.
    const seen: string[] = [];
    let url: string | null = "/api/v1/timelines/home?limit=2";
    while (url) {
      const res = await call(url, { token: fan.token });
      const page = ((await res.json()) as any[]).map((x) => x.id);
      if (page.length === 0) break;
      seen.push(...page);
      url = /<([^>]+)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1]?.replace("http://localhost", "") ?? null;
    }
    expect(seen).toEqual(newestFirst);
    expect(await ids(`/api/v1/timelines/home?min_id=${posted[1]}&limit=2`, fan)).toEqual([posted[3], posted[2]]);
    expect(await ids("/api/v1/timelines/home", stranger)).toEqual([]);

    // A reblog by the star reaches followers who show its reblogs only.
    const r = await json(`/api/v1/statuses/${posted[1]}/reblog`, { method: "POST", token: star.token, vars });
    expect((await ids("/api/v1/timelines/home", fan))[0]).toBe(r.id);
    expect(await ids("/api/v1/timelines/home", quiet)).toEqual([posted[4], posted[2], posted[0]]);

    // Lists, filters and unfollows hold for pulled statuses too.
    const list = await json("/api/v1/lists", { method: "POST", token: fan.token, body: { title: "stars" } });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: fan.token,
      body: { account_ids: [star.id] },
    });
    expect(await ids(`/api/v1/timelines/list/${list.id}`, fan)).toEqual([r.id, posted[4], posted[2], posted[0]]);
    await json("/api/v1/filters", {
      method: "POST",
      token: fan.token,
      body: { phrase: "star 2", context: ["home"], irreversible: true, whole_word: false },
    });
    expect(await ids("/api/v1/timelines/home", fan)).not.toContain(posted[4]);
    await json(`/api/v1/accounts/${star.id}/unfollow`, { method: "POST", token: fan.token });
    expect((await ids("/api/v1/timelines/home", fan)).filter((x) => [posted[0], posted[2], r.id].includes(x))).toEqual(
      [],
    );
  });
});

describe("public and tag timelines", () => {
  it("show public posts (and local-only ones to signed-in users), never unlisted, private or direct", async () => {
    const [a, viewer] = [await registerUser(), await registerUser()];
    const tag = `tl${Date.now()}`;
    const pub = await post(a, { status: `public #${tag}` });
    const local = await post(a, { status: `local #${tag}`, visibility: "local" });
    const unl = await post(a, { status: `unlisted #${tag}`, visibility: "unlisted" });
    const priv = await post(a, { status: `private #${tag}`, visibility: "private" });
    const dm = await post(a, { status: `dm #${tag}`, visibility: "direct" });
    const anon = await ids("/api/v1/timelines/public?limit=40");
    expect(anon).toContain(pub.id);
    for (const hidden of [local.id, unl.id, priv.id, dm.id]) expect(anon).not.toContain(hidden);
    const signedIn = await ids("/api/v1/timelines/public?local=true&limit=40", viewer);
    expect(signedIn).toEqual(expect.arrayContaining([pub.id, local.id]));
    for (const hidden of [unl.id, priv.id, dm.id]) expect(signedIn).not.toContain(hidden);
    expect(await ids("/api/v1/timelines/public?remote=true&limit=40", viewer)).not.toContain(pub.id);
    expect(await ids(`/api/v1/timelines/tag/${tag}`)).toEqual([pub.id]);
    expect(await ids(`/api/v1/timelines/tag/${tag.toUpperCase()}`, viewer)).toEqual([local.id, pub.id]);
    const m = await upload(a);
    const media = await post(a, { status: `pic #${tag}`, media_ids: [m.id] });
    expect(await ids(`/api/v1/timelines/tag/${tag}?only_media=true`)).toEqual([media.id]);
    // Reblogs are not in public timelines.
    const r = await json(`/api/v1/statuses/${pub.id}/reblog`, { method: "POST", token: viewer.token });
    expect(await ids("/api/v1/timelines/public?limit=40")).not.toContain(r.id);
  });

  it("honour blocks and mutes of the viewer", async () => {
    const [a, b, viewer] = [await registerUser(), await registerUser(), await registerUser()];
    const tag = `bm${Date.now()}`;
    const sa = await post(a, { status: `#${tag} a` });
    const sb = await post(b, { status: `#${tag} b` });
    await json(`/api/v1/accounts/${a.id}/mute`, { method: "POST", token: viewer.token });
    await json(`/api/v1/accounts/${viewer.id}/block`, { method: "POST", token: b.token });
    expect(await ids(`/api/v1/timelines/tag/${tag}`, viewer)).toEqual([]);
    expect(await ids(`/api/v1/timelines/tag/${tag}?with_muted=true`, viewer)).toEqual([sa.id]);
    expect(await ids(`/api/v1/timelines/tag/${tag}`)).toEqual([sb.id, sa.id]);
  });
});

describe("list timelines", () => {
  it("show the members' posts from the owner's home, and 404 for someone else's list", async () => {
    const [me, inList, notInList, other] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await follow(me, inList);
    await follow(me, notInList);
    const list = await json("/api/v1/lists", { method: "POST", token: me.token, body: { title: "L" } });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: me.token,
      body: { account_ids: [inList.id] },
    });
    const s1 = await post(inList, { status: "in list" });
    await post(notInList, { status: "not in list" });
    expect(await ids(`/api/v1/timelines/list/${list.id}`, me)).toEqual([s1.id]);
    await json(`/api/v1/timelines/list/${list.id}`, { token: other.token, status: 404 });
    // The spec's scope, read:statuses, is enough (as read:lists was); other read scopes are not.
    const scoped = async (scope: string) =>
      (
        await json("/oauth/token", {
          body: {
            grant_type: "password",
            client_id: me.app.client_id,
            client_secret: me.app.client_secret,
            username: me.username,
            password: me.password,
            scope,
          },
        })
      ).access_token;
    expect(
      await json(`/api/v1/timelines/list/${list.id}?limit=5`, { token: await scoped("read:statuses") }).then((r) =>
        r.map((x: any) => x.id),
      ),
    ).toEqual([s1.id]);
    expect(
      await json(`/api/v1/timelines/list/${list.id}`, { token: await scoped("read:lists") }).then((r) => r.length),
    ).toBe(1);
    expect(
      (await json(`/api/v1/timelines/list/${list.id}`, { token: await scoped("read:accounts"), status: 403 })).error,
    ).toBe("Insufficient permissions: read:statuses | read:lists.");
  });
});

describe("account statuses", () => {
  it("filter by media, replies, reblogs, tag and pinned, and show only what the viewer may see", async () => {
    const [a, b, follower, stranger] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await follow(follower, a);
    const other = await post(b, { status: "other" });
    const plain = await post(a, { status: "plain #x" });
    const reply = await post(a, { status: "reply", in_reply_to_id: other.id });
    const self = await post(a, { status: "self thread", in_reply_to_id: plain.id });
    const reblog = await json(`/api/v1/statuses/${other.id}/reblog`, { method: "POST", token: a.token });
    const priv = await post(a, { status: "private", visibility: "private" });
    const m = await upload(a);
    const media = await post(a, { status: "pic", media_ids: [m.id] });
    await json(`/api/v1/statuses/${plain.id}/pin`, { method: "POST", token: a.token });
    await json(`/api/v1/statuses/${media.id}/pin`, { method: "POST", token: a.token });
    const base = `/api/v1/accounts/${a.id}/statuses`;
    expect(await ids(base, follower)).toEqual([media.id, priv.id, reblog.id, self.id, reply.id, plain.id]);
    expect(await ids(base, stranger)).toEqual([media.id, reblog.id, self.id, reply.id, plain.id]);
    expect(await ids(`${base}?only_media=true`, stranger)).toEqual([media.id]);
    expect(await ids(`${base}?exclude_replies=true&exclude_reblogs=true`, stranger)).toEqual([
      media.id,
      self.id,
      plain.id,
    ]);
    expect(await ids(`${base}?tagged=x`, stranger)).toEqual([plain.id]);
    expect(await ids(`${base}?pinned=true`, stranger)).toEqual([media.id, plain.id]);
    expect(await ids(`/api/v1/accounts/${a.username}/statuses?limit=1`, stranger)).toEqual([media.id]);
    await json(`/api/v1/accounts/${a.id}/block`, { method: "POST", token: stranger.token });
    expect(await ids(base, stranger)).toEqual([]);
  });

  it("404 for an unknown account and for a deactivated one", async () => {
    const [a, other] = [await registerUser(), await registerUser()];
    const s = await post(a, { status: "mine" });
    for (const who of ["nobody_here", "@nobody@remote.example", newId(), "@"]) {
      expect(
        (await json(`/api/v1/accounts/${encodeURIComponent(who)}/statuses`, { token: other.token, status: 404 })).error,
      ).toBe("Can't find user");
    }
    expect(await ids(`/api/v1/accounts/${a.username}@localhost/statuses`, other)).toEqual([s.id]);
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(a.id).run();
    for (const path of [`/api/v1/accounts/${a.id}/statuses`, `/api/v1/accounts/${a.username}/statuses`]) {
      expect((await json(path, { token: other.token, status: 404 })).error).toBe("Can't find user");
      expect((await json(path, { status: 404 })).error).toBe("Can't find user");
      // Its own token no longer works at all.
      expect((await json(path, { token: a.token, status: 403 })).identifier).toBe("account_is_disabled");
    }
    await env.DB.prepare("UPDATE accounts SET deactivated = 0 WHERE id = ?").bind(a.id).run();
  });
});

describe("favourites", () => {
  it("lists your favourites newest first; an account's only unless hidden", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s1 = await post(b, { status: "one" });
    const s2 = await post(b, { status: "two" });
    await json(`/api/v1/statuses/${s2.id}/favourite`, { method: "POST", token: a.token });
    await json(`/api/v1/statuses/${s1.id}/favourite`, { method: "POST", token: a.token });
    expect(await ids("/api/v1/favourites", a)).toEqual([s1.id, s2.id]);
    await json(`/api/v1/pleroma/accounts/${a.id}/favourites`, { token: b.token, status: 403 });
    expect(await ids(`/api/v1/pleroma/accounts/${a.id}/favourites`, a)).toEqual([s1.id, s2.id]);
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: a.token,
      body: { hide_favorites: false },
    });
    expect(await ids(`/api/v1/pleroma/accounts/${a.id}/favourites`, b)).toEqual([s1.id, s2.id]);
  });
});

describe("cost", () => {
  it("reads a timeline page in a fixed number of round trips, whatever its size", async () => {
    const [me, a] = [await registerUser(), await registerUser()];
    await follow(me, a);
    for (let i = 0; i < 12; i++)
      await post(a, {
        status: `#cost @${me.username} ${i} https://example.org/${i}`,
        visibility: i % 2 ? "public" : "private",
      });
    const trips = async (path: string) => {
      const counter = countingD1();
      const res = await call(path, { token: me.token, vars: { DB: counter.db } as never });
      expect(res.status).toBe(200);
      return counter.count();
    };
    const one = await trips("/api/v1/timelines/home?limit=1");
    expect(await trips("/api/v1/timelines/home?limit=12&with_muted=true&only_media=false")).toBe(one);
    expect(one).toBe(1); // one statement: the token, the page and everything on it
    // A public or tag page that comes back short probes where its bounded walk stopped: one more (a full page
    // does not; test/timeline-walk.test.ts).
    expect(await trips("/api/v1/timelines/public?limit=12")).toBeLessThanOrEqual(2);
    expect(await trips("/api/v1/timelines/public?limit=1")).toBe(1);
    expect(await trips("/api/v1/timelines/tag/cost?limit=12")).toBeLessThanOrEqual(2);
    expect(await trips("/api/v1/timelines/tag/cost?limit=1")).toBe(1);
    // The list and the account are read in the page's statement too.
    const list = await json("/api/v1/lists", { method: "POST", token: me.token, body: { title: "cost" } });
    await json(`/api/v1/lists/${list.id}/accounts`, { method: "POST", token: me.token, body: { account_ids: [a.id] } });
    expect(await trips(`/api/v1/timelines/list/${list.id}?limit=12`)).toBe(1);
    expect(await trips(`/api/v1/accounts/${a.id}/statuses?limit=12`)).toBe(1);
    expect(await trips(`/api/v1/accounts/${a.username}/statuses?limit=12&pinned=true`)).toBe(1);
  });

  it("serves timeline reads from indexes, without sorting", async () => {
    const dialect = new SQLiteSyncDialect();
    const plan = async (query: SQL) => {
      // Pages run inside the hydration statement, which binds the viewer in a `params` CTE.
      const q = dialect.sqlToQuery(sql`WITH ${paramsCte(me)} ${query}`);
      const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
        .bind(...q.params)
        .all<{ detail: string }>();
      return rows.results.map((r) => r.detail).join(" | ");
    };
    const me = newId();
    const page = { limit: 20, max_id: newId() };
    const home = await plan(homePage(page, {}));
    expect(home).toMatch(/SEARCH h USING (COVERING )?INDEX home_feed_pair \(account_id=\? AND status_id<\?\)/);
    // Home merges the feed walk with pulled statuses of followed accounts (a sort of a few pages of rows).
    expect(home).toContain("statuses_home_pull");
    for (const [query, index] of [
      [publicPage(null, page, {}), "statuses_public_tl"],
      [publicPage(me, page, { local: true }), "statuses_local_tl"],
      [publicPage(me, page, { remote: true }), "statuses_public_tl"],
      [tagPage(me, "x", page, {}), "status_tags_tag"],
      [accountPage(me, newId(), page, {}), "statuses_account"],
    ] as const) {
      const p = await plan(query);
      expect(p).toContain(index);
      expect(p).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    }
  });
});
