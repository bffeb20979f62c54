/**
 * Federation-ready data (migration 0012): activity ids on every local activity row, custom emoji per
 * (shortcode, domain) stored with the status, remote counters as reported, `instances` and `fetched_at`.
 * Remote accounts and statuses are written straight into D1, as federation will write them.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newId } from "../src/db/ids";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";
import { BASE, json, post, registerUser, uniqueName, valid, type TestUser } from "./helpers";

const one = async <T = any>(sql: string, ...args: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...args)
    .first<T>();
const act = (u: TestUser, path: string, body?: Record<string, unknown>, method = "POST") =>
  json(path, { method, token: u.token, body });

/** A remote account with the counters its server reported. */
async function remoteAccount(counts = { followers: 0, following: 0, statuses: 0 }) {
  const id = newId();
  const domain = `${uniqueName("r")}.example`;
  const t = Date.now();
  await env.DB.prepare(
    `INSERT INTO accounts (id, username, domain, uri, url, followers_count, following_count, statuses_count, fetched_at, created_at, updated_at)
     VALUES (?, 'far', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      id,
      domain,
      `https://${domain}/users/far`,
      `https://${domain}/@far`,
      counts.followers,
      counts.following,
      counts.statuses,
      t,
      t,
      t,
    )
    .run();
  return { id, domain };
}

/** A public remote status with reported counters and the emoji its server named. */
async function remoteStatus(
  author: { id: string; domain: string },
  opts: { content?: string; emojis?: unknown[]; counts?: [number, number, number] } = {},
) {
  const id = newId();
  const uri = `https://${author.domain}/objects/${id}`;
  const [replies, reblogs, favourites] = opts.counts ?? [0, 0, 0];
  await env.DB.prepare(
    `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, visibility, local, emojis, replies_count, reblogs_count, favourites_count, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'public', 0, ?, ?, ?, ?, ?)`,
  )
    .bind(
      id,
      uri,
      uri,
      author.id,
      id,
      `${uri}#context`,
      opts.content ?? "<p>remote</p>",
      JSON.stringify(opts.emojis ?? []),
      replies,
      reblogs,
      favourites,
      Date.now(),
    )
    .run();
  return id;
}

const actorUri = async (u: TestUser) =>
  (await one<{ uri: string }>("SELECT uri FROM accounts WHERE id = ?", u.id))!.uri;
const rowOf = (table: string, where: string, ...args: unknown[]) =>
  one<{ id: string; uri: string | null }>(`SELECT id, uri FROM ${table} WHERE ${where}`, ...args);

