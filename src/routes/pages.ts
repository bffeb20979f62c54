/**
 * Public HTML pages for people at the permanent URLs: `/` (the instance), an actor's `url` (`/users/:nickname`)
 * and a status's `url`/`uri` (`/notice/:id`, `/objects/:id`; `/activities/:id` of a reblog), and `/tag/:name`,
 * where hashtag links in content lead. Servers asking for ActivityStreams at actor and object URLs are answered
 * by federation in front of the app (404 there for what it does not serve); a request that reaches these routes
 * asking for it (`/`, `/notice/:id`, `/tag/:name`) gets 406, never HTML pretending to be an object.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/app-env";
import { db } from "../db/client";
import { config } from "../env";
import { ApiError, notFound } from "../lib/errors";
import { wantsActivityJson } from "../http/negotiate";
import { parseParams } from "../http/params";
import { baseUrl, hostOf, originsOf, renderContext } from "../http/urls";
import { builtInImageUrl, DEFAULT_HEADER } from "../lib/media-urls";
import { renderAccount } from "../render/account";
import { instancePage, profilePage, safeUrl, statusPage, tagPage, type Page } from "../render/public-pages";
import { respondWithPage } from "./frontend-serving";
import { chosenFrontend } from "../services/frontends";
import { renderStatuses } from "../render/status";
import { cachedInstanceStats } from "./instance-stats";
import { PROFILE_PAGE_SIZE, publicAccount, publicProfile, publicStatus, publicTag } from "../services/public-pages";

/** Short enough that a deleted post or a changed profile drops out of caches within a minute. */
const CACHE = "public, max-age=60";
/**
 * No script anywhere; images and media from anywhere (remote media are shown by URL). Forms post here only, but
 * the remote follow form's answer redirects to the visitor's own server, which browsers check against
 * `form-action` too: hence any https origin after `'self'`.
 */
const CSP =
  "default-src 'none'; img-src http: https: data:; media-src http: https:; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self' https:";

const pageHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  // The same URL answers JSON to servers: caches must keep the two apart.
  c.header("Vary", "Accept");
  if (wantsActivityJson(c.req.header("Accept"))) {
    throw new ApiError(406, "ActivityStreams representation not available here", {}, { Vary: "Accept" });
  }
  await next();
  // An installed frontend's page carries its own (routes/frontend-serving.ts).
  if (
    c.res.status === 200 &&
    c.res.headers.get("Content-Type")?.startsWith("text/html") &&
    !c.res.headers.has("Content-Security-Policy")
  ) {
    c.header("Cache-Control", CACHE);
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
  }
};

const PAGE_PATHS = ["/", "/users/:username", "/notice/:id", "/objects/:id", "/activities/:id", "/tag/:tag"];

/**
 * The instance's page (`/`, and the page of any frontend route the server knows nothing of). `figures`: with the
 * instance's figures, which only the built-in page shows (an installed frontend's index carries the tags only),
 * so a frontend's navigations read none.
 */
export async function instancePageOf(c: Context<AppEnv>, figures: boolean): Promise<Page> {
  const cfg = config(c.env);
  const stats = figures ? await cachedInstanceStats(c) : null;
  const base = baseUrl(c);
  return instancePage({
    name: cfg.name,
    description: cfg.description,
    host: hostOf(c),
    // Closed registrations still admit invited users (`invites_enabled` in /api/v1/instance).
    registrations: cfg.registrationsOpen ? "open" : "invite",
    activationRequired: cfg.activationRequired,
    figures: stats && { users: stats.userCount, statuses: stats.statusCount, domains: stats.domainCount },
    email: cfg.email,
    thumbnail: builtInImageUrl(originsOf(c), DEFAULT_HEADER),
    base,
  });
}

/**
 * A local account's profile page, or null when there is none to show; `full: false` (an installed frontend shows the
 * page: only its tags are needed) reads the account alone, not its statuses.
 */
