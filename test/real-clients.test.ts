/**
 * What today's browser apps sent when walked in Chromium against a local instance (issue 45; README "Tested
 * clients"), each failure reproduced as the app sent it: Soapbox 3.2.0, Phanpy (2026-08) and Pleroma-FE 2.8.0.
 */
import { describe, expect, it } from "vitest";
import { StatusSchema } from "../src/schemas/status";
import { call, json, post, registerUser, valid } from "./helpers";

describe("Soapbox 3.2.0", () => {
  // Behind a TLS front the Worker is reached over http://; Soapbox's CSP (`connect-src 'self' https: wss:`) then
  // refused the next page of the home timeline: "Connecting to 'http://…/api/v1/timelines/home?max_id=…' violates
  // the following Content Security Policy directive".
  it("pages with Link URLs on the public origin, not the one the request reached", async () => {
    const u = await registerUser();
    for (let i = 0; i < 2; i++) await post(u, { status: `page ${i}` });
    const vars = { DOMAIN: "localhost:8443" };
    const res = await call("/api/v1/timelines/home?limit=1&only_media=false", { token: u.token, vars });
    expect(res.status).toBe(200);
    const [status] = (await res.json()) as unknown[];
    valid(StatusSchema, status);
    const link = res.headers.get("link")!;
    const next = /<([^>]+)>; rel="next"/.exec(link)![1]!;
    const prev = /<([^>]+)>; rel="prev"/.exec(link)![1]!;
    for (const url of [next, prev]) expect(url).toMatch(/^https:\/\/localhost:8443\/api\/v1\/timelines\/home\?/);
    expect(new URL(next).searchParams.get("limit")).toBe("1");
    // Followed as the app follows it (the path and query, whatever the host): the older post.
    const older = await json(new URL(next).pathname + new URL(next).search, { token: u.token, vars });
    expect(older).toHaveLength(1);
    expect(valid(StatusSchema, older[0]).content).toContain("page 0");
  });
});
