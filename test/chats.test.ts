import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ChatMessageSchema as Message, ChatSchema as ChatEntity } from "../src/schemas/chat";
import { NotificationSchema } from "../src/schemas/social";
import { call, json, post as postStatus, registerUser, upload, valid, type TestUser } from "./helpers";
import { expectClientsParse, openSocket, payloads } from "./streams";

const ChatSchema = ChatEntity.strict();
const MessageSchema = Message.strict();

const chatWith = async (u: TestUser, other: TestUser | { id: string }) =>
  valid(ChatSchema, await json(`/api/v1/pleroma/chats/by-account-id/${other.id}`, { method: "POST", token: u.token }));
const send = (
  u: TestUser,
  chatId: string,
  body: Record<string, unknown>,
  status = 200,
  headers: Record<string, string> = {},
) => json(`/api/v1/pleroma/chats/${chatId}/messages`, { method: "POST", token: u.token, body, status, headers });
const messages = (u: TestUser, chatId: string, query = "") =>
  json(`/api/v1/pleroma/chats/${chatId}/messages${query}`, { token: u.token });
const getChat = (u: TestUser, chatId: string, status = 200) =>
  json(`/api/v1/pleroma/chats/${chatId}`, { token: u.token, status });

describe("chats", () => {
  it("one chat per pair, created on demand, the same from both sides", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const c1 = await chatWith(a, b);
    expect(c1.account.id).toBe(b.id);
    expect(c1.unread).toBe(0);
    expect(c1.last_message).toBeNull();
    const c2 = await chatWith(a, b);
    expect(c2.id).toBe(c1.id);
    const c3 = await chatWith(b, a);
    expect(c3.id).toBe(c1.id);
    expect(c3.account.id).toBe(a.id);
    // Parallel creation still makes one.
    const [c, d] = [await registerUser(), await registerUser()];
    const made = await Promise.all([chatWith(c, d), chatWith(d, c), chatWith(c, d)]);
    expect(new Set(made.map((m) => m.id)).size).toBe(1);
    // The Pleroma alias, and 404 for an unknown account or yourself.
    const alias = await json(`/api/pleroma/chats/by-account-id/${b.id}`, { method: "POST", token: a.token });
    expect(alias.id).toBe(c1.id);
    await json(`/api/v1/pleroma/chats/by-account-id/01ARZ3NDEKTSV4RRFFQ69G5FAV`, {
      method: "POST",
      token: a.token,
      status: 404,
    });
    await json(`/api/v1/pleroma/chats/by-account-id/${a.id}`, { method: "POST", token: a.token, status: 404 });
    expect((await json(`/api/v1/pleroma/chats/by-account-id/${b.id}`, { method: "POST", status: 403 })).error).toBe(
      "Invalid credentials.",
    );
  });

  it("sends, lists and pages messages; unread per reader; marks read", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    const m1 = valid(MessageSchema, await send(a, chat.id, { content: "hello <b>there</b>\nhttps://example.com/x" }));
    expect(m1).toMatchObject({
      chat_id: chat.id,
      account_id: a.id,
      unread: false,
      attachment: null,
      card: null,
      emojis: [],
    });
    expect(m1.content).toBe(
      'hello &lt;b&gt;there&lt;/b&gt;<br/><a href="https://example.com/x" rel="ugc nofollow noopener noreferrer" target="_blank">https://example.com/x</a>',
    );
    expect(m1).not.toHaveProperty("idempotency_key");
    const m2 = await send(a, chat.id, { content: "second" }, 200, {});
    const m3 = await send(b, chat.id, { content: "reply" });

    const bChat = valid(ChatSchema, await getChat(b, chat.id));
    expect(bChat.unread).toBe(2);
    expect(bChat.last_message!.id).toBe(m3.id);
    expect(bChat.last_message!.unread).toBe(false);
    const aChat = valid(ChatSchema, await getChat(a, chat.id));
    expect(aChat.unread).toBe(1);
    expect(aChat.last_message!.unread).toBe(true);

    const page = (await messages(b, chat.id)) as unknown[];
    expect(page.map((m) => valid(MessageSchema, m).id)).toEqual([m3.id, m2.id, m1.id]);
    expect(page.map((m: any) => m.unread)).toEqual([false, true, true]);
    const res = await call(`/api/v1/pleroma/chats/${chat.id}/messages?limit=2`, { token: b.token });
    const two = (await res.json()) as { id: string }[];
    expect(two.map((m) => m.id)).toEqual([m3.id, m2.id]);
    expect(res.headers.get("link")).toContain(`max_id=${m2.id}`);
    expect((await messages(b, chat.id, `?max_id=${m2.id}`)).map((m: any) => m.id)).toEqual([m1.id]);
    expect((await messages(b, chat.id, `?min_id=${m1.id}&limit=1`)).map((m: any) => m.id)).toEqual([m2.id]);
    expect((await messages(b, chat.id, `?since_id=${m1.id}`)).map((m: any) => m.id)).toEqual([m3.id, m2.id]);

    // One message read, then up to an id.
    const one = valid(
      MessageSchema,
      await json(`/api/v1/pleroma/chats/${chat.id}/messages/${m1.id}/read`, { method: "POST", token: b.token }),
    );
    expect(one.unread).toBe(false);
    expect((await getChat(b, chat.id)).unread).toBe(1);
    const read = valid(
      ChatSchema,
      await json(`/api/v1/pleroma/chats/${chat.id}/read`, {
        method: "POST",
        token: b.token,
        body: { last_read_id: m2.id },
      }),
    );
    expect(read.unread).toBe(0);
    expect(read).not.toHaveProperty("last_message");
    expect((await messages(b, chat.id)).map((m: any) => m.unread)).toEqual([false, false, false]);
    // a's side is untouched.
    expect((await getChat(a, chat.id)).unread).toBe(1);
    await json(`/api/pleroma/chats/${chat.id}/read`, { method: "POST", token: a.token, body: { last_read_id: m3.id } });
    expect((await getChat(a, chat.id)).unread).toBe(0);
  });

  it("lists chats most recently updated first (v1 whole, v2 paged with Link)", async () => {
    const [me, x, y, z] = [await registerUser(), await registerUser(), await registerUser(), await registerUser()];
    const cx = await chatWith(me, x);
    const cy = await chatWith(me, y);
    const cz = await chatWith(me, z);
    await send(x, cx.id, { content: "x" });
    await send(me, cz.id, { content: "z" });
    const list = (await json("/api/v1/pleroma/chats", { token: me.token })) as unknown[];
    expect(list.map((c) => valid(ChatSchema, c).id)).toEqual([cz.id, cx.id, cy.id]);
    expect((list[1] as any).unread).toBe(1);
    expect((list[1] as any).last_message.content).toBe("x");
    const res = await call("/api/v2/pleroma/chats?limit=2", { token: me.token });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any[]).map((c) => c.id)).toEqual([cz.id, cx.id]);
    const next = res.headers.get("link")!.match(/<([^>]+)>; rel="next"/)![1];
    expect(((await json(next.replace("http://localhost", ""), { token: me.token })) as any[]).map((c) => c.id)).toEqual(
      [cy.id],
    );
    // Only your own chats: x sees one, with me.
    expect(((await json("/api/v1/pleroma/chats", { token: x.token })) as any[]).map((c) => c.id)).toEqual([cx.id]);
  });

  it("another pair's chat and its messages do not exist for you", async () => {
    const [a, b, eve] = [await registerUser(), await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    const m = await send(a, chat.id, { content: "secret" });
    await getChat(eve, chat.id, 404);
    await json(`/api/v1/pleroma/chats/${chat.id}/messages`, { token: eve.token, status: 404 });
    await send(eve, chat.id, { content: "hi" }, 404);
    await json(`/api/v1/pleroma/chats/${chat.id}/read`, {
      method: "POST",
      token: eve.token,
      body: { last_read_id: m.id },
      status: 404,
    });
    await json(`/api/v1/pleroma/chats/${chat.id}/messages/${m.id}/read`, {
      method: "POST",
      token: eve.token,
      status: 404,
    });
    await json(`/api/v1/pleroma/chats/${chat.id}/messages/${m.id}`, {
      method: "DELETE",
      token: eve.token,
      status: 404,
    });
    await json(`/api/v1/pleroma/chats/${chat.id}`, { method: "DELETE", token: eve.token, status: 404 });
    await getChat(a, "not-an-id", 404);
    // Still unread for b, still there.
    expect((await getChat(b, chat.id)).unread).toBe(1);
    // b cannot delete a's message.
    await json(`/api/v1/pleroma/chats/${chat.id}/messages/${m.id}`, { method: "DELETE", token: b.token, status: 404 });
    expect((await messages(b, chat.id)).length).toBe(1);
    // Scopes: read:chats / write:chats.
    const readOnly = await registerUser({ scopes: "read" });
    const rc = await chatWith(a, readOnly);
    expect((await call(`/api/v1/pleroma/chats/${rc.id}`, { token: readOnly.token })).status).toBe(200);
    expect(
      (
        await call(`/api/v1/pleroma/chats/${rc.id}/messages`, {
          method: "POST",
          token: readOnly.token,
          body: { content: "x" },
        })
      ).status,
    ).toBe(403);
  });

  it("refuses empty, too long, blocked either way, not accepting, deactivated, foreign media", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    expect((await send(a, chat.id, {}, 400)).error).toBe("no_content");
    expect((await send(a, chat.id, { content: "   " }, 400)).error).toBe("no_content");
    expect((await send(a, chat.id, { content: "x".repeat(5001) }, 400)).error).toBe("content_too_long");
    valid(MessageSchema, await send(a, chat.id, { content: "é".repeat(5000) }));
    const limited = await call(`/api/v1/pleroma/chats/${chat.id}/messages`, {
      method: "POST",
      token: a.token,
      body: { content: "abcdef" },
      vars: { CHAT_LIMIT: "5" },
    });
    expect(limited.status).toBe(400);
    // Foreign media, and media already attached to a status.
    const theirs = await upload(b);
    expect((await send(a, chat.id, { media_id: theirs.id }, 400)).error).toBe("Media not found");
    const used = await upload(a);
    await postStatus(a, { status: "with media", media_ids: [used.id] });
    await send(a, chat.id, { media_id: used.id }, 400);
    // Own media: attached once, then not again, nor to a status.
    const mine = await upload(a);
    const withMedia = valid(MessageSchema, await send(a, chat.id, { media_id: mine.id }));
    expect(withMedia.attachment!.id).toBe(mine.id);
    expect(withMedia.content).toBe("");
    await send(a, chat.id, { media_id: mine.id, content: "again" }, 400);
    const steal = await postStatus(a, { status: "steal", media_ids: [mine.id] }, 422);
    expect(steal.error).toBeTruthy();

    await json(`/api/v1/accounts/${a.id}/block`, { method: "POST", token: b.token });
    expect((await send(a, chat.id, { content: "blocked" }, 400)).error).toMatch(/block/);
    expect((await send(b, chat.id, { content: "blocked" }, 400)).error).toMatch(/block/);
    // The blocker's chat list leaves the chat out.
    expect(((await json("/api/v1/pleroma/chats", { token: b.token })) as any[]).map((c) => c.id)).not.toContain(
      chat.id,
    );
    await json(`/api/v1/accounts/${a.id}/unblock`, { method: "POST", token: b.token });
    valid(MessageSchema, await send(a, chat.id, { content: "unblocked" }));

    const upd = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: b.token,
      body: { accepts_chat_messages: false },
    });
    expect(upd.pleroma.accepts_chat_messages).toBe(false);
    expect((await send(a, chat.id, { content: "hi" }, 400)).error).toBe("recipient does not accept chat messages");
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: b.token,
      body: { accepts_chat_messages: true },
    });
    valid(MessageSchema, await send(a, chat.id, { content: "hi" }));

    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(b.id).run();
    await send(a, chat.id, { content: "gone?" }, 400);
    expect(((await json("/api/v1/pleroma/chats", { token: a.token })) as any[]).map((c) => c.id)).not.toContain(
      chat.id,
    );
    // Nothing half-written: b's unread count matches b's unread messages.
    await env.DB.prepare("UPDATE accounts SET deactivated = 0 WHERE id = ?").bind(b.id).run();
    const bChat = await getChat(b, chat.id);
    const unreadRows = ((await messages(b, chat.id, "?limit=40")) as any[]).filter((m) => m.unread).length;
    expect(bChat.unread).toBe(unreadRows);
  });

  it("hides muted users' chats unless with_muted", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(b, a);
    await send(b, chat.id, { content: "psst" });
    await json(`/api/v1/accounts/${b.id}/mute`, { method: "POST", token: a.token });
    expect(await json("/api/v1/pleroma/chats", { token: a.token })).toEqual([]);
    expect(await json("/api/v2/pleroma/chats", { token: a.token })).toEqual([]);
    expect(
      ((await json("/api/v1/pleroma/chats?with_muted=true", { token: a.token })) as any[]).map((c) => c.id),
    ).toEqual([chat.id]);
    expect(
      ((await json("/api/v2/pleroma/chats?with_muted=true", { token: a.token })) as any[]).map((c) => c.id),
    ).toEqual([chat.id]);
  });

  it("echoes the Idempotency-Key for a few minutes and dedupes a resend meanwhile", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    const first = valid(MessageSchema, await send(a, chat.id, { content: "once" }, 200, { "Idempotency-Key": "k-1" }));
    expect(first.idempotency_key).toBe("k-1");
    const again = await send(a, chat.id, { content: "once" }, 200, { "Idempotency-Key": "k-1" });
    expect(again.id).toBe(first.id);
    expect((await messages(a, chat.id)).length).toBe(1);
    expect((await getChat(b, chat.id)).unread).toBe(1);
    expect((await messages(a, chat.id))[0].idempotency_key).toBe("k-1");
    // Minutes later: no longer echoed, and the key makes a new message.
    await env.DB.prepare("UPDATE chat_messages SET idempotency_at = ? WHERE id = ?")
      .bind(Date.now() - 10 * 60_000, first.id)
      .run();
    const listed = (await messages(a, chat.id))[0];
    expect(listed).not.toHaveProperty("idempotency_key");
    valid(MessageSchema, listed);
    const later = await send(a, chat.id, { content: "once" }, 200, { "Idempotency-Key": "k-1" });
    expect(later.id).not.toBe(first.id);
    expect((await messages(a, chat.id)).length).toBe(2);
  });

  it("keeps unread counts exact under 20 parallel sends", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(i % 4 === 0 ? b : a, chat.id, { content: `m${i}` })),
    );
    const fromA = sent.filter((m) => m.account_id === a.id).length;
    expect((await getChat(b, chat.id)).unread).toBe(fromA);
    expect((await getChat(a, chat.id)).unread).toBe(20 - fromA);
    const page = (await messages(b, chat.id, "?limit=40")) as { id: string }[];
    expect(page.length).toBe(20);
    const ids = page.map((m) => m.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    expect((await getChat(b, chat.id)).last_message.id).toBe(ids[0]);
  });

  it("deletes own messages and chats", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    const m1 = await send(a, chat.id, { content: "one" });
    const m2 = await send(a, chat.id, { content: "two" });
    const gone = valid(
      MessageSchema,
      await json(`/api/v1/pleroma/chats/${chat.id}/messages/${m2.id}`, { method: "DELETE", token: a.token }),
    );
    expect(gone.id).toBe(m2.id);
    expect((await messages(b, chat.id)).map((m: any) => m.id)).toEqual([m1.id]);
    const bChat = await getChat(b, chat.id);
    expect(bChat.unread).toBe(1);
    expect(bChat.last_message.id).toBe(m1.id);
    await json(`/api/v1/pleroma/chats/${chat.id}/messages/${m2.id}`, { method: "DELETE", token: a.token, status: 404 });

    // b deletes the chat: gone from b's side only; a new message brings it back without the old ones.
    const deleted = valid(
      ChatSchema,
      await json(`/api/v1/pleroma/chats/${chat.id}`, { method: "DELETE", token: b.token }),
    );
    expect(deleted.id).toBe(chat.id);
    await getChat(b, chat.id, 404);
    expect(await json("/api/v1/pleroma/chats", { token: b.token })).toEqual([]);
    expect((await messages(a, chat.id)).length).toBe(1);
    const m3 = await send(a, chat.id, { content: "three" });
    const back = await getChat(b, chat.id);
    expect(back.unread).toBe(1);
    expect((await messages(b, chat.id)).map((m: any) => m.id)).toEqual([m3.id]);
  });

  it("chat_mention notifications only with include_types, carrying the message", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    const m = await send(a, chat.id, { content: "ping :nope:" });
    expect(await json("/api/v1/notifications", { token: b.token })).toEqual([]);
    const list = (await json("/api/v1/notifications?include_types[]=pleroma:chat_mention", {
      token: b.token,
    })) as any[];
    expect(list.length).toBe(1);
    const n = valid(NotificationSchema, list[0]);
    expect(n.type).toBe("pleroma:chat_mention");
    expect(n.account.id).toBe(a.id);
    expect(n.chat_message!.id).toBe(m.id);
    valid(MessageSchema, n.chat_message);
    // The sender gets none; a deleted message takes its notification along.
    expect(await json("/api/v1/notifications?include_types[]=pleroma:chat_mention", { token: a.token })).toEqual([]);
    await json(`/api/v1/pleroma/chats/${chat.id}/messages/${m.id}`, { method: "DELETE", token: a.token });
    expect(await json("/api/v1/notifications?include_types[]=pleroma:chat_mention", { token: b.token })).toEqual([]);
  });

  it("never shows chat messages in timelines, search or conversations", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    await send(a, chat.id, { content: "uniquechatword" });
    expect(await json("/api/v1/timelines/home", { token: b.token })).toEqual([]);
    expect(await json("/api/v1/conversations", { token: b.token })).toEqual([]);
    const found = await json("/api/v2/search?q=uniquechatword", { token: b.token });
    expect(found.statuses).toEqual([]);
  });

  it("advertises pleroma_chat_messages and chat_limit", async () => {
    const instance = await json("/api/v1/instance");
    expect(instance.pleroma.metadata.features).toContain("pleroma_chat_messages");
    expect(instance.chat_limit).toBe(5000);
    const links = await json("/.well-known/nodeinfo");
    const href = links.links.find((l: any) => l.href.includes("2.0")).href as string;
    const nodeinfo = await json(new URL(href).pathname);
    expect(nodeinfo.metadata.features).toContain("pleroma_chat_messages");
  });

  it("publishes pleroma:chat_update to both users' user:pleroma_chat and user streams", async () => {
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = await chatWith(a, b);
    const bChat = await openSocket(`stream=user:pleroma_chat&access_token=${b.token}`);
    const bUser = await openSocket(`stream=user&access_token=${b.token}`);
    const aChat = await openSocket(`stream=user:pleroma_chat&access_token=${a.token}`);
    const eve = await registerUser();
    const eveChat = await openSocket(`stream=user:pleroma_chat&access_token=${eve.token}`);
    const m = await send(a, chat.id, { content: "live" });
    const fb = await bChat.next((f) => f.event === "pleroma:chat_update");
    expect(fb.stream).toEqual(["user:pleroma_chat"]);
    const forB = valid(ChatSchema, JSON.parse(fb.payload!));
    expect(forB).toMatchObject({ id: chat.id, unread: 1 });
    expect(forB.account.id).toBe(a.id);
    expect(forB.last_message).toMatchObject({ id: m.id, unread: true, content: "live" });
    const fu = await bUser.next((f) => f.event === "pleroma:chat_update");
    expect(JSON.parse(fu.payload!).id).toBe(chat.id);
    const forA = valid(ChatSchema, JSON.parse((await aChat.next((f) => f.event === "pleroma:chat_update")).payload!));
    expect(forA).toMatchObject({ id: chat.id, unread: 0 });
    expect(forA.account.id).toBe(b.id);
    expect(forA.last_message!.unread).toBe(false);
    await eveChat.fence();
    expect(payloads(eveChat.frames, "pleroma:chat_update")).toEqual([]);
    // The chat stream hears chat updates only (no notification frames).
    await bChat.fence();
    expect(bChat.frames.map((f) => f.event)).toEqual(["pleroma:chat_update"]);
    for (const s of [bChat, bUser, aChat, eveChat]) {
      expectClientsParse(s.frames);
      await s.close();
    }
  });
});
