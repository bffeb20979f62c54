/**
 * Durable mail (services/mail-queue.ts): an action queues its mail in its own batch, the door sends it after the
 * answer; a send that fails stays queued with its error and is sent by a later cron run; a drain never sends a
 * mail twice; a mail that keeps failing is given up after a bounded number of attempts.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { db } from "../src/db/client";
import { newId } from "../src/db/ids";
import { MAX_ATTEMPTS, sendQueuedMail } from "../src/services/mail-queue";
import { call, registerUser } from "./helpers";

/** No `send_email` binding: every Cloudflare send fails, as an unverified destination would. */
const BROKEN = { MAILER: "cloudflare" };

async function runCron(at: number) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(at), cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

const queued = (to: string) =>
  env.DB.prepare('SELECT attempts, next_at, last_error FROM mail_queue WHERE "to" = ?')
    .bind(to)
    .all<{ attempts: number; next_at: number; last_error: string | null }>()
    .then((r) => r.results);
const sent = (to: string) =>
  env.DB.prepare('SELECT subject FROM mail_outbox WHERE "to" = ?')
    .bind(to)
    .all<{ subject: string }>()
    .then((r) => r.results.map((m) => m.subject));

async function queue(to: string, attempts = 0, nextAt = Date.now()) {
  await env.DB.prepare(
    `INSERT INTO mail_queue (id, "from", "to", subject, text, html, attempts, next_at, created_at)
      VALUES (?, 'no-reply@localhost', ?, 'Queued', 't', '<p>t</p>', ?, ?, ?)`,
  )
    .bind(newId(), to, attempts, nextAt, nextAt)
    .run();
}

describe("durable mail", () => {
  it("a reset link whose send fails stays queued with its error, and the cron sends it once due", async () => {
    const user = await registerUser();
    const res = await call("/auth/password", { body: { email: user.email }, vars: BROKEN });
    expect(res.status).toBe(204);
    // The link and its mail were one batch; the door's send failed: kept, with why, for a minute from now.
    const [row] = await queued(user.email);
    expect(row).toMatchObject({ attempts: 1 });
    expect(row!.last_error).toMatch(/send_email binding/);
    expect(row!.next_at).toBeGreaterThan(Date.now() + 30_000);
    expect(await sent(user.email)).toEqual([]);
    // Not yet due: a run now leaves it.
    await runCron(Date.now());
    expect(await sent(user.email)).toEqual([]);
    // Due: sent once, and gone from the queue.
    await runCron(row!.next_at + 1);
    expect(await sent(user.email)).toEqual(["Password reset"]);
    expect(await queued(user.email)).toEqual([]);
    await runCron(row!.next_at + 120_000);
    expect(await sent(user.email)).toEqual(["Password reset"]);
  });

  it("two drains at once send a mail once", async () => {
    const to = `race${newId()}@example.com`;
    await queue(to);
    await Promise.all([sendQueuedMail(env, db(env)), sendQueuedMail(env, db(env))]);
    expect(await sent(to)).toEqual(["Queued"]);
    expect(await queued(to)).toEqual([]);
  });

  it("each failure waits longer, and the last allowed attempt gives the mail up", async () => {
    const to = `fail${newId()}@example.com`;
    const broken = { ...env, ...BROKEN } as typeof env;
    const t = Date.now();
    await queue(to, 3, t);
    await sendQueuedMail(broken, db(broken), t);
    // The fourth attempt failed: eight minutes until the fifth.
    expect((await queued(to))[0]).toMatchObject({ attempts: 4, next_at: t + 8 * 60_000 });
    await env.DB.prepare('UPDATE mail_queue SET attempts = ?, next_at = ? WHERE "to" = ?')
      .bind(MAX_ATTEMPTS - 1, t, to)
      .run();
    await sendQueuedMail(broken, db(broken), t);
    expect(await queued(to)).toEqual([]);
    expect(await sent(to)).toEqual([]);
  });
});
