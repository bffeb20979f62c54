import { env } from "cloudflare:test";
import { Secret, TOTP } from "otpauth";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { TokenSchema } from "../src/schemas/oauth";
import { AccountSchema } from "../src/schemas/account";
import { collectMfaTokens, disableMfa } from "../src/services/mfa";
import { db } from "../src/db/client";
import { call, freshIp, json, makeApp, registerUser, valid, type TestApp, type TestUser } from "./helpers";

const SettingsSchema = z.object({ settings: z.object({ enabled: z.boolean(), totp: z.boolean() }) }).strict();
const SetupSchema = z
  .object({ key: z.string().regex(/^[A-Z2-7]+=*$/), provisioning_uri: z.string().startsWith("otpauth://totp/") })
  .strict();
const REDIRECT = "https://client.example/callback";

/**
 * Codes belong to 30-second steps of the clock, which the Worker reads too (same isolate). Each test starts one
 * second into a fresh step, the clock running on from there: a test (well under 29 s, however busy the machine)
 * never sees a step end between computing a code and the server checking it.
 */
beforeEach(() => {
  const t = Date.now();
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, now: (Math.floor(t / 30_000) + 1) * 30_000 + 1000 });
});
afterAll(() => vi.useRealTimers());

const codeFor = (key: string, at = Date.now()) =>
  new TOTP({ secret: Secret.fromBase32(key) }).generate({ timestamp: at });
/**
 * The code of the next 30-second step: a code is accepted once (each step at most once per user), and the server
 * accepts one step of drift either way, so a test may use the previous, the current and the next step's codes.
 */
const nextStepCode = (key: string) => codeFor(key, Date.now() + 30_000);
/** A code that is valid for no step near now (neither the current one nor its neighbours). */
function wrongCode(key: string) {
  const near = new Set([-60_000, -30_000, 0, 30_000, 60_000].map((d) => codeFor(key, Date.now() + d)));
  for (let i = 0; ; i++) {
    const c = String(i).padStart(6, "0");
    if (!near.has(c)) return c;
  }
}

async function enableMfa(user: TestUser): Promise<string> {
  const setup = valid(SetupSchema, await json("/api/pleroma/accounts/mfa/setup/totp", { token: user.token }));
  // The previous step's code (one step of drift is allowed): the current step's stays unused for signing in.
  expect(
    await json("/api/pleroma/accounts/mfa/confirm/totp", {
      token: user.token,
      body: { password: user.password, code: codeFor(setup.key, Date.now() - 30_000) },
    }),
  ).toEqual({});
  return setup.key;
}

/** New backup codes; with MFA on the password is asked (in the query: Pleroma's route is a GET). */
const backupCodes = (user: TestUser, path = "/api/pleroma/accounts/mfa/backup_codes") =>
  json(`${path}?password=${encodeURIComponent(user.password)}`, { token: user.token });

const passwordGrant = (app: TestApp, user: TestUser, extra: Record<string, string> = {}) =>
  call("/oauth/token", {
    headers: { "cf-connecting-ip": freshIp() },
    body: {
      grant_type: "password",
      client_id: app.client_id,
      client_secret: app.client_secret,
      username: user.username,
      password: user.password,
      ...extra,
    },
  });

async function mfaToken(app: TestApp, user: TestUser): Promise<string> {
  const res = await passwordGrant(app, user);
  expect(res.status).toBe(403);
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["error", "mfa_token", "supported_challenge_types"]);
  expect(body.error).toBe("mfa_required");
  expect(body.supported_challenge_types).toBe("totp");
  return body.mfa_token as string;
}

const challenge = (app: TestApp, token: string, type: string, code: string) =>
  call("/oauth/mfa/challenge", {
    body: { client_id: app.client_id, client_secret: app.client_secret, mfa_token: token, challenge_type: type, code },
  });

