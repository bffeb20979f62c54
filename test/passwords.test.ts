import { env } from "cloudflare:test";
import { db } from "../src/db/client";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AccountSchema } from "../src/schemas/account";
import { TokenSchema } from "../src/schemas/oauth";
import { forcePasswordReset } from "../src/services/passwords";
import { appToken, call, freshIp, json, makeApp, registerUser, uniqueName, valid, type TestUser } from "./helpers";

const StatusSchema = z.object({ status: z.literal("success") }).strict();

async function mailsTo(email: string) {
  const { results } = await env.DB.prepare('SELECT * FROM mail_outbox WHERE "to" = ? ORDER BY id')
    .bind(email)
    .all<{ subject: string; text: string }>();
  return results;
}

async function secondToken(user: TestUser, password = user.password): Promise<string> {
  const t = await json("/oauth/token", {
    headers: { "cf-connecting-ip": freshIp() },
    body: {
      grant_type: "password",
      client_id: user.app.client_id,
      client_secret: user.app.client_secret,
      username: user.username,
      password,
    },
  });
  return valid(TokenSchema, t).access_token;
}

const grant = (user: TestUser, password: string) =>
  call("/oauth/token", {
    headers: { "cf-connecting-ip": freshIp() },
    body: {
      grant_type: "password",
      client_id: user.app.client_id,
      client_secret: user.app.client_secret,
      username: user.username,
      password,
    },
  });

/** Asks for a reset and reads the link from the mail. */
async function resetLink(user: TestUser, by: Record<string, string> = { nickname: user.username }): Promise<string> {
  const before = (await mailsTo(user.email)).length;
  const res = await call("/auth/password", { body: by, form: true, headers: { "cf-connecting-ip": freshIp() } });
  expect([res.status, await res.text()]).toEqual([204, ""]);
  await expect.poll(() => mailsTo(user.email).then((m) => m.length)).toBe(before + 1);
  const mail = (await mailsTo(user.email)).at(-1)!;
  expect(mail.subject).toBe("Password reset");
  return /http:\/\/localhost\/api\/v1\/pleroma\/password_reset\/\S+/.exec(mail.text)![0];
}

async function submitReset(token: string, password: string, confirmation = password) {
  return call("/api/v1/pleroma/password_reset", {
    body: { "data[token]": token, "data[password]": password, "data[password_confirmation]": confirmation },
    form: true,
  });
}

describe("change_password", () => {
  it("checks the confirmation, the current password and the new one with Pleroma's messages", async () => {
    const user = await registerUser();
    const ask = (body: Record<string, string>) =>
      json("/api/pleroma/change_password", { token: user.token, body, form: true });
    expect(
      await ask({ password: user.password, new_password: "new password 1", new_password_confirmation: "other" }),
    ).toEqual({ error: "New password does not match confirmation." });
    expect(
      await ask({ password: "wrong", new_password: "new password 1", new_password_confirmation: "new password 1" }),
    ).toEqual({ error: "Invalid password." });
    expect(await ask({ password: user.password, new_password: "", new_password_confirmation: "" })).toEqual({
      error: "New password can't be blank.",
    });
    expect(await ask({ password: user.password, new_password: "short", new_password_confirmation: "short" })).toEqual({
      error: "New password should be at least 8 character(s).",
    });
    // Nothing changed: the old password still works.
    expect((await grant(user, user.password)).status).toBe(200);
  });

  it("changes it, keeps the calling token and revokes the user's other tokens (not other users')", async () => {
    const user = await registerUser();
    const other = await secondToken(user);
    const stranger = await registerUser();
    valid(
      StatusSchema,
      await json("/api/v1/pleroma/change_password", {
        token: user.token,
        body: {
          password: user.password,
          new_password: "brand new secret",
          new_password_confirmation: "brand new secret",
        },
      }),
    );
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: user.token }));
    expect((await call("/api/v1/accounts/verify_credentials", { token: other })).status).toBe(403);
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: stranger.token }));
    expect((await grant(user, user.password)).status).toBe(400);
    expect((await grant(user, "brand new secret")).status).toBe(200);
    const stored = await env.DB.prepare("SELECT password_hash FROM credentials WHERE account_id = ?")
      .bind(user.id)
      .first<{ password_hash: string }>();
    expect(stored!.password_hash).toMatch(/^pbkdf2-sha256\$/);
    expect(stored!.password_hash).not.toContain("brand new secret");
  });

  it("needs write:security and a user", async () => {
    const user = await registerUser({ scopes: "read write:accounts" });
    expect(
      await json("/api/pleroma/change_password", {
        token: user.token,
        body: { password: user.password, new_password: "x".repeat(9), new_password_confirmation: "x".repeat(9) },
        status: 403,
      }),
    ).toEqual({
      error: "Insufficient permissions: write:security.",
    });
    expect((await call("/api/pleroma/change_password", { body: { password: "a" } })).status).toBe(403);
  });
});

