/**
 * Serving the installed frontends (issue 34; services/frontends.ts), as Pleroma does: the admin one at
 * `/pleroma/admin/`, the primary one at `/` — its files by path, and its `index.html` for a browser's navigation
 * to any path the API, federation and the built-in pages do not answer, with the page's OpenGraph tags put in.
 * The public pages (routes/pages.ts) answer with the primary frontend through `respondWithPage` when one is
 * installed, with their own no-JavaScript document otherwise. Registered last: everything else comes first.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/app-env";
import { config } from "../env";
import { notFound } from "../lib/errors";
import type { Ctx } from "../http/route";
import { baseUrl } from "../http/urls";
import { isHashedAsset } from "../lib/frontend-archive";
import { frontendDocument, renderPage, type Page } from "../render/public-pages";
import { chosenFrontend, frontendFile, frontendIndex, type Installed } from "../services/frontends";
import { documentAt } from "../services/instance-documents";

/** What a frontend may do on the instance's origin: its own scripts and styles, media from anywhere, no framing. */
function frontendCsp(base: string) {
  const socket = base.replace(/^http/, "ws");
  return [
    "default-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: https: http:",
    "media-src 'self' data: blob: https: http:",
    "font-src 'self' data:",
    // https: too: without a media proxy, a frontend fetches remote media itself (Ruffle's .swf, as Pleroma allows).
    `connect-src 'self' blob: https: ${socket}`,
    "manifest-src 'self'",
    "worker-src 'self' blob:",
  ].join("; ");
}

function securityHeaders(c: Ctx) {
  c.header("Content-Security-Policy", frontendCsp(baseUrl(c)));
  c.header("X-Content-Type-Options", "nosniff");
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "same-origin");
}

/** A frontend's index page (with `page`'s tags put in, for the primary one): never cached without asking. */
async function indexResponse(c: Ctx, fe: Installed, page: Page | null): Promise<Response | null> {
  const index = await frontendIndex(c.env, fe);
  if (index === null) return null;
  securityHeaders(c);
  c.header("Cache-Control", "no-cache");
  return c.html(page ? await frontendDocument(index, page) : index);
}

/** A public page: the primary frontend with the page's tags when one is installed, else the built-in document. */
export async function respondWithPage(c: Ctx, page: Page): Promise<Response> {
  const fe = await chosenFrontend(c.env, config(c.env), "primary");
  return (fe && (await indexResponse(c, fe, page))) || c.html(renderPage(page));
}

async function fileResponse(c: Ctx, fe: Installed, path: string): Promise<Response | null> {
  const found = await frontendFile(c.env, fe, path);
  if (!found) return null;
  const { file, body } = found;
  securityHeaders(c);
  // Hashed names never change: a year. Others (config.json, the service worker) may change with a new install.
  c.header("Cache-Control", isHashedAsset(path) ? "public, max-age=31536000, immutable" : "public, max-age=300");
  c.header("ETag", body.httpEtag);
  const unchanged = c.req.header("If-None-Match") === body.httpEtag;
  if (unchanged || c.req.method === "HEAD") await body.body.cancel();
  if (unchanged) return c.body(null, 304);
  c.header("Content-Type", file.type);
  c.header("Content-Length", String(file.size));
  return c.req.method === "HEAD" ? c.body(null) : c.body(body.body);
}

/**
 * Paths no frontend file is served at: the server's own (API, federation, OAuth, `/.well-known` — an ACME challenge
 * there would prove the domain —, media, the built-in forms and pages).
 */
const SERVERS_OWN =
  /^\/(api|oauth|\.well-known|nodeinfo|media|proxy|inbox|relay|internal|streaming|auth|registration|setup|objects|activities|users|notice|tag|pleroma|main\/ostatus|ostatus_subscribe|authorize_interaction|authorize_follow)(\/|$)/;
/** Paths no index is served at (the frontend's own routes under `/users/…` and `/notice/…` are navigations). */
const NOT_NAVIGATION =
  /^\/(api|oauth|\.well-known|nodeinfo|media|proxy|inbox|relay|internal|streaming|auth|registration|setup|static|objects|activities)(\/|$)/;

/**
 * A browser's navigation (or a link preview's fetch), which gets the index: HTML asked for, a document being
 * loaded, or no particular type asked for a path without an extension (crawlers often send `*\/*` or nothing).
 */
function isNavigation(c: Ctx, pathname: string): boolean {
  const accept = c.req.header("Accept") ?? "";
  if (/text\/html|application\/xhtml\+xml/.test(accept) || c.req.header("Sec-Fetch-Dest") === "document") return true;
  return (accept === "" || accept.trim() === "*/*") && !/\.[A-Za-z0-9]+$/.test(pathname);
}

export function registerFrontendServing(app: OpenAPIHono<AppEnv>, fallbackPage: (c: Ctx) => Promise<Page>) {
  // One handler for `/pleroma/admin` and below (the app matches with or without a trailing slash).
  const admin = async (c: Ctx) => {
    const pathname = new URL(c.req.url).pathname;
    if (pathname === "/pleroma/admin") return c.redirect("/pleroma/admin/", 301);
    const fe = await chosenFrontend(c.env, config(c.env), "admin");
    if (!fe) throw notFound("No admin frontend is installed");
    const path = safeDecode(pathname.slice("/pleroma/admin/".length));
    const res = (path && (await fileResponse(c, fe, path))) || (await indexResponse(c, fe, null));
    if (!res) throw notFound();
    return res;
  };
  app.get("/pleroma/admin", admin);
  app.get("/pleroma/admin/*", admin);

  app.get("*", async (c) => {
    const pathname = new URL(c.req.url).pathname;
    // An instance document an admin uploaded overrides the frontend's file of the same path (as Pleroma's
    // instance static folder does), and is served without one too.
    const doc = await documentAt(c.env, pathname);
    if (doc) {
      c.header(
        "Content-Security-Policy",
        "default-src 'none'; img-src https: data:; style-src 'unsafe-inline'; frame-ancestors 'self'",
      );
      c.header("X-Content-Type-Options", "nosniff");
      c.header("Cache-Control", "public, max-age=60");
      return c.html(await doc.text());
    }
    const fe = await chosenFrontend(c.env, config(c.env), "primary");
    if (!fe) return c.notFound();
    const path = safeDecode(pathname.slice(1));
    const file = path && !SERVERS_OWN.test(pathname) ? await fileResponse(c, fe, path) : null;
    if (file) return file;
    if (!isNavigation(c, pathname) || NOT_NAVIGATION.test(pathname)) return c.notFound();
    c.header("Vary", "Accept");
    return (await indexResponse(c, fe, await fallbackPage(c))) ?? c.notFound();
  });
}

/** A path as the build names its files; a malformed escape names none. */
function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return "";
  }
}