describe("MFA settings", () => {
  it("starts off, sets up TOTP (off until confirmed), confirms with password and code, and turns off with the password", async () => {
    const user = await registerUser();
    for (const path of ["/api/pleroma/accounts/mfa", "/api/v1/pleroma/accounts/mfa"]) {
      expect(valid(SettingsSchema, await json(path, { token: user.token }))).toEqual({
        settings: { enabled: false, totp: false },
      });
    }
    const setup = valid(SetupSchema, await json("/api/v1/pleroma/accounts/mfa/setup/totp", { token: user.token }));
    const uri = new URL(setup.provisioning_uri);
    expect(uri.searchParams.get("secret")).toBe(setup.key.replace(/=+$/, ""));
    expect(decodeURIComponent(uri.pathname)).toContain(user.email);
    // Set up but not confirmed: still off, and a password grant still gives a token.
    expect((await json("/api/pleroma/accounts/mfa", { token: user.token })).settings).toEqual({
      enabled: false,
      totp: false,
    });

    // Wrong password, wrong code, no code: 422 with Pleroma's messages; nothing changes.
    expect(
      await json("/api/pleroma/accounts/mfa/confirm/totp", {
        token: user.token,
        body: { password: "wrong password", code: codeFor(setup.key) },
        status: 422,
      }),
    ).toEqual({ error: "Invalid password." });
    expect(
      await json("/api/pleroma/accounts/mfa/confirm/totp", {
        token: user.token,
        body: { password: user.password, code: wrongCode(setup.key) },
        status: 422,
      }),
    ).toEqual({ error: "invalid_token" });
    expect(
      await json("/api/pleroma/accounts/mfa/confirm/totp", {
        token: user.token,
        body: { password: user.password },
        status: 422,
      }),
    ).toEqual({ error: "invalid_token" });
    expect(
      await json("/api/pleroma/accounts/mfa/confirm/sms", {
        token: user.token,
        body: { password: user.password, code: "1" },
        status: 400,
      }),
    ).toEqual({ error: "undefined mfa method" });
    expect(await json("/api/pleroma/accounts/mfa/setup/sms", { token: user.token, status: 400 })).toEqual({
      error: "undefined method",
    });
    expect((await json("/api/pleroma/accounts/mfa", { token: user.token })).settings.enabled).toBe(false);

    expect(
      await json("/api/pleroma/accounts/mfa/confirm/totp", {
        token: user.token,
        body: { password: user.password, code: codeFor(setup.key) },
      }),
    ).toEqual({});
    expect(await json("/api/pleroma/accounts/mfa", { token: user.token })).toEqual({
      settings: { enabled: true, totp: true },
    });

    expect(
      await json("/api/pleroma/accounts/mfa/totp", {
        method: "DELETE",
        token: user.token,
        body: { password: "nope" },
        status: 422,
      }),
    ).toEqual({ error: "Invalid password." });
    expect((await json("/api/pleroma/accounts/mfa", { token: user.token })).settings.enabled).toBe(true);
    expect(
      await json("/api/pleroma/accounts/mfa/totp", {
        method: "DELETE",
        token: user.token,
        body: { password: user.password },
      }),
    ).toEqual({});
    expect(await json("/api/pleroma/accounts/mfa", { token: user.token })).toEqual({
      settings: { enabled: false, totp: false },
    });
  });

  it("keeps a confirmed secret working while a new set-up is pending", async () => {
    const user = await registerUser();
    const key = await enableMfa(user);
    const next = valid(SetupSchema, await json("/api/pleroma/accounts/mfa/setup/totp", { token: user.token }));
    expect(next.key).not.toBe(key);
    expect((await json("/api/pleroma/accounts/mfa", { token: user.token })).settings.enabled).toBe(true);
    const token = await mfaToken(user.app, user);
    const res = await challenge(user.app, token, "totp", codeFor(key));
    expect(res.status).toBe(200);
  });

  it("needs the security scopes: read:security to read, write:security to change", async () => {
    const user = await registerUser({ scopes: "read:accounts write:accounts" });
    expect(await json("/api/pleroma/accounts/mfa", { token: user.token, status: 403 })).toEqual({
      error: "Insufficient permissions: read:security.",
    });
    expect(await json("/api/pleroma/accounts/mfa/setup/totp", { token: user.token, status: 403 })).toEqual({
      error: "Insufficient permissions: write:security.",
    });
    expect(await json("/api/pleroma/accounts/mfa/backup_codes", { token: user.token, status: 403 })).toEqual({
      error: "Insufficient permissions: write:security.",
    });
    expect((await call("/api/pleroma/accounts/mfa")).status).toBe(403);
  });

  it("stores the TOTP secret sealed and backup codes as digests", async () => {
    const user = await registerUser();
    const key = await enableMfa(user);
    const { codes } = await backupCodes(user);
    const row = await env.DB.prepare("SELECT * FROM credentials WHERE account_id = ?")
      .bind(user.id)
      .first<Record<string, string>>();
    expect(row!.totp_secret).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(key.replace(/=+$/, ""));
    const stored = await env.DB.prepare("SELECT code_hash FROM mfa_backup_codes WHERE account_id = ?")
      .bind(user.id)
      .all<{ code_hash: string }>();
    expect(stored.results).toHaveLength(codes.length);
    for (const code of codes) expect(JSON.stringify(stored.results)).not.toContain(code);
    // A sealed secret copied to another account's row does not open there (bound to its owner).
    const other = await registerUser();
    await env.DB.prepare("UPDATE credentials SET totp_secret = ? WHERE account_id = ?")
      .bind(row!.totp_secret, other.id)
      .run();
    const token = await mfaToken(other.app, other);
    expect((await challenge(other.app, token, "totp", codeFor(key))).status).toBe(400);
    // No answer shows a secret.
    const me = await json("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(JSON.stringify(me)).not.toContain(row!.totp_secret);
  });

  it("gives five new backup codes each time, the old ones stop working", async () => {
    const user = await registerUser();
    await enableMfa(user);
    const first = await backupCodes(user);
    expect(first.codes).toHaveLength(5);
    for (const c of first.codes) expect(c).toMatch(/^[0-9a-f]{16}$/);
    const second = await backupCodes(user, "/api/v1/pleroma/accounts/mfa/backup_codes");
    expect(second.codes.some((c: string) => first.codes.includes(c))).toBe(false);
    const token = await mfaToken(user.app, user);
    expect(
      await json("/oauth/mfa/challenge", {
        body: {
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          mfa_token: token,
          challenge_type: "recovery",
          code: first.codes[0],
        },
        status: 400,
      }),
    ).toEqual({ error: "Invalid code" });
    const ok = await challenge(user.app, token, "recovery", second.codes[0]);
    expect(ok.status).toBe(200);
  });

  it("with MFA on, new backup codes need the password (a write token alone gets none); with MFA off they do not", async () => {
    const user = await registerUser();
    // Off: Pleroma-FE asks for codes before it confirms TOTP (with the password), so none is asked here.
    const before = await json("/api/pleroma/accounts/mfa/backup_codes", { token: user.token });
    expect(before.codes).toHaveLength(5);
    await enableMfa(user);
    for (const query of ["", "?password=wrong"]) {
      expect(
        await json(`/api/pleroma/accounts/mfa/backup_codes${query}`, { token: user.token, status: 422 }),
        query,
      ).toEqual({ error: "Invalid password." });
    }
    // The codes in force are still the ones given before.
    const token = await mfaToken(user.app, user);
    expect((await challenge(user.app, token, "recovery", before.codes[0])).status).toBe(200);
  });

  it("Pleroma-FE's button: no password within 15 minutes of a sign-in that passed the second factor; the owner mailed each time (issue 44)", async () => {
    const user = await registerUser();
    const before = await json("/api/pleroma/accounts/mfa/backup_codes", { token: user.token });
    await enableMfa(user);
    const mails = async () =>
      (
        await env.DB.prepare('SELECT subject FROM mail_outbox WHERE "to" = ? AND subject = ?')
          .bind(user.email, "New backup codes")
          .all()
      ).results.length;
    expect(await mails()).toBe(0);
    // Signed in with the second factor (a backup code), as Pleroma-FE does, then asking as it asks: no password.
    const signedIn = await challenge(user.app, await mfaToken(user.app, user), "recovery", before.codes[0]);
    expect(signedIn.status).toBe(200);
    const fresh = valid(TokenSchema, await signedIn.json());
    const codes = await json("/api/pleroma/accounts/mfa/backup_codes", { token: fresh.access_token });
    expect(codes.codes).toHaveLength(5);
    expect(await mails()).toBe(1);
    // The old ones stopped working; the new ones work.
    expect((await challenge(user.app, await mfaToken(user.app, user), "recovery", before.codes[1])).status).toBe(400);
    // Later than 15 minutes after that sign-in, or with a token that never passed it, the password is asked again.
    await env.DB.prepare(
      "UPDATE tokens SET second_factor_at = second_factor_at - 16 * 60000 WHERE token_hash IS NOT NULL AND second_factor_at IS NOT NULL AND account_id = ?",
    )
      .bind(user.id)
      .run();
    for (const token of [fresh.access_token, user.token])
      expect(await json("/api/pleroma/accounts/mfa/backup_codes", { token, status: 422 })).toEqual({
        error: "Invalid password.",
      });
    expect(await mails()).toBe(1);
    await backupCodes(user);
    expect(await mails()).toBe(2);
  });

  it("turning MFA on ends the user's other tokens and browser sessions, as a password change does", async () => {
    const user = await registerUser();
    // A second token (another app signed in with the password) and a pending MFA sign-in.
    const other = await makeApp();
    const second = valid(
      TokenSchema,
      await json("/oauth/token", {
        headers: { "cf-connecting-ip": freshIp() },
        body: {
          grant_type: "password",
          client_id: other.client_id,
          client_secret: other.client_secret,
          username: user.username,
          password: user.password,
        },
      }),
    );
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: second.access_token }));
    await enableMfa(user);
    // Refused as any unknown token is (403, as after change_password).
    expect((await call("/api/v1/accounts/verify_credentials", { token: second.access_token })).status).toBe(403);
    // The token that turned it on stays.
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: user.token }));
  });

  it("a failed MFA confirmation (wrong code) ends no session", async () => {
    const user = await registerUser();
    const other = await makeApp();
    const second = valid(
      TokenSchema,
      await json("/oauth/token", {
        headers: { "cf-connecting-ip": freshIp() },
        body: {
          grant_type: "password",
          client_id: other.client_id,
          client_secret: other.client_secret,
          username: user.username,
          password: user.password,
        },
      }),
    );
    const setup = valid(SetupSchema, await json("/api/pleroma/accounts/mfa/setup/totp", { token: user.token }));
    expect(
      await json("/api/pleroma/accounts/mfa/confirm/totp", {
        token: user.token,
        body: { password: user.password, code: wrongCode(setup.key) },
        status: 422,
      }),
    ).toEqual({ error: "invalid_token" });
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: second.access_token }));
    expect((await json("/api/pleroma/accounts/mfa", { token: user.token })).settings.enabled).toBe(false);
  });
});

