/**
 * Test helpers that behave like a client app: requests go to the Worker's own `fetch` export with real tokens.
 * A few set up what no client can (`makeAdmin`, `remoteAccount`) by writing to D1 directly.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import type { z } from "zod";
import worker from "../src/index";
import { newId } from "../src/db/ids";
import { AppSchema, TokenSchema } from "../src/schemas/oauth";
import { AccountSchema } from "../src/schemas/account";

export const BASE = "http://localhost";

type Body = Record<string, unknown> | FormData | URLSearchParams | ReadableStream | string | undefined;

export interface CallOptions {
  method?: string;
  token?: string;
  /** Plain objects are sent as JSON, unless `form` is set. */
  body?: Body;
  form?: boolean;
  headers?: Record<string, string>;
  /** Call the Worker with these configuration variables changed (as a deployment with other `[vars]`). */
  vars?: Partial<Record<string, string>>;
  /** Call this instance of the two-instance harness (test/instances.ts): its origin and its bindings. */
  instance?: { origin: string; bindings: typeof env };
}

let ipCounter = 0;
/** A fresh client address, so per-IP limits of one test do not spill into another. */
export const freshIp = () => `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}`;

function encode(body: Body, form?: boolean): { body?: BodyInit; type?: string } {
  if (body === undefined) return {};
  // A stream goes as it is (its own Content-Type header), no length declared unless the caller says one.
  if (body instanceof FormData || body instanceof ReadableStream) return { body };
  if (body instanceof URLSearchParams) return { body, type: "application/x-www-form-urlencoded" };
  if (typeof body === "string") return { body, type: "application/x-www-form-urlencoded" };
  if (form) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) {
      if (Array.isArray(v)) for (const item of v) p.append(`${k}[]`, String(item));
      else if (v !== undefined) p.append(k, String(v));
    }
    return { body: p, type: "application/x-www-form-urlencoded" };
  }
  return { body: JSON.stringify(body), type: "application/json" };
}

export async function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers = new Headers(opts.headers);
  if (opts.token) headers.set("Authorization", `Bearer ${opts.token}`);
  if (!headers.has("cf-connecting-ip")) headers.set("cf-connecting-ip", "192.0.2.1");
  const { body, type } = encode(opts.body, opts.form);
  if (type && !headers.has("content-type")) headers.set("Content-Type", type);
  const request = new Request(path.startsWith("http") ? path : (opts.instance?.origin ?? BASE) + path, {
    method: opts.method ?? (opts.body !== undefined ? "POST" : "GET"),
    headers,
    body,
    redirect: "manual",
  });
  // The Worker's own `fetch` export, called directly with the pool's bindings, rather than through `SELF.fetch`:
  // in the workers pool every `SELF.fetch` in a file gets slower than the one before (cloudflare/workers-sdk#15446;
  // measured 4 ms per call at a file's start, hundreds of ms after a thousand calls, against 0.1-0.4 ms direct).
  // Work the Worker hands to `waitUntil` is awaited before the response is returned, so a test sees every side
  // effect of a call once it has the response (SELF did not wait for them). Only WebSocket and event-stream
  // upgrades stay on SELF (test/streams.ts): they need a real socket across the runtime's boundary.
  const ctx = createExecutionContext();
  // An instance's bindings object is passed as is (the Worker caches per bindings object, as in production).
  const base = opts.instance?.bindings ?? env;
  const bindings = opts.vars ? ({ ...base, ...opts.vars } as typeof env) : base;
  const res = await worker.fetch(request, bindings, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** Calls and checks the status and the JSON content type; returns the parsed body. */
export async function json<T = any>(path: string, opts: CallOptions & { status?: number } = {}): Promise<T> {
  const res = await call(path, opts);
  const text = await res.text();
  expect(res.status, `${opts.method ?? "GET"} ${path} -> ${text.slice(0, 500)}`).toBe(opts.status ?? 200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return JSON.parse(text) as T;
}

/** Checks a value against an entity schema, failing with zod's explanation. */
export function valid<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success)
    throw new Error(
      `schema mismatch: ${JSON.stringify(result.error.issues, null, 1)}\n${JSON.stringify(value).slice(0, 1500)}`,
    );
  return result.data;
}

