/**
 * Installable frontends (issue 34): Pleroma's admin API to list and install them (an uploaded zip, or a
 * `build_url` fetched through the SSRF guard), the `:frontends` setting, and what a browser and a server get on
 * each path once a primary and an admin frontend are chosen.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { RETENTION_MINUTE } from "../src/cron/index";
import worker from "../src/index";
import { zipSync, strToU8 } from "fflate";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { FrontendSchema } from "../src/routes/admin/frontends";
import { StatusSchema } from "../src/schemas/status";
import { deflateBomb, rawZip } from "./fixtures/zip-bombs";
import { call, json, makeAdmin, post, registerUser, valid, type TestUser } from "./helpers";

const ADMIN_SCOPES = "read write follow push admin";
const List = z.array(FrontendSchema);
const HTML = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

const INDEX = `<!DOCTYPE html><html><head><meta charset="utf-8">
<!--server-generated-meta-->
<script type="module" src="/static/js/main.DinL-YV_.js"></script></head><body><div id="app"></div></body></html>`;

/** A build archive: `files` under `dist/` unless a path says otherwise. */
function archive(files: Record<string, string>, dir = "dist/"): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(files).map(([p, text]) => [dir + p, strToU8(text)])));
}

const PLEROMA_FE = () =>
  archive({
    "index.html": INDEX,
    "static/js/main.DinL-YV_.js": "console.log('fe')",
    "static/config.json": '{"theme":"pleroma-dark"}',
    "sw-pleroma.js": "self.addEventListener('fetch', () => {})",
    "static/terms-of-service.html": "<p>The frontend's own terms</p>",
    "static/favicon-32x32.png": "png",
    "static/font/Roboto-Regular.woff2": "font",
    // What a build must never serve: the server's own paths.
    ".well-known/acme-challenge/token": "proof of the domain",
    "api/v1/instance": '{"title":"not this"}',
  });

const HOUR = 3_600_000;

/** A cron run at the first retention minute (when the sweep runs) at or after `at`. */
async function runCron(at: number) {
  const minute = RETENTION_MINUTE * 60_000;
  const t = Math.ceil((at - minute) / HOUR) * HOUR + minute;
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: new Date(t), cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

let admin: TestUser;
let plain: TestUser;

beforeAll(async () => {
  admin = await registerUser({ scopes: ADMIN_SCOPES });
  await makeAdmin(admin.id);
  plain = await registerUser({ scopes: ADMIN_SCOPES });
});

function install(fields: Record<string, string | Uint8Array>, token = admin.token, status = 200) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields))
    form.set(k, typeof v === "string" ? v : new File([v], "build.zip", { type: "application/zip" }));
  return json("/api/v1/pleroma/admin/frontends/install", { token, body: form, status });
}

const choose = (configs: { primary?: unknown; admin?: unknown }) =>
  json("/api/v1/pleroma/admin/config", {
    token: admin.token,
    body: {
      configs: [
        {
          group: ":pleroma",
          key: ":frontends",
          value: Object.entries(configs).map(([k, v]) => ({ tuple: [`:${k}`, v] })),
        },
      ],
    },
  });

const r2Keys = async (prefix: string) => (await env.PRIVATE.list({ prefix })).objects.map((o) => o.key);

