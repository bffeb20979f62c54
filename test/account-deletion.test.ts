/**
 * delete_account / disable_account (Pleroma's UtilController) and the background deletion job: the account
 * hides at once, the cron empties it in bounded steps (statuses, media rows and R2 objects, relationships both
 * ways, tokens…), and a Delete of the actor reaches the other instance.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runScheduled } from "../src/cron/index";
import { runAccountDeletions, STEPS_PER_RUN } from "../src/services/account-deletion";
import { processBackups } from "../src/services/backups";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";
import { HealthcheckSchema } from "../src/schemas/instance";
import { NotificationPolicySchema, NotificationRequestSchema } from "../src/schemas/notification-groups";
import { call, json, post, registerUser, upload, valid } from "./helpers";
import { A, B, federating, findRemote } from "./instances";
import { measure, meteredEnv } from "../src/lib/meter";

const count = async (sql: string, ...args: unknown[]) =>
  (await (
    args.length
      ? env.DB.prepare(`SELECT count(*) AS n FROM (${sql})`).bind(...args)
      : env.DB.prepare(`SELECT count(*) AS n FROM (${sql})`)
  ).first<{ n: number }>())!.n;

const deletion = (id: string, db: D1Database = env.DB) =>
  db
    .prepare("SELECT * FROM account_deletions WHERE account_id = ?")
    .bind(id)
    .first<{ finished_at: number | null; statuses_deleted: number }>();

/** Deletes the account through the API (`delete_account` with its password). */
async function deleteAccount(u: { token: string; password: string }) {
  expect(
    await json("/api/pleroma/delete_account", { method: "POST", token: u.token, body: { password: u.password } }),
  ).toEqual({ status: "success" });
}

/** Runs the cron until the account's deletion has finished (bounded), answering how many runs it took. */
async function runUntilDeleted(id: string, run: () => Promise<unknown>, max = 100) {
  for (let i = 1; i <= max; i++) {
    await run();
    if ((await deletion(id))?.finished_at) return i;
  }
  throw new Error("deletion did not finish");
}

