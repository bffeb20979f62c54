/** Custom emoji listings: Mastodon's /api/v1/custom_emojis and Pleroma's emoji map, public and cached. */
import { env } from "cloudflare:test";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { db } from "../src/db/client";
import { CustomEmojiSchema, PleromaEmojiMapSchema } from "../src/schemas/emoji";
import { localEmojisQuery } from "../src/services/emoji";
import { countingD1 } from "./d1-counter";
import { call, json, PNG_1PX, registerUser, uniqueName, valid } from "./helpers";
import { B } from "./instances";

const PLEROMA_PATHS = ["/api/v1/pleroma/emoji", "/api/pleroma/emoji", "/api/pleroma/emoji.json"];

async function addEmoji(
  database: D1Database,
  e: { shortcode: string; domain?: string; file: string; url?: string; category?: string; visible?: boolean },
) {
  await database
    .prepare(
      "INSERT INTO custom_emojis (shortcode, domain, file, url, category, visible_in_picker, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(
      e.shortcode,
      e.domain ?? null,
      e.file,
      e.url ?? null,
      e.category ?? null,
      e.visible === false ? 0 : 1,
      Date.now(),
    )
    .run();
}

/** Four local emoji (a pack, none, hidden, an absolute file) and two remote ones, one sharing a local shortcode. */
async function seed() {
  const p = uniqueName("em");
  const codes = { packed: `${p}_b`, plain: `${p}_a`, hidden: `${p}_c`, linked: `${p}_d`, remoteOnly: `${p}_r` };
  await addEmoji(env.DB, { shortcode: codes.packed, file: `emoji/blobs/${codes.packed}.png`, category: "blobs" });
  await addEmoji(env.DB, { shortcode: codes.plain, file: `emoji/${codes.plain}.png` });
  await addEmoji(env.DB, {
    shortcode: codes.hidden,
    file: `emoji/${codes.hidden}.png`,
    category: "blobs",
    visible: false,
  });
  await addEmoji(env.DB, { shortcode: codes.linked, file: `https://cdn.example/${codes.linked}.png` });
  // A remote server's emoji never show in this instance's lists, even under a shortcode we also have.
  const far = `https://far.example/emoji/${codes.packed}.png`;
  await addEmoji(env.DB, { shortcode: codes.packed, domain: "far.example", file: far, url: far, category: "theirs" });
  await addEmoji(env.DB, { shortcode: codes.remoteOnly, domain: "far.example", file: far, url: far });
  return { prefix: p, codes };
}

const ours = <T extends { shortcode: string }>(list: T[], prefix: string) =>
  list.filter((e) => e.shortcode.startsWith(prefix));

