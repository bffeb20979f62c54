import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { MediaAttachmentSchema } from "../src/schemas/status";
import { call, json, PNG_1PX, registerUser, valid } from "./helpers";

const dataUrl = (bytes: Uint8Array, type = "image/png") => `data:${type};base64,${btoa(String.fromCharCode(...bytes))}`;
const keyOf = (url: string) => new URL(url).pathname.replace(/^\/media\//, "");

function fileForm(name: string, bytes: Uint8Array, filename = "a.png") {
  const form = new FormData();
  form.set(name, new File([bytes], filename));
  return form;
}

describe("mascot", () => {
  it("is the default until set, then the uploaded image; a non-image is 415", async () => {
    const user = await registerUser();
    const first = valid(MediaAttachmentSchema, await json("/api/v1/pleroma/mascot", { token: user.token }));
    expect(first.id).toBe("default-mascot");
    expect(first.url).toMatch(/\/images\/pleroma-fox-tan-smol\.png$/);

    expect(
      await json("/api/v1/pleroma/mascot", {
        method: "PUT",
        token: user.token,
        body: fileForm("file", new TextEncoder().encode("#!/bin/sh\necho hi"), "x.png"),
        status: 415,
      }),
    ).toEqual({
      error: "mascots can only be images",
    });
    const set = valid(
      MediaAttachmentSchema,
      await json("/api/v1/pleroma/mascot", { method: "PUT", token: user.token, body: fileForm("file", PNG_1PX) }),
    );
    expect(set.type).toBe("image");
    expect(set.pleroma.mime_type).toBe("image/png");
    const file = await call(set.url);
    expect(file.status).toBe(200);
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(PNG_1PX);
    // Read back (both path forms), and not someone else's.
    expect(await json("/api/pleroma/mascot", { token: user.token })).toEqual(set);
    const other = await registerUser();
    expect((await json("/api/v1/pleroma/mascot", { token: other.token })).id).toBe("default-mascot");

    // Replacing it deletes the old file.
    const next = valid(
      MediaAttachmentSchema,
      await json("/api/v1/pleroma/mascot", { method: "PUT", token: user.token, body: fileForm("file", PNG_1PX) }),
    );
    expect(next.id).not.toBe(set.id);
    await expect.poll(async () => (await env.MEDIA.head(keyOf(set.url))) === null).toBe(true);
  });

  it("needs a user, the accounts scopes and a file", async () => {
    const user = await registerUser({ scopes: "read:accounts write:statuses" });
    valid(MediaAttachmentSchema, await json("/api/v1/pleroma/mascot", { token: user.token }));
    expect(
      await json("/api/v1/pleroma/mascot", {
        method: "PUT",
        token: user.token,
        body: fileForm("file", PNG_1PX),
        status: 403,
      }),
    ).toEqual({
      error: "Insufficient permissions: write:accounts.",
    });
    expect((await call("/api/v1/pleroma/mascot")).status).toBe(403);
    const full = await registerUser();
    expect(
      (await call("/api/v1/pleroma/mascot", { method: "PUT", token: full.token, body: new FormData() })).status,
    ).toBe(400);
  });
});

describe("update_avatar, update_banner, update_background", () => {
  it("sets each image from a data URL or a file, shows it on the account, and removes it with an empty value", async () => {
    const user = await registerUser();
    const avatar = await json("/api/v1/pleroma/accounts/update_avatar", {
      method: "PATCH",
      token: user.token,
      body: { img: dataUrl(PNG_1PX) },
    });
    expect(avatar.url).toMatch(/^http:\/\/localhost\/media\/accounts\//);
    const banner = await json("/api/pleroma/accounts/update_banner", {
      method: "PATCH",
      token: user.token,
      body: fileForm("banner", PNG_1PX),
    });
    const background = await json("/api/v1/pleroma/accounts/update_background", {
      method: "PATCH",
      token: user.token,
      body: { img: dataUrl(PNG_1PX) },
    });
    let me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: user.token }));
    expect(me.avatar).toBe(avatar.url);
    expect(me.header).toBe(banner.url);
    expect(me.pleroma.background_image).toBe(background.url);
    expect((await call(avatar.url)).status).toBe(200);

    // A new avatar replaces the old file.
    const again = await json("/api/v1/pleroma/accounts/update_avatar", {
      method: "PATCH",
      token: user.token,
      body: fileForm("img", PNG_1PX),
    });
    expect(again.url).not.toBe(avatar.url);
    await expect.poll(async () => (await env.MEDIA.head(keyOf(avatar.url))) === null).toBe(true);

    for (const [path, field] of [
      ["update_avatar", "img"],
      ["update_banner", "banner"],
      ["update_background", "img"],
    ]) {
      expect(
        await json(`/api/v1/pleroma/accounts/${path}`, { method: "PATCH", token: user.token, body: { [field]: "" } }),
      ).toEqual({ url: null });
    }
    me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: user.token }));
    expect(me.avatar).not.toBe(again.url);
    expect(me.header).not.toBe(banner.url);
    expect(me.pleroma.background_image).toBeNull();
    await expect.poll(async () => (await env.MEDIA.head(keyOf(banner.url))) === null).toBe(true);
  });

  it("refuses non-images (415), bad data URLs and a missing value (400), and other scopes (403)", async () => {
    const user = await registerUser();
    const text = new TextEncoder().encode("not an image at all");
    expect(
      (
        await call("/api/v1/pleroma/accounts/update_avatar", {
          method: "PATCH",
          token: user.token,
          body: { img: dataUrl(text) },
        })
      ).status,
    ).toBe(415);
    expect(
      (
        await call("/api/v1/pleroma/accounts/update_banner", {
          method: "PATCH",
          token: user.token,
          body: fileForm("banner", text),
        })
      ).status,
    ).toBe(415);
    const bad = await json("/api/v1/pleroma/accounts/update_avatar", {
      method: "PATCH",
      token: user.token,
      body: { img: "data:image/png;base64,@@@" },
      status: 400,
    });
    expect(bad.error).toMatch(/Invalid image/);
    expect(
      (
        await call("/api/v1/pleroma/accounts/update_avatar", {
          method: "PATCH",
          token: user.token,
          body: { img: "http://evil.example/x.png" },
        })
      ).status,
    ).toBe(400);
    expect(
      await json("/api/v1/pleroma/accounts/update_background", {
        method: "PATCH",
        token: user.token,
        body: {},
        status: 400,
      }),
    ).toEqual({ error: "Missing field: img." });
    const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: user.token }));
    expect(me.pleroma.background_image).toBeNull();
    const narrow = await registerUser({ scopes: "read write:statuses" });
    // (403 before anything is stored.)
    expect(
      (
        await call("/api/v1/pleroma/accounts/update_avatar", {
          method: "PATCH",
          token: narrow.token,
          body: { img: dataUrl(PNG_1PX) },
        })
      ).status,
    ).toBe(403);
  });
});