describe("delete_account and disable_account", () => {
  it("refuse a wrong or missing password with Pleroma's answer, changing nothing", async () => {
    const u = await registerUser();
    for (const [path, method, body] of [
      ["/api/pleroma/delete_account", "POST", { password: "wrong" }],
      ["/api/v1/pleroma/delete_account", "DELETE", undefined],
      ["/api/pleroma/disable_account", "POST", { password: "nope" }],
      ["/api/pleroma/disable_account", "POST", {}],
    ] as const) {
      const res = await call(path, { method, token: u.token, body });
      expect(res.status, path).toBe(200);
      expect(await res.json()).toEqual({ error: "Invalid password." });
    }
    expect(await deletion(u.id)).toBeNull();
    valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: u.token }));
    // Without a user: 403, as every user endpoint.
    expect((await call("/api/pleroma/delete_account", { method: "POST", body: { password: u.password } })).status).toBe(
      403,
    );
  });

  it("needs write:accounts", async () => {
    const u = await registerUser({ scopes: "read" });
    const res = await call("/api/pleroma/disable_account", {
      method: "POST",
      token: u.token,
      body: { password: u.password },
    });
    expect(res.status).toBe(403);
    expect((await res.json<{ error: string }>()).error).toMatch(/write:accounts/);
  });

  it("disable_account deactivates the account and revokes its tokens", async () => {
    const u = await registerUser();
    const other = await registerUser();
    await post(u, { status: "still here?" });
    expect(
      await json("/api/pleroma/disable_account", { method: "POST", token: u.token, body: { password: u.password } }),
    ).toEqual({ status: "success" });
    expect((await call("/api/v1/accounts/verify_credentials", { token: u.token })).status).toBe(403);
    expect(await count("SELECT 1 FROM tokens WHERE account_id = ?", u.id)).toBe(0);
    expect((await call(`/api/v1/accounts/${u.id}`, { token: other.token })).status).toBe(404);
    // Disabled, not deleted: the data stays, and signing in is refused with Pleroma's identifier.
    expect(await deletion(u.id)).toBeNull();
    expect(await count("SELECT 1 FROM statuses WHERE account_id = ?", u.id)).toBe(1);
    const res = await call("/oauth/token", {
      method: "POST",
      body: {
        grant_type: "password",
        username: u.username,
        password: u.password,
        client_id: u.app.client_id,
        client_secret: u.app.client_secret,
      },
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ identifier: "account_is_disabled" });
  });

  it("delete_account (DELETE with the password in the query) hides the account at once and empties it in the background", async () => {
    const u = await registerUser();
    const friend = await registerUser();
    const status = valid(StatusSchema, await post(u, { status: "goodbye" }));
    const media = await upload(u);
    await json(`/api/v1/accounts/${u.id}/follow`, { method: "POST", token: friend.token });
    await json(`/api/v1/accounts/${friend.id}/follow`, { method: "POST", token: u.token });
    await json(`/api/v1/statuses/${status.id}/favourite`, { method: "POST", token: friend.token });
    const fstatus = valid(StatusSchema, await post(friend, { status: "hi" }));
    await json(`/api/v1/statuses/${fstatus.id}/bookmark`, { method: "POST", token: u.token });
    await json("/api/v1/lists", { method: "POST", token: u.token, body: { title: "l" } });
    // A chat both ways, and MFA backup codes: they go too.
    const chat = await json<{ id: string }>(`/api/v1/pleroma/chats/by-account-id/${friend.id}`, {
      method: "POST",
      token: u.token,
    });
    await json(`/api/v1/pleroma/chats/${chat.id}/messages`, {
      method: "POST",
      token: u.token,
      body: { content: "bye" },
    });
    await json(`/api/v1/pleroma/chats/${chat.id}/messages`, {
      method: "POST",
      token: friend.token,
      body: { content: "why?" },
    });
    await json("/api/pleroma/accounts/mfa/backup_codes", { token: u.token });
    expect(await count("SELECT 1 FROM mfa_backup_codes WHERE account_id = ?", u.id)).toBeGreaterThan(0);
    const file = (await env.DB.prepare("SELECT file FROM media_attachments WHERE id = ?")
      .bind(media.id)
      .first<{ file: string }>())!.file;
    expect(await env.MEDIA.head(file)).not.toBeNull();
    // A backup made before: its archive goes too.
    await json("/api/v1/pleroma/backups", { method: "POST", token: u.token });
    await processBackups(env, Date.now());
    const archive = (await env.DB.prepare("SELECT file_key FROM backups WHERE account_id = ? AND state = 'complete'")
      .bind(u.id)
      .first<{ file_key: string }>())!.file_key;
    expect(await env.PRIVATE.head(archive)).not.toBeNull();

    const res = await call(`/api/pleroma/delete_account?password=${encodeURIComponent(u.password)}`, {
      method: "DELETE",
      token: u.token,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "success" });
    // At once: tokens gone, the account and its statuses hidden.
    expect((await call("/api/v1/accounts/verify_credentials", { token: u.token })).status).toBe(403);
    expect((await call(`/api/v1/accounts/${u.id}`, { token: friend.token })).status).toBe(404);
    expect((await call(`/api/v1/statuses/${status.id}`, { token: friend.token })).status).toBe(404);
    expect((await deletion(u.id))?.finished_at).toBeNull();

    await runUntilDeleted(u.id, () => runAccountDeletions(env, Date.now()));
    for (const [table, where] of [
      ["statuses", "account_id = ?1"],
      ["media_attachments", "account_id = ?1"],
      ["favourites", "account_id = ?1 OR status_id = '" + status.id + "'"],
      ["bookmarks", "account_id = ?1"],
      ["follows", "account_id = ?1 OR target_account_id = ?1"],
      ["notifications", "account_id = ?1 OR from_account_id = ?1"],
      ["lists", "account_id = ?1"],
      ["tokens", "account_id = ?1"],
      ["credentials", "account_id = ?1"],
      ["users", "account_id = ?1"],
      ["chats", "a_id = ?1 OR b_id = ?1"],
      ["chat_messages", `account_id = ?1 OR chat_id = '${chat.id}'`],
      ["mfa_backup_codes", "account_id = ?1"],
    ]) {
      expect(await count(`SELECT 1 FROM ${table} WHERE ${where}`, u.id), table).toBe(0);
    }
    expect(await env.MEDIA.head(file)).toBeNull();
    expect(await env.PRIVATE.head(archive)).toBeNull();
    expect(await count("SELECT 1 FROM backups WHERE account_id = ?", u.id)).toBe(0);
    // The friend's counters no longer count the deleted account; their own status is untouched.
    const f = valid(AccountSchema, await json(`/api/v1/accounts/${friend.id}`, { token: friend.token }));
    expect([f.followers_count, f.following_count]).toEqual([0, 0]);
    valid(StatusSchema, await json(`/api/v1/statuses/${fstatus.id}`, { token: friend.token }));
    // A tombstone stays: still hidden, and the nickname cannot be registered again.
    const tomb = await env.DB.prepare("SELECT deactivated, display_name, note FROM accounts WHERE id = ?")
      .bind(u.id)
      .first();
    expect(tomb).toEqual({ deactivated: 1, display_name: "", note: "" });
    expect((await call(`/api/v1/accounts/${u.id}`)).status).toBe(404);
    await expect(registerUser({ username: u.username })).rejects.toThrow();
    // Running the deletions again after the end changes nothing: the job stays finished, the tombstone as it is.
    const job = async () => env.DB.prepare("SELECT * FROM account_deletions WHERE account_id = ?").bind(u.id).first();
    const finished = await job();
    expect(finished!.finished_at).not.toBeNull();
    await runAccountDeletions(env, Date.now() + 60_000);
    expect(await job()).toEqual(finished);
    expect(
      await env.DB.prepare("SELECT deactivated, display_name, note FROM accounts WHERE id = ?").bind(u.id).first(),
    ).toEqual(tomb);
  });

  it("deletes an account with 10,000 statuses and 1,000 media through the cron, leaving no rows or R2 objects", async () => {
    const u = await registerUser();
    const fans = [await registerUser(), await registerUser()];
    const t = Date.now();
    const prefix = `del-${u.id}-`;
    // Statuses, set-based: 10,000 rows in one statement.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
       INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
       SELECT ?1 || printf('%05d', i), 'http://localhost/objects/' || ?1 || i, 'http://localhost/notice/' || ?1 || i, ?2, ?1 || printf('%05d', i), 'ctx', 'p', 'p', 'public', 1, ?3 + i FROM n`,
    )
      .bind(prefix, u.id, t)
      .run();
    // 1,000 media on the first 1,000 statuses, their files in R2.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
       INSERT INTO media_attachments (id, account_id, status_id, file, mime_type, type, created_at)
       SELECT ?1 || 'm' || i, ?2, ?1 || printf('%05d', i), 'seed/' || ?2 || '/' || i || '.png', 'image/png', 'image', ?3 FROM n`,
    )
      .bind(prefix, u.id, t)
      .run();
    for (let i = 0; i < 1000; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, k) => env.MEDIA.put(`seed/${u.id}/${i + k + 1}.png`, "x")));
    }
    // Others' rows about it: favourites and notifications of 500 statuses, follows both ways.
    for (const fan of fans) {
      await env.DB.prepare(
        `INSERT INTO favourites (id, account_id, status_id, created_at) SELECT ?1 || 'f' || id, ?1, id, ?2 FROM statuses WHERE account_id = ?3 LIMIT 500`,
      )
        .bind(fan.id, t, u.id)
        .run();
      await json(`/api/v1/accounts/${u.id}/follow`, { method: "POST", token: fan.token });
    }
    await env.DB.prepare(
      `INSERT INTO notifications (id, account_id, from_account_id, type, status_id, created_at) SELECT 'n' || f.id, ?1, f.account_id, 'favourite', f.status_id, ?2 FROM favourites f WHERE f.status_id LIKE ?3`,
    )
      .bind(u.id, t, `${prefix}%`)
      .run();
    expect(await count("SELECT 1 FROM statuses WHERE account_id = ?", u.id)).toBe(10_000);
    expect((await env.MEDIA.list({ prefix: `seed/${u.id}/`, limit: 1000 })).objects).toHaveLength(1000);

    expect(
      await json("/api/pleroma/delete_account", { method: "POST", token: u.token, body: { password: u.password } }),
    ).toEqual({ status: "success" });
    // Each cron run does a bounded number of steps (STATUS_BATCH statuses each).
    const steps: number[] = [];
    const runs = await runUntilDeleted(u.id, async () => {
      const before = (await deletion(u.id))!.statuses_deleted;
      await runScheduled(env, Date.now());
      steps.push((await deletion(u.id))!.statuses_deleted - before);
    });
    expect(runs).toBeGreaterThan(5);
    expect(Math.max(...steps)).toBeLessThanOrEqual(STEPS_PER_RUN * 200);
    expect((await deletion(u.id))!.statuses_deleted).toBe(10_000);

    for (const q of [
      "SELECT 1 FROM statuses WHERE account_id = ?1",
      "SELECT 1 FROM statuses WHERE id LIKE ?2",
      "SELECT 1 FROM media_attachments WHERE account_id = ?1",
      "SELECT 1 FROM favourites WHERE status_id LIKE ?2",
      "SELECT 1 FROM notifications WHERE account_id = ?1 OR from_account_id = ?1",
      "SELECT 1 FROM follows WHERE account_id = ?1 OR target_account_id = ?1",
      "SELECT 1 FROM home_feed WHERE account_id = ?1 OR status_id LIKE ?2",
      "SELECT 1 FROM tokens WHERE account_id = ?1",
      "SELECT 1 FROM credentials WHERE account_id = ?1",
      "SELECT 1 FROM users WHERE account_id = ?1",
    ]) {
      expect(await count(q.replaceAll("?2", `'${prefix}%'`).replaceAll("?1", `'${u.id}'`)), q).toBe(0);
    }
    expect((await env.MEDIA.list({ prefix: `seed/${u.id}/` })).objects).toHaveLength(0);
    for (const fan of fans)
      expect(valid(AccountSchema, await json(`/api/v1/accounts/${fan.id}`, { token: fan.token })).following_count).toBe(
        0,
      );
    // The healthcheck lists the job like every cron job (a job that never failed has no heartbeat row of its own).
    const health = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck"));
    expect((health.job_queue_stats.jobs as Record<string, unknown>).account_deletions).toMatchObject({
      ok: true,
      last_error: null,
    });
  });
});

