/**
 * Which host a federation policy names is one rule written twice (services/federation-policies.ts): in
 * TypeScript for the isolate's copy (the inbox door, resolving, what is stripped) and in SQL for delivery
 * expansion. Both run here on the same table of hosts (wildcards, trailing dots, case, ports, IPv6 literals,
 * punycode) after the policies are saved through the admin API, and must answer alike, and as expected.
 */
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { db } from "../src/db/client";
import { deliveryAllowedSql, federationRejected, hasPolicy, policyHost } from "../src/services/federation-policies";
import { refreshSettings } from "../src/services/instance-settings";
import { json, makeAdmin, registerUser, type TestUser } from "./helpers";

async function admin(): Promise<TestUser> {
  const u = await registerUser({ scopes: "read write follow push admin" });
  await makeAdmin(u.id);
  return u;
}

/** Saves the `:mrf_simple` lists given (policy → domains as an admin types them); answers them as stored. */
async function savePolicies(a: TestUser, lists: Record<string, string[]>) {
  const value = Object.entries(lists).map(([p, domains]) => ({
    tuple: [`:${p}`, domains.map((d) => ({ tuple: [d, `because ${d}`] }))],
  }));
  await json("/api/v1/pleroma/admin/config", {
    token: a.token,
    body: { configs: [{ group: ":pleroma", key: ":mrf_simple", value }] },
  });
  await refreshSettings(env, true);
  const got = await json("/api/v1/pleroma/admin/config", { token: a.token });
  const mrf = got.configs.find((c: any) => c.key === ":mrf_simple").value as { tuple: [string, any[]] }[];
  return Object.fromEntries(mrf.map((t) => [t.tuple[0].slice(1), t.tuple[1].map((x: any) => x.tuple[0])]));
}

/** Both matchers' answer for `host`: refused by the isolate's copy, refused by the SQL rule. */
async function both(host: string) {
  const rows = await db(env).all<{ allowed: number }>(sql`SELECT ${deliveryAllowedSql(sql`${host}`)} AS allowed`);
  return { ts: federationRejected(env, host), sql: rows[0]!.allowed === 0 };
}

async function expectTable(table: [string, boolean][]) {
  const answers = await Promise.all(table.map(async ([host]) => [host, await both(host)] as const));
  for (const [i, [host, { ts, sql: inSql }]] of answers.entries()) {
    expect({ host, ts, sql: inSql }).toEqual({ host, ts: table[i]![1], sql: table[i]![1] });
  }
}

