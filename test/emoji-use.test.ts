/**
 * Custom emoji where users write them (issue 15): `:code:` in local display names, bios and profile fields (saved
 * with the profile, rendered absolute, tagged on the actor and read by the other instance), in chat messages, and
 * reactions in Pleroma 2.6's shape (`url`, `account_ids`). Statuses, spoilers and poll options: emoji-packs.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { db } from "../src/db/client";
import { hydrateEach } from "../src/services/hydrate";
import { AccountSchema } from "../src/schemas/account";
import { ChatMessageSchema, ChatSchema } from "../src/schemas/chat";
import { InstanceSchema } from "../src/schemas/instance";
import { EmojiReactionAccountsSchema, StatusSchema } from "../src/schemas/status";
import { countingD1 } from "./d1-counter";
import { call, json, PNG_1PX, post, registerUser, uniqueName, valid, type TestUser } from "./helpers";
import { A, B, federating, type Instance } from "./instances";

const ADMIN_SCOPES = "read write follow push admin";

/** A pack holding one emoji per shortcode, made through the pack API by an admin of `instance`; their urls. */
async function pack(
  codes: string[],
  instance?: Instance,
): Promise<{ name: string; url: (code: string, origin?: string) => string }> {
  const admin = await registerUser({ scopes: ADMIN_SCOPES, instance });
  await (instance?.bindings.DB ?? env.DB)
    .prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?")
    .bind(admin.id)
    .run();
  const name = uniqueName("pk");
  expect(await json(`/api/v1/pleroma/emoji/pack?name=${name}`, { method: "POST", token: admin.token, instance })).toBe(
    "ok",
  );
  for (const code of codes) {
    const f = new FormData();
    f.append("file", new File([PNG_1PX], `${code}.png`, { type: "image/png" }));
    await json(`/api/v1/pleroma/emoji/packs/files?name=${name}`, { token: admin.token, body: f, instance });
  }
  return {
    name,
    url: (code, origin = instance?.origin ?? "http://localhost") => `${origin}/media/emoji/${name}/${code}.png`,
  };
}

const emojiOf = (url: string, shortcode: string, visible = true) => ({
  shortcode,
  url,
  static_url: url,
  visible_in_picker: visible,
});
const byCode = <T extends { shortcode: string }>(list: T[]) =>
  [...list].sort((a, b) => (a.shortcode < b.shortcode ? -1 : 1));

