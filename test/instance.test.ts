import { createScheduledController, createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { validate } from "@hyperjump/json-schema/openapi-3-1";
import worker from "../src/index";
import { HealthcheckSchema, InstanceSchema, NodeinfoSchema } from "../src/schemas/instance";
import { newId } from "../src/db/ids";
import { call, json, makeAdmin, registerUser, valid } from "./helpers";
import { countingD1 } from "./d1-counter";
import { measure } from "../src/lib/meter";

describe("instance information", () => {
  it("describes the instance with Pleroma's extra fields and real figures", async () => {
    const user = await registerUser();
    await makeAdmin(user.id);
    const inst = valid(InstanceSchema, await json("/api/v1/instance"));
    // The level claimed (src/lib/compatibility.ts), Pleroma's marker, Starling's own version as semver build metadata.
    expect(inst.version).toBe("4.5.0 (compatible; Pleroma 2.5.0+starling.0.1.0)");
    // The full URL (Phanpy builds the server's URLs from it), as Pleroma answers.
    expect(inst.uri).toBe("http://localhost");
    expect(inst.urls.streaming_api).toBe("ws://localhost");
    expect(inst.max_toot_chars).toBe(5000);
    expect(inst.poll_limits).toEqual({
      max_options: 20,
      max_option_chars: 200,
      min_expiration: 0,
      max_expiration: 31536000,
    });
    expect(inst.pleroma.metadata.fields_limits.max_fields).toBe(4);
    expect(inst.pleroma.metadata.features).toEqual(
      expect.arrayContaining(["pleroma_api", "mastodon_api", "mastodon_api_streaming"]),
    );
    expect(inst.vapid_public_key).toBe(inst.pleroma.vapid_public_key);
    expect(inst.stats.user_count).toBeGreaterThanOrEqual(1);
    expect(inst.pleroma.stats.mau).toBeGreaterThanOrEqual(1);
    // The VAPID key is the one apps are given.
    const app = await json("/api/v1/apps", { body: { client_name: "x", redirect_uris: "urn:ietf:wg:oauth:2.0:oob" } });
    expect(app.vapid_key).toBe(inst.vapid_public_key);
    // The thumbnail is a real image.
    expect((await call(inst.thumbnail)).headers.get("content-type")).toBe("image/png");
  });

  it("a small instance's figures are fresh: its first users and posts count at once, even with the cache on", async () => {
    const cached = { STATS_CACHE_SECONDS: "60" };
    const before = valid(InstanceSchema, await json("/api/v1/instance", { vars: cached }));
    const u = await registerUser();
    await json("/api/v1/statuses", { token: u.token, body: { status: "first!" } });
    const after = valid(InstanceSchema, await json("/api/v1/instance", { vars: cached }));
    expect(after.stats.user_count).toBe(before.stats.user_count + 1);
    expect(after.stats.status_count).toBe(before.stats.status_count + 1);
    // The front page says it in words that fit the numbers.
    const page = await (await call("/", { vars: cached, headers: { accept: "text/html" } })).text();
    expect(page).toMatch(/<strong>\d+<\/strong> (users?)<\/li>/);
    expect(page).not.toContain("<strong>1</strong> users");
  });

  it("keeps the figures a minute in the edge cache (the default) once the instance is not small, shared by the instance, nodeinfo and the front page", async () => {
    const cached = { STATS_CACHE_SECONDS: "60" };
    // 50 local accounts: counting them is no longer left to every request.
    const t = Date.now();
    await env.DB.batch(
      Array.from({ length: 50 }, (_, i) =>
        env.DB.prepare(
          "INSERT INTO accounts (id, username, uri, url, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        ).bind(newId(), `many${i}`, `http://localhost/users/many${i}`, `http://localhost/@many${i}`, t, t),
      ),
    );
    await registerUser();
    const first = valid(InstanceSchema, await json("/api/v1/instance", { vars: cached }));
    await registerUser();
    // Served from the cache: no D1 round trip for the figures, and the figures of a minute ago.
    const counter = countingD1();
    const withCounter = { vars: { ...cached, DB: counter.db } as never };
    await json("/api/v1/instance", withCounter); // the VAPID key is read once per binding
    counter.reset();
    const again = valid(InstanceSchema, await json("/api/v1/instance", withCounter));
    expect(counter.count()).toBe(0);
    expect(again.stats).toEqual(first.stats);
    const v2 = await json("/api/v2/instance", { vars: cached });
    expect(v2.usage.users.active_month).toBe(first.pleroma.stats.mau);
    const node = valid(NodeinfoSchema, await json("/nodeinfo/2.1.json", { vars: cached }));
    expect(node.usage.users.total).toBe(first.stats.user_count);
    // Without the cache (0, as the other tests run) the new user counts at once.
    expect(valid(InstanceSchema, await json("/api/v1/instance")).stats.user_count).toBe(first.stats.user_count + 1);
  });

  it("counts remote domains as peers", async () => {
    const t = Date.now();
    for (const domain of ["remote-a.example", "remote-b.example"]) {
      await env.DB.prepare(
        "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?, 'someone', ?, ?, ?, ?, ?)",
      )
        .bind(newId(), domain, `https://${domain}/users/someone`, `https://${domain}/@someone`, t, t)
        .run();
    }
    // Many accounts on few domains: the list costs rows per domain, not per account (the route is public).
    await env.DB.batch(
      Array.from({ length: 120 }, (_, i) =>
        env.DB.prepare(
          "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?, ?, 'remote-a.example', ?, ?, ?, ?)",
        ).bind(
          newId(),
          `many${i}`,
          `https://remote-a.example/users/many${i}`,
          `https://remote-a.example/@many${i}`,
          t,
          t,
        ),
      ),
    );
    let peers: string[] = [];
    const { usage } = await measure(async () => {
      peers = await json<string[]>("/api/v1/instance/peers");
    });
    expect(peers).toEqual(expect.arrayContaining(["remote-a.example", "remote-b.example"]));
    expect(peers).toEqual([...new Set(peers)].sort());
    expect(usage.rowsRead).toBeLessThanOrEqual(3 * peers.length + 10);
    const inst = await json("/api/v1/instance");
    expect(inst.stats.domain_count).toBe(peers.length);
    // A remote account is found by its full acct.
    const remote = await json("/api/v1/accounts/someone@remote-a.example");
    expect(remote).toMatchObject({
      acct: "someone@remote-a.example",
      fqn: "someone@remote-a.example",
      url: "https://remote-a.example/@someone",
    });
  });

  it("keeps the peers figure as accounts come, go and change domain, and shows it on the front page", async () => {
    const t = Date.now();
    const peersNow = async () => (await json<string[]>("/api/v1/instance/peers")).length;
    const figure = async () => valid(InstanceSchema, await json("/api/v1/instance")).stats.domain_count;
    const add = async (domain: string) => {
      const id = newId();
      await env.DB.prepare(
        "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
        .bind(id, `u${id}`, domain, `https://${domain}/users/${id}`, `https://${domain}/@${id}`, t, t)
        .run();
      return id;
    };
    const before = await figure();
    expect(before).toBe(await peersNow());
    // Two accounts of a new domain count it once; a second account of a known domain adds nothing.
    const first = await add("counted-a.example");
    const second = await add("counted-a.example");
    const other = await add("counted-b.example");
    expect(await figure()).toBe(before + 2);
    // The domain stays while one of its accounts does; it goes with its last.
    await env.DB.prepare("DELETE FROM accounts WHERE id = ?").bind(first).run();
    expect(await figure()).toBe(before + 2);
    await env.DB.prepare("DELETE FROM accounts WHERE id = ?").bind(second).run();
    expect(await figure()).toBe(before + 1);
    // An account whose domain changes moves the count with it (to a new domain, and back to a known one).
    await env.DB.prepare("UPDATE accounts SET domain = 'counted-c.example' WHERE id = ?").bind(other).run();
    expect(await figure()).toBe(before + 1);
    const third = await add("counted-d.example");
    await env.DB.prepare("UPDATE accounts SET domain = 'counted-c.example' WHERE id = ?").bind(third).run();
    expect(await figure()).toBe(before + 1);
    expect(await figure()).toBe(await peersNow());
    const page = await (await call("/", { headers: { accept: "text/html" } })).text();
    expect(page).toContain(`<strong>${before + 1}</strong> connected servers`);
  });

  it("answers the unsupported Mastodon endpoints as the spec says", async () => {
    for (const path of ["/api/v1/suggestions", "/api/v1/identity_proofs"]) expect(await json(path)).toEqual([]);
    // Mastodon 3.0's trends are the trending tags of `/api/v1/trends/tags`.
    expect(await json("/api/v1/trends?limit=5")).toEqual(await json("/api/v1/trends/tags?limit=5"));
    await json("/api/v1/featured_tags", { status: 404 });
  });
});

describe("nodeinfo", () => {
  it("links both versions from the host the client reached", async () => {
    const links = await json("https://social.example/.well-known/nodeinfo");
    expect(links.links).toEqual([
      { rel: "http://nodeinfo.diaspora.software/ns/schema/2.0", href: "https://social.example/nodeinfo/2.0.json" },
      { rel: "http://nodeinfo.diaspora.software/ns/schema/2.1", href: "https://social.example/nodeinfo/2.1.json" },
    ]);
  });

  it("names the software pleroma so clients speak its dialect", async () => {
    for (const path of ["/nodeinfo/2.0.json", "/nodeinfo/2.1.json", "/nodeinfo/2.0", "/nodeinfo/2.1"]) {
      const doc = valid(NodeinfoSchema, await json(path));
      expect(doc.software).toMatchObject({ name: "pleroma", version: "2.5.0+starling.0.1.0" });
      expect(doc.protocols).toEqual(["activitypub"]);
      expect(doc.openRegistrations).toBe(true);
    }
    // The users are the local accounts not deactivated: one more after a registration.
    const users = async () => valid(NodeinfoSchema, await json("/nodeinfo/2.1.json")).usage.users.total;
    const before = await users();
    const counted = await env.DB.prepare(
      "SELECT count(*) AS n FROM accounts WHERE domain IS NULL AND deactivated = 0",
    ).first<{ n: number }>();
    expect(before).toBe(counted!.n);
    await registerUser();
    expect(await users()).toBe(before + 1);
    const closed = await json("/nodeinfo/2.0.json", { vars: { REGISTRATIONS_OPEN: "false" } });
    expect(closed.openRegistrations).toBe(false);
  });

  it("says federation is enabled only when DOMAIN is set (without it the federation endpoints refuse)", async () => {
    const off = await json("/nodeinfo/2.1.json", { vars: { DOMAIN: "" } });
    expect(off.metadata.federation.enabled).toBe(false);
    const on = await json("/nodeinfo/2.1.json", { vars: { DOMAIN: "social.example" } });
    expect(on.metadata.federation.enabled).toBe(true);
    const instance = await json("/api/v1/instance", { vars: { DOMAIN: "social.example" } });
    expect(instance.pleroma.metadata.federation.enabled).toBe(true);
    expect((await json("/api/v1/instance", { vars: { DOMAIN: "" } })).pleroma.metadata.federation.enabled).toBe(false);
  });
});

describe("healthcheck", () => {
  it("reports healthy with the cron's last run", async () => {
    const controller = createScheduledController({
      scheduledTime: new Date("2026-11-21T10:00:00Z"),
      cron: "* * * * *",
    });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);
    for (const path of ["/api/v1/pleroma/healthcheck", "/api/pleroma/healthcheck"]) {
      const health = valid(HealthcheckSchema, await json(path));
      expect(health.healthy).toBe(true);
      expect(health.pool_size).toBe(1);
      expect(health.job_queue_stats.cron_last_run_at).toBe("2026-11-21T10:00:00.000Z");
    }
  });

  it("reports the federation delivery queue: deliveries waiting, their hosts and age, unexpanded activities, failing hosts", async () => {
    const t = Date.parse("2026-11-20T10:00:00Z");
    const id = `hc${Date.now()}`;
    // Storage is shared with other test files that drain the queue: this row is expanded already and its
    // delivery not due for a century, so no drain touches it.
    const never = Date.parse("2126-01-01T00:00:00Z");
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO federation_outbox (id, account_id, activity, body, created_at, expanded_at) VALUES (?, 'nobody', '{}', '{}', ?, ?)",
      ).bind(id, t, t),
      env.DB.prepare(
        "INSERT INTO federation_deliveries (id, outbox_id, host, inbox, next_at, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      ).bind(id, id, `${id}.invalid`, `https://${id}.invalid/inbox`, never, t),
      // A second one to an unreachable host (failing for two days), retrying after a failure minutes ago.
      env.DB.prepare(
        "INSERT INTO federation_deliveries (id, outbox_id, host, inbox, next_at, created_at, attempts, last_attempt_at, last_error) VALUES (?, ?, ?, ?, ?, ?, 3, ?, 'HTTP 503')",
      ).bind(`${id}-2`, id, `${id}-2.invalid`, `https://${id}-2.invalid/inbox`, never, t, Date.now() - 60_000),
      env.DB.prepare(
        "INSERT INTO instances (domain, failure_count, last_failure_at, unreachable_since, created_at) VALUES (?, 3, ?, ?, ?)",
      ).bind(`${id}-2.invalid`, Date.now() - 60_000, Date.now() - 2 * 86400_000, t),
    ]);
    try {
      const stats = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck")).job_queue_stats
        .federation as Record<string, unknown>;
      expect(stats.pending_deliveries).toBeGreaterThanOrEqual(1);
      expect(stats.pending_hosts).toBeGreaterThanOrEqual(1);
      expect(typeof stats.unexpanded_activities).toBe("number");
      expect(typeof stats.failing_hosts).toBe("number");
      expect(Date.parse(stats.oldest_pending_at as string)).toBeLessThanOrEqual(t);
      expect(stats.pending_deliveries).toBeGreaterThanOrEqual(2);
      expect(stats.retrying_deliveries).toBeGreaterThanOrEqual(1);
      expect(stats.failed_last_hour).toBeGreaterThanOrEqual(1);
      expect(stats.unreachable_hosts).toBeGreaterThanOrEqual(1);
      // Once the host recovers it is no longer counted.
      await env.DB.prepare("UPDATE instances SET unreachable_since = NULL WHERE domain = ?")
        .bind(`${id}-2.invalid`)
        .run();
      const after = valid(HealthcheckSchema, await json("/api/v1/pleroma/healthcheck")).job_queue_stats
        .federation as Record<string, number>;
      expect(after.unreachable_hosts).toBe((stats.unreachable_hosts as number) - 1);
    } finally {
      await env.DB.batch([
        env.DB.prepare("DELETE FROM federation_deliveries WHERE id IN (?, ?)").bind(id, `${id}-2`),
        env.DB.prepare("DELETE FROM federation_outbox WHERE id = ?").bind(id),
        env.DB.prepare("DELETE FROM instances WHERE domain = ?").bind(`${id}-2.invalid`),
      ]);
    }
  });

  it("answers 503 when the database does not answer", async () => {
    const broken = {
      prepare() {
        throw new Error("D1 is down");
      },
      batch() {
        throw new Error("D1 is down");
      },
    };
    const res = await call("/api/v1/pleroma/healthcheck", { vars: { DB: broken } as never });
    expect(res.status).toBe(503);
    expect((await res.json()) as object).toMatchObject({ healthy: false });
  });
});