describe("the federation policy host match, in TypeScript and in SQL", () => {
  it("normalises a host one way: case, port, IPv6 literal, trailing dots, punycode", () => {
    expect(policyHost("A.Example.:8443")).toBe("a.example");
    expect(policyHost("[2001:DB8::1]:443")).toBe("[2001:db8::1]");
    expect(policyHost("a.example..")).toBe("a.example");
    expect(policyHost("Bücher.example")).toBe("xn--bcher-kva.example");
    expect(policyHost("")).toBe("");
  });

  it("rejects: exact names, `*.parent` wildcards (the parent and every name under it), stored normalised", async () => {
    const a = await admin();
    const stored = await savePolicies(a, {
      reject: ["*.Parent.Example.", "exact.example", "Bücher.example", "port.example:8443"],
      media_removal: ["*.media.example"],
    });
    // Stored as policies compare them: lower case, no trailing dot, no port, punycode.
    expect(stored.reject).toEqual(["*.parent.example", "exact.example", "xn--bcher-kva.example", "port.example"]);
    await expectTable([
      ["parent.example", true],
      ["PARENT.example", true],
      ["parent.example.", true],
      ["parent.example:", true],
      ["a.parent.example", true],
      ["a.b.Parent.Example.:443", true],
      ["notparent.example", false],
      ["parent.example.evil", false],
      ["parentexample", false],
      ["exact.example", true],
      ["EXACT.EXAMPLE:8080", true],
      ["exact.example..", true],
      ["sub.exact.example", false],
      ["xexact.example", false],
      ["xn--bcher-kva.example", true],
      ["XN--BCHER-KVA.example.", true],
      ["sub.xn--bcher-kva.example", false],
      ["port.example", true],
      ["port.example:1", true],
      ["[::1]", false],
      ["[2001:db8::1]:8443", false],
      ["", false],
      ["other.example", false],
      ["media.example", false],
    ]);
    // An internationalised name as typed (the isolate's copy only: SQL reads hosts from URLs, in punycode).
    expect(federationRejected(env, "Bücher.example")).toBe(true);
    expect(federationRejected(env, "sub.bücher.example")).toBe(false);
    // Other policies match by the same rule.
    expect(hasPolicy(env, "x.MEDIA.example.", "media_removal")).toBe(true);
    expect(hasPolicy(env, "media.example:443", "media_removal")).toBe(true);
    expect(hasPolicy(env, "xmedia.example", "media_removal")).toBe(false);
  });

  it("an allow-list admits only what it names, a reject inside it still refused", async () => {
    const a = await admin();
    await savePolicies(a, { reject: ["bad.friends.example"], accept: ["*.friends.example", "pal.example"] });
    await expectTable([
      ["friends.example", false],
      ["a.friends.example", false],
      ["A.FRIENDS.example.:443", false],
      ["bad.friends.example", true],
      ["BAD.friends.example.", true],
      ["x.bad.friends.example", false],
      ["pal.example", false],
      ["pal.example:8080", false],
      ["x.pal.example", true],
      ["stranger.example", true],
      ["friends.example.evil", true],
      ["[::1]:443", true],
      ["", true],
    ]);
    // Emptied again: nothing is refused.
    await savePolicies(a, { reject: [], accept: [] });
    await expectTable([
      ["stranger.example", false],
      ["bad.friends.example", false],
    ]);
  });

  it("a block through Mastodon's side (admin API, import) covers subdomains; an MRF rule stays exact", async () => {
    const a = await admin();
    await savePolicies(a, { reject: ["exact.example", "legacy.example"], accept: [], media_removal: [] });
    const block = (domain: string, severity: string) =>
      json("/api/v1/admin/domain_blocks", { method: "POST", token: a.token, body: { domain, severity } });
    const created = await block("Mastodon.Example.", "suspend");
    expect(created).toMatchObject({ id: "mastodon.example", domain: "mastodon.example", severity: "suspend" });
    await block("quiet.example", "silence");
    await json("/api/v1/pleroma/admin/domain_blocks/import", {
      method: "POST",
      token: a.token,
      body: { list: "imported.example\n", format: "plain", apply: true },
    });
    // An exact rule written on admin-fe's page becomes Mastodon's (subdomains too) once changed through its API.
    await json("/api/v1/admin/domain_blocks/legacy.example", {
      method: "PUT",
      token: a.token,
      body: { severity: "suspend", reject_media: true },
    });
    await refreshSettings(env, true);
    await expectTable([
      ["mastodon.example", true],
      ["sub.mastodon.example", true],
      ["A.B.Mastodon.Example.:443", true],
      ["xmastodon.example", false],
      ["mastodon.example.evil", false],
      ["imported.example", true],
      ["deep.sub.imported.example", true],
      ["notimported.example", false],
      ["legacy.example", true],
      ["sub.legacy.example", true],
      ["exact.example", true],
      ["sub.exact.example", false],
      ["quiet.example", false],
    ]);
    expect(hasPolicy(env, "sub.quiet.example", "federated_timeline_removal")).toBe(true);
    expect(hasPolicy(env, "quiet.example.evil", "federated_timeline_removal")).toBe(false);
    // Mastodon's side names each block once, bare; admin-fe's page shows the policies' own spelling.
    const listed = (await json("/api/v1/admin/domain_blocks", { token: a.token })) as { domain: string }[];
    expect(listed.map((b) => b.domain)).toEqual([
      "exact.example",
      "imported.example",
      "legacy.example",
      "mastodon.example",
      "quiet.example",
    ]);
    const got = await json("/api/v1/pleroma/admin/config", { token: a.token });
    const mrf = got.configs.find((c: any) => c.key === ":mrf_simple").value as { tuple: [string, any[]] }[];
    const reject = mrf.find((t) => t.tuple[0] === ":reject")!.tuple[1].map((x: any) => x.tuple[0]);
    expect(reject.sort()).toEqual(["*.imported.example", "*.legacy.example", "*.mastodon.example", "exact.example"]);
    // Lifted through the API: the subdomains with it.
    await json("/api/v1/admin/domain_blocks/mastodon.example", { method: "DELETE", token: a.token });
    await refreshSettings(env, true);
    await expectTable([
      ["mastodon.example", false],
      ["sub.mastodon.example", false],
      ["sub.imported.example", true],
    ]);
    await savePolicies(a, { reject: [], accept: [], federated_timeline_removal: [], media_removal: [] });
  });
});
