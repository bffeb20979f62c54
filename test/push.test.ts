import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { base64url, fromBase64 } from "../src/lib/crypto";
import { json, post, registerUser, type TestUser } from "./helpers";
import { dnsAnswer } from "./outbound";

const ENDPOINT = "https://push.example/send/";
const enc = new TextEncoder();

/** A browser's side of a subscription: its ECDH key pair and auth secret. */
async function subscriber() {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
    "deriveBits",
  ])) as CryptoKeyPair;
  const publicRaw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const auth = crypto.getRandomValues(new Uint8Array(16));
  return { pair, publicRaw, auth, p256dh: base64url(publicRaw), authB64: base64url(auth) };
}

async function hkdf(salt: Uint8Array, ikm: Uint8Array, info: Uint8Array, bytes: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, bytes * 8));
}

/** RFC 8291 (aes128gcm) decryption, done here independently of the sending library. */
async function decrypt(body: Uint8Array, sub: Awaited<ReturnType<typeof subscriber>>): Promise<unknown> {
  const salt = body.slice(0, 16);
  const rs = new DataView(body.buffer, body.byteOffset + 16, 4).getUint32(0);
  const idlen = body[20];
  const asPublic = body.slice(21, 21 + idlen);
  const ciphertext = body.slice(21 + idlen);
  expect(ciphertext.length).toBeLessThanOrEqual(rs);
  const asKey = await crypto.subtle.importKey("raw", asPublic, { name: "ECDH", namedCurve: "P-256" }, false, []);
  // workers-types calls the field `$public`; the runtime takes the standard `public`.
  const ecdh = new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: "ECDH", public: asKey } as unknown as SubtleCryptoDeriveKeyAlgorithm,
      sub.pair.privateKey,
      256,
    ),
  );
  const keyInfo = new Uint8Array([...enc.encode("WebPush: info\0"), ...sub.publicRaw, ...asPublic]);
  const ikm = await hkdf(sub.auth, ecdh, keyInfo, 32);
  const cek = await hkdf(salt, ikm, enc.encode("Content-Encoding: aes128gcm\0"), 16);
  const nonce = await hkdf(salt, ikm, enc.encode("Content-Encoding: nonce\0"), 12);
  const aes = await crypto.subtle.importKey("raw", cek, "AES-GCM", false, ["decrypt"]);
  const padded = new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonce }, aes, ciphertext));
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  expect(padded[end]).toBe(2); // the last record's delimiter
  return JSON.parse(new TextDecoder().decode(padded.slice(0, end)));
}

/** RFC 8292: `vapid t=<JWT>, k=<public key>`, the JWT signed (ES256) by that key for the push service's origin. */
async function checkVapid(header: string, serverKey: string) {
  const m = /^vapid t=([^,]+), k=(.+)$/.exec(header);
  expect(m).not.toBeNull();
  const [, jwt, k] = m!;
  expect(k).toBe(serverKey);
  const [h, p, sig] = jwt.split(".");
  const key = await crypto.subtle.importKey("raw", fromBase64(k), { name: "ECDSA", namedCurve: "P-256" }, false, [
    "verify",
  ]);
  expect(
    await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, fromBase64(sig), enc.encode(`${h}.${p}`)),
  ).toBe(true);
  const claims = JSON.parse(new TextDecoder().decode(fromBase64(p)));
  expect(claims.aud).toBe("https://push.example");
  expect(claims.exp * 1000).toBeGreaterThan(Date.now());
  expect(claims.sub).toEqual(expect.any(String));
}

interface Received {
  url: string;
  headers: Headers;
  body: Uint8Array;
}

function receiver(status = 201) {
  const received: Received[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input as RequestInfo, init);
    // The SSRF guard resolves the endpoint's host: a public address.
    const dns = dnsAnswer(req.url, { "push.example": ["93.184.215.14"] });
    if (dns) return dns;
    if (!req.url.startsWith(ENDPOINT)) throw new Error(`unexpected fetch ${req.url}`);
    received.push({ url: req.url, headers: req.headers, body: new Uint8Array(await req.arrayBuffer()) });
    return new Response(null, { status });
  });
  return received;
}

