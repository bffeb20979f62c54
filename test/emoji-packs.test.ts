/** Emoji packs (Pleroma 2.5's pack and file endpoints) over D1 and R2, import, archives, remote packs, reactions. */
import { env } from "cloudflare:test";
import { unzipSync, zipSync, strToU8 } from "fflate";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  CustomEmojiSchema,
  EmojiPackListSchema,
  EmojiPackSchema,
  PackFilesSchema,
  PleromaEmojiMapSchema,
} from "../src/schemas/emoji";
import { StatusSchema } from "../src/schemas/status";
import { deflateBomb, rawZip, type RawEntry } from "./fixtures/zip-bombs";
import { call, json, makeAdmin, PNG_1PX, registerUser, uniqueName, valid } from "./helpers";
import { A, B, routeFetch, type Routed } from "./instances";

const SCOPES = "read write follow push admin";

async function admin(instance?: typeof B) {
  const u = await registerUser({ scopes: SCOPES, instance });
  await (instance?.bindings.DB ?? env.DB)
    .prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?")
    .bind(u.id)
    .run();
  return u;
}

const png = (name = "x.png") => new File([PNG_1PX], name, { type: "image/png" });
function form(fields: Record<string, string | File>) {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}
const q = (name: string) => `name=${encodeURIComponent(name)}`;
const r2 = async (key: string) => (await env.MEDIA.get(key)) !== null;

