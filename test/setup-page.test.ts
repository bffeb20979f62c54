/**
 * The first administrator, made in the browser (issue 33): `/setup` while no admin exists, for the holder of the
 * set-up secret only; gone afterwards. (This file's database starts with no admin.)
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { TokenSchema } from "../src/schemas/oauth";
import { call, json, makeApp, registerUser, valid } from "./helpers";

const SECRET = "a-set-up-secret-of-some-length";
const vars = { SETUP_SECRET: SECRET };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const submit = (fields: Record<string, string>) => call("/setup", { method: "POST", body: form(fields), vars });
const admins = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM users WHERE is_admin = 1").first<{ n: number }>())!.n;

describe("/setup", () => {
  it("is not there without a configured secret", async () => {
    expect((await call("/setup")).status).toBe(404);
    expect((await call("/setup", { method: "POST", body: form({ secret: "" }) })).status).toBe(404);
  });

  it("makes the first admin for the secret's holder, refuses guesses and bad input, then goes away", async () => {
    // The link's secret leaves the address at once: kept in a cookie for this page only, the browser sent on.
    const link = await call(`/setup?secret=${SECRET}`, { vars });
    expect(link.status).toBe(303);
    expect(link.headers.get("location")).toBe("/setup");
    expect(link.headers.get("referrer-policy")).toBe("no-referrer");
    const cookie = link.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^starling_setup=/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).toMatch(/Path=\/setup/i);
    expect(await (await call("/setup", { vars })).text()).not.toContain(`value="${SECRET}"`);
    const page = await call("/setup", { vars, headers: { cookie: cookie.split(";")[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("cache-control")).toBe("no-store");
    const html = await page.text();
    expect(html).toContain('action="/setup"');
    expect(html).toContain(`value="${SECRET}"`);

    const wrong = await submit({
      secret: "guess",
      username: "root",
      email: "root@example.com",
      password: "a long password",
    });
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain("secret is not right");
    const bad = await submit({ secret: SECRET, username: "no spaces", email: "nope", password: "short" });
    expect(bad.status).toBe(422);
    const text = await bad.text();
    expect(text).toContain("nickname has invalid format");
    expect(text).toContain("email has invalid format");
    expect(text).toContain("password should be at least 8 character(s)");
    expect(await admins()).toBe(0);
    // A nickname an account (not an admin) already has: said in words, not a 500.
    const someone = await registerUser();
    const taken = await submit({
      secret: SECRET,
      username: someone.username,
      email: "fresh@example.com",
      password: "a long password",
    });
    expect(taken.status).toBe(422);
    expect(await taken.text()).toContain("nickname has already been taken");

    // Two submissions racing: one admin.
    const [a, b] = await Promise.all([
      submit({ secret: SECRET, username: "boss", email: "boss@example.com", password: "a long password" }),
      submit({ secret: SECRET, username: "other", email: "other@example.com", password: "a long password" }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 404]);
    expect(await admins()).toBe(1);
    const winner = a.status === 200 ? "boss" : "other";
    // Once used, the secret's cookie is gone.
    expect((a.status === 200 ? a : b).headers.get("set-cookie")).toMatch(/^starling_setup=;.*Max-Age=0/i);

    // The admin signs in with an app, and is one.
    const app = await makeApp("read write admin");
    const token = valid(
      TokenSchema,
      await json("/oauth/token", {
        body: {
          grant_type: "password",
          client_id: app.client_id,
          client_secret: app.client_secret,
          username: winner,
          password: "a long password",
          scope: "read write admin",
        },
      }),
    );
    const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: token.access_token }));
    expect(me.pleroma).toMatchObject({ is_admin: true });

    expect((await call(`/setup?secret=${SECRET}`, { vars })).status).toBe(404);
    const again = await submit({
      secret: SECRET,
      username: "late",
      email: "late@example.com",
      password: "a long password",
    });
    expect(again.status).toBe(404);
    expect(await admins()).toBe(1);
    // An admin made here and later demoted does not reopen the page for the old secret.
    await env.DB.prepare("UPDATE users SET is_admin = 0").run();
    expect((await call(`/setup?secret=${SECRET}`, { vars })).status).toBe(404);
  });
});
