/**
 * Other instances' favicons (Pleroma's `pleroma.favicon` of remote accounts, from `Instances.Instance`): learned
 * by the cron, a few instances a run, from the `link rel="icon"` of the instance's home page, and kept with the
 * instance (`instances.favicon`), copied onto its accounts so that every read renders it. Looked for again after
 * FAVICON_REFRESH_MS, sooner after a failed fetch. The page is fetched through the SSRF guard, time and size
 * bounded; what it names is kept only as an http(s) URL of bounded length (clients load it as an image).
 */
import { sql } from "drizzle-orm";
import { config, type Env } from "../env";
import { db, statement } from "../db/client";
import { allowPrivateAddress, outboundFetch } from "../lib/outbound";
import { deliveryAllowedSql } from "./federation-policies";

const DAY = 86_400_000;
/** How long a learned favicon (or its absence) is kept before the home page is read again. */
export const FAVICON_REFRESH_MS = 30 * DAY;
/** After a failed fetch, the next try comes a day later. */
const RETRY_AFTER_FAILURE_MS = DAY;
/** Instances looked at per cron run. */
const PER_RUN = 3;
/** What is read of a home page: the `<head>` comes first, and a bigger page is read this far, not refused. */
const PAGE_READ_BYTES = 512_000;
const URL_MAX = 2048;

/** The icon a home page names: the first `<link>` whose `rel` holds the token `icon`, resolved against the page. */
async function faviconOf(page: Response, base: string): Promise<string | null> {
  let href: string | null = null;
  const rewriter = new HTMLRewriter().on("link[rel][href]", {
    element(el) {
      if (href !== null) return;
      const rel = (el.getAttribute("rel") ?? "").toLowerCase().split(/\s+/);
      if (rel.includes("icon")) href = el.getAttribute("href");
    },
  });
  await rewriter.transform(page).arrayBuffer();
  if (href === null) return null;
  try {
    const url = new URL(href, base);
    return (url.protocol === "https:" || url.protocol === "http:") && url.href.length <= URL_MAX ? url.href : null;
  } catch {
    return null;
  }
}

/** The first `max` bytes of a body (all of a shorter one); the rest is not read. */
async function firstBytes(res: Response, max: number): Promise<Uint8Array> {
  const out = new Uint8Array(max);
  let n = 0;
  const reader = res.body!.getReader();
  while (n < max) {
    const { value, done } = await reader.read();
    if (done) break;
    const take = Math.min(value.byteLength, max - n);
    out.set(value.subarray(0, take), n);
    n += take;
  }
  await reader.cancel().catch(() => {});
  return out.subarray(0, n);
}

/** Fetches the home page of `domain`; the favicon it names, null when none, undefined when it could not be read. */
async function lookFor(env: Env, domain: string): Promise<string | null | undefined> {
  const base = `https://${domain}/`;
  try {
    const res = await outboundFetch(
      base,
      { headers: { Accept: "text/html" } },
      { allowPrivate: allowPrivateAddress(env), timeoutMs: 5000 },
    );
    if (!res.ok || !/html/i.test(res.headers.get("content-type") ?? "")) {
      await res.body?.cancel();
      return res.ok ? null : undefined;
    }
    return await faviconOf(new Response(await firstBytes(res, PAGE_READ_BYTES), { headers: res.headers }), base);
  } catch {
    return undefined;
  }
}

/**
 * One cron step: the instances never looked at first, oldest known first (a server inventing hosts only delays
 * those it invented), then those due again; never this instance, nor one the federation policies refuse.
 * Returns the domains looked at.
 */
export async function learnFavicons(env: Env, t: number, max = PER_RUN): Promise<string[]> {
  const d = db(env);
  const wanted = sql`domain <> ${config(env).domain ?? ""} AND ${deliveryAllowedSql(sql`domain`)}`;
  const due = await d.all<{ domain: string }>(sql`SELECT domain FROM (
      SELECT domain FROM instances WHERE favicon_fetched_at IS NULL AND ${wanted} ORDER BY created_at LIMIT ${max})
    UNION ALL SELECT domain FROM (SELECT domain FROM instances WHERE favicon_fetched_at < ${t - FAVICON_REFRESH_MS} AND ${wanted} ORDER BY favicon_fetched_at LIMIT ${max})
    LIMIT ${max}`);
  const found = await Promise.all(due.map((r) => lookFor(env, r.domain)));
  const stmts = due.flatMap(({ domain }, i) => {
    const favicon = found[i];
    if (favicon === undefined) {
      return [
        statement(
          d,
          sql`UPDATE instances SET favicon_fetched_at = ${t - FAVICON_REFRESH_MS + RETRY_AFTER_FAILURE_MS} WHERE domain = ${domain}`,
        ),
      ];
    }
    return [
      statement(d, sql`UPDATE instances SET favicon = ${favicon}, favicon_fetched_at = ${t} WHERE domain = ${domain}`),
      statement(
        d,
        sql`UPDATE accounts SET favicon = ${favicon} WHERE domain = ${domain} AND favicon IS NOT ${favicon}`,
      ),
    ];
  });
  if (stmts.length) await d.$client.batch(stmts);
  return due.map((r) => r.domain);
}
