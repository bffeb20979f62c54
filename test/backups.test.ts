/** Pleroma's backups: request, list, the archive built by the cron job, download, mail, expiry. */
import { env } from "cloudflare:test";
import { unzipSync, strFromU8 } from "fflate";
import { describe, expect, it } from "vitest";
import { processBackups, BACKUP_KEEP_DAYS, signedBackupUrl } from "../src/services/backups";
import { BackupSchema } from "../src/schemas/pleroma";
import { sendQueuedMail } from "../src/services/mail-queue";
import { db } from "../src/db/client";
import { call, json, post, registerUser, upload, valid } from "./helpers";
import { PART } from "../src/lib/zip-upload";

const DAY = 24 * 3600_000;
const list = async (token: string) =>
  ((await json("/api/v1/pleroma/backups", { token })) as unknown[]).map((b) => valid(BackupSchema, b));

/** Runs the job until the account's pending backups are built (other tests' backups may come first). */
async function build(accountId: string, t = Date.now()) {
  for (let i = 0; i < 20; i++) {
    const pending = await env.DB.prepare("SELECT count(*) AS n FROM backups WHERE account_id = ? AND state = 'pending'")
      .bind(accountId)
      .first<{ n: number }>();
    if (!pending!.n) return;
    await processBackups(env, t);
  }
  throw new Error("backup not built");
}

