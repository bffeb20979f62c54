/**
 * Public and tag pages walk a bounded stretch of their index (services/timelines.ts `PUBLIC_WALK`): a filter that
 * matches nothing (a visibility the audience cannot see, an unknown instance, media on a text-only timeline) costs
 * a fixed number of rows, not the whole index; a page that comes back short after its walk was cut still links
 * past the walk, so paging reaches every match; an empty page (or a short since_id / min_id one) walks on a
 * bounded number of times first, for clients that page by the last status they hold. 2,000 public statuses of
 * one local account, one in 150 with media.
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
 * rows (the index entry, the status, its author's deactivation), and a short page probes its walk's end once;
 * a page that found too little walks on from there at most 4 more times (services/timelines.ts `walkOn`).
 */
const bound = (limit: number) => (limit * 4 * 5 + 20) * (1 + 4);

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
    // An instance no account here is on: one walk, not five (the first walk and one probe of the accounts).
    expect((await page("/api/v1/timelines/public?instance=nowhere.example")).rowsRead).toBeLessThan(300);
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
      // These pages came back short (each walked on up to 5 × 80 entries), yet each linked on.
      expect(pages).toBeGreaterThan(STATUSES / 400 - 2);
    }
  });

  it("links newer past a short page read with min_id", async () => {
    const oldest = "0WXYZ" + "0".repeat(21);
    const p = await page(`/api/v1/timelines/public?only_media=true&limit=20&min_id=${oldest}`);
    // Short after its 5 walks of 80 entries: the two with media among the oldest 400, and a link past them.
    expect(p.ids).toEqual(withMedia.slice(-2));
    expect(p.prev).toBe("0WXYZ" + "400".padStart(21, "0"));
    const newer = await page(`/api/v1/timelines/public?only_media=true&limit=20&min_id=${p.prev}`);
    expect(newer.ids).toEqual(withMedia.slice(-5, -2));
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

describe("a public page past a long run of statuses the viewer does not see", () => {
  // 100 public statuses of a muted account, newest but one; 30 older ones of others (ids above the 2,000's).
  let others: string[];
  const newest = "0WYZ" + "0".repeat(22);
  beforeAll(async () => {
    const muted = await registerUser();
    const other = await registerUser();
    const t = Date.now();
    const insert = (prefix: string, n: number, accountId: string) =>
      env.DB.prepare(
        `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         SELECT printf('${prefix}%022d', i), 'http://localhost/s/${prefix}' || i, 'http://localhost/s/${prefix}' || i, ?2,
                printf('${prefix}%022d', i), 'http://localhost/contexts/${prefix}' || i, '<p>run</p>', 'run', 'public', 1, ?3 + i FROM n`,
      ).bind(n, accountId, t);
    await env.DB.batch([
      insert("0WYA", 30, other.id),
      insert("0WYM", 100, muted.id),
      env.DB.prepare(
        `INSERT INTO statuses (id, uri, url, account_id, thread_id, context, content, text, visibility, local, created_at)
         VALUES (?1, 'http://localhost/s/newest', 'http://localhost/s/newest', ?2, ?1, 'http://localhost/contexts/newest', '<p>new</p>', 'new', 'public', 1, ?3)`,
      ).bind(newest, other.id, t + 1000),
    ]);
    const res = await call(`/api/v1/accounts/${muted.id}/mute`, { token: viewer.token, method: "POST" });
    expect(res.status).toBe(200);
    others = Array.from({ length: 30 }, (_, i) => "0WYA" + String(30 - i).padStart(22, "0"));
  });

  it("walks on past the run for a client paging by the last status it holds, within a bounded number of rows", async () => {
    const p = await page(`/api/v1/timelines/public?limit=20&max_id=${newest}`, viewer.token);
    expect(p.ids).toEqual(others.slice(0, 20));
    expect(p.rowsRead).toBeLessThan(bound(20));
    // A run longer than the walks a page may take (5 × 4 × 5 entries): empty, linking past what it walked.
    const short = await page(`/api/v1/timelines/public?limit=5&max_id=${newest}`, viewer.token);
    expect(short.ids).toEqual([]);
    expect(short.rowsRead).toBeLessThan(bound(5));
    expect(short.next).toBe("0WYM" + "1".padStart(22, "0"));
    expect((await page(`/api/v1/timelines/public?limit=5&max_id=${short.next}`, viewer.token)).ids).toEqual(
      others.slice(0, 5),
    );
  });

  it("answers a since_id page in full when matches remain past its first walk", async () => {
    const oldest = others.at(-1)!;
    const p = await page(`/api/v1/timelines/public?limit=20&since_id=${oldest}`, viewer.token);
    expect(p.ids).toEqual([newest, ...others.slice(0, 19)]);
    // Read oldest first from the newest of the others: the run, then the newest status.
    const min = await page(`/api/v1/timelines/public?limit=20&min_id=${others[0]}`, viewer.token);
    expect(min.ids).toEqual([newest]);
  });
});
