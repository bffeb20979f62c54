import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AccountSchema, RelationshipSchema } from "../src/schemas/account";
import { TokenSchema } from "../src/schemas/oauth";
import { newId } from "../src/db/ids";
import { sha256 } from "../src/lib/crypto";
import { appToken, BASE, call, freshIp, json, makeApp, PNG_1PX, registerUser, uniqueName, valid } from "./helpers";

const signup = (username: string, extra: Record<string, unknown> = {}) => ({
  username,
  email: `${username}@example.com`,
  password: "correct horse battery",
  agreement: true,
  locale: "en",
  ...extra,
});

async function newAppToken() {
  return appToken(await makeApp());
}

async function outboxFor(email: string) {
  const { results } = await env.DB.prepare('SELECT * FROM mail_outbox WHERE "to" = ? ORDER BY id')
    .bind(email)
    .all<{ subject: string; text: string }>();
  return results;
}

describe("registration", () => {
  it("creates an account and answers a working token", async () => {
    const tok = await newAppToken();
    const name = uniqueName("reg");
    const token = valid(
      TokenSchema,
      await json("/api/v1/accounts", {
        token: tok,
        headers: { "cf-connecting-ip": freshIp() },
        body: signup(name, { fullname: "Reg Istered", bio: "Hi <b>there</b>" }),
      }),
    );
    expect(token.me).toBe(`${BASE}/users/${name}`);
    const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: token.access_token }));
    expect(me).toMatchObject({
      username: name,
      acct: name,
      fqn: `${name}@localhost`,
      display_name: "Reg Istered",
      note: "Hi &lt;b&gt;there&lt;/b&gt;",
      locked: false,
      bot: false,
    });
    expect(me.pleroma).toMatchObject({
      ap_id: `${BASE}/users/${name}`,
      is_confirmed: true,
      email: `${name}@example.com`,
    });
    expect(me.source?.note).toBe("Hi <b>there</b>");
    expect(me.avatar).toBe(`${BASE}/images/avi.png`);
    const avatar = await call(me.avatar);
    expect(avatar.status).toBe(200);
    expect(avatar.headers.get("content-type")).toBe("image/png");
  });

  it("needs an app token, not a user's and not none", async () => {
    const user = await registerUser();
    const noToken = await json("/api/v1/accounts", { body: signup(uniqueName()), status: 403 });
    expect(noToken.error).toBe("Invalid credentials.");
    const asUser = await json("/api/v1/accounts", {
      token: user.token,
      headers: { "cf-connecting-ip": freshIp() },
      body: signup(uniqueName()),
      status: 403,
    });
    expect(asUser.error).toBe("Invalid credentials");
  });

  it("takes the mails' language from `language`, else the userLanguage cookie (Pleroma-FE's), else Accept-Language", async () => {
    const tok = await newAppToken();
    const locale = async (name: string) =>
      (await env.DB.prepare("SELECT u.locale FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = ?")
        .bind(name)
        .first<{ locale: string }>())!.locale;
    const cases: [Record<string, unknown>, Record<string, string>, string][] = [
      [{ language: "es" }, { cookie: "userLanguage=de", "accept-language": "fr" }, "es"],
      [{}, { cookie: "theme=dark; userLanguage=de", "accept-language": "fr" }, "de"],
      [{}, { "accept-language": "fr-CH, fr;q=0.9" }, "fr-CH"],
      [{}, { cookie: "userLanguage=<script>", "accept-language": "pt-BR" }, "pt-BR"],
    ];
    for (const [extra, headers, expected] of cases) {
      const name = uniqueName();
      const { locale: _l, ...body } = signup(name, extra);
      await json("/api/v1/accounts", { token: tok, headers: { "cf-connecting-ip": freshIp(), ...headers }, body });
      expect(await locale(name), JSON.stringify(headers)).toBe(expected);
    }
  });

  it("reports missing and invalid fields like Pleroma", async () => {
    const tok = await newAppToken();
    const ip = () => ({ "cf-connecting-ip": freshIp() });
    const missing = await json("/api/v1/accounts", {
      token: tok,
      headers: ip(),
      body: { email: "a@example.com", password: "long enough", agreement: true },
      status: 400,
    });
    expect(missing.error).toBe("Missing field: username.");
    const noAgreement = await json("/api/v1/accounts", {
      token: tok,
      headers: ip(),
      body: signup(uniqueName(), { agreement: false }),
      status: 400,
    });
    expect(JSON.parse(noAgreement.error)).toEqual({ agreement: ["must be accepted"] });
    const bad = await json("/api/v1/accounts", {
      token: tok,
      headers: ip(),
      body: signup("no spaces!", { email: "nope", password: "short" }),
      status: 400,
    });
    expect(JSON.parse(bad.error)).toEqual({
      nickname: ["has invalid format"],
      email: ["has invalid format"],
      password: ["should be at least 8 character(s)"],
    });
    const reserved = await json("/api/v1/accounts", { token: tok, headers: ip(), body: signup("Admin"), status: 400 });
    expect(JSON.parse(reserved.error)).toEqual({ nickname: ["is reserved"] });
    // A value that is no boolean in any reading (an object); a string other than Pleroma's "false" ones is true,
    // as Pleroma reads booleans (test/http.test.ts).
    const notBool = await json("/api/v1/accounts", {
      token: tok,
      headers: ip(),
      body: signup(uniqueName(), { agreement: { maybe: true } }),
      status: 400,
    });
    expect(notBool.error).toMatch(/agreement/);
  });

  it("refuses a taken nickname (any case) and a taken e-mail", async () => {
    const user = await registerUser();
    const tok = await newAppToken();
    const dup = await json("/api/v1/accounts", {
      token: tok,
      headers: { "cf-connecting-ip": freshIp() },
      body: signup(user.username.toUpperCase(), { email: user.email.toUpperCase() }),
      status: 400,
    });
    expect(JSON.parse(dup.error)).toEqual({ nickname: ["has already been taken"], email: ["has already been taken"] });
  });

  it("allows 5 registrations per 30 minutes per IP, then answers 429", async () => {
    const tok = await newAppToken();
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      await json("/api/v1/accounts", {
        token: tok,
        headers: { "cf-connecting-ip": ip },
        body: signup(uniqueName("rl")),
      });
    }
    const sixth = await json("/api/v1/accounts", {
      token: tok,
      headers: { "cf-connecting-ip": ip },
      body: signup(uniqueName("rl")),
      status: 429,
    });
    expect(sixth.error).toBe("Throttled");
    // Another address is not affected.
    await json("/api/v1/accounts", {
      token: tok,
      headers: { "cf-connecting-ip": freshIp() },
      body: signup(uniqueName("rl")),
    });
  });

  it("needs a valid invite when registrations are closed", async () => {
    const vars = { REGISTRATIONS_OPEN: "false" };
    const tok = await newAppToken();
    const ip = () => ({ "cf-connecting-ip": freshIp() });
    const instance = await json("/api/v1/instance", { vars });
    expect(instance.registrations).toBe(false);
    expect(instance.invites_enabled).toBe(true);

    const none = await json("/api/v1/accounts", {
      token: tok,
      vars,
      headers: ip(),
      body: signup(uniqueName()),
      status: 400,
    });
    expect(none.error).toBe("Invalid token");
    const invite = `invite-${crypto.randomUUID()}`;
    await env.DB.prepare("INSERT INTO invites (id, token_hash, max_uses, uses, created_at) VALUES (?, ?, 1, 0, ?)")
      .bind(newId(), await sha256(invite), Date.now())
      .run();
    valid(
      TokenSchema,
      await json("/api/v1/accounts", {
        token: tok,
        vars,
        headers: ip(),
        body: signup(uniqueName(), { token: invite }),
      }),
    );
    const used = await json("/api/v1/accounts", {
      token: tok,
      vars,
      headers: ip(),
      body: signup(uniqueName(), { token: invite }),
      status: 400,
    });
    expect(used.error).toBe("Expired token");
  });

  it("with confirmation required: no token, a mail, refusal until the link is opened, resend", async () => {
    const vars = { ACCOUNT_ACTIVATION_REQUIRED: "true" };
    const app = await makeApp();
    const tok = await appToken(app);
    const name = uniqueName("conf");
    const pending = await json("/api/v1/accounts", {
      token: tok,
      vars,
      headers: { "cf-connecting-ip": freshIp() },
      body: signup(name),
    });
    expect(pending).toEqual({
      message: "You have been registered. Please check your email for further instructions.",
      identifier: "missing_confirmed_email",
    });

    const mails = await outboxFor(`${name}@example.com`);
    expect(mails).toHaveLength(1);
    const link = /http:\/\/localhost\/api\/account\/confirm_email\/\S+/.exec(mails[0].text)![0];

    const login = {
      grant_type: "password",
      client_id: app.client_id,
      client_secret: app.client_secret,
      username: name,
      password: "correct horse battery",
    };
    const refused = await json("/oauth/token", { body: login, status: 403 });
    expect(refused).toEqual({
      error: "Your login is missing a confirmed e-mail address",
      identifier: "missing_confirmed_email",
    });

    // Pleroma-FE's resend: form-encoded, answered 204 without a body (the spec).
    const resent = await call("/api/pleroma/accounts/confirmation_resend", {
      body: { email: `${name}@example.com` },
      form: true,
    });
    expect([resent.status, await resent.text()]).toEqual([204, ""]);
    await expect.poll(() => outboxFor(`${name}@example.com`).then((m) => m.length)).toBe(2);
    // The first link was replaced by the resent one.
    expect((await call(link)).status).toBe(404);
    const fresh = /http:\/\/localhost\/api\/account\/confirm_email\/\S+/.exec(
      (await outboxFor(`${name}@example.com`))[1].text,
    )![0];
    const confirmed = await call(fresh);
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("is confirmed");

    const token = valid(TokenSchema, await json("/oauth/token", { body: login }));
    const me = await json("/api/v1/accounts/verify_credentials", { token: token.access_token });
    expect(me.pleroma.is_confirmed).toBe(true);
    // Resending for a confirmed or unknown address answers the same, and sends nothing.
    const unknown = await call("/api/v1/pleroma/accounts/confirmation_resend", {
      body: { email: "nobody@example.com" },
    });
    expect([unknown.status, await unknown.text()]).toEqual([204, ""]);
  });

  it("with the native captcha: refuses a missing or wrong answer, accepts the right one once", async () => {
    const vars = { CAPTCHA: "native" };
    const tok = await newAppToken();
    const captcha = await json("/api/v1/pleroma/captcha", { vars });
    expect(captcha).toMatchObject({ type: "native", seconds_valid: 300 });
    expect(captcha.url).toMatch(/^data:image\/svg\+xml;base64,/);
    const svg = atob(captcha.url.split(",")[1]);
    const answer = [...svg.matchAll(/<text[^>]*>([A-Z0-9])<\/text>/g)].map((m) => m[1]).join("");
    expect(answer).toHaveLength(5);
    const ip = () => ({ "cf-connecting-ip": freshIp() });

    const missing = await json("/api/v1/accounts", {
      token: tok,
      vars,
      headers: ip(),
      body: signup(uniqueName()),
      status: 400,
    });
    expect(JSON.parse(missing.error).captcha[0]).toMatch(/^Invalid CAPTCHA/);
    const wrong = { captcha_token: captcha.token, captcha_answer_data: captcha.answer_data, captcha_solution: "WRONG" };
    const bad = await json("/api/v1/accounts", {
      token: tok,
      vars,
      headers: ip(),
      body: signup(uniqueName(), wrong),
      status: 400,
    });
    expect(JSON.parse(bad.error)).toEqual({ captcha: ["Invalid CAPTCHA"] });

    const right = { ...wrong, captcha_solution: answer.toLowerCase() };
    valid(
      TokenSchema,
      await json("/api/v1/accounts", { token: tok, vars, headers: ip(), body: signup(uniqueName(), right) }),
    );
    const again = await json("/api/v1/accounts", {
      token: tok,
      vars,
      headers: ip(),
      body: signup(uniqueName(), right),
      status: 400,
    });
    expect(JSON.parse(again.error)).toEqual({ captcha: ["CAPTCHA already used"] });
  });

  it("answers type none when the captcha is off", async () => {
    expect(await json("/api/v1/pleroma/captcha")).toEqual({ type: "none" });
  });
});

