/**
 * What today's browser apps sent when walked in Chromium against a local instance (issue 45; README "Tested
 * clients"), each failure reproduced as the app sent it: Soapbox 3.2.0, Phanpy (2026-08) and Pleroma-FE 2.8.0.
 */
import { describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema } from "../src/schemas/status";
import { call, json, post, registerUser, scopedToken, valid, type TestUser } from "./helpers";

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

describe("Phanpy (2026-08)", () => {
  const follow = (u: TestUser, target: TestUser) =>
    json(`/api/v1/accounts/${target.id}/follow`, { method: "POST", token: u.token });
  const familiar = async (u: TestUser | string, query: string, status = 200) =>
    json<{ id: string; accounts: unknown[] }[]>(`/api/v1/accounts/familiar_followers?${query}`, {
      token: typeof u === "string" ? u : u.token,
      status,
    });

  // Its account card asks `GET /api/v1/accounts/familiar_followers?id[]=…` for every profile opened: it was read as
  // `/api/v1/accounts/:id` and answered 404 "Can't find user".
  it("answers familiar followers: accounts the user follows that follow each account asked", async () => {
    const [me, friend, other, stranger, target] = await Promise.all([1, 2, 3, 4, 5].map(() => registerUser()));
    await follow(me, friend);
    await follow(me, other);
    for (const u of [friend, other, stranger]) await follow(u, target);
    const answer = await familiar(me, `id[]=${target.id}&id[]=01ZZZZZZZZZZZZZZZZZZZZZZZZ&id[]=${friend.id}`);
    expect(answer.map((a) => a.id)).toEqual([target.id, "01ZZZZZZZZZZZZZZZZZZZZZZZZ", friend.id]);
    const accounts = answer[0]!.accounts.map((a) => valid(AccountSchema, a));
    expect(accounts.map((a) => a.id).sort()).toEqual([friend.id, other.id].sort());
    expect(answer[1]!.accounts).toEqual([]);
    expect(answer[2]!.accounts).toEqual([]);
    // One id given without brackets, as Mastodon also takes it.
    expect((await familiar(me, `id=${target.id}`))[0]!.accounts).toHaveLength(2);
    // Nobody is shown for an account that hides its followers, but to itself.
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: target.token,
      body: { hide_followers: true },
    });
    expect((await familiar(me, `id[]=${target.id}`))[0]!.accounts).toEqual([]);
    await follow(target, friend);
    expect((await familiar(target, `id[]=${target.id}`))[0]!.accounts).toHaveLength(1);
  });

  it("needs a user token with read:follows", async () => {
    const me = await registerUser();
    // Signed out: 403, as Pleroma answers (and the rest of this server).
    const anonymous = await call(`/api/v1/accounts/familiar_followers?id[]=${me.id}`);
    expect(anonymous.status).toBe(403);
    expect(await anonymous.json()).toHaveProperty("error");
    await familiar(await scopedToken(me, "read:statuses"), `id[]=${me.id}`, 403);
    expect(await familiar(me, "")).toEqual([]);
  });
});
