/**
 * Hardening against hostile input (issue 12): request-sized lists are capped and bound as one JSON parameter
 * (never D1's "too many SQL variables"), path segments are decoded once and malformed ones refused, and reads
 * that grow with the data (context, reaction lists, marking conversations read) are bounded.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newId } from "../src/db/ids";
import { InstanceSchema } from "../src/schemas/instance";
import { ContextSchema, StatusSchema } from "../src/schemas/status";
import { ConversationSchema } from "../src/schemas/social";
import { AccountSchema } from "../src/schemas/account";
import { countingD1 } from "./d1-counter";
import { call, json, post, registerUser, uniqueName, upload, valid, type TestUser } from "./helpers";

/** `n` remote accounts written straight to D1 (registering hundreds of users through the API is slow), optionally followed by `follower`. */
async function remoteAccounts(n: number, follower?: TestUser): Promise<{ id: string; acct: string }[]> {
  const t = Date.now();
  const prefix = uniqueName("r");
  const rows = Array.from({ length: n }, (_, i) => ({ id: newId(t), username: `${prefix}x${i}`, follow: newId(t) }));
  await env.DB.prepare(
    `INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at)
     SELECT json_extract(value, '$.id'), json_extract(value, '$.username'), 'remote.example',
       'https://remote.example/users/' || json_extract(value, '$.username'), 'https://remote.example/@' || json_extract(value, '$.username'), ?1, ?1
     FROM json_each(?2)`,
  )
    .bind(t, JSON.stringify(rows))
    .run();
  if (follower) {
    await env.DB.prepare(
      `INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at)
       SELECT json_extract(value, '$.follow'), ?1, json_extract(value, '$.id'), 1, 0, ?2 FROM json_each(?3)`,
    )
      .bind(follower.id, t, JSON.stringify(rows))
      .run();
  }
  return rows.map((r) => ({ id: r.id, acct: `${r.username}@remote.example` }));
}

const expectError = async (res: Response, status: number) => {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await res.json()) as any;
  expect(typeof body.error).toBe("string");
  return body;
};

