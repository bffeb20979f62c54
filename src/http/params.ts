/**
 * The one parameter reader: query string, urlencoded form, multipart and JSON bodies merged into one object
 * (body over query), with Rails/Plug-style `name[]=` arrays and `a[b]` nesting, then checked by a zod schema.
 * Helpers below build schemas that accept what form-encoding clients send (`"true"`, `"1"`, `"on"`, numbers
 * as strings, a lone value where an array is expected).
 */
import type { Context } from "hono";
import { z } from "@hono/zod-openapi";
import { ApiError, badRequest } from "../lib/errors";
import { FormFile } from "../lib/form-file";
import { boundaryOf, parseMultipart, partText, readBytes } from "./multipart";

export type ParamValue = string | FormFile | ParamValue[] | { [key: string]: ParamValue } | unknown;
export type Params = Record<string, ParamValue>;

/** Splits `a[b][]` into ["a", "b", ""]. A key without brackets is a single segment. */
function splitKey(key: string): string[] {
  const open = key.indexOf("[");
  if (open <= 0 || !key.endsWith("]")) return [key];
  const head = key.slice(0, open);
  const rest = key.slice(open + 1, -1).split("][");
  return [head, ...rest];
}

const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Puts `value` into `target` at the path the bracketed key names. */
function assign(target: Params, key: string, value: ParamValue): void {
  const path = splitKey(key);
  if (path.some((p) => UNSAFE_KEYS.has(p))) return;
  let node: any = target;
  for (let i = 0; i < path.length; i++) {
    const part = path[i];
    const last = i === path.length - 1;
    if (part === "") {
      // `a[]`: append. `a[][b]` (Mastodon's `media_attributes[][id]`), as Rack reads it: into the last object
      // while it lacks `b`, else into a new one.
      if (!Array.isArray(node)) return;
      if (last) node.push(value);
      else {
        const tail = node[node.length - 1];
        const reuse =
          typeof tail === "object" &&
          tail !== null &&
          !Array.isArray(tail) &&
          !(tail instanceof FormFile) &&
          i + 2 === path.length &&
          !(path[i + 1]! in tail);
        const child = reuse ? tail : {};
        if (!reuse) node.push(child);
        node = child;
      }
      continue;
    }
    if (last) {
      node[part] = value;
      return;
    }
    const nextIsArray = path[i + 1] === "";
    const existing = node[part];
    if (
      nextIsArray
        ? !Array.isArray(existing)
        : typeof existing !== "object" || existing === null || Array.isArray(existing) || existing instanceof FormFile
    ) {
      node[part] = nextIsArray ? [] : {};
    }
    node = node[part];
  }
}

function fromEntries(entries: Iterable<[string, ParamValue]>, into: Params = {}): Params {
  for (const [k, v] of entries) assign(into, k, v);
  return into;
}

const bodyCache = new WeakMap<Request, Promise<Params>>();

/**
 * How large a body a route takes: past `bytes`, 413 with `message`, before reading anything when the declared
 * length says so. Routes without one read what they are sent.
 */
export interface BodyLimit {
  bytes: number;
  message: string;
}

/** The request body as parameters; parsed once per request. */
function readBody(c: Context, limit?: BodyLimit): Promise<Params> {
  const req = c.req.raw;
  let cached = bodyCache.get(req);
  if (!cached) {
    cached = parseBody(req, limit);
    bodyCache.set(req, cached);
  }
  return cached;
}

async function parseBody(req: Request, limit?: BodyLimit): Promise<Params> {
  if (req.method === "GET" || req.method === "HEAD" || !req.body) return {};
  if (limit && Number(req.headers.get("content-length") ?? 0) > limit.bytes) throw new ApiError(413, limit.message);
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/json" || type.endsWith("+json")) {
    const text = await req.text();
    if (text.trim() === "") return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badRequest("Invalid JSON in request body");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw badRequest("The JSON body must be an object");
    }
    // JSON keys may still use the bracket form (`"ids[]": [...]`); normalise them like form keys.
    const out: Params = {};
    for (const [k, v] of Object.entries(withoutNulls(parsed) as Record<string, unknown>)) {
      if (k.endsWith("[]") && Array.isArray(v)) for (const item of v) assign(out, k, item);
      else assign(out, k, v as ParamValue);
    }
    return out;
  }
  if (type === "application/x-www-form-urlencoded") {
    return fromEntries(new URLSearchParams(new TextDecoder().decode(await req.arrayBuffer())));
  }
  if (type === "multipart/form-data") {
    const boundary = boundaryOf(req.headers.get("content-type")!);
    if (!boundary) throw badRequest("Malformed multipart body");
    const bytes = await readBytes(req, limit?.bytes ?? Infinity, limit?.message ?? "");
    // An empty file part is a field not given (Phanpy sends its avatar and header fields with `filename=""` and
    // no bytes when no new picture was picked), everywhere files are accepted; an empty text field is given
    // (`avatar=""` is Pleroma's way to remove a picture).
    return fromEntries(
      parseMultipart(bytes, boundary)
        .filter((part) => part.filename === undefined || part.data.byteLength > 0)
        .map((part): [string, ParamValue] => [
          part.name,
          part.filename === undefined ? partText(part) : new FormFile(part.filename, part.type, part.data),
        ]),
    );
  }
  if ((await req.arrayBuffer()).byteLength === 0) return {};
  throw new ApiError(415, `Unsupported content type: ${type || "none"}`);
}

