/**
 * A user's domain block ends the follows of that domain's accounts, and tells their server (Mastodon's
 * AfterBlockDomainFromAccountService): a Reject of each Follow, follower or pending request, so it stops showing
 * them what the user sends to followers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { json } from "./helpers";
import { A } from "./instances";
import { drainDeliveriesByHand, expectAccepted, fill, q, setup, unroute } from "./inbound";
import { drainFederation } from "../src/federation/delivery/wake";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";

drainDeliveriesByHand();
afterEach(unroute);

describe("blocking a domain", () => {
  it("sends a Reject of every Follow of the user by that domain's accounts, and no other", async () => {
    const s = await setup();
    // Two followers on the peer, then (the account locked) a pending request from a third.
    const [one, two, three] = [s.actor, s.peer.actor(), s.peer.actor()];
    const followOf = (actor: string, n: string) =>
      fill(mastodonFollow, { ...s.vars, ACTOR: actor, N: `${s.vars.N}${n}` });
    const follows = [followOf(one, "a"), followOf(two, "b")];
    for (const [i, f] of follows.entries()) await expectAccepted(await s.peer.send([one, two][i]!, f));
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", s.user.id)).toHaveLength(2);
    await json("/api/v1/accounts/update_credentials", {
      instance: A,
      token: s.user.token,
      method: "PATCH",
      body: { locked: true },
    });
    const request = followOf(three, "c");
    await expectAccepted(await s.peer.send(three, request));
    expect(await q("SELECT id FROM follow_requests WHERE target_account_id = ?", s.user.id)).toHaveLength(1);
    await drainFederation(A.bindings);
    s.peer.delivered.length = 0;
    const blockPeer = () =>
      json("/api/v1/domain_blocks", {
        instance: A,
        token: s.user.token,
        method: "POST",
        body: { domain: "peer.example" },
      });

    await blockPeer();
    expect(await q("SELECT id FROM follows WHERE target_account_id = ?", s.user.id)).toEqual([]);
    expect(await q("SELECT id FROM follow_requests WHERE target_account_id = ?", s.user.id)).toEqual([]);
    await drainFederation(A.bindings);
    const rejects = s.peer.delivered.map((d) => d.body as Record<string, any>).filter((b) => b.type === "Reject");
    expect(rejects.map((r) => [r.object.id ?? r.object, r.object.actor]).sort()).toEqual(
      [...follows, request].map((f) => [f.id, f.actor]).sort(),
    );
    for (const r of rejects) expect(r.actor).toBe(s.target);
    // Blocking it again sends nothing more.
    s.peer.delivered.length = 0;
    await blockPeer();
    await drainFederation(A.bindings);
    expect(s.peer.delivered).toEqual([]);
  });
});