describe("credentials and scopes", () => {
  it("enforces scopes with Pleroma's messages, including the read hierarchy", async () => {
    const user = await registerUser();
    const login = (scope: string) =>
      json("/oauth/token", {
        body: {
          grant_type: "password",
          client_id: user.app.client_id,
          client_secret: user.app.client_secret,
          username: user.username,
          password: user.password,
          scope,
        },
      }).then((t) => t.access_token as string);
    const writeOnly = await login("write");
    const refused = await json("/api/v1/accounts/verify_credentials", { token: writeOnly, status: 403 });
    expect(refused.error).toBe("Insufficient permissions: read:accounts.");
    const narrow = await login("read:accounts");
    await json("/api/v1/accounts/verify_credentials", { token: narrow });
    const readOnly = await login("read");
    const cannotWrite = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: readOnly,
      body: { display_name: "x" },
      status: 403,
    });
    expect(cannotWrite.error).toBe("Insufficient permissions: write:accounts.");
  });

  it("refuses app-only tokens where a user is needed", async () => {
    const tok = await newAppToken();
    const body = await json("/api/v1/accounts/verify_credentials", { token: tok, status: 403 });
    expect(body.error).toBe("Invalid credentials.");
    await json("/api/v1/accounts/verify_credentials", { token: "not-a-token", status: 403 });
  });

  it("accepts the token as ?access_token= and the user through HTTP Basic", async () => {
    const user = await registerUser();
    expect((await json(`/api/v1/accounts/verify_credentials?access_token=${user.token}`)).id).toBe(user.id);
    const basic = btoa(`${user.username}:${user.password}`);
    expect(
      (await json("/api/v1/accounts/verify_credentials", { headers: { authorization: `Basic ${basic}` } })).id,
    ).toBe(user.id);
    const wrong = btoa(`${user.username}:wrong`);
    await json("/api/v1/accounts/verify_credentials", { headers: { authorization: `Basic ${wrong}` }, status: 403 });
  });

  it("records activity for monthly active users, at most hourly", async () => {
    const user = await registerUser();
    const lastActive = () =>
      env.DB.prepare("SELECT last_active_at AS t FROM users WHERE account_id = ?")
        .bind(user.id)
        .first<{ t: number }>()
        .then((r) => r!.t);
    const longAgo = Date.now() - 40 * 86400_000;
    await env.DB.prepare("UPDATE users SET last_active_at = ? WHERE account_id = ?").bind(longAgo, user.id).run();
    await json("/api/v1/accounts/verify_credentials", { token: user.token });
    await expect.poll(lastActive).toBeGreaterThan(Date.now() - 60_000);
    const recent = Date.now() - 10 * 60_000;
    await env.DB.prepare("UPDATE users SET last_active_at = ? WHERE account_id = ?").bind(recent, user.id).run();
    await json("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(await lastActive()).toBe(recent);
  });

  it("refuses a disabled account's token", async () => {
    const user = await registerUser();
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(user.id).run();
    const body = await json("/api/v1/accounts/verify_credentials", { token: user.token, status: 403 });
    expect(body).toEqual({ error: "Your account is currently disabled", identifier: "account_is_disabled" });
    await json(`/api/v1/accounts/${user.id}`, { status: 404 });
  });
});