describe("the rows deletion leaves behind (review of services/)", () => {
  const filtering = (u: { token: string }) =>
    json("/api/v2/notifications/policy", { method: "PATCH", token: u.token, body: { for_not_following: "filter" } });
  const policy = async (u: { token: string }) =>
    valid(NotificationPolicySchema, await json("/api/v2/notifications/policy", { token: u.token }));
  const requestsOf = async (u: { token: string }) =>
    ((await json("/api/v1/notifications/requests", { token: u.token })) as unknown[]).map((r) =>
      valid(NotificationRequestSchema, r),
    );
  /** Accepts `u`'s request from `from` (a permission row from then on). */
  async function accept(u: { token: string }, from: string) {
    const r = (await requestsOf(u)).find((x) => x.account.id === from)!;
    expect(r, `a request from ${from}`).toBeTruthy();
    await json(`/api/v1/notifications/requests/${r.id}/accept`, { method: "POST", token: u.token });
  }

  it("notification requests and permissions both ways, group counts, severed relationships, announcement reads and interaction requests go", async () => {
    const [gone, friend, keeper] = [await registerUser(), await registerUser(), await registerUser()];
    for (const u of [gone, friend, keeper]) await filtering(u);
    // Requests both ways: friend and keeper each get one from gone (keeper accepts it), gone gets one from each (it
    // accepts keeper's).
    await post(gone, { status: `@${friend.username} @${keeper.username} hello` });
    await post(friend, { status: `@${gone.username} hi` });
    const keepers = valid(StatusSchema, await post(keeper, { status: `@${gone.username} hey` }));
    await accept(keeper, gone.id);
    await accept(gone, keeper.id);
    expect((await policy(friend)).summary).toMatchObject({ pending_requests_count: 1 });
    expect((await requestsOf(gone)).map((r) => r.account.id)).toEqual([friend.id]);
    const t = Date.now();
    const goneStatus = valid(StatusSchema, await post(gone, { status: "mine" }));
    await env.DB.batch([
      // A group count its notifications no longer account for (a drift): it goes too.
      env.DB.prepare(
        "INSERT INTO notification_group_counts (account_id, group_key, shown, filtered) VALUES (?, 'favourite-x-1', 1, 0)",
      ).bind(gone.id),
      env.DB.prepare(
        "INSERT INTO relationship_severance_events (id, type, target_name, created_at) VALUES (?1, 'domain_block', 'far.example', ?2)",
      ).bind(`sev${gone.id}`, t),
      env.DB.prepare(
        `INSERT INTO severed_relationships (id, account_id, event_id, followers_count, followers, created_at)
         VALUES (?1, ?1, 'sev' || ?1, 1, '["https://far.example/users/lost"]', ?2)`,
      ).bind(gone.id, t),
      env.DB.prepare(
        "INSERT INTO announcements (id, content, created_at, updated_at) VALUES (?1, 'news', ?2, ?2)",
      ).bind(`ann${gone.id}`, t),
      // Interaction requests both ways: one gone asked of keeper's post, one keeper asked of gone's.
      ...[
        [gone.id, keepers.id, keeper.id],
        [keeper.id, goneStatus.id, gone.id],
      ].map(([by, status, target], i) =>
        env.DB.prepare(
          `INSERT INTO interaction_requests (id, kind, account_id, status_id, target_account_id, interaction_id, interaction_uri, request_uri, state, created_at, updated_at)
           VALUES (?1, 'like', ?2, ?3, ?4, ?1, 'https://x.example/i/' || ?1, 'https://x.example/r/' || ?1, 'pending', ?5, ?5)`,
        ).bind(`ir${i}${gone.id}`, by, status, target, t),
      ),
    ]);
    await json(`/api/v1/announcements/ann${gone.id}/dismiss`, { method: "POST", token: gone.token });
    const tables: [string, string][] = [
      ["notification_requests", "account_id = ?1 OR from_account_id = ?1"],
      ["notification_permissions", "account_id = ?1 OR from_account_id = ?1"],
      ["notification_group_counts", "account_id = ?1"],
      ["severed_relationships", "account_id = ?1"],
      ["announcement_reads", "account_id = ?1"],
      ["interaction_requests", "account_id = ?1 OR target_account_id = ?1"],
    ];
    const before = await Promise.all(
      tables.map(([table, where]) => count(`SELECT 1 FROM ${table} WHERE ${where}`, gone.id)),
    );
    expect(before).toEqual([2, 2, 1, 1, 1, 2]);

    await deleteAccount(gone);
    await runUntilDeleted(gone.id, () => runAccountDeletions(env, Date.now()));
    for (const [table, where] of tables)
      expect(await count(`SELECT 1 FROM ${table} WHERE ${where}`, gone.id), table).toBe(0);
    // The others' rows stay: the shared severance event, the announcement, keeper's own post.
    expect(await count("SELECT 1 FROM relationship_severance_events WHERE id = ?", `sev${gone.id}`)).toBe(1);
    expect(await count("SELECT 1 FROM announcements WHERE id = ?", `ann${gone.id}`)).toBe(1);
    valid(StatusSchema, await json(`/api/v1/statuses/${keepers.id}`, { token: keeper.token }));
    // No badge with nothing behind it.
    expect((await policy(friend)).summary).toMatchObject({ pending_requests_count: 0, pending_notifications_count: 0 });
    expect(await requestsOf(friend)).toEqual([]);
  });
});

