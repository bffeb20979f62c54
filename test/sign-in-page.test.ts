/**
 * Signing in in a browser outside OAuth (issue 34): `/auth/sign_in`, the authorize page's password and MFA steps,
 * the `_pleroma_key` session, and `return_to` kept to this instance's own paths.
 */
import { env } from "cloudflare:test";
import { Secret, TOTP } from "otpauth";
import { describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { browser } from "./browser";
import { call, json, registerUser, valid, type TestUser } from "./helpers";

const signIn = async (b: ReturnType<typeof browser>, login: string, password: string, returnTo?: string) => {
  const page = await b.send(
    `/auth/sign_in${returnTo === undefined ? "" : `?return_to=${encodeURIComponent(returnTo)}`}`,
  );
  expect(page.res.status).toBe(200);
  return b.submit(page, "/auth/sign_in", { username: login, password });
};

const me = (session: string | undefined) =>
  call("/api/v1/accounts/verify_credentials", { headers: { cookie: `_pleroma_key=${session}` } });

describe("the sign-in page", () => {
  it("signs in with nickname or e-mail, sets the session and goes back to return_to", async () => {
    const user = await registerUser();
    const b = browser();
    const page = await b.send("/auth/sign_in?return_to=%2Fusers%2Fsomeone%3Fmax_id%3D1");
    expect(page.res.headers.get("x-frame-options")).toBe("DENY");
    expect(page.res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.res.headers.get("cache-control")).toBe("no-store");
    expect(page.text).toContain('name="return_to" value="/users/someone?max_id=1"');
    const done = await b.submit(page, "/auth/sign_in", { username: user.email, password: user.password });
    expect(done.res.status).toBe(303);
    expect(done.res.headers.get("location")).toBe("/users/someone?max_id=1");
    expect(done.res.headers.get("set-cookie")).toMatch(/_pleroma_key=[^;]+;.*HttpOnly/i);
    expect(valid(AccountSchema, await (await me(b.jar("localhost").get("_pleroma_key"))).json()).id).toBe(user.id);
    // Signed in, the page says so; signing in again (as anyone) ends the old session.
    const again = await b.send("/auth/sign_in");
    expect(again.text).toContain(`signed in as <strong>@${user.username}</strong>`);
    const old = b.jar("localhost").get("_pleroma_key");
    const second = await b.submit(again, "/auth/sign_in", { username: user.username, password: user.password });
    expect(second.res.headers.get("location")).toBe("/");
    expect(b.jar("localhost").get("_pleroma_key")).not.toBe(old);
    expect((await me(old)).status).toBe(403);
    // And it offers to sign out (a page whose POST keeps its Origin: not no-referrer).
    const signedIn = await b.send("/auth/sign_in");
    expect(signedIn.text).toContain('<meta name="referrer" content="same-origin">');
    const current = b.jar("localhost").get("_pleroma_key");
    const out = await b.submit(signedIn, "/auth/sign_out", {});
    expect(out.res.status).toBe(303);
    expect(b.jar("localhost").has("_pleroma_key")).toBe(false);
    expect((await me(current)).status).toBe(403);
    // Mastodon's field names work too.
    const m = browser();
    const form = await m.send("/auth/sign_in");
    const viaMastodon = await m.submit(form, "/auth/sign_in", {
      "user[email]": user.email,
      "user[password]": user.password,
    });
    expect(viaMastodon.res.status).toBe(303);
  });

  it("refuses a wrong password (the form again, what was typed kept), and a form without its CSRF token", async () => {
    const user = await registerUser();
    const b = browser();
    const wrong = await signIn(b, user.username, "not the password");
    expect(wrong.res.status).toBe(401);
    expect(wrong.text).toContain("Invalid nickname or password.");
    expect(wrong.text).toContain(`value="${user.username}"`);
    expect(wrong.text).not.toContain("not the password");
    expect(b.jar("localhost").has("_pleroma_key")).toBe(false);
    // No token, or another one than the cookie's: refused, nobody signed in.
    for (const csrf of [undefined, "x".repeat(32)]) {
      const forged = await b.send("/auth/sign_in", {
        method: "POST",
        body: new URLSearchParams({
          username: user.username,
          password: user.password,
          ...(csrf ? { csrf_token: csrf } : {}),
        }).toString(),
      });
      expect(forged.res.status).toBe(403);
      expect(forged.text).toContain("The form expired");
      expect(b.jar("localhost").has("_pleroma_key")).toBe(false);
    }
  });

  it("answers disabled, unapproved and unconfirmed accounts in words, with no session", async () => {
    const cases: [string, string][] = [
      ["UPDATE accounts SET deactivated = 1 WHERE id = ?", "Your account is currently disabled"],
      ["UPDATE users SET approval_pending = 1 WHERE account_id = ?", "Your account is awaiting approval."],
      ["UPDATE users SET confirmed = 0 WHERE account_id = ?", "Your login is missing a confirmed e-mail address"],
    ];
    for (const [statement, words] of cases) {
      const user = await registerUser();
      await env.DB.prepare(statement).bind(user.id).run();
      const b = browser();
      const res = await signIn(b, user.username, user.password);
      expect(res.res.status).toBe(403);
      expect(res.text).toContain(words);
      expect(b.jar("localhost").has("_pleroma_key")).toBe(false);
    }
  });

  it("never redirects off this instance", async () => {
    const user = await registerUser();
    const attempts = [
      "//evil.example/",
      "/\\evil.example/",
      "/\\/evil.example",
      "https://evil.example/",
      "http:evil.example",
      "javascript:alert(1)",
      "/\t/evil.example",
      "/%0a/evil.example".replace("%0a", "\n"),
      " //evil.example",
      // Dot segments resolve to `//evil.example`.
      "/..//evil.example",
      "/.//evil.example",
      "/a/..//evil.example",
      "/%2e%2e//evil.example",
      "/%2E//evil.example",
    ];
    for (const target of attempts) {
      const b = browser();
      const page = await b.send(`/auth/sign_in?return_to=${encodeURIComponent(target)}`);
      expect(page.text).toContain('name="return_to" value="/"');
      // A forged hidden field is checked again on the way out.
      const done = await b.send("/auth/sign_in", {
        method: "POST",
        body: new URLSearchParams({
          csrf_token: /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!,
          username: user.username,
          password: user.password,
          return_to: target,
        }).toString(),
      });
      expect(done.res.status, target).toBe(303);
      expect(done.res.headers.get("location"), target).toBe("/");
    }
  });

  it("asks an MFA account for the second factor (as the authorize page does) before any session", async () => {
    const user: TestUser = await registerUser();
    const setup = await json("/api/pleroma/accounts/mfa/setup/totp", { token: user.token });
    const codeAt = (t: number) => new TOTP({ secret: Secret.fromBase32(setup.key) }).generate({ timestamp: t });
    await json("/api/pleroma/accounts/mfa/confirm/totp", {
      token: user.token,
      body: { password: user.password, code: codeAt(Date.now() - 30_000) },
    });
    const b = browser();
    const step1 = await signIn(b, user.username, user.password, "/notice/1");
    expect(step1.res.status).toBe(200);
    expect(step1.text).toContain('action="/auth/sign_in/mfa"');
    expect(b.jar("localhost").has("_pleroma_key")).toBe(false);
    // The page's MFA token belongs to no app: an app cannot redeem it for a token.
    const mfaToken = /name="mfa_token" value="([^"]+)"/.exec(step1.text)![1]!;
    const asApp = await call("/oauth/mfa/challenge", {
      body: {
        client_id: user.app.client_id,
        client_secret: user.app.client_secret,
        mfa_token: mfaToken,
        challenge_type: "totp",
        code: codeAt(Date.now()),
      },
    });
    expect(asApp.status).toBe(400);
    const wrongCode = codeAt(Date.now() + 10 * 60_000);
    const wrong = await b.submit(step1, "/auth/sign_in/mfa", { code: wrongCode });
    expect(wrong.res.status).toBe(401);
    expect(wrong.text).toContain("Two-factor authentication failed.");
    expect(b.jar("localhost").has("_pleroma_key")).toBe(false);
    const done = await b.submit(wrong, "/auth/sign_in/mfa", { code: codeAt(Date.now()) });
    expect(done.res.status).toBe(303);
    expect(done.res.headers.get("location")).toBe("/notice/1");
    expect((await me(b.jar("localhost").get("_pleroma_key"))).status).toBe(200);
  });

  it("is linked from the front page and the sign-up page", async () => {
    for (const path of ["/", "/auth/sign_up"]) {
      const res = await call(path, { headers: { accept: "text/html" } });
      expect(await res.text()).toContain('href="/auth/sign_in"');
    }
  });
});