describe("activity ids", () => {
  it("every follow, request, block, favourite, reaction and reblog written through the API has its id, and keeps it", async () => {
    const [a, b, locked, blocked] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    const me = await actorUri(a);
    expect(me).toBe(`${BASE}/users/${a.username}`);
    const far = await remoteAccount();

    await act(a, `/api/v1/accounts/${b.id}/follow`);
    const follow = (await rowOf("follows", "account_id = ? AND target_account_id = ?", a.id, b.id))!;
    expect(follow.uri).toBe(`${me}#follows/${follow.id}`);
    // Following again (changing an option) keeps the row and its id.
    await act(a, `/api/v1/accounts/${b.id}/follow`, { reblogs: false });
    expect(await rowOf("follows", "account_id = ? AND target_account_id = ?", a.id, b.id)).toEqual(follow);

    await act(locked, "/api/v1/accounts/update_credentials", { locked: true }, "PATCH");
    await act(a, `/api/v1/accounts/${locked.id}/follow`);
    const request = (await rowOf("follow_requests", "account_id = ? AND target_account_id = ?", a.id, locked.id))!;
    expect(request.uri).toBe(`${me}#follows/${request.id}`);
    await act(a, `/api/v1/accounts/${locked.id}/follow`, { reblogs: false });
    expect(await rowOf("follow_requests", "account_id = ? AND target_account_id = ?", a.id, locked.id)).toEqual(
      request,
    );
    // Accepting turns the request into the follow it asked for: the same Follow, the same id.
    await act(locked, `/api/v1/follow_requests/${a.id}/authorize`);
    expect((await rowOf("follows", "account_id = ? AND target_account_id = ?", a.id, locked.id))!.uri).toBe(
      request.uri,
    );

    // A remote account gets a request whose id its Accept will name.
    await act(a, `/api/v1/accounts/${far.id}/follow`);
    const remoteRequest = (await rowOf("follow_requests", "account_id = ? AND target_account_id = ?", a.id, far.id))!;
    expect(remoteRequest.uri).toBe(`${me}#follows/${remoteRequest.id}`);

    await act(a, `/api/v1/accounts/${blocked.id}/block`);
    const block = (await rowOf("blocks", "account_id = ? AND target_account_id = ?", a.id, blocked.id))!;
    expect(block.uri).toBe(`${me}#blocks/${block.id}`);

    const s = await post(b, { status: "like me" });
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    const fav = (await rowOf("favourites", "account_id = ? AND status_id = ?", a.id, s.id))!;
    expect(fav.uri).toBe(`${me}#likes/${fav.id}`);
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    expect(await rowOf("favourites", "account_id = ? AND status_id = ?", a.id, s.id)).toEqual(fav);

    await act(a, `/api/v1/pleroma/statuses/${s.id}/reactions/${encodeURIComponent("👍")}`, undefined, "PUT");
    const reaction = (await rowOf("emoji_reactions", "account_id = ? AND status_id = ?", a.id, s.id))!;
    expect(reaction.uri).toBe(`${me}#reactions/${reaction.id}`);

    const reblog = valid(StatusSchema, await act(a, `/api/v1/statuses/${s.id}/reblog`));
    expect(reblog.uri).toBe(`${BASE}/activities/${reblog.id}`);
    expect((await rowOf("statuses", "id = ?", reblog.id))!.uri).toBe(reblog.uri);

    // Undo and redo: a new activity, a new id.
    await act(a, `/api/v1/statuses/${s.id}/unfavourite`);
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    const again = (await rowOf("favourites", "account_id = ? AND status_id = ?", a.id, s.id))!;
    expect(again.id).not.toBe(fav.id);
    expect(again.uri).toBe(`${me}#likes/${again.id}`);

    // The ids are unique: an incoming activity is matched by its id alone.
    await expect(
      env.DB.prepare("INSERT INTO blocks (id, account_id, target_account_id, created_at, uri) VALUES (?, ?, ?, ?, ?)")
        .bind(newId(), b.id, a.id, Date.now(), block.uri)
        .run(),
    ).rejects.toThrow(/UNIQUE/);
  });

  it("imported follows, requests and blocks have their ids too", async () => {
    const [me, a, b] = [await registerUser(), await registerUser(), await registerUser()];
    const far = await remoteAccount();
    const uri = await actorUri(me);
    const list = `${a.username}\nfar@${far.domain}`;
    expect(await act(me, "/api/pleroma/follow_import", { list })).toBe("job started");
    const follow = (await rowOf("follows", "account_id = ? AND target_account_id = ?", me.id, a.id))!;
    expect(follow.uri).toBe(`${uri}#follows/${follow.id}`);
    const request = (await rowOf("follow_requests", "account_id = ? AND target_account_id = ?", me.id, far.id))!;
    expect(request.uri).toBe(`${uri}#follows/${request.id}`);
    expect(await act(me, "/api/pleroma/blocks_import", { list: b.username })).toBe("job started");
    const block = (await rowOf("blocks", "account_id = ? AND target_account_id = ?", me.id, b.id))!;
    expect(block.uri).toBe(`${uri}#blocks/${block.id}`);
  });
});