describe("signing in with MFA", () => {
  it("password grant answers mfa_required; the challenge with a TOTP code gives a token with the scopes asked for", async () => {
    const user = await registerUser();
    const key = await enableMfa(user);
    const res = await passwordGrant(user.app, user, { scope: "read" });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { mfa_token: string };
    // A wrong code: 400 "Invalid code"; the right one then works.
    expect(
      await json("/oauth/mfa/challenge", {
        body: {
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          mfa_token: body.mfa_token,
          challenge_type: "totp",
          code: wrongCode(key),
        },
        status: 400,
      }),
    ).toEqual({ error: "Invalid code" });
    const token = valid(
      TokenSchema,
      await json("/oauth/mfa/challenge", {
        body: {
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          mfa_token: body.mfa_token,
          challenge_type: "totp",
          code: codeFor(key),
        },
      }),
    );
    expect(token.scope).toBe("read");
    expect(token.me).toContain(user.username);
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: token.access_token }));
    // The MFA token works once (even with a code not used yet).
    expect((await challenge(user.app, body.mfa_token, "totp", nextStepCode(key))).status).toBe(400);
  });

  it("a TOTP code works once: replayed within its window it is refused, the next step's is accepted", async () => {
    const user = await registerUser();
    const key = await enableMfa(user);
    const code = codeFor(key);
    expect((await challenge(user.app, await mfaToken(user.app, user), "totp", code)).status).toBe(200);
    const replay = await challenge(user.app, await mfaToken(user.app, user), "totp", code);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toEqual({ error: "Invalid code" });
    // Nor an earlier step's (the confirmation's), still within the drift allowed.
    expect(
      (await challenge(user.app, await mfaToken(user.app, user), "totp", codeFor(key, Date.now() - 30_000))).status,
    ).toBe(400);
    expect((await challenge(user.app, await mfaToken(user.app, user), "totp", nextStepCode(key))).status).toBe(200);
  });

  it("refuses an MFA token for another app, an unknown type, an unknown or expired token, and a bad client", async () => {
    const user = await registerUser();
    const key = await enableMfa(user);
    const token = await mfaToken(user.app, user);
    const other = await makeApp();
    expect((await challenge(other, token, "totp", codeFor(key))).status).toBe(400);
    expect((await challenge(user.app, token, "sms", codeFor(key))).status).toBe(400);
    expect((await challenge(user.app, "nonsense", "totp", codeFor(key))).status).toBe(400);
    expect((await challenge({ ...user.app, client_secret: "bad" }, token, "totp", codeFor(key))).status).toBe(400);
    expect((await call("/oauth/mfa/challenge", { body: {} })).status).toBe(400);
    // Still usable after those failures (three counted attempts, under the five allowed).
    expect((await challenge(user.app, token, "totp", codeFor(key))).status).toBe(200);
    const late = await mfaToken(user.app, user);
    await env.DB.prepare("UPDATE mfa_tokens SET expires_at = ? WHERE account_id = ?")
      .bind(Date.now() - 1, user.id)
      .run();
    expect((await challenge(user.app, late, "totp", codeFor(key))).status).toBe(400);
    // The token is stored as a digest only.
    const fresh = await mfaToken(user.app, user);
    const rows = await env.DB.prepare("SELECT * FROM mfa_tokens WHERE account_id = ?").bind(user.id).all();
    expect(JSON.stringify(rows.results)).not.toContain(fresh);
  });

  it("spends an MFA token after five wrong codes", async () => {
    const user = await registerUser();
    const key = await enableMfa(user);
    const token = await mfaToken(user.app, user);
    for (let i = 0; i < 5; i++) expect((await challenge(user.app, token, "totp", wrongCode(key))).status).toBe(400);
    expect((await challenge(user.app, token, "totp", codeFor(key))).status).toBe(400);
  });

  it("a backup code works once", async () => {
    const user = await registerUser();
    await enableMfa(user);
    const { codes } = await backupCodes(user);
    const t1 = await mfaToken(user.app, user);
    valid(
      TokenSchema,
      await json("/oauth/mfa/challenge", {
        body: {
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          mfa_token: t1,
          challenge_type: "recovery",
          code: codes[1],
        },
      }),
    );
    const t2 = await mfaToken(user.app, user);
    expect((await challenge(user.app, t2, "recovery", codes[1])).status).toBe(400);
    expect((await challenge(user.app, t2, "recovery", codes[2])).status).toBe(200);
  });

  it("refuses HTTP Basic for MFA users, and accepts it again once MFA is off", async () => {
    const user = await registerUser();
    await enableMfa(user);
    const basic = {
      authorization: `Basic ${btoa(`${user.username}:${user.password}`)}`,
      "cf-connecting-ip": freshIp(),
    };
    expect(await json("/api/v1/accounts/verify_credentials", { headers: basic, status: 403 })).toEqual({
      error: "Invalid credentials.",
    });
    await disableMfa(db(env), user.id);
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { headers: basic }));
    // Turning MFA off removed the backup codes too.
    const left = await env.DB.prepare("SELECT count(*) AS n FROM mfa_backup_codes WHERE account_id = ?")
      .bind(user.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
    // And the password grant gives a token directly.
    expect((await passwordGrant(user.app, user)).status).toBe(200);
  });

  it("the authorize page asks for the code as a second step, with its own CSRF-checked form", async () => {
    const user = await registerUser();
    const key = await enableMfa(user);
    const app = await makeApp("read write", REDIRECT);
    const qs = new URLSearchParams({
      response_type: "code",
      client_id: app.client_id,
      redirect_uri: REDIRECT,
      state: "s1",
    });
    const page = await call(`/oauth/authorize?${qs}`);
    const html = await page.text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)![1];
    const cookie = page.headers.get("set-cookie")!.split(";")[0];
    const ip = freshIp();
    const step1 = await call("/oauth/authorize", {
      headers: { cookie, "cf-connecting-ip": ip },
      body: {
        ...Object.fromEntries(qs),
        csrf_token: csrf,
        username: user.username,
        password: user.password,
        decision: "approve",
      },
      form: true,
    });
    expect(step1.status).toBe(200);
    // No session yet, no code: the second step's form.
    expect(step1.headers.get("set-cookie") ?? "").not.toContain("_pleroma_key");
    const form = await step1.text();
    expect(form).toContain('action="/oauth/mfa/verify"');
    const mfa = /name="mfa_token" value="([^"]+)"/.exec(form)![1];
    expect(step1.headers.get("location")).toBeNull();
    const fields = { ...Object.fromEntries(qs), mfa_token: mfa };

    // Without the CSRF token: refused.
    expect(
      (await call("/oauth/mfa/verify", { headers: { cookie }, body: { ...fields, code: codeFor(key) }, form: true }))
        .status,
    ).toBe(403);
    // A wrong code: the form again, 401.
    const wrong = await call("/oauth/mfa/verify", {
      headers: { cookie },
      body: { ...fields, csrf_token: csrf, code: wrongCode(key) },
      form: true,
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Two-factor authentication failed.");
    // The right code: a session and the code at the redirect URI.
    const done = await call("/oauth/mfa/verify", {
      headers: { cookie },
      body: { ...fields, csrf_token: csrf, code: codeFor(key) },
      form: true,
    });
    expect(done.status).toBe(302);
    expect(done.headers.get("set-cookie")).toMatch(/_pleroma_key=[^;]+;.*HttpOnly/i);
    const location = new URL(done.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get("state")).toBe("s1");
    const token = valid(
      TokenSchema,
      await json("/oauth/token", {
        body: {
          grant_type: "authorization_code",
          code: location.searchParams.get("code")!,
          client_id: app.client_id,
          client_secret: app.client_secret,
          redirect_uri: REDIRECT,
        },
      }),
    );
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: token.access_token }));
    // The MFA token was spent (refused even with a code not used yet).
    expect(
      (
        await call("/oauth/mfa/verify", {
          headers: { cookie },
          body: { ...fields, csrf_token: csrf, code: nextStepCode(key) },
          form: true,
        })
      ).status,
    ).toBe(401);
  });
});