describe("the admin API", () => {
  it("lists the frontends Starling knows, none installed, to admins only", async () => {
    const list = valid(List, await json("/api/v1/pleroma/admin/frontends", { token: admin.token }));
    expect(list.map((f) => f.name)).toEqual(["pleroma-fe", "admin-fe"]);
    expect(list[0]).toMatchObject({ installed: false, installed_refs: [], ref: "develop" });
    expect(list[0].build_url).toContain("${ref}");
    // Pleroma's unversioned path too.
    expect(await json("/api/pleroma/admin/frontends", { token: admin.token })).toEqual(list);
    await json("/api/v1/pleroma/admin/frontends", { token: plain.token, status: 403 });
    await json("/api/v1/pleroma/admin/frontends", { status: 403 });
    await install({ name: "pleroma-fe", ref: "stable", file: PLEROMA_FE() }, plain.token, 403);
  });

  it("installs an uploaded build under its name and ref, and logs who did", async () => {
    const list = valid(List, await install({ name: "pleroma-fe", ref: "stable", file: PLEROMA_FE() }));
    expect(list.find((f) => f.name === "pleroma-fe")).toMatchObject({ installed: true, installed_refs: ["stable"] });
    const keys = await r2Keys("frontends/pleroma-fe/stable/");
    expect(keys.map((k) => k.split("/").slice(4).join("/")).sort()).toEqual([
      ".well-known/acme-challenge/token",
      "api/v1/instance",
      "index.html",
      "static/config.json",
      "static/favicon-32x32.png",
      "static/font/Roboto-Regular.woff2",
      "static/js/main.DinL-YV_.js",
      "static/terms-of-service.html",
      "sw-pleroma.js",
    ]);
    const log = await json("/api/v1/pleroma/admin/moderation_log", { token: admin.token });
    expect(log.items[0].message).toBe(`@${admin.username} installed the frontend pleroma-fe (stable)`);
  });

  it("refuses what would escape the build, overflow it or is not one, storing nothing", async () => {
    const before = await r2Keys("frontends/");
    const refused = async (fields: Record<string, string | Uint8Array>, status: number, error: RegExp) => {
      const res = await install({ name: "bad-fe", ref: "x", ...fields }, admin.token, status);
      expect(res.error).toMatch(error);
    };
    await refused({ file: archive({ "index.html": INDEX, "../escape.js": "x" }) }, 422, /unsafe path/);
    await refused({ file: archive({ "index.html": INDEX, "a//b.js": "x" }) }, 422, /unsafe path/);
    await refused({ file: archive({ "index.html": INDEX, "a\\b.js": "x" }) }, 422, /unsafe path/);
    await refused({ file: archive({ "app.js": "x" }) }, 422, /no dist\/index.html/);
    await refused({ file: strToU8("not a zip at all") }, 422, /not a zip/);
    const many = Object.fromEntries(Array.from({ length: 961 }, (_, i) => [`f${i}.js`, "x"]));
    await refused({ file: archive({ "index.html": INDEX, ...many }) }, 422, /more than 960 files/);
    await refused({ file: PLEROMA_FE(), build_dir: "../dist" }, 400, /build_dir/);
    await install({ name: "../etc", ref: "x", file: PLEROMA_FE() }, admin.token, 400);
    await install({ name: "ok", ref: "..", file: PLEROMA_FE() }, admin.token, 400);
    // A frontend Starling does not know needs a ref and a source.
    expect((await install({ name: "unknown-fe", file: PLEROMA_FE() }, admin.token, 400)).error).toMatch(/ref/);
    expect((await install({ name: "unknown-fe", ref: "v1" }, admin.token, 400)).error).toMatch(/build_url/);
    expect(await r2Keys("frontends/")).toEqual(before);
  });

  it("refuses, within a second, a build whose file inflates to far more than it declares (422), installing nothing", async () => {
    const bomb = deflateBomb(4_000_000); // ~650 MB of zeros
    const index = strToU8(INDEX);
    const zip = rawZip([
      { name: "dist/index.html", data: index, size: index.length, method: 0 },
      { name: "dist/app.js", data: bomb.data, size: bomb.data.length + 100_000 },
    ]);
    const started = Date.now();
    const res = await install({ name: "bomb-fe", ref: "x", file: zip }, admin.token, 422);
    expect(Date.now() - started).toBeLessThan(3_000); // bounded well under a second; 3 s for a busy CI machine
    expect(res.error).toMatch(/dist\/app.js inflates to more than its declared \d+ bytes/);
    const list = valid(List, await json("/api/v1/pleroma/admin/frontends", { token: admin.token }));
    expect(list.find((f) => f.name === "bomb-fe")?.installed ?? false).toBe(false);
  });

  it("leaves out what no browser fetches (source maps, precompressed copies, woff beside woff2): a Soapbox-sized build fits", async () => {
    // Soapbox's shape: 1,600 files with its source maps; its fonts a woff2 and a woff per subset and weight.
    const files: Record<string, string> = { "index.html": INDEX, "report.html": "<p>bundle report</p>" };
    for (let i = 0; i < 250; i++) {
      files[`packs/js/chunk${i}-Ab${String(i).padStart(6, "0")}.js`] = "x";
      files[`packs/js/chunk${i}-Ab${String(i).padStart(6, "0")}.js.map`] = "{}";
    }
    for (let i = 0; i < 250; i++) {
      files[`packs/assets/inter-latin-${i}-normal-Cd${String(i).padStart(6, "0")}.woff2`] = "w2";
      files[`packs/assets/inter-latin-${i}-normal-Ef${String(i).padStart(6, "0")}.woff`] = "w1";
    }
    files["packs/assets/alone-Gh123456.woff"] = "a woff without a woff2 is kept";
    files["sw.js"] = "sw";
    files["sw.js.gz"] = "gz";
    files["sw.js.br"] = "br";
    files["orphan.txt.gz"] = "a .gz with nothing beside it is kept";
    // More entries than may be stored, fewer once what is not served is left out.
    expect(Object.keys(files).length).toBeGreaterThan(1_000);
    await install({ name: "soapbox-like", ref: "big", file: archive(files) });
    const stored = (await r2Keys("frontends/soapbox-like/big/")).map((k) => k.split("/").slice(4).join("/"));
    expect(stored.length).toBe(1 + 1 + 250 + 250 + 1 + 1 + 1);
    expect(stored.some((k) => k.endsWith(".map"))).toBe(false);
    expect(stored.filter((k) => k.endsWith(".woff"))).toEqual(["packs/assets/alone-Gh123456.woff"]);
    expect(stored).toContain("orphan.txt.gz");
    expect(stored).not.toContain("sw.js.gz");
    expect(stored).not.toContain("sw.js.br");
    expect(stored).toContain("sw.js");
  });

  it("takes a build at the archive's root, and another build_dir", async () => {
    await install({ name: "root-fe", ref: "v1", file: archive({ "index.html": INDEX }, "") });
    await install({ name: "dir-fe", ref: "v1", build_dir: "build", file: archive({ "index.html": INDEX }, "build/") });
    const list = valid(List, await json("/api/v1/pleroma/admin/frontends", { token: admin.token }));
    expect(list.filter((f) => f.installed).map((f) => f.name)).toEqual([
      "pleroma-fe",
      "dir-fe",
      "root-fe",
      "soapbox-like",
    ]);
    expect(list.find((f) => f.name === "root-fe")).toMatchObject({ git: null, build_url: null, ref: null });
  });
});