describe("custom emoji in local profiles", () => {
  it("resolves :code: of the display name, bio and field names and values when saved, and renders them absolute", async () => {
    const p = uniqueName("pe");
    const [inName, inBio, inFieldName, inFieldValue] = [`${p}_n`, `${p}_b`, `${p}_fn`, `${p}_fv`];
    const { url } = await pack([inName, inBio, inFieldName, inFieldValue]);
    // A remote server's emoji never stands in for a local one, and unknown shortcodes stay text.
    const remoteOnly = `${p}_r`;
    await env.DB.prepare(
      "INSERT INTO custom_emojis (shortcode, domain, file, url, visible_in_picker, created_at) VALUES (?, 'far.example', ?, ?, 0, ?)",
    )
      .bind(remoteOnly, `https://far.example/${remoteOnly}.png`, `https://far.example/${remoteOnly}.png`, Date.now())
      .run();
    const me = await registerUser();
    const saved = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", {
        method: "PATCH",
        token: me.token,
        body: {
          display_name: `Me :${inName}:`,
          note: `bio :${inBio}: :${remoteOnly}: :nothing_${p}:`,
          fields_attributes: { 0: { name: `:${inFieldName}:`, value: `value :${inFieldValue}:` } },
        },
      }),
    );
    const all = byCode([
      emojiOf(url(inName), inName),
      emojiOf(url(inBio), inBio),
      emojiOf(url(inFieldName), inFieldName),
      emojiOf(url(inFieldValue), inFieldValue),
    ]);
    expect(byCode(saved.emojis)).toEqual(all);
    expect(saved.display_name).toBe(`Me :${inName}:`);
    // The same to the owner, to another user and to anyone; absolute at the origin the instance is configured with.
    const other = await registerUser();
    expect(
      byCode(valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: me.token })).emojis),
    ).toEqual(all);
    expect(
      byCode(valid(AccountSchema, await json(`/api/v1/accounts/${me.id}`, { token: other.token })).emojis),
    ).toEqual(all);
    const elsewhere = valid(
      AccountSchema,
      await json(`/api/v1/accounts/${me.id}`, { vars: { DOMAIN: "emoji.example" } }),
    );
    expect(elsewhere.emojis.find((e) => e.shortcode === inBio)?.url).toBe(url(inBio, "https://emoji.example"));
    // A status embeds the author with its emoji.
    const status = valid(StatusSchema, await post(me, { status: "hi" }));
    expect(byCode(status.account.emojis)).toEqual(all);

    // Changing one part keeps the others' emoji (the bio and fields are unchanged); dropping all empties the list.
    const renamed = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", {
        method: "PATCH",
        token: me.token,
        body: { display_name: "Plain" },
      }),
    );
    expect(byCode(renamed.emojis)).toEqual(all.filter((e) => e.shortcode !== inName));
    // Another setting alone leaves them as they are.
    const locked = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: me.token, body: { locked: true } }),
    );
    expect(byCode(locked.emojis)).toEqual(byCode(renamed.emojis));
    const cleared = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", {
        method: "PATCH",
        token: me.token,
        body: { note: "no emoji", fields_attributes: { 0: { name: "", value: "" } } },
      }),
    );
    expect(cleared.emojis).toEqual([]);
    expect(cleared.fields).toEqual([]);
  });

  it("resolves :code: of the name and bio given at registration", async () => {
    const p = uniqueName("pr");
    const { url } = await pack([`${p}_x`, `${p}_y`]);
    const app = await json("/api/v1/apps", {
      body: { client_name: "reg", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write" },
    });
    const appToken = (
      await json("/oauth/token", {
        body: {
          grant_type: "client_credentials",
          client_id: app.client_id,
          client_secret: app.client_secret,
          scope: "read write",
        },
      })
    ).access_token;
    const username = uniqueName("reg");
    const made = await json("/api/v1/accounts", {
      token: appToken,
      headers: { "cf-connecting-ip": "198.51.100.77" },
      body: {
        username,
        email: `${username}@example.com`,
        password: "correct horse battery",
        agreement: true,
        fullname: `:${p}_x: me`,
        bio: `hello :${p}_y:`,
      },
    });
    const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: made.access_token }));
    expect(byCode(me.emojis)).toEqual([emojiOf(url(`${p}_x`), `${p}_x`), emojiOf(url(`${p}_y`), `${p}_y`)]);
  });

  it("tags the actor document with the profile's emoji, as Mastodon does", async () => {
    const code = uniqueName("pa");
    await pack([code], A);
    const me = await registerUser({ instance: A });
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: me.token,
      instance: A,
      body: { display_name: `:${code}:` },
    });
    const res = await call(`/users/${me.username}`, { instance: A, headers: { Accept: "application/activity+json" } });
    expect(res.status).toBe(200);
    const actor = (await res.json()) as { name: string; tag: unknown };
    expect(actor.name).toBe(`:${code}:`);
    const tags = ([] as Record<string, any>[]).concat(actor.tag as Record<string, any>);
    const emoji = tags.find((t) => t.type === "Emoji");
    expect(emoji).toMatchObject({ name: `:${code}:`, icon: { type: "Image", mediaType: "image/png" } });
    expect(emoji!.icon.url).toMatch(new RegExp(`^https://a\\.example/media/emoji/pk[a-z0-9]+/${code}\\.png$`));
  });
});