/** Query string and body merged; body values win. */
async function readParams(c: Context, limit?: BodyLimit): Promise<Params> {
  const url = new URL(c.req.url);
  const params = fromEntries(url.searchParams);
  const body = await readBody(c, limit);
  // Path parameters (`:id`) win over anything of the same name in the query or body.
  return { ...params, ...body, ...c.req.param() };
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let node: any = input;
  for (const key of path) node = node == null ? undefined : node[key as any];
  return node;
}

/** Turns a zod failure into Pleroma's 400: `{"error": "...", "errors": [...]}`. */
export function validationError(error: z.ZodError, input?: unknown): ApiError {
  const first = error.issues[0];
  const field = first.path.map(String).join(".");
  const missing = first.code === "invalid_type" && input !== undefined && valueAt(input, first.path) === undefined;
  const message = missing
    ? `Missing field: ${field}.`
    : field
      ? `Invalid value for field ${field}: ${first.message}.`
      : first.message;
  return badRequest(message, {
    errors: error.issues.map((i) => ({ field: i.path.map(String).join("."), message: i.message })),
  });
}

/** Parameters of this request checked against a schema. */
/**
 * A JSON `null` is a field not given, at any depth of an object (arrays keep their items): Pleroma's schemas
 * mark optional fields nullable, and apps send them so (Soapbox posts `"in_reply_to_id": null, "poll": null`).
 */
function withoutNulls(v: unknown): unknown {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== null)
      .map(([k, x]) => [k, withoutNulls(x)]),
  );
}

export async function parseParams<S extends z.ZodType>(c: Context, schema: S, limit?: BodyLimit): Promise<z.output<S>> {
  const input = await readParams(c, limit);

  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error, input);
  return result.data;
}

// ---- schema helpers for form-encoded input ----

const FALSE = new Set(["false", "0", "off", "no", "f", ""]);

/**
 * A boolean as Pleroma reads one (`truthy_param?`): its few "false" strings ("false", "0", "off", "f"; also "no"
 * and "", as Rails casts them) are false, any other string is true. A repeated parameter counts by its last
 * value, as Pleroma and Rails take it: Pleroma-FE's list editor sends `following=true&following=accounts`.
 */
export const boolParam = () =>
  z.preprocess((v) => {
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string")) v = v[v.length - 1];
    if (typeof v === "string") return !FALSE.has(v.trim().toLowerCase());
    if (v === 1) return true;
    if (v === 0) return false;
    return v;
  }, z.boolean());

/** An integer that also accepts its decimal string form. */
export const intParam = () =>
  z.preprocess((v) => (typeof v === "string" && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v), z.number().int());

/**
 * The longest duration a client may give (`expires_in`), in seconds: ten years. Mastodon and Pleroma set no
 * bound; here a longer one is refused (422), since an expiry past the last time a date can show (275,760 AD) made
 * a row that no rendering of it could show (each answered 500).
 */
export const DURATION_MAX = 315_576_000;

/** A duration in seconds (`expires_in`), from `min` (or whatever the service checks) to `DURATION_MAX`. */
export const durationParam = (min = Number.MIN_SAFE_INTEGER) =>
  intParam().pipe(z.number().int().min(min).max(DURATION_MAX));

/**
 * A paging offset: never negative, and anything past `OFFSET_MAX` counts as `OFFSET_MAX` (a page that far is
 * empty anyway), so a huge number never reaches SQL (SQLite refuses an OFFSET beyond 64 bits).
 */
const OFFSET_MAX = 100_000;
export const offsetParam = () =>
  intParam()
    .pipe(z.number().int().min(0))
    .transform((n) => Math.min(n, OFFSET_MAX));

/** The default cap of an array parameter: Mastodon's multi-gets take 40 ids. */
const ARRAY_MAX = 40;

/**
 * An array that also accepts a single value (`ids=1` as well as `ids[]=1`) or a newline/comma-free list. At most
 * `max` items (400 beyond): every list a request carries is bounded here, in one place.
 */
export const arrayParam = <T extends z.ZodType>(item: T, max = ARRAY_MAX) =>
  z.preprocess(
    (v) => {
      if (v === undefined || v === null) return v;
      if (Array.isArray(v)) return v;
      // `a[0]=x&a[1]=y` arrives as an object with numeric keys.
      if (typeof v === "object" && !(v instanceof FormFile)) {
        const keys = Object.keys(v as object);
        if (keys.every((k) => /^\d+$/.test(k))) return keys.sort((a, b) => +a - +b).map((k) => (v as any)[k]);
      }
      return [v];
    },
    z.array(item).max(max, `at most ${max} items`),
  );

/**
 * A list filter over known values (`include_types[]`, `exclude_visibilities[]`…): values this server does not
 * know are dropped, never a 400, because clients send the types of newer servers. Known values pass unchanged.
 */
export const enumArrayParam = <const V extends readonly [string, ...string[]]>(values: V) =>
  arrayParam(z.unknown())
    .transform((list) =>
      list.filter((x): x is V[number] => typeof x === "string" && (values as readonly string[]).includes(x)),
    )
    .openapi({ type: "array", items: { type: "string", enum: [...values] } });

/** A string that treats "" as absent. */
export const optionalString = () => z.preprocess((v) => (v === "" ? undefined : v), z.string().optional());

/** An uploaded file. */
export const fileParam = () => z.instanceof(FormFile).openapi({ type: "string", format: "binary" });
