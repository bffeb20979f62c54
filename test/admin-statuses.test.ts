import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, makeAdmin, post, registerUser, valid, type TestUser } from "./helpers";
import { AdminStatusSchema, ModerationLogSchema } from "../src/schemas/admin";

const A = "/api/v1/pleroma/admin";

async function admin(): Promise<TestUser> {
  const u = await registerUser({ scopes: "read write follow push admin" });
  await makeAdmin(u.id);
  return u;
}

describe("admin statuses", () => {
  it("lists (godmode for private ones), shows, updates and deletes, all logged", async () => {
    const boss = await admin();
    const bob = await registerUser();
    const pub = await post(bob, { status: "hello world" });
    const priv = await post(bob, { status: "secret", visibility: "private" });

    const list = (await json(`${A}/statuses?page_size=40`, { token: boss.token })) as unknown[];
    const ids = list.map((s) => valid(AdminStatusSchema, s).id);
    expect(ids).toContain(pub.id);
    expect(ids).not.toContain(priv.id);
    const god = (await json(`${A}/statuses?godmode=true&page_size=40&local_only=true`, { token: boss.token })) as any[];
    expect(god.map((s) => s.id)).toContain(priv.id);

    const shown = valid(AdminStatusSchema, await json(`${A}/statuses/${priv.id}`, { token: boss.token }));
    expect(shown).toMatchObject({
      id: priv.id,
      visibility: "private",
      account: { nickname: bob.username, is_active: true },
    });
    await json(`${A}/statuses/nope`, { token: boss.token, status: 404 });

    const changed = valid(
      AdminStatusSchema,
      await json(`${A}/statuses/${priv.id}`, {
        method: "PUT",
        token: boss.token,
        body: { sensitive: true, visibility: "public" },
      }),
    );
    expect(changed).toMatchObject({ sensitive: true, visibility: "public" });
    // Now anyone may see it.
    expect((await call(`/api/v1/statuses/${priv.id}`)).status).toBe(200);
    await json(`${A}/statuses/${priv.id}`, {
      method: "PUT",
      token: boss.token,
      body: { visibility: "direct" },
      status: 400,
    });

    expect(await json(`${A}/statuses/${pub.id}`, { method: "DELETE", token: boss.token })).toEqual({});
    expect((await call(`/api/v1/statuses/${pub.id}`)).status).toBe(404);
    await json(`${A}/statuses/${pub.id}`, { method: "DELETE", token: boss.token, status: 404 });

    const log = valid(ModerationLogSchema, await json(`${A}/moderation_log?user_id=${boss.id}`, { token: boss.token }));
    expect(log.items.map((i) => i.message)).toEqual([
      `@${boss.username} deleted status #${pub.id}`,
      `@${boss.username} updated status #${priv.id}, set sensitive: 'true', visibility: 'public'`,
    ]);
  });

  it("lets moderators read and delete statuses; refuses plain users", async () => {
    const mod = await registerUser({ scopes: "read write admin" });
    await env.DB.prepare("UPDATE users SET is_moderator = 1 WHERE account_id = ?").bind(mod.id).run();
    const bob = await registerUser();
    const s = await post(bob, { status: "to go" });
    await json(`${A}/statuses/${s.id}`, { token: mod.token });
    expect(await json(`${A}/statuses/${s.id}`, { method: "DELETE", token: mod.token })).toEqual({});
    const plain = await registerUser({ scopes: "read write admin" });
    expect((await json(`${A}/statuses`, { token: plain.token, status: 403 })).error).toBe("User isn't privileged.");
  });
});
