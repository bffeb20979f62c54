import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newId } from "../src/db/ids";
import { parseImportList } from "../src/services/imports";
import { json, makeAdmin, registerUser, type TestUser } from "./helpers";

const rel = async (viewer: TestUser, ids: string[]) =>
  json(`/api/v1/accounts/relationships?${ids.map((id) => `id[]=${id}`).join("&")}`, { token: viewer.token });

describe("import list parsing", () => {
  it("accepts every form Pleroma and Mastodon exports use", () => {
    const text = [
      "Account address,Show boosts,Notify on new posts,Languages",
      "alice@localhost,true,false,",
      "bob@remote.example,true,false,",
      "@carol  dave",
      "@erin@remote.example",
      "http://localhost/users/frank https://remote.example/@gina",
      "https://remote.example/not/a/profile not_valid! ",
    ].join("\n");
    expect(parseImportList(text, "localhost")).toEqual([
      "alice",
      "bob@remote.example",
      "carol",
      "dave",
      "erin@remote.example",
      "frank",
      "gina@remote.example",
    ]);
  });
});

describe("imports", () => {
  it("follows everyone it can find, skipping unknown, blocking and locked-as-request", async () => {
    const [me, a, b, locked, blocker] = [
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
      await registerUser(),
    ];
    await json("/api/v1/accounts/update_credentials", { method: "PATCH", token: locked.token, body: { locked: true } });
    await json(`/api/v1/accounts/${me.id}/block`, { method: "POST", token: blocker.token });
    const list = `${a.username}\n@${b.username}@localhost http://localhost/users/${locked.username} ${blocker.username} nobody_at_all ${me.username}`;
    expect(await json("/api/pleroma/follow_import", { method: "POST", token: me.token, body: { list } })).toBe(
      "job started",
    );
    const rels = await rel(me, [a.id, b.id, locked.id, blocker.id]);
    expect(rels.map((r: any) => [r.following, r.requested])).toEqual([
      [true, false],
      [true, false],
      [false, true],
      [false, false],
    ]);
    const mine = await json(`/api/v1/accounts/${me.id}`);
    expect(mine.following_count).toBe(2);
    expect((await json(`/api/v1/accounts/${a.id}`)).followers_count).toBe(1);
  });

  it("blocks from an uploaded CSV file, ending follows both ways", async () => {
    const [me, a, b] = [await registerUser(), await registerUser(), await registerUser()];
    await json(`/api/v1/accounts/${me.id}/follow`, { method: "POST", token: a.token });
    await json(`/api/v1/accounts/${a.id}/follow`, { method: "POST", token: me.token });
    const form = new FormData();
    form.set(
      "list",
      new File([`Account address\n${a.username}@localhost\n${b.username}\n`], "blocks.csv", { type: "text/csv" }),
    );
    expect(await json("/api/v1/pleroma/blocks_import", { method: "POST", token: me.token, body: form })).toBe(
      "job started",
    );
    const rels = await rel(me, [a.id, b.id]);
    expect(rels.map((r: any) => [r.blocking, r.following, r.followed_by])).toEqual([
      [true, false, false],
      [true, false, false],
    ]);
    const mine = await json(`/api/v1/accounts/${me.id}`);
    expect([mine.followers_count, mine.following_count]).toEqual([0, 0]);
  });

  it("mutes, and handles a long list in a few statements", async () => {
    const [me, a] = [await registerUser(), await registerUser()];
    const filler = Array.from({ length: 3000 }, (_, i) => `ghost${i}@nowhere.example`).join("\n");
    expect(
      await json("/api/pleroma/mutes_import", {
        method: "POST",
        token: me.token,
        body: { list: `${filler}\n${a.username}` },
      }),
    ).toBe("job started");
    expect((await rel(me, [a.id]))[0]).toMatchObject({ muting: true, muting_notifications: true });
  });

  it("needs a list and the right scope", async () => {
    const me = await registerUser();
    await json("/api/pleroma/follow_import", { method: "POST", token: me.token, body: {}, status: 400 });
    await json("/api/pleroma/follow_import", { method: "POST", body: { list: "x" }, status: 403 });
  });
});

describe("reports", () => {
  it("are stored and notify the moderators, not the reporter nor the reported", async () => {
    const [reporter, target, admin] = [await registerUser(), await registerUser(), await registerUser()];
    await makeAdmin(admin.id);
    const bad = await json("/api/v1/statuses", { method: "POST", token: target.token, body: { status: "spam spam" } });
    const own = await json("/api/v1/statuses", { method: "POST", token: reporter.token, body: { status: "mine" } });
    const secret = await json("/api/v1/statuses", {
      method: "POST",
      token: target.token,
      body: { status: "hidden", visibility: "direct" },
    });
    const statusId = bad.id;
    const report = await json("/api/v1/reports", {
      method: "POST",
      token: reporter.token,
      body: {
        account_id: target.id,
        status_ids: [statusId, own.id, secret.id, newId()],
        comment: "spam",
        forward: false,
      },
    });
    expect(report).toEqual({ id: expect.any(String), action_taken: false });
    const stored = await env.DB.prepare("SELECT * FROM reports WHERE id = ?").bind(report.id).first<any>();
    expect(stored).toMatchObject({
      account_id: reporter.id,
      target_account_id: target.id,
      comment: "spam",
      status_ids: JSON.stringify([statusId]),
    });
    const notes = await env.DB.prepare(
      "SELECT account_id, from_account_id, type FROM notifications WHERE report_id = ?",
    )
      .bind(report.id)
      .all<any>();
    expect(notes.results).toContainEqual({
      account_id: admin.id,
      from_account_id: reporter.id,
      type: "pleroma:report",
    });
    expect(notes.results.map((n: any) => n.account_id)).not.toContain(target.id);
    expect(notes.results.map((n: any) => n.account_id)).not.toContain(reporter.id);
  });

  it("refuses unknown accounts and reporting yourself", async () => {
    const me = await registerUser();
    await json("/api/v1/reports", {
      method: "POST",
      token: me.token,
      body: { account_id: "01ARZ3NDEKTSV4RRFFQ69G5FAV" },
      status: 404,
    });
    await json("/api/v1/reports", { method: "POST", token: me.token, body: { account_id: me.id }, status: 400 });
    await json("/api/v1/reports", { method: "POST", token: me.token, body: {}, status: 400 });
  });
});
