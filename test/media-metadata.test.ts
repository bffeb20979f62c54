/**
 * No place, device or date leaves the server in an iPhone photo, a phone video, a voice note or a GIF (issue 44).
 * Each file is made byte by byte (test/fixtures/media.ts) carrying `SECRETS`, uploaded through `/api/v2/media` or
 * `/api/v1/media` with a real token, and the served bytes (a GET of the attachment's URL) are read back with the
 * fixtures' own readers of the box tree, the EBML tree, Ogg pages (CRCs checked) and GIF blocks, and exifr.
 *
 * The pool's Images binding is miniflare's local one (sharp, whose prebuilt libheif decodes AV1 only, not HEVC):
 * it cannot read a HEIC. Production's binding can; the HEIC-to-JPEG path is tested with a stand-in binding that
 * answers a JPEG for a HEIC (with a phone's EXIF still in it, so the stripping after the conversion is what the
 * test sees) and hands anything else to the pool's binding.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import exifr from "exifr";
import jpegJs from "jpeg-js";
import { MediaAttachmentSchema } from "../src/schemas/status";
import { call, registerUser, valid, type TestUser } from "./helpers";
import { AVIF_WITH_EXIF } from "./fixtures/avif-exif";
import { GIF } from "./fixtures/gif";
import { phoneExif, phoneJpeg } from "./fixtures/phone-jpeg";
import {
  box,
  boxTree,
  cat,
  el,
  gifApplication,
  gifComment,
  gifFrame,
  gifLoop,
  gifWith,
  iphoneHeic,
  phoneFlac,
  phoneM4a,
  phoneMp3,
  phoneOpus,
  phoneVideo,
  phoneVorbis,
  phoneWav,
  phoneWebm,
  readBoxes,
  readEbml,
  readOgg,
  SAMPLE,
  SECRETS,
  xmpPacket,
  type Ebml,
} from "./fixtures/media";

const has = (b: Uint8Array, text: string) => Buffer.from(b).includes(Buffer.from(text, "latin1"));
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** None of what the phone wrote is in these bytes. */
function noSecrets(b: Uint8Array) {
  for (const s of [...Object.values(SECRETS), "48.8584", "PhoneCam", "com.apple.quicktime.location"])
    expect(has(b, s), s).toBe(false);
}

async function upload(
  u: TestUser,
  bytes: Uint8Array,
  name: string,
  opts: { v1?: boolean; images?: unknown; status?: number } = {},
) {
  const form = new FormData();
  form.set("file", new File([bytes], name));
  const res = await call(opts.v1 ? "/api/v1/media" : "/api/v2/media", {
    method: "POST",
    token: u.token,
    body: form,
    ...(opts.images !== undefined ? { vars: { IMAGES: opts.images } as never } : {}),
  });
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(body)).toBe(opts.status ?? 200);
  return body;
}

/** The stored file, as anyone fetching the attachment's URL gets it, and its type. */
async function served(url: string): Promise<{ bytes: Uint8Array; type: string | null }> {
  const res = await call(new URL(url).pathname);
  expect(res.status).toBe(200);
  return { bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get("content-type") };
}

/**
 * The Images binding as production's reads a HEIC: a HEIC comes out as `decoded` (a JPEG); anything else goes to
 * the pool's own binding. `heic` counts the HEIC conversions asked for.
 */
function heicReader(decoded: Uint8Array) {
  const real = env.IMAGES!;
  const seen = { heic: 0 };
  const binding = {
    info: (s: ReadableStream<Uint8Array>) => real.info(s),
    input(stream: ReadableStream<Uint8Array>) {
      const transforms: ImageTransform[] = [];
      const chain = {
        transform(t: ImageTransform) {
          transforms.push(t);
          return chain;
        },
        async output(o: ImageOutputOptions) {
          const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
          if (String.fromCharCode(...bytes.subarray(8, 12)) === "heic" || has(bytes.subarray(0, 32), "heic")) {
            seen.heic++;
            expect(o.format).toBe("image/jpeg");
            return { response: () => new Response(decoded), contentType: () => "image/jpeg" };
          }
          let input = real.input(new Blob([bytes]).stream());
          for (const t of transforms) input = input.transform(t);
          return input.output(o);
        },
      };
      return chain;
    },
  };
  return { binding, seen };
}

