/**
 * GoToSocial's interaction controls, the asking side (issue 49), against the Fedify test peer speaking
 * GoToSocial's flow (docs/federation/interaction_controls.md there): a Starling user's reply, like or boost of a
 * post whose `interactionPolicy` asks for approval sends the polite request to its author alone and waits; the
 * author's Accept (with an authorization the peer serves) approves it, a Reject rejects it; forged answers change
 * nothing; a boost or a like the policy allows nobody answers 422; an open post gets the plain activities.
 */
import { afterEach, describe, expect, it } from "vitest";
import { call, json, valid } from "./helpers";
import { A, instanceFetch } from "./instances";
import { drainDeliveriesByHand, expectAccepted, fill, q, setup, unroute, type Setup } from "./inbound";
import mastodonFollow from "./fixtures/federation/mastodon-follow.json";
import { StatusSchema, type Status } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { drainFederation } from "../src/federation/delivery/wake";

drainDeliveriesByHand();
afterEach(unroute);

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
const CONTEXT = ["https://www.w3.org/ns/activitystreams", "https://gotosocial.org/ns"];

/** A GoToSocial post by the peer's actor, with `policy` as its interactionPolicy, stored on A by a search. */
async function remotePost(s: Setup, name: string, policy: Record<string, unknown>): Promise<Status> {
  const uri = `${s.actor}/statuses/${name}${s.vars.N}`;
  s.peer.objects.set(uri, {
    "@context": CONTEXT,
    id: uri,
    type: "Note",
    attributedTo: s.actor,
    to: [PUBLIC],
    cc: [`${s.actor}/followers`],
    content: `<p>${name}</p>`,
    published: "2025-10-01T12:00:00Z",
    interactionPolicy: policy,
  });
  const found = await json(`/api/v2/search?q=${encodeURIComponent(uri)}&resolve=true&type=statuses`, {
    instance: A,
    token: s.user.token,
  });
  return valid(StatusSchema, found.statuses[0]);
}

/** GoToSocial's "replies and likes need my approval, only I may boost" (its author in `automaticApproval`). */
const guarded = (s: Setup) => ({
  canReply: { automaticApproval: [s.actor], manualApproval: [PUBLIC] },
  canLike: { automaticApproval: [s.actor], manualApproval: [PUBLIC] },
  canAnnounce: { automaticApproval: [s.actor] },
});
const open = {
  canReply: { automaticApproval: [PUBLIC] },
  canLike: { automaticApproval: [PUBLIC] },
  canAnnounce: { automaticApproval: [PUBLIC] },
};

const act = (s: Setup, path: string, body?: Record<string, unknown>) =>
  call(path, { instance: A, token: s.user.token, method: "POST", body: body ?? {} });
/** A public reply by the user, as the API answers it. */
async function replyTo(s: Setup, id: string, text: string): Promise<Status> {
  const res = await act(s, "/api/v1/statuses", { status: text, in_reply_to_id: id, visibility: "public" });
  expect(res.status).toBe(200);
  return valid(StatusSchema, await res.json());
}
const statusOf = async (s: Setup, id: string) =>
  valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token }));
const fetchDoc = (url: string) =>
  instanceFetch(A, new Request(url, { headers: { Accept: "application/activity+json" } }));
/** What A delivered to the peer so far (its outbox drained first), of one type. */
async function deliveredOf(s: Setup, type: string) {
  await drainFederation(A.bindings);
  return s.peer.delivered.map((d) => d.body as Record<string, any>).filter((b) => b.type === type);
}
/** The user's notifications of the interaction answers (opt-in on v1, like Mastodon 4.3's own types). */
async function answers(s: Setup) {
  const types = "types[]=interaction_approved&types[]=interaction_rejected";
  const list = (await json(`/api/v1/notifications?${types}`, { instance: A, token: s.user.token })) as unknown[];
  return list.map((n) => valid(NotificationSchema, n)).map((n) => [n.type, n.status?.id]);
}

/** The peer's answer to a request of A: an Accept with `result`, or a Reject. */
function answer(s: Setup, request: Record<string, any>, result: string | null, actor = s.actor) {
  return {
    "@context": CONTEXT,
    id: `${actor}/${result ? "accepts" : "rejects"}/${s.vars.N}${Math.random().toString(36).slice(2)}`,
    type: result ? "Accept" : "Reject",
    actor,
    to: request.actor,
    object: {
      type: request.type,
      id: request.id,
      actor: request.actor,
      object: request.object,
      instrument: typeof request.instrument === "string" ? request.instrument : request.instrument.id,
    },
    ...(result ? { result } : {}),
  };
}

