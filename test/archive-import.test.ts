/**
 * Importing a Mastodon or Pleroma account archive (issue 50): the upload (API and settings page), the cron's steps,
 * what is imported (counts, dates, order, threads, visibility, content warnings, polls, tags, mentions as links,
 * media stripped of metadata), what is not (nothing delivered, notified, fanned out or trending), a second import
 * adding nothing, an interrupted import resuming, and hostile archives refused.
 */
import { env } from "cloudflare:test";
import { strToU8, zipSync } from "fflate";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ArchiveImportSchema } from "../src/schemas/archive-import";
import { StatusSchema } from "../src/schemas/status";
import { STEP, stepArchiveImports } from "../src/services/archive-import";
import { JOB_NAMES } from "../src/cron";
import { runAccountDeletions } from "../src/services/account-deletion";
import { browser } from "./browser";
import { call, json, registerUser, scopedToken, valid, type TestUser } from "./helpers";
import { mastodonArchive, pleromaArchive, type Expected } from "./fixtures/archives";
import { deflateBomb, rawZip } from "./fixtures/zip-bombs";

const form = (zip: Uint8Array, name = "archive.zip") => {
  const f = new FormData();
  f.set("file", new File([zip], name, { type: "application/zip" }));
  return f;
};

const upload = (u: TestUser, zip: Uint8Array, status = 202) =>
  json("/api/v1/pleroma/archive_import", { method: "POST", token: u.token, body: form(zip), status }).then((b) =>
    status === 202 ? valid(ArchiveImportSchema, b) : b,
  );

const progress = async (u: TestUser, id: string) =>
  valid(ArchiveImportSchema, await json(`/api/v1/pleroma/archive_import/${id}`, { token: u.token }));

/** Runs the cron's step until the import is over (other files' imports never share this database). */
async function runAll(u: TestUser, id: string, t = Date.now()) {
  for (let i = 0; i < 50; i++) {
    const p = await progress(u, id);
    if (p.state === "done" || p.state === "failed") return p;
    await stepArchiveImports(env, t);
  }
  throw new Error("the import did not end");
}

/** Every status of the account as a signed-in reader sees its profile, newest first, through the paginator. */
async function profile(accountId: string, token?: string) {
  const all: ReturnType<typeof StatusSchema.parse>[] = [];
  let path = `/api/v1/accounts/${accountId}/statuses?limit=40`;
  for (let i = 0; i < 20; i++) {
    const page = (await json(path, { token })) as unknown[];
    if (page.length === 0) break;
    all.push(...page.map((s) => valid(StatusSchema, s)));
    path = `/api/v1/accounts/${accountId}/statuses?limit=40&max_id=${all[all.length - 1]!.id}`;
  }
  return all;
}

const count = async (query: string, ...binds: unknown[]) =>
  (await env.DB.prepare(query)
    .bind(...binds)
    .first<{ n: number }>())!.n;

function checkImported(statuses: ReturnType<typeof StatusSchema.parse>[], expected: Expected) {
  expect(statuses.length).toBe(expected.kept.length);
  const byUrl = new Map(statuses.map((s) => [s.url, s]));
  // Newest first by id, and the ids follow the original dates.
  const dates = statuses.map((s) => Date.parse(s.created_at));
  expect(dates).toEqual([...dates].sort((a, b) => b - a));
  expect(statuses.map((s) => s.id)).toEqual(
    statuses
      .map((s) => s.id)
      .sort()
      .reverse(),
  );
  for (const k of expected.kept) {
    const s = byUrl.get(k.url);
    expect(s, k.url).toBeTruthy();
    expect(Date.parse(s!.created_at)).toBe(k.published);
    expect(s!.visibility).toBe(k.visibility);
    // Served at a new id of this instance; the old page kept as its url.
    expect(s!.uri).toBe(`http://localhost/objects/${s!.id}`);
    if (k.replyTo) expect(s!.in_reply_to_id).toBe(byUrl.get(expected.kept.find((x) => x.uri === k.replyTo)!.url)!.id);
    else expect(s!.in_reply_to_id).toBeNull();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
  STEP.posts = 100;
});

