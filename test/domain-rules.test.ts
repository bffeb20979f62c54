/**
 * Shared blocklists (issue 48) through HTTP: Mastodon's admin domain API over the federation policies admin-fe's
 * MRF page edits, importing (preview, apply, retraction) and exporting Mastodon CSV, GoToSocial JSON and plain
 * lists, a rule written by hand surviving imports, and a suspension severing follows both ways.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../src/index";
import { RETENTION_MINUTE } from "../src/cron";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { call, json, registerUser, remoteAccount, scopedToken, valid, type TestUser } from "./helpers";
import { DomainAllowSchema, DomainBlockSchema, ImportPlanSchema } from "../src/schemas/admin-domains";
import { newId } from "../src/db/ids";

const ADMIN_SCOPES = "read write follow push admin";

async function admin(): Promise<TestUser> {
  const u = await registerUser({ scopes: ADMIN_SCOPES });
  await env.DB.prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?").bind(u.id).run();
  return u;
}

const rows = async (sql: string, ...args: unknown[]) =>
  (
    await env.DB.prepare(sql)
      .bind(...args)
      .all()
  ).results;
/** A domain's block policies, written through Mastodon's side as `*.domain` (its blocks cover subdomains). */
const policiesOf = async (domain: string) =>
  (await rows(
    "SELECT policy, source FROM federation_policies WHERE domain IN (?, '*.' || ?) ORDER BY policy",
    domain,
    domain,
  )) as {
    policy: string;
    source: string;
  }[];

/** An Oliphant-style list: Mastodon's CSV header, a few hundred domains, comments with commas and quotes. */
function oliphantCsv(n: number, prefix: string) {
  const lines = ["#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate"];
  for (let i = 0; i < n; i++)
    lines.push(
      i % 10 === 0
        ? `${prefix}${i}.example,silence,true,false,"spam, ""harassment""",false`
        : `${prefix}${i}.example,suspend,false,false,hate speech,${i % 7 === 0}`,
    );
  return lines.join("\r\n") + "\r\n";
}

const importList = (token: string, body: Record<string, unknown>, status = 200) =>
  json("/api/v1/pleroma/admin/domain_blocks/import", { method: "POST", token, body, status });