describe("update_credentials", () => {
  it("changes the profile and settings, and shows them back", async () => {
    const user = await registerUser();
    const form = new URLSearchParams({
      display_name: "Ada",
      note: "Maths & engines\nhttps://example.org/ada",
      locked: "true",
      bot: "1",
      "source[privacy]": "unlisted",
      "source[sensitive]": "on",
      "source[language]": "en",
      "fields_attributes[0][name]": "Home",
      "fields_attributes[0][value]": "https://ada.example",
      "fields_attributes[1][name]": "Pronouns",
      "fields_attributes[1][value]": "she/her",
      hide_followers: "true",
      hide_follows_count: "true",
      show_role: "false",
      no_rich_text: "true",
      allow_following_move: "false",
      discoverable: "true",
      accepts_chat_messages: "false",
      "also_known_as[]": "https://old.example/users/ada",
    });
    const me = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: user.token, body: form }),
    );
    expect(me).toMatchObject({ display_name: "Ada", locked: true, bot: true, discoverable: true });
    expect(me.note).toBe(
      'Maths &amp; engines<br/><a href="https://example.org/ada" rel="ugc nofollow noopener noreferrer" target="_blank">https://example.org/ada</a>',
    );
    expect(me.fields).toEqual([
      {
        name: "Home",
        value:
          '<a href="https://ada.example" rel="ugc nofollow noopener noreferrer" target="_blank">https://ada.example</a>',
        verified_at: null,
      },
      { name: "Pronouns", value: "she/her", verified_at: null },
    ]);
    expect(me.source).toMatchObject({
      note: "Maths & engines\nhttps://example.org/ada",
      privacy: "unlisted",
      sensitive: true,
      language: "en",
      fields: [
        { name: "Home", value: "https://ada.example" },
        { name: "Pronouns", value: "she/her" },
      ],
      pleroma: { show_role: false, no_rich_text: true, actor_type: "Service", discoverable: true },
    });
    expect(me.pleroma).toMatchObject({
      hide_followers: true,
      hide_follows_count: true,
      allow_following_move: false,
      accepts_chat_messages: false,
      also_known_as: ["https://old.example/users/ada"],
    });

    // default_scope is the same setting as source[privacy].
    const again = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: { default_scope: "private" },
    });
    expect(again.source.privacy).toBe("private");
    expect(again.display_name).toBe("Ada");

    // Strangers see the public part only.
    const other = await registerUser();
    const seen = valid(AccountSchema, await json(`/api/v1/accounts/${user.id}`, { token: other.token }));
    expect(seen.source).toBeUndefined();
    expect(seen.pleroma.email).toBeUndefined();
    expect(seen.pleroma.settings_store).toBeUndefined();
    expect(seen.pleroma.is_admin).toBeUndefined(); // show_role is off
    expect(seen.following_count).toBe(0);
  });

  it("replaces one frontend's settings store and keeps the others", async () => {
    const user = await registerUser();
    const first = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: { pleroma_settings_store: { "pleroma-fe": { theme: "dark", collapse: true }, soapbox: { x: 1 } } },
    });
    expect(first.pleroma.settings_store).toEqual({
      "pleroma-fe": { theme: "dark", collapse: true },
      soapbox: { x: 1 },
    });
    const second = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: new URLSearchParams({ "pleroma_settings_store[pleroma-fe][theme]": "light" }),
    });
    expect(second.pleroma.settings_store).toEqual({ "pleroma-fe": { theme: "light" }, soapbox: { x: 1 } });
    const verify = await json("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(verify.pleroma.settings_store).toEqual(second.pleroma.settings_store);
  });

  it("stores avatar, header and background in R2, serves them, and resets with an empty string", async () => {
    const user = await registerUser();
    const form = new FormData();
    form.set("avatar", new File([PNG_1PX], "me.jpg", { type: "image/jpeg" }));
    form.set("header", new File([PNG_1PX], "header.png"));
    form.set("pleroma_background_image", new File([PNG_1PX], "bg.png"));
    const me = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: user.token, body: form }),
    );
    expect(me.avatar).toMatch(/^http:\/\/localhost\/media\/accounts\/.+\.png$/);
    expect(me.avatar_static).toBe(me.avatar);
    expect(me.header).toMatch(/\/media\/.+\.png$/);
    expect(me.pleroma.background_image).toMatch(/\/media\/.+\.png$/);

    const file = await call(me.avatar);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png"); // from the bytes, not the name given
    expect(file.headers.get("cache-control")).toContain("immutable");
    // The picture itself, at Mastodon's avatar size (test/image-metadata.test.ts has the rest).
    const info = await env.IMAGES!.info(new Blob([await file.arrayBuffer()]).stream());
    expect(info).toMatchObject({ format: "image/png", width: 400, height: 400 });
    // The background is kept at its own size: byte for byte (a 1-pixel PNG has nothing to strip).
    expect(new Uint8Array(await (await call(me.pleroma.background_image!)).arrayBuffer())).toEqual(PNG_1PX);
    const etag = file.headers.get("etag")!;
    expect((await call(me.avatar, { headers: { "if-none-match": etag } })).status).toBe(304);

    const reset = new FormData();
    reset.set("header", "");
    const after = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: reset,
    });
    expect(after.header).toBe(`${BASE}/images/banner.png`);
    expect(after.avatar).toBe(me.avatar);
    // The replaced file is deleted once the profile is saved.
    await expect.poll(async () => (await call(me.header)).status).toBe(404);
  });

  it("refuses non-images (415), too many or too long fields and a too long bio (413)", async () => {
    const user = await registerUser();
    const notImage = new FormData();
    notImage.set("avatar", new File(["<svg onload=alert(1)>"], "x.png", { type: "image/png" }));
    const r415 = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: notImage,
      status: 415,
    });
    expect(r415.error).toMatch(/only images/);
    const fields = Array.from({ length: 5 }, (_, i) => ({ name: `n${i}`, value: "v" }));
    const many = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: { fields_attributes: fields },
      status: 413,
    });
    expect(many.error).toBe("Too many field entries");
    const long = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: { fields_attributes: [{ name: "n", value: "x".repeat(3000) }] },
      status: 413,
    });
    expect(long.error).toBe("One or more field entries are too long");
    const bio = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: { note: "x".repeat(5001) },
      status: 413,
    });
    expect(bio.error).toBe("Bio is too long");
    const badPrivacy = await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: { default_scope: "everyone" },
      status: 400,
    });
    expect(badPrivacy.error).toMatch(/default_scope/);
    // Nothing of the refused updates was written.
    const me = await json("/api/v1/accounts/verify_credentials", { token: user.token });
    expect(me.fields).toEqual([]);
    expect(me.avatar).toBe(`${BASE}/images/avi.png`);
  });
});