describe("empty file parts", () => {
  it("Phanpy's profile save (avatar and header sent empty) keeps the pictures; empty file parts are fields not given", async () => {
    const user = await registerUser();
    const withPictures = new FormData();
    withPictures.set("avatar", new File([PNG_1PX], "a.png", { type: "image/png" }));
    withPictures.set("header", new File([PNG_1PX], "h.png", { type: "image/png" }));
    const before = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: user.token, body: withPictures }),
    );
    expect(before.avatar).not.toMatch(/\/images\/avi\.png$/);
    // What Phanpy sends when no new picture was picked: both file fields, `filename=""`, no bytes.
    const save = new FormData();
    save.set("display_name", "Saved in Phanpy");
    save.set("note", "bio");
    save.set("avatar", new File([], "", { type: "application/octet-stream" }));
    save.set("header", new File([], "", { type: "application/octet-stream" }));
    const after = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: user.token, body: save }),
    );
    expect(after.display_name).toBe("Saved in Phanpy");
    expect(after.avatar).toBe(before.avatar);
    expect(after.header).toBe(before.header);
    // An upload whose only file part is empty: the file is missing (a 4xx), not an empty upload stored.
    const empty = new FormData();
    empty.set("file", new File([], "", { type: "application/octet-stream" }));
    const res = await call("/api/v1/media", { method: "POST", token: user.token, body: empty });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(await res.json()).toHaveProperty("error");
  });
});
