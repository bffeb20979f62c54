/**
 * Issue 42: bytes without the Worker. With MEDIA_DOMAIN every URL of a public file points at the public bucket's
 * own domain, which serves a key at its path; without it, at the Worker's `/media/` as before. Private files
 * (account archives, frontend builds, instance documents, emoji pack archives) live in the PRIVATE bucket, are
 * never written to MEDIA, and an instance from before the split has them moved by the cron.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";
import { processBackups } from "../src/services/backups";
import { PRIVATE_PREFIXES, READY_KEY } from "../src/services/private-files";
import {
  call,
  json,
  makeAdmin,
  PNG_1PX,
  post,
  registerUser,
  uniqueName,
  upload,
  valid,
  type TestUser,
} from "./helpers";

const MEDIA = "https://media.example";
const vars = { MEDIA_DOMAIN: "media.example" };
const AP = "application/activity+json";
const HTML = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

/** The R2 key a media domain URL names (the custom domain serves a key at its path). */
const keyOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

const png = (name: string) => new File([PNG_1PX], name, { type: "image/png" });
function form(fields: Record<string, string | File>) {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

const meta = (text: string, key: string) =>
  new RegExp(`<meta (?:property|name)="${key.replace(/[:.]/g, "\\$&")}" content="([^"]*)">`).exec(text)?.[1];

/** Keys under the private prefixes in the public bucket: there must be none. */
async function privateInPublic(): Promise<string[]> {
  const found: string[] = [];
  for (const prefix of PRIVATE_PREFIXES) found.push(...(await env.MEDIA.list({ prefix })).objects.map((o) => o.key));
  return found;
}

/** A cron run with bindings of its own (a fresh isolate's view: nothing remembered about the bucket). */
async function cronRun(bindings: typeof env) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(), cron: "* * * * *" }), bindings, ctx);
  await waitOnExecutionContext(ctx);
}

async function admin(): Promise<TestUser> {
  const u = await registerUser({ scopes: "read write follow push admin" });
  await makeAdmin(u.id);
  return u;
}