describe("GET /api/v1/accounts/:id", () => {
  it("finds an account by id or nickname, without authentication", async () => {
    const user = await registerUser();
    const byId = valid(AccountSchema, await json(`/api/v1/accounts/${user.id}`));
    expect(byId.username).toBe(user.username);
    expect(byId.pleroma.relationship).toEqual({});
    expect(byId.pleroma.is_admin).toBe(false); // show_role defaults to on
    expect((await json(`/api/v1/accounts/${user.username.toUpperCase()}`)).id).toBe(user.id);
    expect((await json(`/api/v1/accounts/${user.username}@localhost`)).id).toBe(user.id);
    const missing = await json("/api/v1/accounts/nobody_here", { status: 404 });
    expect(missing.error).toBe("Can't find user");
    await json("/api/v1/accounts/01ARZ3NDEKTSV4RRFFQ69G5FAV", { status: 404 });
  });

  it("embeds the viewer's relationship when asked", async () => {
    const alice = await registerUser();
    const bob = await registerUser();
    // Relationship rows as the social graph writes them.
    const t = Date.now();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO follows (id, account_id, target_account_id, show_reblogs, notify, created_at) VALUES (?, ?, ?, 0, 0, ?)",
      ).bind(newId(), alice.id, bob.id, t),
      env.DB.prepare(
        "INSERT INTO mutes (id, account_id, target_account_id, hide_notifications, created_at) VALUES (?, ?, ?, 0, ?)",
      ).bind(newId(), alice.id, bob.id, t),
      env.DB.prepare(
        "INSERT INTO endorsements (id, account_id, target_account_id, created_at) VALUES (?, ?, ?, ?)",
      ).bind(newId(), alice.id, bob.id, t),
    ]);
    const seen = await json(`/api/v1/accounts/${bob.id}?with_relationships=true`, { token: alice.token });
    const rel = valid(RelationshipSchema, seen.pleroma.relationship);
    expect(rel).toEqual({
      id: bob.id,
      following: true,
      followed_by: false,
      blocking: false,
      blocked_by: false,
      muting: true,
      muting_notifications: false,
      subscribing: false,
      notifying: false,
      requested: false,
      domain_blocking: false,
      showing_reblogs: false,
      endorsed: true,
      note: "",
    });
    const reverse = await json(`/api/v1/accounts/${alice.id}?with_relationships=1`, { token: bob.token });
    expect(reverse.pleroma.relationship).toMatchObject({ following: false, followed_by: true, muting: false });
    // Anonymous callers get no relationship.
    expect((await json(`/api/v1/accounts/${bob.id}?with_relationships=true`)).pleroma.relationship).toEqual({});
  });
});
