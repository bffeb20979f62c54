/**
 * Declaring an endpoint: path, auth rule, scopes, parameter schema, response schema and handler in one
 * place. The same zod schemas validate the request and describe it in the OpenAPI document at
 * `/api/openapi`, so the document's parameters follow the code; response schemas are declared, not checked at
 * run time (the tests validate answers against them), and plain hono pages are not in the document.
 * `/api/v1/pleroma/*` paths are also served as `/api/pleroma/*`.
 */
import type { Context } from "hono";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "./app-env";
import { requirePrivilege, type Privilege } from "../services/privileges";
import { authorize, bearer, type Auth, type AuthMode, type UserAuth } from "./auth";
import { parseParams, type BodyLimit } from "./params";
import { baseUrl, clientIp, decodePath } from "./urls";
import { config, type Config } from "../env";
import { db } from "../db/client";
import { hitAll } from "../services/rate-limit";
import { runEffects } from "../effects";
import { mergeEffects, type Effects } from "../services/effects";

type Method = "get" | "post" | "put" | "patch" | "delete";
export type Ctx = Context<AppEnv>;

type AuthFor<M extends AuthMode> = M extends "user" ? UserAuth : M extends "required" ? Auth : Auth | null;

export interface RouteSpec<P extends z.ZodType, M extends AuthMode> {
  method: Method;
  path: string;
  summary: string;
  tags?: string[];
  auth: M;
  /** Alternatives: holding any one is enough. */
  scopes?: string[];
  params?: P;
  /** The largest body the route reads (413 past it, before reading when the declared length says so). */
  bodyLimit?: (cfg: Config) => BodyLimit;
  /** Schema of a successful answer, for the OpenAPI document (tests validate answers against it). */
  response?: z.ZodType;
  /** Media type of the success answer when not JSON. */
  produces?: string;
  /** The success answer is 204 without a body (where the spec says so). */
  noContent?: boolean;
  /**
   * The handler resolves a bearer token itself, inside its own query (see `readWithAuth`): route() checks
   * nothing first and passes no auth. Basic auth and token-less requests are still handled here.
   */
  authInQuery?: boolean;
  /**
   * Throttle (one of the configured `rateLimits`): each call counts against the caller's address and, when `by`
   * names one, against that key too (the address a mail goes to); over either limit the answer is 429
   * `Throttled` with `Retry-After`, before the handler runs.
   */
  rateLimit?: {
    name: keyof Config["rateLimits"];
    by?: (params: z.output<P>) => string | undefined;
    /** False: counted by the key only (a signed-in user's own resource; many users may share an address). */
    byAddress?: boolean;
  };
  /**
   * Staff only (the admin API): the caller must hold this privilege (src/services/privileges.ts), or be an admin
   * for `superuser`; checked before the parameters are read.
   */
  privilege?: Privilege | "superuser";
  handler: (c: Ctx, params: z.output<P>, auth: AuthFor<M>) => Promise<Response> | Response;
}

/**
 * Hands an action's `Effects` (what its services returned) to run after the answer. Several calls add up; a call
 * made once the door has run (a look-up that outlasted the answer stored something) goes to the door at once.
 */
export function after(c: Ctx, e: Effects | undefined): void {
  if (!e) return;
  if (c.get("effectsRan")) runEffects(c.env, c.executionCtx, baseUrl(c), e);
  else c.set("effects", mergeEffects(c.get("effects"), e));
}

/**
 * Runs what the request's actions said must follow them (`after`), through the one door, once the handler is
 * done: for `route()`s and plain pages alike, and also when the handler failed after its batch was committed
 * (rendering the answer), so nothing committed goes without it. Installed once, on every path (app.ts).
 */
export async function afterware(c: Ctx, next: () => Promise<void>): Promise<void> {
  try {
    await next();
  } finally {
    c.set("effectsRan", true);
    runEffects(c.env, c.executionCtx, baseUrl(c), c.get("effects"));
  }
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)(\{[^}]*\})?/g, "{$1}");

