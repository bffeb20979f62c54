/**
 * What admin-fe asks besides users, reports and settings (issue 34; its calls in docs/admin.md): restarts,
 * emoji reloading, the media proxy cache, instance documents and a remote instance's statuses, in Pleroma's
 * shapes, to admins only.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { newId } from "../src/db/ids";
import { AccountSchema } from "../src/schemas/account";
import { ChatMessageSchema } from "../src/schemas/chat";
import { AdminCredentialsSchema, AdminStatusSchema } from "../src/schemas/admin";
import {
  appToken,
  call,
  freshIp,
  json,
  makeAdmin,
  makeApp,
  registerUser,
  uniqueName,
  valid,
  type TestUser,
} from "./helpers";

const ADMIN_SCOPES = "read write follow push admin";
let admin: TestUser;
let plain: TestUser;

beforeAll(async () => {
  admin = await registerUser({ scopes: ADMIN_SCOPES });
  await makeAdmin(admin.id);
  plain = await registerUser({ scopes: ADMIN_SCOPES });
});

const doc = (name: string, html: string | Uint8Array, token = admin.token, status = 200) => {
  const form = new FormData();
  form.set("file", new File([html], "panel.html", { type: "text/html" }));
  return json(`/api/v1/pleroma/admin/instance_document/${name}`, { method: "PATCH", token, body: form, status });
};

describe("admin-fe's housekeeping", () => {
  it("never needs a restart, and says so in Pleroma's shapes on both paths", async () => {
    for (const prefix of ["/api/v1/pleroma/admin", "/api/pleroma/admin"]) {
      expect(await json(`${prefix}/need_reboot`, { token: admin.token })).toEqual({ need_reboot: false });
      expect(await json(`${prefix}/restart`, { token: admin.token })).toEqual({});
      expect(await json(`${prefix}/reload_emoji`, { method: "POST", token: admin.token })).toBe("ok");
    }
    for (const [path, method] of [
      ["/need_reboot", "GET"],
      ["/restart", "GET"],
      ["/reload_emoji", "POST"],
      ["/media_proxy_caches", "GET"],
    ])
      await json(`/api/v1/pleroma/admin${path}`, { method, token: plain.token, status: 403 });
  });

  it("has no media proxy cache, and checks what it is asked to purge", async () => {
    expect(await json("/api/pleroma/admin/media_proxy_caches?page=1&page_size=50", { token: admin.token })).toEqual({
      page_size: 50,
      count: 0,
      urls: [],
    });
    expect(
      await json("/api/pleroma/admin/media_proxy_caches/purge", {
        token: admin.token,
        body: { urls: ["https://x.example/a.png"], ban: true },
      }),
    ).toEqual({});
    await json("/api/pleroma/admin/media_proxy_caches/delete", {
      token: admin.token,
      body: { urls: "https://x.example/a.png" },
      status: 400,
    });
    await json("/api/pleroma/admin/media_proxy_caches/delete", {
      token: admin.token,
      body: { urls: Array.from({ length: 1001 }, (_, i) => `https://x.example/${i}`) },
      status: 400,
    });
  });
});

describe("instance documents", () => {
  it("stores the panel and the terms, serves them at Pleroma-FE's paths, and deletes them", async () => {
    // None uploaded and no frontend's own: empty, as admin-fe expects a document (Pleroma answers its default).
    const none = await call("/api/pleroma/admin/instance_document/instance-panel", { token: admin.token });
    expect(none.status).toBe(200);
    expect(await none.text()).toBe("");
    expect((await call("/instance/panel.html")).status).toBe(404);

    const saved = await doc("instance-panel", "<p>Welcome to <b>our</b> server</p>");
    expect(saved).toEqual({ url: "http://localhost/instance/panel.html" });
    const read = await call("/api/pleroma/admin/instance_document/instance-panel", { token: admin.token });
    expect(read.headers.get("Content-Type")).toContain("text/html");
    expect(await read.text()).toBe("<p>Welcome to <b>our</b> server</p>");

    const served = await call("/instance/panel.html");
    expect(served.status).toBe(200);
    expect(served.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(await served.text()).toBe("<p>Welcome to <b>our</b> server</p>");

    await doc("terms-of-service", "<h2>Be kind</h2>");
    expect(await (await call("/static/terms-of-service.html")).text()).toBe("<h2>Be kind</h2>");

    expect(
      await json("/api/pleroma/admin/instance_document/instance-panel", { method: "DELETE", token: admin.token }),
    ).toEqual({ url: "http://localhost/instance/panel.html" });
    expect((await call("/instance/panel.html")).status).toBe(404);
  });

  it("answers Mastodon's terms_of_service and privacy_policy from the documents (issue 45)", async () => {
    const { TermsOfServiceSchema, PrivacyPolicySchema } = await import("../src/schemas/instance");
    await json("/api/pleroma/admin/instance_document/terms-of-service", { method: "DELETE", token: admin.token });
    await json("/api/pleroma/admin/instance_document/privacy-policy", { method: "DELETE", token: admin.token });
    // No terms: 404, as Mastodon without any. No policy: one saying so (Mastodon always has one).
    await json("/api/v1/instance/terms_of_service", { status: 404 });
    const none = valid(PrivacyPolicySchema.strict(), await json("/api/v1/instance/privacy_policy"));
    expect(none.content).toMatch(/not published a privacy policy/);

    const before = Date.now() - 1000;
    await doc("terms-of-service", "<p>Be kind.</p>");
    await doc("privacy-policy", "<p>We keep little.</p>");
    const terms = valid(TermsOfServiceSchema.strict(), await json("/api/v1/instance/terms_of_service"));
    expect(terms).toMatchObject({ content: "<p>Be kind.</p>", effective: true, succeeded_by: null });
    expect(terms.effective_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const policy = valid(PrivacyPolicySchema.strict(), await json("/api/v1/instance/privacy_policy"));
    expect(policy.content).toBe("<p>We keep little.</p>");
    expect(Date.parse(policy.updated_at)).toBeGreaterThanOrEqual(before);
    // The privacy policy is an instance document like the others: served at its path, deleted alike.
    expect(await (await call("/static/privacy-policy.html")).text()).toBe("<p>We keep little.</p>");
    await json("/api/pleroma/admin/instance_document/terms-of-service", { method: "DELETE", token: admin.token });
    await json("/api/v1/instance/terms_of_service", { status: 404 });
  });

  it("refuses other names, binary or oversized files, and non-admins", async () => {
    await doc("../../etc/passwd", "x", admin.token, 404);
    await doc("secrets", "x", admin.token, 404);
    await doc("instance-panel", new Uint8Array([0x3c, 0x70, 0, 0x3e]), admin.token, 422);
    await doc("instance-panel", "x".repeat(512 * 1024 + 1), admin.token, 413);
    await doc("instance-panel", "<p>mine</p>", plain.token, 403);
    await json("/api/pleroma/admin/instance_document/terms-of-service", { token: plain.token, status: 403 });
    expect((await call("/instance/panel.html")).status).toBe(404);
  });
});

describe("a remote instance's statuses", () => {
  it("lists them newest first with their total; private ones only in godmode", async () => {
    const host = `far${Date.now()}.example`;
    const account = newId();
    const t = Date.now();
    await env.DB.prepare(
      "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?1, 'far', ?2, ?3, ?3, ?4, ?4)",
    )
      .bind(account, host, `https://${host}/users/far`, t)
      .run();
    const ids = [newId(t - 3000), newId(t - 2000), newId(t - 1000)];
    for (const [i, id] of ids.entries())
      await env.DB.prepare(
        `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
         VALUES (?1, ?2, ?2, ?3, ?1, ?2, ?4, '', ?5, 0, ?6)`,
      )
        .bind(
          id,
          `https://${host}/notes/${i}`,
          account,
          `<p>note ${i}</p>`,
          i === 2 ? "private" : "public",
          t - 3000 + i,
        )
        .run();
    const Page = z.object({ total: z.number(), activities: z.array(AdminStatusSchema) });

    const open = valid(Page, await json(`/api/pleroma/admin/instances/${host}/statuses`, { token: admin.token }));
    expect(open.total).toBe(2);
    expect(open.activities.map((s) => s.id)).toEqual([ids[1], ids[0]]);
    const god = valid(
      Page,
      await json(`/api/pleroma/admin/instances/${host.toUpperCase()}/statuses?godmode=true&page_size=2`, {
        token: admin.token,
      }),
    );
    expect(god.total).toBe(3);
    expect(god.activities.map((s) => s.id)).toEqual([ids[2], ids[1]]);
    expect((await json(`/api/pleroma/admin/instances/nowhere.example/statuses`, { token: admin.token })).total).toBe(0);
    await json(`/api/pleroma/admin/instances/${host}/statuses`, { token: plain.token, status: 403 });
  });
});

describe("a user's chats", () => {
  it("lists them with sender, receiver and the last message, to staff who may read messages", async () => {
    const bob = await registerUser();
    const carol = await registerUser();
    const chat = await json(`/api/v1/pleroma/chats/by-account-id/${carol.id}`, { method: "POST", token: bob.token });
    await json(`/api/v1/pleroma/chats/${chat.id}/messages`, { token: bob.token, body: { content: "hi carol" } });
    const Chats = z.array(
      z.object({
        id: z.string(),
        sender: AccountSchema,
        receiver: AccountSchema,
        unread: z.number(),
        last_message: z.any(),
      }),
    );
    const list = valid(Chats, await json(`/api/pleroma/admin/users/${bob.username}/chats`, { token: admin.token }));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: chat.id, sender: { id: bob.id }, receiver: { id: carol.id } });
    expect(list[0].last_message.content).toBe("hi carol");
    expect(await json(`/api/pleroma/admin/users/${carol.id}/chats`, { token: admin.token })).toHaveLength(1);
    await json(`/api/pleroma/admin/users/nobody-here/chats`, { token: admin.token, status: 404 });
    await json(`/api/pleroma/admin/users/${bob.username}/chats`, { token: plain.token, status: 403 });
  });

  it("shows a chat and its messages (what either side cleared too), and deletes one as its sender would", async () => {
    const dora = await registerUser();
    const eve = await registerUser();
    const chat = await json(`/api/v1/pleroma/chats/by-account-id/${eve.id}`, { method: "POST", token: dora.token });
    const first = await json(`/api/v1/pleroma/chats/${chat.id}/messages`, {
      token: dora.token,
      body: { content: "one" },
    });
    await json(`/api/v1/pleroma/chats/${chat.id}/messages`, { token: eve.token, body: { content: "two" } });
    // Both clear the chat from their view: staff still see every message.
    await json(`/api/v1/pleroma/chats/${chat.id}`, { method: "DELETE", token: eve.token });
    await json(`/api/v1/pleroma/chats/${chat.id}`, { method: "DELETE", token: dora.token });

    const Chat = z.object({ id: z.string(), sender: AccountSchema, receiver: AccountSchema });
    const shown = valid(Chat, await json(`/api/pleroma/admin/chats/${chat.id}`, { token: admin.token }));
    expect([shown.sender.id, shown.receiver.id].sort()).toEqual([dora.id, eve.id].sort());
    const messages = valid(
      z.array(ChatMessageSchema),
      await json(`/api/pleroma/admin/chats/${chat.id}/messages`, { token: admin.token }),
    );
    expect(messages.map((m) => m.content)).toEqual(["two", "one"]);

    const deleted = valid(
      ChatMessageSchema,
      await json(`/api/pleroma/admin/chats/${chat.id}/messages/${first.id}`, { method: "DELETE", token: admin.token }),
    );
    expect(deleted.id).toBe(first.id);
    const log = await json("/api/v1/pleroma/admin/moderation_log", { token: admin.token });
    expect(log.items[0].message).toBe(`@${admin.username} deleted chat message #${first.id}`);
    const left = await json(`/api/pleroma/admin/chats/${chat.id}/messages`, { token: admin.token });
    expect(left.map((m: { content: string }) => m.content)).toEqual(["two"]);

    await json(`/api/pleroma/admin/chats/${chat.id}`, { token: plain.token, status: 403 });
    await json(`/api/pleroma/admin/chats/${chat.id}/messages`, { token: plain.token, status: 403 });
    await json(`/api/pleroma/admin/chats/01ARZ3NDEKTSV4RRFFQ69G5FAV`, { token: admin.token, status: 404 });
    await json(`/api/pleroma/admin/chats/${chat.id}/messages/01ARZ3NDEKTSV4RRFFQ69G5FAV`, {
      method: "DELETE",
      token: admin.token,
      status: 404,
    });
  });
});

describe("approving", () => {
  it("answers the approved users as they are now", async () => {
    const setApproval = (on: boolean) =>
      json("/api/v1/pleroma/admin/config", {
        token: admin.token,
        body: {
          configs: [{ group: ":pleroma", key: ":instance", value: [{ tuple: [":account_approval_required", on] }] }],
        },
      });
    await setApproval(true);
    const app = await makeApp();
    const username = uniqueName("dora");
    await json("/api/v1/accounts", {
      token: await appToken(app),
      headers: { "cf-connecting-ip": freshIp() },
      body: {
        username,
        email: `${username}@example.com`,
        password: "a long password 1",
        agreement: true,
        reason: "hi",
      },
    });
    await setApproval(false);
    const pending = await json(`/api/pleroma/admin/users/${username}`, { token: admin.token });
    expect(pending.is_approved).toBe(false);
    const res = await json("/api/pleroma/admin/users/approve", {
      method: "PATCH",
      token: admin.token,
      body: { nicknames: [username] },
    });
    expect(res.users).toHaveLength(1);
    expect(res.users[0]).toMatchObject({ nickname: username, is_approved: true });
    expect((await json(`/api/pleroma/admin/users/${username}`, { token: admin.token })).is_approved).toBe(true);
  });
});

describe("a user's credentials", () => {
  const patch = (nickname: string, body: Record<string, unknown>, token = admin.token, status = 200) =>
    json(`/api/pleroma/admin/users/${nickname}/credentials`, { method: "PATCH", token, body, status });

  it("shows them, and changes the actor type (a bot) and the e-mail, logged", async () => {
    const dan = await registerUser();
    const shown = valid(
      AdminCredentialsSchema,
      await json(`/api/pleroma/admin/users/${dan.username}/credentials`, { token: admin.token }),
    );
    expect(shown).toMatchObject({ id: dan.id, nickname: dan.username, email: dan.email, actor_type: "Person" });

    expect(await patch(dan.username, { actor_type: "Service" })).toEqual({ status: "success" });
    expect((await json(`/api/v1/accounts/${dan.id}`)).bot).toBe(true);
    await patch(dan.username, { email: `new-${dan.email}` });
    expect((await json(`/api/pleroma/admin/users/${dan.id}/credentials`, { token: admin.token })).email).toBe(
      `new-${dan.email}`,
    );
    const log = await json("/api/v1/pleroma/admin/moderation_log", { token: admin.token });
    expect(log.items[0].message).toBe(`@${admin.username} updated users: @${dan.username}`);
  });

  it("refuses a bad or taken e-mail, a short password, other users and non-admins, changing nothing", async () => {
    const erin = await registerUser();
    expect((await patch(erin.username, { email: "not an address" }, admin.token, 400)).errors.email).toBeTruthy();
    expect((await patch(erin.username, { email: admin.email }, admin.token, 400)).error).toMatch(/taken/);
    expect((await patch(erin.username, { password: "short" }, admin.token, 400)).errors.password).toBeTruthy();
    await patch(erin.username, { actor_type: "Robot" }, admin.token, 400);
    await patch(erin.username, { actor_type: "Service" }, plain.token, 403);
    await json(`/api/pleroma/admin/users/${erin.username}/credentials`, { token: plain.token, status: 403 });
    await patch("nobody-here", { actor_type: "Service" }, admin.token, 404);
    expect((await json(`/api/pleroma/admin/users/${erin.username}/credentials`, { token: admin.token })).email).toBe(
      erin.email,
    );
    expect((await json("/api/v1/accounts/verify_credentials", { token: erin.token })).bot).toBe(false);
  });

  it("keeps credentials from moderators, and shows a remote account's (no e-mail) without changing them", async () => {
    // Moderators do not hold users_manage_credentials (Pleroma's defaults); the route's own staff guard is there
    // for when moderator privileges become configurable.
    const mod = await registerUser({ scopes: ADMIN_SCOPES });
    const otherMod = await registerUser({ scopes: ADMIN_SCOPES });
    await env.DB.prepare("UPDATE users SET is_moderator = 1 WHERE account_id IN (?, ?)")
      .bind(mod.id, otherMod.id)
      .run();
    for (const target of [otherMod.username, admin.username]) {
      await json(`/api/pleroma/admin/users/${target}/credentials`, { token: mod.token, status: 403 });
      await patch(target, { email: `taken-over-${target}@example.com` }, mod.token, 403);
    }
    expect(
      (await json(`/api/pleroma/admin/users/${otherMod.username}/credentials`, { token: admin.token })).email,
    ).toBe(otherMod.email);

    const far = newId();
    const t = Date.now();
    await env.DB.prepare(
      "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?1, 'faraway', 'far.example', 'https://far.example/users/faraway', 'https://far.example/@faraway', ?2, ?2)",
    )
      .bind(far, t)
      .run();
    const remote = valid(
      AdminCredentialsSchema,
      await json(`/api/pleroma/admin/users/${far}/credentials`, { token: admin.token }),
    );
    expect(remote).toMatchObject({ id: far, nickname: "faraway@far.example", email: null });
    await patch(far, { actor_type: "Service" }, admin.token, 404);
    expect(await json(`/api/pleroma/admin/users/${far}/chats`, { token: admin.token })).toEqual([]);
  });

  it("sets a password that ends every session and still has to be reset by the user, as Pleroma", async () => {
    const finn = await registerUser();
    await patch(finn.username, { password: "a brand new password" });
    expect((await call("/api/v1/accounts/verify_credentials", { token: finn.token })).status).toBe(403);
    const res = await call("/oauth/token", {
      headers: { "cf-connecting-ip": freshIp() },
      body: {
        grant_type: "password",
        client_id: finn.app.client_id,
        client_secret: finn.app.client_secret,
        username: finn.username,
        password: "a brand new password",
      },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/reset/i);
  });
});