describe("iPhone photos (HEIC)", () => {
  const exif = latin1(phoneExif());

  it("come out as a JPEG every app shows, without GPS, camera or serial, through v2 and v1", async () => {
    const u = await registerUser();
    const heic = iphoneHeic(exif);
    expect(has(heic, "SN-0042-SECRET")).toBe(true);
    expect((await exifr.parse(phoneJpeg(64, 48, 1), { gps: true }))?.latitude).toBeCloseTo(48.858, 2);
    for (const v1 of [false, true]) {
      const { binding, seen } = heicReader(phoneJpeg(64, 48, 1));
      const m = valid(MediaAttachmentSchema, await upload(u, heic, "IMG_0001.HEIC", { v1, images: binding }));
      expect(seen.heic).toBe(1);
      expect(m).toMatchObject({ type: "image", pleroma: { mime_type: "image/jpeg" } });
      expect(m.url).toMatch(/\.jpg$/);
      expect(m.meta?.original).toMatchObject({ width: 64, height: 48 });
      const { bytes, type } = await served(m.url);
      expect(type).toBe("image/jpeg");
      const after = (await exifr.parse(bytes, { gps: true, tiff: true, exif: true, xmp: true })) ?? {};
      expect(after.latitude).toBeUndefined();
      expect(after.Make).toBeUndefined();
      expect(has(bytes, "SN-0042-SECRET")).toBe(false);
      expect(has(bytes, "PhoneMaker")).toBe(false);
      expect(jpegJs.decode(bytes)).toMatchObject({ width: 64, height: 48 });
    }
  });

  it("are refused (422), never stored as they came, when no binding can read HEVC (the pool's, or none)", async () => {
    const u = await registerUser();
    for (const major of ["heic", "mif1", "msf1", "heix"]) {
      const heic = iphoneHeic(exif, 64, 48, major);
      await upload(u, heic, "IMG.HEIC", { status: 422 });
      await upload(u, heic, "IMG.HEIC", { images: null, status: 422 });
    }
    // Too many pixels is refused before any decoder sees it.
    const { binding, seen } = heicReader(phoneJpeg(8, 8, 1));
    await upload(u, iphoneHeic(exif, 20_000, 20_000), "huge.heic", { images: binding, status: 422 });
    expect(seen.heic).toBe(0);
  });

  it("an AVIF whose major brand is mif1 is an AVIF: re-encoded without its EXIF", async () => {
    const u = await registerUser();
    const avif = Uint8Array.from(atob(AVIF_WITH_EXIF), (c) => c.charCodeAt(0));
    avif.set(latin1("mif1"), 8);
    expect(has(avif, "AvifCam")).toBe(true);
    const m = valid(MediaAttachmentSchema, await upload(u, avif, "photo.avif"));
    expect(m).toMatchObject({ type: "image", pleroma: { mime_type: "image/avif" } });
    const { bytes } = await served(m.url);
    expect(has(bytes, "AvifCam")).toBe(false);
    expect(has(bytes, "Exif")).toBe(false);
  });

  it("a file the binding would read but that names no picture (a 40-byte AVIF box of a huge size) is refused", async () => {
    const u = await registerUser();
    const ftyp = box("ftyp", latin1("avif"), [0, 0, 0, 0], latin1("mif1avif"));
    const huge = cat(ftyp, [0xff, 0xff, 0xff, 0xf0], latin1("meta"), new Uint8Array(40 - ftyp.length - 8));
    const toEnd = cat(ftyp, [0, 0, 0, 0], latin1("meta"), new Uint8Array(40 - ftyp.length - 8));
    expect(huge.length).toBe(40);
    // A binding that "reads" anything, as production's did with this file.
    const lenient = {
      input: () => ({
        transform() {
          return this;
        },
        output: async () => ({ response: () => new Response(cat(ftyp, new Uint8Array(8))) }),
      }),
      info: async () => ({ format: "image/avif", fileSize: 40, width: 1, height: 1 }),
    };
    for (const bytes of [huge, toEnd]) {
      await upload(u, bytes, "x.avif", { status: 422 });
      await upload(u, bytes, "x.avif", { images: lenient, status: 422 });
    }
  });
});

