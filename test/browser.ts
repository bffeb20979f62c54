/**
 * A browser for the no-JavaScript pages: keeps its cookies per host and its address, sends forms, and follows
 * redirects only when asked (so a test sees every hop). Works against the pool's Worker (`http://localhost`) and
 * the instances of test/instances.ts (their origins).
 */
import { expect } from "vitest";
import { call, freshIp, type CallOptions } from "./helpers";
import type { Instance } from "./instances";

export interface Page {
  res: Response;
  text: string;
  url: string;
}

export function browser(opts: { vars?: Record<string, string>; instances?: Instance[] } = {}) {
  /** host -> name -> value */
  const jars = new Map<string, Map<string, string>>();
  const ip = freshIp();
  const jar = (host: string) => jars.get(host) ?? jars.set(host, new Map()).get(host)!;
  const absolute = (path: string) => (path.startsWith("http") ? path : `http://localhost${path}`);
  async function send(path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}) {
    const url = new URL(absolute(path));
    const cookies = jar(url.host);
    const instance = opts.instances?.find((i) => i.domain === url.host);
    const res = await call(url.href, {
      method: init.method ?? "GET",
      body: init.body,
      vars: opts.vars,
      instance: instance as CallOptions["instance"],
      headers: {
        "cf-connecting-ip": ip,
        accept: "text/html",
        ...(cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") } : {}),
        ...init.headers,
      },
    });
    for (const line of (res.headers as unknown as { getSetCookie(): string[] }).getSetCookie()) {
      const [pair] = line.split(";");
      const [k, v] = pair!.split("=");
      if (/max-age=0|expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(k!.trim());
      else cookies.set(k!.trim(), v ?? "");
    }
    return { res, text: await res.text(), url: url.href } as Page;
  }
  /** Where a redirect leads, as an absolute URL. */
  const location = (p: Page) => new URL(p.res.headers.get("location")!, p.url).href;
  /** Follows redirects (at most 5) from a page. */
  async function follow(p: Page): Promise<Page> {
    for (let i = 0; i < 5 && p.res.status >= 300 && p.res.status < 400; i++) p = await send(location(p));
    return p;
  }
  /** The form of `page` whose action is `action`, sent with its hidden fields and these. */
  async function submit(page: Page, action: string, fields: Record<string, string>) {
    const forms = [...page.text.matchAll(/<form[^>]*? action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)];
    const form = forms.find((f) => f[1] === action);
    expect(form, `a form to ${action} in ${page.text.slice(0, 300)}`).toBeTruthy();
    const hidden = [...form![2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
      (m) => [m[1]!, decodeEntities(m[2]!)] as [string, string],
    );
    const body = new URLSearchParams([...hidden, ...Object.entries(fields)]);
    return send(new URL(action, page.url).href, { method: "POST", body: body.toString() });
  }
  return { jar, send, follow, submit, location };
}

const decodeEntities = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