describe("GET /api/v1/custom_emojis", () => {
  it("lists this instance's emoji in Mastodon's shape, sorted, without a token, cacheable", async () => {
    const { prefix, codes } = await seed();
    const res = await call("/api/v1/custom_emojis");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    const list = valid(z.array(CustomEmojiSchema), await res.json());
    const shortcodes = list.map((e) => e.shortcode);
    expect(shortcodes).toEqual([...shortcodes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(shortcodes).size).toBe(shortcodes.length);
    const url = (file: string) => `http://localhost/media/${file}`;
    expect(ours(list, prefix)).toEqual([
      {
        shortcode: codes.plain,
        url: url(`emoji/${codes.plain}.png`),
        static_url: url(`emoji/${codes.plain}.png`),
        visible_in_picker: true,
        tags: [],
      },
      {
        shortcode: codes.packed,
        url: url(`emoji/blobs/${codes.packed}.png`),
        static_url: url(`emoji/blobs/${codes.packed}.png`),
        visible_in_picker: true,
        category: "blobs",
        tags: ["pack:blobs"],
      },
      // Hidden emoji are listed (clients keep them out of the picker but render them), as Mastodon 2.7 lists them.
      {
        shortcode: codes.hidden,
        url: url(`emoji/${codes.hidden}.png`),
        static_url: url(`emoji/${codes.hidden}.png`),
        visible_in_picker: false,
        category: "blobs",
        tags: ["pack:blobs"],
      },
      {
        shortcode: codes.linked,
        url: `https://cdn.example/${codes.linked}.png`,
        static_url: `https://cdn.example/${codes.linked}.png`,
        visible_in_picker: true,
        tags: [],
      },
    ]);
    // Mastodon leaves `category` out when the emoji has none.
    expect("category" in ours(list, prefix)[0]).toBe(false);
    expect(shortcodes).not.toContain(codes.remoteOnly);
    expect(list.some((e) => e.url.startsWith("https://far.example/"))).toBe(false);
  });

  it("answers the same to signed-in callers, with a trailing slash, with a bad token, and at the configured domain", async () => {
    const { prefix, codes } = await seed();
    const anonymous = ours(await json("/api/v1/custom_emojis"), prefix);
    const user = await registerUser();
    expect(ours(await json("/api/v1/custom_emojis", { token: user.token }), prefix)).toEqual(anonymous);
    expect(ours(await json("/api/v1/custom_emojis/"), prefix)).toEqual(anonymous);
    // Public: a stale token a client still sends does not turn the list into an error.
    expect(ours(await json("/api/v1/custom_emojis", { token: "not-a-token" }), prefix)).toEqual(anonymous);
    const remote = ours(
      valid(z.array(CustomEmojiSchema), await json("/api/v1/custom_emojis", { vars: { DOMAIN: "emoji.example" } })),
      prefix,
    );
    expect(remote.find((e) => e.shortcode === codes.packed)?.url).toBe(
      `https://emoji.example/media/emoji/blobs/${codes.packed}.png`,
    );
    // An emoji's absolute file stays as it is.
    expect(remote.find((e) => e.shortcode === codes.linked)?.url).toBe(`https://cdn.example/${codes.linked}.png`);
  });

  it("costs one D1 round trip and walks only local emoji, in order, on their index", async () => {
    await seed();
    const counter = countingD1();
    const res = await call("/api/v1/custom_emojis", { vars: { DB: counter.db } as never });
    expect(res.status).toBe(200);
    expect(counter.count()).toBe(1);
    counter.reset();
    expect((await call("/api/pleroma/emoji.json", { vars: { DB: counter.db } as never })).status).toBe(200);
    expect(counter.count()).toBe(1);
    const q = localEmojisQuery(db(env)).toSQL();
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
      .bind(...q.params)
      .all<{ detail: string }>();
    const detail = plan.results.map((r) => r.detail).join(" | ");
    expect(detail).toContain("custom_emojis_local");
    expect(detail).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
  });

  it("is an empty list, not a 404, on an instance with no emoji of its own", async () => {
    // Instance B has no local emoji in any test; a remote one stored there must not count.
    const code = uniqueName("far");
    await addEmoji(env.DB_B, {
      shortcode: code,
      domain: "far.example",
      file: `https://far.example/${code}.png`,
      url: `https://far.example/${code}.png`,
    });
    const list = await json("/api/v1/custom_emojis", { instance: B });
    expect(list).toEqual([]);
    for (const path of PLEROMA_PATHS) expect(await json(path, { instance: B })).toEqual({});
  });
});

describe("Pleroma's emoji map", () => {
  it("maps shortcodes to instance-relative paths and pack tags, on every path Pleroma-FE uses", async () => {
    const { prefix, codes } = await seed();
    const answers = [];
    for (const path of [...PLEROMA_PATHS, ...PLEROMA_PATHS.map((p) => `${p}/`)]) {
      const res = await call(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(res.headers.get("cache-control")).toBe("public, max-age=300");
      answers.push(valid(PleromaEmojiMapSchema, await res.json()));
    }
    const map = answers[0];
    for (const other of answers) expect(other).toEqual(map);
    const mine = Object.fromEntries(Object.entries(map).filter(([k]) => k.startsWith(prefix)));
    // Pleroma answers a path (Pleroma-FE prefixes it with the server) and names the pack as a `pack:` tag;
    // an emoji hidden from pickers is left out, since Pleroma-FE would show every entry in its picker.
    expect(mine).toEqual({
      [codes.plain]: { image_url: `/media/emoji/${codes.plain}.png`, tags: [] },
      [codes.packed]: { image_url: `/media/emoji/blobs/${codes.packed}.png`, tags: ["pack:blobs"] },
      [codes.linked]: { image_url: `https://cdn.example/${codes.linked}.png`, tags: [] },
    });
    expect(Object.keys(map)).not.toContain(codes.remoteOnly);
    const user = await registerUser();
    expect(await json("/api/v1/pleroma/emoji", { token: user.token })).toEqual(map);
    // What Pleroma-FE builds from it (the server's origin + the path) and Mastodon's url both reach the file.
    await env.MEDIA.put(`emoji/blobs/${codes.packed}.png`, PNG_1PX, { httpMetadata: { contentType: "image/png" } });
    const mastodon = (await json("/api/v1/custom_emojis")).find(
      (e: { shortcode: string }) => e.shortcode === codes.packed,
    );
    for (const url of [`http://localhost${mine[codes.packed].image_url}`, mastodon.url]) {
      const file = await call(url);
      expect(file.status, url).toBe(200);
      expect(file.headers.get("content-type")).toBe("image/png");
      expect(new Uint8Array(await file.arrayBuffer())).toEqual(PNG_1PX);
    }
  });

  it("keeps a shortcode that is an object's special key as an entry", async () => {
    await env.DB.prepare(
      "INSERT OR IGNORE INTO custom_emojis (shortcode, file, created_at) VALUES ('__proto__', 'emoji/proto.png', ?)",
    )
      .bind(Date.now())
      .run();
    const text = await (await call("/api/pleroma/emoji.json")).text();
    expect(text).toContain('"__proto__":{"image_url":"/media/emoji/proto.png","tags":[]}');
    const list = await json("/api/v1/custom_emojis");
    expect(list.find((e: { shortcode: string }) => e.shortcode === "__proto__")?.url).toBe(
      "http://localhost/media/emoji/proto.png",
    );
  });
});
