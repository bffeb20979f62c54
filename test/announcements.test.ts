/**
 * Announcements (issue 17): Pleroma's admin CRUD and the client API. On instance C (test/instances.ts), since
 * announcements are instance-wide and other files expect none on A.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { newId } from "../src/db/ids";
import { AnnouncementSchema } from "../src/schemas/instance";
import { call, json, registerUser, valid, type TestUser } from "./helpers";
import { C } from "./instances";

const ADMIN_SCOPES = "read write follow push admin";
const list = (v: unknown) => z.array(AnnouncementSchema).parse(v);

async function staff(role: "admin" | "moderator" | null): Promise<TestUser> {
  const u = await registerUser({ instance: C, scopes: ADMIN_SCOPES });
  if (role) await env.DB_C.prepare(`UPDATE users SET is_${role} = 1 WHERE account_id = ?`).bind(u.id).run();
  return u;
}

const admin = (
  u: TestUser,
  path: string,
  opts: { method?: string; body?: Record<string, unknown>; status?: number } = {},
) => json(`/api/v1/pleroma/admin/announcements${path}`, { instance: C, token: u.token, ...opts });

describe("announcements", () => {
  it("admins create, list, show, change and delete them; each action is logged", async () => {
    const boss = await staff("admin");
    const text = `Maintenance tonight ${newId()}\nsee https://status.example`;
    const made = valid(AnnouncementSchema, await admin(boss, "", { body: { content: text, all_day: true } }));
    expect(made).toMatchObject({
      all_day: true,
      starts_at: null,
      ends_at: null,
      read: false,
      pleroma: { raw_content: text },
    });
    expect(made.content).toContain("<br/>");
    expect(made.content).toContain('href="https://status.example"');

    const page = list(await admin(boss, "?limit=50"));
    expect(page[0]!.id).toBe(made.id);
    expect(list(await admin(boss, "?limit=1&offset=0"))).toHaveLength(1);
    expect(valid(AnnouncementSchema, await admin(boss, `/${made.id}`)).id).toBe(made.id);

    const starts = "2030-01-01T00:00:00.000Z";
    const changed = valid(
      AnnouncementSchema,
      await admin(boss, `/${made.id}`, { method: "PATCH", body: { content: "Changed", starts_at: starts } }),
    );
    expect(changed).toMatchObject({ content: "Changed", starts_at: starts, all_day: true });

    expect(await admin(boss, `/${made.id}`, { method: "DELETE" })).toEqual({});
    expect(await admin(boss, `/${made.id}`, { status: 404 })).toEqual({ error: "Not found" });
    expect(await admin(boss, `/${made.id}`, { method: "DELETE", status: 404 })).toEqual({ error: "Not found" });
    expect(await admin(boss, `/${made.id}`, { method: "PATCH", body: { content: "x" }, status: 404 })).toEqual({
      error: "Not found",
    });

    const log = await env.DB_C.prepare(
      "SELECT action, json_extract(data, '$.message') AS message, json_extract(data, '$.actor.nickname') AS nickname FROM moderation_log WHERE actor_id = ? ORDER BY id",
    )
      .bind(boss.id)
      .all<{ action: string; message: string; nickname: string }>();
    expect(log.results.map((r) => r.action)).toEqual([
      "announcement_create",
      "announcement_update",
      "announcement_delete",
    ]);
    // Logged under the admin's nickname, as every other admin action.
    expect(log.results.map((r) => [r.nickname, r.message])).toEqual(
      ["created", "updated", "deleted"].map((verb) => [
        boss.username,
        `@${boss.username} ${verb} announcement ${made.id}`,
      ]),
    );
  });

  it("refuse bad input and callers without the privilege", async () => {
    const [boss, moderator, user] = await Promise.all([staff("admin"), staff("moderator"), staff(null)]);
    expect((await admin(boss, "", { body: { content: "" }, status: 400 })).error).toBeTruthy();
    expect(
      (await admin(boss, "", { body: { content: "x", starts_at: "not a time" }, status: 400 })).error,
    ).toBeTruthy();
    expect(
      await admin(boss, "", {
        body: { content: "x", starts_at: "2030-01-02T00:00:00Z", ends_at: "2030-01-01T00:00:00Z" },
        status: 400,
      }),
    ).toEqual({
      error: "ends_at must not be before starts_at",
    });
    for (const u of [moderator, user]) {
      expect(await admin(u, "", { status: 403 })).toEqual({ error: "User isn't privileged." });
      expect(await admin(u, "", { body: { content: "sneaky" }, status: 403 })).toEqual({
        error: "User isn't privileged.",
      });
    }
    const count = await env.DB_C.prepare("SELECT count(*) AS n FROM announcements WHERE content = 'sneaky'").first("n");
    expect(count).toBe(0);
  });

  it("clients see those in force, with read per user, dismiss them, and see dismissed ones when asked", async () => {
    const boss = await staff("admin");
    const [alice, bob] = await Promise.all([staff(null), staff(null)]);
    const now = Date.now();
    const current = valid(
      AnnouncementSchema,
      await admin(boss, "", { body: { content: `Now ${newId()}`, ends_at: new Date(now + 3600_000).toISOString() } }),
    );
    const future = valid(
      AnnouncementSchema,
      await admin(boss, "", {
        body: { content: `Later ${newId()}`, starts_at: new Date(now + 3600_000).toISOString() },
      }),
    );
    const past = valid(
      AnnouncementSchema,
      await admin(boss, "", { body: { content: `Before ${newId()}`, ends_at: new Date(now - 1000).toISOString() } }),
    );
    try {
      const ids = (v: unknown) => list(v).map((a) => a.id);
      const seen = ids(await json("/api/v1/announcements", { instance: C, token: alice.token }));
      expect(seen).toContain(current.id);
      expect(seen).not.toContain(future.id);
      expect(seen).not.toContain(past.id);
      expect(ids(await json("/api/v1/announcements", { instance: C }))).toContain(current.id);

      expect(
        await json(`/api/v1/announcements/${current.id}/dismiss`, { instance: C, token: alice.token, body: {} }),
      ).toEqual({});
      // Twice is fine.
      expect(
        await json(`/api/v1/announcements/${current.id}/dismiss`, { instance: C, token: alice.token, body: {} }),
      ).toEqual({});
      expect(ids(await json("/api/v1/announcements", { instance: C, token: alice.token }))).not.toContain(current.id);
      const withDismissed = list(
        await json("/api/v1/announcements?with_dismissed=true", { instance: C, token: alice.token }),
      );
      expect(withDismissed.find((a) => a.id === current.id)!.read).toBe(true);
      // Bob's are his own.
      expect(
        list(await json("/api/v1/announcements", { instance: C, token: bob.token })).find((a) => a.id === current.id)!
          .read,
      ).toBe(false);

      expect(
        await json(`/api/v1/announcements/${newId()}/dismiss`, {
          instance: C,
          token: alice.token,
          body: {},
          status: 404,
        }),
      ).toEqual({ error: "Record not found" });
      expect(
        (await call(`/api/v1/announcements/${current.id}/dismiss`, { instance: C, method: "POST", body: {} })).status,
      ).toBe(403);
    } finally {
      for (const a of [current, future, past]) await admin(boss, `/${a.id}`, { method: "DELETE" });
    }
  });
});