describe("custom emoji per domain", () => {
  it("a remote status renders its server's emoji, a local status this instance's, whatever the shortcode", async () => {
    const code = `blob${Date.now().toString(36)}`;
    const far = await remoteAccount();
    const remoteUrl = `https://${far.domain}/emoji/${code}.png`;
    const t = Date.now();
    await env.DB.prepare(
      "INSERT INTO custom_emojis (shortcode, domain, file, url, visible_in_picker, created_at) VALUES (?, NULL, ?, NULL, 1, ?), (?, ?, ?, ?, 0, ?)",
    )
      .bind(code, `emoji/${code}.png`, t, code, far.domain, remoteUrl, remoteUrl, t)
      .run();
    // One emoji per (shortcode, domain), the local one included.
    await expect(
      env.DB.prepare("INSERT INTO custom_emojis (shortcode, file, created_at) VALUES (?, 'x.png', ?)")
        .bind(code, t)
        .run(),
    ).rejects.toThrow(/UNIQUE/);
    await expect(
      env.DB.prepare("INSERT INTO custom_emojis (shortcode, domain, file, created_at) VALUES (?, ?, 'x.png', ?)")
        .bind(code, far.domain, t)
        .run(),
    ).rejects.toThrow(/UNIQUE/);

    const a = await registerUser();
    const mine = valid(StatusSchema, await post(a, { status: `local :${code}:` }));
    const localEmoji = {
      shortcode: code,
      url: `${BASE}/media/emoji/${code}.png`,
      static_url: `${BASE}/media/emoji/${code}.png`,
      visible_in_picker: true,
    };
    expect(mine.emojis).toEqual([localEmoji]);
    // Stored with the status: read back, it renders the same.
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${mine.id}`)).emojis).toEqual([localEmoji]);

    const theirs = await remoteStatus(far, {
      content: `<p>remote :${code}:</p>`,
      emojis: [{ shortcode: code, domain: far.domain, file: remoteUrl, visible_in_picker: false }],
    });
    const shown = valid(StatusSchema, await json(`/api/v1/statuses/${theirs}`, { token: a.token }));
    expect(shown.emojis).toEqual([
      { shortcode: code, url: remoteUrl, static_url: remoteUrl, visible_in_picker: false },
    ]);
    // A remote status whose server named no emoji never borrows ours by shortcode.
    const bare = await remoteStatus(far, { content: `<p>remote :${code}:</p>` });
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${bare}`)).emojis).toEqual([]);
    // Both in one page (one hydration): each keeps its own.
    const both = await json(`/api/v1/statuses?ids[]=${mine.id}&ids[]=${theirs}`, { token: a.token });
    expect(both.map((s: any) => s.emojis[0].url)).toEqual([localEmoji.url, remoteUrl]);

    // Reactions take this instance's emoji.
    const reacted = await act(a, `/api/v1/pleroma/statuses/${theirs}/reactions/:${code}:`, undefined, "PUT");
    expect(reacted.pleroma.emoji_reactions).toEqual([
      { name: code, count: 1, me: true, url: localEmoji.url, account_ids: [a.id] },
    ]);
  });

  it("an emoji only another server has is not this instance's: not rendered in a local post, not a reaction", async () => {
    const code = `only${Date.now().toString(36)}`;
    const far = await remoteAccount();
    await env.DB.prepare("INSERT INTO custom_emojis (shortcode, domain, file, url, created_at) VALUES (?, ?, ?, ?, ?)")
      .bind(code, far.domain, `https://${far.domain}/e.png`, `https://${far.domain}/e.png`, Date.now())
      .run();
    const a = await registerUser();
    const s = valid(StatusSchema, await post(a, { status: `hi :${code}:` }));
    expect(s.emojis).toEqual([]);
    await json(`/api/v1/pleroma/statuses/${s.id}/reactions/:${code}:`, { method: "PUT", token: a.token, status: 400 });
  });
});

