/**
 * The graph's rules written once (services/graph-rows.ts) hold for both ways in: a block severs every tie
 * whether a local account blocks (the client API) or a remote actor does (its `Block` in the inbox), and a
 * follow row reads the same whether it was made by a local follow, an accepted request or a remote Follow.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RelationshipSchema } from "../src/schemas/account";
import { json, registerUser, valid, type TestUser } from "./helpers";
import { A } from "./instances";
import { expectAccepted, fill, followPeer, q, remoteId, setup, unroute } from "./inbound";
import mastodonBlock from "./fixtures/federation/mastodon-block.json";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";

afterEach(unroute);

const call = (user: TestUser, path: string, body: Record<string, unknown> = {}) =>
  json(path, { instance: A, token: user.token, method: "POST", body });

/** The rows tying `a` and `b`, table by table, both directions counted. */
async function ties(a: string, b: string) {
  const [row] = await q<Record<string, number>>(
    `SELECT
      (SELECT count(*) FROM follows WHERE (account_id = ?1 AND target_account_id = ?2) OR (account_id = ?2 AND target_account_id = ?1)) AS follows,
      (SELECT count(*) FROM follow_requests WHERE (account_id = ?1 AND target_account_id = ?2) OR (account_id = ?2 AND target_account_id = ?1)) AS requests,
      (SELECT count(*) FROM subscriptions WHERE (account_id = ?1 AND target_account_id = ?2) OR (account_id = ?2 AND target_account_id = ?1)) AS subscriptions,
      (SELECT count(*) FROM endorsements WHERE (account_id = ?1 AND target_account_id = ?2) OR (account_id = ?2 AND target_account_id = ?1)) AS endorsements,
      (SELECT count(*) FROM list_accounts la JOIN lists l ON l.id = la.list_id
        WHERE (l.account_id = ?1 AND la.account_id = ?2) OR (l.account_id = ?2 AND la.account_id = ?1)) AS lists`,
    a,
    b,
  );
  return row!;
}
const NONE = { follows: 0, requests: 0, subscriptions: 0, endorsements: 0, lists: 0 };

/** `user` subscribes to, endorses and lists `target` (which it follows). */
async function tie(user: TestUser, target: string) {
  await call(user, `/api/v1/accounts/${target}/follow`, { notify: true });
  await call(user, `/api/v1/accounts/${target}/pin`);
  const list = await call(user, "/api/v1/lists", { title: "close" });
  await call(user, `/api/v1/lists/${list.id}/accounts`, { account_ids: [target] });
}

describe("a block severs every tie", () => {
  it("a local block: follows, requests, subscriptions, endorsements and lists both ways, and the relationship says so", async () => {
    const [a, b, c] = [
      await registerUser({ instance: A }),
      await registerUser({ instance: A }),
      await registerUser({ instance: A }),
    ];
    await call(a, `/api/v1/accounts/${b.id}/follow`);
    await call(b, `/api/v1/accounts/${a.id}/follow`);
    await tie(a, b.id);
    await tie(b, a.id);
    // A third account's ties are not the pair's and stay.
    await call(c, `/api/v1/accounts/${a.id}/follow`);
    await tie(c, a.id);
    expect(await ties(a.id, b.id)).toEqual({ follows: 2, requests: 0, subscriptions: 2, endorsements: 2, lists: 2 });

    const r = valid(RelationshipSchema, await call(a, `/api/v1/accounts/${b.id}/block`));
    expect(r).toMatchObject({
      blocking: true,
      following: false,
      followed_by: false,
      endorsed: false,
      notifying: false,
    });
    expect(await ties(a.id, b.id)).toEqual(NONE);
    expect(await ties(c.id, a.id)).toEqual({ follows: 1, requests: 0, subscriptions: 1, endorsements: 1, lists: 1 });
  });

  it("a local block ends pending requests both ways", async () => {
    const [a, b] = [await registerUser({ instance: A }), await registerUser({ instance: A })];
    for (const u of [a, b])
      await json("/api/v1/accounts/update_credentials", {
        instance: A,
        token: u.token,
        method: "PATCH",
        body: { locked: true },
      });
    await call(a, `/api/v1/accounts/${b.id}/follow`);
    await call(b, `/api/v1/accounts/${a.id}/follow`);
    expect((await ties(a.id, b.id)).requests).toBe(2);
    await call(b, `/api/v1/accounts/${a.id}/block`);
    expect(await ties(a.id, b.id)).toEqual(NONE);
  });

  it("a remote actor's Block ends the same ties as a local block, its follow rows made by the same insert", async () => {
    const s = await setup();
    // The local user follows the peer (a request the peer accepts), and the peer follows the user (a Follow).
    const peer = await followPeer(s);
    await expectAccepted(await s.peer.send(s.actor, fill(mastodonFollow, s.vars)));
    await tie(s.user, peer);
    const [accepted, received] = await Promise.all([
      q<{ uri: string; notify: number; show_reblogs: number }>(
        "SELECT uri, notify, show_reblogs FROM follows WHERE account_id = ? AND target_account_id = ?",
        s.user.id,
        peer,
      ),
      q<{ uri: string; notify: number; show_reblogs: number }>(
        "SELECT uri, notify, show_reblogs FROM follows WHERE account_id = ? AND target_account_id = ?",
        peer,
        s.user.id,
      ),
    ]);
    // The accepted request's follow keeps the request's id; the received one is the Follow's own.
    expect(accepted[0]).toMatchObject({ notify: 0, show_reblogs: 1 });
    expect(accepted[0]!.uri).toMatch(new RegExp(`^${A.origin}/users/${s.user.username}#follows/`));
    expect(received[0]).toEqual({ uri: fill(mastodonFollow, s.vars).id, notify: 0, show_reblogs: 1 });
    expect(await ties(s.user.id, peer)).toEqual({
      follows: 2,
      requests: 0,
      subscriptions: 1,
      endorsements: 1,
      lists: 1,
    });

    await expectAccepted(await s.peer.send(s.actor, fill(mastodonBlock, s.vars)));
    expect(await ties(s.user.id, peer)).toEqual(NONE);
    const r = valid(
      RelationshipSchema,
      (await json(`/api/v1/accounts/relationships?id[]=${peer}`, { instance: A, token: s.user.token }))[0],
    );
    expect(r).toMatchObject({ blocked_by: true, following: false, followed_by: false, endorsed: false });
    expect(await remoteId(s.actor)).toBe(peer);
  });
});
