/**
 * Remote follow and interaction (issue 34), between two Starling instances (test/instances.ts): WebFinger's
 * subscribe template, Pleroma's `remote_interaction`, the public pages' "from your server" form, and the
 * confirmation at `/authorize_interaction` / `/ostatus_subscribe`, whose follow federates.
 */
import { describe, expect, it } from "vitest";
import { browser, type Page } from "./browser";
import { call, freshIp, json, registerUser, type TestUser } from "./helpers";
import { A, B, federating, type Instance } from "./instances";

const fed = federating();

const postOn = (i: Instance, u: TestUser, status: string, visibility = "public") =>
  json("/api/v1/statuses", { instance: i, token: u.token, body: { status, visibility } });
const actorUrl = (i: Instance, u: TestUser) => `${i.origin}/users/${u.username}`;
const remoteInteraction = (body: Record<string, string>) =>
  call("/api/v1/pleroma/remote_interaction", {
    instance: A,
    body,
    headers: { "cf-connecting-ip": freshIp() },
  });

describe("WebFinger", () => {
  it("announces the subscribe template for local accounts, not for the instance actor", async () => {
    const alice = await registerUser({ instance: A });
    const found = await call(`/.well-known/webfinger?resource=acct:${alice.username}@a.example`, { instance: A });
    expect(found.status).toBe(200);
    const jrd = (await found.json()) as { links: unknown[] };
    expect(jrd.links).toContainEqual({
      rel: "http://ostatus.org/schema/1.0/subscribe",
      template: "https://a.example/ostatus_subscribe?acct={uri}",
    });
    const res = await call("/.well-known/webfinger?resource=acct:internal.fetch@a.example", { instance: A });
    expect(res.status).toBe(200);
    const rels = ((await res.json()) as { links: { rel: string }[] }).links.map((l) => l.rel);
    expect(rels).toContain("self");
    expect(rels).not.toContain("http://ostatus.org/schema/1.0/subscribe");
  });
});

describe("POST /api/v1/pleroma/remote_interaction", () => {
  it("answers the visitor's server's URL for the id, encoded into its template", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    for (const profile of [`${bob.username}@b.example`, `@${bob.username}@b.example`]) {
      const res = await remoteInteraction({ ap_id: actorUrl(A, alice), profile });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        url: `https://b.example/ostatus_subscribe?acct=${encodeURIComponent(actorUrl(A, alice))}`,
      });
    }
  });

  it("resolves this instance's own handles locally (no WebFinger to itself), and still not an unknown one", async () => {
    const alice = await registerUser({ instance: A });
    const carol = await registerUser({ instance: A });
    const routed = globalThis.fetch;
    const asked: string[] = [];
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      asked.push(new Request(input, init).url);
      return routed(input, init);
    }) as typeof fetch;
    try {
      for (const profile of [`${carol.username}@a.example`, `@${carol.username.toUpperCase()}@A.example`]) {
        const res = await remoteInteraction({ ap_id: actorUrl(A, alice), profile });
        expect(res.status, profile).toBe(200);
        expect(await res.json()).toEqual({
          url: `https://a.example/ostatus_subscribe?acct=${encodeURIComponent(actorUrl(A, alice))}`,
        });
      }
      const res = await remoteInteraction({ ap_id: actorUrl(A, alice), profile: "nobody_here@a.example" });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "Couldn't find user" });
      expect(asked.filter((u) => u.includes("a.example"))).toEqual([]);
    } finally {
      globalThis.fetch = routed;
    }
  });

  it("says it cannot find the user for an unknown host, a host without a template, or an unknown account", async () => {
    const alice = await registerUser({ instance: A });
    const ap_id = actorUrl(A, alice);
    // A server whose WebFinger has no subscribe link (and one answering with a javascript: template).
    const routed = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(new Request(input, init).url);
      if (url.host === "plain.example" || url.host === "evil.example") {
        const links =
          url.host === "plain.example"
            ? [{ rel: "self", type: "application/activity+json", href: "https://plain.example/u/x" }]
            : [{ rel: "http://ostatus.org/schema/1.0/subscribe", template: "javascript:alert('{uri}')" }];
        return Response.json(
          { subject: `acct:x@${url.host}`, links },
          { headers: { "content-type": "application/jrd+json" } },
        );
      }
      return routed(input, init);
    }) as typeof fetch;
    try {
      for (const profile of ["x@nowhere.example", "x@plain.example", "x@evil.example", "nobody_here@b.example"]) {
        const res = await remoteInteraction({ ap_id, profile });
        expect(res.status, profile).toBe(400);
        expect(await res.json()).toEqual({ error: "Couldn't find user" });
      }
    } finally {
      globalThis.fetch = routed;
    }
  });

  it("refuses bad input with 400 and an error", async () => {
    const cases: Record<string, string>[] = [
      { ap_id: "https://a.example/users/x" },
      { profile: "x@b.example" },
      { ap_id: "javascript:alert(1)", profile: "x@b.example" },
      { ap_id: "https://a.example/users/x", profile: "not a handle" },
      { ap_id: "https://a.example/users/x", profile: "x@" },
      { ap_id: "https://a.example/users/x", profile: "x@b.example/path" },
    ];
    for (const body of cases) {
      const res = await remoteInteraction(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof ((await res.json()) as { error: unknown }).error).toBe("string");
    }
  });
});