describe("pack administration", () => {
  it("creates, shows, lists, updates and deletes a pack, with its files in R2", async () => {
    const me = await admin();
    const name = uniqueName("pk");
    expect(await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: me.token })).toBe("ok");
    expect(await json(`/api/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: me.token, status: 409 })).toEqual({
      error: `A pack named "${name}" already exists`,
    });
    expect(await json(`/api/v1/pleroma/emoji/pack?name=%20`, { method: "POST", token: me.token, status: 400 })).toEqual(
      { error: "pack name cannot be empty" },
    );
    expect(
      (await json(`/api/v1/pleroma/emoji/pack?name=a%2Fb`, { method: "POST", token: me.token, status: 400 })).error,
    ).toBe("Invalid pack name");

    const fresh = valid(EmojiPackSchema, await json(`/api/v1/pleroma/emoji/pack?${q(name)}`));
    expect(fresh).toEqual({ files: {}, files_count: 0, pack: { "can-download": false } });

    // Files: an upload with a default shortcode, one with a shortcode and a sub-folder, a remote URL.
    const a = `${name}_a`;
    expect(
      valid(
        PackFilesSchema,
        await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
          token: me.token,
          body: form({ file: png(`${a}.png`) }),
        }),
      ),
    ).toEqual({ [a]: `${a}.png` });
    const b = `${name}_b`;
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        token: me.token,
        body: form({ file: png(), shortcode: b, filename: "dir/b.png" }),
      }),
    ).toEqual({ [a]: `${a}.png`, [b]: "dir/b.png" });
    expect(await r2(`emoji/${name}/${a}.png`)).toBe(true);
    expect(await r2(`emoji/${name}/dir/b.png`)).toBe(true);
    // Shortcodes are unique across all local emoji; empty and odd values are refused.
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        token: me.token,
        body: form({ file: png(), shortcode: a, filename: "other.png" }),
        status: 409,
      }),
    ).toEqual({
      error: `An emoji with the "${a}" shortcode already exists`,
    });
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        token: me.token,
        body: form({ file: png(), shortcode: "zz", filename: "" }),
        status: 422,
      }),
    ).toEqual({
      error: "pack name, shortcode or filename cannot be empty",
    });
    expect(
      (
        await call(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
          token: me.token,
          body: form({ file: png(), shortcode: `${name}_c`, filename: "../x.png" }),
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await call(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
          token: me.token,
          body: form({ file: new File(["hello"], "t.png"), shortcode: `${name}_t` }),
        })
      ).status,
    ).toBe(415);
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?name=nope${name}`, {
        token: me.token,
        body: form({ file: png() }),
        status: 404,
      }),
    ).toEqual({ error: `pack "nope${name}" is not found` });

    // Show pages files in shortcode order; files_count is the total.
    const page2 = valid(EmojiPackSchema, await json(`/api/v1/pleroma/emoji/pack?${q(name)}&page_size=1&page=2`));
    expect(page2.files).toEqual({ [b]: "dir/b.png" });
    expect(page2.files_count).toBe(2);
    expect((await json(`/api/v1/pleroma/emoji/pack?${q(name)}&page_size=0`)).files).toEqual({});
    expect(await json(`/api/v1/pleroma/emoji/pack?name=missing${name}`, { status: 404 })).toEqual({
      error: `Pack missing${name} does not exist`,
    });

    // The listings show the pack's emoji at once (the edge-cached answer is replaced), with encoded URLs.
    const listed = valid(z.array(CustomEmojiSchema), await json("/api/v1/custom_emojis")).find(
      (e) => e.shortcode === b,
    );
    expect(listed).toMatchObject({ category: name, url: `http://localhost/media/emoji/${name}/dir/b.png` });
    const map = valid(PleromaEmojiMapSchema, await json("/api/pleroma/emoji.json"));
    expect(map[a]).toEqual({ image_url: `/media/emoji/${name}/${a}.png`, tags: [`pack:${name}`] });

    // Rename with a new file name: the file moves in R2; a taken shortcode needs force.
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        method: "PATCH",
        token: me.token,
        body: { shortcode: b, new_shortcode: a, new_filename: "c.png" },
        status: 409,
      }),
    ).toEqual({
      error: `New shortcode "${a}" is already used. If you want to override emoji use 'force' option`,
    });
    const c = `${name}_c`;
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        method: "PATCH",
        token: me.token,
        body: { shortcode: b, new_shortcode: c, new_filename: "c.png" },
      }),
    ).toEqual({ [a]: `${a}.png`, [c]: "c.png" });
    expect(await r2(`emoji/${name}/dir/b.png`)).toBe(false);
    expect(await r2(`emoji/${name}/c.png`)).toBe(true);
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        method: "PATCH",
        token: me.token,
        body: { shortcode: c, new_shortcode: a, new_filename: "d.png", force: true },
      }),
    ).toEqual({ [a]: "d.png" });
    expect(await r2(`emoji/${name}/${a}.png`)).toBe(false);
    expect(
      (
        await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
          method: "PATCH",
          token: me.token,
          body: { shortcode: a, new_filename: "e.png" },
          status: 400,
        })
      ).error,
    ).toBe("Missing field: new_shortcode.");
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        method: "PATCH",
        token: me.token,
        body: { shortcode: "nothere", new_shortcode: "x1", new_filename: "x.png" },
        status: 400,
      }),
    ).toEqual({ error: 'Emoji "nothere" does not exist' });

    // Metadata replaces the old one; a bad sha or an unreachable fallback is refused.
    const meta = { license: "CC0", homepage: "https://example.com", description: "test", "share-files": true };
    expect(
      await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, {
        method: "PATCH",
        token: me.token,
        body: { metadata: meta },
      }),
    ).toEqual(meta);
    expect(
      (
        await call(`/api/v1/pleroma/emoji/pack?${q(name)}`, {
          method: "PATCH",
          token: me.token,
          body: { metadata: { "fallback-src-sha256": "nope" } },
        })
      ).status,
    ).toBe(400);
    // share-files is a boolean (or its "true"/"false" spelling), not any string.
    for (const bad of ["definitely-not-a-boolean", "", 1, {}]) {
      const res = await call(`/api/v1/pleroma/emoji/pack?${q(name)}`, {
        method: "PATCH",
        token: me.token,
        body: { metadata: { license: "CC0", "share-files": bad } },
      });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/share-files/);
    }
    expect(
      await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, {
        method: "PATCH",
        token: me.token,
        body: { metadata: { ...meta, "share-files": "true" } },
      }),
    ).toEqual(meta);
    expect(
      (
        await call(`/api/v1/pleroma/emoji/pack?${q(name)}`, {
          method: "PATCH",
          token: me.token,
          body: { metadata: { "fallback-src": "https://unreachable.invalid/x.zip" } },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call(`/api/v1/pleroma/emoji/pack?name=zz${name}`, {
          method: "PATCH",
          token: me.token,
          body: { metadata: meta },
        })
      ).status,
    ).toBe(404);

    // Shared: can-download with the archive's sha256; the archive holds pack.json and the files.
    const shown = valid(EmojiPackSchema, await json(`/api/v1/pleroma/emoji/pack?${q(name)}`));
    expect(shown.pack).toMatchObject({ ...meta, "can-download": true });
    const archive = await call(`/api/v1/pleroma/emoji/packs/archive?${q(name)}`);
    expect(archive.status).toBe(200);
    expect(archive.headers.get("content-type")).toBe("application/zip");
    const bytes = new Uint8Array(await archive.arrayBuffer());
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
      .map((x) => x.toString(16).padStart(2, "0"))
      .join("")
      .toUpperCase();
    expect(shown.pack["download-sha256"]).toBe(digest);
    const entries = unzipSync(bytes);
    expect(Object.keys(entries).sort()).toEqual(["d.png", "pack.json"]);
    expect(JSON.parse(new TextDecoder().decode(entries["pack.json"])).files).toEqual({ [a]: "d.png" });

    // List: paged, with the count.
    const list = valid(EmojiPackListSchema, await json("/api/v1/pleroma/emoji/packs?page_size=1000"));
    expect(list.packs[name].files).toEqual({ [a]: "d.png" });
    expect(list.count).toBeGreaterThanOrEqual(1);
    expect(Object.keys((await json("/api/v1/pleroma/emoji/packs?page_size=1")).packs)).toHaveLength(1);

    // Delete a file, then the pack: rows and R2 files go.
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}&shortcode=${a}`, { method: "DELETE", token: me.token }),
    ).toEqual({});
    expect(await r2(`emoji/${name}/d.png`)).toBe(false);
    expect(
      await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}&shortcode=${a}`, {
        method: "DELETE",
        token: me.token,
        status: 400,
      }),
    ).toEqual({ error: `Emoji "${a}" does not exist` });
    await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
      token: me.token,
      body: form({ file: png(`${name}_z.png`) }),
    });
    expect(await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "DELETE", token: me.token })).toBe("ok");
    expect(await r2(`emoji/${name}/${name}_z.png`)).toBe(false);
    expect(
      (
        await env.DB.prepare("SELECT count(*) AS n FROM custom_emojis WHERE category = ?")
          .bind(name)
          .first<{ n: number }>()
      )?.n,
    ).toBe(0);
    expect(
      await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "DELETE", token: me.token, status: 404 }),
    ).toEqual({ error: `Pack ${name} does not exist` });
    expect(await json(`/api/v1/pleroma/emoji/packs/archive?${q(name)}`, { status: 404 })).toEqual({
      error: `Pack ${name} does not exist`,
    });
  });

  it("refuses non-staff (Pleroma's 403) and tokens without admin scopes, and serves no archive of an unshared pack", async () => {
    const user = await registerUser({ scopes: SCOPES });
    const name = uniqueName("pk");
    expect(
      await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: user.token, status: 403 }),
    ).toEqual({ error: "User isn't privileged." });
    for (const [method, path] of [
      ["GET", "/api/v1/pleroma/emoji/packs/import"],
      ["GET", "/api/v1/pleroma/emoji/packs/remote?url=https://b.example"],
      ["DELETE", `/api/v1/pleroma/emoji/pack?${q(name)}`],
      ["DELETE", `/api/v1/pleroma/emoji/packs/files?${q(name)}&shortcode=x`],
    ])
      expect((await call(path, { method, token: user.token })).status, path).toBe(403);
    const narrow = await registerUser({ scopes: "read write" });
    await makeAdmin(narrow.id);
    expect((await call(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: narrow.token })).status).toBe(
      403,
    );
    const me = await admin();
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: me.token });
    expect(await json(`/api/v1/pleroma/emoji/packs/archive?${q(name)}`, { status: 403 })).toEqual({
      error: `Pack ${name} cannot be downloaded from this instance, either pack sharing was disabled for this pack or some files are missing`,
    });
  });

  it("adds every image of a zip upload, skipping shortcodes already used", async () => {
    const me = await admin();
    const name = uniqueName("pz");
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: me.token });
    const zip = zipSync({ [`${name}_1.png`]: PNG_1PX, [`sub/${name}_2.png`]: PNG_1PX, "readme.txt": strToU8("hi") });
    const files = await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
      token: me.token,
      body: form({ file: new File([zip], "e.zip", { type: "application/zip" }) }),
    });
    expect(files).toEqual({ [`${name}_1`]: `${name}_1.png`, [`${name}_2`]: `sub/${name}_2.png` });
    expect(await r2(`emoji/${name}/sub/${name}_2.png`)).toBe(true);
  });

  it("refuses zip bombs before inflating them: too many entries, a file or the whole too large uncompressed (413), adding nothing", async () => {
    const me = await admin();
    const name = uniqueName("pb");
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: me.token });
    const limits = (await json("/api/v1/instance")).pleroma.metadata.archive_limits;
    expect(limits).toEqual({ max_entries: 1000, max_uncompressed_bytes: 48_000_000, max_file_bytes: 16_000_000 });
    const png = (n: number) => {
      // A PNG signature followed by zeros: an image to the sniffer, and a few kilobytes once deflated.
      const b = new Uint8Array(n);
      b.set(PNG_1PX.subarray(0, 32));
      return b;
    };
    const many: Record<string, Uint8Array> = {};
    for (let i = 0; i <= limits.max_entries; i++) many[`${name}_${i}.png`] = PNG_1PX;
    const cases: [string, Record<string, Uint8Array>, RegExp][] = [
      ["entries", many, /more than 1000 entries/],
      ["one file", { [`${name}_big.png`]: png(limits.max_file_bytes + 1) }, /larger than 16000000 bytes uncompressed/],
      [
        "the whole",
        Object.fromEntries([0, 1, 2, 3].map((i) => [`${name}_w${i}.png`, png(13_000_000)])),
        /archive is larger than 48000000 bytes uncompressed/,
      ],
    ];
    for (const [what, entries, error] of cases) {
      const zip = zipSync(entries, { level: 9 });
      expect(zip.byteLength, what).toBeLessThan(400_000);
      const res = await call(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        token: me.token,
        body: form({ file: new File([zip], "e.zip", { type: "application/zip" }) }),
      });
      expect(res.status, what).toBe(413);
      expect((await res.json<{ error: string }>()).error, what).toMatch(error);
    }
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM custom_emojis WHERE category = ?").bind(name).first(),
    ).toEqual({ n: 0 });
    expect((await env.MEDIA.list({ prefix: `emoji/${name}/` })).objects).toEqual([]);
  });

  it("imports packs from R2 (pack.json, emoji.txt, bare images), idempotently", async () => {
    const me = await admin();
    const [p1, p2, p3] = [uniqueName("im"), uniqueName("im"), uniqueName("im")];
    const put = (k: string, v: Uint8Array | string) => env.MEDIA.put(k, v);
    await put(
      `emoji/${p1}/pack.json`,
      JSON.stringify({
        files: { [`${p1}_x`]: "x.png", [`${p1}_gone`]: "gone.png" },
        pack: { license: "MIT", "share-files": true },
      }),
    );
    await put(`emoji/${p1}/x.png`, PNG_1PX);
    await put(`emoji/${p2}/emoji.txt`, `${p2}_y, /emoji/${p2}/y.png, Fun\n${p2}_w, y.png\nbroken\n`);
    await put(`emoji/${p2}/y.png`, PNG_1PX);
    await put(`emoji/${p3}/${p3}_z.gif`, PNG_1PX);
    const names = await json("/api/v1/pleroma/emoji/packs/import", { token: me.token });
    expect(names).toEqual(expect.arrayContaining([p1, p2, p3]));
    const one = valid(EmojiPackSchema, await json(`/api/v1/pleroma/emoji/pack?${q(p1)}`));
    expect(one.files).toEqual({ [`${p1}_x`]: "x.png" });
    expect(one.pack).toMatchObject({ license: "MIT", "share-files": true, "can-download": true });
    expect((await json(`/api/v1/pleroma/emoji/pack?${q(p2)}`)).files).toEqual({
      [`${p2}_y`]: "y.png",
      [`${p2}_w`]: "y.png",
    });
    expect((await json(`/api/v1/pleroma/emoji/pack?${q(p3)}`)).files).toEqual({ [`${p3}_z`]: `${p3}_z.gif` });
    // Again: the same state.
    await json("/api/v1/pleroma/emoji/packs/import", { token: me.token });
    expect((await json(`/api/v1/pleroma/emoji/pack?${q(p1)}`)).files_count).toBe(1);
    for (const p of [p1, p2, p3])
      await json(`/api/v1/pleroma/emoji/pack?${q(p)}`, { method: "DELETE", token: me.token });
  });
});

