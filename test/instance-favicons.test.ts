/**
 * Remote accounts' `pleroma.favicon` (issue 29): the favicon of their instance, learned once per instance by the
 * cron from the home page's `link rel="icon"`, kept with the instance and rendered on its accounts.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import worker from "../src/index";
import { AccountSchema } from "../src/schemas/account";
import { FAVICON_REFRESH_MS } from "../src/services/instance-favicons";
import { json, registerUser, valid } from "./helpers";
import { expectAccepted, fill, q, remoteId, reroute, unroute } from "./inbound";
import { A } from "./instances";
import { createPeer, type Peer } from "./peer";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";

afterEach(unroute);

let n = 0;
/** A peer on a host of its own whose home page (`/`) is `home` (a status, type and body). */
function peerWithHome(home: { status?: number; type?: string; body: string }) {
  const peer = createPeer(`fav${Date.now().toString(36)}${n++}.example`);
  const pages: string[] = [];
  reroute(() => {
    const undo = peer.route();
    const inner = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      if (req.url === `${peer.origin}/`) {
        pages.push(req.url);
        return new Response(home.body, {
          status: home.status ?? 200,
          headers: { "Content-Type": home.type ?? "text/html; charset=utf-8" },
        });
      }
      return inner(input, init);
    }) as typeof fetch;
    return () => {
      globalThis.fetch = inner;
      undo();
    };
  });
  return { peer, pages };
}

/** A remote account of `peer` stored on A (it follows a local user), rendered through A's API. */
async function remoteFollower(peer: Peer) {
  const user = await registerUser({ instance: A });
  const actor = peer.actor();
  const vars = {
    ACTOR: actor,
    ORIGIN: peer.origin,
    TARGET: `${A.origin}/users/${user.username}`,
    TARGET_NAME: user.username,
    NAME: "x",
    N: `${Date.now()}${n++}`,
  };
  await expectAccepted(await peer.send(actor, fill(mastodonFollow, vars)));
  const id = (await remoteId(actor))!;
  return {
    user,
    id,
    render: async () => valid(AccountSchema, await json(`/api/v1/accounts/${id}`, { instance: A, token: user.token })),
  };
}

/** One cron run on A at `t`, with only `domain` due (other tests' instances are left for later). */
async function cron(domain: string, t = Date.now()) {
  await env.DB.prepare(
    "UPDATE instances SET favicon_fetched_at = ? WHERE domain <> ? AND (favicon_fetched_at IS NULL OR favicon_fetched_at < ?)",
  )
    .bind(t, domain, t - FAVICON_REFRESH_MS)
    .run();
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ scheduledTime: new Date(t), cron: "* * * * *" }),
    A.bindings as typeof env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

describe("remote accounts' favicon", () => {
  it("is learned from the instance's home page once, kept with the instance and shown on all its accounts", async () => {
    const { peer, pages } = peerWithHome({
      body: `<html><head><link rel="stylesheet" href="/a.css"><link rel="Shortcut Icon" href="/static/fav.png"><link rel="icon" href="/other.png"></head></html>`,
    });
    const first = await remoteFollower(peer);
    expect((await first.render()).pleroma.favicon).toBeNull();
    expect(await q("SELECT favicon_fetched_at FROM instances WHERE domain = ?", peer.host)).toEqual([
      { favicon_fetched_at: null },
    ]);
    await cron(peer.host);
    expect((await first.render()).pleroma.favicon).toBe(`${peer.origin}/static/fav.png`);
    expect(pages).toHaveLength(1);
    // An account of the same instance stored later has it at once; a later run does not read the page again.
    const second = await remoteFollower(peer);
    expect((await second.render()).pleroma.favicon).toBe(`${peer.origin}/static/fav.png`);
    await cron(peer.host);
    expect(pages).toHaveLength(1);
    // Local accounts have none.
    const local = valid(AccountSchema, await json(`/api/v1/accounts/${first.user.id}`, { instance: A }));
    expect(local.pleroma.favicon).toBeNull();
    // A month later it is looked for again.
    await cron(peer.host, Date.now() + FAVICON_REFRESH_MS + 60_000);
    expect(pages).toHaveLength(2);
  });

  it("keeps only an http(s) URL: a javascript: or data: icon, or none, is no favicon", async () => {
    for (const href of ["javascript:alert(1)", "data:image/png;base64,AAAA", null]) {
      const body = href === null ? "<html><head><title>x</title></head></html>" : `<link rel="icon" href="${href}">`;
      const { peer, pages } = peerWithHome({ body });
      const follower = await remoteFollower(peer);
      await cron(peer.host);
      expect(pages).toHaveLength(1);
      expect((await follower.render()).pleroma.favicon).toBeNull();
      expect(
        (
          await q<{ favicon_fetched_at: number | null }>(
            "SELECT favicon_fetched_at FROM instances WHERE domain = ?",
            peer.host,
          )
        )[0]!.favicon_fetched_at,
      ).not.toBeNull();
    }
  });

  it("an unreadable home page stores nothing and is tried again a day later; of a big page the first 512 KB are read", async () => {
    const failing = peerWithHome({ status: 500, body: "" });
    const follower = await remoteFollower(failing.peer);
    const t = Date.now();
    await cron(failing.peer.host, t);
    expect(failing.pages).toHaveLength(1);
    expect((await follower.render()).pleroma.favicon).toBeNull();
    await cron(failing.peer.host, t + 60_000);
    expect(failing.pages).toHaveLength(1);
    await cron(failing.peer.host, t + 86_400_000 + 60_000);
    expect(failing.pages).toHaveLength(2);

    const big = peerWithHome({
      body: `<head><link rel="icon" href="/big.png"></head>${"x".repeat(2_000_000)}<link rel="icon" href="/late.png">`,
    });
    const reader = await remoteFollower(big.peer);
    await cron(big.peer.host);
    expect((await reader.render()).pleroma.favicon).toBe(`${big.peer.origin}/big.png`);
  });

  it("an instance the federation policies reject is never asked", async () => {
    const { peer, pages } = peerWithHome({ body: `<link rel="icon" href="/x.png">` });
    const follower = await remoteFollower(peer);
    await env.DB.prepare("INSERT INTO federation_policies (domain, policy, created_at) VALUES (?, 'reject', ?)")
      .bind(peer.host, Date.now())
      .run();
    try {
      await cron(peer.host);
      expect(pages).toEqual([]);
      expect((await follower.render()).pleroma.favicon).toBeNull();
    } finally {
      await env.DB.prepare("DELETE FROM federation_policies WHERE domain = ?").bind(peer.host).run();
    }
  });
});