describe("OpenAPI description", () => {
  it("is generated from the route schemas", async () => {
    const doc = await json("/api/openapi");
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/apps",
        "/oauth/token",
        "/api/v1/accounts/{id}",
        "/api/v1/accounts/update_credentials",
        "/api/pleroma/captcha",
      ]),
    );
    expect(doc.paths["/api/v1/apps"].post.requestBody.content["application/json"].schema.required).toEqual(
      expect.arrayContaining(["client_name", "redirect_uris"]),
    );
    expect(doc.components.schemas.Account.properties.pleroma).toBeDefined();
    expect(doc.paths["/api/v1/accounts/verify_credentials"].get.security).toEqual([{ OAuth2: ["read:accounts"] }]);
  });

  it("is a valid OpenAPI 3.1 document, whose security scheme is defined with every scope routes ask for", async () => {
    const doc = await json("/api/openapi");
    const output = await validate("https://spec.openapis.org/oas/3.1/schema-base", doc, "BASIC");
    expect(output.valid, JSON.stringify(output).slice(0, 2000)).toBe(true);
    const scheme = doc.components.securitySchemes.OAuth2;
    expect(scheme.type).toBe("oauth2");
    expect(scheme.flows.authorizationCode).toMatchObject({
      authorizationUrl: "/oauth/authorize",
      tokenUrl: "/oauth/token",
    });
    const used = new Set<string>();
    for (const item of Object.values(doc.paths) as Record<string, { security?: { OAuth2?: string[] }[] }>[])
      for (const op of Object.values(item))
        for (const req of op.security ?? []) req.OAuth2?.forEach((s) => used.add(s));
    expect([...used].filter((s) => !(s in scheme.flows.password.scopes))).toEqual([]);
  });
});