describe("throttling", () => {
  it("counts remote interaction look-ups per address", async () => {
    const ip = freshIp();
    const ask = () =>
      call("/api/v1/pleroma/remote_interaction", {
        instance: A,
        vars: { REMOTE_INTERACTIONS: "1" },
        headers: { "cf-connecting-ip": ip },
        body: { ap_id: "https://a.example/users/x", profile: "x@nowhere.example" },
      });
    expect((await ask()).status).toBe(400);
    const throttled = await ask();
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("retry-after")).toBeTruthy();
  });
});

describe("the public pages' form", () => {
  it("is on profile and status pages, refuses other sites' posts, and shows the form again for a bad handle", async () => {
    const alice = await registerUser({ instance: A });
    const b = browser({ instances: [A, B] });
    const profile = await b.send(`https://a.example/users/${alice.username}`);
    expect(profile.res.status).toBe(200);
    expect(profile.text).toContain('action="/main/ostatus"');
    expect(profile.text).toContain(`name="user[nickname]" value="${alice.username}"`);
    expect(profile.res.headers.get("content-security-policy")).toContain("form-action 'self' https:");
    const s = await postOn(A, alice, "hello from A");
    const statusPage = await b.send(`https://a.example/notice/${s.id}`);
    expect(statusPage.text).toContain(`name="status[status_id]" value="${s.id}"`);

    // Pleroma's page of its own for the form.
    const own = await b.send(`https://a.example/main/ostatus?nickname=${alice.username}`);
    expect(own.res.status).toBe(200);
    expect(own.text).toContain(`name="user[nickname]" value="${alice.username}"`);
    expect((await b.send("https://a.example/main/ostatus?nickname=nobody_at_all")).res.status).toBe(404);
    // Pleroma-FE's "Remote follow" button: a same-origin POST of flat `nickname` and an empty `profile`.
    const fromFrontend = await b.send("https://a.example/main/ostatus", {
      method: "POST",
      headers: { origin: "https://a.example" },
      body: new URLSearchParams({ nickname: alice.username, profile: "" }).toString(),
    });
    expect(fromFrontend.res.status).toBe(200);
    expect(fromFrontend.text).toContain(`name="user[nickname]" value="${alice.username}"`);
    const bad = await b.submit(profile, "/main/ostatus", { "user[profile]": "not a handle" });
    expect(bad.res.status).toBe(422);
    expect(bad.text).toContain("Enter your handle as you@your.server.");
    const unknown = await b.submit(profile, "/main/ostatus", { "user[profile]": "x@nowhere.example" });
    expect(unknown.res.status).toBe(422);
    expect(unknown.text).toContain("Could not find x@nowhere.example");
    const forged = await b.send("https://a.example/main/ostatus", {
      method: "POST",
      headers: { origin: "https://evil.example" },
      body: new URLSearchParams({ "user[nickname]": alice.username, "user[profile]": "x@b.example" }).toString(),
    });
    expect(forged.res.status).toBe(403);
    // A sandboxed frame posts with `Origin: null`: refused too. So the form's own page must not say no-referrer
    // (browsers then send `null` even for a same-origin POST), and a same-origin POST goes through.
    expect(bad.text).toContain('<meta name="referrer" content="same-origin">');
    const sandboxed = await b.send("https://a.example/main/ostatus", {
      method: "POST",
      headers: { origin: "null" },
      body: new URLSearchParams({ "user[nickname]": alice.username, "user[profile]": "x@b.example" }).toString(),
    });
    expect(sandboxed.res.status).toBe(403);
    const sameOrigin = await b.send("https://a.example/main/ostatus", {
      method: "POST",
      headers: { origin: "https://a.example" },
      body: new URLSearchParams({
        "user[nickname]": alice.username,
        "user[profile]": "nobody_here@b.example",
      }).toString(),
    });
    expect(sameOrigin.res.status).toBe(422);
    // Only what the public pages show: no such account, a private post.
    const none = await b.send("https://a.example/main/ostatus", {
      method: "POST",
      body: new URLSearchParams({ "user[nickname]": "nobody_at_all", "user[profile]": "x@b.example" }).toString(),
    });
    expect(none.res.status).toBe(404);
    const hidden = await postOn(A, alice, "followers only", "private");
    const privatePost = await b.send("https://a.example/main/ostatus", {
      method: "POST",
      body: new URLSearchParams({ "status[status_id]": hidden.id, "status[profile]": "x@b.example" }).toString(),
    });
    expect(privatePost.res.status).toBe(404);
  });
});

