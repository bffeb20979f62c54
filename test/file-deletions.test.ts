/**
 * A deleted status's files leave R2 even when the delete after the answer fails (services/file-deletions.ts): the
 * keys are queued in the deleting batch and the cron deletes what is still there once R2 works again.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { MediaAttachmentSchema, StatusSchema } from "../src/schemas/status";
import { AccountSchema } from "../src/schemas/account";
import { call, json, PNG_1PX, post, registerUser, upload, valid } from "./helpers";

/** The MEDIA bucket whose deletes fail (R2 down), everything else as it is. */
const failingMedia = new Proxy(env.MEDIA, {
  get(target, prop) {
    if (prop === "delete") return async () => Promise.reject(new Error("R2 is down"));
    const value = Reflect.get(target, prop);
    return typeof value === "function" ? value.bind(target) : value;
  },
});

async function runCron(bindings: typeof env = env) {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: new Date(), cron: "* * * * *" }),
    { ...bindings },
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

const queued = async (key: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM file_deletions WHERE key = ?").bind(key).first<{ n: number }>())!.n;

describe("files of deleted statuses", () => {
  it("are deleted by the cron when the delete after the answer failed, and stay queued while R2 fails", async () => {
    const u = await registerUser();
    const media = valid(MediaAttachmentSchema, await upload(u));
    const s = valid(
      StatusSchema,
      await post(u, { status: "followers only", visibility: "private", media_ids: [media.id] }),
    );
    const key = (await env.DB.prepare("SELECT file FROM media_attachments WHERE id = ?")
      .bind(media.id)
      .first<{ file: string }>())!.file;
    const path = new URL(s.media_attachments[0]!.url).pathname;
    expect((await call(path)).status).toBe(200);

    const gone = await call(`/api/v1/statuses/${s.id}`, {
      method: "DELETE",
      token: u.token,
      vars: { MEDIA: failingMedia } as unknown as Record<string, string>,
    });
    expect(gone.status).toBe(200);
    expect(await env.MEDIA.head(key)).not.toBeNull();
    expect(await queued(key)).toBe(1);

    // The cron while R2 still fails: nothing is lost.
    await runCron({ ...env, MEDIA: failingMedia });
    expect(await env.MEDIA.head(key)).not.toBeNull();
    expect(await queued(key)).toBe(1);

    // R2 works again: the file is gone, and so is its row.
    await runCron();
    expect(await env.MEDIA.head(key)).toBeNull();
    expect((await call(path)).status).toBe(404);
    expect(await queued(key)).toBe(0);
    expect((await call(`/api/v1/statuses/${s.id}`, { token: u.token })).status).toBe(404);
  });

  it("are deleted at once after the answer when R2 works (the queue drained by the next cron run)", async () => {
    const u = await registerUser();
    const media = valid(MediaAttachmentSchema, await upload(u));
    const s = valid(StatusSchema, await post(u, { status: "a picture", media_ids: [media.id] }));
    const key = (await env.DB.prepare("SELECT file FROM media_attachments WHERE id = ?")
      .bind(media.id)
      .first<{ file: string }>())!.file;
    await json(`/api/v1/statuses/${s.id}`, { method: "DELETE", token: u.token });
    expect(await env.MEDIA.head(key)).toBeNull();
    await runCron();
    expect(await queued(key)).toBe(0);
  });
});

const R2_DOWN = { MEDIA: failingMedia } as unknown as Record<string, string>;
const keyOf = (url: string) => new URL(url).pathname.replace(/^\/media\//, "");

function imageForm(field: string) {
  const form = new FormData();
  form.set(field, new File([PNG_1PX], "a.png"));
  return form;
}

/** Sets an image through `path` (PATCH or PUT, multipart `field`) with R2 failing its deletes; answers its URL. */
async function setImage(token: string, method: string, path: string, field: string, vars?: Record<string, string>) {
  const res = await call(path, { method, token, body: imageForm(field), vars });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("replaced profile images", () => {
  it("avatar, header and mascot: queued in the saving batch, deleted by the cron once R2 works", async () => {
    const u = await registerUser();
    const first = valid(
      AccountSchema,
      await setImage(u.token, "PATCH", "/api/v1/accounts/update_credentials", "avatar"),
    );
    const header = valid(
      AccountSchema,
      await setImage(u.token, "PATCH", "/api/v1/accounts/update_credentials", "header"),
    );
    const banner = await setImage(u.token, "PATCH", "/api/v1/pleroma/accounts/update_banner", "banner");
    const mascot = valid(MediaAttachmentSchema, await setImage(u.token, "PUT", "/api/v1/pleroma/mascot", "file"));
    const old = [keyOf(first.avatar), keyOf(header.header), keyOf(banner.url as string), keyOf(mascot.url)];
    for (const k of [old[0]!, old[2]!, old[3]!]) expect(await env.MEDIA.head(k)).not.toBeNull();
    // The header was replaced by the banner already (R2 working): gone at once.
    await expect.poll(async () => env.MEDIA.head(old[1]!)).toBeNull();

    // Replaced while R2 fails its deletes: the answers are fine, the old files stay, queued.
    const now = valid(
      AccountSchema,
      await setImage(u.token, "PATCH", "/api/v1/accounts/update_credentials", "avatar", R2_DOWN),
    );
    expect(now.avatar).not.toBe(first.avatar);
    await setImage(u.token, "PATCH", "/api/v1/pleroma/accounts/update_banner", "banner", R2_DOWN);
    const mascot2 = valid(
      MediaAttachmentSchema,
      await setImage(u.token, "PUT", "/api/v1/pleroma/mascot", "file", R2_DOWN),
    );
    expect(mascot2.id).not.toBe(mascot.id);
    for (const k of [old[0]!, old[2]!, old[3]!]) {
      expect(await env.MEDIA.head(k)).not.toBeNull();
      expect(await queued(k)).toBe(1);
    }

    await runCron();
    for (const k of [old[0]!, old[2]!, old[3]!]) {
      expect(await env.MEDIA.head(k)).toBeNull();
      expect(await queued(k)).toBe(0);
    }
    // The current ones are untouched.
    const me = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: u.token }));
    expect((await call(me.avatar)).status).toBe(200);
    expect((await call(me.header)).status).toBe(200);
    expect((await call(mascot2.url)).status).toBe(200);
  });
});