describe("lists of ids: capped, and bound as one parameter", () => {
  it("destroy_multiple takes up to 100 ids and answers 400 beyond", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(b, { status: `hey @${a.username}` });
    const notes = await json("/api/v1/notifications", { token: a.token });
    expect(notes).toHaveLength(1);
    const many = [notes[0].id, ...Array.from({ length: 99 }, () => newId())];
    const body = new URLSearchParams(many.map((id): [string, string] => ["ids[]", id]));
    await json("/api/v1/notifications/destroy_multiple", { method: "DELETE", token: a.token, body, status: 200 });
    expect(await json("/api/v1/notifications", { token: a.token })).toEqual([]);
    const tooMany = new URLSearchParams(Array.from({ length: 101 }, (): [string, string] => ["ids[]", newId()]));
    const err = await expectError(
      await call("/api/v1/notifications/destroy_multiple", { method: "DELETE", token: a.token, body: tooMany }),
      400,
    );
    expect(err.error).toMatch(/ids.*at most 100/);
    expect(s.id).toBeTruthy();
  });

  it("a post takes up to 1,000 media (Pleroma's default), at most as configured; 1,001 media ids are a 400, not a 500", async () => {
    const a = await registerUser();
    const [m1, m2] = [await upload(a), await upload(a)];
    await expectError(
      await call("/api/v1/statuses", {
        token: a.token,
        body: { status: "x", media_ids: Array.from({ length: 1001 }, () => newId()) },
      }),
      400,
    );
    // Within the parameter cap but over the configuration: 422, and nothing attached.
    const over = await call("/api/v1/statuses", {
      token: a.token,
      body: { status: "x", media_ids: [m1.id, m2.id] },
      vars: { MAX_MEDIA_ATTACHMENTS: "1" },
    });
    expect((await expectError(over, 422)).error).toBe("Cannot attach more than 1 files");
    const ok = valid(StatusSchema, await post(a, { status: "two", media_ids: [m1.id, m2.id] }));
    expect(ok.media_attachments.map((m: any) => m.id)).toEqual([m1.id, m2.id]);
    // Unknown media among many ids: refused whole.
    await post(a, { status: "x", media_ids: [...Array.from({ length: 999 }, () => newId()), m1.id] }, 422);
    // 1,000 of one's own uploads (copies of one upload's row, made in SQL: uploading 1,000 files adds nothing here).
    const m3 = await upload(a);
    const names = (
      await env.DB.prepare("SELECT name FROM pragma_table_info('media_attachments') WHERE name <> 'id'").all<{
        name: string;
      }>()
    ).results.map((r) => r.name);
    const copies = Array.from({ length: 999 }, () => newId());
    await env.DB.prepare(
      `INSERT INTO media_attachments (id, ${names.join(", ")}) SELECT j.value, ${names.map((n) => `m.${n}`).join(", ")} FROM media_attachments m, json_each(?) j WHERE m.id = ?`,
    )
      .bind(JSON.stringify(copies), m3.id)
      .run();
    const ids = [m3.id, ...copies];
    const many = valid(StatusSchema, await post(a, { status: "a thousand", media_ids: ids }));
    expect(many.media_attachments.map((m: any) => m.id)).toEqual(ids);
    expect(
      valid(StatusSchema, await json(`/api/v1/statuses/${many.id}`, { token: a.token })).media_attachments,
    ).toHaveLength(1000);
  });

  it("the instance reports the media limit where Mastodon and Pleroma clients read it", async () => {
    const instance = valid(InstanceSchema, await json("/api/v1/instance"));
    expect(instance.max_media_attachments).toBe(1000);
    expect(instance.configuration.statuses).toEqual({
      max_characters: instance.max_toot_chars,
      max_media_attachments: 1000,
    });
    const res = await call("/api/v1/instance", { vars: { MAX_MEDIA_ATTACHMENTS: "6" } });
    const configured = valid(InstanceSchema, await res.json());
    expect(configured.max_media_attachments).toBe(6);
    expect(configured.configuration.statuses.max_media_attachments).toBe(6);
    const capped = await call("/api/v1/instance", { vars: { MAX_MEDIA_ATTACHMENTS: "5000" } });
    expect(valid(InstanceSchema, await capped.json()).max_media_attachments).toBe(1000);
  });

  it("a post may mention and tag many accounts and tags (one JSON parameter per list of rows)", async () => {
    const a = await registerUser();
    const others = await remoteAccounts(60);
    const tags = Array.from({ length: 60 }, (_, i) => `#tag${i}`).join(" ");
    const s = valid(
      StatusSchema,
      await post(a, { status: `${others.map((o) => `@${o.acct}`).join(" ")} ${tags}`, visibility: "direct" }),
    );
    expect(s.mentions).toHaveLength(60);
    expect(s.tags).toHaveLength(60);
    expect(s.visibility).toBe("direct");
  });

  it("PATCH conversation recipients takes up to 100 ids and answers 400 beyond", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    await post(a, { status: `psst @${b.username}`, visibility: "direct" });
    const [conv] = await json("/api/v1/conversations", { token: a.token });
    const others = await remoteAccounts(99);
    const ids = [b.id, ...others.map((o) => o.id)];
    const body = new URLSearchParams(ids.map((id): [string, string] => ["recipients[]", id]));
    const updated = valid(
      ConversationSchema,
      await json(`/api/v1/pleroma/conversations/${conv.id}`, { method: "PATCH", token: a.token, body }),
    );
    expect(updated.accounts).toHaveLength(100);
    const tooMany = new URLSearchParams([...ids, newId()].map((id): [string, string] => ["recipients[]", id]));
    await expectError(
      await call(`/api/v1/pleroma/conversations/${conv.id}`, { method: "PATCH", token: a.token, body: tooMany }),
      400,
    );
  });

  it("a list takes 120 followed accounts in one request, refuses unfollowed ones whole, and more than 250", async () => {
    const a = await registerUser();
    const list = await json("/api/v1/lists", { token: a.token, body: { title: "many" } });
    const followed = await remoteAccounts(120, a);
    const strangers = await remoteAccounts(130);
    const refused = await call(`/api/v1/lists/${list.id}/accounts`, {
      token: a.token,
      body: { account_ids: [...followed, ...strangers].map((x) => x.id) },
    });
    await expectError(refused, 422);
    await json(`/api/v1/lists/${list.id}/accounts`, {
      token: a.token,
      body: { account_ids: followed.map((x) => x.id) },
    });
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM list_accounts WHERE list_id = ?")
      .bind(list.id)
      .first<{ n: number }>())!;
    expect(n).toBe(120);
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "DELETE",
      token: a.token,
      body: { account_ids: followed.map((x) => x.id) },
    });
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM list_accounts WHERE list_id = ?")
        .bind(list.id)
        .first<{ n: number }>())!.n,
    ).toBe(0);
    const ids251 = Array.from({ length: 251 }, () => newId());
    await expectError(
      await call(`/api/v1/lists/${list.id}/accounts`, { token: a.token, body: { account_ids: ids251 } }),
      400,
    );
  });
});