/**
 * The whole remote follow as a person does it: `visitor` (an account on `visitorHome`) is on the profile page of
 * `target` (on `there`), types their handle, lands on their own server, signs in there and follows.
 */
async function remoteFollow(there: Instance, target: TestUser, visitorHome: Instance, visitor: TestUser) {
  const b = browser({ instances: [A, B] });
  const profile = await b.send(`${there.origin}/users/${target.username}`);
  const sent = await b.submit(profile, "/main/ostatus", {
    "user[profile]": `${visitor.username}@${visitorHome.domain}`,
  });
  expect(sent.res.status).toBe(303);
  const landing = b.location(sent);
  expect(landing).toBe(`${visitorHome.origin}/ostatus_subscribe?acct=${encodeURIComponent(actorUrl(there, target))}`);
  // Not signed in there: the sign-in page, coming back here afterwards.
  const away = await b.send(landing);
  expect(away.res.status).toBe(303);
  const signInUrl = new URL(b.location(away));
  expect(signInUrl.pathname).toBe("/auth/sign_in");
  expect(signInUrl.searchParams.get("return_to")).toBe(new URL(landing).pathname + new URL(landing).search);
  const signIn = await b.send(signInUrl.href);
  const signedIn = await b.submit(signIn, "/auth/sign_in", { username: visitor.username, password: visitor.password });
  expect(signedIn.res.status).toBe(303);
  const confirm: Page = await b.follow(signedIn);
  expect(confirm.url).toBe(landing);
  expect(confirm.res.status).toBe(200);
  expect(confirm.res.headers.get("x-frame-options")).toBe("DENY");
  expect(confirm.text).toContain(`Follow @${target.username}@${there.domain}?`);
  // Without the CSRF token: refused.
  const forged = await b.send(`${visitorHome.origin}/authorize_interaction`, {
    method: "POST",
    body: new URLSearchParams({ action: "follow", id: /name="id" value="([^"]+)"/.exec(confirm.text)![1]! }).toString(),
  });
  expect(forged.res.status).toBe(403);
  const done = await b.submit(confirm, "/authorize_interaction", { action: "follow" });
  expect(done.res.status).toBe(200);
  expect(done.text).toContain(`Your request to follow @${target.username}@${there.domain} was sent.`);
  await fed.settle();
  // The follow federated: the followed account's server lists the visitor as a follower, and it was accepted.
  const followers = await json(`/api/v1/accounts/${target.id}/followers`, { instance: there, token: target.token });
  expect(followers.map((a: { acct: string }) => a.acct)).toContain(`${visitor.username}@${visitorHome.domain}`);
  const [rel] = await json(
    `/api/v1/accounts/relationships?id[]=${/name="id" value="([^"]+)"/.exec(confirm.text)![1]}`,
    { instance: visitorHome, token: visitor.token },
  );
  expect(rel.following).toBe(true);
  // Visiting again shows it.
  const again = await b.send(landing);
  expect(again.text).toContain("You follow this account.");
  return b;
}

