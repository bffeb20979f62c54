/** Hardening (issue 12): refresh scopes, throttled password checks, credentials kept apart, cookies and CSRF. */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../src/index";
import { countingD1 } from "./d1-counter";
import { describe, expect, it } from "vitest";
import { db } from "../src/db/client";
import { signingKey } from "../src/services/credentials";
import { TokenSchema } from "../src/schemas/oauth";
import { call, freshIp, json, makeApp, registerUser, valid, type TestApp, type TestUser } from "./helpers";

const REDIRECT = "https://client.example/callback";

const passwordGrant = (
  user: TestUser,
  password: string,
  ip: string,
  extra: Record<string, string> = {},
  vars?: Record<string, string>,
) =>
  call("/oauth/token", {
    body: {
      grant_type: "password",
      client_id: user.app.client_id,
      client_secret: user.app.client_secret,
      username: user.username,
      password,
      ...extra,
    },
    headers: { "cf-connecting-ip": ip },
    vars,
  });

const basic = (login: string, password: string, ip: string) =>
  call("/api/v1/accounts/verify_credentials", {
    headers: { authorization: `Basic ${btoa(`${login}:${password}`)}`, "cf-connecting-ip": ip },
  });

/** A 429 as Pleroma answers it, with a Retry-After within the window. */
async function expectThrottled(res: Response, windowSeconds: number) {
  expect(res.status).toBe(429);
  const retry = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retry)).toBe(true);
  expect(retry).toBeGreaterThan(0);
  expect(retry).toBeLessThanOrEqual(windowSeconds);
  if (res.headers.get("content-type")?.startsWith("application/json"))
    expect(await res.json()).toEqual({ error: "Throttled" });
}

/** Loads the authorize page like a browser, returning its form fields and cookie. */
async function authorizeForm(app: TestApp, ip: string, origin = "http://localhost") {
  const qs = new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: REDIRECT });
  const page = await call(`${origin}/oauth/authorize?${qs}`, { headers: { "cf-connecting-ip": ip } });
  expect(page.status).toBe(200);
  const html = await page.text();
  const cookie = page.headers.get("set-cookie")!.split(";")[0];
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields.set(m[1], m[2].replace(/&amp;/g, "&"));
  return { fields, cookie, page };
}

async function submit(
  app: TestApp,
  user: TestUser,
  password: string,
  ip: string,
  origin = "http://localhost",
  vars?: Record<string, string>,
) {
  const { fields, cookie } = await authorizeForm(app, ip, origin);
  fields.set("username", user.username);
  fields.set("password", password);
  fields.set("decision", "approve");
  return call(`${origin}/oauth/authorize`, { body: fields, headers: { cookie, "cf-connecting-ip": ip }, vars });
}

describe("refresh grant", () => {
  it("cannot widen a token's scopes: a read token refreshed with scope=write is refused and still cannot post", async () => {
    const user = await registerUser();
    const read = valid(
      TokenSchema,
      await (await passwordGrant(user, user.password, freshIp(), { scope: "read" })).json(),
    );
    expect(read.scope).toBe("read");
    const refresh = (scope?: string) =>
      json("/oauth/token", {
        body: {
          grant_type: "refresh_token",
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          refresh_token: read.refresh_token,
          ...(scope ? { scope } : {}),
        },
        status: scope === undefined || scope === "read" || scope.startsWith("read:") ? 200 : 400,
      });
    for (const scope of ["write", "read write", "follow", "write:statuses"]) {
      const refused = await refresh(scope);
      expect(refused.error).toBe("invalid_scope");
      expect(refused.access_token).toBeUndefined();
    }
    await json("/api/v1/statuses", { token: read.access_token, body: { status: "should not post" }, status: 403 });
    // The refused attempts did not spend the refresh token; an absent scope keeps the original scopes.
    const same = valid(TokenSchema, await refresh());
    expect(same.scope).toBe("read");
    await json("/api/v1/statuses", { token: same.access_token, body: { status: "still no" }, status: 403 });
  });

  it("grants a narrower scope", async () => {
    const user = await registerUser();
    const full = valid(TokenSchema, await (await passwordGrant(user, user.password, freshIp())).json());
    const narrow = await json("/oauth/token", {
      body: {
        grant_type: "refresh_token",
        client_id: user.app.client_id,
        client_secret: user.app.client_secret,
        refresh_token: full.refresh_token,
        scope: "read:accounts",
      },
    });
    expect(narrow.scope).toBe("read:accounts");
    await json("/api/v1/accounts/verify_credentials", { token: narrow.access_token });
    await json("/api/v1/timelines/home", { token: narrow.access_token, status: 403 });
  });
});