describe("clean-up", () => {
  it("the cron's collect_mfa_tokens deletes expired MFA tokens and reset links, and keeps live ones", async () => {
    const user = await registerUser();
    const key = await enableMfa(user);
    const live = await mfaToken(user.app, user);
    const t = Date.now();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO mfa_tokens (token_hash, account_id, app_id, scopes, created_at, expires_at) SELECT 'old-' || ?, ?, app_id, 'read', ?, ? FROM mfa_tokens WHERE account_id = ? LIMIT 1",
      ).bind(user.id, user.id, t - 600_000, t - 1, user.id),
      env.DB.prepare(
        "INSERT INTO password_reset_tokens (token_hash, account_id, created_at, expires_at) VALUES ('old-' || ?, ?, ?, ?), ('new-' || ?, ?, ?, ?)",
      ).bind(user.id, user.id, t - 90_000_000, t - 1, user.id, user.id, t, t + 60_000),
    ]);
    await collectMfaTokens(db(env), t);
    const left = async (table: string) =>
      (
        await env.DB.prepare(`SELECT token_hash FROM ${table} WHERE account_id = ?`)
          .bind(user.id)
          .all<{ token_hash: string }>()
      ).results.map((r) => r.token_hash.slice(0, 4));
    expect(await left("mfa_tokens")).not.toContain("old-");
    expect(await left("mfa_tokens")).toHaveLength(1);
    expect(await left("password_reset_tokens")).toEqual(["new-"]);
    // The live MFA token still works.
    expect((await challenge(user.app, live, "totp", codeFor(key))).status).toBe(200);
  });
});