describe("remote packs between two instances", () => {
  let routed: Routed | null = null;
  afterEach(() => routed?.restore());

  it("lists B's packs from A and downloads a shared one, checking its sha256; a mismatch is refused", async () => {
    const onB = await admin(B);
    const onA = await admin();
    const name = uniqueName("rp");
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: onB.token, instance: B });
    await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
      token: onB.token,
      instance: B,
      body: form({ file: png(`${name}_r.png`) }),
    });
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, {
      method: "PATCH",
      token: onB.token,
      instance: B,
      body: { metadata: { license: "CC0", "share-files": true } },
    });
    routed = routeFetch();
    const remote = await json(`/api/v1/pleroma/emoji/packs/remote?url=https://b.example&page_size=1000`, {
      token: onA.token,
      instance: A,
    });
    valid(EmojiPackListSchema, remote);
    expect(remote.packs[name].files).toEqual({ [`${name}_r`]: `${name}_r.png` });
    // B still has the shortcode: saved `as` another name, its emoji are skipped on A only if A has them.
    const as = `${name}copy`;
    expect(
      await json("/api/v1/pleroma/emoji/packs/download", {
        token: onA.token,
        instance: A,
        body: { url: "https://b.example", name, as },
      }),
    ).toBe("ok");
    const copied = valid(EmojiPackSchema, await json(`/api/v1/pleroma/emoji/pack?${q(as)}`, { instance: A }));
    expect(copied.files).toEqual({ [`${name}_r`]: `${name}_r.png` });
    expect(copied.pack).toMatchObject({ license: "CC0" });
    expect(await r2(`emoji/${as}/${name}_r.png`)).toBe(true);
    expect(routed.requests.some((r) => r.url.startsWith("https://b.example/api/v1/pleroma/emoji/packs/archive"))).toBe(
      true,
    );
    // Again under the same name: 409.
    expect(
      (
        await call("/api/v1/pleroma/emoji/packs/download", {
          token: onA.token,
          instance: A,
          body: { url: "https://b.example", name, as },
        })
      ).status,
    ).toBe(409);

    // A fallback whose sha256 does not match is refused with Pleroma's error.
    const bad = uniqueName("rb");
    await json(`/api/v1/pleroma/emoji/pack?${q(bad)}`, { method: "POST", token: onB.token, instance: B });
    await B.bindings.DB.prepare("UPDATE emoji_packs SET fallback_src = ?, fallback_src_sha256 = ? WHERE name = ?")
      .bind(`https://b.example/api/v1/pleroma/emoji/packs/archive?name=${name}`, "00".repeat(32), bad)
      .run();
    expect(
      await json("/api/v1/pleroma/emoji/packs/download", {
        token: onA.token,
        instance: A,
        body: { url: "https://b.example", name: bad },
        status: 500,
      }),
    ).toEqual({
      error: "SHA256 for the pack doesn't match the one sent by the server",
    });
    expect(await json(`/api/v1/pleroma/emoji/pack?${q(bad)}`, { status: 404 })).toBeTruthy();
    // Not shared, no fallback.
    const plain = uniqueName("rn");
    await json(`/api/v1/pleroma/emoji/pack?${q(plain)}`, { method: "POST", token: onB.token, instance: B });
    expect(
      await json("/api/v1/pleroma/emoji/packs/download", {
        token: onA.token,
        instance: A,
        body: { url: "https://b.example", name: plain },
        status: 500,
      }),
    ).toEqual({
      error: "The pack was not set as shared and there is no fallback src to download from",
    });
    // A host that is not a sharing instance (the refusing fetch).
    expect(
      await json(`/api/v1/pleroma/emoji/packs/remote?url=https://c.example`, {
        token: onA.token,
        instance: A,
        status: 500,
      }),
    ).toEqual({ error: "The requested instance does not support sharing emoji packs" });
    await json(`/api/v1/pleroma/emoji/pack?${q(as)}`, { method: "DELETE", token: onA.token, instance: A });
    expect(A.domain).toBe("a.example");
  });

  it("refuses, quickly, an entry that inflates to far more than it declares (413), or whose data cannot come from its size (422)", async () => {
    const me = await admin();
    const name = uniqueName("pl");
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: me.token });
    // 4 MB of deflate making ~650 MB of zeros: decoding it to its end takes seconds (the one-shot inflate did).
    const bomb = deflateBomb(4_000_000);
    expect(bomb.inflated).toBeGreaterThan(600_000_000);
    const cases: [string, RawEntry[], number, RegExp][] = [
      [
        "a lie about its size",
        [{ name: `${name}_a.png`, data: bomb.data, size: bomb.data.length + 100_000 }],
        413,
        /inflates to more than its declared \d+ bytes/,
      ],
      [
        "nine names for one bomb, within the total",
        Array.from({ length: 9 }, (_, i) => ({
          name: `${name}_m${i}.png`,
          data: bomb.data,
          size: 5_000_000,
          sameAs: i ? `${name}_m0.png` : undefined,
        })),
        413,
        /inflates to more than its declared 5000000 bytes/,
      ],
      ["a tiny declared size", [{ name: `${name}_t.png`, data: bomb.data, size: 1_000 }], 422, /could not be read/],
    ];
    for (const [what, entries, status, error] of cases) {
      const started = Date.now();
      const res = await call(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
        token: me.token,
        body: form({ file: new File([rawZip(entries)], "e.zip", { type: "application/zip" }) }),
      });
      expect(Date.now() - started, what).toBeLessThan(3_000); // the whole stream: 8.7 s on an idle machine
      expect(res.status, what).toBe(status);
      expect((await res.json<{ error: string }>()).error, what).toMatch(error);
    }
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM custom_emojis WHERE category = ?").bind(name).first(),
    ).toEqual({ n: 0 });
    expect((await env.MEDIA.list({ prefix: `emoji/${name}/` })).objects).toEqual([]);
  });

  it("a shared pack whose archive inflates past the limits is refused (413) before anything is stored", async () => {
    const onB = await admin(B);
    const onA = await admin();
    const name = uniqueName("rz");
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: onB.token, instance: B });
    await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
      token: onB.token,
      instance: B,
      body: form({ file: png(`${name}_z.png`) }),
    });
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, {
      method: "PATCH",
      token: onB.token,
      instance: B,
      body: { metadata: { "share-files": true } },
    });
    // B's file replaced by 17 MB (an image by its first bytes, zeros after): B's archive of it is a few kilobytes.
    const big = new Uint8Array(17_000_000);
    big.set(PNG_1PX.subarray(0, 32));
    await B.bindings.MEDIA.put(`emoji/${name}/${name}_z.png`, big);
    routed = routeFetch();
    // Saved under another name (the instances share one R2 bucket in the harness): nothing of it appears.
    const as = `${name}copy`;
    const res = await call("/api/v1/pleroma/emoji/packs/download", {
      token: onA.token,
      instance: A,
      body: { url: "https://b.example", name, as },
    });
    expect(res.status).toBe(413);
    expect((await res.json<{ error: string }>()).error).toMatch(/larger than 16000000 bytes uncompressed/);
    expect(await json(`/api/v1/pleroma/emoji/pack?${q(as)}`, { instance: A, status: 404 })).toBeTruthy();
    expect((await A.bindings.MEDIA.list({ prefix: `emoji/${as}/` })).objects).toEqual([]);
  });
});

