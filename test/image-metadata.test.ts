/**
 * No metadata leaves the server (issue 32): a phone photo's GPS position, camera serial and time are stripped from
 * every stored image (post media, avatars), the orientation kept so nothing turns sideways, previews appended after
 * the image cut off; sizes are read into `meta.original`; the focal point is kept; broken files and pixel floods
 * are refused. Fixtures are made with libraries (jpeg-js, fast-png, piexifjs) and read back with exifr.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import exifr from "exifr";
import jpegJs from "jpeg-js";
import { encode as encodePng } from "fast-png";
import piexif from "piexifjs";
import { MediaAttachmentSchema } from "../src/schemas/status";
import { AccountSchema } from "../src/schemas/account";
import { call, json, registerUser, valid, type TestUser } from "./helpers";
import { AVIF_WITH_EXIF } from "./fixtures/avif-exif";
import { GIF } from "./fixtures/gif";
import { phoneJpeg } from "./fixtures/phone-jpeg";

const upload = async (
  u: TestUser,
  bytes: Uint8Array,
  name: string,
  extra: Record<string, string> = {},
  status = 200,
) => {
  const form = new FormData();
  form.set("file", new File([bytes], name));
  for (const [k, v] of Object.entries(extra)) form.set(k, v);
  return json("/api/v2/media", { method: "POST", token: u.token, body: form, status });
};

/** The stored file, as anyone fetching the attachment's URL gets it. */
async function stored(url: string): Promise<Uint8Array> {
  const res = await call(new URL(url).pathname);
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

const has = (b: Uint8Array, text: string) => Buffer.from(b).includes(Buffer.from(text, "latin1"));

describe("uploaded photos", () => {
  it("lose GPS, camera and time, keep their orientation, and say their displayed size", async () => {
    const u = await registerUser();
    const photo = phoneJpeg(40, 30);
    // The fixture really carries what a phone writes.
    const before = await exifr.parse(photo, { gps: true, tiff: true, exif: true });
    expect(before).toMatchObject({ Make: "PhoneMaker", SerialNumber: "SN-0042-SECRET" });
    expect(before.latitude).toBeCloseTo(48.858, 2);
    const m = valid(MediaAttachmentSchema, await upload(u, photo, "IMG_0001.jpg"));
    const bytes = await stored(m.url);
    const after = (await exifr.parse(bytes, { gps: true, tiff: true, exif: true, xmp: true, iptc: true })) ?? {};
    expect(after.latitude).toBeUndefined();
    expect(after.GPSLatitude).toBeUndefined();
    expect(after.SerialNumber).toBeUndefined();
    expect(after.Make).toBeUndefined();
    expect(after.DateTimeOriginal).toBeUndefined();
    expect(has(bytes, "SN-0042-SECRET")).toBe(false);
    // Still a JPEG that decodes to the same picture, and turned as the phone held it.
    expect(await exifr.orientation(bytes)).toBe(6);
    expect(jpegJs.decode(bytes)).toMatchObject({ width: 40, height: 30 });
    expect(m.meta?.original).toEqual({ width: 30, height: 40, size: "30x40", aspect: 0.75 });
  });

  it("cut off what a phone appends after the image (previews with their own EXIF)", async () => {
    const u = await registerUser();
    const main = phoneJpeg(16, 16, 1);
    const preview = phoneJpeg(8, 8, 1);
    const both = new Uint8Array(main.length + preview.length);
    both.set(main);
    both.set(preview, main.length);
    const m = valid(MediaAttachmentSchema, await upload(u, both, "IMG_0002.jpg"));
    const bytes = await stored(m.url);
    expect(has(bytes, "SN-0042-SECRET")).toBe(false);
    expect(bytes.length).toBeLessThan(main.length);
    expect(jpegJs.decode(bytes)).toMatchObject({ width: 16, height: 16 });
    expect(await exifr.orientation(bytes)).toBeUndefined();
  });

  it("lose PNG text chunks; and avatars are cleaned too", async () => {
    const u = await registerUser();
    const png = encodePng({
      width: 3,
      height: 2,
      data: new Uint8Array(3 * 2 * 4).fill(200),
      channels: 4,
      text: { Comment: "taken at 12 Secret Street", Author: "Jane Doe" },
    });
    expect(has(png, "Secret Street")).toBe(true);
    const m = valid(MediaAttachmentSchema, await upload(u, png, "shot.png"));
    const bytes = await stored(m.url);
    expect(has(bytes, "Secret Street")).toBe(false);
    expect(has(bytes, "tEXt")).toBe(false);
    expect(m.meta?.original).toMatchObject({ width: 3, height: 2 });

    const form = new FormData();
    form.set("avatar", new File([phoneJpeg(20, 20)], "me.jpg"));
    const me = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: u.token, body: form }),
    );
    const avatar = await stored(me.avatar);
    expect(has(avatar, "SN-0042-SECRET")).toBe(false);
    expect((await exifr.parse(avatar, { gps: true }))?.latitude).toBeUndefined();
  });

  it("lose a WebP's EXIF and XMP chunks", async () => {
    const u = await registerUser();
    // A 1×1 lossless WebP (as cwebp writes it), with an EXIF chunk from piexif and an XMP chunk added: a RIFF
    // container is a list of chunks, which is how a phone's editor adds them.
    const vp8l = Uint8Array.from(atob("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="), (c) => c.charCodeAt(0));
    const exif = Uint8Array.from(
      piexif
        .dump({ GPS: { [piexif.GPSIFD.GPSLatitudeRef]: "N" }, "0th": { [piexif.ImageIFD.Make]: "Cam-XYZ" } })
        .slice(6),
      (c: string) => c.charCodeAt(0),
    );
    const chunk = (type: string, data: Uint8Array) => {
      const out = new Uint8Array(8 + data.length + (data.length & 1));
      out.set(Buffer.from(type, "latin1"));
      new DataView(out.buffer).setUint32(4, data.length, true);
      out.set(data, 8);
      return out;
    };
    const body = [
      vp8l.subarray(12),
      chunk("EXIF", exif),
      chunk("XMP ", Buffer.from("<x:xmpmeta>Secret Street</x:xmpmeta>")),
    ];
    const size = body.reduce((n, c) => n + c.length, 4);
    const webp = new Uint8Array(8 + size);
    webp.set(vp8l.subarray(0, 12));
    new DataView(webp.buffer).setUint32(4, size, true);
    let at = 12;
    for (const c of body) {
      webp.set(c, at);
      at += c.length;
    }
    expect(has(webp, "Cam-XYZ")).toBe(true);
    const m = valid(MediaAttachmentSchema, await upload(u, webp, "pic.webp"));
    const bytes = await stored(m.url);
    expect(has(bytes, "Cam-XYZ")).toBe(false);
    expect(has(bytes, "Secret Street")).toBe(false);
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true)).toBe(bytes.length - 8);
    expect(m.meta?.original).toMatchObject({ width: 1, height: 1 });
  });
});