describe("password checks are throttled", () => {
  it("answers 429 with Retry-After after 15 failed password grants from one address; other addresses are unaffected", async () => {
    const user = await registerUser();
    const other = await registerUser();
    const ip = freshIp();
    for (let i = 0; i < 15; i++) expect((await passwordGrant(user, `wrong ${i}`, ip)).status).toBe(400);
    await expectThrottled(await passwordGrant(user, "wrong again", ip), 60);
    // Throttled by address: even the right password, or another account, waits (and costs no hashing).
    await expectThrottled(await passwordGrant(user, user.password, ip), 60);
    await expectThrottled(await passwordGrant(other, other.password, ip), 60);
    // Another address signs in: 15 failures are under the per-account limit.
    expect((await passwordGrant(user, user.password, freshIp())).status).toBe(200);
    expect((await passwordGrant(other, other.password, freshIp())).status).toBe(200);
  });

  it("counts failures per account across addresses (a distributed guess), for a bounded window", async () => {
    const user = await registerUser();
    const bystander = await registerUser();
    const vars = { LOGIN_FAILURES_PER_ACCOUNT: "4", LOGIN_FAILURES_PER_ACCOUNT_WINDOW_SECONDS: "300" };
    const ips = [freshIp(), freshIp(), freshIp(), freshIp()];
    for (const ip of ips) expect((await passwordGrant(user, "guess", ip, {}, vars)).status).toBe(400);
    await expectThrottled(await passwordGrant(user, "guess", freshIp(), {}, vars), 300);
    await expectThrottled(await passwordGrant(user, user.password, freshIp(), {}, vars), 300);
    // Another account from the same addresses is not locked.
    expect((await passwordGrant(bystander, bystander.password, ips[0], {}, vars)).status).toBe(200);
    // The window is bounded: once it has passed, the owner signs in again.
    await env.DB.prepare("UPDATE rate_limits SET window_start = window_start - 301000 WHERE key = ?")
      .bind(`login:name:${user.username.toLowerCase()}`)
      .run();
    expect((await passwordGrant(user, user.password, freshIp(), {}, vars)).status).toBe(200);
  });

  it("a guess spread over many addresses cannot lock the owner out of an address they signed in from", async () => {
    const user = await registerUser();
    const vars = { LOGIN_FAILURES_PER_ACCOUNT: "4", LOGIN_FAILURES_PER_ACCOUNT_WINDOW_SECONDS: "300" };
    const home = freshIp();
    expect((await passwordGrant(user, user.password, home, {}, vars)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await passwordGrant(user, "guess", freshIp(), {}, vars)).status).toBe(400);
    // The login is over its limit: new addresses wait, even with the right password...
    await expectThrottled(await passwordGrant(user, "guess", freshIp(), {}, vars), 300);
    await expectThrottled(await passwordGrant(user, user.password, freshIp(), {}, vars), 300);
    // ...but the owner's own address still signs in, and a wrong password from it is an ordinary failure.
    expect((await passwordGrant(user, "typo", home, {}, vars)).status).toBe(400);
    expect((await passwordGrant(user, user.password, home, {}, vars)).status).toBe(200);
  });

  it("counts the login as typed, so a 429 tells nothing about which accounts exist", async () => {
    const user = await registerUser();
    const vars = { LOGIN_FAILURES_PER_ACCOUNT: "3", LOGIN_FAILURES_PER_ACCOUNT_WINDOW_SECONDS: "300" };
    for (let i = 0; i < 3; i++) expect((await passwordGrant(user, "guess", freshIp(), {}, vars)).status).toBe(400);
    await expectThrottled(await passwordGrant(user, "guess", freshIp(), {}, vars), 300);
    // The same account by its e-mail is another login: not throttled by the nickname's failures.
    expect((await passwordGrant(user, "guess", freshIp(), { username: user.email }, vars)).status).toBe(400);
    // A login that names nobody is throttled exactly alike.
    const nobody = `nobody${Date.now()}`;
    for (let i = 0; i < 3; i++)
      expect((await passwordGrant(user, "guess", freshIp(), { username: nobody }, vars)).status).toBe(400);
    await expectThrottled(await passwordGrant(user, "guess", freshIp(), { username: nobody }, vars), 300);
  });

  it("a huge login is an ordinary failure, not a 500", async () => {
    const user = await registerUser();
    const ip = freshIp();
    const huge = "x".repeat(200_000);
    const grant = await call("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: user.app.client_id,
        client_secret: user.app.client_secret,
        username: huge,
        password: "p",
      },
      headers: { "cf-connecting-ip": ip },
    });
    expect(grant.status).toBe(400);
    expect((await basic("y".repeat(20_000), "p", ip)).status).toBe(403);
    const resend = await call("/api/v1/pleroma/accounts/confirmation_resend", {
      body: { email: huge },
      headers: { "cf-connecting-ip": ip },
    });
    expect(resend.status).toBeLessThan(500);
  });

  it("successful checks do not count", async () => {
    const user = await registerUser();
    const ip = freshIp();
    const vars = { LOGIN_FAILURES_PER_IP: "2" };
    for (let i = 0; i < 4; i++) expect((await passwordGrant(user, user.password, ip, {}, vars)).status).toBe(200);
    expect((await passwordGrant(user, "wrong", ip, {}, vars)).status).toBe(400);
    expect((await passwordGrant(user, user.password, ip, {}, vars)).status).toBe(200);
  });

  it("throttles HTTP Basic the same way", async () => {
    const user = await registerUser();
    const ip = freshIp();
    for (let i = 0; i < 15; i++) expect((await basic(user.username, `nope ${i}`, ip)).status).toBe(403);
    await expectThrottled(await basic(user.username, "nope", ip), 60);
    await expectThrottled(await basic(user.username, user.password, ip), 60);
    expect((await basic(user.username, user.password, freshIp())).status).toBe(200);
  });

  it("throttles the authorize form, answering a page with Retry-After", async () => {
    const user = await registerUser();
    const app = await makeApp("read", REDIRECT);
    const ip = freshIp();
    const vars = { LOGIN_FAILURES_PER_IP: "3" };
    for (let i = 0; i < 3; i++) expect((await submit(app, user, `bad ${i}`, ip, undefined, vars)).status).toBe(401);
    const throttled = await submit(app, user, user.password, ip, undefined, vars);
    await expectThrottled(throttled, 60);
    expect(throttled.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await throttled.text()).toContain("Too many attempts");
    expect((await submit(app, user, user.password, freshIp(), undefined, vars)).status).toBe(302);
  });

  it("limits confirmation_resend per address and per recipient", async () => {
    const user = await registerUser();
    const send = (ip: string, body: Record<string, string>) =>
      call("/api/v1/pleroma/accounts/confirmation_resend", { body, headers: { "cf-connecting-ip": ip } });
    const ip = freshIp();
    for (let i = 0; i < 5; i++)
      expect((await send(ip, { email: `nobody${i}-${ip}@example.com` })).status).toBeLessThan(300);
    await expectThrottled(await send(ip, { email: `another-${ip}@example.com` }), 8640);
    // Per recipient: one address asked for from many places.
    for (let i = 0; i < 5; i++)
      expect((await send(freshIp(), { email: user.email.toUpperCase() })).status).toBeLessThan(300);
    await expectThrottled(await send(freshIp(), { email: user.email }), 8640);
    expect((await send(freshIp(), { nickname: `someone_else_${Date.now()}` })).status).toBeLessThan(300);
    // The OpenAPI document says so.
    const doc = await json("/api/openapi");
    expect(doc.paths["/api/v1/pleroma/accounts/confirmation_resend"].post.responses["429"]).toBeDefined();
  });
});