describe("path segments are decoded once", () => {
  const bad = ["%", "%25", "%ZZ", "%E0%A4%A"];

  it("answers 400, never 500, for malformed or double-encoded emoji on every reaction path", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const s = await post(b, { status: "react to me" });
    for (const prefix of [
      `/api/v1/pleroma/statuses/${s.id}/reactions`,
      `/api/pleroma/statuses/${s.id}/reactions`,
      `/api/v1/statuses/${s.id}/reactions`,
    ]) {
      for (const emoji of bad) {
        await expectError(await call(`${prefix}/${emoji}`, { token: a.token }), 400);
        await expectError(await call(`${prefix}?emoji=${emoji}`, { token: a.token }), 400);
        if (!prefix.startsWith("/api/v1/statuses")) {
          await expectError(await call(`${prefix}/${emoji}`, { method: "PUT", token: a.token }), 400);
          await expectError(await call(`${prefix}/${emoji}`, { method: "DELETE", token: a.token }), 400);
        }
      }
    }
    // A well-formed encoding is decoded exactly once.
    const reacted = await json(`/api/v1/pleroma/statuses/${s.id}/reactions/${encodeURIComponent("👍")}`, {
      method: "PUT",
      token: a.token,
    });
    expect(reacted.pleroma.emoji_reactions).toEqual([expect.objectContaining({ name: "👍", count: 1, me: true })]);
    const list = await json(`/api/v1/pleroma/statuses/${s.id}/reactions?emoji=${encodeURIComponent("👍")}`, {
      token: a.token,
    });
    expect(list.map((r: any) => [r.name, r.count])).toEqual([["👍", 1]]);
  });

  it("answers 400 for malformed encoding in a media path", async () => {
    await expectError(await call("/media/%E0%A4%A"), 400);
    await expectError(await call("/media/accounts/%ZZ.png"), 400);
    expect((await call("/media/accounts/none%20here.png")).status).toBe(404);
  });
});