async function profilePageOf(
  c: Context<AppEnv>,
  username: string,
  full: boolean,
  maxId?: string,
): Promise<Page | null> {
  const ctx = renderContext(c, null);
  const found = full
    ? await publicProfile(db(c.env), username, hostOf(c), maxId)
    : await publicAccount(db(c.env), username, hostOf(c)).then((account) => account && { account, h: null, ids: [] });
  if (!found) return null;
  const account = renderAccount(ctx, found.account);
  return profilePage({
    siteName: config(c.env).name,
    account,
    statuses: found.h ? renderStatuses(ctx, found.h, found.ids) : [],
    olderUrl: found.ids.length === PROFILE_PAGE_SIZE ? `?max_id=${found.ids.at(-1)}` : null,
    noindex: !account.discoverable,
  });
}

/**
 * The tags for a frontend's own route (routes/frontend-serving.ts): a profile's for `/@nickname` and `/nickname`
 * (Pleroma-FE's and Mastodon's profile URLs, as Pleroma's metadata does), else the instance's.
 */
export async function frontendRoutePageOf(c: Context<AppEnv>): Promise<Page> {
  const name = /^\/@?([A-Za-z0-9_]{1,64})\/?$/.exec(new URL(c.req.url).pathname)?.[1];
  return (name && (await profilePageOf(c, name, false))) || instancePageOf(c, false);
}

export function registerPageRoutes(app: OpenAPIHono<AppEnv>) {
  for (const path of PAGE_PATHS) app.use(path, pageHeaders);

  app.get("/", async (c) =>
    respondWithPage(c, await instancePageOf(c, !(await chosenFrontend(c.env, config(c.env), "primary")))),
  );

  app.get("/users/:username", async (c) => {
    const p = await parseParams(c, z.object({ username: z.string(), max_id: z.string().optional() }));
    const frontend = await chosenFrontend(c.env, config(c.env), "primary");
    const page = await profilePageOf(c, p.username, !frontend, p.max_id);
    if (page) return respondWithPage(c, page);
    if (frontend) return respondWithPage(c, await instancePageOf(c, false));
    throw notFound("Can't find user");
  });

  // Where hashtag links in content lead (`${base}/tag/<name>`).
  app.get("/tag/:tag", async (c) => {
    const p = await parseParams(c, z.object({ tag: z.string().min(1).max(200), max_id: z.string().optional() }));
    const found = await publicTag(db(c.env), p.tag, p.max_id);
    const name = p.tag.replace(/^#/, "").toLowerCase();
    return respondWithPage(
      c,
      tagPage({
        siteName: config(c.env).name,
        tag: name,
        url: `${baseUrl(c)}/tag/${encodeURIComponent(name)}`,
        statuses: renderStatuses(renderContext(c, null), found.h, found.ids),
        olderUrl: found.older === null ? null : `?max_id=${found.older}`,
      }),
    );
  });

  const showStatus = async (c: Context<AppEnv>) => {
    const id = c.req.param("id") ?? "";
    const h = await publicStatus(db(c.env), id);
    const [s] = h ? renderStatuses(renderContext(c, null), h, [id]) : [];
    const noindex = (x: typeof s) => !x.account.discoverable || x.visibility !== "public" || !x.pleroma.local;
    // An installed frontend shows any status it may (remote ones too, as Pleroma-FE does), or says it cannot.
    if (await chosenFrontend(c.env, config(c.env), "primary"))
      return respondWithPage(
        c,
        s ? statusPage(config(c.env).name, s.reblog ?? s, noindex(s.reblog ?? s)) : await instancePageOf(c, false),
      );
    if (!s) throw notFound();
    // A reblog has no page of its own: it leads to what it shares. A remote post is shown where it lives.
    const target = s.reblog ?? s;
    if (s.reblog || !target.pleroma.local) {
      const to = safeUrl(target.url ?? target.uri);
      if (to === "#") throw notFound();
      return c.redirect(to, 302);
    }
    return respondWithPage(c, statusPage(config(c.env).name, s, noindex(s)));
  };
  app.get("/notice/:id", showStatus);
  app.get("/objects/:id", showStatus);
  app.get("/activities/:id", showStatus);
}