describe("change_email", () => {
  it("checks the password, the format and uniqueness, then changes the address", async () => {
    const user = await registerUser();
    const taken = await registerUser();
    const ask = (body: Record<string, string>) => json("/api/pleroma/change_email", { token: user.token, body });
    expect(await ask({ password: "wrong", email: "x@example.com" })).toEqual({ error: "Invalid password." });
    expect(await ask({ password: user.password, email: "not an address" })).toEqual({
      error: "Email has invalid format.",
    });
    expect(await ask({ password: user.password, email: "" })).toEqual({ error: "Email can't be blank." });
    expect(await ask({ password: user.password, email: taken.email.toUpperCase() })).toEqual({
      error: "Email has already been taken.",
    });
    const fresh = `${uniqueName("mail")}@example.org`;
    valid(StatusSchema, await ask({ password: user.password, email: fresh }));
    const me = await json("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(me.pleroma.email).toBe(fresh);
    // Its own address again is not "taken".
    valid(StatusSchema, await ask({ password: user.password, email: fresh }));
  });

  it("asks to confirm the new address when the instance requires confirmation", async () => {
    const user = await registerUser();
    const fresh = `${uniqueName("conf")}@example.org`;
    const vars = { ACCOUNT_ACTIVATION_REQUIRED: "true" };
    valid(
      StatusSchema,
      await json("/api/pleroma/change_email", {
        token: user.token,
        vars,
        body: { password: user.password, email: fresh },
      }),
    );
    const mails = await mailsTo(fresh);
    expect(mails).toHaveLength(1);
    expect(await json("/api/v1/accounts/verify_credentials", { token: user.token, vars, status: 403 })).toMatchObject({
      identifier: "missing_confirmed_email",
    });
    const link = /http:\/\/localhost\/api\/account\/confirm_email\/\S+/.exec(mails[0].text)![0];
    expect((await call(link, { vars })).status).toBe(200);
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: user.token, vars }));
  });
});

describe("password reset", () => {
  it("answers 204 whatever the login, mailing only existing users", async () => {
    const user = await registerUser();
    for (const body of [{ nickname: "nobody" + uniqueName() }, { email: "nobody@nowhere.example" }, {}]) {
      const res = await call("/auth/password", { body, form: true, headers: { "cf-connecting-ip": freshIp() } });
      expect([res.status, await res.text()]).toEqual([204, ""]);
    }
    await resetLink(user, { email: user.email.toUpperCase() });
  });

  it("resets with a single-use link, ending every session; the token is stored as a digest", async () => {
    const user = await registerUser();
    const link = await resetLink(user);
    const token = link.split("/").pop()!;
    const rows = await env.DB.prepare("SELECT * FROM password_reset_tokens WHERE account_id = ?").bind(user.id).all();
    expect(JSON.stringify(rows.results)).not.toContain(token);

    const page = await call(link);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await page.text()).toContain('name="data[password]"');

    // A mismatch shows the form again and does not spend the link.
    const mismatch = await submitReset(token, "the new password", "another one");
    expect(mismatch.status).toBe(422);
    expect(await mismatch.text()).toContain("does not match confirmation");

    const done = await submitReset(token, "the new password");
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("Your password was changed");
    expect((await call("/api/v1/accounts/verify_credentials", { token: user.token })).status).toBe(403);
    expect((await grant(user, user.password)).status).toBe(400);
    expect((await grant(user, "the new password")).status).toBe(200);

    // Used once: the page and the form refuse it now.
    expect((await call(link)).status).toBe(404);
    expect((await submitReset(token, "yet another one")).status).toBe(404);
    expect((await grant(user, "yet another one")).status).toBe(400);
  });

  it("refuses an expired link and an unknown one", async () => {
    const user = await registerUser();
    const link = await resetLink(user);
    await env.DB.prepare("UPDATE password_reset_tokens SET expires_at = ? WHERE account_id = ?")
      .bind(Date.now() - 1, user.id)
      .run();
    expect((await call(link)).status).toBe(404);
    expect((await submitReset(link.split("/").pop()!, "the new password")).status).toBe(404);
    expect((await grant(user, user.password)).status).toBe(200);
    expect((await submitReset("unknown", "the new password")).status).toBe(404);
  });

  it("is throttled per address and per login", async () => {
    const user = await registerUser();
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push(
        (
          await call("/auth/password", {
            body: { nickname: user.username },
            form: true,
            headers: { "cf-connecting-ip": ip },
          })
        ).status,
      );
    expect(statuses).toEqual([204, 204, 204, 204, 204, 429]);
  });
});

describe("forced password reset", () => {
  it("refuses sign-in with Pleroma's message and ends sessions until the user resets", async () => {
    const user = await registerUser();
    const d = db(env);
    const [a, b, c] = forcePasswordReset(d, user.id);
    await d.batch([a, b, c]);
    expect((await call("/api/v1/accounts/verify_credentials", { token: user.token })).status).toBe(403);
    const res = await grant(user, user.password);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "Password reset is required", identifier: "password_reset_required" });
    const basic = {
      authorization: `Basic ${btoa(`${user.username}:${user.password}`)}`,
      "cf-connecting-ip": freshIp(),
    };
    expect(await json("/api/v1/accounts/verify_credentials", { headers: basic, status: 403 })).toMatchObject({
      identifier: "password_reset_required",
    });
    const link = await resetLink(user);
    expect((await submitReset(link.split("/").pop()!, "after the reset")).status).toBe(200);
    expect((await grant(user, "after the reset")).status).toBe(200);
  });
});

