/**
 * Quote posts between local users (issue 46), through the client API: Mastodon 4.5's `quoted_status_id` (and
 * Pleroma's `quote_id`), the Status entity's `quote` / `quote_approval` / `quotes_count` and Pleroma's quote
 * fields, quote policies (the account's default, per post, `PUT …/interaction_policy`), the quotes list, revoking,
 * notifications, and privacy: a quote never shows a post to someone who may not see it.
 */
import { describe, expect, it } from "vitest";
import { AccountSchema } from "../src/schemas/account";
import { StatusSchema, type Status } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { call, json, post, registerUser, valid, type TestUser } from "./helpers";

const status = async (user: TestUser | null, id: string) =>
  valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { token: user?.token }));
const quote = async (user: TestUser, body: Record<string, unknown>, code = 200): Promise<Status> =>
  code === 200 ? valid(StatusSchema, await post(user, body)) : await post(user, body, code);
const notifications = async (user: TestUser, query = "") =>
  ((await json(`/api/v1/notifications${query}`, { token: user.token })) as unknown[]).map((n) =>
    valid(NotificationSchema, n),
  );
const follow = (user: TestUser, target: TestUser) =>
  json(`/api/v1/accounts/${target.id}/follow`, { method: "POST", token: user.token });

describe("quoting a local post", () => {
  it("quotes with quoted_status_id: accepted at once, shown with the quoted post, counted, notified, listed", async () => {
    const alice = await registerUser();
    const bob = await registerUser();
    const original = valid(StatusSchema, await post(alice, { status: "quote me", visibility: "public" }));
    expect(original.quote_approval).toEqual({ automatic: ["public"], manual: [], current_user: "automatic" });
    expect((await status(bob, original.id)).quote_approval.current_user).toBe("automatic");
    expect((await status(null, original.id)).quote_approval.current_user).toBe("unknown");

    const q = await quote(bob, { status: "look at this", quoted_status_id: original.id });
    expect(q.quote?.state).toBe("accepted");
    expect(q.quote?.quoted_status?.id).toBe(original.id);
    expect(q.quote?.quoted_status?.quote).toBeNull();
    expect(q.pleroma).toMatchObject({ quote_id: original.id, quote_url: original.uri, quote_visible: true });
    expect(q.pleroma.quote?.id).toBe(original.id);

    // Read back: the same, and the original counts it.
    expect((await status(alice, q.id)).quote?.quoted_status?.id).toBe(original.id);
    expect((await status(alice, original.id)).quotes_count).toBe(1);
    const [n] = await notifications(alice);
    expect([n!.type, n!.account.id, n!.status?.id]).toEqual(["quote", bob.id, q.id]);

    // Pleroma's `quote_id` is the same parameter; a quote of a quote shows the inner one by id only.
    const q2 = await quote(alice, { status: "and this", quote_id: q.id });
    expect(q2.quote?.quoted_status?.id).toBe(q.id);
    expect(q2.quote?.quoted_status?.quote).toEqual({ state: "accepted", quoted_status_id: original.id });

    // The list: Mastodon's and Pleroma's path, newest first, paged with a Link header.
    for (const path of [`/api/v1/statuses/${original.id}/quotes`, `/api/v1/pleroma/statuses/${original.id}/quotes`]) {
      const res = await call(path, { token: alice.token });
      expect(res.status).toBe(200);
      const list = ((await res.json()) as unknown[]).map((s) => valid(StatusSchema, s));
      expect(list.map((s) => s.id)).toEqual([q.id]);
    }
    const quoteOfQuote = await quote(bob, { status: "again", quoted_status_id: original.id });
    const page = await call(`/api/v1/statuses/${original.id}/quotes?limit=1`, { token: alice.token });
    expect(((await page.json()) as Status[]).map((s) => s.id)).toEqual([quoteOfQuote.id]);
    expect(page.headers.get("link")).toContain("max_id=");

    // Deleting the quote takes its count away; deleting the quoted post leaves the quote, shown as deleted.
    await json(`/api/v1/statuses/${quoteOfQuote.id}`, { method: "DELETE", token: bob.token });
    expect((await status(alice, original.id)).quotes_count).toBe(1);
    await json(`/api/v1/statuses/${original.id}`, { method: "DELETE", token: alice.token });
    const after = await status(bob, q.id);
    expect(after.quote).toEqual({ state: "deleted", quoted_status: null });
    expect(after.pleroma.quote_visible).toBe(false);
  });

  it("follows the quote policy: the account's default, a post's own, and changes to it", async () => {
    const alice = await registerUser();
    const bob = await registerUser();
    // The default in source settings (an unknown value is ignored).
    const me = valid(
      AccountSchema,
      await json("/api/v1/accounts/update_credentials", {
        method: "PATCH",
        token: alice.token,
        body: { source: { quote_policy: "nobody" } },
      }),
    );
    expect(me.source?.quote_policy).toBe("nobody");
    await json("/api/v1/accounts/update_credentials", {
      method: "PATCH",
      token: alice.token,
      body: { source: { quote_policy: "everyone-please" } },
    });
    const creds = valid(AccountSchema, await json("/api/v1/accounts/verify_credentials", { token: alice.token }));
    expect(creds.source?.quote_policy).toBe("nobody");

    const closed = valid(StatusSchema, await post(alice, { status: "mine alone", visibility: "public" }));
    expect(closed.quote_approval).toEqual({ automatic: [], manual: [], current_user: "automatic" });
    expect((await status(bob, closed.id)).quote_approval.current_user).toBe("denied");
    expect(await quote(bob, { status: "x", quoted_status_id: closed.id }, 422)).toHaveProperty("error");
    // Its author may still quote it.
    expect((await quote(alice, { status: "self", quoted_status_id: closed.id })).quote?.state).toBe("accepted");

    // Opened for this post: now Bob may.
    const opened = valid(
      StatusSchema,
      await json(`/api/v1/statuses/${closed.id}/interaction_policy`, {
        method: "PUT",
        token: alice.token,
        body: { quote_approval_policy: "public" },
      }),
    );
    expect(opened.quote_approval.automatic).toEqual(["public"]);
    expect((await quote(bob, { status: "now", quoted_status_id: closed.id })).quote?.state).toBe("accepted");
    // Not someone else's post.
    await json(`/api/v1/statuses/${closed.id}/interaction_policy`, {
      method: "PUT",
      token: bob.token,
      body: { quote_approval_policy: "nobody" },
      status: 404,
    });

    // Followers only, per post: Bob once he follows.
    const followersOnly = valid(
      StatusSchema,
      await post(alice, { status: "friends", visibility: "public", quote_approval_policy: "followers" }),
    );
    expect(followersOnly.quote_approval.automatic).toEqual(["followers"]);
    expect(await quote(bob, { status: "x", quoted_status_id: followersOnly.id }, 422)).toHaveProperty("error");
    await follow(bob, alice);
    expect((await status(bob, followersOnly.id)).quote_approval.current_user).toBe("automatic");
    expect((await quote(bob, { status: "y", quoted_status_id: followersOnly.id })).quote?.state).toBe("accepted");
  });

  it("revokes a quote of one's post: the quote shows revoked, the count drops, only the author may", async () => {
    const alice = await registerUser();
    const bob = await registerUser();
    const original = valid(StatusSchema, await post(alice, { status: "revocable", visibility: "public" }));
    const q = await quote(bob, { status: "quoting", quoted_status_id: original.id });
    const path = `/api/v1/statuses/${original.id}/quotes/${q.id}/revoke`;
    await json(path, { method: "POST", token: bob.token, status: 404 });
    const revoked = valid(StatusSchema, await json(path, { method: "POST", token: alice.token }));
    expect(revoked.id).toBe(q.id);
    expect(revoked.quote).toEqual({ state: "revoked", quoted_status: null });
    expect((await status(bob, q.id)).quote?.state).toBe("revoked");
    expect((await status(alice, original.id)).quotes_count).toBe(0);
    expect(await json(`/api/v1/statuses/${original.id}/quotes`, { token: alice.token })).toEqual([]);
    expect((await notifications(alice)).filter((n) => n.type === "quote")).toEqual([]);
    // Again: nothing more to do; an unknown quote: 404.
    await json(path, { method: "POST", token: alice.token });
    await json(`/api/v1/statuses/${original.id}/quotes/${original.id}/revoke`, {
      method: "POST",
      token: alice.token,
      status: 404,
    });
  });
});

