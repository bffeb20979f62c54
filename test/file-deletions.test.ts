/**
 * A deleted status's files leave R2 even when the delete after the answer fails (services/file-deletions.ts): the
 * keys are queued in the deleting batch and the cron deletes what is still there once R2 works again.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { MediaAttachmentSchema, StatusSchema } from "../src/schemas/status";
import { call, json, post, registerUser, upload, valid } from "./helpers";

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
