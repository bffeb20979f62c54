/**
 * A user's domain block ends the follows of that domain's accounts, and tells their server (Mastodon's
 * AfterBlockDomainFromAccountService): a Reject of each Follow, follower or pending request, so it stops showing
 * them what the user sends to followers.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { RelationshipSchema } from "../src/schemas/account";
import { RelationshipSeveranceEventSchema } from "../src/schemas/social";
import { json, registerUser } from "./helpers";
import { A } from "./instances";
import { drainDeliveriesByHand, expectAccepted, fill, followPeer, q, remoteId, setup, unroute } from "./inbound";
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

  it("ends the user's own follows and requests of that domain's accounts, with an Undo of each Follow", async () => {
    const s = await setup();
    const api = (path: string, init: Record<string, unknown> = {}) =>
      json(path, { instance: A, token: s.user.token, ...init });
    // A follow of the peer's actor (accepted), and a pending request to a second actor there.
    const them = await followPeer(s);
    const second = s.peer.actor();
    const other = await registerUser({ instance: A });
    await expectAccepted(
      await s.peer.send(
        second,
        fill(mastodonFollow, {
          ...s.vars,
          ACTOR: second,
          N: `${s.vars.N}s`,
          TARGET: `${A.origin}/users/${other.username}`,
        }),
      ),
    );
    const secondId = (await remoteId(second))!;
    await api(`/api/v1/accounts/${secondId}/follow`, { method: "POST" });
    // A local follow, which stays; the peer's actor in a list and subscribed to.
    const local = await registerUser({ instance: A });
    await api(`/api/v1/accounts/${local.id}/follow`, { method: "POST" });
    await api(`/api/v1/accounts/${them}/follow`, { method: "POST", body: { notify: true } });
    const list = await api("/api/v1/lists", { method: "POST", body: { title: "peers" } });
    await api(`/api/v1/lists/${list.id}/accounts`, { method: "POST", body: { account_ids: [them] } });
    const [follow] = await q<{ uri: string }>(
      "SELECT uri FROM follows WHERE account_id = ? AND target_account_id = ?",
      s.user.id,
      them,
    );
    const [request] = await q<{ uri: string }>(
      "SELECT uri FROM follow_requests WHERE account_id = ? AND target_account_id = ?",
      s.user.id,
      secondId,
    );
    expect(follow?.uri).toBeTruthy();
    expect(request?.uri).toBeTruthy();
    const rels = async () =>
      z
        .array(RelationshipSchema)
        .parse(await api(`/api/v1/accounts/relationships?id[]=${them}&id[]=${secondId}&id[]=${local.id}`));
    expect((await rels()).map((r) => [r.following, r.requested])).toEqual([
      [true, false],
      [false, true],
      [true, false],
    ]);
    await drainFederation(A.bindings);
    s.peer.delivered.length = 0;

    await api("/api/v1/domain_blocks", { method: "POST", body: { domain: "peer.example" } });
    expect((await rels()).map((r) => [r.following, r.requested, r.notifying])).toEqual([
      [false, false, false],
      [false, false, false],
      [true, false, false],
    ]);
    expect(await api(`/api/v1/lists/${list.id}/accounts`)).toEqual([]);
    const me = await api("/api/v1/accounts/verify_credentials");
    expect(me.following_count).toBe(1);
    // The notice of what was lost (Mastodon 4.3): the one follow (a request is not a follow).
    const events = z.array(RelationshipSeveranceEventSchema).parse(await api("/api/v1/severed_relationships"));
    expect(events.map((e) => [e.type, e.target_name, e.following_count, e.followers_count])).toEqual([
      ["user_domain_block", "peer.example", 1, 0],
    ]);

    await drainFederation(A.bindings);
    const undos = s.peer.delivered.map((d) => d.body as Record<string, any>).filter((b) => b.type === "Undo");
    expect(undos.map((u) => [u.object.id ?? u.object, u.object.object]).sort()).toEqual(
      [
        [follow!.uri, s.actor],
        [request!.uri, second],
      ].sort(),
    );
    for (const u of undos) expect(u.actor).toBe(s.target);
    expect(s.peer.delivered.filter((d) => (d.body as { type?: string }).type !== "Undo")).toEqual([]);
    // Blocking it again sends nothing more.
    s.peer.delivered.length = 0;
    await api("/api/v1/domain_blocks", { method: "POST", body: { domain: "peer.example" } });
    await drainFederation(A.bindings);
    expect(s.peer.delivered).toEqual([]);
  });
});