describe("profile emoji across instances", () => {
  federating();

  it("A→B and B→A: the other instance shows the profile's emoji as its server sent them", async () => {
    for (const [from, to] of [
      [A, B],
      [B, A],
    ] as const) {
      const code = uniqueName("px");
      const { url } = await pack([code], from);
      const author = await registerUser({ instance: from });
      await json("/api/v1/accounts/update_credentials", {
        method: "PATCH",
        token: author.token,
        instance: from,
        body: { note: `bio :${code}:` },
      });
      const reader = await registerUser({ instance: to });
      const found = await json(
        `/api/v2/search?q=${encodeURIComponent(`@${author.username}@${from.domain}`)}&resolve=true&type=accounts`,
        { instance: to, token: reader.token },
      );
      expect(found.accounts).toHaveLength(1);
      const seen = valid(AccountSchema, found.accounts[0]);
      // Remote emoji keep their server's URL; Starling does not offer them in its picker.
      expect(seen.emojis).toEqual([emojiOf(url(code), code, false)]);
    }
  });
});

describe("custom emoji in chat messages", () => {
  it("resolves :code: of a message in its emojis, on both sides, and leaves unknown ones as text", async () => {
    const code = uniqueName("pc");
    const { url } = await pack([code]);
    const [a, b] = [await registerUser(), await registerUser()];
    const chat = valid(
      ChatSchema,
      await json(`/api/v1/pleroma/chats/by-account-id/${b.id}`, { method: "POST", token: a.token }),
    );
    const sent = valid(
      ChatMessageSchema,
      await json(`/api/v1/pleroma/chats/${chat.id}/messages`, {
        token: a.token,
        body: { content: `hi :${code}: :nope_${code}:` },
      }),
    );
    expect(sent.emojis).toEqual([emojiOf(url(code), code)]);
    const seen = (await json(`/api/v1/pleroma/chats/${chat.id}/messages`, { token: b.token })) as unknown[];
    expect(valid(ChatMessageSchema, seen[0]).emojis).toEqual([emojiOf(url(code), code)]);
    const plain = valid(
      ChatMessageSchema,
      await json(`/api/v1/pleroma/chats/${chat.id}/messages`, { token: a.token, body: { content: "no emoji" } }),
    );
    expect(plain.emojis).toEqual([]);
  });
});