describe("the new pages under hostile input", () => {
  it("answer below 500 whatever is sent", async () => {
    const long = "x".repeat(100_000);
    const bodies: [string, string][] = [
      ["application/x-www-form-urlencoded", `username=${long}&password=${long}&csrf_token=${long}&return_to=${long}`],
      ["application/x-www-form-urlencoded", "user[email][]=a&user[password][x]=b&return_to[]=/x&mfa_token[]=1"],
      ["application/x-www-form-urlencoded", "action=follow&id=%ZZ&csrf_token=1&status[profile]=%00"],
      ["application/json", "{not json"],
      ["application/json", JSON.stringify({ user: "string", status: [1, 2], return_to: { a: 1 } })],
      ["text/plain", "hello"],
    ];
    const paths = [
      "/auth/sign_in",
      "/auth/sign_in/mfa",
      "/main/ostatus",
      "/authorize_interaction",
      "/api/v1/pleroma/remote_interaction",
    ];
    for (const path of paths)
      for (const [type, body] of bodies) {
        const res = await call(path, { method: "POST", body, headers: { "content-type": type } });
        expect(res.status, `${path} ${type} ${body.slice(0, 60)}`).toBeLessThan(500);
      }
    for (const q of [
      `/auth/sign_in?return_to=${long}`,
      "/auth/sign_in?return_to[]=/a",
      "/main/ostatus?nickname[]=a",
      "/authorize_interaction?uri=%ZZ",
      `/ostatus_subscribe?acct=${long}`,
    ]) {
      const res = await call(q, { headers: { accept: "text/html" } });
      expect(res.status, q.slice(0, 80)).toBeLessThan(500);
    }
  });
});