describe("privacy", () => {
  it("never quotes or shows a post to someone who may not see it", async () => {
    const alice = await registerUser();
    const bob = await registerUser();
    const carol = await registerUser();
    await follow(bob, alice);
    const priv = valid(StatusSchema, await post(alice, { status: "followers only", visibility: "private" }));
    const direct = valid(StatusSchema, await post(alice, { status: `@${bob.username} dm`, visibility: "direct" }));
    // Someone who cannot see it: 404; a follower who can: still not (only its author quotes a private post).
    expect(await quote(carol, { status: "x", quoted_status_id: priv.id }, 404)).toHaveProperty("error");
    expect(await quote(bob, { status: "x", quoted_status_id: priv.id }, 422)).toHaveProperty("error");
    expect(await quote(bob, { status: "x", quoted_status_id: direct.id }, 422)).toHaveProperty("error");
    expect(await quote(alice, { status: "x", quoted_status_id: direct.id }, 422)).toHaveProperty("error");
    expect(await quote(bob, { status: "x", quoted_status_id: "nonexistent" }, 404)).toHaveProperty("error");
    // Alice quoting her own private post: the quote is followers-only too, whatever was asked.
    const own = await quote(alice, { status: "me again", quoted_status_id: priv.id, visibility: "public" });
    expect([own.visibility, own.quote?.state]).toEqual(["private", "accepted"]);
    await json(`/api/v1/statuses/${own.id}`, { token: carol.token, status: 404 });
    expect((await status(bob, own.id)).quote?.quoted_status?.id).toBe(priv.id);

    // A public quote of a public post, read by someone its author blocks: the quoted post is not shown.
    const pub = valid(StatusSchema, await post(alice, { status: "public", visibility: "public" }));
    const q = await quote(bob, { status: "see", quoted_status_id: pub.id });
    await json(`/api/v1/accounts/${carol.id}/block`, { method: "POST", token: alice.token });
    const seen = await status(carol, q.id);
    expect(seen.quote).toEqual({ state: "unauthorized", quoted_status: null });
    expect(seen.pleroma).toMatchObject({ quote: null, quote_id: null, quote_visible: false });
    // And its quotes list is closed to her (the post itself is).
    await json(`/api/v1/statuses/${pub.id}/quotes`, { token: carol.token, status: 404 });
    // A private post's quotes are listed to its author only.
    await json(`/api/v1/statuses/${priv.id}/quotes`, { token: bob.token, status: 404 });
    expect(
      ((await json(`/api/v1/statuses/${priv.id}/quotes`, { token: alice.token })) as Status[]).map((s) => s.id),
    ).toEqual([own.id]);
  });

  it("notifies quoters of an edit (quoted_update), and lists the new types in nodeinfo-compatible ways", async () => {
    const alice = await registerUser();
    const bob = await registerUser();
    const original = valid(StatusSchema, await post(alice, { status: "v1", visibility: "public" }));
    await quote(bob, { status: "q", quoted_status_id: original.id });
    await json(`/api/v1/statuses/${original.id}`, { method: "PUT", token: alice.token, body: { status: "v2" } });
    const types = (await notifications(bob)).map((n) => [n.type, n.status?.id]);
    expect(types).toEqual([["quoted_update", original.id]]);
    // Asked for other types only: none of these.
    expect(await notifications(bob, "?types[]=mention")).toEqual([]);
    const nodeinfo = await json("/nodeinfo/2.1.json");
    expect(nodeinfo.metadata.features).toContain("quote_posting");
  });
});