describe("archive import", () => {
  it("imports a Mastodon 4 archive quietly: counts, dates, order, threads, visibility, polls, media", async () => {
    expect(JOB_NAMES).toContain("archive_imports");
    const alice = await registerUser();
    const follower = await registerUser();
    const stranger = await registerUser();
    await json(`/api/v1/accounts/${alice.id}/follow`, { method: "POST", token: follower.token });
    const outbound = vi.spyOn(globalThis, "fetch");
    const { zip, expected } = mastodonArchive({ mentionLocal: `http://localhost/users/${follower.username}` });

    const queued = await upload(alice, zip);
    expect(queued).toMatchObject({ state: "queued", file_size: zip.byteLength, posts_done: 0, posts_imported: 0 });
    // A second upload waits for the first.
    const busy = await call("/api/v1/pleroma/archive_import", { method: "POST", token: alice.token, body: form(zip) });
    expect(busy.status).toBe(409);
    expect(await busy.json()).toEqual({ error: "An import of this account is already going on" });
    // The zip is in the private bucket, served to no one.
    const key = (await env.DB.prepare("SELECT file_key FROM archive_imports WHERE id = ?").bind(queued.id).first<{
      file_key: string;
    }>())!.file_key;
    expect(await env.PRIVATE.head(key)).not.toBeNull();
    expect(await env.MEDIA.head(key)).toBeNull();
    expect((await call(`/media/${key}`, { token: alice.token })).status).toBe(404);

    // Step 1 reads the outbox; then steps of 100 posts.
    await stepArchiveImports(env, Date.now());
    const prepared = await progress(alice, queued.id);
    expect(prepared).toMatchObject({
      state: "importing",
      posts_found: expected.found,
      posts_total: expected.kept.length,
      posts_done: 0,
      skipped: expected.skipped,
    });
    await stepArchiveImports(env, Date.now());
    const partly = await progress(alice, queued.id);
    expect(partly.posts_done).toBe(100);
    expect(partly.posts_imported).toBe(100);
    const done = await runAll(alice, queued.id);
    expect(done).toMatchObject({
      state: "done",
      posts_done: expected.kept.length,
      posts_imported: expected.kept.length,
      media_imported: expected.media,
      media_skipped: expected.mediaSkipped,
      error: null,
    });
    // The files are gone once done.
    expect(await env.PRIVATE.head(key)).toBeNull();

    const mine = await profile(alice.id, alice.token);
    checkImported(mine, expected);
    const account = await json(`/api/v1/accounts/${alice.id}`);
    expect(account.statuses_count).toBe(expected.kept.length);

    // Followers-only posts: to followers, not to strangers or anonymous readers.
    const anonymous = await profile(alice.id);
    expect(anonymous.every((s) => s.visibility === "public" || s.visibility === "unlisted")).toBe(true);
    expect(anonymous.length).toBe(expected.kept.filter((k) => k.visibility !== "private").length);
    expect((await profile(alice.id, stranger.token)).length).toBe(anonymous.length);
    expect((await profile(alice.id, follower.token)).length).toBe(expected.kept.length);

    // A thread: the self-replies' chain, through the context API.
    const replies = mine.filter((s) => s.in_reply_to_id).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(replies.length).toBe(29);
    const last = replies[replies.length - 1]!;
    const context = await json(`/api/v1/statuses/${last.id}/context`, { token: alice.token });
    expect(context.ancestors.length).toBe(29);
    expect(Date.parse(context.ancestors[0].created_at)).toBe(Date.UTC(2023, 0, 1, 2));

    // Content warnings, sensitive, sanitised HTML, mentions as plain links (no mention, no notification), tags.
    const cw = mine.find((s) => s.spoiler_text === "cw 7")!;
    expect(cw.sensitive).toBe(true);
    expect(mine.find((s) => s.content.includes("post 19"))!.content).not.toContain("<script");
    const tagged = mine.find((s) => s.content.includes("post 8 "))!;
    expect(tagged.content).toContain(`href="http://localhost/users/${follower.username}"`);
    expect(tagged.mentions).toEqual([]);
    expect(tagged.tags.map((t) => t.name)).toEqual(["archived"]);

    // Polls: closed, with the archive's counts.
    const polls = mine.filter((s) => s.poll);
    expect(polls.length).toBe(expected.polls);
    expect(polls[0]!.poll).toMatchObject({
      expired: true,
      multiple: false,
      votes_count: 4,
      voters_count: 4,
      options: [
        { title: "yes", votes_count: 3 },
        { title: "no", votes_count: 1 },
      ],
    });

    // Media: description, focal point, stored without the phone's metadata; the HTML "photo" and the missing one left out.
    const withMedia = mine.filter((s) => s.media_attachments.length);
    expect(withMedia.length).toBe(expected.media);
    const m = withMedia[0]!.media_attachments[0]!;
    expect(m).toMatchObject({ type: "image", description: expect.stringMatching(/^photo number \d+$/) });
    expect(m.meta?.focus).toEqual({ x: 0.5, y: -0.25 });
    const stored = new Uint8Array(await (await call(new URL(m.url).pathname)).arrayBuffer());
    expect(stored[0]).toBe(0xff);
    expect(Buffer.from(stored).includes(Buffer.from("SN-0042-SECRET"))).toBe(false);
    expect(Buffer.from(stored).includes(Buffer.from("PhoneMaker"))).toBe(false);

    // Quiet: nothing to deliver, nobody notified, no home timeline row, nothing trending, nothing fetched.
    expect(await count("SELECT count(*) AS n FROM federation_outbox WHERE account_id = ?", alice.id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM notifications WHERE from_account_id = ?", alice.id)).toBe(0);
    expect(await json("/api/v1/timelines/home", { token: follower.token })).toEqual([]);
    expect(outbound).not.toHaveBeenCalled();
    // An imported post keeps its old address, which nothing vouches for (an archive is not signed): pasting that
    // address into search does not find the import, which could name anyone's real post.
    const old = expected.kept.find((k) => k.visibility === "public")!.url;
    const found = await json(`/api/v2/search?q=${encodeURIComponent(old)}&type=statuses&resolve=true`, {
      token: stranger.token,
    });
    expect(found.statuses).toEqual([]);

    // A second import of the same archive adds nothing.
    const again = await upload(alice, zip);
    const second = await runAll(alice, again.id);
    expect(second).toMatchObject({
      state: "done",
      posts_imported: 0,
      media_imported: 0,
      skipped: { ...expected.skipped, already_imported: expected.kept.length },
    });
    expect((await json(`/api/v1/accounts/${alice.id}`)).statuses_count).toBe(expected.kept.length);
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", alice.id)).toBe(expected.kept.length);

    // The list, and the owner only.
    const listed = ((await json("/api/v1/pleroma/archive_import", { token: alice.token })) as unknown[]).map((x) =>
      valid(ArchiveImportSchema, x),
    );
    expect(listed.map((x) => x.id)).toEqual([again.id, queued.id]);
    expect(await json("/api/pleroma/archive_import", { token: stranger.token })).toEqual([]);
    expect((await call(`/api/v1/pleroma/archive_import/${queued.id}`, { token: stranger.token })).status).toBe(404);
  });

  it("leaves imported posts out of trends", async () => {
    const u = await registerUser();
    const t = Date.now();
    const actor = "https://old.example/users/trendy";
    const note = (i: number) => ({
      id: `${actor}/statuses/${i}/activity`,
      type: "Create",
      actor,
      object: {
        id: `${actor}/statuses/${i}`,
        type: "Note",
        attributedTo: actor,
        published: new Date(t - 3600_000 * (i + 1)).toISOString(),
        to: ["https://www.w3.org/ns/activitystreams#Public"],
        content: `<p>#importedtrend ${i}</p>`,
        // A link elsewhere than the old server is not kept as the post's page.
        url: i === 0 ? "https://phish.example/login" : `https://old.example/@trendy/${i}`,
        tag: [{ type: "Hashtag", name: "#importedtrend" }],
      },
    });
    const zip = zipSync({
      "actor.json": strToU8(JSON.stringify({ id: actor, followers: `${actor}/followers` })),
      "outbox.json": strToU8(JSON.stringify({ orderedItems: [0, 1, 2].map(note) })),
    });
    const queued = await upload(u, zip);
    expect((await runAll(u, queued.id)).posts_imported).toBe(3);
    const tagged = (await json("/api/v1/timelines/tag/importedtrend", { token: u.token })) as unknown[];
    expect(tagged.length).toBe(3);
    const urls = (tagged as { url: string }[]).map((x) => x.url).sort();
    expect(urls).toEqual(
      ["https://old.example/@trendy/1", "https://old.example/@trendy/2", `${actor}/statuses/0`].sort(),
    );
    const trends = (await json("/api/v1/trends/tags?limit=20")) as { name: string }[];
    expect(trends.map((x) => x.name)).not.toContain("importedtrend");
  });

  it("imports a Pleroma 2 backup in a folder, and an interrupted import resumes where it stopped", async () => {
    const bob = await registerUser();
    const { zip, expected } = pleromaArchive(120);
    const queued = await upload(bob, zip);
    STEP.posts = 25;
    await stepArchiveImports(env, Date.now()); // prepare
    await stepArchiveImports(env, Date.now());
    expect((await progress(bob, queued.id)).posts_done).toBe(25);

    // A step that dies before its batch lands (the database fails): nothing of it is written, the error is kept.
    let batches = 0;
    const failing = {
      ...env,
      DB: new Proxy(env.DB, {
        get(target, prop) {
          // The step's first batch reads the budget and the storage; its second is the write.
          if (prop === "batch" && ++batches === 2) return () => Promise.reject(new Error("D1 went away"));
          const v = Reflect.get(target, prop);
          return typeof v === "function" ? v.bind(target) : v;
        },
      }),
    };
    await stepArchiveImports(failing as typeof env, Date.now());
    const interrupted = await progress(bob, queued.id);
    expect(interrupted).toMatchObject({
      state: "importing",
      posts_done: 25,
      posts_imported: 25,
      error: "D1 went away",
    });
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", bob.id)).toBe(25);

    // Two cron runs at once (one outlasting its minute): one step holds the import, the other leaves it.
    const both = await Promise.all([stepArchiveImports(env, Date.now()), stepArchiveImports(env, Date.now())]);
    expect(both.map((r) => r?.report.busy ?? 0).sort()).toEqual([0, 1]);
    expect(await progress(bob, queued.id)).toMatchObject({ posts_done: 50, posts_imported: 50, error: null });

    const done = await runAll(bob, queued.id);
    expect(done).toMatchObject({
      state: "done",
      posts_found: expected.found,
      posts_imported: expected.kept.length,
      media_imported: 0,
      media_skipped: expected.mediaSkipped,
      skipped: expected.skipped,
      error: null,
    });
    const statuses = await profile(bob.id, bob.token);
    checkImported(statuses, expected);
    const poll = statuses.find((s) => s.poll)!.poll!;
    expect(poll).toMatchObject({ expired: true, multiple: true, votes_count: 7 });
    expect(poll.options.map((o) => [o.title, o.votes_count])).toEqual([
      ["red", 5],
      ["blue", 2],
      ["green", 0],
    ]);
    expect(statuses[0]!.tags.map((t) => t.name)).toEqual(["pleroma"]);
  });

  it("waits while the database is nearly full, then goes on; a deactivated account's import waits too", async () => {
    const u = await registerUser();
    const { zip, expected } = pleromaArchive(10);
    const queued = await upload(u, zip);
    const t = Date.now();
    const full = JSON.stringify({ bytes: 90, limitBytes: 100, at: t, warnedAt: t });
    await env.DB.prepare(
      "INSERT INTO instance_keys (name, value, created_at) VALUES ('storage', ?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
    )
      .bind(full, t)
      .run();
    try {
      await stepArchiveImports(env, t);
      expect(await progress(u, queued.id)).toMatchObject({
        state: "queued",
        paused: "The database is 90% full",
        posts_done: 0,
      });
    } finally {
      await env.DB.prepare("DELETE FROM instance_keys WHERE name = 'storage'").run();
    }
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(u.id).run();
    expect(await stepArchiveImports(env, t)).toBeNull();
    const row = await env.DB.prepare("SELECT state FROM archive_imports WHERE id = ?").bind(queued.id).first();
    expect(row).toEqual({ state: "queued" });
    await env.DB.prepare("UPDATE accounts SET deactivated = 0 WHERE id = ?").bind(u.id).run();
    expect(await runAll(u, queued.id)).toMatchObject({
      state: "done",
      paused: null,
      posts_imported: expected.kept.length,
    });
  });

  it("deleting the account removes its imports and their files", async () => {
    const u = await registerUser();
    const queued = await upload(u, pleromaArchive(5).zip);
    const { file_key } = (await env.DB.prepare("SELECT file_key FROM archive_imports WHERE id = ?")
      .bind(queued.id)
      .first<{ file_key: string }>())!;
    expect(await env.PRIVATE.head(file_key)).not.toBeNull();
    const res = await call(`/api/pleroma/delete_account?password=${encodeURIComponent(u.password)}`, {
      method: "DELETE",
      token: u.token,
    });
    expect(res.status).toBe(200);
    for (let i = 0; i < 40 && (await count("SELECT count(*) AS n FROM accounts WHERE id = ?", u.id)); i++)
      await runAccountDeletions(env, Date.now());
    expect(await count("SELECT count(*) AS n FROM archive_imports WHERE account_id = ?", u.id)).toBe(0);
    expect(await env.PRIVATE.head(file_key)).toBeNull();
  });

  it("refuses hostile or broken archives with clear errors", async () => {
    const u = await registerUser();
    const refused = async (zip: Uint8Array, status: number, error: string | RegExp) => {
      const res = await call("/api/v1/pleroma/archive_import", { method: "POST", token: u.token, body: form(zip) });
      const body = (await res.json()) as { error: string };
      expect(res.status, body.error).toBe(status);
      expect(body.error).toMatch(error);
    };
    const actor = strToU8(JSON.stringify({ id: "https://old.example/users/a" }));
    await refused(strToU8("not a zip at all, just text"), 422, "The file is not a zip archive");
    await refused(zipSync({ "../outbox.json": strToU8("{}"), "actor.json": actor }), 422, /unsafe file name/);
    await refused(zipSync({ "/etc/outbox.json": strToU8("{}") }), 422, /unsafe file name/);
    await refused(zipSync({ "likes.json": strToU8("{}") }), 422, /no outbox.json/);
    await refused(zipSync({ "outbox.json": strToU8("{}") }), 422, /no actor.json/);
    // A bomb: 17 MB of spaces in a few KB; its declared size is refused before anything is inflated.
    const bomb = zipSync({ "outbox.json": new Uint8Array(17 * 1024 * 1024).fill(32), "actor.json": actor });
    expect(bomb.byteLength).toBeLessThan(100_000);
    await refused(bomb, 422, "outbox.json is larger than 16777216 bytes uncompressed");
    // Too many files.
    const many: Record<string, Uint8Array> = { "outbox.json": strToU8("{}"), "actor.json": actor };
    for (let i = 0; i < 20_000; i++) many[`media_attachments/${i}`] = new Uint8Array(0);
    await refused(zipSync(many, { level: 0 }), 422, "The archive has more than 20000 entries");
    // Over the API's 64 MB (declared): answered 413 without waiting for a body that never ends.
    const endless = new ReadableStream({
      start(c) {
        c.enqueue(strToU8('--b\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\n'));
      },
    });
    const big = await call("/api/v1/pleroma/archive_import", {
      method: "POST",
      token: u.token,
      headers: { "content-type": "multipart/form-data; boundary=b", "content-length": "70000000" },
      body: endless,
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: string }).error).toMatch(/larger than 64 MB; ask an admin/);
    // No token, a token without the scope, an empty form.
    expect((await call("/api/v1/pleroma/archive_import", { method: "POST", body: form(bomb) })).status).toBe(403);
    const readOnly = await scopedToken(u, "read");
    expect(
      (await call("/api/v1/pleroma/archive_import", { method: "POST", token: readOnly, body: form(bomb) })).status,
    ).toBe(403);
    expect((await call("/api/v1/pleroma/archive_import", { method: "POST", token: u.token, body: {} })).status).toBe(
      400,
    );
    expect(await count("SELECT count(*) AS n FROM archive_imports WHERE account_id = ?", u.id)).toBe(0);
  });

  it("fails an archive whose files lie about their size or hold no JSON, and says why", async () => {
    const u = await registerUser();
    const actor = strToU8(JSON.stringify({ id: "https://old.example/users/a" }));
    // outbox.json declares 1,000 bytes and inflates to far more: refused when inflating passes 1,000.
    const outbox = strToU8(JSON.stringify({ orderedItems: Array.from({ length: 500 }, (_, i) => ({ type: "x", i })) }));
    const zip = zipSync({ "outbox.json": outbox, "actor.json": actor });
    const view = new DataView(zip.buffer, zip.byteOffset);
    for (let at = 0; at < zip.length - 4; at++) {
      const sig = view.getUint32(at, true);
      if (sig === 0x04034b50 && new TextDecoder().decode(zip.subarray(at + 30, at + 41)) === "outbox.json")
        view.setUint32(at + 22, 1000, true);
      if (sig === 0x02014b50 && new TextDecoder().decode(zip.subarray(at + 46, at + 57)) === "outbox.json")
        view.setUint32(at + 24, 1000, true);
    }
    const lying = await upload(u, zip);
    const failed = await runAll(u, lying.id);
    expect(failed).toMatchObject({
      state: "failed",
      error: "outbox.json inflates to more than its declared 1000 bytes",
      posts_imported: 0,
    });
    // A stored entry declaring 10 bytes over 10 KB of data: its range is not read at all.
    const stored = zipSync({ "outbox.json": [outbox, { level: 0 }], "actor.json": actor });
    const sview = new DataView(stored.buffer, stored.byteOffset);
    for (let at = 0; at < stored.length - 4; at++)
      if (
        sview.getUint32(at, true) === 0x02014b50 &&
        new TextDecoder().decode(stored.subarray(at + 46, at + 57)) === "outbox.json"
      )
        sview.setUint32(at + 24, 10, true);
    const big = await upload(u, stored);
    expect(await runAll(u, big.id)).toMatchObject({ state: "failed", error: "outbox.json: damaged entry" });
    // A step that stopped its isolate (memory, CPU) reaches no catch: the claim counted it, and after five the
    // import fails instead of being claimed again every minute.
    const stuck = await upload(u, zipSync({ "outbox.json": strToU8("{}"), "actor.json": actor }));
    await env.DB.prepare("UPDATE archive_imports SET attempts = 5 WHERE id = ?").bind(stuck.id).run();
    await stepArchiveImports(env, Date.now());
    expect(await progress(u, stuck.id)).toMatchObject({
      state: "failed",
      error: "a step of this import stopped without finishing",
    });
    // An actor.json that names nobody.
    const nobody = await upload(u, zipSync({ "outbox.json": strToU8("{}"), "actor.json": strToU8("[1, 2]") }));
    expect(await runAll(u, nobody.id)).toMatchObject({ state: "failed", error: "actor.json names no account" });
  });

  it("stops inflating an entry as soon as it passes its declared size: the import fails in one quick step", async () => {
    const u = await registerUser();
    const owner = "https://old.example/users/a";
    const actor = strToU8(JSON.stringify({ id: owner }));
    // 1 MB of deflate that claims 1 MB and inflates to ~160 MB: fflate's one-shot inflate decodes it all.
    const bomb = deflateBomb(1024 * 1024);
    expect(bomb.inflated).toBeGreaterThan(150 * 1024 * 1024);
    const outboxBomb = rawZip([
      { name: "actor.json", data: actor, size: actor.length, method: 0 },
      { name: "outbox.json", data: bomb.data, size: 1024 * 1024 },
    ]);
    const job = await upload(u, outboxBomb);
    let started = Date.now();
    await stepArchiveImports(env, Date.now());
    expect(Date.now() - started).toBeLessThan(3000); // the whole stream: 4 s on an idle machine
    expect(await progress(u, job.id)).toMatchObject({
      state: "failed",
      error: "outbox.json inflates to more than its declared 1048576 bytes",
      posts_imported: 0,
    });

    // A post whose 20 attachments are 20 directory entries over the same bomb (each claims 1 MB): the first one
    // read fails the import, and no later step reads the others.
    const names = Array.from({ length: 20 }, (_, i) => `media_attachments/${i}.png`);
    const note = (n: number, attachment: unknown[]) => ({
      type: "Create",
      actor: owner,
      object: {
        id: `${owner}/statuses/${n}`,
        type: "Note",
        attributedTo: owner,
        published: new Date(Date.UTC(2024, 0, 1 + n)).toISOString(),
        to: ["https://www.w3.org/ns/activitystreams#Public"],
        content: `<p>post ${n}</p>`,
        attachment,
      },
    });
    const outbox = strToU8(
      JSON.stringify({
        orderedItems: [
          note(
            1,
            names.map((name) => ({ type: "Document", mediaType: "image/png", url: `/${name}` })),
          ),
          note(2, []),
        ],
      }),
    );
    const mediaBomb = rawZip([
      { name: "actor.json", data: actor, size: actor.length, method: 0 },
      { name: "outbox.json", data: outbox, size: outbox.length, method: 0 },
      ...names.map((name, i) => ({ name, data: bomb.data, size: 1024 * 1024, sameAs: i ? names[0] : undefined })),
    ]);
    const media = await upload(u, mediaBomb);
    await stepArchiveImports(env, Date.now());
    expect(await progress(u, media.id)).toMatchObject({ state: "importing", posts_total: 2 });
    started = Date.now();
    await stepArchiveImports(env, Date.now());
    expect(Date.now() - started).toBeLessThan(3000); // the whole stream: 4 s on an idle machine
    expect(await progress(u, media.id)).toMatchObject({
      state: "failed",
      error: "media_attachments/0.png inflates to more than its declared 1048576 bytes",
      posts_done: 0,
      posts_imported: 0,
    });
    expect(await count("SELECT count(*) AS n FROM statuses WHERE account_id = ?", u.id)).toBe(0);
  });

  it("refuses an outbox.json holding more values than it could parse within memory, before parsing it", async () => {
    const u = await registerUser();
    const actor = strToU8(JSON.stringify({ id: "https://old.example/users/a" }));
    // 3 MB of `{},` (within the 16 MB): a million objects and more once parsed.
    const outbox = strToU8(`{"orderedItems":[${"{},".repeat(1_000_000)}{}]}`);
    const job = await upload(u, zipSync({ "outbox.json": outbox, "actor.json": actor }));
    await stepArchiveImports(env, Date.now());
    expect(await progress(u, job.id)).toMatchObject({
      state: "failed",
      error: "outbox.json holds more than 1000000 values",
      posts_found: 0,
    });
  });

  it("takes at most 5 archives a day from one account (429 with Retry-After), other accounts unaffected", async () => {
    const u = await registerUser();
    const other = await registerUser();
    const zip = zipSync({
      "outbox.json": strToU8("{}"),
      "actor.json": strToU8('{"id":"https://old.example/users/a"}'),
    });
    for (let i = 0; i < 5; i++) {
      const job = await upload(u, zip);
      expect(await runAll(u, job.id)).toMatchObject({ state: "done" });
    }
    const res = await call("/api/v1/pleroma/archive_import", { method: "POST", token: u.token, body: form(zip) });
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ error: "Throttled" });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(86_000);
    expect(await count("SELECT count(*) AS n FROM archive_imports WHERE account_id = ?", u.id)).toBe(5);
    // An archive refused at upload is not counted; another account has its own 5.
    await upload(other, strToU8("not a zip"), 422);
    expect((await upload(other, zip)).state).toBe("queued");
  });

  it("has a settings page that works without an app (session, CSRF, progress)", async () => {
    const u = await registerUser();
    const b = browser();
    const anonymous = await b.send("/settings/import");
    expect(anonymous.res.status).toBe(200);
    expect(anonymous.text).toContain('href="/auth/sign_in?return_to=%2Fsettings%2Fimport"');
    expect(anonymous.text).not.toContain('name="file"');
    const signIn = await b.send("/auth/sign_in?return_to=%2Fsettings%2Fimport");
    const signedIn = await b.submit(signIn, "/auth/sign_in", { username: u.username, password: u.password });
    expect(signedIn.res.headers.get("location")).toBe("/settings/import");
    const page = await b.send("/settings/import");
    expect(page.res.status).toBe(200);
    expect(page.res.headers.get("x-frame-options")).toBe("DENY");
    expect(page.text).toContain('enctype="multipart/form-data"');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
    const cookie = [...b.jar("localhost")].map(([k, v]) => `${k}=${v}`).join("; ");
    const post = (fields: Record<string, string>, zip: Uint8Array) => {
      const f = form(zip);
      for (const [k, v] of Object.entries(fields)) f.set(k, v);
      return call("/settings/import", { method: "POST", body: f, headers: { cookie, accept: "text/html" } });
    };
    const { zip } = pleromaArchive(12);
    // Without the form's token: refused, nothing queued.
    const forged = await post({}, zip);
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("The form expired");
    // Not an archive: the reason on the page.
    const broken = await post({ csrf_token: csrf }, strToU8("hello"));
    expect(broken.status).toBe(422);
    expect(await broken.text()).toContain("The file is not a zip archive");
    const sent = await post({ csrf_token: csrf }, zip);
    expect(sent.status).toBe(303);
    expect(sent.headers.get("location")).toBe("/settings/import?queued=1");
    const after = await b.send("/settings/import?queued=1");
    expect(after.text).toContain("the import starts within a minute");
    expect(after.text).toContain("waiting to start");
    const [row] = (await json("/api/v1/pleroma/archive_import", { token: u.token })) as { id: string }[];
    await runAll(u, row!.id);
    const finished = await b.send("/settings/import");
    expect(finished.text).toContain('data-state="done"');
    expect(finished.text).toContain("12 of 12 posts");
    // A session of someone else's browser does not see it.
    const other = await registerUser();
    const ob = browser();
    await ob.submit(await ob.send("/auth/sign_in"), "/auth/sign_in", {
      username: other.username,
      password: other.password,
    });
    expect((await ob.send("/settings/import")).text).not.toContain("data-state");
  });
});