describe("custom emoji in reactions", () => {
  it("reacts with :shortcode: of a pack's emoji: the reaction carries its url; add and remove round-trip", async () => {
    const me = await admin();
    const name = uniqueName("rx");
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: me.token });
    const code = `${name}_e`;
    await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
      token: me.token,
      body: form({ file: png(`${code}.png`) }),
    });
    const author = await registerUser();
    const status = await json("/api/v1/statuses", { token: author.token, body: { status: `hello :${code}:` } });
    expect(status.emojis).toEqual([
      {
        shortcode: code,
        url: `http://localhost/media/emoji/${name}/${code}.png`,
        static_url: `http://localhost/media/emoji/${name}/${code}.png`,
        visible_in_picker: true,
      },
    ]);
    const reacted = valid(
      StatusSchema,
      await json(`/api/v1/pleroma/statuses/${status.id}/reactions/:${code}:`, { method: "PUT", token: me.token }),
    );
    expect(reacted.pleroma.emoji_reactions).toEqual([
      { name: code, count: 1, me: true, url: `http://localhost/media/emoji/${name}/${code}.png`, account_ids: [me.id] },
    ]);
    const plain = await json(`/api/v1/pleroma/statuses/${status.id}/reactions/${code}`, {
      method: "PUT",
      token: author.token,
    });
    expect(plain.pleroma.emoji_reactions[0].count).toBe(2);
    expect(
      (
        await call(`/api/v1/pleroma/statuses/${status.id}/reactions/:nothing_${name}:`, {
          method: "PUT",
          token: me.token,
        })
      ).status,
    ).toBe(400);
    const removed = await json(`/api/v1/pleroma/statuses/${status.id}/reactions/:${code}:`, {
      method: "DELETE",
      token: me.token,
    });
    expect(removed.pleroma.emoji_reactions).toEqual([
      {
        name: code,
        count: 1,
        me: false,
        url: `http://localhost/media/emoji/${name}/${code}.png`,
        account_ids: [author.id],
      },
    ]);
  });

  it("renders :shortcode: of the spoiler and the poll options (with a dash) in the status's emojis", async () => {
    const me = await admin();
    const name = uniqueName("rs");
    await json(`/api/v1/pleroma/emoji/pack?${q(name)}`, { method: "POST", token: me.token });
    const [s1, s2] = [`${name}-one`, `${name}_two`];
    await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
      token: me.token,
      body: form({ file: png(`${s1}.png`) }),
    });
    await json(`/api/v1/pleroma/emoji/packs/files?${q(name)}`, {
      token: me.token,
      body: form({ file: png(`${s2}.png`) }),
    });
    const status = valid(
      StatusSchema,
      await json("/api/v1/statuses", {
        token: me.token,
        body: { status: "vote", spoiler_text: `cw :${s1}:`, poll: { options: [`:${s2}:`, "no"], expires_in: 3600 } },
      }),
    );
    expect(status.emojis.map((e) => e.shortcode).sort()).toEqual([s1, s2].sort());
    expect(status.emojis.find((e) => e.shortcode === s1)?.url).toBe(`http://localhost/media/emoji/${name}/${s1}.png`);
  });
});
