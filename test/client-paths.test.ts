/**
 * Paths real clients (Pleroma-FE, Phanpy, Elk, masto.js) call at start or on common screens, with the requests
 * they send: each answers its real shape (empty where Starling holds no such data).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { newId } from "../src/db/ids";
import { AccountSchema, PreferencesSchema } from "../src/schemas/account";
import {
  AnnouncementSchema,
  FeaturedTagSchema,
  FrontendConfigurationsSchema,
  InstanceSchema,
  InstanceV2Schema,
  RuleSchema,
  TrendTagSchema,
} from "../src/schemas/instance";
import { OAuthServerMetadataSchema, OAuthTokenEntrySchema, TokenSchema } from "../src/schemas/oauth";
import { BookmarkFolderSchema, ScrobbleSchema } from "../src/schemas/pleroma";
import { FilterSchema, FilterKeywordSchema, FilterV2Schema } from "../src/schemas/social";
import { StatusSchema } from "../src/schemas/status";
import { countingD1 } from "./d1-counter";
import { sql, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { paramsCte } from "../src/services/visibility";
import { directPage } from "../src/services/timelines";
import { trendingTagsQuery } from "../src/services/trends";
import {
  appToken,
  call,
  json,
  makeApp,
  post,
  registerUser,
  scopedToken,
  uniqueName,
  valid,
  type TestUser,
} from "./helpers";

const ACCEPT = { accept: "application/json" };
const all = <S extends z.ZodType>(schema: S, list: unknown[]) => list.map((x) => valid(schema, x));
const act = (path: string, u: TestUser, status = 200) =>
  json(path, { method: "POST", token: u.token, body: {}, status });

async function insertRemote(opts: { discoverable?: boolean; lastStatusAt?: number } = {}) {
  const id = newId();
  const t = Date.now();
  const domain = `${uniqueName("r")}.example`;
  await env.DB.prepare(
    "INSERT INTO accounts (id, username, domain, uri, url, discoverable, last_status_at, created_at, updated_at) VALUES (?, 'someone', ?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(
      id,
      domain,
      `https://${domain}/users/someone`,
      `https://${domain}/@someone`,
      opts.discoverable ? 1 : 0,
      opts.lastStatusAt ?? null,
      t,
      t,
    )
    .run();
  return { id, acct: `someone@${domain}` };
}

async function queryPlan(query: SQL, viewer?: string) {
  const q = new SQLiteSyncDialect().sqlToQuery(viewer ? sql`WITH ${paramsCte(viewer)} ${query}` : query);
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
    .bind(...q.params)
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail).join(" | ");
}

describe("instance", () => {
  it("v1 `uri` is the full URL: the origin reached, or https://DOMAIN when configured", async () => {
    const inst = valid(InstanceSchema, await json("/api/v1/instance", { headers: ACCEPT }));
    expect(inst.uri).toBe("http://localhost");
    const configured = await call("/api/v1/instance", { vars: { DOMAIN: "Social.Example" } });
    expect((await configured.json<{ uri: string }>()).uri).toBe("https://social.example");
  });

  it("v2 answers Mastodon 4's shape from the same facts as v1", async () => {
    const v1 = valid(InstanceSchema, await json("/api/v1/instance"));
    const v2 = valid(InstanceV2Schema, await json("/api/v2/instance", { headers: ACCEPT }));
    expect(v2.domain).toBe("localhost");
    expect(v2).toMatchObject({ title: v1.title, version: v1.version, languages: v1.languages, rules: [] });
    expect(v2.configuration.urls.streaming).toBe(v1.urls.streaming_api);
    expect(v2.configuration.vapid.public_key).toBe(v1.vapid_public_key);
    expect(v2.configuration.statuses.max_characters).toBe(v1.max_toot_chars);
    expect(v2.configuration.polls).toEqual({
      max_options: v1.poll_limits.max_options,
      max_characters_per_option: v1.poll_limits.max_option_chars,
      min_expiration: v1.poll_limits.min_expiration,
      max_expiration: v1.poll_limits.max_expiration,
    });
    expect(v2.configuration.media_attachments.image_size_limit).toBe(v1.upload_limit);
    expect(v2.configuration.media_attachments.supported_mime_types).toEqual(
      expect.arrayContaining(["image/png", "video/mp4"]),
    );
    expect(v2.registrations).toMatchObject({ enabled: v1.registrations, approval_required: false });
    expect(v2.contact.email).toBe(v1.email);
    expect(v2.thumbnail.url).toBe(v1.thumbnail);
    expect(v2.usage.users.active_month).toBe(v1.pleroma.stats.mau);
    expect(v2.pleroma.metadata.features).toEqual(v1.pleroma.metadata.features);
    expect(v2.pleroma.metadata.avatar_upload_limit).toBe(v1.avatar_upload_limit);
    // A configuration change shows in both.
    const res = await call("/api/v2/instance", { vars: { DOMAIN: "social.example", MAX_TOOT_CHARS: "777" } });
    const changed = valid(InstanceV2Schema, await res.json());
    expect(changed.domain).toBe("social.example");
    expect(changed.configuration.statuses.max_characters).toBe(777);
    expect(changed.configuration.urls.streaming).toBe("wss://social.example");
  });

  it("rules, announcements and front-end configurations answer their shapes, empty", async () => {
    const u = await registerUser();
    all(RuleSchema, await json("/api/v1/instance/rules"));
    expect(await json("/api/v1/instance/rules")).toEqual([]);
    // Phanpy asks with its token; Pleroma shows announcements to anyone.
    expect(all(AnnouncementSchema, await json("/api/v1/announcements", { token: u.token }))).toEqual([]);
    expect(await json("/api/v1/announcements?with_dismissed=true")).toEqual([]);
    // Nothing to dismiss: Pleroma's 404; no token: the usual 403.
    expect(await act(`/api/v1/announcements/${newId()}/dismiss`, u, 404)).toEqual({ error: "Record not found" });
    expect(await json("/api/v1/announcements/1/dismiss", { method: "POST", body: {}, status: 403 })).toEqual({
      error: "Invalid credentials.",
    });
    // Pleroma-FE reads this before anything else.
    expect(valid(FrontendConfigurationsSchema, await json("/api/pleroma/frontend_configurations"))).toEqual({});
  });
});

describe("OAuth server metadata", () => {
  it("advertises the endpoints and PKCE with S256, at the address Phanpy reads", async () => {
    const meta = valid(
      OAuthServerMetadataSchema,
      await json("/.well-known/oauth-authorization-server", { headers: ACCEPT }),
    );
    expect(meta.issuer).toBe("http://localhost");
    expect(meta.code_challenge_methods_supported).toEqual(["S256"]);
    expect(meta.response_types_supported).toEqual(["code"]);
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(["read", "write", "follow", "push", "read:statuses"]));
    // The endpoints it names are the ones that work.
    const app = await makeApp("read");
    const page = await call(
      `${meta.authorization_endpoint}?${new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: "urn:ietf:wg:oauth:2.0:oob" })}`,
    );
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const token = await json(meta.token_endpoint, {
      body: { grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret },
    });
    valid(TokenSchema, token);
    expect(
      await json(meta.app_registration_endpoint, {
        body: { client_name: "Phanpy", redirect_uris: "https://phanpy.social/" },
      }),
    ).toHaveProperty("client_id");
    const configured = await call("/.well-known/oauth-authorization-server", { vars: { DOMAIN: "social.example" } });
    expect((await configured.json<{ token_endpoint: string }>()).token_endpoint).toBe(
      "https://social.example/oauth/token",
    );
  });
});

describe("preferences", () => {
  it("come from the user's stored settings", async () => {
    const u = await registerUser();
    const fresh = valid(PreferencesSchema, await json("/api/v1/preferences", { token: u.token }));
    expect(fresh).toEqual({
      "posting:default:visibility": "public",
      "posting:default:sensitive": false,
      "posting:default:language": null,
      "reading:expand:media": "default",
      "reading:expand:spoilers": false,
    });
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: u.token,
      body: { source: { privacy: "private", sensitive: true, language: "fr" } },
    });
    expect(valid(PreferencesSchema, await json("/api/v1/preferences", { token: u.token }))).toMatchObject({
      "posting:default:visibility": "private",
      "posting:default:sensitive": true,
      "posting:default:language": "fr",
    });
    await json("/api/v1/preferences", { status: 403 });
    // A token without read:accounts may not read them.
    await json("/api/v1/preferences", { token: await scopedToken(u, "write"), status: 403 });
    expect(await json("/api/v1/preferences", { token: await scopedToken(u, "read:accounts") })).toMatchObject({
      "posting:default:language": "fr",
    });
  });
});

describe("account look-up", () => {
  it("finds an account by acct in every spelling clients use, and answers 404 otherwise", async () => {
    const u = await registerUser();
    for (const acct of [u.username, `@${u.username}`, u.username.toUpperCase(), `${u.username}@localhost`]) {
      const found = valid(AccountSchema, await json(`/api/v1/accounts/lookup?${new URLSearchParams({ acct })}`));
      expect(found.id).toBe(u.id);
    }
    // Signed in too, and not swallowed by `/accounts/:id`.
    expect((await json(`/api/v1/accounts/lookup?acct=${u.username}`, { token: u.token })).id).toBe(u.id);
    const remote = await insertRemote();
    expect((await json(`/api/v1/accounts/lookup?acct=${encodeURIComponent(remote.acct)}`)).id).toBe(remote.id);
    expect(await json(`/api/v1/accounts/lookup?acct=${uniqueName("nobody")}`, { status: 404 })).toEqual({
      error: "Record not found",
    });
    // An id is not an acct.
    await json(`/api/v1/accounts/lookup?acct=${u.id}`, { status: 404 });
    expect((await json("/api/v1/accounts/lookup", { status: 400 })).error).toMatch(/acct/);
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(u.id).run();
    await json(`/api/v1/accounts/lookup?acct=${u.username}`, { status: 404 });
  });
});

describe("direct timeline", () => {
  it("holds direct statuses the viewer wrote or is addressed in, paginated with Link, in one round trip", async () => {
    const [a, b, c] = await Promise.all([registerUser(), registerUser(), registerUser()]);
    const d1 = await post(a, { status: `@${b.username} first`, visibility: "direct" });
    const pub = await post(a, { status: `@${b.username} public`, visibility: "public" });
    const priv = await post(b, { status: `@${a.username} private`, visibility: "private" });
    const d2 = await post(b, { status: `@${a.username} second`, visibility: "direct" });
    const d3 = await post(c, { status: `@${b.username} from c`, visibility: "direct" });
    const ids = async (u: TestUser, q = "") => {
      const list = all(StatusSchema, await json(`/api/v1/timelines/direct${q}`, { token: u.token }));
      list.forEach((s) => expect(s.visibility).toBe("direct"));
      return list.map((s) => s.id);
    };
    expect(await ids(a)).toEqual([d2.id, d1.id]);
    expect(await ids(b)).toEqual([d3.id, d2.id, d1.id]);
    expect(await ids(c)).toEqual([d3.id]);
    expect(await ids(b)).not.toContain(pub.id);
    expect(await ids(a)).not.toContain(priv.id);
    // Pleroma-FE's request; pages follow the Link header.
    const first = await call("/api/v1/timelines/direct?limit=2&with_muted=true", { token: b.token });
    expect(first.status).toBe(200);
    expect(((await first.json()) as { id: string }[]).map((s) => s.id)).toEqual([d3.id, d2.id]);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link")!)![1];
    expect(new URL(next).searchParams.get("limit")).toBe("2");
    expect((await json(next, { token: b.token })).map((s: { id: string }) => s.id)).toEqual([d1.id]);
    expect(await ids(b, `?min_id=${d1.id}`)).toEqual([d3.id, d2.id]);
    expect(await ids(b, `?since_id=${d2.id}`)).toEqual([d3.id]);
    // Blocks hold: b blocks c, and c's direct status goes.
    await act(`/api/v1/accounts/${c.id}/block`, b);
    expect(await ids(b)).toEqual([d2.id, d1.id]);
    // A user is needed, with read:statuses.
    await json("/api/v1/timelines/direct", { status: 403 });
    await json("/api/v1/timelines/direct", { token: await appToken(a.app), status: 403 });
    await json("/api/v1/timelines/direct", { token: await scopedToken(a, "read:accounts"), status: 403 });
    // One round trip whatever the page size.
    const trips = async (path: string) => {
      const counter = countingD1();
      const res = await call(path, { token: b.token, vars: { DB: counter.db } as never });
      expect(res.status).toBe(200);
      return counter.count();
    };
    expect(await trips("/api/v1/timelines/direct?limit=1")).toBe(1);
    expect(await trips("/api/v1/timelines/direct?limit=40")).toBe(1);
  });

  it("walks the author's and the recipient's indexes newest first", async () => {
    const plan = await queryPlan(directPage({ limit: 20, max_id: newId() }, {}), newId());
    expect(plan).toMatch(/SEARCH s USING INDEX statuses_account \(account_id=\? AND id<\?\)/);
    expect(plan).toMatch(
      /SEARCH r USING (COVERING )?INDEX status_recipients_account \(account_id=\? AND status_id<\?\)/,
    );
  });
});

describe("hashtags followed, featured and trending", () => {
  it("followed tags start empty, featured tags are empty, with Mastodon's auth (following: test/tags.test.ts)", async () => {
    const u = await registerUser();
    expect(all(TrendTagSchema, await json("/api/v1/followed_tags?limit=200", { token: u.token }))).toEqual([]);
    await json("/api/v1/followed_tags", { status: 403 });
    await json("/api/v1/followed_tags", { token: await scopedToken(u, "read:statuses"), status: 403 });
    expect(all(FeaturedTagSchema, await json(`/api/v1/accounts/${u.id}/featured_tags`))).toEqual([]);
    expect(await json(`/api/v1/accounts/${u.id}/featured_tags`, { token: u.token })).toEqual([]);
    await json(`/api/v1/accounts/${newId()}/featured_tags`, { status: 404 });
    // The spec keeps the user's own list unsupported.
    await json("/api/v1/featured_tags", { status: 404 });
  });

  it("trending tags count public statuses of the last days by account; trending statuses and links are empty", async () => {
    const [a, b, c] = await Promise.all([registerUser(), registerUser(), registerUser()]);
    const hot = uniqueName("hot");
    const warm = uniqueName("warm");
    const hidden = uniqueName("hidden");
    await post(a, { status: `#${hot} one`, visibility: "public" });
    await post(a, { status: `#${hot} two #${warm}`, visibility: "public" });
    await post(b, { status: `#${hot} three #${warm}`, visibility: "public" });
    await post(c, { status: `#${hot} four`, visibility: "public" });
    // Used by as many accounts as the top tag, but never publicly: not counted.
    for (const [u, visibility] of [
      [a, "unlisted"],
      [b, "private"],
      [c, "unlisted"],
    ] as const)
      await post(u, { status: `#${hidden} not public`, visibility });
    // Tags other tests use by one account may share the list: the ones here are used by three and two accounts.
    const tags = all(TrendTagSchema, await json("/api/v1/trends/tags?limit=20", { headers: ACCEPT }));
    const names = tags.map((t) => t.name);
    expect(names).toContain(hot);
    expect(names).toContain(warm);
    expect(names).not.toContain(hidden);
    expect(names.indexOf(hot)).toBeLessThan(names.indexOf(warm));
    const entry = tags.find((t) => t.name === hot)!;
    expect(entry.url).toBe(`http://localhost/tag/${hot}`);
    expect(entry.history).toHaveLength(7);
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    expect(entry.history[0]).toEqual({ day: String(today), uses: "4", accounts: "3" });
    expect(entry.history[1]).toEqual({ day: String(today - 86_400), uses: "0", accounts: "0" });
    // Paging by offset.
    const [firstTwo, skipped] = await Promise.all([
      json("/api/v1/trends/tags?limit=2"),
      json("/api/v1/trends/tags?limit=1&offset=1"),
    ]);
    expect(firstTwo).toHaveLength(Math.min(2, tags.length));
    expect(skipped[0]?.name).toBe(firstTwo[1]?.name);
    await json("/api/v1/trends/tags?offset=-1", { status: 400 });
    expect(await json("/api/v1/trends/statuses?limit=20&offset=0")).toEqual([]);
    expect(await json("/api/v1/trends/links")).toEqual([]);
  });

  it("reads only the last week's tag rows, on an index", async () => {
    const plan = await queryPlan(trendingTagsQuery(Date.now() - 7 * 86_400_000));
    expect(plan).toMatch(/SEARCH st USING (COVERING )?INDEX status_tags_pair \(status_id>\?\)/);
  });
});

describe("Pleroma's bookmark folders and scrobbles", () => {
  it("answer empty lists under both prefixes, with Pleroma's auth", async () => {
    const u = await registerUser();
    for (const prefix of ["/api/v1/pleroma", "/api/pleroma"]) {
      expect(all(BookmarkFolderSchema, await json(`${prefix}/bookmark_folders`, { token: u.token }))).toEqual([]);
      await json(`${prefix}/bookmark_folders`, { status: 403 });
      expect(all(ScrobbleSchema, await json(`${prefix}/accounts/${u.id}/scrobbles?limit=1`))).toEqual([]);
      expect(await json(`${prefix}/accounts/${u.id}/scrobbles`, { token: u.token })).toEqual([]);
      await json(`${prefix}/accounts/${newId()}/scrobbles`, { status: 404 });
    }
    await json("/api/v1/pleroma/bookmark_folders", { token: await scopedToken(u, "read:statuses"), status: 403 });
  });
});

describe("profile directory", () => {
  it("lists discoverable, active accounts, most recently active or newest first", async () => {
    const [viewer, quiet, busy, hiddenOne, muted] = await Promise.all([
      registerUser(),
      registerUser(),
      registerUser(),
      registerUser(),
      registerUser(),
    ]);
    // Registered after the others, so that it is newer than the viewer (parallel registrations have no order).
    const blocked = await registerUser();
    const discoverable = (u: TestUser) =>
      json("/api/v1/accounts/update_credentials", { method: "PATCH", token: u.token, body: { discoverable: true } });
    for (const u of [viewer, quiet, busy, muted, blocked]) await discoverable(u);
    await post(busy, { status: "recent" });
    const remote = await insertRemote({ discoverable: true, lastStatusAt: Date.now() - 3600_000 });
    const gone = await registerUser();
    await discoverable(gone);
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(gone.id).run();
    const mine = new Set([viewer.id, quiet.id, busy.id, hiddenOne.id, muted.id, blocked.id, remote.id, gone.id]);
    const list = async (q: string, token?: string) =>
      all(AccountSchema, await json(`/api/v1/directory${q}`, { token }))
        .map((a) => a.id)
        .filter((id) => mine.has(id));

    // Elk's and Phanpy's request (masto.js): order, local, offset, limit.
    const active = await list("?order=active&local=false&limit=80");
    expect(active.slice(0, 2)).toEqual([busy.id, remote.id]);
    expect(new Set(active)).toEqual(new Set([busy.id, remote.id, viewer.id, quiet.id, muted.id, blocked.id]));
    const newest = await list("?order=new&limit=80");
    expect(newest.indexOf(blocked.id)).toBeLessThan(newest.indexOf(viewer.id));
    expect(newest[0]).toBe(remote.id);
    expect(await list("?local=true&limit=80")).not.toContain(remote.id);
    // Unknown orders are `active`.
    expect(await list("?order=sideways&limit=80")).toEqual(active);

    // The viewer is left out, and so are accounts they mute or block.
    await act(`/api/v1/accounts/${muted.id}/mute`, viewer);
    await act(`/api/v1/accounts/${blocked.id}/block`, viewer);
    const seen = await list("?limit=80", viewer.token);
    expect(new Set(seen)).toEqual(new Set([busy.id, remote.id, quiet.id]));

    // Offset and limit page through the whole list.
    const whole = all(AccountSchema, await json("/api/v1/directory?limit=80")).map((a) => a.id);
    const page = all(AccountSchema, await json("/api/v1/directory?limit=2&offset=1")).map((a) => a.id);
    expect(page).toEqual(whole.slice(1, 3));
    // An offset past any page is an empty page, not a 500; trends and search alike. Past 2^53 it is no integer: 400.
    const far = String(Number.MAX_SAFE_INTEGER);
    expect(await json(`/api/v1/directory?offset=${far}`)).toEqual([]);
    expect(await json(`/api/v1/trends/tags?offset=${far}`)).toEqual([]);
    expect(
      await json(`/api/v2/search?q=directory&type=accounts&offset=${far}`, { token: (await registerUser()).token }),
    ).toMatchObject({ accounts: [] });
    await json("/api/v1/directory?offset=99999999999999999999", { status: 400 });
  });
});

describe("v2 filters over the v1 filters", () => {
  it("lists, shows, creates, changes and deletes filters as Mastodon 4 does", async () => {
    const [u, other] = await Promise.all([registerUser(), registerUser()]);
    const v1 = valid(
      FilterSchema,
      await json("/api/v1/filters", {
        token: u.token,
        body: { phrase: "spoiler", context: ["home", "public"], irreversible: true },
      }),
    );
    const listed = all(FilterV2Schema, await json("/api/v2/filters", { token: u.token }));
    expect(listed).toEqual([
      {
        id: v1.id,
        title: "spoiler",
        context: ["home", "public"],
        expires_at: null,
        filter_action: "hide",
        keywords: [{ id: v1.id, keyword: "spoiler", whole_word: true }],
        statuses: [],
      },
    ]);
    expect(valid(FilterV2Schema, await json(`/api/v2/filters/${v1.id}`, { token: u.token })).id).toBe(v1.id);
    expect(await json(`/api/v2/filters/${v1.id}/keywords`, { token: u.token })).toEqual([
      { id: v1.id, keyword: "spoiler", whole_word: true },
    ]);
    expect(await json(`/api/v2/filters/${v1.id}/statuses`, { token: u.token })).toEqual([]);

    // Phanpy (masto.js) creates with a JSON body.
    const made = valid(
      FilterV2Schema,
      await json("/api/v2/filters", {
        token: u.token,
        body: {
          title: "Cats",
          context: ["home", "notifications"],
          filter_action: "warn",
          expires_in: 3600,
          keywords_attributes: [{ keyword: "cat", whole_word: false }],
        },
      }),
    );
    expect(made).toMatchObject({
      title: "Cats",
      context: ["home", "notifications"],
      filter_action: "warn",
      keywords: [{ keyword: "cat", whole_word: false }],
    });
    const cat = made.keywords[0]!.id;
    expect(Date.parse(made.expires_at!)).toBeGreaterThan(Date.now() + 3500_000);
    // Its keyword through v1.
    expect(valid(FilterSchema, await json(`/api/v1/filters/${cat}`, { token: u.token }))).toMatchObject({
      phrase: "cat",
      irreversible: false,
      whole_word: false,
    });

    // A form body in Rails' nested style; a filter without keywords keeps none.
    const form = new URLSearchParams([
      ["context[]", "thread"],
      ["filter_action", "hide"],
      ["keywords_attributes[][keyword]", "dog"],
      ["keywords_attributes[][whole_word]", "true"],
      ["title", "Dogs"],
    ]);
    const fromForm = valid(FilterV2Schema, await json("/api/v2/filters", { token: u.token, body: form }));
    expect(fromForm).toMatchObject({
      title: "Dogs",
      context: ["thread"],
      filter_action: "hide",
      keywords: [{ keyword: "dog", whole_word: true }],
    });
    const titled = valid(
      FilterV2Schema,
      await json("/api/v2/filters", { token: u.token, body: { title: "birds", context: ["public"] } }),
    );
    expect(titled).toMatchObject({
      title: "birds",
      filter_action: "warn",
      keywords: [],
    });

    // Phanpy's edit: replace the keyword, change the action and contexts, clear the expiry.
    const edited = valid(
      FilterV2Schema,
      await json(`/api/v2/filters/${made.id}`, {
        method: "PUT",
        token: u.token,
        body: {
          title: "Kittens",
          context: ["public"],
          filter_action: "hide",
          expires_in: "",
          keywords_attributes: [
            { id: cat, _destroy: true },
            { keyword: "kitten", whole_word: true },
          ],
        },
      }),
    );
    expect(edited).toMatchObject({
      id: made.id,
      title: "Kittens",
      context: ["public"],
      filter_action: "hide",
      expires_at: null,
      keywords: [{ keyword: "kitten", whole_word: true }],
    });
    // Changing only the action keeps the rest.
    const warned = await json(`/api/v2/filters/${made.id}`, {
      method: "PUT",
      token: u.token,
      body: { filter_action: "warn" },
    });
    expect(warned).toMatchObject({ title: "Kittens", context: ["public"], filter_action: "warn" });

    // Bad input is refused whole, and nothing changes: a removed keyword is gone.
    await json(`/api/v2/filters/${made.id}`, {
      method: "PUT",
      token: u.token,
      body: { title: "x", keywords_attributes: [{ id: cat, _destroy: true }] },
      status: 404,
    });
    expect(
      (await json("/api/v2/filters", { token: u.token, body: { title: "x", context: ["elsewhere"] }, status: 422 }))
        .error,
    ).toMatch(/context/i);
    await json("/api/v2/filters", { token: u.token, body: { context: ["home"] }, status: 422 });
    expect((await json(`/api/v2/filters/${made.id}`, { token: u.token })).title).toBe("Kittens");

    // Another user's filter does not exist for them.
    await json(`/api/v2/filters/${made.id}`, { token: other.token, status: 404 });
    await json(`/api/v2/filters/${made.id}`, {
      method: "PUT",
      token: other.token,
      body: { filter_action: "hide" },
      status: 404,
    });
    await json(`/api/v2/filters/${made.id}`, { method: "DELETE", token: other.token, status: 404 });
    expect(await json("/api/v2/filters", { token: other.token })).toEqual([]);
    await json("/api/v2/filters", { status: 403 });
    await json("/api/v2/filters", {
      token: await scopedToken(u, "read"),
      body: { title: "x", context: ["home"] },
      status: 403,
    });

    expect(await json(`/api/v2/filters/${made.id}`, { method: "DELETE", token: u.token })).toEqual({});
    await json(`/api/v1/filters/${edited.keywords[0]!.id}`, { token: u.token, status: 404 });
    expect((await json("/api/v2/filters", { token: u.token })).map((f: { id: string }) => f.id)).toEqual([
      v1.id,
      fromForm.id,
      titled.id,
    ]);
  });

  it("takes keywords on their own, as Tusky adds them after creating the filter", async () => {
    const [u, other] = await Promise.all([registerUser(), registerUser()]);
    const made = valid(
      FilterV2Schema,
      await json("/api/v2/filters", {
        token: u.token,
        body: { title: "ads", context: ["home"], filter_action: "warn" },
      }),
    );
    const kw = valid(
      FilterKeywordSchema,
      await json(`/api/v2/filters/${made.id}/keywords`, {
        token: u.token,
        body: { keyword: "advert", whole_word: false },
        form: true,
      }),
    );
    expect(kw).toEqual({ id: expect.any(String), keyword: "advert", whole_word: false });
    expect(valid(FilterV2Schema, await json(`/api/v2/filters/${made.id}`, { token: u.token })).keywords).toEqual([kw]);
    expect(await json(`/api/v2/filter_keywords/${kw.id}`, { token: u.token })).toEqual(kw);
    const changed = await json(`/api/v2/filter_keywords/${kw.id}`, {
      method: "PUT",
      token: u.token,
      body: { keyword: "adverts", whole_word: true },
    });
    expect(changed).toEqual({ id: kw.id, keyword: "adverts", whole_word: true });
    expect((await json(`/api/v1/filters/${kw.id}`, { token: u.token })).phrase).toBe("adverts");
    // Other users' filters do not exist for them; an empty keyword is refused.
    await json(`/api/v2/filter_keywords/${kw.id}`, { token: other.token, status: 404 });
    await json(`/api/v2/filters/${made.id}/keywords`, {
      token: other.token,
      body: { keyword: "mine now" },
      status: 404,
    });
    await json(`/api/v2/filters/${made.id}/keywords`, { token: u.token, body: { keyword: "  " }, status: 422 });
    expect(await json(`/api/v2/filter_keywords/${kw.id}`, { method: "DELETE", token: u.token })).toEqual({});
    expect((await json(`/api/v2/filters/${made.id}`, { token: u.token })).keywords).toEqual([]);
  });
});

describe("Pleroma's token management", () => {
  it("lists the user's own tokens with their app names, and revokes only the user's own", async () => {
    const [u, other] = await Promise.all([registerUser(), registerUser()]);
    const named = await json("/api/v1/apps", {
      body: { client_name: "Pleroma-FE", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read write push" },
    });
    const second = valid(
      TokenSchema,
      await json("/oauth/token", {
        body: {
          grant_type: "password",
          client_id: named.client_id,
          client_secret: named.client_secret,
          username: u.username,
          password: u.password,
        },
      }),
    );
    // A browser session from the sign-in page counts too.
    const page = await call(
      `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: named.client_id, redirect_uri: "urn:ietf:wg:oauth:2.0:oob" })}`,
    );
    const csrf = page.headers.get("set-cookie")!.split(";")[0];
    const fields = new URLSearchParams();
    for (const m of (await page.text()).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      fields.set(m[1], m[2].replace(/&amp;/g, "&"));
    fields.set("username", u.username);
    fields.set("password", u.password);
    fields.set("decision", "approve");
    const signedIn = await call("/oauth/authorize", { body: fields, headers: { cookie: csrf } });
    const session = signedIn.headers
      .get("set-cookie")!
      .split(", ")
      .find((c) => c.startsWith("_pleroma_key="))!
      .split(";")[0];

    // Pleroma-FE's request, with the session cookie; the plain path answers the same.
    const entries = all(
      OAuthTokenEntrySchema,
      await json("/api/oauth_tokens.json", { headers: { cookie: session, ...ACCEPT } }),
    );
    expect(entries.map((e) => e.app_name)).toEqual(["Test client", "Pleroma-FE", "Browser session"]);
    expect(entries[1].id).toBe(second.id);
    entries.forEach((e) => expect(Date.parse(e.valid_until)).toBeGreaterThan(Date.now()));
    expect(await json("/api/oauth_tokens", { token: u.token })).toEqual(entries);
    const theirs = await json("/api/oauth_tokens", { token: other.token });
    expect(theirs).toHaveLength(1);
    expect(theirs.map((e: { id: string }) => e.id)).not.toContain(second.id);
    await json("/api/oauth_tokens.json", { status: 403 });
    await json("/api/oauth_tokens", { token: await appToken(u.app), status: 403 });

    // A push subscription on the token goes with it.
    const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
      "deriveBits",
    ])) as CryptoKeyPair;
    const raw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
    const b64 = (b: Uint8Array) =>
      btoa(String.fromCharCode(...b))
        .replace(/\+/g, "-")
        .replace(/\//g, "_")
        .replace(/=+$/, "");
    await json("/api/v1/push/subscription", {
      token: second.access_token,
      body: {
        subscription: {
          endpoint: "https://push.example/send/tokens",
          keys: { p256dh: b64(raw), auth: b64(crypto.getRandomValues(new Uint8Array(16))) },
        },
      },
    });
    const subscriptions = () =>
      env.DB.prepare("SELECT count(*) AS n FROM push_subscriptions WHERE token_id = ?")
        .bind(second.id)
        .first<{ n: number }>("n");
    expect(await subscriptions()).toBe(1);

    // Another user cannot revoke it: 404, and it still works.
    expect(await json(`/api/oauth_tokens/${second.id}`, { method: "DELETE", token: other.token, status: 404 })).toEqual(
      { error: "Record not found" },
    );
    await json("/api/v1/accounts/verify_credentials", { token: second.access_token });
    await json(`/api/oauth_tokens/${second.id}`, { method: "DELETE", status: 403 });

    // Its owner can (Pleroma answers 201), from the browser session.
    const res = await call(`/api/oauth_tokens/${second.id}`, { method: "DELETE", headers: { cookie: session } });
    expect(res.status).toBe(201);
    expect(await json("/api/v1/accounts/verify_credentials", { token: second.access_token, status: 403 })).toEqual({
      error: "Invalid credentials.",
    });
    expect(await subscriptions()).toBe(0);
    await json(`/api/oauth_tokens/${second.id}`, { method: "DELETE", token: u.token, status: 404 });
    expect((await json("/api/oauth_tokens", { token: u.token })).map((e: { app_name: string }) => e.app_name)).toEqual([
      "Test client",
      "Browser session",
    ]);
    // The user's other tokens are untouched.
    await json("/api/v1/accounts/verify_credentials", { token: u.token });

    // Listing needs a read scope and revoking a write scope: a token granted only `push` and `read:statuses`
    // cannot list them, and a read-only token cannot end another session.
    const grant = (scope: string) =>
      json("/oauth/token", {
        body: {
          grant_type: "password",
          client_id: u.app.client_id,
          client_secret: u.app.client_secret,
          username: u.username,
          password: u.password,
          scope,
        },
      });
    const narrow = await grant("push read:statuses");
    expect((await json("/api/oauth_tokens", { token: narrow.access_token, status: 403 })).error).toMatch(
      /Insufficient permissions/,
    );
    const readOnly = await grant("read");
    const listed = await json("/api/oauth_tokens", { token: readOnly.access_token });
    const victim = listed.find(
      (e: { id: string; app_name: string }) => e.id !== readOnly.access_token && e.app_name === "Browser session",
    );
    await json(`/api/oauth_tokens/${victim.id}`, { method: "DELETE", token: readOnly.access_token, status: 403 });
    expect((await json("/api/oauth_tokens", { token: u.token })).map((e: { id: string }) => e.id)).toContain(victim.id);
  });
});