/** An authorization the peer serves (GoToSocial's shape), for `interacting` with `target`. */
function authorization(
  s: Setup,
  type: string,
  interacting: string,
  target: string,
  id = `${s.actor}/authorizations/${s.vars.N}${type}`,
) {
  const doc = {
    "@context": CONTEXT,
    id,
    type,
    attributedTo: s.actor,
    interactingObject: interacting,
    interactionTarget: target,
  };
  s.peer.objects.set(id, doc);
  return id;
}

describe("asking a GoToSocial author to approve a reply, a like, a boost", () => {
  it("stores the policy, sends a ReplyRequest alone, stays pending, refuses forged Accepts, approves with the authorization", async () => {
    const s = await setup();
    const post = await remotePost(s, "guarded", guarded(s));
    const [stored] = await q<{ interaction_policy: string }>(
      "SELECT interaction_policy FROM statuses WHERE id = ?",
      post.id,
    );
    expect(JSON.parse(stored!.interaction_policy)).toEqual({
      reply: { auto: [s.actor], manual: ["public"] },
      like: { auto: [s.actor], manual: ["public"] },
      announce: { auto: [s.actor], manual: [] },
    });

    const reply = await replyTo(s, post.id, "may I?");
    expect(reply.pleroma.approval_state).toBe("pending");
    expect(await deliveredOf(s, "Create")).toEqual([]);
    const [request] = await deliveredOf(s, "ReplyRequest");
    expect(request).toMatchObject({
      actor: `${A.origin}/users/${s.user.username}`,
      object: post.uri,
      to: s.actor,
      instrument: { type: "Note", id: reply.uri, inReplyTo: post.uri },
    });
    expect(JSON.stringify(request!["@context"])).toContain("https://gotosocial.org/ns");
    // Sent to the author's inbox alone.
    expect(
      new Set(s.peer.delivered.filter((d) => (d.body as any).type === "ReplyRequest").map((d) => d.url)).size,
    ).toBe(1);

    // Forged: an Accept by someone else, an authorization on another server, one for another reply.
    const mallory = s.peer.actor();
    const good = authorization(s, "ReplyAuthorization", reply.uri, post.uri);
    await expectAccepted(await s.peer.send(mallory, answer(s, request!, good, mallory)));
    const elsewhere = `https://elsewhere.example/authorizations/${s.vars.N}`;
    await expectAccepted(await s.peer.send(s.actor, answer(s, request!, elsewhere)));
    const other = authorization(
      s,
      "ReplyAuthorization",
      `${reply.uri}-other`,
      post.uri,
      `${s.actor}/authorizations/x${s.vars.N}`,
    );
    await expectAccepted(await s.peer.send(s.actor, answer(s, request!, other)));
    const wrongType = authorization(
      s,
      "LikeAuthorization",
      reply.uri,
      post.uri,
      `${s.actor}/authorizations/l${s.vars.N}`,
    );
    await expectAccepted(await s.peer.send(s.actor, answer(s, request!, wrongType)));
    expect((await statusOf(s, reply.id)).pleroma.approval_state).toBe("pending");
    expect(await deliveredOf(s, "Create")).toEqual([]);
    // Edited while pending: the edit stays here too (its audience never got the reply); the approved reply is sent
    // as it then is.
    const edit = await call(`/api/v1/statuses/${reply.id}`, {
      instance: A,
      token: s.user.token,
      method: "PUT",
      body: { status: "may I, please?" },
    });
    expect(edit.status).toBe(200);
    expect(await deliveredOf(s, "Update")).toEqual([]);

    // The author accepts with an authorization the peer serves: approved, sent to its audience with it.
    const accept = answer(s, request!, good);
    await expectAccepted(await s.peer.send(s.actor, accept));
    expect((await statusOf(s, reply.id)).pleroma.approval_state).toBe("approved");
    const [create] = await deliveredOf(s, "Create");
    expect(create?.object).toMatchObject({ id: reply.uri, replyAuthorization: good, approvedBy: accept.id });
    expect(create?.object.content).toContain("may I, please?");
    // Served at its id with the same.
    const note = (await (await fetchDoc(reply.uri)).json()) as Record<string, any>;
    expect(note).toMatchObject({ replyAuthorization: good, approvedBy: accept.id });
    expect(await answers(s)).toEqual([["interaction_approved", reply.id]]);
    // Not among the v1 default types (clients that predate them).
    const v1 = (await json("/api/v1/notifications", { instance: A, token: s.user.token })) as { type: string }[];
    expect(v1.map((n) => n.type)).not.toContain("interaction_approved");
    // A second answer changes nothing.
    await expectAccepted(await s.peer.send(s.actor, answer(s, request!, null)));
    expect((await statusOf(s, reply.id)).pleroma.approval_state).toBe("approved");
  });

  it("asks with a LikeRequest; a Reject undoes the like and tells the user; nobody may boost: 422", async () => {
    const s = await setup();
    const post = await remotePost(s, "liked", guarded(s));
    const fav = await act(s, `/api/v1/statuses/${post.id}/favourite`);
    expect(fav.status).toBe(200);
    expect(await deliveredOf(s, "Like")).toEqual([]);
    const [request] = await deliveredOf(s, "LikeRequest");
    expect(request).toMatchObject({ object: post.uri, to: s.actor, instrument: { type: "Like", object: post.uri } });
    expect((await statusOf(s, post.id)).favourited).toBe(true);

    await expectAccepted(await s.peer.send(s.actor, answer(s, request!, null)));
    expect((await statusOf(s, post.id)).favourited).toBe(false);
    expect(await answers(s)).toEqual([["interaction_rejected", post.id]]);

    // The policy lets only its author boost.
    const boost = await act(s, `/api/v1/statuses/${post.id}/reblog`);
    expect(boost.status).toBe(422);
    expect(await boost.json()).toMatchObject({ error: expect.stringMatching(/boost/) });
    expect((await statusOf(s, post.id)).reblogged).toBe(false);
    expect(await deliveredOf(s, "Announce")).toEqual([]);
    expect(await deliveredOf(s, "AnnounceRequest")).toEqual([]);
  });

  it("asks with an AnnounceRequest where boosts need approval; a Reject takes the boost back; a reply nobody may make is sent unapproved", async () => {
    const s = await setup();
    const post = await remotePost(s, "boosted", {
      canReply: { automaticApproval: [s.actor] },
      canAnnounce: { manualApproval: [PUBLIC] },
    });
    const res = await act(s, `/api/v1/statuses/${post.id}/reblog`);
    expect(res.status).toBe(200);
    const boost = valid(StatusSchema, await res.json());
    expect(boost.pleroma.approval_state).toBe("pending");
    expect(await deliveredOf(s, "Announce")).toEqual([]);
    const [request] = await deliveredOf(s, "AnnounceRequest");
    expect(request).toMatchObject({
      object: post.uri,
      instrument: { type: "Announce", id: boost.uri, object: post.uri },
    });
    await expectAccepted(await s.peer.send(s.actor, answer(s, request!, null)));
    expect((await statusOf(s, post.id)).reblogged).toBe(false);
    expect((await call(`/api/v1/statuses/${boost.id}`, { instance: A, token: s.user.token })).status).toBe(404);
    expect(await answers(s)).toEqual([["interaction_rejected", post.id]]);

    // Boosted again, and approved this time: the Announce goes out with its authorization.
    const again = valid(StatusSchema, await (await act(s, `/api/v1/statuses/${post.id}/reblog`)).json());
    const asked = (await deliveredOf(s, "AnnounceRequest")).at(-1)!;
    expect(asked.instrument.id).toBe(again.uri);
    const granted = authorization(s, "AnnounceAuthorization", again.uri, post.uri);
    const accept = answer(s, asked, granted);
    await expectAccepted(await s.peer.send(s.actor, accept));
    expect((await statusOf(s, again.id)).pleroma.approval_state).toBe("approved");
    const [announce] = await deliveredOf(s, "Announce");
    expect(announce).toMatchObject({
      id: again.uri,
      object: post.uri,
      announceAuthorization: granted,
      approvedBy: accept.id,
    });

    // Nobody but the author may reply: posted, sent as Mastodon sends it (no authorization), marked denied.
    const reply = await replyTo(s, post.id, "anyway");
    expect(reply.pleroma.approval_state).toBe("denied");
    const [create] = await deliveredOf(s, "Create");
    expect(create?.object).toMatchObject({ id: reply.uri });
    expect(create?.object.replyAuthorization).toBeUndefined();
    expect(await deliveredOf(s, "ReplyRequest")).toEqual([]);
  });

  it("never shows a reply in a request to an author its audience leaves out: a private one not mentioning them, a local-only one", async () => {
    const s = await setup();
    const post = await remotePost(s, "restricted", guarded(s));
    const post_ = (body: Record<string, unknown>) =>
      act(s, "/api/v1/statuses", { in_reply_to_id: post.id, ...body }).then(async (r) => {
        expect(r.status).toBe(200);
        return valid(StatusSchema, await r.json());
      });
    // Followers-only, the mention removed: not sent to the author at all, marked denied (as Mastodon sends it).
    const secret = await post_({ status: "for my followers only", visibility: "private" });
    expect(secret.pleroma.approval_state).toBe("denied");
    // Local-only: never leaves the instance, asks nobody.
    const here = await post_({ status: "just here", visibility: "local" });
    expect(here.pleroma.approval_state).toBeNull();
    expect(await deliveredOf(s, "ReplyRequest")).toEqual([]);
    expect(JSON.stringify(s.peer.delivered)).not.toMatch(/for my followers only|just here/);
    // Followers-only and mentioning the author: they are in its audience, so it asks.
    const name = new URL(s.actor).pathname.split("/").pop();
    const asked = await post_({ status: `@${name}@${s.peer.host} may I?`, visibility: "private" });
    expect(asked.pleroma.approval_state).toBe("pending");
    expect((await deliveredOf(s, "ReplyRequest")).map((r) => r.instrument.id)).toEqual([asked.uri]);
  });

  it("asks for a private reply not mentioning an author who follows the replier: the followers collection reaches them", async () => {
    const s = await setup();
    const post = await remotePost(s, "followed", guarded(s));
    // The peer's actor follows the user (accepted at once: the account is not locked).
    await expectAccepted(await s.peer.send(s.actor, fill(mastodonFollow, { ...s.vars, N: `${s.vars.N}f` })));
    expect(
      await q("SELECT 1 AS f FROM follows WHERE account_id = ? AND target_account_id = ?", post.account.id, s.user.id),
    ).toEqual([{ f: 1 }]);
    const res = await act(s, "/api/v1/statuses", {
      in_reply_to_id: post.id,
      status: "my followers",
      visibility: "private",
    });
    expect(res.status).toBe(200);
    const reply = valid(StatusSchema, await res.json());
    expect(reply.pleroma.approval_state).toBe("pending");
    expect((await deliveredOf(s, "ReplyRequest")).map((r) => r.instrument.id)).toEqual([reply.uri]);
    expect(await deliveredOf(s, "Create")).toEqual([]);
    expect((await statusOf(s, reply.id)).pleroma.approval_state).toBe("pending");
  });

  it("a post whose policy lets everyone in gets the plain activities, as today, and stores no policy", async () => {
    const s = await setup();
    const post = await remotePost(s, "open", open);
    const [stored] = await q<{ interaction_policy: string | null }>(
      "SELECT interaction_policy FROM statuses WHERE id = ?",
      post.id,
    );
    expect(stored!.interaction_policy).toBeNull();
    const reply = await replyTo(s, post.id, "hi");
    expect(reply.pleroma.approval_state).toBeNull();
    expect((await act(s, `/api/v1/statuses/${post.id}/favourite`)).status).toBe(200);
    expect((await act(s, `/api/v1/statuses/${post.id}/reblog`)).status).toBe(200);
    expect((await deliveredOf(s, "Create")).map((c) => c.object.id)).toEqual([reply.uri]);
    expect(await deliveredOf(s, "Like")).toHaveLength(1);
    expect(await deliveredOf(s, "Announce")).toHaveLength(1);
    for (const type of ["ReplyRequest", "LikeRequest", "AnnounceRequest"])
      expect(await deliveredOf(s, type)).toEqual([]);

    // A hostile policy: its lists are cut to 64 actors, and only http(s) ids are kept.
    const many = Array.from({ length: 200 }, (_, i) => `${s.peer.origin}/users/u${i}`);
    const odd = await remotePost(s, "odd", { canReply: { manualApproval: ["javascript:alert(1)", ...many] } });
    const [kept] = await q<{ interaction_policy: string }>(
      "SELECT interaction_policy FROM statuses WHERE id = ?",
      odd.id,
    );
    const rules = JSON.parse(kept!.interaction_policy);
    expect(rules.reply.manual).toHaveLength(63);
    expect(rules.reply.manual.every((u: string) => u.startsWith("http"))).toBe(true);
    expect(rules.like).toBeUndefined();
  });
});