describe("remote counters", () => {
  it("stay as their server reported through local follows, favourites, reblogs and replies; local counters stay exact", async () => {
    const far = await remoteAccount({ followers: 1234, following: 56, statuses: 789 });
    const theirs = await remoteStatus(far, { counts: [7, 8, 9] });
    const [a, b] = [await registerUser(), await registerUser()];
    // An accepted remote follow of `a` (as an Accept would leave it): counted on the local side.
    await env.DB.prepare(
      "INSERT INTO follows (id, account_id, target_account_id, created_at, uri) VALUES (?, ?, ?, ?, ?)",
    )
      .bind(newId(), far.id, a.id, Date.now(), `https://${far.domain}/follows/${newId()}`)
      .run();

    await act(a, `/api/v1/accounts/${far.id}/follow`);
    await act(a, `/api/v1/accounts/${b.id}/follow`);
    await act(b, `/api/v1/accounts/${a.id}/follow`);
    await act(a, `/api/v1/statuses/${theirs}/favourite`);
    await act(a, `/api/v1/statuses/${theirs}/reblog`);
    const reply = await post(a, { status: "a reply", in_reply_to_id: theirs });
    await act(a, `/api/v1/pleroma/statuses/${theirs}/reactions/${encodeURIComponent("🎉")}`, undefined, "PUT");

    const reported = { followers_count: 1234, following_count: 56, statuses_count: 789 };
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${far.id}`))).toMatchObject(reported);
    expect(valid(StatusSchema, await json(`/api/v1/statuses/${theirs}`, { token: a.token }))).toMatchObject({
      replies_count: 7,
      reblogs_count: 8,
      favourites_count: 9,
      favourited: true,
      reblogged: true,
    });
    // The local side: following b (the remote follow waits for its Accept), followed by b and the remote follower.
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${a.id}`))).toMatchObject({
      followers_count: 2,
      following_count: 1,
      statuses_count: 1,
    });

    // Undoing, unfollowing, blocking and a domain block recount the local side only.
    await act(a, `/api/v1/statuses/${theirs}/unfavourite`);
    await act(a, `/api/v1/statuses/${theirs}/unreblog`);
    await json(`/api/v1/statuses/${reply.id}`, { method: "DELETE", token: a.token });
    await act(a, `/api/v1/accounts/${far.id}/unfollow`);
    await act(a, `/api/v1/accounts/${far.id}/block`);
    await act(a, `/api/v1/accounts/${far.id}/unblock`);
    await act(a, "/api/v1/domain_blocks", { domain: far.domain });
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${far.id}`))).toMatchObject(reported);
    expect(await json(`/api/v1/statuses/${theirs}`, { token: b.token })).toMatchObject({
      replies_count: 7,
      reblogs_count: 8,
      favourites_count: 9,
    });
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${a.id}`))).toMatchObject({
      followers_count: 1,
      following_count: 1,
      statuses_count: 0,
    });

    // Local statuses are still counted from the rows.
    const s = await post(b, { status: "count me" });
    await act(a, `/api/v1/statuses/${s.id}/favourite`);
    await act(a, `/api/v1/statuses/${s.id}/reblog`);
    await post(a, { status: "reply", in_reply_to_id: s.id });
    expect(await json(`/api/v1/statuses/${s.id}`)).toMatchObject({
      replies_count: 1,
      reblogs_count: 1,
      favourites_count: 1,
    });
    expect(await json(`/api/v1/accounts/${b.id}`)).toMatchObject({
      followers_count: 1,
      following_count: 1,
      statuses_count: 1,
    });
  });
});

describe("instances and fetched_at", () => {
  it("keeps one row per server with delivery state, and fetched_at only for fetched accounts", async () => {
    const domain = `${uniqueName("i")}.example`;
    await env.DB.prepare(
      "INSERT INTO instances (domain, shared_inbox, software_name, software_version, created_at) VALUES (?, ?, 'mastodon', '4.3.0', ?)",
    )
      .bind(domain, `https://${domain}/inbox`, Date.now())
      .run();
    expect(
      await one("SELECT failure_count, last_failure_at, last_success_at FROM instances WHERE domain = ?", domain),
    ).toEqual({
      failure_count: 0,
      last_failure_at: null,
      last_success_at: null,
    });
    await expect(
      env.DB.prepare("INSERT INTO instances (domain, created_at) VALUES (?, ?)").bind(domain, Date.now()).run(),
    ).rejects.toThrow(/UNIQUE/);
    const a = await registerUser();
    expect((await one("SELECT fetched_at FROM accounts WHERE id = ?", a.id))!.fetched_at).toBeNull();
    const far = await remoteAccount();
    expect((await one("SELECT fetched_at FROM accounts WHERE id = ?", far.id))!.fetched_at).toEqual(expect.any(Number));
  });
});
