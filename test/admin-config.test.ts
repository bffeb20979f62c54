/**
 * Run-time instance settings (issue 17): Pleroma's admin config API, taking effect without a redeploy, and
 * registration with approval. Everything runs on instance D (test/instances.ts), whose settings no other test
 * file reads, since these tests change instance-wide settings.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InstanceSchema } from "../src/schemas/instance";
import { TokenSchema } from "../src/schemas/oauth";
import { approveUsers } from "../src/services/registration";
import { refreshSettings, SETTINGS_TTL_MS } from "../src/services/instance-settings";
import { db } from "../src/db/client";
import { appToken, call, freshIp, json, makeApp, registerUser, uniqueName, valid, type TestUser } from "./helpers";
import { D } from "./instances";

const ConfigsSchema = z.object({
  configs: z.array(z.object({ group: z.string(), key: z.string(), value: z.unknown(), db: z.array(z.string()) })),
  need_reboot: z.boolean(),
});
const ADMIN_SCOPES = "read write follow push admin";

async function staff(role: "admin" | "moderator" | null): Promise<TestUser> {
  const u = await registerUser({ instance: D, scopes: ADMIN_SCOPES });
  if (role) await env.DB_D.prepare(`UPDATE users SET is_${role} = 1 WHERE account_id = ?`).bind(u.id).run();
  return u;
}

const setConfig = (admin: TestUser, configs: unknown[], status = 200) =>
  json("/api/v1/pleroma/admin/config", { instance: D, token: admin.token, body: { configs }, status });
const instanceKeys = (value: [string, unknown][]) => [
  { group: ":pleroma", key: ":instance", value: value.map(([k, v]) => ({ tuple: [k, v] })) },
];
const resetInstance = (admin: TestUser) => setConfig(admin, [{ group: ":pleroma", key: ":instance", delete: true }]);
const instanceInfo = async () => valid(InstanceSchema, await json("/api/v1/instance", { instance: D }));

async function registerOn(body: Record<string, unknown>, status = 200) {
  const app = await makeApp(undefined, undefined, D);
  const tok = await appToken(app, undefined, D);
  const username = uniqueName();
  const res = await json("/api/v1/accounts", {
    instance: D,
    token: tok,
    headers: { "cf-connecting-ip": freshIp() },
    body: { username, email: `${username}@example.com`, password: "correct horse battery", agreement: true, ...body },
    status,
  });
  return { res, username, app };
}

describe("admin config (run-time settings)", () => {
  it("lists every known setting in ConfigDB's form, and only to admins", async () => {
    const [admin, moderator, user] = await Promise.all([staff("admin"), staff("moderator"), staff(null)]);
    const got = valid(ConfigsSchema, await json("/api/v1/pleroma/admin/config", { instance: D, token: admin.token }));
    expect(got.need_reboot).toBe(false);
    const instance = got.configs.find((c) => c.key === ":instance")!;
    expect(instance.group).toBe(":pleroma");
    const tuples = new Map((instance.value as { tuple: [string, unknown] }[]).map((t) => t.tuple));
    expect(tuples.get(":name")).toBe("Starling");
    expect(tuples.get(":registrations_open")).toBe(true);
    expect(tuples.get(":limit")).toBe(5000);
    expect(got.configs.map((c) => c.key)).toEqual(expect.arrayContaining([":mrf_simple", "Pleroma.Captcha"]));

    const descriptions = await json("/api/v1/pleroma/admin/config/descriptions", { instance: D, token: admin.token });
    expect(descriptions.find((d: any) => d.key === ":instance").children.map((c: any) => c.key)).toEqual(
      expect.arrayContaining([":name", ":account_approval_required"]),
    );

    for (const u of [moderator, user]) {
      for (const path of ["/api/v1/pleroma/admin/config", "/api/v1/pleroma/admin/config/descriptions"]) {
        expect(await json(path, { instance: D, token: u.token, status: 403 })).toEqual({
          error: "User is not an admin.",
        });
      }
      expect(await setConfig(u, instanceKeys([[":name", "Hijacked"]]), 403)).toEqual({
        error: "User is not an admin.",
      });
    }
    expect((await instanceInfo()).title).not.toBe("Hijacked");
    // Without a token at all.
    expect((await call("/api/v1/pleroma/admin/config", { instance: D })).status).toBe(403);
  });

  it("changes take effect at once without a redeploy, are logged, and go back to [vars] when deleted", async () => {
    const admin = await staff("admin");
    const name = `Renamed ${uniqueName()}`;
    const saved = valid(
      ConfigsSchema,
      await setConfig(
        admin,
        instanceKeys([
          [":name", name],
          [":limit", 777],
          [":languages", ["en", "fr"]],
        ]),
      ),
    );
    expect(saved.configs).toHaveLength(1);
    expect(saved.configs[0]!.db).toEqual(expect.arrayContaining([":name", ":limit", ":languages"]));
    const info = await instanceInfo();
    expect(info).toMatchObject({ title: name, max_toot_chars: 777, languages: ["en", "fr"] });
    const nodeinfo = await json("/nodeinfo/2.0.json", { instance: D });
    expect(nodeinfo.metadata.nodeName).toBe(name);
    // The limit is enforced, not only shown.
    const long = await json("/api/v1/statuses", {
      instance: D,
      token: admin.token,
      body: { status: "x".repeat(800) },
      status: 422,
    });
    expect(long.error).toBeTruthy();

    const log = await env.DB_D.prepare("SELECT action, data FROM moderation_log WHERE actor_id = ?")
      .bind(admin.id)
      .all<{ action: string; data: string }>();
    expect(log.results.map((r) => r.action)).toEqual(["config_update"]);
    expect(log.results[0]!.data).toContain(name);
    // Under the admin's nickname, as every other admin action (the log's message, read through the API).
    const entries = await json(`/api/v1/pleroma/admin/moderation_log?user_id=${admin.id}`, {
      instance: D,
      token: admin.token,
    });
    expect(entries.items.map((i: { message: string }) => i.message)).toEqual([
      `@${admin.username} updated the settings: :pleroma :instance`,
    ]);

    // Deleting a subkey puts the [vars] value back.
    await setConfig(admin, [{ group: ":pleroma", key: ":instance", delete: true, subkeys: [":name"] }]);
    expect((await instanceInfo()).title).toBe("Starling");
    expect((await instanceInfo()).max_toot_chars).toBe(777);
    await resetInstance(admin);
    expect((await instanceInfo()).max_toot_chars).toBe(5000);
  });

  it("reaches an isolate that read the settings before, once its copy is older than the TTL", async () => {
    const admin = await staff("admin");
    await refreshSettings(D.bindings, true);
    // Another isolate's change: written to D1 directly, not through this isolate.
    const name = `Elsewhere ${uniqueName()}`;
    await env.DB_D.prepare("INSERT INTO instance_settings (key, value, updated_at) VALUES ('name', ?, ?)")
      .bind(JSON.stringify(name), Date.now())
      .run();
    expect((await instanceInfo()).title).toBe("Starling");
    await refreshSettings(D.bindings, false, Date.now() + SETTINGS_TTL_MS + 1);
    expect((await instanceInfo()).title).toBe(name);
    await resetInstance(admin);
    expect((await instanceInfo()).title).toBe("Starling");
  });

  it("refuses unknown keys and bad values with 400, writing nothing", async () => {
    const admin = await staff("admin");
    const bad: [unknown[], RegExp][] = [
      [
        instanceKeys([
          [":name", "ok"],
          [":no_such_key", 1],
        ]),
        /unknown key :instance :no_such_key/,
      ],
      [
        instanceKeys([
          [":name", "ok"],
          [":limit", "many"],
        ]),
        /:limit must be a integer/,
      ],
      [instanceKeys([[":registrations_open", "yes"]]), /must be a boolean/],
      [instanceKeys([[":languages", ["not a language"]]]), /languages/],
      [[{ group: ":pleroma", key: ":not_here", value: [] }], /unknown key :not_here/],
      [[{ group: ":web_push_encryption", key: ":vapid_details", value: [] }], /unknown group/],
      [
        [
          {
            group: ":pleroma",
            key: ":mrf_simple",
            value: [{ tuple: [":reject", [{ tuple: ["not a domain!", ""] }]] }],
          },
        ],
        /not a domain/,
      ],
      [
        [{ group: ":pleroma", key: ":mrf_simple", value: [{ tuple: [":quarantine", []] }] }],
        /unknown key :mrf_simple :quarantine/,
      ],
    ];
    for (const [configs, message] of bad) {
      const res = await setConfig(admin, configs, 400);
      expect(res.error).toMatch(message);
    }
    expect(
      await json("/api/v1/pleroma/admin/config", {
        instance: D,
        token: admin.token,
        body: { configs: "nope" },
        status: 400,
      }),
    ).toHaveProperty("error");
    expect((await instanceInfo()).title).toBe("Starling");
    const rows = await env.DB_D.prepare("SELECT count(*) AS n FROM instance_settings WHERE key = 'name'").first<{
      n: number;
    }>();
    expect(rows!.n).toBe(0);
  });

  it("registrations closed at run time refuse registration without an invite; reopened they work", async () => {
    const admin = await staff("admin");
    await setConfig(admin, instanceKeys([[":registrations_open", false]]));
    try {
      expect((await instanceInfo()).registrations).toBe(false);
      expect((await registerOn({}, 400)).res).toEqual({ error: "Invalid token" });
    } finally {
      await resetInstance(admin);
    }
    expect((await instanceInfo()).registrations).toBe(true);
    valid(TokenSchema, (await registerOn({})).res);
  });

  it("with approval required: a reason is needed, the account waits, admins are mailed, approval lets it in", async () => {
    const admin = await staff("admin");
    await setConfig(admin, instanceKeys([[":account_approval_required", true]]));
    try {
      const info = await instanceInfo();
      expect(info.approval_required).toBe(true);
      const v2 = await json("/api/v2/instance", { instance: D });
      expect(v2.registrations.approval_required).toBe(true);

      expect((await registerOn({}, 400)).res).toEqual({ error: JSON.stringify({ reason: ["can't be blank"] }) });
      const { res, username, app } = await registerOn({ reason: "I would like to post about birds" });
      expect(res).toEqual({
        message: "You have been registered. You'll be able to log in once your account is approved.",
        identifier: "awaiting_approval",
      });

      const login = {
        grant_type: "password",
        client_id: app.client_id,
        client_secret: app.client_secret,
        username,
        password: "correct horse battery",
      };
      expect(await json("/oauth/token", { instance: D, body: login, status: 403 })).toEqual({
        error: "Your account is awaiting approval.",
        identifier: "awaiting_approval",
      });

      const mail = await env.DB_D.prepare('SELECT subject, text FROM mail_outbox WHERE "to" = ? AND subject LIKE ?')
        .bind(admin.email, `%@${username}%`)
        .all<{ subject: string; text: string }>();
      expect(mail.results).toHaveLength(1);
      expect(mail.results[0]!.text).toContain("I would like to post about birds");

      const row = await env.DB_D.prepare(
        "SELECT u.account_id AS id, u.registration_reason AS reason FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.username = ?",
      )
        .bind(username)
        .first<{ id: string; reason: string }>();
      expect(row!.reason).toBe("I would like to post about birds");
      // The seam ADMIN's `PATCH /admin/users/approve` uses.
      await approveUsers(db(D.bindings), [row!.id]).run();
      valid(TokenSchema, await json("/oauth/token", { instance: D, body: login }));
    } finally {
      await resetInstance(admin);
    }
    expect((await instanceInfo()).approval_required).toBe(false);
  });
});