describe("password hash cost (PASSWORD_ITERATIONS)", () => {
  const storedCost = async (accountId: string) =>
    (await env.DB.prepare("SELECT password_hash AS h FROM credentials WHERE account_id = ?")
      .bind(accountId)
      .first<{ h: string }>())!.h.split("$")[1];

  it("hashes new passwords at the configured cost, within what workerd allows, and still signs in with older hashes", async () => {
    const app = await makeApp();
    const appTok = await appToken(app);
    const register = async (iterations: string) => {
      const username = uniqueName();
      const vars = { PASSWORD_ITERATIONS: iterations };
      const body = {
        username,
        email: `${username}@example.com`,
        password: "correct horse battery",
        agreement: true,
        locale: "en",
      };
      const token = valid(
        TokenSchema,
        await json("/api/v1/accounts", { token: appTok, vars, headers: { "cf-connecting-ip": freshIp() }, body }),
      );
      const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: token.access_token }));
      return { id: me.id, username, vars };
    };
    const cheap = await register("20000");
    expect(await storedCost(cheap.id)).toBe("20000");
    // Above workerd's cap of 100,000, or below 10,000: the nearest allowed cost.
    expect(await storedCost((await register("500000")).id)).toBe("100000");
    expect(await storedCost((await register("10")).id)).toBe("10000");
    // A hash made at one cost signs in whatever the instance's cost is now (the stored count is used).
    const grant = {
      grant_type: "password",
      username: cheap.username,
      password: "correct horse battery",
      client_id: app.client_id,
      client_secret: app.client_secret,
    };
    valid(TokenSchema, await json("/oauth/token", { body: grant, headers: { "cf-connecting-ip": freshIp() } }));
    await json("/oauth/token", {
      body: { ...grant, password: "wrong" },
      headers: { "cf-connecting-ip": freshIp() },
      status: 400,
    });
  });
});

describe("asking for the password again (one rule for every route that does)", () => {
  /** Each route that asks, and how it says the password was wrong (Pleroma's answer there). */
  const asking: [string, string, Record<string, unknown>, number][] = [
    ["POST", "/api/v1/pleroma/delete_account", {}, 200],
    ["DELETE", "/api/v1/pleroma/delete_account", {}, 200],
    ["POST", "/api/v1/pleroma/disable_account", {}, 200],
    ["POST", "/api/v1/pleroma/move_account", { target_account: "nobody@nowhere.example" }, 200],
    [
      "POST",
      "/api/v1/pleroma/change_password",
      { new_password: "new password!", new_password_confirmation: "new password!" },
      200,
    ],
    ["POST", "/api/v1/pleroma/change_email", { email: "elsewhere@example.com" }, 200],
    ["POST", "/api/v1/pleroma/accounts/mfa/confirm/totp", { code: "000000" }, 422],
    ["DELETE", "/api/v1/pleroma/accounts/mfa/totp", {}, 422],
  ];

  it("refuses a missing or wrong password everywhere, changes nothing, and counts the failures together", async () => {
    const user = await registerUser();
    let failures = 0;
    for (const [method, path, body, status] of asking) {
      for (const password of [undefined, "wrong password", ""]) {
        const res = await json(path, {
          method,
          token: user.token,
          body: password === undefined ? body : { ...body, password },
          status,
        });
        expect(res, `${method} ${path}`).toEqual({ error: "Invalid password." });
        failures++;
      }
    }
    // Nothing changed: the account is active, its address and password are the same.
    const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: user.token }));
    expect(me.id).toBe(user.id);
    expect(await secondToken(user)).toBeTruthy();
    const [row] = (
      await env.DB.prepare("SELECT email FROM users WHERE account_id = ?").bind(user.id).all<{ email: string }>()
    ).results;
    expect(row!.email).toBe(user.email);
    // The failures of every route add up on one per-account count: past the limit (30), even the right password
    // is refused (429) on any of them, so guesses cannot be spread over routes.
    expect(failures).toBe(24);
    for (; failures < 30; failures++)
      await json("/api/v1/pleroma/disable_account", { token: user.token, body: { password: "wrong" } });
    for (const [method, path, body] of [asking[2]!, asking[4]!, asking[6]!]) {
      const res = await call(path, { method, token: user.token, body: { ...body, password: user.password } });
      expect(res.status, `${method} ${path}`).toBe(429);
    }
    // Another user is not affected.
    const other = await registerUser();
    expect(
      await json("/api/v1/pleroma/change_email", {
        token: other.token,
        body: { password: other.password, email: `${uniqueName()}@example.com` },
      }),
    ).toEqual({ status: "success" });
  });
});