describe("emoji reactions in Pleroma 2.6's shape", () => {
  const reactions = async (id: string, viewer?: TestUser) =>
    valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { token: viewer?.token })).pleroma.emoji_reactions;
  const react = (u: TestUser, id: string, emoji: string, method = "PUT") =>
    json(`/api/v1/pleroma/statuses/${id}/reactions/${encodeURIComponent(emoji)}`, { method, token: u.token });

  it("each reaction carries url (null for Unicode) and the ids of the accounts behind it, as the viewer may see them", async () => {
    const code = uniqueName("rk");
    const { url } = await pack([code]);
    const [author, r1, r2, r3, viewer] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    const s = await post(author, { status: "react to me" });
    await react(r1, s.id, `:${code}:`);
    await react(r2, s.id, code);
    await react(r3, s.id, "👍");
    await react(r2, s.id, "👍");
    // Reacting again changes nothing.
    await react(r1, s.id, `:${code}:`);

    const custom = { name: code, url: url(code) };
    expect(await reactions(s.id, viewer)).toEqual([
      { ...custom, count: 2, me: false, account_ids: [r1.id, r2.id] },
      { name: "👍", url: null, count: 2, me: false, account_ids: [r3.id, r2.id] },
    ]);
    expect(await reactions(s.id)).toEqual(await reactions(s.id, viewer));
    expect((await reactions(s.id, r2)).map((r) => r.me)).toEqual([true, true]);

    // The list endpoint carries the url too (its accounts are the same, in the same order).
    const listed = (
      (await json(`/api/v1/pleroma/statuses/${s.id}/reactions`, { token: viewer.token })) as unknown[]
    ).map((r) => valid(EmojiReactionAccountsSchema, r));
    expect(listed.map((r) => [r.name, r.url, r.accounts.map((a) => a.id)])).toEqual([
      [code, url(code), [r1.id, r2.id]],
      ["👍", null, [r3.id, r2.id]],
    ]);

    // Muted and blocked reactors are left out for the viewer (count included), as the list leaves them out.
    await json(`/api/v1/accounts/${r2.id}/mute`, { method: "POST", token: viewer.token });
    await json(`/api/v1/accounts/${r3.id}/block`, { method: "POST", token: viewer.token });
    expect(await reactions(s.id, viewer)).toEqual([{ ...custom, count: 1, me: false, account_ids: [r1.id] }]);
    // Others still see everyone.
    expect((await reactions(s.id, author)).map((r) => r.account_ids)).toEqual([
      [r1.id, r2.id],
      [r3.id, r2.id],
    ]);

    // A deactivated reactor is left out of the count and the ids, for everyone (Pleroma leaves inactive users out).
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(r1.id).run();
    expect(await reactions(s.id)).toEqual([
      { ...custom, count: 1, me: false, account_ids: [r2.id] },
      { name: "👍", url: null, count: 2, me: false, account_ids: [r3.id, r2.id] },
    ]);

    // Un-reacting takes the reactor out.
    const undone = valid(StatusSchema, await react(r2, s.id, `:${code}:`, "DELETE"));
    expect(undone.pleroma.emoji_reactions).toEqual([
      { name: "👍", url: null, count: 2, me: true, account_ids: [r3.id, r2.id] },
    ]);
  });

  it("streamed statuses (hydrated for many viewers at once) carry each viewer's reactions and account_ids", async () => {
    const [author, r1, r2, v1, v2] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    const s = await post(author, { status: "streamed" });
    await react(r1, s.id, "🎉");
    await react(r2, s.id, "🎉");
    await react(v2, s.id, "🎉");
    await json(`/api/v1/accounts/${r1.id}/mute`, { method: "POST", token: v1.token });
    const each = await hydrateEach(db(env), [s.id], [v1.id, v2.id, ""]);
    expect(each.get(v1.id)!.reactions.get(s.id)).toEqual([
      { name: "🎉", count: 2, me: false, accountIds: [r2.id, v2.id] },
    ]);
    expect(each.get(v2.id)!.reactions.get(s.id)).toEqual([
      { name: "🎉", count: 3, me: true, accountIds: [r1.id, r2.id, v2.id] },
    ]);
    expect(each.get("")!.reactions.get(s.id)).toEqual([
      { name: "🎉", count: 3, me: false, accountIds: [r1.id, r2.id, v2.id] },
    ]);
  });

  it("instance and nodeinfo announce custom emoji reactions (Pleroma-FE offers custom emoji in its reaction picker only then)", async () => {
    expect(valid(InstanceSchema, await json("/api/v1/instance")).pleroma.metadata.features).toContain(
      "pleroma_custom_emoji_reactions",
    );
    expect((await json("/nodeinfo/2.1.json")).metadata.features).toContain("pleroma_custom_emoji_reactions");
  });

  it("a page costs the same D1 round trips however many reactions and reactors it holds", async () => {
    const [author, fan] = [await registerUser(), await registerUser()];
    const s1 = await post(author, { status: "one" });
    const trips = async () => {
      const counter = countingD1();
      const res = await call(`/api/v1/accounts/${author.id}/statuses`, {
        token: fan.token,
        vars: { DB: counter.db } as never,
      });
      expect(res.status).toBe(200);
      return { n: counter.count(), page: z.array(StatusSchema).parse(await res.json()) };
    };
    const bare = await trips();
    expect(bare.page[0].pleroma.emoji_reactions).toEqual([]);
    const s2 = await post(author, { status: "two" });
    const others = [await registerUser(), await registerUser(), await registerUser()];
    for (const u of [fan, ...others])
      for (const [id, e] of [
        [s1.id, "🎉"],
        [s2.id, "🎉"],
        [s2.id, "👍"],
      ])
        await react(u, id, e);
    const busy = await trips();
    expect(busy.n).toBe(bare.n);
    const ids = [fan.id, ...others.map((u) => u.id)];
    expect(
      busy.page.map((st) => st.pleroma.emoji_reactions.map((r) => [r.name, r.count, r.me, r.account_ids])),
    ).toEqual([
      [
        ["🎉", 4, true, ids],
        ["👍", 4, true, ids],
      ],
      [["🎉", 4, true, ids]],
    ]);
  });
});