describe("Mastodon's admin domain API", () => {
  it("blocks, shows, changes and lifts, over the policies admin-fe's MRF page shows", async () => {
    const a = await admin();
    const created = valid(
      DomainBlockSchema,
      await json("/api/v1/admin/domain_blocks", {
        method: "POST",
        token: a.token,
        body: {
          domain: "Bad.Example.",
          severity: "suspend",
          reject_media: true,
          public_comment: "spam",
          private_comment: "seen on 12/1",
          obfuscate: true,
        },
      }),
    );
    expect(created).toMatchObject({
      id: "bad.example",
      domain: "bad.example",
      severity: "suspend",
      reject_media: true,
      reject_reports: false,
      public_comment: "spam",
      private_comment: "seen on 12/1",
      obfuscate: true,
    });
    expect(await policiesOf("bad.example")).toEqual([
      { policy: "media_removal", source: "hand" },
      { policy: "reject", source: "hand" },
    ]);
    // admin-fe's MRF page reads the same rules.
    const config = await json("/api/v1/pleroma/admin/config", { token: a.token });
    expect(JSON.stringify(config)).toContain("bad.example");
    // Twice: 422 with the existing block, as Mastodon answers.
    const dup = await json("/api/v1/admin/domain_blocks", {
      method: "POST",
      token: a.token,
      body: { domain: "bad.example" },
      status: 422,
    });
    expect(valid(DomainBlockSchema, dup.existing_domain_block).domain).toBe("bad.example");
    expect(valid(DomainBlockSchema, await json("/api/v1/admin/domain_blocks/bad.example", { token: a.token }))).toEqual(
      created,
    );
    const list = z.array(DomainBlockSchema).parse(await json("/api/v1/admin/domain_blocks", { token: a.token }));
    expect(list.map((b) => b.domain)).toContain("bad.example");
    const changed = valid(
      DomainBlockSchema,
      await json("/api/v1/admin/domain_blocks/bad.example", {
        method: "PUT",
        token: a.token,
        body: { severity: "silence", reject_media: false },
      }),
    );
    expect(changed).toMatchObject({
      severity: "silence",
      reject_media: false,
      public_comment: "spam",
      obfuscate: true,
    });
    expect(await policiesOf("bad.example")).toEqual([{ policy: "federated_timeline_removal", source: "hand" }]);
    expect(await json("/api/v1/admin/domain_blocks/bad.example", { method: "DELETE", token: a.token })).toEqual({});
    expect(await policiesOf("bad.example")).toEqual([]);
    await json("/api/v1/admin/domain_blocks/bad.example", { token: a.token, status: 404 });
    // Every change is in the moderation log.
    const log = await rows("SELECT action FROM moderation_log WHERE actor_id = ? ORDER BY id", a.id);
    expect(log.map((r: any) => r.action)).toEqual(["domain_block", "domain_block", "domain_unblock"]);
  });

  it("refuses what is not a domain or not a block, and anyone but an admin", async () => {
    const [a, plain] = await Promise.all([admin(), registerUser({ scopes: ADMIN_SCOPES })]);
    const bad = (body: Record<string, unknown>) =>
      json("/api/v1/admin/domain_blocks", { method: "POST", token: a.token, body, status: 422 });
    expect((await bad({ domain: "not a domain" })).error).toMatch(/not a domain/);
    expect((await bad({ domain: "x.example", severity: "noop" })).error).toMatch(/noop/);
    await json("/api/v1/admin/domain_blocks", {
      method: "POST",
      token: a.token,
      body: { domain: "x.example", severity: "ban" },
      status: 400,
    });
    await json("/api/v1/admin/domain_blocks", { token: plain.token, status: 403 });
    const readOnly = await scopedToken(a, "admin:read");
    await json("/api/v1/admin/domain_blocks", { token: readOnly });
    await json("/api/v1/admin/domain_blocks", {
      method: "POST",
      token: readOnly,
      body: { domain: "y.example" },
      status: 403,
    });
  });

  it("a suspension severs follows both ways with the domain's accounts, and nothing else", async () => {
    const [a, local] = await Promise.all([admin(), registerUser()]);
    const far = await remoteAccount();
    const other = await remoteAccount();
    const t = Date.now();
    const follow = (from: string, to: string) =>
      env.DB.prepare(
        "INSERT INTO follows (id, account_id, target_account_id, created_at, uri) VALUES (?, ?, ?, ?, ?)",
      ).bind(newId(), from, to, t, `https://x/${newId()}`);
    await env.DB.batch([follow(local.id, far.id), follow(far.id, local.id), follow(local.id, other.id)]);
    const preview = valid(ImportPlanSchema, await importList(a.token, { list: `${far.domain}\n`, format: "plain" }));
    expect(preview).toMatchObject({ applied: false, severs: 1 });
    expect(
      await rows("SELECT count(*) AS n FROM follows WHERE account_id = ? OR target_account_id = ?", local.id, local.id),
    ).toEqual([{ n: 3 }]);
    await json("/api/v1/admin/domain_blocks", {
      method: "POST",
      token: a.token,
      body: { domain: far.domain, severity: "suspend" },
    });
    const left = await rows(
      "SELECT target_account_id AS t FROM follows WHERE account_id = ? OR target_account_id = ?",
      local.id,
      local.id,
    );
    expect(left).toEqual([{ t: other.id }]);
  });

  it("allows, for allow-list federation", async () => {
    const a = await admin();
    const allowed = valid(
      DomainAllowSchema,
      await json("/api/v1/admin/domain_allows", { method: "POST", token: a.token, body: { domain: "friend.example" } }),
    );
    expect(allowed).toMatchObject({ id: "friend.example", domain: "friend.example" });
    expect(z.array(DomainAllowSchema).parse(await json("/api/v1/admin/domain_allows", { token: a.token }))).toEqual([
      allowed,
    ]);
    expect(await json("/api/v1/admin/domain_allows/friend.example", { method: "DELETE", token: a.token })).toEqual({});
    expect(await json("/api/v1/admin/domain_allows", { token: a.token })).toEqual([]);
  });
});

