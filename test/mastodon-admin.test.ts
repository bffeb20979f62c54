/**
 * The read side of Mastodon's admin API (issue 45: an admin's Soapbox polls `/api/v1/admin/accounts` and
 * `/api/v1/admin/reports` for its counters), over the same rows and privileges as Pleroma's admin routes. Every
 * entity is checked against Mastodon's documented Admin::Account and Admin::Report (src/schemas/admin.ts).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { call, json, makeAdmin, post, registerUser, remoteAccount, scopedToken, valid, type TestUser } from "./helpers";
import { MastodonAdminAccountSchema, MastodonAdminReportSchema } from "../src/schemas/admin";

const Accounts = z.array(MastodonAdminAccountSchema.strict());
const Reports = z.array(MastodonAdminReportSchema.strict());

async function admin(): Promise<TestUser> {
  const u = await registerUser({ scopes: "read write follow push admin" });
  await makeAdmin(u.id);
  return u;
}

describe("Mastodon's admin accounts", () => {
  it("lists accounts newest first with Mastodon's v1 and v2 filters, paged by id with a Link header", async () => {
    const boss = await admin();
    const [a, b] = [await registerUser(), await registerUser()];
    const remote = await remoteAccount();
    await env.DB.prepare(
      "UPDATE users SET approval_pending = 1, registration_reason = 'let me in' WHERE account_id = ?",
    )
      .bind(b.id)
      .run();

    const local = valid(Accounts, await json("/api/v1/admin/accounts?local=true&limit=200", { token: boss.token }));
    const ids = local.map((x) => x.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(ids).toEqual(expect.arrayContaining([boss.id, a.id, b.id]));
    expect(ids).not.toContain(remote.id);
    const me = local.find((x) => x.id === boss.id)!;
    expect(me).toMatchObject({ username: boss.username, domain: null, email: boss.email, confirmed: true });
    expect(me.role).toMatchObject({ name: "Admin", permissions: "1" });
    expect(me.account.id).toBe(boss.id);
    expect(local.find((x) => x.id === a.id)!.role.permissions).toBe("65536");

    const pending = valid(Accounts, await json("/api/v1/admin/accounts?pending=true", { token: boss.token }));
    expect(pending.map((x) => x.id)).toContain(b.id);
    expect(pending.find((x) => x.id === b.id)).toMatchObject({ approved: false, invite_request: "let me in" });
    expect(pending.every((x) => !x.approved)).toBe(true);
    const v2pending = valid(Accounts, await json("/api/v2/admin/accounts?status=pending", { token: boss.token }));
    expect(v2pending.map((x) => x.id)).toEqual(pending.map((x) => x.id));

    const far = valid(
      Accounts,
      await json(`/api/v2/admin/accounts?origin=remote&by_domain=${remote.domain}`, { token: boss.token }),
    );
    expect(far.map((x) => x.id)).toEqual([remote.id]);
    expect(far[0]).toMatchObject({ domain: remote.domain, email: "" });
    const staff = valid(Accounts, await json("/api/v1/admin/accounts?staff=true&limit=200", { token: boss.token }));
    expect(staff.map((x) => x.id)).toContain(boss.id);
    expect(staff.map((x) => x.id)).not.toContain(a.id);
    expect(
      valid(Accounts, await json(`/api/v1/admin/accounts?username=${a.username}`, { token: boss.token })).map(
        (x) => x.id,
      ),
    ).toEqual([a.id]);
    // What is not kept here matches nobody rather than everybody.
    expect(await json("/api/v1/admin/accounts?silenced=true", { token: boss.token })).toEqual([]);
    expect(await json("/api/v2/admin/accounts?ip=127.0.0.1", { token: boss.token })).toEqual([]);

    // Paging: two at a time, the Link header carries the filters and the cursors.
    const first = await call("/api/v1/admin/accounts?local=true&limit=2", { token: boss.token });
    const page1 = valid(Accounts, await first.json());
    expect(page1).toHaveLength(2);
    const link = first.headers.get("link")!;
    expect(link).toContain(`max_id=${page1[1].id}`);
    expect(link).toContain("local=true");
    const page2 = valid(
      Accounts,
      await json(`/api/v1/admin/accounts?local=true&limit=2&max_id=${page1[1].id}`, { token: boss.token }),
    );
    expect(page2.every((x) => x.id < page1[1].id)).toBe(true);
    const back = valid(
      Accounts,
      await json(`/api/v1/admin/accounts?local=true&limit=1&min_id=${page2[0].id}`, { token: boss.token }),
    );
    expect(back.map((x) => x.id)).toEqual([page1[1].id]);

    const one = valid(
      MastodonAdminAccountSchema.strict(),
      await json(`/api/v1/admin/accounts/${a.id}`, { token: boss.token }),
    );
    expect(one.id).toBe(a.id);
    await json("/api/v1/admin/accounts/01J0000000000000000000000Z", { token: boss.token, status: 404 });
  });

  it("refuses plain users, tokens without the admin scope, and anonymous callers", async () => {
    const boss = await admin();
    const plain = await registerUser({ scopes: "read write follow push admin" });
    await json("/api/v1/admin/accounts", { status: 403 });
    await json("/api/v1/admin/accounts", { token: plain.token, status: 403 });
    await json("/api/v1/admin/reports", { token: plain.token, status: 403 });
    const readOnly = await scopedToken(boss, "read");
    await json("/api/v1/admin/accounts", { token: readOnly, status: 403 });
    await json("/api/v2/admin/accounts", { token: readOnly, status: 403 });
    await json("/api/v1/admin/reports", { token: readOnly, status: 403 });
    const narrow = await scopedToken(boss, "admin:read:accounts");
    await json("/api/v1/admin/accounts", { token: narrow });
    await json("/api/v1/admin/reports", { token: narrow, status: 403 });
    await json("/api/v1/admin/reports", { token: await scopedToken(boss, "admin:read:reports") });
  });
});

describe("Mastodon's admin reports", () => {
  it("lists unresolved reports by default and resolved ones on asking, with both parties and the statuses", async () => {
    const boss = await admin();
    const [reporter, target] = [await registerUser(), await registerUser()];
    const s = await post(target, { status: "reported" });
    const made = await json("/api/v1/reports", {
      token: reporter.token,
      body: { account_id: target.id, status_ids: [s.id], comment: "spam", forward: false },
    });
    const open = valid(Reports, await json("/api/v1/admin/reports?limit=200", { token: boss.token }));
    const mine = open.find((r) => r.id === made.id)!;
    expect(mine).toMatchObject({
      action_taken: false,
      comment: "spam",
      category: "other",
      account: { id: reporter.id, username: reporter.username },
      target_account: { id: target.id },
    });
    expect(mine.statuses.map((x) => x.id)).toEqual([s.id]);
    expect(
      valid(Reports, await json(`/api/v1/admin/reports?target_account_id=${target.id}`, { token: boss.token })).map(
        (r) => r.id,
      ),
    ).toEqual([made.id]);
    expect(await json(`/api/v1/admin/reports?account_id=${target.id}`, { token: boss.token })).toEqual([]);

    // Resolved through Pleroma's admin route: the same row, now among the resolved.
    const patched = await call("/api/v1/pleroma/admin/reports", {
      method: "PATCH",
      token: boss.token,
      body: { reports: [{ id: made.id, state: "resolved" }] },
    });
    expect(patched.status).toBe(204);
    expect((await json("/api/v1/admin/reports?limit=200", { token: boss.token })).map((r: any) => r.id)).not.toContain(
      made.id,
    );
    const resolved = valid(Reports, await json("/api/v1/admin/reports?resolved=true&limit=200", { token: boss.token }));
    expect(resolved.find((r) => r.id === made.id)!.action_taken).toBe(true);
    const one = valid(
      MastodonAdminReportSchema.strict(),
      await json(`/api/v1/admin/reports/${made.id}`, { token: boss.token }),
    );
    expect(one.id).toBe(made.id);
    await json("/api/v1/admin/reports/nope", { token: boss.token, status: 404 });
  });
});