describe("thumbnails and blurhash (the Images binding)", () => {
  it("a picture gets a WebP thumbnail of at most 640 pixels as preview_url, its size in meta.small, a blurhash", async () => {
    const u = await registerUser();
    const m = valid(MediaAttachmentSchema, await upload(u, phoneJpeg(1200, 800, 1), "big.jpg"));
    expect(m.preview_url).not.toBe(m.url);
    const preview = await call(new URL(m.preview_url).pathname);
    expect(preview.headers.get("content-type")).toBe("image/webp");
    const info = await env.IMAGES!.info(new Blob([await preview.arrayBuffer()]).stream());
    expect(info).toMatchObject({ width: 640, height: 427 });
    expect(m.meta).toMatchObject({
      original: { width: 1200, height: 800, size: "1200x800", aspect: 1.5 },
      small: { width: 640, height: 427 },
    });
    expect(m.blurhash).toMatch(/^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{28}$/);

    // The status serves it, and federates the picture's size; deleting the status deletes the thumbnail too.
    const s = await json("/api/v1/statuses", { token: u.token, body: { status: "a picture", media_ids: [m.id] } });
    expect(s.media_attachments[0]).toMatchObject({ preview_url: m.preview_url, blurhash: m.blurhash });
    const note = JSON.parse(
      await (await call(`/objects/${s.id}`, { headers: { Accept: "application/activity+json" } })).text(),
    );
    // One attachment compacts to an object, several to an array.
    expect([note.attachment].flat()[0]).toMatchObject({ type: "Document", width: 1200, height: 800 });
    const key = new URL(m.preview_url).pathname.replace(/^\/media\//, "");
    expect(await env.MEDIA.head(key)).not.toBeNull();
    await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: u.token });
    await expect.poll(async () => await env.MEDIA.head(key)).toBeNull();
  });
});