describe("timing tells nothing about which nicknames and addresses exist", () => {
  /** The statements a request sends before its answer (what a client can time), and the answer's status. */
  async function beforeAnswer(path: string, body: Record<string, string>, ip: string) {
    const counter = countingD1();
    const ctx = createExecutionContext();
    const req = new Request(`http://localhost${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "cf-connecting-ip": ip },
      body: JSON.stringify(body),
    });
    const res = await worker.fetch(req, { ...env, DB: counter.db } as typeof env, ctx);
    const sent = counter.statements().map((st) => st.sql);
    await waitOnExecutionContext(ctx);
    return { status: res.status, sent };
  }

  it("a wrong password costs the same statements for a real nickname or e-mail as for an unknown one, throttled or not", async () => {
    const user = await registerUser();
    const grant = (login: string, ip: string) =>
      beforeAnswer(
        "/oauth/token",
        {
          grant_type: "password",
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          username: login,
          password: "not it",
        },
        ip,
      );
    for (const [real, unknown] of [
      [user.username, `nobody${Date.now()}`],
      [user.email, `nobody${Date.now()}@example.com`],
    ]) {
      const a = await grant(real, freshIp());
      const b = await grant(unknown, freshIp());
      expect(a.status).toBe(b.status);
      expect(a.sent).toEqual(b.sent);
    }
    // Over the per-login limit (30 failures): still the same work for both.
    const ghost = `ghost${Date.now()}`;
    for (let i = 0; i < 31; i++) {
      await grant(user.username, freshIp());
      await grant(ghost, freshIp());
    }
    const a = await grant(user.username, freshIp());
    const b = await grant(ghost, freshIp());
    expect(a.status).toBe(429);
    expect(b.status).toBe(429);
    expect(a.sent).toEqual(b.sent);
  });

  it("password reset and confirmation resend answer after the same work for real and unknown users (the rest follows the answer)", async () => {
    const user = await registerUser();
    for (const path of ["/auth/password", "/api/v1/pleroma/accounts/confirmation_resend"]) {
      for (const field of ["email", "nickname"] as const) {
        const real = await beforeAnswer(path, { [field]: field === "email" ? user.email : user.username }, freshIp());
        const unknown = await beforeAnswer(
          path,
          { [field]: field === "email" ? `nobody${Date.now()}@example.com` : `nobody${Date.now()}` },
          freshIp(),
        );
        expect(real.status, `${path} ${field}`).toBe(204);
        expect(unknown.status, `${path} ${field}`).toBe(204);
        expect(real.sent, `${path} ${field}`).toEqual(unknown.sent);
      }
    }
    // The reset mail still goes out, after the answer.
    const mail = await env.DB.prepare('SELECT subject FROM mail_outbox WHERE "to" = ? ORDER BY id DESC LIMIT 1')
      .bind(user.email)
      .first<{ subject: string }>();
    expect(mail?.subject).toBe("Password reset");
  });
});

describe("credentials", () => {
  it("live in their own table: users holds no password hash or key, registration makes no signing key", async () => {
    const user = await registerUser();
    const columns = (
      await env.DB.prepare("SELECT name FROM pragma_table_info('users')").all<{ name: string }>()
    ).results.map((r) => r.name);
    expect(columns).not.toContain("password_hash");
    expect(columns).not.toContain("private_key");
    const cred = await env.DB.prepare("SELECT password_hash, private_key FROM credentials WHERE account_id = ?")
      .bind(user.id)
      .first<{ password_hash: string; private_key: string | null }>();
    expect(cred!.password_hash).toMatch(/^pbkdf2-sha256\$/);
    expect(cred!.private_key).toBeNull();
    const account = await env.DB.prepare("SELECT public_key FROM accounts WHERE id = ?")
      .bind(user.id)
      .first<{ public_key: string | null }>();
    expect(account!.public_key).toBeNull();
  });

  it("signingKey generates a key pair once, on first use, and keeps it (racing callers agree)", async () => {
    const user = await registerUser();
    const d = db(env);
    const [a, b] = await Promise.all([signingKey(d, user.id), signingKey(d, user.id)]);
    expect(a!.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(a!.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(b).toEqual(a);
    expect(await signingKey(d, user.id)).toEqual(a);
    const stored = await env.DB.prepare(
      "SELECT c.private_key, a.public_key FROM credentials c JOIN accounts a ON a.id = c.account_id WHERE c.account_id = ?",
    )
      .bind(user.id)
      .first<{ private_key: string; public_key: string }>();
    expect(stored).toEqual({ private_key: a!.privateKey, public_key: a!.publicKey });
    // The pair matches: what the private key signs, the public key verifies.
    const der = (pem: string) =>
      Uint8Array.from(atob(pem.replace(/-----[^-]+-----|\s/g, "")), (ch) => ch.charCodeAt(0));
    const alg = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    const priv = await crypto.subtle.importKey("pkcs8", der(a!.privateKey), alg, false, ["sign"]);
    const pub = await crypto.subtle.importKey("spki", der(a!.publicKey), alg, false, ["verify"]);
    const data = new TextEncoder().encode("(request-target): post /inbox");
    expect(await crypto.subtle.verify(alg, pub, await crypto.subtle.sign(alg, priv, data), data)).toBe(true);
    // No answer carries it.
    const me = await call("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(await me.text()).not.toMatch(/PRIVATE KEY|pbkdf2/);
    expect(await signingKey(d, "01NOSUCHACCOUNT00000000000")).toBeNull();
  });
});

describe("authorize page cookies and CSRF", () => {
  const setCookies = (res: Response) =>
    (res.headers.get("set-cookie") ?? "").split(/,\s*(?=[A-Za-z_]+=)/).filter(Boolean);
  const cookieNamed = (res: Response, name: string) => setCookies(res).find((c) => c.startsWith(`${name}=`));

  it("sets the session cookie HttpOnly, SameSite=Lax, Path=/, and Secure over https", async () => {
    const user = await registerUser();
    const app = await makeApp("read", REDIRECT);
    const overHttps = await submit(app, user, user.password, freshIp(), "https://localhost");
    expect(overHttps.status).toBe(302);
    const session = cookieNamed(overHttps, "_pleroma_key")!;
    expect(session).toMatch(/;\s*HttpOnly/i);
    expect(session).toMatch(/;\s*SameSite=Lax/i);
    expect(session).toMatch(/;\s*Path=\/(;|$)/);
    expect(session).toMatch(/;\s*Secure/i);

    const overHttp = await submit(app, user, user.password, freshIp());
    expect(cookieNamed(overHttp, "_pleroma_key")).not.toMatch(/;\s*Secure/i);
    // With a public DOMAIN the instance is served over https whatever the worker saw.
    const withDomain = await submit(app, user, user.password, freshIp(), undefined, { DOMAIN: "social.example" });
    expect(cookieNamed(withDomain, "_pleroma_key")).toMatch(/;\s*Secure/i);
  });

  it("refuses a form post whose CSRF token is missing, wrong or from another browser, and cannot be framed", async () => {
    const user = await registerUser();
    const app = await makeApp("read", REDIRECT);
    const ip = freshIp();
    const mine = await authorizeForm(app, ip);
    expect(mine.page.headers.get("x-frame-options")).toBe("DENY");
    expect(mine.page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const csrfCookie = cookieNamed(mine.page, "starling_csrf")!;
    expect(csrfCookie).toMatch(/;\s*HttpOnly/i);
    expect(csrfCookie).toMatch(/;\s*SameSite=Strict/i);
    const theirs = await authorizeForm(app, freshIp());
    const post = (fields: URLSearchParams, cookie?: string) => {
      const body = new URLSearchParams(fields);
      body.set("username", user.username);
      body.set("password", user.password);
      body.set("decision", "approve");
      return call("/oauth/authorize", { body, headers: { "cf-connecting-ip": ip, ...(cookie ? { cookie } : {}) } });
    };
    const withoutField = new URLSearchParams(mine.fields);
    withoutField.delete("csrf_token");
    const wrong = new URLSearchParams(mine.fields);
    wrong.set("csrf_token", "x".repeat(32));
    for (const res of [
      await post(withoutField, mine.cookie),
      await post(wrong, mine.cookie),
      await post(mine.fields),
      await post(theirs.fields, mine.cookie),
    ]) {
      expect(res.status).toBe(403);
      expect(res.headers.get("location")).toBeNull();
      expect(setCookies(res).some((c) => c.startsWith("_pleroma_key="))).toBe(false);
      expect(await res.text()).toContain("The form expired");
    }
    const ok = await post(mine.fields, mine.cookie);
    expect(ok.status).toBe(302);
    expect(new URL(ok.headers.get("location")!).searchParams.get("code")).toBeTruthy();
  });
});

describe("the browser session cookie and cross-site writes (issue 44)", () => {
  it("writes with the _pleroma_key cookie only from this origin's pages; reads and bearer tokens unaffected", async () => {
    const u = await registerUser();
    const cookie = `_pleroma_key=${u.token}`;
    const statuses = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM statuses WHERE account_id = ?")
        .bind(u.id)
        .first<{ n: number }>())!.n;
    const postWith = (headers: Record<string, string>) =>
      call("/api/v1/statuses", { body: { status: "from a form" }, headers: { cookie, ...headers } });
    // A page on a sibling subdomain (same site: SameSite=Lax sends the cookie) and one elsewhere: refused, nothing written.
    for (const headers of <Record<string, string>[]>[
      { origin: "https://blog.example.com" },
      { "sec-fetch-site": "same-site", origin: "https://blog.localhost" },
      { "sec-fetch-site": "cross-site" },
    ]) {
      const res = await postWith(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(((await res.json()) as { error: string }).error).toBe("Invalid credentials.");
    }
    const follow = await call(`/api/v1/accounts/${(await registerUser()).id}/follow`, {
      method: "POST",
      headers: { cookie, origin: "https://blog.example.com" },
    });
    expect(follow.status).toBe(403);
    expect(await statuses()).toBe(0);
    // This origin's own pages, and a request from no page at all (an app sending the cookie): accepted.
    expect((await postWith({ origin: "http://localhost", "sec-fetch-site": "same-origin" })).status).toBe(200);
    expect((await postWith({})).status).toBe(200);
    // Reads with the cookie from anywhere, and bearer tokens from any origin, work as before.
    const me = await call("/api/v1/accounts/verify_credentials", {
      headers: { cookie, origin: "https://blog.example.com" },
    });
    expect(me.status).toBe(200);
    const bearer = await call("/api/v1/statuses", {
      token: u.token,
      body: { status: "from an app on another origin" },
      headers: { origin: "https://app.example.net", "sec-fetch-site": "cross-site" },
    });
    expect(bearer.status).toBe(200);
    expect(await statuses()).toBe(3);
  });
});