export function route<P extends z.ZodType = z.ZodObject<{}>, M extends AuthMode = "none">(
  app: OpenAPIHono<AppEnv>,
  spec: RouteSpec<P, M>,
): void {
  const scopes = spec.scopes ?? [];
  const paramNames: ReadonlySet<string> = new Set(
    spec.params instanceof z.ZodObject ? Object.keys(spec.params.shape) : [],
  );
  const handler = async (c: Ctx) => {
    c.set("paramNames", paramNames);
    // hono leaves a malformed segment undecoded in `c.req.param()`: refuse it rather than guess.
    decodePath(new URL(c.req.url).pathname);
    const auth = spec.authInQuery && bearer(c) ? null : await authorize(c, spec.auth, scopes);
    if (spec.privilege) requirePrivilege(auth?.user, spec.privilege);
    const params = spec.params
      ? await parseParams(c, spec.params, spec.bodyLimit?.(config(c.env)))
      : ({} as z.output<P>);
    if (spec.rateLimit)
      await throttle(c, spec.rateLimit.name, spec.rateLimit.by?.(params), spec.rateLimit.byAddress ?? true);
    return spec.handler(c, params, auth as AuthFor<M>);
  };
  const paths = [spec.path];
  if (spec.path.startsWith("/api/v1/pleroma/")) paths.push(spec.path.replace("/api/v1/pleroma/", "/api/pleroma/"));
  for (const path of paths) {
    app.on(spec.method.toUpperCase(), path, handler);
    register(app, spec, path, scopes);
  }
}

/** Counts a request against a configured limit, by address (unless `byAddress` is false) and by `key` (429 over either). */
export function throttle(c: Ctx, name: keyof Config["rateLimits"], key: string | undefined, byAddress = true) {
  const limit = config(c.env).rateLimits[name];
  const hits = byAddress ? [{ key: `${name}:ip:${clientIp(c)}`, limit }] : [];
  // Bounded: the key becomes a row key.
  if (key) hits.push({ key: `${name}:key:${key.trim().toLowerCase().slice(0, 320)}`, limit });
  return hitAll(db(c.env), hits);
}

function register(app: OpenAPIHono<AppEnv>, spec: RouteSpec<any, any>, path: string, scopes: string[]) {
  const pathParams = [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
  const params = spec.params instanceof z.ZodObject ? spec.params : undefined;
  const shape = params ? { ...params.shape } : {};
  for (const p of pathParams) delete shape[p];
  const fields = z.object(shape);
  const request: Record<string, unknown> = {};
  if (pathParams.length) request.params = z.object(Object.fromEntries(pathParams.map((p) => [p, z.string()])));
  if (params && Object.keys(shape).length) {
    if (spec.method === "get" || spec.method === "delete") request.query = fields;
    else
      request.body = {
        content: {
          "application/json": { schema: fields },
          "application/x-www-form-urlencoded": { schema: fields },
          "multipart/form-data": { schema: fields },
        },
      };
  }
  const success = spec.produces
    ? { description: "Success", content: { [spec.produces]: { schema: z.string() } } }
    : { description: "Success", content: { "application/json": { schema: spec.response ?? z.object({}) } } };
  app.openAPIRegistry.registerPath({
    method: spec.method,
    path: openApiPath(path),
    summary: spec.summary,
    tags: spec.tags,
    security: spec.auth === "none" ? [] : [{ OAuth2: scopes }],
    request: request as any,
    responses: {
      ...(spec.noContent ? { 204: { description: "No Content" } } : { 200: success }),
      400: { description: "Invalid parameters", content: { "application/json": { schema: ErrorSchema } } },
      ...(spec.auth === "none"
        ? {}
        : {
            403: {
              description: "Missing credentials or scope",
              content: { "application/json": { schema: ErrorSchema } },
            },
          }),
      ...(spec.rateLimit
        ? {
            429: {
              description: "Throttled (see Retry-After)",
              content: { "application/json": { schema: ErrorSchema } },
            },
          }
        : {}),
    },
  });
}

const ErrorSchema = z.object({ error: z.string() }).passthrough().openapi("Error");