describe("what the deletion job reads while the actor's Delete waits to be delivered", () => {
  /** Notifications between two other users, set-based, to grow the table. */
  async function seedNotifications(n: number) {
    const [to, from] = [await registerUser(), await registerUser()];
    await env.DB.prepare(
      `INSERT INTO notifications (id, account_id, from_account_id, type, target_account_id, pushed, created_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       SELECT ?2 || printf('%06d', i), ?2, ?3, 'follow', CASE WHEN i % 10 = 0 THEN ?3 END, 1, ?4 + i FROM n`,
    )
      .bind(n, to.id, from.id, Date.now())
      .run();
  }

  /**
   * An account with a remote follower (so its actor's Delete has somewhere to go, and stays undelivered here) and
   * a local one, deleted through the API; then three cron minutes of the job, metered. Answers the rows each read.
   */
  async function deleteAndMeter(t: number) {
    const gone = await registerUser();
    const fan = await registerUser();
    const host = `far-${gone.id.toLowerCase()}.example`;
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO accounts (id, username, domain, uri, url, inbox_url, shared_inbox_url, created_at, updated_at)
         VALUES (?1, 'far', ?2, 'https://' || ?2 || '/u/far', 'https://' || ?2 || '/@far', 'https://' || ?2 || '/u/far/inbox', 'https://' || ?2 || '/inbox', ?3, ?3)`,
      ).bind(`far${gone.id}`, host, t),
      env.DB.prepare(
        "INSERT INTO follows (id, account_id, target_account_id, created_at) VALUES (?1 || 'f', ?1, ?2, ?3)",
      ).bind(`far${gone.id}`, gone.id, t),
    ]);
    await json(`/api/v1/accounts/${gone.id}/follow`, { method: "POST", token: fan.token });
    await post(gone, { status: "soon gone" });
    await deleteAccount(gone);
    const metered = meteredEnv(env);
    const reads: number[] = [];
    for (let minute = 0; minute < 3; minute++)
      reads.push((await measure(() => runAccountDeletions(metered, t + minute * 60_000))).usage.rowsRead);
    expect((await deletion(gone.id))?.finished_at).toBeNull();
    // The Delete delivered (its outbox row gone): the job ends, and the fan's counter no longer counts the account.
    await env.DB.prepare("DELETE FROM federation_outbox WHERE account_id = ?").bind(gone.id).run();
    await runUntilDeleted(gone.id, () => runAccountDeletions(env, t + 180_000));
    expect(
      valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: fan.token })).following_count,
    ).toBe(0);
    expect(await count("SELECT 1 FROM follows WHERE account_id = ?1 OR target_account_id = ?1", gone.id)).toBe(0);
    return reads;
  }

  it("three cron minutes read as many rows with 20,000 more notifications, and the waiting minutes read a few", async () => {
    const t = Date.now();
    await seedNotifications(500);
    const small = await deleteAndMeter(t);
    await seedNotifications(20_000);
    const large = await deleteAndMeter(t + 3600_000);
    expect(
      large.reduce((a, b) => a + b),
      `${small} then ${large}`,
    ).toBeLessThanOrEqual(small.reduce((a, b) => a + b) + 50);
    // A minute of waiting walks none of the account's tables again: a few index look-ups.
    expect(Math.max(large[1]!, large[2]!), `${large}`).toBeLessThan(100);
  });
});

describe("deleting an account federates a Delete of the actor", () => {
  const fed = federating();
  const { settle } = fed;

  it("reaches the followers' instance, which drops the account; the job waits for the delivery", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const aliceOnB = await findRemote(bob, B, alice, A);
    await json(`/api/v1/accounts/${aliceOnB.id}/follow`, { instance: B, token: bob.token, body: {} });
    await settle();
    expect(valid(AccountSchema, await json(`/api/v1/accounts/${alice.id}`, { instance: A })).followers_count).toBe(1);

    expect(
      await json("/api/pleroma/delete_account", {
        instance: A,
        method: "POST",
        token: alice.token,
        body: { password: alice.password },
      }),
    ).toEqual({ status: "success" });
    // Before the Delete is delivered, the job empties the account but keeps the follow and the key.
    await runAccountDeletions(A.bindings, Date.now(), 50);
    expect((await deletion(alice.id))?.finished_at).toBeNull();
    expect(await count("SELECT 1 FROM credentials WHERE account_id = ?", alice.id)).toBe(1);

    fed.routed.requests.length = 0;
    await settle();
    const deletes = await Promise.all(
      fed.routed.requests
        .filter((r) => r.method === "POST" && new URL(r.url).host === "b.example")
        .map(async (r) => (await r.clone().json()) as { type: string; object: unknown; actor: string }),
    );
    expect(deletes.find((d) => d.type === "Delete")).toMatchObject({
      actor: `https://a.example/users/${alice.username}`,
      object: `https://a.example/users/${alice.username}`,
    });
    // B: Alice is gone, Bob follows no one.
    expect((await call(`/api/v1/accounts/${aliceOnB.id}`, { instance: B, token: bob.token })).status).toBe(404);
    expect(
      valid(AccountSchema, await json(`/api/v1/accounts/${bob.id}`, { instance: B, token: bob.token })).following_count,
    ).toBe(0);

    // A: now the job finishes, and the actor answers 410 Gone.
    await runUntilDeleted(alice.id, () => runAccountDeletions(A.bindings, Date.now()));
    expect(await count("SELECT 1 FROM federation_outbox WHERE account_id = ?", alice.id)).toBe(0);
    expect(
      (await call(`/users/${alice.username}`, { instance: A, headers: { Accept: "application/activity+json" } }))
        .status,
    ).toBe(410);
  });
});