describe("remote follow between two Starling instances", () => {
  it("a person on B follows an account on A from A's profile page, and the other way round", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    await remoteFollow(A, alice, B, bob);
    const carol = await registerUser({ instance: A });
    const dave = await registerUser({ instance: B });
    await remoteFollow(B, dave, A, carol);
  });

  it("a person on B favourites a post on A from its page", async () => {
    const alice = await registerUser({ instance: A });
    const bob = await registerUser({ instance: B });
    const s = await postOn(A, alice, "favourite me from afar");
    const b = browser({ instances: [A, B] });
    const statusPage = await b.send(`https://a.example/notice/${s.id}`);
    const sent = await b.submit(statusPage, "/main/ostatus", { "status[profile]": `${bob.username}@b.example` });
    const landing = b.location(sent);
    expect(landing).toBe(`https://b.example/ostatus_subscribe?acct=${encodeURIComponent(s.uri)}`);
    const signIn = await b.follow(await b.send(landing));
    const confirm = await b.follow(
      await b.submit(signIn, "/auth/sign_in", { username: bob.username, password: bob.password }),
    );
    expect(confirm.text).toContain("favourite me from afar");
    const done = await b.submit(confirm, "/authorize_interaction", { action: "favourite" });
    expect(done.res.status).toBe(200);
    expect(done.text).toContain("You favourited the post.");
    expect(confirm.text).toContain(`>@${alice.username}@a.example </textarea>`);
    const replied = await b.submit(confirm, "/authorize_interaction", {
      action: "reply",
      status: `@${alice.username}@a.example so I did`,
    });
    expect(replied.res.status).toBe(200);
    expect(replied.text).toContain("Your reply is posted.");
    await fed.settle();
    const onA = await json(`/api/v1/statuses/${s.id}`, { instance: A, token: alice.token });
    expect(onA.favourites_count).toBe(1);
    const context = await json(`/api/v1/statuses/${s.id}/context`, { instance: A, token: alice.token });
    expect(context.descendants.map((d: { content: string }) => d.content).join()).toContain("so I did");
  });

  it("replies no wider than a followers-only post, and shows it to nobody else", async () => {
    const dave = await registerUser({ instance: B });
    const bob = await registerUser({ instance: B });
    const eve = await registerUser({ instance: B });
    await json(
      `/api/v1/accounts/${(await json("/api/v1/accounts/verify_credentials", { instance: B, token: dave.token })).id}/follow`,
      {
        instance: B,
        token: bob.token,
        method: "POST",
      },
    );
    const s = await postOn(B, dave, "for my followers", "private");
    const signedIn = async (u: TestUser) => {
      const b = browser({ instances: [A, B] });
      const signIn = await b.follow(
        await b.send(`https://b.example/authorize_interaction?uri=${encodeURIComponent(s.uri)}`),
      );
      return {
        b,
        page: await b.follow(await b.submit(signIn, "/auth/sign_in", { username: u.username, password: u.password })),
      };
    };
    // Someone who may not see it gets nothing, not even its words.
    const stranger = await signedIn(eve);
    expect(stranger.page.res.status).toBe(404);
    expect(stranger.page.text).not.toContain("for my followers");
    // A follower's reply from the page stays followers-only, whatever their default.
    const follower = await signedIn(bob);
    expect(follower.page.text).toContain("for my followers");
    const replied = await follower.b.submit(follower.page, "/authorize_interaction", {
      action: "reply",
      status: `@${dave.username} thanks`,
    });
    expect(replied.text).toContain("Your reply is posted.");
    const mine = await json(
      `/api/v1/accounts/${(await json("/api/v1/accounts/verify_credentials", { instance: B, token: bob.token })).id}/statuses`,
      {
        instance: B,
        token: bob.token,
      },
    );
    expect(mine[0]).toMatchObject({ in_reply_to_id: s.id, visibility: "private" });
  });

  it("shows nothing for what cannot be found, and asks for a sign-in first", async () => {
    const b = browser({ instances: [A, B] });
    const bob = await registerUser({ instance: B });
    const out = await b.send(
      "https://b.example/authorize_interaction?uri=https%3A%2F%2Fa.example%2Fusers%2Fnobody_at_all",
    );
    expect(out.res.status).toBe(303);
    const signIn = await b.follow(out);
    const missing = await b.follow(
      await b.submit(signIn, "/auth/sign_in", { username: bob.username, password: bob.password }),
    );
    expect(missing.res.status).toBe(404);
    expect((await b.send("https://b.example/authorize_interaction")).res.status).toBe(400);
    // Oneself: nothing to follow.
    const own = await b.send(`https://b.example/authorize_interaction?uri=${encodeURIComponent(actorUrl(B, bob))}`);
    expect(own.res.status).toBe(200);
    expect(own.text).toContain("This is your own account.");
    expect(own.text).not.toContain('value="follow"');
    // Older Mastodon's path, with an acct.
    const old = await b.send(`https://b.example/authorize_follow?acct=${bob.username}@b.example`);
    expect(old.text).toContain("This is your own account.");
  });
});