describe("reads that grow with the data are bounded", () => {
  it("a context holds at most Mastodon's ancestors and depth for anonymous viewers, more signed in", async () => {
    const a = await registerUser();
    const chain: string[] = [];
    for (let i = 0; i < 42; i++)
      chain.push((await post(a, { status: `link ${i}`, ...(i ? { in_reply_to_id: chain[i - 1] } : {}) })).id);
    const leaf = valid(ContextSchema, await json(`/api/v1/statuses/${chain[41]}/context`));
    expect(leaf.ancestors.map((s: any) => s.id)).toEqual(chain.slice(1, 41));
    const signedIn = valid(ContextSchema, await json(`/api/v1/statuses/${chain[41]}/context`, { token: a.token }));
    expect(signedIn.ancestors.map((s: any) => s.id)).toEqual(chain.slice(0, 41));
    const root = valid(ContextSchema, await json(`/api/v1/statuses/${chain[0]}/context`));
    expect(root.descendants.map((s: any) => s.id)).toEqual(chain.slice(1, 21));
    const rootSignedIn = valid(ContextSchema, await json(`/api/v1/statuses/${chain[0]}/context`, { token: a.token }));
    expect(rootSignedIn.descendants.map((s: any) => s.id)).toEqual(chain.slice(1));
  });

  it("a context's descendants are depth first, replies in order, at most 60 for anonymous viewers", async () => {
    const a = await registerUser();
    const root = await post(a, { status: "root" });
    const r1 = await post(a, { status: "r1", in_reply_to_id: root.id });
    const r2 = await post(a, { status: "r2", in_reply_to_id: root.id });
    const r11 = await post(a, { status: "r11", in_reply_to_id: r1.id });
    const ctx = valid(ContextSchema, await json(`/api/v1/statuses/${root.id}/context`, { token: a.token }));
    expect(ctx.descendants.map((s: any) => s.id)).toEqual([r1.id, r11.id, r2.id]);
    // 61 more direct replies, written straight to D1 as copies of r2: the anonymous answer stops at 60.
    const t = Date.now();
    const ids = Array.from({ length: 61 }, () => newId(t + 1000));
    const { results: columns } = await env.DB.prepare(
      "SELECT name FROM pragma_table_xinfo('statuses') WHERE hidden = 0",
    ).all<{ name: string }>();
    const copy = columns.map(({ name }) =>
      name === "id"
        ? "value"
        : name === "uri" || name === "url"
          ? `${name} || value`
          : name === "search_rowid"
            ? "NULL"
            : name,
    );
    await env.DB.prepare(
      `INSERT INTO statuses (${columns.map((c) => c.name).join(", ")}) SELECT ${copy.join(", ")} FROM statuses, json_each(?) WHERE statuses.id = ?`,
    )
      .bind(JSON.stringify(ids), r2.id)
      .run();
    const anon = valid(ContextSchema, await json(`/api/v1/statuses/${root.id}/context`));
    expect(anon.descendants).toHaveLength(60);
    expect(anon.descendants.slice(0, 3).map((s: any) => s.id)).toEqual([r1.id, r11.id, r2.id]);
  });

  it("a reaction list shows at most 80 accounts per emoji with the exact count", async () => {
    const a = await registerUser();
    const s = await post(a, { status: "popular" });
    const fans = await remoteAccounts(90);
    const t = Date.now();
    await env.DB.prepare(
      `INSERT INTO emoji_reactions (id, account_id, status_id, emoji, created_at) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?, '🎉', ? FROM json_each(?)`,
    )
      .bind(s.id, t, JSON.stringify(fans.map((f) => [newId(t), f.id])))
      .run();
    await json(`/api/v1/pleroma/statuses/${s.id}/reactions/${encodeURIComponent("🎉")}`, {
      method: "PUT",
      token: a.token,
    });
    const [party] = await json(`/api/v1/pleroma/statuses/${s.id}/reactions`, { token: a.token });
    expect(party).toMatchObject({ name: "🎉", count: 91, me: true });
    expect(party.accounts).toHaveLength(80);
    expect(party.accounts[0].id).toBe(fans[0].id);
    // The status's `account_ids` are bounded the same way, in the order of reacting, the count exact.
    const [onStatus] = (await json(`/api/v1/statuses/${s.id}`, { token: a.token })).pleroma.emoji_reactions;
    expect(onStatus).toMatchObject({ name: "🎉", count: 91, me: true, url: null });
    expect(onStatus.account_ids).toEqual(fans.slice(0, 80).map((f) => f.id));
  });

  it("marking every conversation read costs the same round trips for one or many", async () => {
    const trips = async (n: number) => {
      const [a, b] = [await registerUser(), await registerUser()];
      for (let i = 0; i < n; i++) await post(b, { status: `dm ${i} @${a.username}`, visibility: "direct" });
      const counter = countingD1();
      const res = await call("/api/v1/pleroma/conversations/read", {
        method: "POST",
        token: a.token,
        vars: { DB: counter.db } as never,
      });
      const body = (await res.json()) as any[];
      expect(res.status).toBe(200);
      expect(body).toHaveLength(n);
      for (const c of body) expect(valid(ConversationSchema, c).unread).toBe(false);
      return counter.count();
    };
    expect(await trips(4)).toBe(await trips(1));
  });
});

describe("a JSON null is a field not given (issue 45: Soapbox)", () => {
  it("posts, replies and edits with Soapbox's nulls; profile updates and filters with nulls too", async () => {
    const u = await registerUser();
    // Soapbox's compose body, as it sends it for a plain post.
    const soapbox = {
      status: "from Soapbox",
      in_reply_to_id: null,
      quote_id: null,
      media_ids: [],
      sensitive: false,
      spoiler_text: "",
      visibility: "public",
      content_type: "text/plain",
      poll: null,
      scheduled_at: null,
      language: null,
      to: [],
    };
    const first = valid(StatusSchema, await json("/api/v1/statuses", { token: u.token, body: soapbox }));
    expect(first.in_reply_to_id).toBeNull();
    expect(first.poll).toBeNull();
    const reply = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        token: u.token,
        body: { ...soapbox, in_reply_to_id: first.id, status: "reply" },
      }),
    );
    expect(reply.in_reply_to_id).toBe(first.id);
    // Nested nulls too: a poll's optional fields.
    const poll = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        token: u.token,
        body: { ...soapbox, status: "vote", poll: { options: ["a", "b"], expires_in: 600, multiple: null } },
      }),
    );
    expect(poll.poll?.multiple).toBe(false);
    valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", {
        method: "PATCH",
        token: u.token,
        body: { display_name: "S", note: null, locked: null },
      }),
    );
    // What would corrupt data is still refused: a null inside a list of ids.
    const bad = await call("/api/v1/statuses", { token: u.token, body: { status: "x", media_ids: [null] } });
    expect(bad.status).toBe(400);
  });
});