describe("metadata hidden elsewhere in a file", () => {
  it("a JPEG's comments, IPTC, and an XMP block after the image data are gone; JFIF thumbnails too", async () => {
    const u = await registerUser();
    const plain = phoneJpeg(16, 16, 1);
    const segment = (marker: number, text: string) => {
      const body = Buffer.from(text, "latin1");
      return Uint8Array.from([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body]);
    };
    // After SOI: a comment and a Photoshop/IPTC block; before EOI (after the scan): an XMP block.
    const eoi = plain.length - 2;
    const parts = [
      plain.subarray(0, 2),
      segment(0xfe, "shot at 12 Secret Street"),
      segment(0xed, "Photoshop 3.0\0IPTC Secret Street"),
      plain.subarray(2, eoi),
      segment(0xe1, "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>Secret Street</x:xmpmeta>"),
      plain.subarray(eoi),
    ];
    const crafted = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      crafted.set(p, at);
      at += p.length;
    }
    expect(has(crafted, "Secret Street")).toBe(true);
    const m = valid(MediaAttachmentSchema, await upload(u, crafted, "crafted.jpg"));
    const bytes = await stored(m.url);
    expect(has(bytes, "Secret Street")).toBe(false);
    expect(has(bytes, "JFIF")).toBe(false);
    expect(jpegJs.decode(bytes)).toMatchObject({ width: 16, height: 16 });
  });

  it("a PNG keeps only the chunks that draw it (private ones go)", async () => {
    const u = await registerUser();
    const png = encodePng({ width: 2, height: 2, data: new Uint8Array(16).fill(9), channels: 4 });
    const chunk = Uint8Array.from([0, 0, 0, 13, ...Buffer.from("prVtSecret Street"), 0, 0, 0, 0]);
    const crafted = new Uint8Array(png.length + chunk.length);
    crafted.set(png.subarray(0, 33));
    crafted.set(chunk, 33);
    crafted.set(png.subarray(33), 33 + chunk.length);
    const m = valid(MediaAttachmentSchema, await upload(u, crafted, "p.png"));
    const bytes = await stored(m.url);
    expect(has(bytes, "Secret Street")).toBe(false);
    expect(m.meta?.original).toMatchObject({ width: 2, height: 2 });
  });
});

describe("AVIF", () => {
  it("with an EXIF item: re-encoded through the Images binding without it; refused without the binding", async () => {
    const u = await registerUser();
    const avif = Uint8Array.from(atob(AVIF_WITH_EXIF), (c) => c.charCodeAt(0));
    expect(has(avif, "AvifCam")).toBe(true);
    const m = valid(MediaAttachmentSchema, await upload(u, avif, "photo.avif"));
    const bytes = await stored(m.url);
    expect(has(bytes, "AvifCam")).toBe(false);
    expect(has(bytes, "Exif")).toBe(false);
    // Still an AVIF (the local binding's `info` calls sharp's AVIF "heif" and refuses it, so the brand is read).
    expect(String.fromCharCode(...bytes.subarray(4, 12))).toBe("ftypavif");
    // Without the binding nothing can take the item out: refused rather than published.
    const form = new FormData();
    form.set("file", new File([avif], "photo.avif"));
    const res = await call("/api/v2/media", {
      method: "POST",
      token: u.token,
      body: form,
      vars: { IMAGES: undefined } as never,
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: string }).error).toMatch(/cannot be removed/);
    // A binding that fails (a broken file, its quota) is no 500: the file is judged as without it.
    const failing = {
      input: () => {
        throw new Error("IMAGES_QUOTA_EXCEEDED");
      },
    };
    const again = new FormData();
    again.set("file", new File([avif], "photo.avif"));
    const refused = await call("/api/v2/media", {
      method: "POST",
      token: u.token,
      body: again,
      vars: { IMAGES: failing } as never,
    });
    expect(refused.status).toBe(422);
  });
});

