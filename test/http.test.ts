/** The shared HTTP layer: parameter reading, errors, CORS, the /api/pleroma alias, and the paginator. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import { z } from "zod";
import { drizzle } from "drizzle-orm/d1";
import { sql } from "drizzle-orm";
import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { arrayParam, boolParam, intParam, parseParams } from "../src/http/params";
import { inOrder, pageParams, pageQuery, setLinkHeader } from "../src/http/pagination";
import { ApiError } from "../src/http/errors";
import { idFloor, idTime, isId, newId } from "../src/db/ids";
import { call, json, registerUser } from "./helpers";

describe("parameter reader", () => {
  const schema = z.object({
    flag: boolParam().optional(),
    n: intParam().optional(),
    ids: arrayParam(z.string()).optional(),
    nested: z.object({ a: z.string(), deep: z.object({ b: z.string() }).optional() }).optional(),
  });
  const app = new Hono();
  app.all("/echo/:id", async (c) => c.json({ ...(await parseParams(c, schema.extend({ id: z.string() }))) }));
  app.onError((err, c) => (err instanceof ApiError ? c.json({ error: err.message }, err.status) : c.json({ error: String(err) }, 500)));
  const echo = (init: RequestInit & { query?: string } = {}) => Promise.resolve(app.request(`/echo/7${init.query ?? ""}`, init)).then(async (r: Response) => ({ status: r.status, body: (await r.json()) as any }));

  it("reads query, urlencoded, multipart and JSON alike, with arrays and nesting", async () => {
    const expected = { id: "7", flag: true, n: 5, ids: ["a", "b"], nested: { a: "x", deep: { b: "y" } } };
    const q = await echo({ query: "?flag=on&n=5&ids[]=a&ids[]=b&nested[a]=x&nested[deep][b]=y" });
    expect(q.body).toEqual(expected);
    const form = await echo({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "flag=true&n=5&ids%5B%5D=a&ids%5B%5D=b&nested%5Ba%5D=x&nested%5Bdeep%5D%5Bb%5D=y" });
    expect(form.body).toEqual(expected);
    const fd = new FormData();
    for (const [k, v] of [["flag", "1"], ["n", "5"], ["ids[]", "a"], ["ids[]", "b"], ["nested[a]", "x"], ["nested[deep][b]", "y"]]) fd.append(k, v);
    expect((await echo({ method: "POST", body: fd })).body).toEqual(expected);
    const js = await echo({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ flag: true, n: 5, ids: ["a", "b"], nested: { a: "x", deep: { b: "y" } } }) });
    expect(js.body).toEqual(expected);
    // Bracketed keys in JSON, a lone value for an array, and "0"/"false" booleans.
    const odd = await echo({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ "ids[]": ["z"], flag: "0" }) });
    expect(odd.body).toEqual({ id: "7", ids: ["z"], flag: false });
    expect((await echo({ query: "?ids=solo&flag=false" })).body).toEqual({ id: "7", ids: ["solo"], flag: false });
  });

  it("answers 400 for bad values and JSON, 415 for unknown bodies", async () => {
    expect(await echo({ query: "?n=abc" })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^Invalid value for field n/) } });
    expect(await echo({ query: "?flag=perhaps" })).toMatchObject({ status: 400 });
    expect(await echo({ method: "POST", headers: { "content-type": "application/json" }, body: "{oops" })).toEqual({ status: 400, body: { error: "Invalid JSON in request body" } });
    expect(await echo({ method: "POST", headers: { "content-type": "text/xml" }, body: "<x/>" })).toMatchObject({ status: 415 });
    // Prototype keys are dropped, not assigned.
    const proto = await echo({ query: "?__proto__[polluted]=1&nested[a]=x" });
    expect(proto.status).toBe(200);
    expect(({} as any).polluted).toBeUndefined();
  });
});

describe("errors and headers", () => {
  it("answers unknown routes with a JSON 404", async () => {
    const body = await json("/api/v1/nothing/here", { status: 404 });
    expect(body).toEqual({ error: "Not found" });
  });

  it("allows cross-origin calls from browser clients", async () => {
    const pre = await call("/api/v1/accounts/verify_credentials", {
      method: "OPTIONS",
      headers: { origin: "https://elk.zone", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
    const res = await call("/api/v1/instance", { headers: { origin: "https://elk.zone" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("Link");
  });

  it("serves /api/v1/pleroma/* also as /api/pleroma/*", async () => {
    expect(await json("/api/pleroma/captcha")).toEqual({ type: "none" });
    expect(await json("/api/v1/pleroma/captcha")).toEqual({ type: "none" });
  });

  it("answers every route with or without a trailing slash, as Pleroma-FE writes its paths", async () => {
    const user = await registerUser();
    const other = await registerUser();
    await json(`/api/v1/accounts/${other.id}/block`, { method: "POST", token: user.token });
    // Pleroma-FE's own paths.
    const blocks = await json<any[]>("/api/v1/blocks/", { token: user.token });
    expect(blocks.map((a) => a.id)).toEqual([other.id]);
    expect(await json("/api/v1/mutes/", { token: user.token })).toEqual([]);
    const rels = await json<any[]>(`/api/v1/accounts/relationships/?id=${other.id}`, { token: user.token });
    expect(rels).toMatchObject([{ id: other.id, blocking: true }]);
    // Writes too, and the /api/pleroma alias.
    await json(`/api/v1/accounts/${other.id}/unblock/`, { method: "POST", token: user.token });
    expect(await json("/api/v1/blocks/", { token: user.token })).toEqual([]);
    expect(await json("/api/pleroma/captcha/")).toEqual({ type: "none" });
    // The root and unknown paths are unchanged.
    expect((await call("/api/v1/nothing/here/")).status).toBe(404);
  });

  it("never answers 500 for a malformed body on a real endpoint", async () => {
    const user = await registerUser();
    const res = await call("/api/v1/accounts/update_credentials", { method: "PATCH", token: user.token, body: "{not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const missing = await call("/media/accounts/none.png");
    expect(missing.status).toBe(404);
  });
});

describe("identifiers", () => {
  it("are fixed-length and sort by time", () => {
    const a = newId(1_700_000_000_000);
    const b = newId(1_700_000_000_001);
    expect(a).toHaveLength(26);
    expect(isId(a)).toBe(true);
    expect(a < b).toBe(true);
    expect(idTime(a)).toBe(1_700_000_000_000);
    expect(idFloor(1_700_000_000_001) <= b).toBe(true);
    expect(idFloor(1_700_000_000_001) > a).toBe(true);
  });
});

describe("paginator", () => {
  const items = sqliteTable("pagination_probe", { id: text("id").primaryKey() });
  const ids = Array.from({ length: 7 }, (_, i) => newId(1_700_000_000_000 + i));

  async function page(query: string) {
    const d = drizzle(env.DB);
    await d.run(sql`CREATE TABLE IF NOT EXISTS pagination_probe (id TEXT PRIMARY KEY)`);
    await d.run(sql`INSERT OR IGNORE INTO pagination_probe (id) SELECT value FROM json_each(${JSON.stringify(ids)})`);
    const app = new Hono();
    app.get("/list", async (c) => {
      const p = await parseParams(c, z.object(pageParams(2)));
      const q = pageQuery(items.id, p);
      const rows = inOrder(await d.select().from(items).where(q.where).orderBy(q.orderBy).limit(q.limit), q);
      setLinkHeader(c, rows.map((r) => r.id));
      return c.json(rows.map((r) => r.id));
    });
    const res = await app.request(`http://localhost/list${query}`);
    return { ids: (await res.json()) as string[], link: res.headers.get("link") };
  }

  it("walks every item exactly once with max_id, and back with min_id", async () => {
    const newestFirst = [...ids].reverse();
    const seen: string[] = [];
    let next: string | null = "?limit=3&only_media=true";
    while (next) {
      const r = await page(next);
      if (r.ids.length === 0) break;
      seen.push(...r.ids);
      expect(r.link).toContain('rel="next"');
      expect(r.link).toContain("only_media=true");
      next = "?" + new URL(/<([^>]+)>; rel="next"/.exec(r.link!)![1]).searchParams.toString();
    }
    expect(seen).toEqual(newestFirst);

    const back = await page(`?min_id=${ids[1]}&limit=2`);
    expect(back.ids).toEqual([ids[3], ids[2]]);
    const since = await page(`?since_id=${ids[1]}&limit=2`);
    expect(since.ids).toEqual([ids[6], ids[5]]);
    // limit caps at twice the default.
    expect((await page("?limit=100")).ids).toHaveLength(4);
    expect((await page("")).ids).toHaveLength(2);
  });
});
