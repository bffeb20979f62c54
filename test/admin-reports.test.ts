import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, makeAdmin, post, registerUser, valid, type TestUser } from "./helpers";
import { AdminReportSchema, AdminReportsSchema, ModerationLogSchema } from "../src/schemas/admin";

const A = "/api/v1/pleroma/admin";

async function admin(): Promise<TestUser> {
  const u = await registerUser({ scopes: "read write follow push admin" });
  await makeAdmin(u.id);
  return u;
}

describe("admin reports", () => {
  it("lists, shows, changes state in bulk with per-item errors, and keeps notes, all logged", async () => {
    const boss = await admin();
    const reporter = await registerUser();
    const target = await registerUser();
    const pub = await post(target, { status: "reported publicly" });
    const made = await json("/api/v1/reports", {
      token: reporter.token,
      body: { account_id: target.id, status_ids: [pub.id], comment: "spam" },
    });

    const list = valid(AdminReportsSchema, await json(`${A}/reports?state=open&page_size=100`, { token: boss.token }));
    const mine = list.reports.find((r) => r.id === made.id)!;
    expect(mine).toMatchObject({
      content: "spam",
      state: "open",
      account: { id: target.id, nickname: target.username },
      actor: { id: reporter.id },
    });
    expect(mine.statuses.map((s) => s.id)).toEqual([pub.id]);
    expect(list.total).toBeGreaterThanOrEqual(1);

    const one = valid(AdminReportSchema, await json(`${A}/reports/${made.id}`, { token: boss.token }));
    expect(one.id).toBe(made.id);
    await json(`${A}/reports/nope`, { token: boss.token, status: 404 });

    const partial = await json(`${A}/reports`, {
      method: "PATCH",
      token: boss.token,
      body: {
        reports: [
          { id: made.id, state: "resolved" },
          { id: "missing", state: "closed" },
          { id: made.id, state: "weird" },
        ],
      },
      status: 400,
    });
    expect(partial).toEqual([
      { id: "missing", error: "not_found" },
      { id: made.id, error: "Unsupported state" },
    ]);
    expect((await json(`${A}/reports/${made.id}`, { token: boss.token })).state).toBe("resolved");
    const ok = await call(`${A}/reports`, {
      method: "PATCH",
      token: boss.token,
      body: { reports: [{ id: made.id, state: "closed" }] },
    });
    expect(ok.status).toBe(204);
    const closed = valid(
      AdminReportsSchema,
      await json(`${A}/reports?state=closed&page_size=500`, { token: boss.token }),
    );
    expect(closed.reports.some((r) => r.id === made.id)).toBe(true);

    expect(
      (await call(`${A}/reports/${made.id}/notes`, { token: boss.token, body: { content: "looked at it" } })).status,
    ).toBe(204);
    const withNote = valid(AdminReportSchema, await json(`${A}/reports/${made.id}`, { token: boss.token }));
    expect(withNote.notes).toHaveLength(1);
    expect(withNote.notes[0]).toMatchObject({ content: "looked at it", user: { id: boss.id } });
    await json(`${A}/reports/${made.id}/notes`, { token: boss.token, body: { content: "" }, status: 400 });
    await json(`${A}/reports/nope/notes`, { token: boss.token, body: { content: "x" }, status: 404 });
    expect(
      (await call(`${A}/reports/${made.id}/notes/${withNote.notes[0]!.id}`, { method: "DELETE", token: boss.token }))
        .status,
    ).toBe(204);
    expect((await json(`${A}/reports/${made.id}`, { token: boss.token })).notes).toEqual([]);

    const log = valid(
      ModerationLogSchema,
      await json(`${A}/moderation_log?user_id=${boss.id}&page_size=50`, { token: boss.token }),
    );
    expect(log.items.map((i) => i.message)).toEqual([
      `@${boss.username} deleted note 'looked at it' from report #${made.id} on user @${target.username}`,
      `@${boss.username} added note 'looked at it' to report #${made.id} on user @${target.username}`,
      `@${boss.username} updated report #${made.id} (on user @${target.username}) with 'closed' state`,
      `@${boss.username} updated report #${made.id} (on user @${target.username}) with 'resolved' state`,
    ]);
  });

  it("lets moderators act on reports; refuses plain users and tokens without admin scope", async () => {
    const mod = await registerUser({ scopes: "read write admin" });
    await env.DB.prepare("UPDATE users SET is_moderator = 1 WHERE account_id = ?").bind(mod.id).run();
    valid(AdminReportsSchema, await json(`${A}/reports`, { token: mod.token }));
    const plain = await registerUser({ scopes: "read write admin" });
    expect((await json(`${A}/reports`, { token: plain.token, status: 403 })).error).toBe("User isn't privileged.");
    const noScope = await registerUser();
    await makeAdmin(noScope.id);
    await json(`${A}/reports`, { token: noScope.token, status: 403 });
    expect((await call(`${A}/reports`)).status).toBe(403);
  });
});
