import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, makeAdmin, post, registerUser, remoteAccount, uniqueName, valid, type TestUser } from "./helpers";
import {
  AdminStatusSchema,
  AdminUserSchema,
  AdminUsersSchema,
  InviteSchema,
  ModerationLogSchema,
} from "../src/schemas/admin";

const ADMIN_SCOPES = "read write follow push admin";
const A = "/api/v1/pleroma/admin";

async function staff(role: "admin" | "moderator" = "admin"): Promise<TestUser> {
  const u = await registerUser({ scopes: ADMIN_SCOPES });
  if (role === "admin") await makeAdmin(u.id);
  else await env.DB.prepare("UPDATE users SET is_moderator = 1 WHERE account_id = ?").bind(u.id).run();
  return u;
}

async function logMessages(admin: TestUser, search: string): Promise<string[]> {
  const log = valid(
    ModerationLogSchema,
    await json(`${A}/moderation_log?search=${encodeURIComponent(search)}`, { token: admin.token }),
  );
  return log.items.map((i) => i.message);
}

describe("admin users", () => {
  it("refuses without a token, without admin scope, and to plain users and moderators where Pleroma does", async () => {
    const plain = await registerUser({ scopes: ADMIN_SCOPES });
    const noScope = await registerUser();
    await makeAdmin(noScope.id);
    const mod = await staff("moderator");
    expect((await call(`${A}/users`)).status).toBe(403);
    const r1 = await json(`${A}/users`, { token: noScope.token, status: 403 });
    expect(r1.error).toMatch(/Insufficient permissions/);
    expect((await json(`${A}/users`, { token: plain.token, status: 403 })).error).toBe("User isn't privileged.");
    // Moderators may read users but not change their state, nor manage invites or roles.
    valid(AdminUsersSchema, await json(`${A}/users`, { token: mod.token }));
    expect(
      (
        await json(`${A}/users/deactivate`, {
          method: "PATCH",
          token: mod.token,
          body: { nicknames: [plain.username] },
          status: 403,
        })
      ).error,
    ).toBe("User isn't privileged.");
    expect((await json(`${A}/users/invites`, { token: mod.token, status: 403 })).error).toBe("User isn't privileged.");
    expect(
      (
        await json(`${A}/users/permission_group/admin`, {
          token: mod.token,
          body: { nicknames: [plain.username] },
          status: 403,
        })
      ).error,
    ).toBe("User is not an admin.");
  });

  it("lists with filters, query and paging, and shows one user", async () => {
    const admin = await staff();
    const prefix = uniqueName("flt");
    const bob = await registerUser({ username: `${prefix}bob`, scopes: ADMIN_SCOPES });
    const carl = await registerUser({ username: `${prefix}carl` });
    const remote = await remoteAccount();
    const page = valid(
      AdminUsersSchema,
      await json(`${A}/users?query=${prefix}&page_size=1&page=1`, { token: admin.token }),
    );
    expect(page.count).toBe(2);
    expect(page.page_size).toBe(1);
    expect(page.users).toHaveLength(1);
    const all = valid(
      AdminUsersSchema,
      await json(`${A}/users?query=${prefix}&filters=local,active,bogus`, { token: admin.token }),
    );
    expect(all.users.map((u) => u.nickname).sort()).toEqual([bob.username, carl.username].sort());
    expect(all.users[0]).toMatchObject({ local: true, is_active: true, roles: { admin: false, moderator: false } });
    const external = valid(
      AdminUsersSchema,
      await json(`${A}/users?filters=external&query=${remote.domain}`, { token: admin.token }),
    );
    expect(external.users.map((u) => u.nickname)).toEqual([`far@${remote.domain}`]);
    expect(external.users[0]!.email).toBeNull();
    const byEmail = valid(AdminUsersSchema, await json(`${A}/users?email=${bob.email}`, { token: admin.token }));
    expect(byEmail.users.map((u) => u.id)).toEqual([bob.id]);
    const admins = valid(
      AdminUsersSchema,
      await json(`${A}/users?filters=is_admin&query=${admin.username}`, { token: admin.token }),
    );
    expect(admins.users.map((u) => u.id)).toEqual([admin.id]);
    const one = valid(AdminUserSchema, await json(`${A}/users/${bob.username}`, { token: admin.token }));
    expect(one).toMatchObject({ id: bob.id, email: bob.email, nickname: bob.username });
    expect((await json(`${A}/users/${bob.id}`, { token: admin.token })).nickname).toBe(bob.username);
    expect((await json(`${A}/users/nobody${prefix}`, { token: admin.token, status: 404 })).error).toBe("Not found");
  });

  it("deactivates and activates, which holds for sign-in, and logs it", async () => {
    const admin = await staff();
    const bob = await registerUser();
    const res = await json(`${A}/users/deactivate`, {
      method: "PATCH",
      token: admin.token,
      body: { nicknames: [bob.username] },
    });
    expect(res.users).toHaveLength(1);
    expect(valid(AdminUserSchema, res.users[0]).is_active).toBe(false);
    expect((await call("/api/v1/accounts/verify_credentials", { token: bob.token })).status).toBe(403);
    const filtered = valid(
      AdminUsersSchema,
      await json(`${A}/users?filters=deactivated&query=${bob.username}`, { token: admin.token }),
    );
    expect(filtered.users.map((u) => u.id)).toEqual([bob.id]);
    expect(await logMessages(admin, bob.username)).toContain(`@${admin.username} deactivated users: @${bob.username}`);
    const back = await json(`${A}/users/activate`, {
      method: "PATCH",
      token: admin.token,
      body: { nicknames: [bob.username] },
    });
    expect(back.users[0].is_active).toBe(true);
    expect((await call("/api/v1/accounts/verify_credentials", { token: bob.token })).status).toBe(200);
    expect(await logMessages(admin, bob.username)).toContain(`@${admin.username} activated users: @${bob.username}`);
  });

  it("deletes local users through the account deletion job and logs it", async () => {
    const admin = await staff();
    const bob = await registerUser();
    const res = await json(`${A}/users?nicknames[]=${bob.username}`, { method: "DELETE", token: admin.token });
    expect(res).toEqual([bob.username]);
    expect((await call("/api/v1/accounts/verify_credentials", { token: bob.token })).status).toBe(403);
    expect(
      await env.DB.prepare("SELECT requested_by FROM account_deletions WHERE account_id = ?").bind(bob.id).first(),
    ).toEqual({ requested_by: admin.id });
    expect(await logMessages(admin, bob.username)).toContain(`@${admin.username} deleted users: @${bob.username}`);
  });

  it("forces a password reset and turns off a user's MFA, each logged; moderators may not", async () => {
    const admin = await staff();
    const mod = await staff("moderator");
    const bob = await registerUser({ scopes: "read write" });
    expect(
      (
        await json(`${A}/users/force_password_reset`, {
          method: "PATCH",
          token: mod.token,
          body: { nicknames: [bob.username] },
          status: 403,
        })
      ).error,
    ).toBe("User isn't privileged.");
    // Bob turns MFA on (a confirmed secret and backup codes), then the admin turns it off.
    await env.DB.prepare("UPDATE credentials SET totp_secret = 'sealed' WHERE account_id = ?").bind(bob.id).run();
    await env.DB.prepare("INSERT INTO mfa_backup_codes (code_hash, account_id, created_at) VALUES (?, ?, 0)")
      .bind(`h-${bob.id}`, bob.id)
      .run();
    expect(
      await json(`${A}/users/disable_mfa`, { method: "PUT", token: admin.token, body: { nickname: bob.username } }),
    ).toBe(bob.username);
    expect(
      await env.DB.prepare("SELECT totp_secret FROM credentials WHERE account_id = ?").bind(bob.id).first(),
    ).toEqual({ totp_secret: null });
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM mfa_backup_codes WHERE account_id = ?").bind(bob.id).first(),
    ).toEqual({ n: 0 });
    expect(
      (
        await json(`${A}/users/disable_mfa`, {
          method: "PUT",
          token: admin.token,
          body: { nickname: "nobody_here" },
          status: 404,
        })
      ).error,
    ).toBeTruthy();
    const res = await call(`${A}/users/force_password_reset`, {
      method: "PATCH",
      token: admin.token,
      body: { nicknames: [bob.username] },
    });
    expect(res.status).toBe(204);
    const me = await call("/api/v1/accounts/verify_credentials", { token: bob.token });
    expect(me.status).toBe(403);
    expect(
      await env.DB.prepare("SELECT password_reset_pending AS p FROM credentials WHERE account_id = ?")
        .bind(bob.id)
        .first(),
    ).toEqual({ p: 1 });
    const messages = await logMessages(admin, bob.username);
    expect(messages).toContain(`@${admin.username} forced password reset for users: @${bob.username}`);
    expect(messages).toContain(`@${admin.username} disabled two-factor authentication for @${bob.username}`);
  });

  it("creates users all or none, with Pleroma's per-item answers", async () => {
    const admin = await staff();
    const name = uniqueName("made");
    const ok = await json(`${A}/users`, {
      token: admin.token,
      body: { users: [{ nickname: name, email: `${name}@example.com`, password: "long enough pass" }] },
    });
    expect(ok).toEqual([{ type: "success", code: 200, data: { nickname: name, email: `${name}@example.com` } }]);
    const login = await json("/api/v1/pleroma/admin/users/" + name, { token: admin.token });
    expect(valid(AdminUserSchema, login).is_confirmed).toBe(true);
    const other = uniqueName("made");
    const clash = await json(`${A}/users`, {
      token: admin.token,
      status: 409,
      body: {
        users: [
          { nickname: other, email: `${other}@example.com`, password: "long enough pass" },
          { nickname: name, email: "x@example.com", password: "long enough pass" },
        ],
      },
    });
    expect(clash[0].type).toBe("success");
    expect(clash[1]).toMatchObject({ type: "error", code: 409, error: { nickname: ["has already been taken"] } });
    // Nothing was created.
    await json(`${A}/users/${other}`, { token: admin.token, status: 404 });
    expect(await logMessages(admin, name)).toContain(`@${admin.username} created users: @${name}`);
    await json(`${A}/users`, { token: admin.token, body: { users: "nope" }, status: 400 });
  });

  it("tags and untags, grants and revokes roles", async () => {
    const admin = await staff();
    const bob = await registerUser({ scopes: ADMIN_SCOPES });
    await call(`${A}/users/tag`, {
      method: "PUT",
      token: admin.token,
      body: { nicknames: [bob.username], tags: ["mrf_tag:media-force-nsfw", "x"] },
    }).then((r) => expect(r.status).toBe(204));
    expect((await json(`${A}/users/${bob.username}`, { token: admin.token })).tags.sort()).toEqual([
      "mrf_tag:media-force-nsfw",
      "x",
    ]);
    const tagged = valid(
      AdminUsersSchema,
      await json(`${A}/users?tags[]=x&query=${bob.username}`, { token: admin.token }),
    );
    expect(tagged.users).toHaveLength(1);
    await call(`${A}/users/tag?nicknames[]=${bob.username}&tags[]=x`, { method: "DELETE", token: admin.token }).then(
      (r) => expect(r.status).toBe(204),
    );
    expect((await json(`${A}/users/${bob.username}`, { token: admin.token })).tags).toEqual([
      "mrf_tag:media-force-nsfw",
    ]);
    expect(await logMessages(admin, bob.username)).toEqual(
      expect.arrayContaining([
        `@${admin.username} added tags: mrf_tag:media-force-nsfw, x to users: @${bob.username}`,
        `@${admin.username} removed tags: x from users: @${bob.username}`,
      ]),
    );
    const roles = (nickname: string, token = admin.token, status = 200) =>
      json(`${A}/users/${nickname}/permission_group`, { token, status });
    expect(await roles(bob.username)).toEqual({ is_admin: false, is_moderator: false });
    expect(await roles(admin.username)).toEqual({ is_admin: true, is_moderator: false });
    await roles(`nobody${Date.now()}`, admin.token, 404);
    await roles(admin.username, bob.token, 403);
    expect(
      await json(`${A}/users/permission_group/moderator`, { token: admin.token, body: { nicknames: [bob.username] } }),
    ).toEqual({ is_moderator: true });
    expect(await roles(bob.username)).toEqual({ is_admin: false, is_moderator: true });
    // Bob, now a moderator, may read reports.
    await json(`${A}/reports`, { token: bob.token });
    expect(
      await json(`${A}/users/permission_group/moderator?nicknames[]=${bob.username}`, {
        method: "DELETE",
        token: admin.token,
      }),
    ).toEqual({ is_moderator: false });
    await json(`${A}/reports`, { token: bob.token, status: 403 });
    expect(
      (
        await json(`${A}/users/permission_group/admin?nicknames[]=${admin.username}`, {
          method: "DELETE",
          token: admin.token,
          status: 403,
        })
      ).error,
    ).toBe("You can't revoke your own admin status.");
    await json(`${A}/users/permission_group/owner`, {
      token: admin.token,
      body: { nicknames: [bob.username] },
      status: 400,
    });
    // admin-fe's path form: the nickname in the path.
    expect(
      await json(`${A}/users/${bob.username}/permission_group/moderator`, { method: "POST", token: admin.token }),
    ).toEqual({ is_moderator: true });
    await json(`${A}/reports`, { token: bob.token });
    expect(
      await json(`${A}/users/${bob.username}/permission_group/moderator`, { method: "DELETE", token: admin.token }),
    ).toEqual({ is_moderator: false });
    await json(`${A}/reports`, { token: bob.token, status: 403 });
    await json(`${A}/users/nobody${Date.now()}/permission_group/moderator`, {
      method: "POST",
      token: admin.token,
      status: 404,
    });
    expect(await logMessages(admin, bob.username)).toEqual(
      expect.arrayContaining([
        `@${admin.username} made @${bob.username} moderator`,
        `@${admin.username} revoked moderator role from @${bob.username}`,
      ]),
    );
  });

  it("confirms e-mail and resends confirmation", async () => {
    const admin = await staff();
    const bob = await registerUser();
    await env.DB.prepare("UPDATE users SET confirmed = 0 WHERE account_id = ?").bind(bob.id).run();
    const unconfirmed = valid(
      AdminUsersSchema,
      await json(`${A}/users?filters=unconfirmed&query=${bob.username}`, { token: admin.token }),
    );
    expect(unconfirmed.users.map((u) => u.id)).toEqual([bob.id]);
    await json(`${A}/users/resend_confirmation_email`, {
      method: "PATCH",
      token: admin.token,
      body: { nicknames: [bob.username] },
    });
    const mail = await env.DB.prepare('SELECT text FROM mail_outbox WHERE "to" = ?').bind(bob.email).all();
    expect(mail.results.some((m: any) => String(m.text).includes("/api/account/confirm_email/"))).toBe(true);
    await json(`${A}/users/confirm_email`, {
      method: "PATCH",
      token: admin.token,
      body: { nicknames: [bob.username] },
    });
    expect((await json(`${A}/users/${bob.username}`, { token: admin.token })).is_confirmed).toBe(true);
    expect(await logMessages(admin, bob.username)).toEqual(
      expect.arrayContaining([
        `@${admin.username} confirmed email for users: @${bob.username}`,
        `@${admin.username} re-sent confirmation email for users: @${bob.username}`,
      ]),
    );
  });

  it("shows a user's statuses, private ones only in godmode", async () => {
    const admin = await staff();
    const bob = await registerUser();
    const pub = await post(bob, { status: "public one" });
    const priv = await post(bob, { status: "private one", visibility: "private" });
    const plain = await json(`${A}/users/${bob.username}/statuses`, { token: admin.token });
    expect(plain.total).toBe(1);
    expect(plain.activities.map((s: any) => valid(AdminStatusSchema, s).id)).toEqual([pub.id]);
    const god = await json(`${A}/users/${bob.username}/statuses?godmode=true`, { token: admin.token });
    expect(god.total).toBe(2);
    expect(god.activities.map((s: any) => s.id)).toEqual([priv.id, pub.id]);
    expect(god.activities[0].account.nickname).toBe(bob.username);
  });

  it("refuses an invite expiring past the year 9999 (400), and the invites list still answers", async () => {
    const admin = await staff();
    for (const expires_at of ["+275760-09-13", "275760-09-13T00:00:00.000Z", "10000-01-01", "1969-12-31"]) {
      const res = await call(`${A}/users/invite_token`, { method: "POST", token: admin.token, body: { expires_at } });
      const text = await res.text();
      expect(res.status, `${expires_at}: ${text.slice(0, 200)}`).toBe(400);
      expect(typeof JSON.parse(text).error).toBe("string");
    }
    const last = valid(
      InviteSchema,
      await json(`${A}/users/invite_token`, { token: admin.token, body: { expires_at: "9999-12-31" } }),
    );
    expect(last).toMatchObject({ expires_at: "9999-12-31", invite_type: "date_limited", used: false });
    const list = await json(`${A}/users/invites`, { token: admin.token });
    expect(list.invites.map((i: unknown) => valid(InviteSchema, i).token)).toContain(last.token);
  });

  it("creates, lists, revokes and e-mails invites; a revoked invite admits nobody", async () => {
    const admin = await staff();
    const inv = valid(
      InviteSchema,
      await json(`${A}/users/invite_token`, { token: admin.token, body: { max_use: 5, expires_at: "2999-01-02" } }),
    );
    expect(inv).toMatchObject({
      used: false,
      uses: 0,
      max_use: 5,
      invite_type: "reusable_date_limited",
      expires_at: "2999-01-02",
    });
    const list = await json(`${A}/users/invites`, { token: admin.token });
    expect(list.invites.map((i: any) => valid(InviteSchema, i).token)).toContain(inv.token);
    const revoked = valid(
      InviteSchema,
      await json(`${A}/users/revoke_invite`, { token: admin.token, body: { token: inv.token } }),
    );
    expect(revoked.used).toBe(true);
    await json(`${A}/users/revoke_invite`, { token: admin.token, body: { token: "nope" }, status: 404 });
    await json(`${A}/users/invite_token`, { token: admin.token, body: { expires_at: "not a date" }, status: 400 });
    // Closed registrations: a revoked token is refused.
    const app = await json("/api/v1/apps", {
      body: { client_name: "t", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read" },
    });
    const appTok = (
      await json("/oauth/token", {
        body: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret },
      })
    ).access_token;
    const name = uniqueName("inv");
    const refused = await json("/api/v1/accounts", {
      token: appTok,
      vars: { REGISTRATIONS_OPEN: "false" },
      body: {
        username: name,
        email: `${name}@example.com`,
        password: "long enough pass",
        agreement: true,
        token: inv.token,
      },
      status: 400,
    });
    expect(refused.error).toBe("Expired token");
    const to = `${uniqueName("guest")}@example.com`;
    expect(
      (await call(`${A}/users/email_invite`, { token: admin.token, body: { email: to, name: "Guest" } })).status,
    ).toBe(204);
    const mail = await env.DB.prepare('SELECT text FROM mail_outbox WHERE "to" = ?').bind(to).first<{ text: string }>();
    expect(mail?.text).toMatch(/\/registration\/[A-Za-z0-9_-]+/);
    await json(`${A}/users/email_invite`, { token: admin.token, body: { email: "bad" }, status: 400 });
  });

  it("filters the moderation log by actor and date, and pages it", async () => {
    const admin = await staff();
    const bob = await registerUser();
    await json(`${A}/users/deactivate`, { method: "PATCH", token: admin.token, body: { nicknames: [bob.username] } });
    const mine = valid(
      ModerationLogSchema,
      await json(`${A}/moderation_log?user_id=${admin.id}&page_size=10`, { token: admin.token }),
    );
    expect(mine.total).toBe(1);
    expect(mine.items[0]).toMatchObject({
      message: `@${admin.username} deactivated users: @${bob.username}`,
      data: { action: "deactivate" },
    });
    expect(Math.abs(mine.items[0]!.time - Date.now() / 1000)).toBeLessThan(60);
    const future = valid(
      ModerationLogSchema,
      await json(`${A}/moderation_log?user_id=${admin.id}&start_date=2999-01-01`, { token: admin.token }),
    );
    expect(future.total).toBe(0);
  });
});