export interface TestApp {
  client_id: string;
  client_secret: string;
  id: string;
}

export async function makeApp(
  scopes = "read write follow push",
  redirect = "urn:ietf:wg:oauth:2.0:oob",
  instance?: CallOptions["instance"],
): Promise<TestApp> {
  const app = await json("/api/v1/apps", {
    instance,
    body: { client_name: "Test client", redirect_uris: redirect, scopes },
  });
  return valid(AppSchema, app);
}

export async function appToken(app: TestApp, scope?: string, instance?: CallOptions["instance"]): Promise<string> {
  const token = await json("/oauth/token", {
    instance,
    body: {
      grant_type: "client_credentials",
      client_id: app.client_id,
      client_secret: app.client_secret,
      ...(scope ? { scope } : {}),
    },
  });
  return valid(TokenSchema, token).access_token;
}

let userCounter = 0;
export const uniqueName = (prefix = "user") => `${prefix}${Date.now().toString(36)}${userCounter++}`;

export interface TestUser {
  id: string;
  username: string;
  password: string;
  email: string;
  token: string;
  app: TestApp;
}

/** Registers a user the way a client does (app, app token, POST /api/v1/accounts) and returns its token. */
export async function registerUser(
  opts: { username?: string; scopes?: string; instance?: CallOptions["instance"] } = {},
): Promise<TestUser> {
  const { instance } = opts;
  const app = await makeApp(opts.scopes, undefined, instance);
  const appTok = await appToken(app, undefined, instance);
  const username = opts.username ?? uniqueName();
  const password = "correct horse battery";
  const email = `${username}@example.com`;
  const token = await json("/api/v1/accounts", {
    instance,
    token: appTok,
    headers: { "cf-connecting-ip": freshIp() },
    body: { username, email, password, agreement: true, locale: "en" },
  });
  valid(TokenSchema, token);
  const me = valid(
    AccountSchema,
    await json("/api/v1/accounts/verify_credentials", { instance, token: token.access_token }),
  );
  return { id: me.id, username, password, email, token: token.access_token, app };
}

/** Makes a local user an administrator (what `npm run admin:create` does for a deployment). */
export async function makeAdmin(accountId: string) {
  await env.DB.prepare("UPDATE users SET is_admin = 1 WHERE account_id = ?").bind(accountId).run();
}

/** A remote account written straight into D1 (no federation needed): a cheap target for graph and privacy tests. */
export async function remoteAccount(): Promise<{ id: string; domain: string }> {
  const id = newId();
  const domain = `${uniqueName("r")}.example`;
  const t = Date.now();
  await env.DB.prepare(
    "INSERT INTO accounts (id, username, domain, uri, url, created_at, updated_at) VALUES (?, 'far', ?, ?, ?, ?, ?)",
  )
    .bind(id, domain, `https://${domain}/users/far`, `https://${domain}/@far`, t, t)
    .run();
  return { id, domain };
}

export const PNG_1PX = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);

/** Posts a status as `user` (a JSON body), expecting `status`. */
export const post = async (
  user: TestUser,
  body: Record<string, unknown>,
  status = 200,
  headers: Record<string, string> = {},
) => json("/api/v1/statuses", { method: "POST", token: user.token, body, status, headers });

/** Uploads a file (a 1-pixel PNG by default) as `user`. */
export async function upload(user: TestUser, bytes: Uint8Array = PNG_1PX, name = "a.png") {
  const form = new FormData();
  form.set("file", new File([bytes], name));
  return json("/api/v1/media", { method: "POST", token: user.token, body: form });
}

/** A token of the user's app with only `scope` (the password grant), to test what a narrower token may do. */
export async function scopedToken(u: TestUser, scope: string): Promise<string> {
  const t = await json("/oauth/token", {
    body: {
      grant_type: "password",
      client_id: u.app.client_id,
      client_secret: u.app.client_secret,
      username: u.username,
      password: u.password,
      scope,
    },
  });
  return valid(TokenSchema, t).access_token;
}
