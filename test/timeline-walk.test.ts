/**
 * Public and tag pages walk a bounded stretch of their index (services/timelines.ts `PUBLIC_WALK`): a filter that
 * matches nothing (a visibility the audience cannot see, an unknown instance, media on a text-only timeline) costs
 * a fixed number of rows, not the whole index; a page that comes back short after its walk was cut still links
 * past the walk, so paging reaches every match. 2,000 public statuses of one local account, one in 150 with media.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { call, registerUser, valid, type TestUser } from "./helpers";
import { measure } from "../src/lib/meter";
import { StatusSchema } from "../src/schemas/status";

const STATUSES = 2_000;
const MEDIA_EVERY = 150;
/**
 * Rows a page of `limit` may read, whatever the index holds: it walks 4 entries per status asked, each a few
 * rows (the index entry, the status, its author's deactivation), and a short page probes its walk's end once.
 */
const bound = (limit: number) => limit * 4 * 5 + 20;

let author: TestUser;
let viewer: TestUser;
let withMedia: string[];

beforeAll(async () => {
  author = await registerUser();
  viewer = await registerUser();
  const t = Date.now() - 86_400_000;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, has_media, created_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       SELECT printf('0WXYZ%021d', i), 'http://localhost/s/walk' || i, 'http://localhost/s/walk' || i, ?2,
              printf('0WXYZ%021d', i), 'http://localhost/contexts/walk' || i, '<p>walk</p>', 'walk #walked', 'public', 1,
              i % ?3 = 0, ?4 + i FROM n`,
    ).bind(STATUSES, author.id, MEDIA_EVERY, t),
    env.DB.prepare(`INSERT INTO status_tags (status_id, tag) SELECT id, 'walked' FROM statuses WHERE id LIKE '0WXYZ%'`),
    // A tag whose 100 newest statuses are private, with one public status before them.
    env.DB.prepare(
      `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
       WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
       SELECT CASE WHEN i = 0 THEN '0WXZA' ELSE '0WXZB' END || printf('%021d', i), 'http://localhost/s/veiled' || i,
              'http://localhost/s/veiled' || i, ?1, 'v' || i, 'http://localhost/contexts/veiled' || i,
              CASE WHEN i = 0 THEN '<p>unveiled</p>' ELSE '<p>veiled</p>' END,
              'veiled #veiled', CASE WHEN i = 0 THEN 'public' ELSE 'private' END, 1, ?2 + 10000 + i FROM n`,
    ).bind(author.id, t),
  ]);
  await env.DB.prepare(
    `INSERT INTO status_tags (status_id, tag) SELECT id, 'veiled' FROM statuses WHERE id LIKE '0WXZA%' OR id LIKE '0WXZB%'`,
  ).run();
  const r = await env.DB.prepare(
    `SELECT id FROM statuses WHERE id LIKE '0WXYZ%' AND has_media = 1 ORDER BY id DESC`,
  ).all<{
    id: string;
  }>();
  withMedia = r.results.map((x) => x.id);
});

/** GETs a page, measuring the rows it read; returns its statuses' ids and its Link header's cursors. */
async function page(path: string, token?: string) {
  let res: Response | undefined;
  const { usage } = await measure(async () => {
    res = await call(path, { token });
  });
  const text = await res!.text();
  expect(res!.status, text.slice(0, 300)).toBe(200);
  const ids = (JSON.parse(text) as unknown[]).map((s) => valid(StatusSchema, s).id);
  const link = res!.headers.get("link") ?? "";
  const next = /[?&]max_id=([^&>]+)[^>]*>; rel="next"/.exec(link)?.[1];
  const prev = /[?&]min_id=([^&>]+)[^>]*>; rel="prev"/.exec(link)?.[1];
  return { ids, next, prev, rowsRead: usage.rowsRead, link };
}

describe("public and tag pages walk a bounded part of their index", () => {
  it("answers a filter that matches nothing in a bounded number of rows", async () => {
    const seen = await page("/api/v1/timelines/public?limit=20");
    expect(seen.ids).toHaveLength(20);
    for (const path of [
      "/api/v1/timelines/public?exclude_visibilities[]=public",
      "/api/v1/timelines/public?instance=nowhere.example",
      "/api/v1/timelines/public?remote=true",
      "/api/v1/timelines/public?only_media=true&instance=nowhere.example&limit=40",
      "/api/v1/timelines/tag/walked?only_media=true&exclude_visibilities[]=unlisted&instance=x&remote=true",
    ]) {
      const p = await page(path);
      expect(p.ids, path).toEqual([]);
      expect(p.rowsRead, path).toBeLessThan(bound(path.includes("limit=40") ? 40 : 20));
    }
    // Excluding every visibility the audience may see reads nothing at all: public (and local-only, signed in).
    expect((await page("/api/v1/timelines/public?exclude_visibilities[]=public")).rowsRead).toBeLessThan(20);
    const signedIn = await page(
      "/api/v1/timelines/public?exclude_visibilities[]=public&exclude_visibilities[]=local",
      viewer.token,
    );
    expect(signedIn.ids).toEqual([]);
    expect(signedIn.rowsRead).toBeLessThan(40);
    // Signed in, excluding public alone still shows local-only statuses (none here): a bounded walk.
    const localOnly = await page("/api/v1/timelines/public?exclude_visibilities[]=public", viewer.token);
    expect(localOnly.ids).toEqual([]);
    expect(localOnly.rowsRead).toBeLessThan(bound(20));
  });

  it("links past a short page, so paging reaches every match in order", async () => {
    for (const base of ["/api/v1/timelines/public?only_media=true", "/api/v1/timelines/tag/walked?only_media=true"]) {
      const found: string[] = [];
      let cursor = "";
      let pages = 0;
      for (;;) {
        const p = await page(`${base}&limit=20${cursor}`);
        expect(p.rowsRead, base).toBeLessThan(bound(20));
        found.push(...p.ids);
        if (!p.next) break;
        expect(p.next < (cursor.slice(8) || "~")).toBe(true);
        cursor = `&max_id=${p.next}`;
        expect(++pages).toBeLessThan(60);
      }
      expect(found, base).toEqual(withMedia);
      // Most of these pages came back empty or short, yet each linked on.
      expect(pages).toBeGreaterThan(STATUSES / 80 - 2);
    }
  });

  it("links newer past a short page read with min_id", async () => {
    const oldest = "0WXYZ" + "0".repeat(21);
    const p = await page(`/api/v1/timelines/public?only_media=true&limit=20&min_id=${oldest}`);
    // The first 80 statuses hold none with media: nothing, and a link to newer ones past the walk.
    expect(p.ids).toEqual([]);
    expect(p.prev).toBeDefined();
    const newer = await page(`/api/v1/timelines/public?only_media=true&limit=20&min_id=${p.prev}`);
    expect(newer.ids).toEqual([withMedia.at(-1)]);
  });

  it("links to older posts from a hashtag's web page that found none in its walk", async () => {
    const first = await call("/tag/veiled", { headers: { accept: "text/html" } });
    expect(first.status).toBe(200);
    const html = await first.text();
    expect(html).not.toContain("unveiled");
    expect(html).not.toMatch(/<p>veiled/);
    const older = /href="\?max_id=([^"]+)"/.exec(html)?.[1];
    expect(older).toBeDefined();
    const next = await call(`/tag/veiled?max_id=${older}`, { headers: { accept: "text/html" } });
    expect(next.status).toBe(200);
    const t = await next.text();
    expect(t).toContain("<p>unveiled</p>");
  });
});
