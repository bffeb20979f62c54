import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AppCredentialsSchema, AppSchema, TokenSchema } from "../src/schemas/oauth";
import { AccountSchema } from "../src/schemas/account";
import { appToken, call, json, makeApp, registerUser, valid, type TestApp, type TestUser } from "./helpers";

const REDIRECT = "https://client.example/callback";

async function pkce() {
  const verifier = "v".repeat(20) + crypto.randomUUID();
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const challenge = btoa(String.fromCharCode(...new Uint8Array(digest)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
  return { verifier, challenge };
}

/** Walks the authorize page like a browser: load the form, keep its cookie, submit it. */
async function authorize(
  app: TestApp,
  user: TestUser,
  query: Record<string, string>,
  form: Record<string, string> = {},
) {
  const qs = new URLSearchParams({ response_type: "code", client_id: app.client_id, ...query });
  const page = await call(`/oauth/authorize?${qs}`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toMatch(/^text\/html/);
  const html = await page.text();
  expect(html).toMatch(/name="csrf_token" value="[^"]{32,}"/);
  const cookie = page.headers.get("set-cookie")!.split(";")[0];
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields.set(m[1], m[2].replace(/&amp;/g, "&"));
  fields.set("username", user.username);
  fields.set("password", user.password);
  // Pressing Enter in the password field submits the form with its first submit button, as a browser does.
  const [, name, value] = /<button type="submit" name="([^"]+)" value="([^"]+)"/.exec(html)!;
  fields.set(name, value);
  for (const [k, v] of Object.entries(form)) fields.set(k, v);
  return call("/oauth/authorize", { body: fields, headers: { cookie } });
}

describe("apps", () => {
  it("registers an app from a form and from JSON, defaulting scopes to read", async () => {
    const formApp = await json("/api/v1/apps", {
      body: { client_name: "Form app", redirect_uris: REDIRECT, website: "https://client.example" },
      form: true,
    });
    valid(AppSchema, formApp);
    expect(formApp).toMatchObject({ name: "Form app", redirect_uri: REDIRECT, website: "https://client.example" });
    expect(formApp.vapid_key).toMatch(/^[A-Za-z0-9_-]{87}$/);

    const token = await appToken(formApp);
    const creds = valid(AppCredentialsSchema, await json("/api/v1/apps/verify_credentials", { token }));
    expect(creds).toEqual({ name: "Form app", website: "https://client.example", vapid_key: formApp.vapid_key });

    const jsonApp = await json("/api/v1/apps", {
      body: { client_name: "JSON app", redirect_uris: `${REDIRECT}\nurn:ietf:wg:oauth:2.0:oob`, scopes: "read write" },
    });
    expect(jsonApp.redirect_uri).toBe(`${REDIRECT}\nurn:ietf:wg:oauth:2.0:oob`);
    const scoped = await json("/oauth/token", {
      body: { grant_type: "client_credentials", client_id: jsonApp.client_id, client_secret: jsonApp.client_secret },
    });
    expect(scoped.scope).toBe("read write");
    const defaulted = await json("/api/v1/apps", { body: { client_name: "No scopes", redirect_uris: REDIRECT } });
    const t = await json("/oauth/token", {
      body: {
        grant_type: "client_credentials",
        client_id: defaulted.client_id,
        client_secret: defaulted.client_secret,
      },
    });
    expect(t.scope).toBe("read");
  });

  it("refuses incomplete or malformed registrations", async () => {
    const missing = await json("/api/v1/apps", { body: { redirect_uris: REDIRECT }, status: 400 });
    expect(missing.error).toBe("Missing field: client_name.");
    await json("/api/v1/apps", { body: { client_name: "x", redirect_uris: "javascript:alert(1)" }, status: 422 });
    await json("/api/v1/apps", {
      body: { client_name: "x", redirect_uris: REDIRECT, scopes: "read bogus" },
      status: 400,
    });
    await json("/api/v1/apps", {
      body: { client_name: "x", redirect_uris: REDIRECT, website: "not a url" },
      status: 400,
    });
  });

  it("needs a token for verify_credentials", async () => {
    const body = await json("/api/v1/apps/verify_credentials", { status: 403 });
    expect(body.error).toBe("Invalid credentials.");
  });
});

describe("token grants", () => {
  it("password grant issues a user token with id and me", async () => {
    const user = await registerUser();
    const token = valid(
      TokenSchema,
      await json("/oauth/token", {
        body: {
          grant_type: "password",
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          username: user.username,
          password: user.password,
          scope: "read",
        },
      }),
    );
    expect(token.me).toBe(`http://localhost/users/${user.username}`);
    expect(token.scope).toBe("read");
    expect(token.token_type).toBe("Bearer");
    // Logging in by e-mail works too.
    await json("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: user.app.client_id,
        client_secret: user.app.client_secret,
        username: user.email.toUpperCase(),
        password: user.password,
      },
    });
  });

  it("refuses a wrong password, a wrong client secret and scopes beyond the app's", async () => {
    const user = await registerUser({ scopes: "read" });
    const base = { grant_type: "password", client_id: user.app.client_id, username: user.username };
    const wrongPassword = await json("/oauth/token", {
      body: { ...base, client_secret: user.app.client_secret, password: "nope nope" },
      status: 400,
    });
    expect(wrongPassword.error).toBe("Invalid credentials");
    await json("/oauth/token", { body: { ...base, client_secret: "wrong", password: user.password }, status: 400 });
    await json("/oauth/token", {
      body: { ...base, client_secret: user.app.client_secret, password: user.password, scope: "read write" },
      status: 400,
    });
    const unknownGrant = await json("/oauth/token", {
      body: { ...base, grant_type: "magic", client_secret: user.app.client_secret },
      status: 400,
    });
    expect(unknownGrant.error).toBe("Unsupported grant_type");
  });

  it("accepts client credentials through HTTP Basic", async () => {
    const app = await makeApp();
    const basic = btoa(`${app.client_id}:${app.client_secret}`);
    const token = await json("/oauth/token", {
      body: { grant_type: "client_credentials" },
      headers: { authorization: `Basic ${basic}` },
    });
    valid(TokenSchema, token);
    expect(token.me).toBeUndefined();
  });

  /** A user signed in with the password grant, and the body that refreshes that token. */
  async function signedInWithRefresh() {
    const user = await registerUser();
    const first = await json("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: user.app.client_id,
        client_secret: user.app.client_secret,
        username: user.username,
        password: user.password,
      },
    });
    const body = {
      grant_type: "refresh_token",
      client_id: user.app.client_id,
      client_secret: user.app.client_secret,
      refresh_token: first.refresh_token as string,
    };
    return { user, first, body };
  }

  it("refresh_token gives a new token once, and the old one stops working", async () => {
    const { first, body } = await signedInWithRefresh();
    const second = valid(TokenSchema, await json("/oauth/token", { body }));
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.me).toBe(first.me);
    await json("/oauth/token", { body, status: 400 });
    await json("/api/v1/accounts/verify_credentials", { token: first.access_token, status: 403 });
    await json("/api/v1/accounts/verify_credentials", { token: second.access_token });
  });

  it("a refresh token used several times at once gives one new pair, and leaves no other token behind", async () => {
    const { user, first, body } = await signedInWithRefresh();
    const answers = await Promise.all([1, 2, 3, 4].map(() => call("/oauth/token", { body })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400]);
    const winner = valid(TokenSchema, await answers.find((r) => r.status === 200)!.json());
    for (const r of answers.filter((x) => x.status === 400))
      expect(((await r.json()) as { error?: string }).error).toBeTruthy();
    // Only the registration's token and the rotated one: no token was issued for the refused uses.
    const rows = await env.DB.prepare(
      "SELECT count(*) AS n FROM tokens WHERE account_id = ? AND app_id = (SELECT id FROM apps WHERE client_id = ?)",
    )
      .bind(user.id, user.app.client_id)
      .first<{ n: number }>();
    expect(rows!.n).toBe(2);
    await json("/api/v1/accounts/verify_credentials", { token: winner.access_token });
    await json("/api/v1/accounts/verify_credentials", { token: first.access_token, status: 403 });
    // The winner's refresh token works once more; the first one never again.
    await json("/oauth/token", { body, status: 400 });
    valid(TokenSchema, await json("/oauth/token", { body: { ...body, refresh_token: winner.refresh_token } }));
  });

  it("revoke ends a token and always answers {}", async () => {
    const user = await registerUser();
    await json("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(
      await json("/oauth/revoke", {
        body: { client_id: user.app.client_id, client_secret: user.app.client_secret, token: user.token },
      }),
    ).toEqual({});
    await json("/api/v1/accounts/verify_credentials", { token: user.token, status: 403 });
    // Unknown tokens and bad clients get the same answer (RFC 7009).
    expect(
      await json("/oauth/revoke", { body: { client_id: user.app.client_id, client_secret: "bad", token: "whatever" } }),
    ).toEqual({});
  });

  it("a token of one app cannot be revoked by another", async () => {
    const user = await registerUser();
    const other = await makeApp();
    await json("/oauth/revoke", {
      body: { client_id: other.client_id, client_secret: other.client_secret, token: user.token },
    });
    await json("/api/v1/accounts/verify_credentials", { token: user.token });
  });
});