describe("backups", () => {
  it("requests a backup (one a week), lists it, builds the archive in the background, mails its link", async () => {
    const me = await registerUser();
    const friend = await registerUser();
    const other = await registerUser();
    await json(`/api/v1/accounts/${friend.id}/follow`, { method: "POST", token: me.token });
    const media = await upload(me);
    const mine = await post(me, { status: "my *first* post", media_ids: [media.id] });
    const secret = await post(me, { status: `@${friend.username} just us`, visibility: "direct" });
    const theirs = await post(friend, { status: "friend's post" });
    await json(`/api/v1/statuses/${theirs.id}/favourite`, { method: "POST", token: me.token });
    await json(`/api/v1/statuses/${theirs.id}/bookmark`, { method: "POST", token: me.token });
    await json(`/api/v1/statuses/${theirs.id}/reblog`, { method: "POST", token: me.token });

    expect(await list(me.token)).toEqual([]);
    const created = ((await json("/api/v1/pleroma/backups", { method: "POST", token: me.token })) as unknown[]).map(
      (b) => valid(BackupSchema, b),
    );
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ content_type: "application/zip", file_size: 0, processed: false });
    // A link signed by the instance for its owner, valid a day (the archive holds private and direct posts).
    expect(created[0].url).toMatch(
      new RegExp(
        `^http://localhost/media/backups/archive-${me.username}-\\d{8}T\\d{6}-[A-Za-z0-9_-]+\\.zip\\?expires=\\d+&signature=[A-Za-z0-9_-]+$`,
      ),
    );
    // Pleroma's limit, and its message.
    const again = await call("/api/pleroma/backups", { method: "POST", token: me.token });
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ error: "Last export was less than 7 days ago" });
    // Someone else's backups are not listed; no user, no backups.
    expect(await list(other.token)).toEqual([]);
    expect((await call("/api/v1/pleroma/backups")).status).toBe(403);
    // Not built yet: the link does not answer.
    const link = (u: string) => new URL(u).pathname + new URL(u).search;
    expect((await call(link(created[0].url))).status).toBe(404);

    await build(me.id);
    const [done] = await list(me.token);
    expect(done).toMatchObject({ id: created[0].id, processed: true });
    expect(new URL(done.url).pathname).toBe(new URL(created[0].url).pathname);
    expect(done.file_size).toBeGreaterThan(0);
    const res = await call(link(done.url));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    // Never kept by a shared cache.
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    // Only to its owner: the bare path with the owner's token works; anonymous, another user's token, a changed
    // or an expired signature get nothing.
    const path = new URL(done.url).pathname;
    const owned = await call(path, { token: me.token });
    expect(owned.status).toBe(200);
    expect(owned.headers.get("cache-control")).toBe("private, no-store");
    await owned.arrayBuffer();
    expect((await call(path)).status).toBe(404);
    expect((await call(path, { token: other.token })).status).toBe(404);
    const signed = new URL(done.url);
    const expires = Number(signed.searchParams.get("expires"));
    const sig = signed.searchParams.get("signature")!;
    expect((await call(`${path}?expires=${expires}&signature=${sig.slice(0, -2)}AA`)).status).toBe(404);
    expect((await call(`${path}?expires=${expires + 1}&signature=${sig}`)).status).toBe(404);
    const expired = new URL(
      await signedBackupUrl(env, "http://localhost", path.slice("/media/".length), Date.now() - 1),
    );
    expect((await call(expired.pathname + expired.search)).status).toBe(404);
    // Another of the owner's files is not reachable with this archive's signature.
    expect(
      (await call(`/media/backups/archive-${other.username}-x.zip?expires=${expires}&signature=${sig}`)).status,
    ).toBe(404);
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    expect(Object.keys(files).sort()).toEqual([
      "actor.json",
      "bookmarks.json",
      "following.json",
      "likes.json",
      "outbox.json",
    ]);
    const read = (name: string) => JSON.parse(strFromU8(files[name]));
    const actor = read("actor.json");
    expect(actor).toMatchObject({
      id: `http://localhost/users/${me.username}`,
      type: "Person",
      preferredUsername: me.username,
      likes: "likes.json",
      bookmarks: "bookmarks.json",
    });
    const outbox = read("outbox.json");
    expect(outbox).toMatchObject({ type: "OrderedCollection", totalItems: 3 });
    const create = outbox.orderedItems.find((a: any) => a.object?.id === mine.uri);
    expect(create).toMatchObject({
      type: "Create",
      actor: actor.id,
      to: ["https://www.w3.org/ns/activitystreams#Public"],
    });
    expect(create.object.content).toContain("first");
    expect(create.object.attachment).toHaveLength(1);
    const direct = outbox.orderedItems.find((a: any) => a.object?.id === secret.uri);
    expect(direct.to).toEqual([`http://localhost/users/${friend.username}`]);
    expect(outbox.orderedItems.find((a: any) => a.type === "Announce")).toMatchObject({ object: theirs.uri });
    expect(read("likes.json")).toMatchObject({ orderedItems: [theirs.uri], totalItems: 1 });
    expect(read("bookmarks.json")).toMatchObject({ orderedItems: [theirs.uri], totalItems: 1 });
    expect(read("following.json")).toMatchObject({ orderedItems: [`http://localhost/users/${friend.username}`] });

    // The mail is queued with the archive's completion, and sent by the cron's mail job.
    const queued = await env.DB.prepare('SELECT count(*) AS n FROM mail_queue WHERE "to" = ?')
      .bind(me.email)
      .first<{ n: number }>();
    expect(queued!.n).toBe(1);
    await sendQueuedMail(env, db(env));
    const mail = await env.DB.prepare('SELECT subject, text FROM mail_outbox WHERE "to" = ? ORDER BY id DESC LIMIT 1')
      .bind(me.email)
      .first<{ subject: string; text: string }>();
    expect(mail?.subject).toMatch(/archive/);
    expect(mail?.text).toContain(new URL(done.url).pathname);
    // The mailed link is signed too, and works (as long as the archive is kept).
    const mailed = /(http:\/\/localhost\/media\/backups\/\S+)/.exec(mail!.text)![1]!;
    expect(mailed).toMatch(/\?expires=\d+&signature=/);
    expect((await call(link(mailed))).status).toBe(200);
  });

  it("a newer backup replaces the older one; archives go after a week, row and file", async () => {
    const me = await registerUser();
    await json("/api/v1/pleroma/backups", { method: "POST", token: me.token });
    await build(me.id);
    const [first] = await list(me.token);
    const firstKey = new URL(first.url).pathname.slice("/media/".length);
    expect(await env.PRIVATE.head(firstKey)).not.toBeNull();
    // Eight days later (moved back in time here), another may be asked for.
    await env.DB.prepare("UPDATE backups SET created_at = created_at - ? WHERE account_id = ?")
      .bind(8 * DAY, me.id)
      .run();
    expect(await list(me.token)).toHaveLength(1);
    const both = ((await json("/api/v1/pleroma/backups", { method: "POST", token: me.token })) as unknown[]).map((b) =>
      valid(BackupSchema, b),
    );
    expect(both.map((b) => b.processed)).toEqual([false, true]);
    await build(me.id, Date.now());
    // The old one expired (and would be replaced anyway): gone with its file.
    const [second] = await list(me.token);
    expect(await list(me.token)).toHaveLength(1);
    expect(second.id).not.toBe(first.id);
    expect(await env.PRIVATE.head(firstKey)).toBeNull();
    // A week later the newest goes too.
    const secondKey = new URL(second.url).pathname.slice("/media/".length);
    await processBackups(env, Date.now() + (BACKUP_KEEP_DAYS + 1) * DAY);
    expect(await list(me.token)).toEqual([]);
    expect(await env.PRIVATE.head(secondKey)).toBeNull();
  });
});