describe("videos and audio keep no place, device or date", () => {
  /** The box tree holds no metadata box; the recording dates are 0; the chunk offset still reaches the sample. */
  function checkIsobmff(bytes: Uint8Array, original: Uint8Array) {
    noSecrets(bytes);
    expect(bytes.length).toBe(original.length);
    const tree = boxTree(bytes);
    expect(tree.filter((p) => /(^|\/)(udta|meta|keys|ilst|©xyz|uuid)$/.test(p))).toEqual([]);
    expect(tree).toContain("moov/trak/mdia/minf/stbl/stco");
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const find = (path: string[], from = 0, to = bytes.length): [number, number] => {
      const [first, ...rest] = path;
      const b = readBoxes(bytes, from, to).find(([t]) => t === first)!;
      return rest.length ? find(rest, b[2], b[3]) : [b[2], b[3]];
    };
    const [mvhd] = find(["moov", "mvhd"]);
    expect([view.getUint32(mvhd + 4), view.getUint32(mvhd + 8)]).toEqual([0, 0]);
    const [tkhd] = find(["moov", "trak", "tkhd"]);
    expect(view.getUint32(tkhd + 4)).toBe(0);
    const [stco] = find(["moov", "trak", "mdia", "minf", "stbl", "stco"]);
    const offset = view.getUint32(stco + 8);
    expect(bytes.subarray(offset, offset + SAMPLE.length)).toEqual(SAMPLE);
  }

  it("a phone MP4 (moov first) through v2: no ©xyz, no ISO 6709 keys, no device, dates zeroed; size, rate, duration", async () => {
    const u = await registerUser();
    const mp4 = phoneVideo("isom");
    expect(has(mp4, SECRETS.iso6709) && has(mp4, "com.apple.quicktime.location.ISO6709")).toBe(true);
    const m = valid(MediaAttachmentSchema, await upload(u, mp4, "VID_0001.mp4"));
    expect(m).toMatchObject({ type: "video", pleroma: { mime_type: "video/mp4" } });
    expect(m.meta?.original).toEqual({
      width: 640,
      height: 360,
      size: "640x360",
      aspect: 1.777778,
      frame_rate: "30000/1001",
      duration: 2.002,
      bitrate: Math.round((mp4.length * 8) / 2.002),
    });
    const { bytes, type } = await served(m.url);
    expect(type).toBe("video/mp4");
    checkIsobmff(bytes, mp4);
  });

  it("a MOV (moov after mdat, as a camera writes it) through v1", async () => {
    const u = await registerUser();
    const mov = phoneVideo("qt  ", true);
    const m = valid(MediaAttachmentSchema, await upload(u, mov, "IMG_0002.MOV", { v1: true }));
    expect(m).toMatchObject({ type: "video", pleroma: { mime_type: "video/quicktime" } });
    expect(m.meta?.original).toMatchObject({ width: 640, height: 360, frame_rate: "30000/1001" });
    const { bytes } = await served(m.url);
    checkIsobmff(bytes, mov);
  });

  it("an M4A: no iTunes tags, its duration", async () => {
    const u = await registerUser();
    const m4a = phoneM4a();
    expect(has(m4a, "Voice memo")).toBe(true);
    const m = valid(MediaAttachmentSchema, await upload(u, m4a, "memo.m4a"));
    expect(m).toMatchObject({ type: "audio", pleroma: { mime_type: "audio/mp4" } });
    expect(m.meta?.original).toEqual({ duration: 3, bitrate: Math.round((m4a.length * 8) / 3) });
    const { bytes } = await served(m.url);
    checkIsobmff(bytes, m4a);
    expect(has(bytes, "Voice memo")).toBe(false);
  });

  it("a WebM: Tags, title, date and track name voided in place, the seek head still right; size, rate, duration", async () => {
    const u = await registerUser();
    const webm = phoneWebm();
    const m = valid(MediaAttachmentSchema, await upload(u, webm, "clip.webm"));
    expect(m).toMatchObject({ type: "video", pleroma: { mime_type: "video/webm" } });
    expect(m.meta?.original).toMatchObject({ width: 320, height: 240, frame_rate: "30/1", duration: 2 });
    const { bytes } = await served(m.url);
    noSecrets(bytes);
    expect(bytes.length).toBe(webm.length);
    const [, segment] = readEbml(bytes);
    const ids = (list: Ebml[] = []) => list.map((e) => e.id);
    expect(ids(segment!.children)).not.toContain(0x1254c367);
    const info = segment!.children!.find((e) => e.id === 0x1549a966)!;
    expect(ids(info.children)).not.toContain(0x7ba9);
    expect(ids(info.children)).not.toContain(0x4461);
    const track = segment!.children!.find((e) => e.id === 0x1654ae6b)!.children![0]!;
    expect(ids(track.children)).not.toContain(0x536e);
    // The seek head's remaining entries still point at Info and Tracks; the one for Tags is gone.
    const seeks = segment!.children!.find((e) => e.id === 0x114d9b74)!.children!.filter((e) => e.id === 0x4dbb);
    expect(seeks).toHaveLength(2);
    for (const [seek, id] of [
      [seeks[0]!, 0x1549a966],
      [seeks[1]!, 0x1654ae6b],
    ] as const) {
      const pos = seek.children!.find((e) => e.id === 0x53ac)!;
      const at = segment!.from + new DataView(bytes.buffer, bytes.byteOffset + pos.from, 4).getUint32(0);
      expect(new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0)).toBe(id);
    }
  });

  it("an Ogg Opus voice note: the comments gone, the vendor kept, every page's CRC right; its duration", async () => {
    const u = await registerUser();
    const opus = phoneOpus();
    const m = valid(MediaAttachmentSchema, await upload(u, opus, "note.opus"));
    expect(m).toMatchObject({ type: "audio", pleroma: { mime_type: "audio/ogg" } });
    expect(m.meta?.original).toMatchObject({ duration: 1.5 });
    const { bytes } = await served(m.url);
    noSecrets(bytes);
    const { pages, packets, rest } = readOgg(bytes);
    expect(rest).toBe(0);
    expect(pages.every((p) => p.crcOk)).toBe(true);
    expect(pages.map((p) => p.seq)).toEqual([0, 1, 2, 3]);
    const [head, tags, ...sound] = [...packets.values()][0]!;
    expect(head).toEqual(readOgg(opus).packets.get(0x1234)![0]);
    expect(tags).toEqual(cat(latin1("OpusTags"), [11, 0, 0, 0], latin1("libopus 1.4"), [0, 0, 0, 0]));
    expect(sound).toEqual([SAMPLE, SAMPLE, SAMPLE]);
  });

  it("an Ogg Vorbis whose comments span pages: laid out anew, later pages renumbered, setup and sound intact", async () => {
    const u = await registerUser();
    const vorbis = phoneVorbis();
    const before = readOgg(vorbis);
    const m = valid(MediaAttachmentSchema, await upload(u, vorbis, "song.ogg", { v1: true }));
    expect(m.meta?.original).toMatchObject({ duration: 2 });
    const { bytes } = await served(m.url);
    noSecrets(bytes);
    expect(has(bytes, "METADATA_BLOCK_PICTURE")).toBe(false);
    expect(bytes.length).toBeLessThan(2_000);
    const { pages, packets } = readOgg(bytes);
    expect(pages.every((p) => p.crcOk)).toBe(true);
    // Six pages before, five now: the sound pages renumbered (4, 5 became 3, 4), their granules kept.
    expect(before.pages.map((p) => p.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(pages.map((p) => p.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(pages.map((p) => p.granule)).toEqual([0n, 0n, 0n, 44100n, 88200n]);
    expect(pages.at(-1)!.flags & 4).toBe(4);
    const [id, comment, setup, ...sound] = packets.get(0xbeef)!;
    const [id0, , setup0, ...sound0] = before.packets.get(0xbeef)!;
    expect(id).toEqual(id0);
    const vendor = "Xiph.Org libVorbis I 20200704";
    expect(comment).toEqual(cat(latin1("\x03vorbis"), [vendor.length, 0, 0, 0], latin1(vendor), [0, 0, 0, 0, 1]));
    expect(setup).toEqual(setup0);
    expect(sound).toEqual(sound0);
  });

  it("FLAC, MP3 and WAV: their tags zeroed in place under types every reader skips", async () => {
    const u = await registerUser();
    const le32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
    // FLAC: the comment and picture blocks are padding now, the last-block flag where it was.
    const flac = phoneFlac();
    const f = valid(MediaAttachmentSchema, await upload(u, flac, "rec.flac"));
    expect(f).toMatchObject({ type: "audio", pleroma: { mime_type: "audio/flac" } });
    const fb = (await served(f.url)).bytes;
    noSecrets(fb);
    const blocks: number[] = [];
    for (let at = 4; ;) {
      blocks.push(fb[at]!);
      const last = fb[at]! & 0x80;
      at += 4 + ((fb[at + 1]! << 16) | (fb[at + 2]! << 8) | fb[at + 3]!);
      if (last) {
        expect(fb.subarray(at, at + 2)).toEqual(Uint8Array.of(0xff, 0xf8));
        break;
      }
    }
    expect(blocks).toEqual([0, 1, 0x81]);
    // MP3: the ID3v2 tag is a header and padding; the frame where it was; the ID3v1 tag zeroed.
    const mp3 = phoneMp3();
    const m = valid(MediaAttachmentSchema, await upload(u, mp3, "memo.mp3", { v1: true }));
    const mb = (await served(m.url)).bytes;
    noSecrets(mb);
    expect(has(mb, "Voice memo")).toBe(false);
    expect(String.fromCharCode(...mb.subarray(0, 3))).toBe("ID3");
    expect(mb.indexOf(0xff)).toBe(mp3.indexOf(0xff, 10));
    expect(has(mb, "TAG")).toBe(false);
    // WAV: LIST and bext are JUNK chunks of the same size; fmt and data untouched.
    const wav = phoneWav();
    const w = valid(MediaAttachmentSchema, await upload(u, wav, "rec.wav"));
    const wb = (await served(w.url)).bytes;
    noSecrets(wb);
    const chunks: string[] = [];
    for (let at = 12; at + 8 <= wb.length; at += 8 + le32(wb, at + 4) + (le32(wb, at + 4) & 1))
      chunks.push(String.fromCharCode(...wb.subarray(at, at + 4)));
    expect(chunks).toEqual(["fmt ", "JUNK", "JUNK", "data"]);
    expect(wb.subarray(-SAMPLE.length)).toEqual(SAMPLE);
  });

  it("hostile containers are refused (422) or walked within bounds, never a 500", async () => {
    const u = await registerUser();
    const mp4 = phoneVideo("isom");
    // A moov that claims more bytes than the file has.
    const lying = mp4.slice();
    const moovAt = readBoxes(mp4).find(([t]) => t === "moov")![1];
    new DataView(lying.buffer).setUint32(moovAt, 0x7fffffff);
    await upload(u, lying, "lying.mp4", { status: 422 });
    // Twenty thousand empty boxes in moov: past the walk's bound.
    const ftyp = box("ftyp", latin1("isom"), [0, 0, 0, 0], latin1("isom"));
    const many = cat(ftyp, box("moov", ...Array.from({ length: 20_000 }, () => box("free"))));
    await upload(u, many, "many.mp4", { status: 422 });
    // No moov at all: not a video.
    await upload(u, cat(ftyp, box("mdat", SAMPLE)), "empty.mp4", { status: 422 });
    // An stts claiming four billion entries reads only what its box holds.
    const huge = cat(
      ftyp,
      box(
        "moov",
        box(
          "trak",
          box(
            "mdia",
            box("mdhd", new Uint8Array(24).fill(1)),
            box("minf", box("stbl", box("stts", [0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1]))),
          ),
        ),
      ),
    );
    await upload(u, huge, "stts.mp4");
    // EBML: an element past its parent; an element of unknown size that is not a cluster.
    const header = el(0x1a45dfa3, el(0x4282, latin1("webm")));
    await upload(u, cat(header, el(0x18538067, [0x15, 0x49, 0xa9, 0x66, 0x88, 0, 0, 0])), "past.webm", { status: 422 });
    await upload(u, cat(header, el(0x18538067, [0x16, 0x54, 0xae, 0x6b, 0xff, 0, 0])), "unknown.webm", { status: 422 });
    // An EBML header alone (no segment): not a video.
    await upload(u, header, "bare.webm", { status: 422 });
    // Ogg: a page running past the end.
    await upload(u, phoneOpus().subarray(0, 60), "cut.opus", { status: 422 });
  });
});

describe("GIFs keep only what draws and loops them", () => {
  const gif = Uint8Array.from(atob(GIF), (c) => c.charCodeAt(0));

  it("comments and XMP go, the looping block stays, and the picture still decodes", async () => {
    const u = await registerUser();
    const tagged = gifWith(
      gif,
      gifLoop(),
      gifComment(`Shot at ${SECRETS.iso6709} with ${SECRETS.device}`),
      gifApplication("XMP DataXMP", xmpPacket()),
    );
    expect(has(tagged, "GPSLatitude")).toBe(true);
    const m = valid(MediaAttachmentSchema, await upload(u, tagged, "anim.gif"));
    expect(m.meta?.original).toMatchObject({ width: 24, height: 12 });
    const { bytes } = await served(m.url);
    noSecrets(bytes);
    expect(has(bytes, "GPSLatitude")).toBe(false);
    expect(has(bytes, "XMP DataXMP")).toBe(false);
    expect(has(bytes, "NETSCAPE2.0")).toBe(true);
    expect(bytes.at(-1)).toBe(0x3b);
    expect(await env.IMAGES!.info(new Blob([bytes]).stream())).toMatchObject({ width: 24, height: 12 });
  });

  it("a frame outside the screen (a 64 × 48 screen, a 65535 × 65535 frame) is refused", async () => {
    const u = await registerUser();
    const screen = gif.slice();
    new DataView(screen.buffer).setUint16(6, 64, true);
    new DataView(screen.buffer).setUint16(8, 48, true);
    await upload(u, gifWith(screen, gifFrame(0, 0, 65535, 65535)), "bomb.gif", { status: 422 });
    await upload(u, gifWith(screen, gifFrame(40, 0, 30, 10)), "offside.gif", { status: 422 });
    // Within the screen: taken.
    valid(MediaAttachmentSchema, await upload(u, gifWith(screen, gifFrame(40, 38, 24, 10)), "fits.gif"));
  });
});