describe("media URLs", () => {
  it("point at MEDIA_DOMAIN when set, and at the Worker's /media/ without it, in every entity and document", async () => {
    // The built-in pictures are put into the public bucket by the cron.
    await cronRun({ ...env });
    const me = await admin();
    const bare = await registerUser();
    // Avatar, header, background; an attachment with its thumbnail; a pack emoji used in a post.
    const pictures = form({ avatar: png("a.png"), header: png("h.png") });
    await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: me.token, body: pictures });
    await json("/api/v1/pleroma/accounts/update_background", {
      method: "PATCH",
      token: me.token,
      body: { img: `data:image/png;base64,${btoa(String.fromCharCode(...PNG_1PX))}` },
    });
    const pack = uniqueName("pk");
    const code = `${pack}_e`;
    await json(`/api/v1/pleroma/emoji/pack?name=${pack}`, { method: "POST", token: me.token });
    await json(`/api/v1/pleroma/emoji/packs/files?name=${pack}`, {
      token: me.token,
      body: form({ file: png(`${code} x.png`), shortcode: code }),
    });
    const media = await upload(me);
    const status = valid(StatusSchema, await post(me, { status: `hello :${code}:`, media_ids: [media.id] }));

    const read = async (v?: typeof vars) => {
      const account = valid(AccountSchema, await json(`/api/v1/accounts/${me.id}`, { vars: v }));
      const plain = valid(AccountSchema, await json(`/api/v1/accounts/${bare.id}`, { vars: v }));
      const s = valid(StatusSchema, await json(`/api/v1/statuses/${status.id}`, { vars: v, token: me.token }));
      const emojis = (await json("/api/v1/custom_emojis", { vars: v })) as { shortcode: string; url: string }[];
      const v1 = await json("/api/v1/instance", { vars: v });
      const v2 = await json("/api/v2/instance", { vars: v });
      const adminUser = await json(`/api/v1/pleroma/admin/users/${me.username}`, { vars: v, token: me.token });
      const actor = await (await call(`/users/${me.username}`, { vars: v, headers: { Accept: AP } })).json<any>();
      const note = await (await call(new URL(status.uri).pathname, { vars: v, headers: { Accept: AP } })).json<any>();
      const profile = await (await call(`/users/${me.username}`, { vars: v, headers: HTML })).text();
      const notice = await (await call(`/notice/${status.id}`, { vars: v, headers: HTML })).text();
      const home = await (await call("/", { vars: v, headers: HTML })).text();
      const map = (await json("/api/pleroma/emoji.json", { vars: v })) as Record<string, { image_url: string }>;
      const mascot = await json("/api/v1/pleroma/mascot", {
        method: "PUT",
        vars: v,
        token: me.token,
        body: form({ file: png("m.png") }),
      });
      return {
        urls: {
          avatar: account.avatar,
          avatar_static: account.avatar_static,
          header: account.header,
          background: account.pleroma!.background_image,
          default_avatar: plain.avatar,
          default_header: plain.header,
          attachment: s.media_attachments[0]!.url,
          preview: s.media_attachments[0]!.preview_url!,
          status_emoji: s.emojis.find((e) => e.shortcode === code)!.url,
          listed_emoji: emojis.find((e) => e.shortcode === code)!.url,
          thumbnail: v1.thumbnail,
          background_image: v1.background_image,
          v2_thumbnail: v2.thumbnail.url,
          admin_avatar: adminUser.avatar,
          actor_icon: actor.icon.url,
          actor_image: actor.image.url,
          note_attachment: [note.attachment].flat()[0].url,
          note_emoji: [note.tag].flat().find((t: { type: string }) => t.type === "Emoji").icon.url,
          og_profile: meta(profile, "og:image")!,
          og_notice: meta(notice, "og:image")!,
          og_instance: meta(home, "og:image")!,
          mascot: mascot.url,
        },
        pleromaMap: map[code]!.image_url,
      };
    };

    const without = await read();
    const withDomain = await read(vars);
    for (const [field, url] of Object.entries(without.urls)) {
      expect(`${field} ${url}`).toMatch(/ http/);
      const path = new URL(url).pathname;
      expect(url.startsWith("http://localhost/media/") || url.startsWith("http://localhost/images/"), field).toBe(true);
      // The same file, now on the media domain: the bucket's key is the URL's path.
      const onDomain = withDomain.urls[field as keyof typeof withDomain.urls];
      if (field === "mascot") {
        expect(onDomain.startsWith(`${MEDIA}/accounts/`), field).toBe(true);
      } else {
        expect(onDomain, field).toBe(`${MEDIA}${path.replace(/^\/media\//, "/")}`);
      }
      expect(await env.MEDIA.head(keyOf(onDomain)), `${field} ${onDomain}`).not.toBeNull();
      // And the Worker still serves what it handed out before (the first mascot was replaced by the second).
      if (field !== "mascot") expect((await call(path)).status, field).toBe(200);
    }
    // The emoji file name's space is one encoded segment, decoded back to the key.
    expect(withDomain.urls.status_emoji).toBe(`${MEDIA}/emoji/${pack}/${encodeURIComponent(`${code} x.png`)}`);
    // Pleroma-FE puts its own server in front of the emoji map's paths: they stay the Worker's.
    expect(withDomain.pleromaMap).toBe(without.pleromaMap);
    expect(withDomain.pleromaMap).toMatch(/^\/media\/emoji\//);
  });

  it("leaves remote files' URLs as they are", async () => {
    const me = await registerUser();
    const remote = `https://far.example/files/${uniqueName("f")}.png`;
    await env.DB.prepare("UPDATE accounts SET avatar = ?, header = ? WHERE id = ?").bind(remote, remote, me.id).run();
    const account = valid(AccountSchema, await json(`/api/v1/accounts/${me.id}`, { vars }));
    expect(account.avatar).toBe(remote);
    expect(account.header).toBe(remote);
  });
});

describe("private files", () => {
  it("an account archive lands in the private bucket, served only through the Worker's authorized route", async () => {
    const me = await registerUser();
    const other = await registerUser();
    await post(me, { status: "only for my followers", visibility: "private" });
    const [asked] = (await json("/api/v1/pleroma/backups", { method: "POST", token: me.token, vars })) as {
      url: string;
    }[];
    for (let i = 0; i < 10; i++) await processBackups(env, Date.now());
    const key = (await env.DB.prepare("SELECT file_key FROM backups WHERE account_id = ?")
      .bind(me.id)
      .first<{ file_key: string }>())!.file_key;
    expect(key.startsWith("backups/")).toBe(true);
    expect(await env.PRIVATE.head(key)).not.toBeNull();
    expect(await env.MEDIA.head(key)).toBeNull();
    // The link is the Worker's, MEDIA_DOMAIN or not (the media domain serves only the public bucket).
    expect(asked!.url.startsWith(`http://localhost/media/${key}?expires=`)).toBe(true);
    const [listed] = (await json("/api/v1/pleroma/backups", { token: me.token, vars })) as { url: string }[];
    const link = new URL(listed!.url);
    expect(link.origin).toBe("http://localhost");
    const res = await call(link.pathname + link.search, { vars });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    await res.arrayBuffer();
    expect((await call(link.pathname, { vars })).status).toBe(404);
    expect((await call(link.pathname, { vars, token: other.token })).status).toBe(404);
    expect((await call(link.pathname, { vars, token: me.token })).status).toBe(200);
  });

  it("instance documents and emoji pack archives go to the private bucket; nothing private is in the public one", async () => {
    const me = await admin();
    const doc = form({ file: new File(["<p>Our rules</p>"], "panel.html", { type: "text/html" }) });
    await json("/api/v1/pleroma/admin/instance_document/instance-panel", {
      method: "PATCH",
      token: me.token,
      body: doc,
    });
    expect(await env.PRIVATE.head("instance-documents/instance-panel.html")).not.toBeNull();
    expect(await (await call("/instance/panel.html")).text()).toContain("Our rules");
    const pack = uniqueName("pk");
    await json(`/api/v1/pleroma/emoji/pack?name=${pack}`, { method: "POST", token: me.token });
    await json(`/api/v1/pleroma/emoji/packs/files?name=${pack}`, {
      token: me.token,
      body: form({ file: png("x.png") }),
    });
    await json(`/api/v1/pleroma/emoji/pack?name=${pack}`, {
      method: "PATCH",
      token: me.token,
      body: { metadata: { "share-files": true } },
    });
    const archive = await call(`/api/v1/pleroma/emoji/packs/archive?name=${pack}`);
    expect(archive.status).toBe(200);
    await archive.arrayBuffer();
    expect(await env.PRIVATE.head(`emoji-archives/${pack}.zip`)).not.toBeNull();
    // Deleting the pack deletes its archive too.
    await json(`/api/v1/pleroma/emoji/pack?name=${pack}`, { method: "DELETE", token: me.token });
    expect(await env.PRIVATE.head(`emoji-archives/${pack}.zip`)).toBeNull();
    // Everything this file's tests wrote: not one private key in the public bucket.
    expect(await privateInPublic()).toEqual([]);
  });
});

