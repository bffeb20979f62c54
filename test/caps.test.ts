/** Caps on what a client can store: each reported limit is enforced, each configurable one reported. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newId } from "../src/db/ids";
import { AccountSchema } from "../src/schemas/account";
import { InstanceSchema } from "../src/schemas/instance";
import { MediaAttachmentSchema, StatusSchema } from "../src/schemas/status";
import { call, json, PNG_1PX, post, registerUser, valid, type TestUser } from "./helpers";

const count = async (sql: string, ...args: unknown[]) =>
  (await env.DB.prepare(`SELECT count(*) AS n FROM ${sql}`)
    .bind(...args)
    .first<{ n: number }>())!.n;
const patch = (u: TestUser, body: unknown, status = 200, vars?: Record<string, string>) =>
  json("/api/v1/accounts/update_credentials", {
    method: "PATCH",
    token: u.token,
    body: body as Record<string, unknown>,
    status,
    vars,
  });

describe("settings store", () => {
  it("takes up to 64 KB per frontend and 16 frontends, refusing more without writing anything", async () => {
    const u = await registerUser();
    const big = "x".repeat(64 * 1024 - 2); // JSON-encoded: exactly 64 KB with its quotes
    const ok = valid(
      AccountSchema,
      await patch(u, { pleroma_settings_store: { "pleroma-fe": { v: big.slice(6) }, soapbox: { a: 1 } } }),
    );
    expect(Object.keys(ok.pleroma!.settings_store!)).toEqual(["pleroma-fe", "soapbox"]);
    const tooBig = await patch(
      u,
      { display_name: "changed", pleroma_settings_store: { soapbox: { v: big + "yy" } } },
      400,
    );
    expect(tooBig.error).toMatch(/Settings store entry too large: soapbox/);
    const many = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`fe${i}`, { i }]));
    const tooMany = await patch(u, { display_name: "changed", pleroma_settings_store: many }, 400);
    expect(tooMany.error).toBe("Settings store holds at most 16 frontends");
    // Nothing of the refused updates was written.
    const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: u.token }));
    expect(me.display_name).not.toBe("changed");
    expect(me.pleroma!.settings_store).toEqual({ "pleroma-fe": { v: big.slice(6) }, soapbox: { a: 1 } });
    // 14 more frontends make 16: accepted.
    const fits = valid(
      AccountSchema,
      await patch(u, { pleroma_settings_store: Object.fromEntries(Object.entries(many).slice(0, 14)) }),
    );
    expect(Object.keys(fits.pleroma!.settings_store!)).toHaveLength(16);
  });
});

describe("profile fields", () => {
  it("reports the configured count and lengths, and enforces them", async () => {
    const vars = { MAX_ACCOUNT_FIELDS: "6", ACCOUNT_FIELD_NAME_LENGTH: "10", ACCOUNT_FIELD_VALUE_LENGTH: "20" };
    const inst = valid(InstanceSchema, await json("/api/v1/instance", { vars }));
    expect(inst.pleroma.metadata.fields_limits).toMatchObject({ max_fields: 6, name_length: 10, value_length: 20 });
    expect(inst.configuration.accounts.max_profile_fields).toBe(6);
    const u = await registerUser();
    const fields = (n: number, name = "n", value = "v") =>
      Array.from({ length: n }, (_, i) => ({ name: `${name}${i}`, value }));
    const six = valid(AccountSchema, await patch(u, { fields_attributes: fields(6, "123456789") }, 200, vars));
    expect(six.fields).toHaveLength(6);
    expect((await patch(u, { fields_attributes: fields(7) }, 413, vars)).error).toBe("Too many field entries");
    expect((await patch(u, { fields_attributes: fields(1, "1234567890") }, 413, vars)).error).toBe(
      "One or more field entries are too long",
    );
    expect((await patch(u, { fields_attributes: fields(1, "n", "x".repeat(21)) }, 413, vars)).error).toBe(
      "One or more field entries are too long",
    );
    // The default is Pleroma's 4.
    expect((await patch(u, { fields_attributes: fields(5) }, 413)).error).toBe("Too many field entries");
    expect((await json("/api/v1/accounts/verify_credentials", { token: u.token })).fields).toHaveLength(6);
  });
});

describe("lists and filters", () => {
  it("at most 50 lists, held by 10 parallel creations", async () => {
    const u = await registerUser();
    const t = Date.now();
    await env.DB.batch(
      Array.from({ length: 45 }, (_, i) =>
        env.DB.prepare("INSERT INTO lists (id, account_id, title, created_at) VALUES (?, ?, ?, ?)").bind(
          newId(),
          u.id,
          `seed ${i}`,
          t,
        ),
      ),
    );
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call("/api/v1/lists", { method: "POST", token: u.token, body: { title: `new ${i}` } }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(422);
      expect(((await r.json()) as any).error).toBe("Validation failed: You have reached the maximum number of lists");
    }
    expect(await count("lists WHERE account_id = ?", u.id)).toBe(50);
    expect(await json("/api/v1/lists", { token: u.token })).toHaveLength(50);
    // Another user is not affected.
    const other = await registerUser();
    expect((await json("/api/v1/lists", { method: "POST", token: other.token, body: { title: "mine" } })).title).toBe(
      "mine",
    );
  });

  it("at most 100 filters in force, held by 10 parallel creations; expired ones do not count", async () => {
    const u = await registerUser();
    const t = Date.now();
    // Each filter with its one keyword, under the same id (as a v1 filter is made).
    const seed = (i: number, expiresAt: number | null) => {
      const id = newId();
      return [
        env.DB.prepare(
          "INSERT INTO filters (id, account_id, title, context, irreversible, expires_at, created_at, updated_at) VALUES (?, ?, ?, '[\"home\"]', 0, ?, ?, ?)",
        ).bind(id, u.id, `w${i}`, expiresAt, t, t),
        env.DB.prepare(
          "INSERT INTO filter_keywords (id, filter_id, keyword, whole_word, created_at) VALUES (?, ?, ?, 1, ?)",
        ).bind(id, id, `w${i}`, t),
      ];
    };
    await env.DB.batch([
      ...Array.from({ length: 95 }, (_, i) => seed(i, null)).flat(),
      ...Array.from({ length: 5 }, (_, i) => seed(100 + i, t - 1000)).flat(),
    ]);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call("/api/v1/filters", { method: "POST", token: u.token, body: { phrase: `p${i}`, context: ["home"] } }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(422);
      expect(((await r.json()) as any).error).toBe("Validation failed: You have reached the maximum number of filters");
    }
    expect(await count("filters WHERE account_id = ? AND expires_at IS NULL", u.id)).toBe(100);
    expect(await json("/api/v1/filters", { token: u.token })).toHaveLength(100);
  });
});

describe("polls", () => {
  it("reports the configured option count and length, and enforces them", async () => {
    const vars = { POLL_MAX_OPTIONS: "3", POLL_MAX_OPTION_CHARS: "10" };
    const inst = valid(InstanceSchema, await json("/api/v1/instance", { vars }));
    expect(inst.poll_limits).toMatchObject({ max_options: 3, max_option_chars: 10 });
    expect(inst.configuration.polls).toMatchObject({ max_options: 3, max_characters_per_option: 10 });
    const u = await registerUser();
    const poll = (options: string[], status = 200) =>
      json("/api/v1/statuses", {
        method: "POST",
        token: u.token,
        vars,
        status,
        body: { status: "vote", poll: { options, expires_in: 3600 } },
      });
    valid(StatusSchema, await poll(["a", "b", "1234567890"]));
    expect((await poll(["a", "b", "c", "d"], 422)).error).toBe("Poll can't contain more than 3 options");
    expect((await poll(["a", "12345678901"], 422)).error).toBe("Poll options cannot be longer than 10 characters each");
    // Defaults: 20 options.
    expect(
      (
        await post(
          u,
          { status: "x", poll: { options: Array.from({ length: 21 }, (_, i) => `o${i}`), expires_in: 3600 } },
          422,
        )
      ).error,
    ).toBe("Poll can't contain more than 20 options");
  });
});

describe("uploads", () => {
  const send = (u: TestUser, bytes: Uint8Array, vars?: Record<string, string>, status = 200) => {
    const form = new FormData();
    form.set("file", new File([bytes], "f.bin"));
    return json("/api/v1/media", { method: "POST", token: u.token, body: form, vars, status });
  };
  // The smallest WebM that is one: an EBML header naming "webm", an empty segment (a bare header is refused, 422).
  const WEBM = Uint8Array.from([
    0x1a, 0x45, 0xdf, 0xa3, 0x87, 0x42, 0x82, 0x84, 0x77, 0x65, 0x62, 0x6d, 0x18, 0x53, 0x80, 0x67, 0x80,
  ]);
  const OPAQUE = new TextEncoder().encode("just some bytes, no known type at all");

  it("reports the accepted types and sizes, and refuses others", async () => {
    const vars = { UPLOAD_TYPES: "image/png, video/webm", UPLOAD_LIMIT: "1000" };
    const inst = valid(InstanceSchema, await json("/api/v1/instance", { vars }));
    expect(inst.configuration.media_attachments).toMatchObject({
      supported_mime_types: ["image/png", "video/webm"],
      image_size_limit: 1000,
      video_size_limit: 1000,
    });
    expect(inst.upload_limit).toBe(1000);
    // Mastodon 4's v2 answer tells the same facts (Phanpy reads it there).
    const v2 = await json("/api/v2/instance", { vars });
    expect(v2.configuration.media_attachments).toMatchObject({
      supported_mime_types: ["image/png", "video/webm"],
      image_size_limit: 1000,
    });
    const u = await registerUser();
    expect(valid(MediaAttachmentSchema, await send(u, PNG_1PX, vars)).type).toBe("image");
    expect(valid(MediaAttachmentSchema, await send(u, WEBM, vars)).type).toBe("video");
    expect((await send(u, OPAQUE, vars, 415)).error).toMatch(/Unsupported media type: application\/octet-stream/);
    const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0]);
    expect((await send(u, jpeg, vars, 415)).error).toMatch(/image\/jpeg/);
    const huge = new Uint8Array(1001);
    huge.set(PNG_1PX.subarray(0, 8));
    expect((await send(u, huge, vars, 413)).error).toBe("File is too large");
    // Nothing refused was kept.
    expect(await count("media_attachments WHERE account_id = ?", u.id)).toBe(2);
  });

  it("refuses a body past the upload limit with 413: before reading it when its length says so, else once read that far", async () => {
    const vars = { UPLOAD_LIMIT: "1000" };
    const u = await registerUser();
    const head = new TextEncoder().encode(
      '--b\r\nContent-Disposition: form-data; name="file"; filename="f.png"\r\n\r\n',
    );
    const upload = (body: ReadableStream, headers: Record<string, string> = {}) =>
      call("/api/v2/media", {
        method: "POST",
        token: u.token,
        vars,
        headers: { "content-type": "multipart/form-data; boundary=b", ...headers },
        body,
      });
    // A length of 100 MB declared and a body that never ends: answered without waiting for it.
    const endless = new ReadableStream({
      start(c) {
        c.enqueue(head);
      },
    });
    const declared = await upload(endless, { "content-length": "100000000" });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ error: "File is too large" });
    // No length: read until past the limit (with room for a description), then refused.
    const chunk = new Uint8Array(10_000);
    let sent = 0;
    const long = new ReadableStream({
      pull(c) {
        if (sent++ === 0) c.enqueue(head);
        else if (sent < 200) c.enqueue(chunk);
        else c.close();
      },
    });
    const streamed = await upload(long);
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toEqual({ error: "File is too large" });
    expect(sent).toBeLessThan(200);
    // Within the limit, the same route takes a file streamed without a length.
    const body = new Uint8Array([...head, ...PNG_1PX, ...new TextEncoder().encode("\r\n--b--\r\n")]);
    const small = new ReadableStream({
      start(c) {
        c.enqueue(body.subarray(0, 50));
        c.enqueue(body.subarray(50));
        c.close();
      },
    });
    const ok = await upload(small);
    expect(ok.status).toBe(200);
    expect(valid(MediaAttachmentSchema, await ok.json()).type).toBe("image");
    expect(await count("media_attachments WHERE account_id = ?", u.id)).toBe(1);
  });

  it("by default accepts every known type and opaque files, and says so", async () => {
    const inst = valid(InstanceSchema, await json("/api/v1/instance"));
    expect(inst.configuration.media_attachments.supported_mime_types).toEqual(
      expect.arrayContaining(["image/png", "image/jpeg", "video/mp4", "audio/mpeg", "application/octet-stream"]),
    );
    expect(inst.configuration.media_attachments.image_size_limit).toBe(inst.upload_limit);
    const u = await registerUser();
    expect(valid(MediaAttachmentSchema, await send(u, OPAQUE)).type).toBe("unknown");
  });

  it("avatar, header and background limits are reported and enforced", async () => {
    const vars = { AVATAR_UPLOAD_LIMIT: "100", BANNER_UPLOAD_LIMIT: "120", BACKGROUND_UPLOAD_LIMIT: "140" };
    const inst = valid(InstanceSchema, await json("/api/v1/instance", { vars }));
    expect(inst).toMatchObject({ avatar_upload_limit: 100, banner_upload_limit: 120, background_upload_limit: 140 });
    const u = await registerUser();
    const png = (size: number) => {
      const b = new Uint8Array(size);
      b.set(PNG_1PX.subarray(0, Math.min(size, PNG_1PX.length)));
      return b;
    };
    const send = (field: string, size: number, status: number) => {
      const form = new FormData();
      form.set("display_name", "renamed");
      form.set(field, new File([png(size)], "a.png"));
      return json("/api/v1/accounts/update_credentials", { method: "PATCH", token: u.token, body: form, vars, status });
    };
    for (const [field, limit] of [
      ["avatar", 100],
      ["header", 120],
      ["pleroma_background_image", 140],
    ] as const) {
      expect((await send(field, limit + 1, 413)).error).toBe("File is too large");
      expect(
        valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: u.token })).display_name,
      ).not.toBe("renamed");
    }
    const ok = valid(AccountSchema, await send("avatar", 100, 200));
    expect(ok.avatar).toMatch(/\/media\//);
  });
});