describe("uploads never attached", () => {
  it("lose their row and keep their file queued while R2 fails; the cron deletes it once R2 works", async () => {
    const u = await registerUser();
    const loose = valid(MediaAttachmentSchema, await upload(u));
    const kept = valid(MediaAttachmentSchema, await upload(u));
    const keyOfMedia = async (id: string) =>
      (await env.DB.prepare("SELECT file FROM media_attachments WHERE id = ?").bind(id).first<{ file: string }>())!
        .file;
    const [key, keptKey] = [await keyOfMedia(loose.id), await keyOfMedia(kept.id)];
    await env.DB.prepare("UPDATE media_attachments SET created_at = ? WHERE id = ?")
      .bind(Date.now() - 2 * 86_400_000, loose.id)
      .run();

    await runCron({ ...env, MEDIA: failingMedia });
    expect((await call(`/api/v1/media/${loose.id}`, { token: u.token })).status).toBe(404);
    expect(await env.MEDIA.head(key)).not.toBeNull();
    expect(await queued(key)).toBe(1);

    await runCron();
    expect(await env.MEDIA.head(key)).toBeNull();
    expect(await queued(key)).toBe(0);
    // A fresh upload is neither collected nor queued.
    expect((await call(`/api/v1/media/${kept.id}`, { token: u.token })).status).toBe(200);
    expect(await env.MEDIA.head(keptKey)).not.toBeNull();
    expect(await queued(keptKey)).toBe(0);
  });
});