async function subscribeUser(
  u: TestUser,
  alerts: Record<string, boolean>,
  sub: Awaited<ReturnType<typeof subscriber>>,
  token = u.token,
) {
  return json("/api/v1/push/subscription", {
    method: "POST",
    token,
    body: {
      subscription: { endpoint: `${ENDPOINT}${u.id}`, keys: { p256dh: sub.p256dh, auth: sub.authB64 } },
      data: { alerts },
    },
  });
}

describe("Web Push", () => {
  afterEach(() => vi.restoreAllMocks());

  it("delivers an encrypted, VAPID-signed message the subscriber can read, for enabled alerts only", async () => {
    const received = receiver();
    const [me, fan] = [await registerUser(), await registerUser()];
    const sub = await subscriber();
    const created = await subscribeUser(me, { favourite: true, mention: true }, sub);
    const serverKey = (await json("/api/v1/instance")).vapid_public_key;
    expect(created).toMatchObject({
      endpoint: `${ENDPOINT}${me.id}`,
      server_key: serverKey,
      alerts: { favourite: true, mention: true, reblog: false, follow: false },
    });

    const s = await post(me, { status: "push me please" });
    await json(`/api/v1/statuses/${s.id}/reblog`, { method: "POST", token: fan.token }); // reblog alerts are off
    await json(`/api/v1/statuses/${s.id}/favourite`, { method: "POST", token: fan.token });
    await expect.poll(() => received.length).toBe(1);
    const msg = received[0];
    expect(msg.headers.get("content-encoding")).toBe("aes128gcm");
    expect(Number(msg.headers.get("ttl"))).toBeGreaterThan(0);
    await checkVapid(msg.headers.get("authorization")!, serverKey);
    const payload = (await decrypt(msg.body, sub)) as Record<string, string>;
    const [notification] = await json("/api/v1/notifications?include_types[]=favourite", { token: me.token });
    expect(payload).toMatchObject({
      notification_id: notification.id,
      notification_type: "favourite",
      title: `${fan.username} favourited your post`,
      body: "push me please",
      preferred_locale: "en",
    });
    expect(payload.icon).toMatch(/^http:\/\/localhost\//);
  });

  it("a chat message is pushed under the pleroma:chat_mention alert, with its text", async () => {
    const received = receiver();
    const [me, friend] = [await registerUser(), await registerUser()];
    const sub = await subscriber();
    await subscribeUser(me, { "pleroma:chat_mention": true, mention: false }, sub);
    const chat = await json(`/api/v1/pleroma/chats/by-account-id/${me.id}`, { method: "POST", token: friend.token });
    await json(`/api/v1/pleroma/chats/${chat.id}/messages`, {
      method: "POST",
      token: friend.token,
      body: { content: "psst <b>hi</b>" },
    });
    await expect.poll(() => received.length).toBe(1);
    const [n] = await json("/api/v1/notifications?include_types[]=pleroma:chat_mention", { token: me.token });
    expect(await decrypt(received[0].body, sub)).toMatchObject({
      notification_id: n.id,
      notification_type: "pleroma:chat_mention",
      title: `${friend.username} sent you a chat message`,
      body: "psst <b>hi</b>",
    });
  });

  it("a subscribed account's new post is pushed under the status alert (Tusky, Phanpy)", async () => {
    const received = receiver();
    const [me, author] = [await registerUser(), await registerUser()];
    const sub = await subscriber();
    // Tusky sends data[alerts][status] form-encoded; it is stored and answered.
    const created = await json("/api/v1/push/subscription", {
      method: "POST",
      token: me.token,
      body: new URLSearchParams({
        "subscription[endpoint]": `${ENDPOINT}${me.id}`,
        "subscription[keys][p256dh]": sub.p256dh,
        "subscription[keys][auth]": sub.authB64,
        "data[alerts][status]": "true",
        "data[alerts][mention]": "false",
      }),
    });
    expect(created.alerts).toMatchObject({ status: true, mention: false });
    await json(`/api/v1/accounts/${author.id}/follow`, { method: "POST", token: me.token, body: { notify: true } });
    await post(author, { status: "fresh news" });
    await expect.poll(() => received.length).toBe(1);
    const [n] = await json("/api/v1/notifications", { token: me.token });
    expect(await decrypt(received[0].body, sub)).toMatchObject({
      notification_id: n.id,
      notification_type: "status",
      title: `${author.username} just posted`,
      body: "fresh news",
    });
  });

  it("hides the contents when asked, and removes a subscription the push service says is gone", async () => {
    const received = receiver(410);
    const [me, fan] = [await registerUser(), await registerUser()];
    const sub = await subscribeUser(me, { mention: true }, await subscriber());
    await json("/api/v1/pleroma/notification_settings", {
      method: "PUT",
      token: me.token,
      body: { hide_notification_contents: true },
    });
    const keys = await subscriber();
    await subscribeUser(me, { mention: true }, keys); // replaces the first: one per token
    expect((await json("/api/v1/push/subscription", { token: me.token })).id).not.toBe(sub.id);
    await post(fan, { status: `@${me.username} secret words` });
    await expect.poll(() => received.length).toBe(1);
    expect(await decrypt(received[0].body, keys)).toMatchObject({
      notification_type: "mention",
      title: "New notification",
      body: "",
    });
    await expect
      .poll(
        async () =>
          (await env.DB.prepare("SELECT count(*) AS n FROM push_subscriptions WHERE account_id = ?")
            .bind(me.id)
            .first<{ n: number }>())!.n,
      )
      .toBe(0);
    await json("/api/v1/push/subscription", { token: me.token, status: 404 });
  });

  it("validates keys, changes only alerts, needs the push scope, and ends with the token", async () => {
    receiver();
    const me = await registerUser();
    const bad = await json("/api/v1/push/subscription", {
      method: "POST",
      token: me.token,
      body: {
        subscription: {
          endpoint: `${ENDPOINT}x`,
          keys: { p256dh: base64url(new Uint8Array(65)), auth: base64url(new Uint8Array(16)) },
        },
      },
      status: 422,
    });
    expect(bad.error).toMatch(/p256dh/);
    const keys = await subscriber();
    const shortAuth = await json("/api/v1/push/subscription", {
      method: "POST",
      token: me.token,
      body: { subscription: { endpoint: `${ENDPOINT}x`, keys: { p256dh: keys.p256dh, auth: "AAAA" } } },
      status: 422,
    });
    expect(shortAuth.error).toMatch(/auth/);
    await json("/api/v1/push/subscription", {
      method: "POST",
      token: me.token,
      body: { subscription: { endpoint: "not a url", keys: { p256dh: keys.p256dh, auth: keys.authB64 } } },
      status: 400,
    });
    await json("/api/v1/push/subscription", {
      method: "PUT",
      token: me.token,
      body: { data: { alerts: { poll: true } } },
      status: 404,
    });

    const created = await subscribeUser(me, { follow: true }, keys);
    const form = new URLSearchParams({
      "data[alerts][pleroma:emoji_reaction]": "true",
      "data[alerts][follow]": "false",
    });
    const changed = await json("/api/v1/push/subscription", { method: "PUT", token: me.token, body: form });
    expect(changed).toMatchObject({
      id: created.id,
      endpoint: created.endpoint,
      alerts: { follow: false, "pleroma:emoji_reaction": true },
    });

    const readOnly = await json("/oauth/token", {
      body: {
        grant_type: "password",
        client_id: me.app.client_id,
        client_secret: me.app.client_secret,
        username: me.username,
        password: me.password,
        scope: "read",
      },
    });
    expect((await json("/api/v1/push/subscription", { token: readOnly.access_token, status: 403 })).error).toBe(
      "Insufficient permissions: push.",
    );

    await json("/oauth/revoke", {
      method: "POST",
      body: { client_id: me.app.client_id, client_secret: me.app.client_secret, token: me.token },
    });
    const left = await env.DB.prepare("SELECT count(*) AS n FROM push_subscriptions WHERE id = ?")
      .bind(created.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});