describe("an instance from before the split", () => {
  it("has its private files moved out of the public bucket by the cron, read from the old place until then", async () => {
    const me = await registerUser();
    const other = await registerUser();
    await json("/api/v1/pleroma/backups", { method: "POST", token: me.token });
    for (let i = 0; i < 10; i++) await processBackups(env, Date.now());
    const key = (await env.DB.prepare("SELECT file_key FROM backups WHERE account_id = ?")
      .bind(me.id)
      .first<{ file_key: string }>())!.file_key;
    // As the old code left them: everything in MEDIA (and no ready mark).
    const zip = await (await env.PRIVATE.get(key))!.arrayBuffer();
    await env.PRIVATE.delete([key, "instance-documents/terms-of-service.html"]);
    await env.MEDIA.delete(READY_KEY);
    await env.MEDIA.put(key, zip, { httpMetadata: { contentType: "application/zip" } });
    await env.MEDIA.put("instance-documents/terms-of-service.html", "<p>Old terms</p>", {
      httpMetadata: { contentType: "text/html; charset=utf-8" },
    });
    const frontendKeys = Array.from({ length: 60 }, (_, i) => `frontends/old-fe/stable/b1/f${i}.js`);
    await Promise.all(
      frontendKeys.map((k) => env.MEDIA.put(k, "x", { httpMetadata: { contentType: "text/javascript" } })),
    );

    // Before the move: read from the old place, and still never served as media.
    const owned = await call(`/media/${key}`, { token: me.token, vars });
    expect(owned.status).toBe(200);
    expect(new Uint8Array(await owned.arrayBuffer())).toEqual(new Uint8Array(zip));
    expect((await call(`/media/${key}`, { token: other.token })).status).toBe(404);
    expect(await (await call("/static/terms-of-service.html", { vars })).text()).toContain("Old terms");
    expect((await call("/media/instance-documents/terms-of-service.html")).status).toBe(404);
    expect((await call(`/media/${frontendKeys[0]}`)).status).toBe(404);

    // A batch a run (50 files), then the built-in pictures and the ready mark.
    const bindings = { ...env };
    await cronRun(bindings);
    expect((await privateInPublic()).length).toBeGreaterThan(0);
    expect(await env.MEDIA.head(READY_KEY)).toBeNull();
    await cronRun(bindings);
    expect(await privateInPublic()).toEqual([]);
    expect(await env.MEDIA.head(READY_KEY)).not.toBeNull();
    const avatar = await env.MEDIA.get("images/avi.png");
    expect(avatar?.httpMetadata?.contentType).toBe("image/png");
    expect(new Uint8Array(await avatar!.arrayBuffer())).toEqual(
      new Uint8Array(await (await call("/images/avi.png")).arrayBuffer()),
    );
    // Moved with their types; served from the new place.
    const moved = await env.PRIVATE.get("instance-documents/terms-of-service.html");
    expect(moved?.httpMetadata?.contentType).toBe("text/html; charset=utf-8");
    expect(await moved!.text()).toBe("<p>Old terms</p>");
    expect(await env.PRIVATE.head(frontendKeys[59]!)).not.toBeNull();
    const after = await call(`/media/${key}`, { token: me.token, vars });
    expect(after.status).toBe(200);
    expect(new Uint8Array(await after.arrayBuffer())).toEqual(new Uint8Array(zip));
    // Settled: later runs read nothing but the mark, once.
    await env.MEDIA.put("frontends/late/x.js", "x");
    await cronRun(bindings);
    expect(await env.MEDIA.head("frontends/late/x.js")).not.toBeNull();
    await env.MEDIA.delete("frontends/late/x.js");
  });
});
