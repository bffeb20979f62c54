/** The shared HTTP layer: parameter reading, errors, CORS, the /api/pleroma alias, and the paginator. */
import type { AppEnv } from "../src/http/app-env";
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import type { FormFile } from "../src/lib/form-file";
import { z } from "zod";
import { drizzle } from "drizzle-orm/d1";
import { sql } from "drizzle-orm";
import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { arrayParam, boolParam, fileParam, intParam, parseParams } from "../src/http/params";
import { pageParams, setLinkHeader } from "../src/http/pagination";
import { inOrder, pageQuery } from "../src/db/paging";
import { ApiError } from "../src/lib/errors";
import { idFloor, idTime, isId, newId } from "../src/db/ids";
import { call, freshIp, json, registerUser } from "./helpers";

describe("parameter reader", () => {
  const schema = z.object({
    flag: boolParam().optional(),
    n: intParam().optional(),
    ids: arrayParam(z.string()).optional(),
    nested: z.object({ a: z.string(), deep: z.object({ b: z.string() }).optional() }).optional(),
  });
  const app = new Hono();
  app.all("/echo/:id", async (c) => c.json({ ...(await parseParams(c, schema.extend({ id: z.string() }))) }));
  app.onError((err, c) =>
    err instanceof ApiError ? c.json({ error: err.message }, err.status) : c.json({ error: String(err) }, 500),
  );
  const echo = (init: RequestInit & { query?: string } = {}) =>
    Promise.resolve(app.request(`/echo/7${init.query ?? ""}`, init)).then(async (r: Response) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));

  it("reads query, urlencoded, multipart and JSON alike, with arrays and nesting", async () => {
    const expected = { id: "7", flag: true, n: 5, ids: ["a", "b"], nested: { a: "x", deep: { b: "y" } } };
    const q = await echo({ query: "?flag=on&n=5&ids[]=a&ids[]=b&nested[a]=x&nested[deep][b]=y" });
    expect(q.body).toEqual(expected);
    const form = await echo({
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "flag=true&n=5&ids%5B%5D=a&ids%5B%5D=b&nested%5Ba%5D=x&nested%5Bdeep%5D%5Bb%5D=y",
    });
    expect(form.body).toEqual(expected);
    const fd = new FormData();
    for (const [k, v] of [
      ["flag", "1"],
      ["n", "5"],
      ["ids[]", "a"],
      ["ids[]", "b"],
      ["nested[a]", "x"],
      ["nested[deep][b]", "y"],
    ])
      fd.append(k, v);
    expect((await echo({ method: "POST", body: fd })).body).toEqual(expected);
    const js = await echo({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ flag: true, n: 5, ids: ["a", "b"], nested: { a: "x", deep: { b: "y" } } }),
    });
    expect(js.body).toEqual(expected);
    // Bracketed keys in JSON, a lone value for an array, and "0"/"false" booleans.
    const odd = await echo({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ "ids[]": ["z"], flag: "0" }),
    });
    expect(odd.body).toEqual({ id: "7", ids: ["z"], flag: false });
    expect((await echo({ query: "?ids=solo&flag=false" })).body).toEqual({ id: "7", ids: ["solo"], flag: false });
  });

  it("multipart: an empty file part is not given, an empty text field is; file bytes that look like headers change nothing", async () => {
    const files = new Hono();
    const fileSchema = z.object({
      avatar: z.union([fileParam(), z.string()]).optional(),
      header: z.union([fileParam(), z.string()]).optional(),
      note: z.string().optional(),
    });
    files.post("/f", async (c) => {
      const p = await parseParams(c, fileSchema);
      const show = (v: FormFile | string | undefined) =>
        v === undefined ? "absent" : typeof v === "string" ? `text:${v}` : `file:${v.size}`;
      return c.json({ avatar: show(p.avatar), header: show(p.header), note: p.note ?? null });
    });
    const send = (body: string | Uint8Array) =>
      Promise.resolve(
        files.request("/f", { method: "POST", headers: { "content-type": "multipart/form-data; boundary=b" }, body }),
      ).then((r: Response) => r.json());
    const part = (name: string, head: string, data: string) =>
      `--b\r\nContent-Disposition: form-data; name="${name}"${head}\r\n\r\n${data}\r\n`;
    // Phanpy's empty file inputs, and Pleroma's `header=""` (remove the picture), told apart by the part's header.
    const phanpy =
      part("avatar", '; filename=""\r\nContent-Type: application/octet-stream', "") +
      part("header", "", "") +
      part("note", "", "hi") +
      "--b--\r\n";
    expect(await send(phanpy)).toEqual({ avatar: "absent", header: "text:", note: "hi" });
    // A file whose bytes repeat `filename=""` with no line break for megabytes: read as it is, and quickly.
    const hostile = 'filename=""'.repeat(200_000);
    const started = Date.now();
    const odd = await send(
      part("avatar", '; filename="a.bin"\r\nContent-Type: application/octet-stream', hostile) +
        part("note", "", "x") +
        "--b--\r\n",
    );
    expect(odd).toEqual({ avatar: `file:${hostile.length}`, header: "absent", note: "x" });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("multipart as RFC 7578 writes it: quoted boundaries, preamble and epilogue, line breaks in values, escaped names; unclosed is 400", async () => {
    const app = new Hono();
    const schema = z.object({
      a: z.string().optional(),
      "b c": z.string().optional(),
      doc: z.union([fileParam(), z.string()]).optional(),
    });
    app.post("/f", async (c) => {
      const p = await parseParams(c, schema);
      const doc =
        p.doc && typeof p.doc !== "string" ? { name: p.doc.name, type: p.doc.type, text: p.doc.text() } : p.doc;
      return c.json({ a: p.a ?? null, bc: p["b c"] ?? null, doc: doc ?? null });
    });
    app.onError((err, c) => (err instanceof ApiError ? c.json({ error: err.message }, err.status) : c.text("", 500)));
    const send = (type: string, body: string) =>
      Promise.resolve(app.request("/f", { method: "POST", headers: { "content-type": type }, body })).then(
        async (r: Response) => ({ status: r.status, body: await r.json() }),
      );
    const body =
      "a preamble\r\n--x y\r\n" +
      'Content-Disposition: form-data; name="a"\r\n\r\nline 1\r\nline 2 --x y- not a boundary\r\n' +
      '--x y \r\ncontent-disposition: form-data; name="b c"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nété\r\n' +
      '--x y\r\nContent-Disposition: form-data; name="doc"; filename="say \\"hi\\".txt"\r\nContent-Type: text/plain\r\n\r\n--x yz\r\n' +
      "--x y\r\nContent-Type: text/plain\r\n\r\na part without a name\r\n" +
      "--x y--\r\nan epilogue";
    expect(await send('multipart/form-data; boundary="x y"', body)).toEqual({
      status: 200,
      body: {
        a: "line 1\r\nline 2 --x y- not a boundary",
        bc: "été",
        doc: { name: 'say "hi".txt', type: "text/plain", text: "--x yz" },
      },
    });
    // The same body without its closing boundary, or with another boundary, is not a form.
    const unclosed = body.slice(0, body.indexOf("--x y--") - 2);
    expect((await send('multipart/form-data; boundary="x y"', unclosed)).status).toBe(400);
    expect((await send("multipart/form-data; boundary=other", body)).body).toEqual({
      error: "Malformed multipart body",
    });
  });

  it("answers 400 for bad values and JSON, 415 for unknown bodies", async () => {
    expect(await echo({ query: "?n=abc" })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^Invalid value for field n/) },
    });
    // Booleans as Pleroma reads them: any string but its few "false" ones is true; the last of a repeated one counts.
    expect(await echo({ query: "?flag=perhaps" })).toEqual({ status: 200, body: { id: "7", flag: true } });
    expect(await echo({ query: "?flag=true&flag=accounts" })).toEqual({ status: 200, body: { id: "7", flag: true } });
    expect(await echo({ query: "?flag=accounts&flag=off" })).toEqual({ status: 200, body: { id: "7", flag: false } });
    for (const no of ["false", "FALSE", "0", "off", "f", "no", ""])
      expect((await echo({ query: `?flag=${no}` })).body.flag, no).toBe(false);
    // A value that is no string at all is still refused.
    expect(
      await echo({
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ flag: { a: 1 } }),
      }),
    ).toMatchObject({ status: 400 });
    expect(await echo({ method: "POST", headers: { "content-type": "application/json" }, body: "{oops" })).toEqual({
      status: 400,
      body: { error: "Invalid JSON in request body" },
    });
    expect(await echo({ method: "POST", headers: { "content-type": "text/xml" }, body: "<x/>" })).toMatchObject({
      status: 415,
    });
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
      headers: {
        origin: "https://elk.zone",
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
      },
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
    const res = await call("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: user.token,
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
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
    const app = new Hono<AppEnv>();
    app.get("/list", async (c) => {
      const schema = z.object({ ...pageParams(2), only_media: z.string().optional() });
      // What route() does: the declared parameters are the only ones the Link header carries on.
      c.set("paramNames", new Set(Object.keys(schema.shape)));
      const p = await parseParams(c, schema);
      const q = pageQuery(items.id, p);
      const rows = inOrder(await d.select().from(items).where(q.where).orderBy(q.orderBy).limit(q.limit), q);
      setLinkHeader(
        c,
        rows.map((r) => r.id),
      );
      return c.json(rows.map((r) => r.id));
    });
    // The Worker's env: Link headers are made on the public origin (its DOMAIN).
    const res = await app.request(`http://localhost/list${query}`, {}, env);
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

/**
 * The fuzzer: every operation of the OpenAPI document, called as a hostile client with a valid token of full
 * scopes, must answer below 500, and every 4xx must be JSON `{"error": "..."}`. Inputs per operation: each
 * parameter of the wrong type, 100 KB strings, arrays of 1,000 items, malformed JSON and multipart bodies,
 * unknown ids and another user's ids in the path, malformed percent-encoding in path segments. Deterministic:
 * the same requests every run.
 */
describe("Link headers", () => {
  it("carry on only the parameters a route declares, each short: a huge or unknown query parameter is not copied", async () => {
    const me = await registerUser();
    for (let i = 0; i < 3; i++)
      await json("/api/v1/statuses", { method: "POST", token: me.token, body: { status: `post ${i}` } });
    const junk = "x".repeat(10_000);
    const res = await call(
      `/api/v1/timelines/home?limit=2&junk=${junk}&local=true&exclude_types[]=${junk}&access_token=${me.token}`,
    );
    expect(res.status).toBe(200);
    const link = res.headers.get("link")!;
    expect(link).toMatch(/rel="next"/);
    expect(link.length).toBeLessThan(1_000);
    expect(link).not.toContain("junk");
    expect(link).not.toContain("xxxxxxxx");
    // The token never goes into a link.
    expect(link).not.toContain(me.token);
    // Declared parameters are kept: the next page is the same query.
    const next = new URL(/<([^>]+)>; rel="next"/.exec(link)![1]!);
    expect(next.searchParams.get("limit")).toBe("2");
    expect(next.searchParams.get("local")).toBe("true");
    expect(next.searchParams.get("max_id")).toBeTruthy();
  });
});

describe("never answers 500 for any input on any route", () => {
  type Schema = {
    type?: string | string[];
    properties?: Record<string, Schema>;
    items?: Schema;
    anyOf?: Schema[];
    oneOf?: Schema[];
    $ref?: string;
    enum?: unknown[];
  };
  type Operation = { method: string; path: string; fields: Record<string, Schema>; body: boolean };

  const HUGE = "x".repeat(100_000);
  const THOUSAND = Array.from({ length: 1000 }, (_, i) => `id${i}`);

  function kindOf(s: Schema | undefined): string {
    if (!s) return "unknown";
    if (s.anyOf || s.oneOf) return kindOf((s.anyOf ?? s.oneOf)!.find((x) => x.type !== "null"));
    const t = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
    return t ?? (s.properties ? "object" : "unknown");
  }

  /** For a field of this kind: [a value of the wrong type, an oversized value]. */
  function wrongValues(s: Schema): [unknown, unknown] {
    switch (kindOf(s)) {
      case "string":
        return [{ nested: { deep: [1] } }, HUGE];
      case "integer":
      case "number":
        return ["not a number", 1e300];
      case "boolean":
        return ["perhaps", HUGE];
      case "array":
        return [[{ a: { b: 1 } }], THOUSAND];
      case "object":
        return ["not an object", { [HUGE.slice(0, 1000)]: HUGE }];
      default:
        return [{ a: 1 }, HUGE];
    }
  }

  function operations(doc: any): Operation[] {
    const ops: Operation[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      // `/api/pleroma/*` serves the same handlers as `/api/v1/pleroma/*`.
      if (path.startsWith("/api/pleroma/") && doc.paths[path.replace("/api/pleroma/", "/api/v1/pleroma/")]) continue;
      for (const [method, op] of Object.entries<any>(item)) {
        const fields: Record<string, Schema> = {};
        for (const p of op.parameters ?? []) if (p.in === "query") fields[p.name] = p.schema ?? {};
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        for (const [k, v] of Object.entries<Schema>(schema?.properties ?? {})) fields[k] = v;
        ops.push({
          method: method.toUpperCase(),
          path,
          fields,
          body: Boolean(op.requestBody) || !["GET", "DELETE"].includes(method.toUpperCase()),
        });
      }
    }
    return ops;
  }

  // About 120 s on a quiet machine of the previous sessions, 245 s on this session's (every other figure ran about
  // twice as slow too): the limit leaves room for a slow CI machine.
  it(
    "walks every route of /api/openapi with wrong types, huge values and malformed bodies",
    { timeout: 600_000 },
    async () => {
      const doc = await json("/api/openapi");
      const [me, other] = [await registerUser(), await registerUser()];
      const theirs = await json("/api/v1/statuses", {
        token: other.token,
        body: { status: `secret for @${other.username}`, visibility: "direct" },
      });
      const theirList = await json("/api/v1/lists", { token: other.token, body: { title: "theirs" } });
      const theirPublic = await json("/api/v1/statuses", { token: other.token, body: { status: "hello" } });
      const ids = [newId(), theirs.id, other.id, theirList.id];
      const segments = ["%E0%A4%A", "%ZZ", "%25", "%"];
      const ops = operations(doc);
      expect(ops.length).toBeGreaterThan(100);

      const failures: string[] = [];
      let requests = 0;
      const send = async (
        method: string,
        path: string,
        init: { body?: BodyInit; type?: string; query?: string } = {},
      ) => {
        const headers: Record<string, string> = { "cf-connecting-ip": freshIp() };
        if (init.type) headers["content-type"] = init.type;
        requests++;
        const url = `${path}${init.query ? `?${init.query}` : ""}`;
        let res: Response;
        try {
          // A hang is a failure too: no answer within 10 s.
          const timeout = new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error("no answer in 10 s")), 10_000),
          );
          res = await Promise.race([call(url, { method, token: me.token, headers, body: init.body as any }), timeout]);
        } catch (e) {
          failures.push(`${method} ${url.slice(0, 120)} threw ${e}`);
          return;
        }
        const type = res.headers.get("content-type") ?? "";
        if (res.status >= 500)
          failures.push(
            `${method} ${url.slice(0, 120)} (${init.type ?? "-"}) -> ${res.status} ${(await res.text()).slice(0, 200)}`,
          );
        else if (res.status >= 400 && res.status !== 404 && !type.startsWith("application/json"))
          failures.push(`${method} ${url.slice(0, 120)} -> ${res.status} not JSON (${type})`);
        else if (res.status >= 400 && type.startsWith("application/json")) {
          const body = (await res.json()) as any;
          if (typeof body?.error !== "string")
            failures.push(
              `${method} ${url.slice(0, 120)} -> ${res.status} without error: ${JSON.stringify(body).slice(0, 200)}`,
            );
        } else await res.body?.cancel();
      };

      const malformed: { body: string; type: string }[] = [
        { body: "{not json", type: "application/json" },
        { body: "[1,2,3]", type: "application/json" },
        { body: `{"a":${"[".repeat(5000)}`, type: "application/json" },
        { body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb', type: "multipart/form-data; boundary=y" },
        { body: "garbage", type: "multipart/form-data" },
        { body: "%%%&&&===", type: "application/x-www-form-urlencoded" },
        { body: "<x/>", type: "text/xml" },
      ];
      const pick = <T>(list: T[], n: number) => list[n % list.length];

      /** The requests for one operation; `n` rotates the choices so that every kind of input is used across routes. */
      const run = async (op: Operation, n: number) => {
        const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        // Every parameter but the last gets a status the caller may see, so the last one is what is checked.
        const fill = (last: string) =>
          op.path.replace(/\{(\w+)\}/g, (_, name) => (name === params[params.length - 1] ? last : theirPublic.id));
        // Path parameters: an unknown id and another user's ids (status, account, list); malformed encodings.
        const base = params.length ? fill(pick(ids, n)) : op.path;
        if (params.length)
          for (const value of [pick(ids, n), pick(ids, n + 1), pick(segments, n), pick(segments, n + 1)])
            await send(op.method, fill(value));
        // Every field at once with a value of the wrong type, then with oversized values (100 KB strings, 1,000
        // items): as JSON, and as a form body or query string.
        const names = Object.keys(op.fields);
        for (const round of [0, 1]) {
          if (!names.length) break;
          const values: Record<string, unknown> = {};
          for (const name of names) values[name] = wrongValues(op.fields[name])[round];
          if (op.body) await send(op.method, base, { body: JSON.stringify(values), type: "application/json" });
          const q = new URLSearchParams();
          for (const [k, v] of Object.entries(values)) {
            if (Array.isArray(v))
              for (const item of v) q.append(`${k}[]`, typeof item === "string" ? item : JSON.stringify(item));
            else if (v && typeof v === "object")
              for (const [kk, vv] of Object.entries(v)) q.append(`${k}[${kk}]`, JSON.stringify(vv));
            else q.append(k, String(v));
          }
          await send(
            op.method,
            base,
            op.body ? { body: q.toString(), type: "application/x-www-form-urlencoded" } : { query: q.toString() },
          );
        }
        if (!names.length && !params.length) await send(op.method, base);
        if (op.body) await send(op.method, base, pick(malformed, n));
      };

      // A few operations at a time; the order is fixed, so the run is the same every time.
      for (let i = 0; i < ops.length; i += 6) await Promise.all(ops.slice(i, i + 6).map((op, j) => run(op, i + j)));
      expect(requests).toBeGreaterThan(ops.length * 3);
      expect(failures).toEqual([]);
    },
  );
});