describe("installing from a build_url", () => {
  const previous = globalThis.fetch;
  const asked: string[] = [];
  afterEach(() => {
    globalThis.fetch = previous;
  });
  const serve = (answer: (url: string) => Response) => {
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new Request(input, init).url;
      asked.push(url);
      return answer(url);
    }) as typeof fetch;
  };

  it("downloads the artifact with the ref put in, through the SSRF guard", async () => {
    serve((url) =>
      url === "https://builds.example/admin-fe/v2.5.0.zip"
        ? new Response(archive({ "index.html": "<html><head></head><body>admin</body></html>" }))
        : new Response("no", { status: 404 }),
    );
    const res = await call("/api/v1/pleroma/admin/frontends/install", {
      token: admin.token,
      vars: { ALLOW_PRIVATE_ADDRESS: "true" },
      body: { name: "admin-fe", ref: "v2.5.0", build_url: "https://builds.example/admin-fe/${ref}.zip" },
    });
    expect(res.status).toBe(200);
    const list = valid(List, await res.json());
    expect(list.find((f) => f.name === "admin-fe")?.installed_refs).toEqual(["v2.5.0"]);
    expect(asked).toContain("https://builds.example/admin-fe/v2.5.0.zip");

    const missing = await call("/api/v1/pleroma/admin/frontends/install", {
      token: admin.token,
      vars: { ALLOW_PRIVATE_ADDRESS: "true" },
      body: { name: "admin-fe", ref: "nope", build_url: "https://builds.example/admin-fe/${ref}.zip" },
    });
    expect(missing.status).toBe(502);
    expect(((await missing.json()) as { error: string }).error).toMatch(/answered 404/);
  });

  it("refuses a private address and a redirect to one", async () => {
    serve(() => new Response(null, { status: 302, headers: { Location: "http://10.0.0.1/x.zip" } }));
    for (const build_url of ["http://127.0.0.1:8080/x.zip", "http://[::1]/x.zip", "file:///etc/passwd"]) {
      const res = await json("/api/v1/pleroma/admin/frontends/install", {
        token: admin.token,
        body: { name: "admin-fe", ref: "evil", build_url },
        status: build_url.startsWith("file") ? 400 : 422,
      });
      expect(res.error).toBeTruthy();
    }
    const res = await json("/api/v1/pleroma/admin/frontends/install", {
      token: admin.token,
      body: { name: "admin-fe", ref: "evil", build_url: "https://93.184.216.34/x.zip" },
      status: 422,
    });
    expect(res.error).toMatch(/refused/);
  });
});