describe("a backup that cannot be built (review of services/)", () => {
  const request = (u: { token: string }) => json("/api/v1/pleroma/backups", { method: "POST", token: u.token });
  const state = async (accountId: string) =>
    env.DB.prepare("SELECT state, attempts, lease_until FROM backups WHERE account_id = ?")
      .bind(accountId)
      .first<{ state: string; attempts: number; lease_until: number | null }>();

  it("one tried three times (each run that stopped the isolate counted) fails, and the next one is built in the same run", async () => {
    const stuck = await registerUser();
    const next = await registerUser();
    await post(next, { status: "keep me" });
    await request(stuck);
    await request(next);
    // Three runs claimed it and never finished (memory, CPU): nothing caught them, the claims counted them.
    await env.DB.prepare("UPDATE backups SET attempts = 3 WHERE account_id = ?").bind(stuck.id).run();
    await processBackups(env, Date.now());
    expect(await state(stuck.id)).toMatchObject({ state: "failed", attempts: 3 });
    const [failed] = await list(stuck.token);
    expect(failed).toMatchObject({ processed: false, file_size: 0 });
    const [built] = await list(next.token);
    expect(built).toMatchObject({ processed: true });
    expect(built!.file_size).toBeGreaterThan(0);
    // Not picked again, and no new one asked for at once: the week's limit holds.
    await processBackups(env, Date.now());
    expect(await state(stuck.id)).toMatchObject({ state: "failed", attempts: 3 });
    const again = await call("/api/v1/pleroma/backups", { method: "POST", token: stuck.token });
    expect(again.status).toBe(400);
  });

  it("a build that throws counts its attempt and frees the backup for the next run; the third failure is the last", async () => {
    const flaky = await registerUser();
    const broken = await registerUser();
    await request(flaky);
    await request(broken);
    // A row the build cannot read (its profile fields are not JSON): the build throws.
    const corrupt = (id: string, fields: string) =>
      env.DB.prepare("UPDATE accounts SET fields = ? WHERE id = ?").bind(fields, id).run();
    await corrupt(flaky.id, "{");
    await corrupt(broken.id, "{");
    await expect(processBackups(env, Date.now())).rejects.toThrow();
    expect(await state(flaky.id)).toEqual({ state: "pending", attempts: 1, lease_until: null });
    // Mended: the next run builds it.
    await corrupt(flaky.id, "[]");
    await processBackups(env, Date.now());
    expect(await state(flaky.id)).toMatchObject({ state: "complete", attempts: 2 });
    expect((await list(flaky.token))[0]).toMatchObject({ processed: true });
    // Still broken: two more failures, then failed for good; a later run changes nothing.
    for (let i = 0; i < 3; i++) await processBackups(env, Date.now()).catch(() => undefined);
    expect(await state(broken.id)).toMatchObject({ state: "failed", attempts: 3, lease_until: null });
    await corrupt(broken.id, "[]");
    await processBackups(env, Date.now());
    expect(await state(broken.id)).toMatchObject({ state: "failed", attempts: 3 });
    expect((await list(broken.token))[0]).toMatchObject({ processed: false, file_size: 0 });
  });

  it("one being built (its claim not expired) is left to its run: the next minute builds the next one", async () => {
    const busy = await registerUser();
    const other = await registerUser();
    await request(busy);
    await request(other);
    const t = Date.now();
    await env.DB.prepare("UPDATE backups SET attempts = 1, lease_until = ? WHERE account_id = ?")
      .bind(t + 60_000, busy.id)
      .run();
    await processBackups(env, t);
    expect(await state(busy.id)).toMatchObject({ state: "pending", attempts: 1 });
    expect(await state(other.id)).toMatchObject({ state: "complete" });
    // Its claim past: taken again.
    await processBackups(env, t + 3600_000);
    expect(await state(busy.id)).toMatchObject({ state: "complete", attempts: 2 });
  });

  it("an archive larger than a part is streamed page by page into a multipart upload, and downloads whole", async () => {
    const big = await registerUser();
    // 4,000 statuses of 3,200 hexadecimal characters (random: about half survives compression), about 6.4 MB zipped.
    await env.DB.prepare(
      `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
       SELECT ?1 || printf('%05d', i), 'http://localhost/objects/' || ?1 || i, 'http://localhost/notice/' || ?1 || i, ?2,
              ?1 || printf('%05d', i), 'ctx', hex(randomblob(1600)), '', 'public', 1, ?3 + i FROM n`,
    )
      .bind(`big${big.id}`, big.id, Date.now())
      .run();
    await json("/api/v1/pleroma/backups", { method: "POST", token: big.token });
    await processBackups(env, Date.now());
    const [done] = await list(big.token);
    expect(done).toMatchObject({ processed: true });
    expect(done!.file_size).toBeGreaterThan(PART);
    const res = await call(new URL(done!.url).pathname + new URL(done!.url).search);
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.byteLength).toBe(done!.file_size);
    const files = unzipSync(bytes);
    const outbox = JSON.parse(strFromU8(files["outbox.json"]!)) as {
      totalItems: number;
      orderedItems: { id: string }[];
    };
    expect(outbox.totalItems).toBe(4000);
    expect(outbox.orderedItems).toHaveLength(4000);
    expect(outbox.orderedItems[3999]!.id).toBe(`http://localhost/objects/big${big.id}4000/activity`);
    expect(JSON.parse(strFromU8(files["likes.json"]!))).toMatchObject({ totalItems: 0, orderedItems: [] });
  });
});
