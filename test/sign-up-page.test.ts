/**
 * Signing up in a browser, without an app (issue 34): `/auth/sign_up` and invite links, through the same rules as
 * `POST /api/v1/accounts` in every registration mode; a browser session for an account that may sign in at once;
 * `/auth/sign_out`; `registrations.url` pointing apps at the page.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { InstanceV2Schema } from "../src/schemas/instance";
import { browser as pageBrowser } from "./browser";
import { call, json, makeAdmin, registerUser, uniqueName, valid } from "./helpers";

type Vars = Record<string, string>;

/** A browser (test/browser.ts) on the pool's Worker, with the sign-up form at hand. */
function browser(vars: Vars = {}) {
  const b = pageBrowser({ vars });
  const send = b.send;
  /** The page, then the form sent with its CSRF token and these fields. */
  const signUp = async (fields: Record<string, string>, from = "/auth/sign_up") => {
    const page = await send(from);
    expect(page.res.status).toBe(200);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
    const token = /name="token" value="([^"]*)"/.exec(page.text)?.[1];
    const form = new URLSearchParams({ csrf_token: csrf, ...(token ? { token } : {}), ...fields });
    return send("/auth/sign_up", { method: "POST", body: form.toString() });
  };
  return { jar: b.jar("localhost"), send, signUp };
}

const person = (over: Record<string, string> = {}) => {
  const username = uniqueName("web");
  return {
    username,
    email: `${username}@example.com`,
    password: "a long password 1",
    password_confirmation: "a long password 1",
    agreement: "true",
    ...over,
  };
};

const accounts = async (username: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM accounts WHERE username = ?").bind(username).first<{ n: number }>())!
    .n;

describe("the sign-up page", () => {
  it("with open registrations: signs up, signs the browser in, and out again", async () => {
    const b = browser();
    const who = person();
    const { res, text } = await b.signUp(who);
    expect(res.status).toBe(200);
    expect(text).toContain(`@${who.username} is ready`);
    expect(b.jar.get("_pleroma_key")).toBeTruthy();
    // The session is a real sign-in: the API answers for it (the cookie, as Pleroma-FE's session).
    const me = await call("/api/v1/accounts/verify_credentials", {
      headers: { cookie: `_pleroma_key=${b.jar.get("_pleroma_key")}` },
    });
    expect(valid(AccountSchema, await me.json()).username).toBe(who.username);
    const session = b.jar.get("_pleroma_key")!;
    // Another site cannot sign the browser out.
    const forged = await call("/auth/sign_out", {
      method: "POST",
      headers: { origin: "https://evil.example", cookie: `_pleroma_key=${session}` },
    });
    expect(forged.status).toBe(403);
    const out = await b.send("/auth/sign_out", { method: "POST" });
    expect(out.res.status).toBe(303);
    expect(out.res.headers.get("location")).toBe("/");
    expect(b.jar.has("_pleroma_key")).toBe(false);
    const after = await call("/api/v1/accounts/verify_credentials", { headers: { cookie: `_pleroma_key=${session}` } });
    expect(after.status).toBe(403);
  });

  it("refuses a form without its CSRF token, mismatched passwords, a taken name, no agreement; nothing half-made", async () => {
    const b = browser();
    const who = person();
    const forged = await b.send("/auth/sign_up", { method: "POST", body: new URLSearchParams(who).toString() });
    expect(forged.res.status).toBe(403);
    const mismatch = await b.signUp({ ...who, password_confirmation: "another password" });
    expect(mismatch.res.status).toBe(422);
    expect(mismatch.text).toContain("The two passwords differ.");
    // What was typed is kept (not the passwords).
    expect(mismatch.text).toContain(`value="${who.username}"`);
    expect(mismatch.text).not.toContain(who.password);
    const noAgreement = await b.signUp({ ...who, agreement: "" });
    expect(noAgreement.res.status).toBe(422);
    expect(noAgreement.text).toContain("agreement must be accepted");
    expect(await accounts(who.username)).toBe(0);
    const taken = await registerUser();
    const dup = await b.signUp({ ...person(), username: taken.username });
    expect(dup.res.status).toBe(422);
    expect(dup.text).toContain("nickname has already been taken");
  });

  it("with approval required: asks why, registers pending, tells the admins, signs nobody in", async () => {
    const admin = await registerUser();
    await makeAdmin(admin.id);
    const b = browser({ ACCOUNT_APPROVAL_REQUIRED: "true" });
    const page = await b.send("/auth/sign_up");
    expect(page.text).toContain('name="reason"');
    const who = person();
    const noReason = await b.signUp(who);
    expect(noReason.res.status).toBe(422);
    expect(noReason.text).toContain("reason can&#39;t be blank");
    const ok = await b.signUp({ ...who, reason: "I like starlings" });
    expect(ok.res.status).toBe(200);
    expect(ok.text).toContain("once the admins approve");
    expect(b.jar.has("_pleroma_key")).toBe(false);
    const mail = await env.DB.prepare("SELECT count(*) AS n FROM mail_outbox WHERE text LIKE ?")
      .bind(`%${who.username}%I like starlings%`)
      .first<{ n: number }>();
    expect(mail!.n).toBeGreaterThanOrEqual(1);
  });

  it("with confirmation required: mails the link, signs nobody in", async () => {
    const b = browser({ ACCOUNT_ACTIVATION_REQUIRED: "true" });
    const who = person();
    const ok = await b.signUp(who);
    expect(ok.text).toContain("Open the link mailed to you");
    expect(b.jar.has("_pleroma_key")).toBe(false);
    const mail = await env.DB.prepare(`SELECT text FROM mail_outbox WHERE "to" = ?`)
      .bind(who.email)
      .first<{ text: string }>();
    expect(mail!.text).toContain("/api/account/confirm_email/");
  });

  it("by invitation: an invite link fills the code; without a valid one, refused", async () => {
    const admin = await registerUser({ scopes: "read write admin" });
    await makeAdmin(admin.id);
    const invite = await json("/api/v1/pleroma/admin/users/invite_token", {
      method: "POST",
      token: admin.token,
      body: {},
    });
    const b = browser({ REGISTRATIONS_OPEN: "false" });
    const page = await b.send("/auth/sign_up");
    expect(page.text).toContain('name="token"');
    const wrong = await b.signUp({ ...person(), token: "not-an-invite" });
    expect(wrong.res.status).toBe(422);
    expect(wrong.text).toContain("Invalid token");
    const ok = await b.signUp(person(), `/registration/${invite.token}`);
    expect(ok.res.status).toBe(200);
    expect(ok.text).toContain("is ready");
  });

  it("with the native captcha: shows it, and refuses a wrong answer", async () => {
    const b = browser({ CAPTCHA: "native" });
    const page = await b.send("/auth/sign_up");
    expect(page.text).toContain('src="data:image/svg+xml;base64,');
    const wrong = await b.signUp({ ...person(), captcha_solution: "nope" });
    expect(wrong.res.status).toBe(422);
    expect(wrong.text).toMatch(/captcha/i);
  });

  it("is throttled as registrations are, and named by the instance for apps", async () => {
    const b = browser({ REGISTRATIONS_PER_IP: "1" });
    expect((await b.signUp(person())).res.status).toBe(200);
    const second = await b.signUp(person());
    expect(second.res.status).toBe(429);
    const v2 = valid(InstanceV2Schema, await json("/api/v2/instance"));
    expect(v2.registrations.url).toBe("http://localhost/auth/sign_up");
    const front = await (await call("/", { headers: { accept: "text/html" } })).text();
    expect(front).toContain('href="/auth/sign_up"');
  });
});