describe("importing and exporting lists", () => {
  it("previews, applies, retracts on the next import, leaves hand rules alone, and exports what it imported", async () => {
    const a = await admin();
    // A rule written by hand for a domain the list also names.
    await json("/api/v1/admin/domain_blocks", {
      method: "POST",
      token: a.token,
      body: { domain: "ol3.example", severity: "silence", public_comment: "mine" },
    });
    const csv = oliphantCsv(300, "ol");
    const preview = valid(ImportPlanSchema, await importList(a.token, { list: csv }));
    expect(preview.applied).toBe(false);
    expect(preview.added.length).toBe(299);
    expect(preview.kept_by_hand).toEqual(["ol3.example"]);
    expect(await rows("SELECT count(*) AS n FROM federation_policies WHERE source = 'import'")).toEqual([{ n: 0 }]);
    expect(preview.added.find((b) => b.domain === "ol10.example")).toMatchObject({
      severity: "silence",
      reject_media: true,
      public_comment: 'spam, "harassment"',
    });

    const applied = valid(ImportPlanSchema, await importList(a.token, { list: csv, apply: true }));
    expect(applied).toMatchObject({ applied: true, unchanged: 0 });
    expect(await policiesOf("ol1.example")).toEqual([{ policy: "reject", source: "import" }]);
    expect(await policiesOf("ol3.example")).toEqual([{ policy: "federated_timeline_removal", source: "hand" }]);
    const again = valid(ImportPlanSchema, await importList(a.token, { list: csv }));
    expect(again).toMatchObject({ added: [], changed: [], unchanged: 299 });

    // The list drops ol5 and changes ol6: with `replace`, ol5 is lifted; without it, kept.
    const next = csv
      .replace("ol5.example,suspend", "gone.example,suspend")
      .replace("ol6.example,suspend", "ol6.example,silence");
    const kept = valid(ImportPlanSchema, await importList(a.token, { list: next }));
    expect(kept.removed).toEqual([]);
    const retract = valid(ImportPlanSchema, await importList(a.token, { list: next, replace: true, apply: true }));
    expect(retract.removed.map((b) => b.domain)).toEqual(["ol5.example"]);
    expect(retract.changed.map((c) => [c.before.severity, c.after.severity])).toEqual([["suspend", "silence"]]);
    expect(await policiesOf("ol5.example")).toEqual([]);
    expect(await policiesOf("ol6.example")).toEqual([{ policy: "federated_timeline_removal", source: "import" }]);
    expect(await policiesOf("ol3.example")).toEqual([{ policy: "federated_timeline_removal", source: "hand" }]);

    // admin-fe's MRF page sends the list back with one more: the imported rules stay the import's.
    const rejects = (await rows("SELECT domain FROM federation_policies WHERE policy = 'reject'")) as {
      domain: string;
    }[];
    await json("/api/v1/pleroma/admin/config", {
      method: "POST",
      token: a.token,
      body: {
        configs: [
          {
            group: ":pleroma",
            key: ":mrf_simple",
            value: [
              {
                tuple: [
                  ":reject",
                  [...rejects.map((r) => ({ tuple: [r.domain, ""] })), { tuple: ["new.example", "x"] }],
                ],
              },
            ],
          },
        ],
      },
    });
    expect(await policiesOf("ol1.example")).toEqual([{ policy: "reject", source: "import" }]);
    expect(await policiesOf("new.example")).toEqual([{ policy: "reject", source: "hand" }]);

    // The export re-imports with the same columns.
    const res = await call("/api/v1/pleroma/admin/domain_blocks/export", { token: a.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    const exported = await res.text();
    expect(exported.split("\n")[0]).toBe("#domain,#severity,#reject_media,#reject_reports,#public_comment,#obfuscate");
    expect(exported).toContain('ol10.example,silence,true,false,"spam, ""harassment""",false');
    expect(exported).not.toContain("seen on");
    const roundTrip = valid(ImportPlanSchema, await importList(a.token, { list: exported }));
    expect(roundTrip.added).toEqual([]);
    expect(roundTrip.changed).toEqual([]);
  });

  it("reads GoToSocial's JSON and plain lists, and exports them", async () => {
    const a = await admin();
    const gts = JSON.stringify([
      { domain: "gts1.example", public_comment: "bots", obfuscate: true, created_at: "2024-01-01T00:00:00Z" },
      { domain: "gts2.example" },
    ]);
    const plan = valid(
      ImportPlanSchema,
      await importList(a.token, { list: gts, format: "gotosocial_json", apply: true }),
    );
    expect(plan.added.map((b) => [b.domain, b.severity, b.public_comment, b.obfuscate])).toEqual([
      ["gts1.example", "suspend", "bots", true],
      ["gts2.example", "suspend", null, false],
    ]);
    const plain = valid(
      ImportPlanSchema,
      await importList(a.token, {
        list: "# a comment\nplain1.example\r\n\nPLAIN2.example. # trailing\n",
        format: "plain",
      }),
    );
    expect(plain.added.map((b) => b.domain)).toEqual(["plain1.example", "plain2.example"]);
    const exported = await (
      await call("/api/v1/pleroma/admin/domain_blocks/export?format=gotosocial_json", { token: a.token })
    ).json();
    expect(exported).toEqual(
      expect.arrayContaining([{ domain: "gts1.example", public_comment: "bots", obfuscate: true }]),
    );
    const text = await (
      await call("/api/v1/pleroma/admin/domain_blocks/export?format=plain", { token: a.token })
    ).text();
    expect(text.split("\n")).toEqual(expect.arrayContaining(["gts1.example", "gts2.example"]));
  });

  it("refuses a bad list with the row it stumbled on, and writes nothing", async () => {
    const a = await admin();
    const before = await rows("SELECT count(*) AS n FROM federation_policies");
    expect(
      (await importList(a.token, { list: "#domain,#severity\nok.example,suspend\nbad domain,suspend\n" }, 422)).error,
    ).toMatch(/row 3/);
    expect((await importList(a.token, { list: "#domain,#severity\nok.example,obliterate\n" }, 422)).error).toMatch(
      /severity/,
    );
    expect((await importList(a.token, { list: "{}", format: "gotosocial_json" }, 422)).error).toMatch(/array/);
    expect((await importList(a.token, { list: "not json", format: "gotosocial_json" }, 422)).error).toMatch(/JSON/);
    await importList(a.token, { list: "x.example", format: "xml" }, 400);
    expect(await rows("SELECT count(*) AS n FROM federation_policies")).toEqual(before);
  });
});

describe("subscriptions", () => {
  const HOUR = 3_600_000;
  let hour = Math.ceil(Date.now() / HOUR) * HOUR;
  /** A cron run at the hourly jobs' minute, a day later each time (each list is fetched once a day). */
  async function runCron(vars: Record<string, string> = {}) {
    hour += 25 * HOUR;
    const ctx = createExecutionContext();
    await worker.scheduled(
      createScheduledController({ scheduledTime: new Date(hour + RETENTION_MINUTE * 60_000), cron: "* * * * *" }),
      { ...env, ALLOW_PRIVATE_ADDRESS: "true", ...vars } as typeof env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
  }
  /** Lists served at http://127.0.0.1:8999/<name>, with an ETag; records the requests. */
  const lists: Record<string, string> = {};
  const asked: Request[] = [];
  const inner = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    if (!req.url.startsWith("http://127.0.0.1:8999/")) return inner(input, init);
    asked.push(req);
    const body = lists[new URL(req.url).pathname.slice(1)];
    if (body === undefined) return new Response("no", { status: 404 });
    const etag = `"${body.length}-${body.charCodeAt(body.length - 2)}"`;
    if (req.headers.get("if-none-match") === etag) return new Response(null, { status: 304 });
    return new Response(body, { headers: { etag, "content-type": "text/csv" } });
  }) as typeof fetch;
  afterEach(() => void 0);

  const subscribe = (token: string, body: Record<string, unknown>) =>
    json("/api/v1/admin/domain_permission_subscriptions", { method: "POST", token, body });

  it("drafts first, then applies daily, lifts what the list retracts, asks with its ETag, and keeps hand rules and higher lists", async () => {
    const a = await admin();
    await json("/api/v1/admin/domain_blocks", {
      method: "POST",
      token: a.token,
      body: { domain: "s-hand.example", severity: "silence" },
    });
    lists.low =
      "#domain,#severity\ns-one.example,suspend\ns-two.example,suspend\ns-hand.example,suspend\ns-shared.example,silence\n";
    lists.high = "s-shared.example\n";
    const low = await subscribe(a.token, {
      uri: "http://127.0.0.1:8999/low",
      content_type: "text/csv",
      permission_type: "block",
      priority: 1,
    });
    expect(low).toMatchObject({ as_draft: true, remove_retracted: true, count: 0, fetched_at: null });
    const high = await subscribe(a.token, {
      uri: "http://127.0.0.1:8999/high",
      content_type: "text/plain",
      permission_type: "block",
      priority: 9,
      as_draft: false,
    });
    // The test call shows the list, applying nothing.
    const shown = await json(`/api/v1/admin/domain_permission_subscriptions/${low.id}/test`, {
      method: "POST",
      token: a.token,
      vars: { ALLOW_PRIVATE_ADDRESS: "true" },
    });
    expect(shown.map((e: { domain: string }) => e.domain)).toEqual([
      "s-one.example",
      "s-two.example",
      "s-hand.example",
      "s-shared.example",
    ]);

    await runCron();
    // The draft is fetched and counted, not applied; the higher list applied.
    expect(await json(`/api/v1/admin/domain_permission_subscriptions/${low.id}`, { token: a.token })).toMatchObject({
      count: 4,
      error: null,
    });
    expect(await policiesOf("s-one.example")).toEqual([]);
    expect(await json(`/api/v1/admin/domain_permission_subscriptions/${high.id}`, { token: a.token })).toMatchObject({
      error: null,
      count: 1,
    });
    expect(await policiesOf("s-shared.example")).toEqual([{ policy: "reject", source: `subscription:${high.id}` }]);

    await json(`/api/v1/admin/domain_permission_subscriptions/${low.id}`, {
      method: "PATCH",
      token: a.token,
      body: { as_draft: false },
    });
    await runCron();
    expect(await policiesOf("s-one.example")).toEqual([{ policy: "reject", source: `subscription:${low.id}` }]);
    expect(await policiesOf("s-hand.example")).toEqual([{ policy: "federated_timeline_removal", source: "hand" }]);
    // The higher list's rule stays the higher list's, at its severity.
    expect(await policiesOf("s-shared.example")).toEqual([{ policy: "reject", source: `subscription:${high.id}` }]);

    // Unchanged lists: asked with their ETag, answered 304, nothing written.
    const before = asked.length;
    await runCron();
    const again = asked.slice(before);
    expect(again.length).toBe(2);
    expect(again.every((r) => r.headers.get("if-none-match"))).toBe(true);

    // The list retracts s-two: lifted; s-one stays.
    lists.low = lists.low.replace("s-two.example,suspend\n", "");
    await runCron();
    expect(await policiesOf("s-two.example")).toEqual([]);
    expect(await policiesOf("s-one.example")).toEqual([{ policy: "reject", source: `subscription:${low.id}` }]);
    const log = await rows("SELECT action FROM moderation_log WHERE action = 'domain_subscription_fetch'");
    expect(log.length).toBeGreaterThanOrEqual(2);

    // Unsubscribing keeps its rules as orphans (the import's), unless asked to remove them.
    await json(`/api/v1/admin/domain_permission_subscriptions/${low.id}`, { method: "DELETE", token: a.token });
    expect(await policiesOf("s-one.example")).toEqual([{ policy: "reject", source: "import" }]);
    await json(`/api/v1/admin/domain_permission_subscriptions/${high.id}?remove_children=true`, {
      method: "DELETE",
      token: a.token,
    });
    expect(await policiesOf("s-shared.example")).toEqual([]);
  });

  it("fetches only through the outbound guard, and records a list it cannot read", async () => {
    const a = await admin();
    lists.big = "#domain,#severity\n" + "x".repeat(2_100_000);
    const guarded = await subscribe(a.token, {
      uri: "http://127.0.0.1:8999/low2",
      content_type: "text/csv",
      permission_type: "block",
      as_draft: false,
    });
    const big = await subscribe(a.token, {
      uri: "http://127.0.0.1:8999/big",
      content_type: "text/csv",
      permission_type: "block",
      as_draft: false,
    });
    await runCron({ ALLOW_PRIVATE_ADDRESS: "false" });
    const g = await json(`/api/v1/admin/domain_permission_subscriptions/${guarded.id}`, { token: a.token });
    expect(g.error).toMatch(/refused|private|not/i);
    await runCron();
    const b = await json(`/api/v1/admin/domain_permission_subscriptions/${big.id}`, { token: a.token });
    expect(b.error).toMatch(/larger/);
    await json("/api/v1/admin/domain_permission_subscriptions", {
      method: "POST",
      token: a.token,
      body: { uri: "ftp://x.example/list", content_type: "text/csv", permission_type: "block" },
      status: 422,
    });
  });
});
