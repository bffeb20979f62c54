/**
 * Chats between two Starling instances (A and B of test/instances.ts): Pleroma's Create{ChatMessage} out and in,
 * and its Delete. Each chat's writer runs in process per instance (`chatRoomSeam`): the ChatRoom objects run
 * with the pool's bindings, B's database is not theirs.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deliveryWake, drainFederation } from "../src/federation/delivery/wake";
import { ChatWriter } from "../src/objects/chat-room";
import { chatRoomSeam } from "../src/services/chats";
import { ChatMessageSchema, ChatSchema } from "../src/schemas/chat";
import { NotificationSchema } from "../src/schemas/social";
import { json, registerUser, valid, type TestUser } from "./helpers";
import { A, B, instanceFetch, routeFetch, type Instance, type Routed, findRemote } from "./instances";

let routed: Routed;
const realWake = deliveryWake.run;
const pending: Promise<unknown>[] = [];
const writers = new Map<string, ChatWriter>();

beforeEach(() => {
  routed = routeFetch();
  deliveryWake.run = async () => {};
  chatRoomSeam.inProcess = (env, chatId) => {
    const key = `${env.DOMAIN}/${chatId}`;
    if (!writers.has(key)) writers.set(key, new ChatWriter(env, { waitUntil: (p) => pending.push(p) }));
    return writers.get(key)!;
  };
});
afterEach(async () => {
  await settle();
  routed.restore();
  deliveryWake.run = realWake;
  chatRoomSeam.inProcess = null;
});

async function settle() {
  for (let round = 0; round < 5; round++) {
    await Promise.allSettled(pending.splice(0));
    const a = await drainFederation(A.bindings);
    const b = await drainFederation(B.bindings);
    if (a.attempted === 0 && b.attempted === 0 && pending.length === 0) return;
  }
  throw new Error("federation did not settle in 5 rounds");
}

const chats = async (u: TestUser, inst: Instance) =>
  ((await json("/api/v1/pleroma/chats", { instance: inst, token: u.token })) as unknown[]).map((c) =>
    valid(ChatSchema, c),
  );
const messagesOf = async (u: TestUser, inst: Instance, chatId: string) =>
  ((await json(`/api/v1/pleroma/chats/${chatId}/messages`, { instance: inst, token: u.token })) as unknown[]).map((m) =>
    valid(ChatMessageSchema, m),
  );

describe("chats across instances", () => {
  it("A→B and B→A: a message's custom emoji travel as Emoji tags and show with the sender's URL", async () => {
    for (const [from, to] of [
      [A, B],
      [B, A],
    ] as const) {
      const code = `chatemoji${from.domain[0]}${Date.now().toString(36)}`;
      await from.bindings.DB.prepare(
        "INSERT INTO custom_emojis (shortcode, file, visible_in_picker, created_at) VALUES (?, ?, 1, ?)",
      )
        .bind(code, `emoji/${code}.png`, Date.now())
        .run();
      const sender = await registerUser({ instance: from });
      const reader = await registerUser({ instance: to });
      const readerThere = await findRemote(sender, from, reader, to);
      const chat = valid(
        ChatSchema,
        await json(`/api/v1/pleroma/chats/by-account-id/${readerThere.id}`, {
          method: "POST",
          instance: from,
          token: sender.token,
        }),
      );
      const sent = valid(
        ChatMessageSchema,
        await json(`/api/v1/pleroma/chats/${chat.id}/messages`, {
          method: "POST",
          instance: from,
          token: sender.token,
          body: { content: `look :${code}:` },
        }),
      );
      const url = `${from.origin}/media/emoji/${code}.png`;
      expect(sent.emojis).toEqual([{ shortcode: code, url, static_url: url, visible_in_picker: true }]);
      await settle();
      const [received] = await chats(reader, to);
      // Remote emoji are shown as their server sent them, never offered in this instance's picker.
      expect((await messagesOf(reader, to, received.id)).map((m) => m.emojis)).toEqual([
        [{ shortcode: code, url, static_url: url, visible_in_picker: false }],
      ]);
    }
  });

  it("A→B and B→A: Create{ChatMessage} lands in the chat on the other side; Delete removes it", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const bobOnA = await findRemote(alice, A, bob, B);
    const chatA = valid(
      ChatSchema,
      await json(`/api/v1/pleroma/chats/by-account-id/${bobOnA.id}`, {
        method: "POST",
        instance: A,
        token: alice.token,
      }),
    );
    const sent = valid(
      ChatMessageSchema,
      await json(`/api/v1/pleroma/chats/${chatA.id}/messages`, {
        method: "POST",
        instance: A,
        token: alice.token,
        body: { content: "hi <bob> & co" },
      }),
    );
    await settle();

    // The activity went to Bob's inbox only, as Pleroma shapes it.
    const posted = routed.requests.filter(
      (r) => r.method === "POST" && r.url.startsWith("https://b.example/") && r.url.includes("inbox"),
    );
    expect(posted.length).toBeGreaterThan(0);
    const docs = await Promise.all(posted.map((r) => r.clone().json() as Promise<any>));
    const create = docs.find((d) => d.type === "Create" && d.object?.type === "ChatMessage");
    expect(create).toBeTruthy();
    expect(create.to).toEqual(`https://b.example/users/${bob.username}`);
    expect(create.object.attributedTo).toBe(`https://a.example/users/${alice.username}`);
    expect(create.object.content).toBe("hi &lt;bob&gt; &amp; co");

    const onB = await chats(bob, B);
    expect(onB).toHaveLength(1);
    expect(onB[0].account.acct).toBe(`${alice.username}@a.example`);
    expect(onB[0].unread).toBe(1);
    expect(onB[0].last_message!.content).toBe("hi &lt;bob&gt; &amp; co");
    const notes = (
      (await json("/api/v1/notifications?include_types[]=pleroma:chat_mention", {
        instance: B,
        token: bob.token,
      })) as unknown[]
    ).map((n) => valid(NotificationSchema, n));
    expect(notes.map((n) => [n.type, n.chat_message?.content])).toEqual([
      ["pleroma:chat_mention", "hi &lt;bob&gt; &amp; co"],
    ]);

    // A repeated delivery of the same object does not make a second message.
    const delivery = posted[docs.indexOf(create)];
    expect((await instanceFetch(B, delivery.clone())).status).toBeLessThan(300);
    await settle();
    expect(await messagesOf(bob, B, onB[0].id)).toHaveLength(1);
    expect((await chats(bob, B))[0].unread).toBe(1);

    // Bob answers: it reaches Alice's chat on A (the same chat: one per pair).
    valid(
      ChatMessageSchema,
      await json(`/api/v1/pleroma/chats/${onB[0].id}/messages`, {
        method: "POST",
        instance: B,
        token: bob.token,
        body: { content: "hello back" },
      }),
    );
    await settle();
    const onA = await chats(alice, A);
    expect(onA.map((c) => c.id)).toEqual([chatA.id]);
    expect(onA[0].unread).toBe(1);
    expect((await messagesOf(alice, A, chatA.id)).map((m) => m.content)).toEqual([
      "hello back",
      "hi &lt;bob&gt; &amp; co",
    ]);

    // Alice deletes her message: gone on B too.
    await json(`/api/v1/pleroma/chats/${chatA.id}/messages/${sent.id}`, {
      method: "DELETE",
      instance: A,
      token: alice.token,
    });
    await settle();
    expect((await messagesOf(bob, B, onB[0].id)).map((m) => m.content)).toEqual(["hello back"]);
    expect((await chats(bob, B))[0].unread).toBe(0);

    // Bob stops accepting chat messages: B refuses what Alice sends next.
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      instance: B,
      token: bob.token,
      body: { accepts_chat_messages: false },
    });
    await json(`/api/v1/pleroma/chats/${chatA.id}/messages`, {
      method: "POST",
      instance: A,
      token: alice.token,
      body: { content: "still there?" },
    });
    await settle();
    expect((await messagesOf(bob, B, onB[0].id)).map((m) => m.content)).toEqual(["hello back"]);
  });

  it("actors carry Pleroma's capabilities.acceptsChatMessages, and the other instance shows it", async () => {
    const [alice, bob] = [await registerUser({ instance: A }), await registerUser({ instance: B })];
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      instance: B,
      token: bob.token,
      body: { accepts_chat_messages: false },
    });
    const actor = async (u: TestUser, on: Instance) => {
      const res = await instanceFetch(
        on,
        new Request(`${on.origin}/users/${u.username}`, { headers: { Accept: "application/activity+json" } }),
      );
      expect(res.status).toBe(200);
      return res.json<any>();
    };
    expect((await actor(alice, A)).capabilities).toEqual({ acceptsChatMessages: true });
    const bobDoc = await actor(bob, B);
    expect(bobDoc.capabilities).toEqual({ acceptsChatMessages: false });
    expect(JSON.stringify(bobDoc["@context"])).toContain("litepub:acceptsChatMessages");
    // Seen from the other side (not null, as before).
    expect((await findRemote(bob, B, alice, A)).pleroma?.accepts_chat_messages).toBe(true);
    expect((await findRemote(alice, A, bob, B)).pleroma?.accepts_chat_messages).toBe(false);
  });
});