describe("avatars and headers", () => {
  it("are cropped to Mastodon's sizes (400 × 400, 1500 × 500), without their metadata", async () => {
    const u = await registerUser();
    const form = new FormData();
    form.set("avatar", new File([phoneJpeg(1000, 800, 1)], "me.jpg"));
    form.set("header", new File([phoneJpeg(3000, 1200, 1)], "wide.jpg"));
    const me = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: u.token, body: form }),
    );
    const size = async (url: string) => {
      const bytes = await stored(url);
      expect(has(bytes, "SN-0042-SECRET")).toBe(false);
      const info = await env.IMAGES!.info(new Blob([bytes]).stream());
      return "width" in info ? [info.width, info.height] : null;
    };
    expect(await size(me.avatar)).toEqual([400, 400]);
    expect(await size(me.header)).toEqual([1500, 500]);
  });
});

describe("GIFs", () => {
  it("keep being shown as themselves (no still thumbnail), with their size and a blurhash", async () => {
    const u = await registerUser();
    const gif = Uint8Array.from(atob(GIF), (c) => c.charCodeAt(0));
    const m = valid(MediaAttachmentSchema, await upload(u, gif, "anim.gif"));
    expect(m.preview_url).toBe(m.url);
    expect(m.meta?.original).toMatchObject({ width: 24, height: 12 });
    expect(m.meta?.small).toBeUndefined();
    expect(m.blurhash).toBeTruthy();
  });
});

describe("files that are not what they claim", () => {
  it("a truncated JPEG, a PNG without its end and a pixel flood are refused with 422, nothing stored", async () => {
    const u = await registerUser();
    const count = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM media_attachments WHERE account_id = ?")
        .bind(u.id)
        .first<{ n: number }>())!.n;
    const photo = phoneJpeg(16, 16);
    expect((await upload(u, photo.subarray(0, photo.length / 2), "half.jpg", {}, 422)).error).toMatch(
      /not a complete image/,
    );
    const png = encodePng({ width: 2, height: 2, data: new Uint8Array(16), channels: 4 });
    expect((await upload(u, png.subarray(0, png.length - 12), "cut.png", {}, 422)).error).toMatch(
      /not a complete image/,
    );
    // A header claiming 20,000 × 20,000 pixels: a decoder's memory is refused before any is spent.
    const flood = png.slice();
    const view = new DataView(flood.buffer);
    view.setUint32(16, 20_000);
    view.setUint32(20, 20_000);
    expect((await upload(u, flood, "flood.png", {}, 422)).error).toMatch(/more than 33177600 pixels/);
    expect(await count()).toBe(0);
  });
});

describe("focal points", () => {
  it("are taken at upload and by PUT /api/v1/media/:id, shown in meta.focus; nonsense is 422", async () => {
    const u = await registerUser();
    const m = valid(MediaAttachmentSchema, await upload(u, phoneJpeg(8, 8), "f.jpg", { focus: "0.5,-0.25" }));
    expect(m.meta?.focus).toEqual({ x: 0.5, y: -0.25 });
    const moved = valid(
      MediaAttachmentSchema,
      await json(`/api/v1/media/${m.id}`, { method: "PUT", token: u.token, body: { focus: "-2,1" } }),
    );
    expect(moved.meta).toMatchObject({ focus: { x: -1, y: 1 }, original: { width: 8, height: 8 } });
    await json(`/api/v1/media/${m.id}`, { method: "PUT", token: u.token, body: { focus: "left" }, status: 422 });
    await upload(u, phoneJpeg(8, 8), "g.jpg", { focus: "1,2,3" }, 422);
  });
});