describe("serving", () => {
  let alice: TestUser;
  let publicId: string;
  let privateId: string;

  beforeAll(async () => {
    alice = await registerUser();
    publicId = valid(StatusSchema, await post(alice, { status: "Hello from the frontend test" })).id;
    privateId = valid(StatusSchema, await post(alice, { status: "secret words", visibility: "private" })).id;
  });

  it("shows the built-in pages while no primary frontend is chosen", async () => {
    const res = await call("/", { headers: HTML });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(res.headers.get("Content-Security-Policy")).not.toContain("script-src");
    expect(await res.text()).toContain("no web app of its own");
    expect((await call("/main/all", { headers: HTML })).status).toBe(404);
    expect((await call("/static/config.json")).status).toBe(404);
  });

  it("reads an unchosen frontend as Pleroma's name none (admin-fe reads name and ref of each)", async () => {
    const all = await json("/api/v1/pleroma/admin/config", { token: admin.token });
    const entry = all.configs.find((e: { key: string }) => e.key === ":frontends");
    expect(entry).toEqual({
      group: ":pleroma",
      key: ":frontends",
      value: [
        { tuple: [":primary", { name: "none", ref: "none" }] },
        { tuple: [":admin", { name: "none", ref: "none" }] },
      ],
      db: [],
    });
  });

  it("refuses a :frontends value that is not a name and a ref", async () => {
    for (const value of [{ name: "../x", ref: "a" }, 42, { ref: "a" }])
      await json("/api/v1/pleroma/admin/config", {
        token: admin.token,
        body: { configs: [{ group: ":pleroma", key: ":frontends", value: [{ tuple: [":primary", value] }] }] },
        status: 400,
      });
    await json("/api/v1/pleroma/admin/config", {
      token: admin.token,
      body: { configs: [{ group: ":pleroma", key: ":frontends", value: [{ tuple: [":available", {}] }] }] },
      status: 400,
    });
  });

  it("serves the primary frontend's index with each page's tags to browsers", async () => {
    const saved = await choose({ primary: { name: "pleroma-fe", ref: "stable" } });
    expect(saved.configs[0]).toMatchObject({ key: ":frontends", db: [":primary"] });

    const home = await call("/", { headers: HTML });
    expect(home.status).toBe(200);
    expect(home.headers.get("Cache-Control")).toBe("no-cache");
    expect(home.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    expect(home.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    const homeHtml = await home.text();
    expect(homeHtml).toContain('<div id="app">');
    expect(homeHtml).toContain('<meta property="og:type" content="website">');
    expect(homeHtml).not.toContain("<!--server-generated-meta-->");

    const profile = await (await call(`/users/${alice.username}`, { headers: HTML })).text();
    expect(profile).toContain('<div id="app">');
    expect(profile).toContain(`<meta property="profile:username" content="${alice.username}@`);

    const status = await (await call(`/notice/${publicId}`, { headers: HTML })).text();
    expect(status).toContain("Hello from the frontend test");
    expect(status).toContain('<meta property="og:type" content="article">');

    // A private status's words never reach the page's tags: the visitor gets the instance's.
    const hidden = await call(`/notice/${privateId}`, { headers: HTML });
    expect(hidden.status).toBe(200);
    const hiddenHtml = await hidden.text();
    expect(hiddenHtml).not.toContain("secret words");
    expect(hiddenHtml).toContain('<meta property="og:type" content="website">');

    // Pleroma-FE's and Mastodon's short profile URLs carry the profile's tags.
    for (const path of [`/@${alice.username}`, `/${alice.username}`])
      expect(await (await call(path, { headers: HTML })).text(), path).toContain(
        `<meta property="profile:username" content="${alice.username}@`,
      );

    // The frontend's own routes and an unknown profile get the index too (it shows its own pages and errors).
    for (const path of ["/main/all", "/login", "/settings/profile", `/users/nobody-here`]) {
      const res = await call(path, { headers: HTML });
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain('<div id="app">');
    }
  });

  it("serves the build's files with their types, hashed ones cached for a year", async () => {
    const js = await call("/static/js/main.DinL-YV_.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("Content-Type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(js.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(await js.text()).toBe("console.log('fe')");
    const etag = js.headers.get("ETag")!;
    const again = await call("/static/js/main.DinL-YV_.js", { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);

    const cfg = await call("/static/config.json");
    expect(cfg.headers.get("Content-Type")).toBe("application/json");
    expect(cfg.headers.get("Cache-Control")).toBe("public, max-age=300");
    expect(await cfg.json()).toEqual({ theme: "pleroma-dark" });
    const head = await call("/sw-pleroma.js", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    // Names that only look hashed are not cached for a year.
    for (const path of ["/static/favicon-32x32.png", "/static/font/Roboto-Regular.woff2"])
      expect((await call(path)).headers.get("Cache-Control"), path).toBe("public, max-age=300");
    // The server's own paths are never a build's file.
    expect((await call("/.well-known/acme-challenge/token")).status).toBe(404);
    expect(await (await call("/api/v1/instance")).json()).not.toEqual({ title: "not this" });
    // The frontend's own terms are what admin-fe shows until an admin uploads the instance's.
    expect(await (await call("/static/terms-of-service.html")).text()).toBe("<p>The frontend's own terms</p>");
    const terms = await call("/api/pleroma/admin/instance_document/terms-of-service", { token: admin.token });
    expect(await terms.text()).toBe("<p>The frontend's own terms</p>");
    expect((await call("/static/js/missing.js")).status).toBe(404);
    expect((await call("/static/%E0%A4%A.js")).status).toBe(404);
  });

  it("leaves the API, federation, OAuth and the built-in forms as they were", async () => {
    const api = await call("/api/v1/nothing-here", { headers: HTML });
    expect(api.status).toBe(404);
    expect(api.headers.get("Content-Type")).toContain("application/json");
    const actor = await call(`/users/${alice.username}`, { headers: { Accept: "application/activity+json" } });
    expect(actor.status).toBe(200);
    expect(actor.headers.get("Content-Type")).toContain("activity+json");
    expect((await call("/.well-known/nodeinfo")).status).toBe(200);
    // A build's files are served at their own paths, never as media.
    const [someKey] = await r2Keys("frontends/pleroma-fe/stable/");
    expect((await call(`/media/${someKey}`)).status).toBe(404);
    expect(await (await call("/auth/sign_up", { headers: HTML })).text()).toContain("<form");
    expect(await (await call("/api/pleroma/frontend_configurations")).json()).toEqual({});
    // A script or an image asking for a file that is not there gets a 404, not the index; a link-preview fetcher
    // asking for anything (or nothing) at a page's path gets the page, with its tags.
    expect((await call("/static/missing.png", { headers: { Accept: "image/*" } })).status).toBe(404);
    expect((await call("/missing.js", { headers: { Accept: "*/*" } })).status).toBe(404);
    const preview = await call(`/@${alice.username}`, { headers: { Accept: "*/*" } });
    expect(preview.status).toBe(200);
    expect(await preview.text()).toContain(`<meta property="profile:username" content="${alice.username}@`);
    expect(await (await call("/registration/nothing", { headers: HTML })).text()).not.toContain('id="app"');
  });

  it("swaps a reinstalled ref at once, keeping the old build's files an hour for pages still loading them", async () => {
    const old = await r2Keys("frontends/pleroma-fe/stable/");
    await install({
      name: "pleroma-fe",
      ref: "stable",
      file: archive({
        "index.html": INDEX.replace('id="app"', 'id="app2"').replace("</head>", "<title>Pleroma</title></head>"),
        "static/js/main.DinL-YV_.js": "2",
      }),
    });
    const both = await r2Keys("frontends/pleroma-fe/stable/");
    expect(both).toEqual(expect.arrayContaining(old));
    expect(both).toHaveLength(old.length + 2);
    const home = await (await call("/", { headers: HTML })).text();
    expect(home).toContain('id="app2"');
    // The page's title replaces the index's own.
    expect(home.match(/<title>/g)).toHaveLength(1);
    expect(home).not.toContain("<title>Pleroma</title>");
    expect((await call("/static/config.json")).status).toBe(404);
    // Two hours later the sweep has deleted the replaced build, and only it.
    await runCron(Date.now() + 2 * HOUR);
    const after = await r2Keys("frontends/pleroma-fe/stable/");
    expect(after).toHaveLength(2);
    expect(after.some((k) => old.includes(k))).toBe(false);
  });

  it("serves the admin frontend at /pleroma/admin/ once chosen", async () => {
    expect((await call("/pleroma/admin/", { headers: HTML })).status).toBe(404);
    expect((await call("/pleroma/admin/static/js/app.1a2b3c4d.js")).status).toBe(404);
    await install({
      name: "admin-fe",
      ref: "stable",
      file: archive({ "index.html": "<html><head></head><body>panel</body></html>", "static/js/app.1a2b3c4d.js": "1" }),
    });
    await choose({ admin: { name: "admin-fe", ref: "stable" } });
    const bare = await call("/pleroma/admin", { headers: HTML });
    expect(bare.status).toBe(301);
    expect(bare.headers.get("Location")).toBe("/pleroma/admin/");
    const index = await call("/pleroma/admin/", { headers: HTML });
    expect(index.status).toBe(200);
    expect(await index.text()).toContain("panel");
    const js = await call("/pleroma/admin/static/js/app.1a2b3c4d.js");
    expect(js.headers.get("Cache-Control")).toContain("immutable");
    // The primary frontend is untouched; `none` turns the admin one off again.
    expect(await (await call("/", { headers: HTML })).text()).toContain('id="app2"');
    await choose({ admin: "none" });
    expect((await call("/pleroma/admin/", { headers: HTML })).status).toBe(404);
  });

  it("goes back to the built-in pages when the primary setting is deleted", async () => {
    await json("/api/v1/pleroma/admin/config", {
      token: admin.token,
      body: { configs: [{ group: ":pleroma", key: ":frontends", delete: true }] },
    });
    expect(await (await call("/", { headers: HTML })).text()).toContain("no web app of its own");
    expect((await call("/static/js/main.DinL-YV_.js")).status).toBe(404);
  });
});

describe("frontend configurations", () => {
  const set = (value: unknown, status = 200) =>
    json("/api/v1/pleroma/admin/config", {
      token: admin.token,
      body: { configs: [{ group: ":pleroma", key: ":frontend_configurations", value }] },
      status,
    });
  const read = () => json("/api/pleroma/frontend_configurations");

  it("gives each frontend the settings an admin saved, each frontend's map replaced alone", async () => {
    await set([
      { tuple: [":pleroma_fe", { theme: "ocean", redirectRootNoLogin: "/main/all" }] },
      { tuple: [":masto_fe", { showInstanceSpecificPanel: true }] },
    ]);
    expect(await read()).toEqual({
      pleroma_fe: { theme: "ocean", redirectRootNoLogin: "/main/all" },
      masto_fe: { showInstanceSpecificPanel: true },
    });
    await set([{ tuple: [":pleroma_fe", { theme: "pleroma-dark" }] }]);
    expect(await read()).toEqual({
      pleroma_fe: { theme: "pleroma-dark" },
      masto_fe: { showInstanceSpecificPanel: true },
    });
    const all = await json("/api/v1/pleroma/admin/config", { token: admin.token });
    expect(all.configs.find((e: { key: string }) => e.key === ":frontend_configurations")).toMatchObject({
      db: [":pleroma_fe", ":masto_fe"],
    });
  });

  it("refuses what is not a map per frontend name, or too large, changing nothing", async () => {
    const before = await read();
    await set([{ tuple: [":pleroma_fe", ["a"]] }], 400);
    await set([{ tuple: [':x"]', { a: 1 }] }], 400);
    await set([{ tuple: [":pleroma_fe", { big: "x".repeat(9_000) }] }], 400);
    await set([{ tuple: [":someone_elses_fe", { a: 1 }] }], 400);
    await set("nope", 400);
    expect(await read()).toEqual(before);
    await json("/api/v1/pleroma/admin/config", {
      token: admin.token,
      body: { configs: [{ group: ":pleroma", key: ":frontend_configurations", delete: true }] },
    });
    expect(await read()).toEqual({});
  });
});

describe("the hourly sweep", () => {
  it("deletes files no installed build names once they are an hour old, reading what is installed afresh", async () => {
    await install({ name: "sweep-fe", ref: "v1", file: archive({ "index.html": INDEX }) });
    await env.PRIVATE.put("frontends/sweep-fe/v1/half-written/index.html", "left by a failed install");
    await env.PRIVATE.put("frontends/gone-fe/v0/old/app.js", "left by a build nobody names");
    // Within the hour an install may still be writing: nothing goes (the next run is less than an hour away).
    await runCron(Date.now());
    expect(await r2Keys("frontends/gone-fe/")).toHaveLength(1);
    // Another isolate (or the command line) installs a new build after this isolate read the rows: the sweep must
    // see it, not its cached copy.
    await env.PRIVATE.put("frontends/sweep-fe/v1/cli-build/index.html", INDEX);
    await env.DB.prepare(
      `UPDATE frontends SET previous_build = build, replaced_at = ?, build = 'cli-build',
         files = '[{"path":"index.html","type":"text/html; charset=utf-8","size":1}]' WHERE name = 'sweep-fe'`,
    )
      .bind(Date.now())
      .run();
    const previous = (await r2Keys("frontends/sweep-fe/")).filter((k) => !/cli-build|half-written/.test(k));
    await runCron(Date.now() + 2 * HOUR);
    expect(await r2Keys("frontends/gone-fe/")).toEqual([]);
    expect(await r2Keys("frontends/sweep-fe/")).toEqual(["frontends/sweep-fe/v1/cli-build/index.html"]);
    expect(previous.length).toBeGreaterThan(0);
    const job = await env.DB.prepare("SELECT last_result FROM job_heartbeats WHERE name = 'frontend_files'").first();
    expect(JSON.parse(job!.last_result as string).deleted).toBeGreaterThanOrEqual(3);
  });
});

describe("upload size", () => {
  it("refuses an archive over the limit before reading it", async () => {
    const res = await call("/api/v1/pleroma/admin/frontends/install", {
      token: admin.token,
      headers: { "Content-Type": "multipart/form-data; boundary=x", "Content-Length": "40000000" },
      body: "--x--",
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toMatch(/command line/);
  });
});