describe("authorization code flow", () => {
  it("signs in on the page, redirects with code and state, and the code works once", async () => {
    const user = await registerUser();
    const app = await makeApp("read write follow", `${REDIRECT}\nhttps://other.example/cb`);
    const { verifier, challenge } = await pkce();
    const res = await authorize(app, user, {
      redirect_uri: REDIRECT,
      scope: "read write",
      state: "xyz",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get("state")).toBe("xyz");
    const code = location.searchParams.get("code")!;
    // The sign-in also opened a browser session.
    expect(res.headers.get("set-cookie")).toMatch(/_pleroma_key=[^;]+;.*HttpOnly/i);

    const exchange = {
      grant_type: "authorization_code",
      client_id: app.client_id,
      client_secret: app.client_secret,
      code,
      redirect_uri: REDIRECT,
    };
    await json("/oauth/token", {
      body: { ...exchange, code_verifier: "wrong-verifier-wrong-verifier-wrong-verifier" },
      status: 400,
    });

    // A failed exchange spends the code too; start again and do it right.
    const again = await authorize(app, user, {
      redirect_uri: REDIRECT,
      scope: "read write",
      state: "s2",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const code2 = new URL(again.headers.get("location")!).searchParams.get("code")!;
    const token = valid(
      TokenSchema,
      await json("/oauth/token", { body: { ...exchange, code: code2, code_verifier: verifier } }),
    );
    expect(token.scope).toBe("read write");
    expect(token.me).toBe(`http://localhost/users/${user.username}`);
    const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: token.access_token }));
    expect(me.id).toBe(user.id);

    const reused = await json("/oauth/token", {
      body: { ...exchange, code: code2, code_verifier: verifier },
      status: 400,
    });
    expect(reused.error).toBe("Invalid credentials");
  });

  it("shows the code for the out-of-band URN", async () => {
    const user = await registerUser();
    const app = await makeApp("read");
    const res = await authorize(app, user, { redirect_uri: "urn:ietf:wg:oauth:2.0:oob" });
    expect(res.status).toBe(200);
    const code = /<code id="code">([^<]+)<\/code>/.exec(await res.text())![1];
    const token = await json("/oauth/token", {
      body: {
        grant_type: "authorization_code",
        client_id: app.client_id,
        client_secret: app.client_secret,
        code,
        redirect_uri: "urn:ietf:wg:oauth:2.0:oob",
      },
    });
    expect(token.scope).toBe("read");
  });

  it("refuses scopes beyond the app's, unknown redirect URIs, a bad password and a missing CSRF token", async () => {
    const user = await registerUser();
    const app = await makeApp("read", REDIRECT);
    const wide = await call(
      `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: REDIRECT, scope: "read write", state: "s" })}`,
    );
    expect(wide.status).toBe(302);
    const loc = new URL(wide.headers.get("location")!);
    expect(loc.searchParams.get("error")).toBe("invalid_scope");
    expect(loc.searchParams.get("state")).toBe("s");

    const foreign = await call(
      `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: "https://evil.example/cb" })}`,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get("location")).toBeNull();

    const unknown = await call(`/oauth/authorize?client_id=nope&redirect_uri=${encodeURIComponent(REDIRECT)}`);
    expect(unknown.status).toBe(400);

    const badPassword = await authorize(app, user, { redirect_uri: REDIRECT }, { password: "wrong password" });
    expect(badPassword.status).toBe(401);
    expect(await badPassword.text()).toContain("Invalid nickname or password.");

    const noCsrf = await call("/oauth/authorize", {
      body: new URLSearchParams({
        client_id: app.client_id,
        redirect_uri: REDIRECT,
        username: user.username,
        password: user.password,
        decision: "approve",
      }),
    });
    expect(noCsrf.status).toBe(403);

    const denied = await authorize(app, user, { redirect_uri: REDIRECT, state: "d" }, { decision: "deny" });
    expect(new URL(denied.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
  });

  it("pressing Enter on the sign-in page approves the app (Authorize is the form's first submit button)", async () => {
    const user = await registerUser();
    const app = await makeApp("read", REDIRECT);
    const page = await call(
      `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: REDIRECT })}`,
    );
    const buttons = [...(await page.text()).matchAll(/<button type="submit" name="decision" value="([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(buttons).toEqual(["approve", "deny"]);
    // `authorize` submits with the first button, as implicit submission does.
    const res = await authorize(app, user, { redirect_uri: REDIRECT });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("code")).toBeTruthy();
  });

  it("a code issued to one app cannot be exchanged by another", async () => {
    const user = await registerUser();
    const app = await makeApp("read", REDIRECT);
    const other = await makeApp("read", REDIRECT);
    const res = await authorize(app, user, { redirect_uri: REDIRECT });
    const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
    await json("/oauth/token", {
      body: {
        grant_type: "authorization_code",
        client_id: other.client_id,
        client_secret: other.client_secret,
        code,
        redirect_uri: REDIRECT,
      },
      status: 400,
    });
  });

  it("remembers the signed-in user through the _pleroma_key cookie", async () => {
    const user = await registerUser();
    const app = await makeApp("read", REDIRECT);
    const first = await authorize(app, user, { redirect_uri: REDIRECT });
    const session = first.headers
      .get("set-cookie")!
      .split(", ")
      .find((c) => c.startsWith("_pleroma_key="))!
      .split(";")[0];
    const page = await call(
      `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: REDIRECT })}`,
      { headers: { cookie: session } },
    );
    expect(await page.text()).toContain(`Signed in as <strong>@${user.username}</strong>`);
    // The session cookie also authenticates API calls, as in Pleroma.
    const me = await json("/api/v1/accounts/verify_credentials", { headers: { cookie: session } });
    expect(me.id).toBe(user.id);
  });
});

describe("one sign-in rule (issue 30): HTTP Basic, the password grant and the authorize page agree", () => {
  const DISABLED = "Your account is currently disabled";
  const states: [string, string[], { basic: string; grant: string; page: string }][] = [
    ["active", [], { basic: "200", grant: "200", page: "code" }],
    [
      "disabled",
      ["UPDATE accounts SET deactivated = 1 WHERE id = ?1"],
      { basic: DISABLED, grant: DISABLED, page: DISABLED },
    ],
    [
      "awaiting approval",
      ["UPDATE users SET approval_pending = 1 WHERE account_id = ?1"],
      {
        basic: "Your account is awaiting approval.",
        grant: "Your account is awaiting approval.",
        page: "Your account is awaiting approval.",
      },
    ],
    [
      "unconfirmed",
      ["UPDATE users SET confirmed = 0 WHERE account_id = ?1"],
      {
        basic: "Your login is missing a confirmed e-mail address",
        grant: "Your login is missing a confirmed e-mail address",
        page: "Your login is missing a confirmed e-mail address",
      },
    ],
    [
      "reset forced",
      ["UPDATE credentials SET password_reset_pending = 1 WHERE account_id = ?1"],
      { basic: "Password reset is required", grant: "Password reset is required", page: "Password reset is required" },
    ],
    [
      "MFA",
      ["UPDATE credentials SET totp_secret = 'sealed' WHERE account_id = ?1"],
      { basic: "Invalid credentials.", grant: "mfa_required", page: "second factor" },
    ],
    [
      "disabled, with MFA",
      [
        "UPDATE accounts SET deactivated = 1 WHERE id = ?1",
        "UPDATE credentials SET totp_secret = 'sealed' WHERE account_id = ?1",
      ],
      { basic: DISABLED, grant: DISABLED, page: DISABLED },
    ],
    [
      "reset forced, with MFA",
      [
        "UPDATE credentials SET password_reset_pending = 1 WHERE account_id = ?1",
        "UPDATE credentials SET totp_secret = 'sealed' WHERE account_id = ?1",
      ],
      { basic: "Password reset is required", grant: "Password reset is required", page: "Password reset is required" },
    ],
  ];

  for (const [name, updates, expected] of states) {
    it(`${name}: ${expected.basic} / ${expected.grant} / ${expected.page}`, async () => {
      const user = await registerUser();
      const { env } = await import("cloudflare:test");
      for (const u of updates) await env.DB.prepare(u).bind(user.id).run();
      const ip = { "cf-connecting-ip": `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` };
      const basic = await call("/api/v1/accounts/verify_credentials", {
        headers: { authorization: `Basic ${btoa(`${user.username}:${user.password}`)}`, ...ip },
      });
      const grant = await call("/oauth/token", {
        body: {
          grant_type: "password",
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          username: user.username,
          password: user.password,
        },
        headers: ip,
      });
      const page = await authorize(user.app, user, { redirect_uri: "urn:ietf:wg:oauth:2.0:oob", scope: "read" });
      const said = async (res: Response) =>
        res.status === 200 ? "200" : ((await res.json()) as { error: string }).error;
      expect(await said(basic)).toBe(expected.basic);
      expect(await said(grant)).toBe(expected.grant);
      const html = await page.text();
      if (expected.page === "code") expect(html).toMatch(/<code id="code">[^<]+<\/code>/);
      else if (expected.page === "second factor") expect(html).toMatch(/name="mfa_token"/);
      else {
        expect(page.status).toBe(403);
        expect(html).toContain(expected.page);
      }
    });
  }
});
