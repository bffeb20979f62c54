/**
 * GoToSocial's interaction controls, answering side (issue 49): the Fedify test peer asks politely, as GoToSocial
 * does, to like, reply to or boost a Starling user's post (`LikeRequest`, `ReplyRequest`, `AnnounceRequest`, the
 * interaction as `instrument`). Starling stores the interaction as its plain form, notifies, counts, and answers an
 * `Accept` whose `result` is an authorization it serves; a request its rule refuses gets a `Reject`; redelivered
 * requests and the plain activity sent afterwards with `approvedBy` store nothing twice; forged or foreign requests
 * are dropped unanswered.
 */
import { afterEach, describe, expect, it } from "vitest";
import { json, valid } from "./helpers";
import { A, instanceFetch } from "./instances";
import { drainDeliveriesByHand, expectAccepted, fill, q, setup, unroute, type Setup } from "./inbound";
import { StatusSchema, type Status } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { drainFederation } from "../src/federation/delivery/wake";
import likeRequest from "./fixtures/federation/gotosocial-like-request.json";
import replyRequest from "./fixtures/federation/gotosocial-reply-request.json";
import announceRequest from "./fixtures/federation/gotosocial-announce-request.json";

drainDeliveriesByHand();
afterEach(unroute);

const postAs = async (s: Setup, body: Record<string, unknown>) =>
  valid(StatusSchema, await json("/api/v1/statuses", { instance: A, token: s.user.token, method: "POST", body }));
const statusOf = async (s: Setup, id: string): Promise<Status> =>
  valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token }));
const notifications = async (s: Setup) =>
  ((await json("/api/v1/notifications", { instance: A, token: s.user.token })) as unknown[]).map((n) =>
    valid(NotificationSchema, n),
  );
/** FEP-044f's `quote` property. */
const FEP_QUOTE = "https://w3id.org/fep/044f#quote";
/** An ActivityStreams document of A, as a server asks for it. */
const fetchDoc = (url: string) =>
  instanceFetch(A, new Request(url, { headers: { Accept: "application/activity+json" } }));
/** What A delivered to the peer so far (its outbox drained first), of one type. */
async function deliveredOf(s: Setup, type: string) {
  await drainFederation(A.bindings);
  return s.peer.delivered.map((d) => d.body as Record<string, any>).filter((b) => b.type === type);
}
/** A request fixture about the local post `object`, numbered `n` within the test. */
const request = (s: Setup, fixture: unknown, object: Status, n = "") =>
  fill(fixture, { ...s.vars, N: `${s.vars.N}${n}`, OBJECT: object.uri, OBJECT_AUTHOR: s.target });

/** The Accept of `req` delivered to the peer, checked against GoToSocial's shape; answers its `result`. */
async function acceptOf(s: Setup, req: any, type: string): Promise<string> {
  const accepts = (await deliveredOf(s, "Accept")).filter((a) => a.object?.id === req.id);
  expect(accepts.length, `an Accept of ${req.id}`).toBeGreaterThan(0);
  const accept = accepts.at(-1)!;
  expect(accept).toMatchObject({
    actor: s.target,
    to: s.actor,
    object: { type, id: req.id, actor: s.actor, object: req.object, instrument: req.instrument.id },
  });
  return accept.result as string;
}

/** The authorization at `url`, fetched as a server does, checked to name the interaction and the post. */
async function expectAuthorization(url: string, type: string, s: Setup, interaction: string, target: string) {
  const res = await fetchDoc(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/(activity|ld)\+json/);
  const doc = (await res.json()) as Record<string, any>;
  expect(doc).toMatchObject({
    id: url,
    type,
    attributedTo: s.target,
    interactingObject: interaction,
    interactionTarget: target,
  });
  expect(JSON.stringify(doc["@context"])).toContain("https://gotosocial.org/ns");
}

describe("GoToSocial's polite requests of a Starling post", () => {
  it("a LikeRequest: the favourite stored, notified and counted, an Accept with a LikeAuthorization served", async () => {
    const s = await setup();
    const mine = await postAs(s, { status: "like me politely", visibility: "public" });
    const req = request(s, likeRequest, mine);
    await expectAccepted(await s.peer.send(s.actor, req));

    const result = await acceptOf(s, req, "LikeRequest");
    expect(result).toMatch(new RegExp(`^${s.target}/like_authorizations/[0-9A-Z]{26}$`));
    await expectAuthorization(result, "LikeAuthorization", s, req.instrument.id, mine.uri);
    expect((await statusOf(s, mine.id)).favourites_count).toBe(1);
    expect((await notifications(s)).map((n) => [n.type, n.status?.id])).toEqual([["favourite", mine.id]]);

    // Under authorized fetch, an unsigned fetch is refused; another account's path, or another kind's, is 404.
    const secure = { ...A, bindings: { ...A.bindings, AUTHORIZED_FETCH: "true" } };
    const unsigned = await instanceFetch(
      secure,
      new Request(result, { headers: { Accept: "application/activity+json" } }),
    );
    expect(unsigned.status).toBe(401);
    const id = result.split("/").pop()!;
    expect((await fetchDoc(`${A.origin}/users/${s.user.username}x/like_authorizations/${id}`)).status).toBe(404);
    expect((await fetchDoc(`${s.target}/announce_authorizations/${id}`)).status).toBe(404);
    expect((await fetchDoc(`${s.target}/like_authorizations/not-an-id`)).status).toBe(404);

    // Delivered again (to the personal inbox, past Fedify's per-inbox record): the same authorization, no second row.
    await expectAccepted(await s.peer.send(s.actor, req, { inbox: `/users/${s.user.username}/inbox` }));
    expect(await acceptOf(s, req, "LikeRequest")).toBe(result);
    expect((await deliveredOf(s, "Accept")).filter((a) => a.object?.id === req.id)).toHaveLength(2);

    // The plain Like sent afterwards with `approvedBy` (as GoToSocial distributes it): stored once.
    await expectAccepted(
      await s.peer.send(s.actor, {
        "@context": ["https://www.w3.org/ns/activitystreams", "https://gotosocial.org/ns"],
        ...req.instrument,
        approvedBy: result,
        likeAuthorization: result,
      }),
    );
    expect((await statusOf(s, mine.id)).favourites_count).toBe(1);
    expect((await q("SELECT id FROM favourites WHERE status_id = ?", mine.id)).length).toBe(1);
    expect((await notifications(s)).filter((n) => n.type === "favourite")).toHaveLength(1);

    // Undone: the authorization is no longer served.
    await expectAccepted(
      await s.peer.send(s.actor, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${req.instrument.id}/undo`,
        type: "Undo",
        actor: s.actor,
        object: req.instrument,
      }),
    );
    expect((await statusOf(s, mine.id)).favourites_count).toBe(0);
    expect((await fetchDoc(result)).status).toBe(404);
  });

  it("a ReplyRequest: the reply stored in the thread and notified, an Accept with a ReplyAuthorization served", async () => {
    const s = await setup();
    const mine = await postAs(s, { status: "reply to me politely", visibility: "public" });
    const req = request(s, replyRequest, mine);
    await expectAccepted(await s.peer.send(s.actor, req));

    const result = await acceptOf(s, req, "ReplyRequest");
    expect(result).toMatch(new RegExp(`^${s.target}/reply_authorizations/[0-9A-Z]{26}$`));
    await expectAuthorization(result, "ReplyAuthorization", s, req.instrument.id, mine.uri);
    const [row] = await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", req.instrument.id);
    const reply = await statusOf(s, row!.id);
    expect([reply.in_reply_to_id, reply.visibility, reply.account.acct]).toEqual([
      mine.id,
      "public",
      `${s.vars.NAME}@${new URL(s.peer.origin).host}`,
    ]);
    expect(reply.content).toContain("a polite reply");
    expect((await statusOf(s, mine.id)).replies_count).toBe(1);
    expect((await notifications(s)).map((n) => [n.type, n.status?.id])).toEqual([["mention", reply.id]]);

    // The Create GoToSocial sends once approved, with `approvedBy`: no second status, no second notification.
    await expectAccepted(
      await s.peer.send(s.actor, {
        "@context": ["https://www.w3.org/ns/activitystreams", "https://gotosocial.org/ns"],
        id: `${req.instrument.id}/activity`,
        type: "Create",
        actor: s.actor,
        to: req.instrument.to,
        cc: req.instrument.cc,
        object: { ...req.instrument, approvedBy: result, replyAuthorization: result },
      }),
    );
    expect((await q("SELECT id FROM statuses WHERE uri = ?", req.instrument.id)).length).toBe(1);
    expect((await statusOf(s, mine.id)).replies_count).toBe(1);
    expect(await notifications(s)).toHaveLength(1);
    // Asked again: the same authorization.
    await expectAccepted(await s.peer.send(s.actor, req, { inbox: `/users/${s.user.username}/inbox` }));
    expect(await acceptOf(s, req, "ReplyRequest")).toBe(result);
  });

  it("an AnnounceRequest: the reblog stored, notified and counted, an Accept with an AnnounceAuthorization served", async () => {
    const s = await setup();
    const mine = await postAs(s, { status: "boost me politely", visibility: "public" });
    const req = request(s, announceRequest, mine);
    await expectAccepted(await s.peer.send(s.actor, req));

    const result = await acceptOf(s, req, "AnnounceRequest");
    expect(result).toMatch(new RegExp(`^${s.target}/announce_authorizations/[0-9A-Z]{26}$`));
    await expectAuthorization(result, "AnnounceAuthorization", s, req.instrument.id, mine.uri);
    expect((await statusOf(s, mine.id)).reblogs_count).toBe(1);
    expect((await notifications(s)).map((n) => [n.type, n.status?.id])).toEqual([["reblog", mine.id]]);

    // The plain Announce with `approvedBy`, then the request again: one reblog, the same authorization.
    await expectAccepted(
      await s.peer.send(s.actor, {
        "@context": ["https://www.w3.org/ns/activitystreams", "https://gotosocial.org/ns"],
        ...req.instrument,
        approvedBy: result,
        announceAuthorization: result,
      }),
    );
    await expectAccepted(await s.peer.send(s.actor, req, { inbox: `/users/${s.user.username}/inbox` }));
    expect(await acceptOf(s, req, "AnnounceRequest")).toBe(result);
    expect((await statusOf(s, mine.id)).reblogs_count).toBe(1);
    expect((await q("SELECT id FROM statuses WHERE reblog_of_id = ?", mine.id)).length).toBe(1);
  });
});

describe("requests Starling refuses or ignores", () => {
  it("rejects a blocked requester, a blocked domain, a followers-only post to a stranger, a boost of a private post", async () => {
    const s = await setup();
    const open = await postAs(s, { status: "open", visibility: "public" });
    const closed = await postAs(s, { status: "followers only", visibility: "private" });
    const rejectedIds = async () => (await deliveredOf(s, "Reject")).map((r) => r.object?.id);

    // A followers-only post, asked about by someone who does not follow: Reject, nothing stored (nor the post
    // the reply quotes fetched).
    const strangerReply = request(s, replyRequest, closed, "a");
    const quoted = `${s.actor}/statuses/quoted${s.vars.N}`;
    s.peer.objects.set(quoted, { ...strangerReply.instrument, id: quoted, inReplyTo: undefined });
    strangerReply["@context"] = [...strangerReply["@context"], { quote: { "@id": FEP_QUOTE, "@type": "@id" } }];
    strangerReply.instrument.quote = quoted;
    await expectAccepted(await s.peer.send(s.actor, strangerReply));
    expect(s.peer.requests).not.toContain(`GET ${new URL(quoted).pathname}`);
    const strangerLike = request(s, likeRequest, closed, "b");
    await expectAccepted(await s.peer.send(s.actor, strangerLike));
    expect(await rejectedIds()).toEqual([strangerReply.id, strangerLike.id]);
    const [reject] = await deliveredOf(s, "Reject");
    expect(reject).toMatchObject({
      actor: s.target,
      to: s.actor,
      object: {
        type: "ReplyRequest",
        id: strangerReply.id,
        object: closed.uri,
        instrument: strangerReply.instrument.id,
      },
    });
    expect(reject!.result).toBeUndefined();
    expect(await q("SELECT id FROM statuses WHERE uri = ?", strangerReply.instrument.id)).toEqual([]);
    expect((await statusOf(s, closed.id)).favourites_count).toBe(0);

    // A follower may like it, but boosting a followers-only post is refused.
    await expectAccepted(
      await s.peer.send(s.actor, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${s.actor}/follows/${s.vars.N}`,
        type: "Follow",
        actor: s.actor,
        object: s.target,
      }),
    );
    const followerLike = request(s, likeRequest, closed, "c");
    await expectAccepted(await s.peer.send(s.actor, followerLike));
    expect(await acceptOf(s, followerLike, "LikeRequest")).toContain("/like_authorizations/");
    const boost = request(s, announceRequest, closed, "d");
    await expectAccepted(await s.peer.send(s.actor, boost));
    expect(await rejectedIds()).toContain(boost.id);
    expect((await statusOf(s, closed.id)).reblogs_count).toBe(0);

    // The requester's domain blocked by the author, then the requester itself: Reject.
    await json("/api/v1/domain_blocks", {
      instance: A,
      token: s.user.token,
      method: "POST",
      body: { domain: new URL(s.peer.origin).host },
    });
    const domainBlocked = request(s, likeRequest, open, "e");
    await expectAccepted(await s.peer.send(s.actor, domainBlocked));
    expect(await rejectedIds()).toContain(domainBlocked.id);
    await json("/api/v1/domain_blocks", {
      instance: A,
      token: s.user.token,
      method: "DELETE",
      body: { domain: new URL(s.peer.origin).host },
    });
    const [them] = await q<{ id: string }>("SELECT id FROM accounts WHERE uri = ?", s.actor);
    await json(`/api/v1/accounts/${them!.id}/block`, { instance: A, token: s.user.token, method: "POST" });
    const blocked = request(s, replyRequest, open, "f");
    await expectAccepted(await s.peer.send(s.actor, blocked));
    expect(await rejectedIds()).toContain(blocked.id);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", blocked.instrument.id)).toEqual([]);
    expect((await statusOf(s, open.id)).favourites_count).toBe(0);
    // Of the interaction requests, only the follower's Like was accepted (the other Accept is of its Follow).
    const accepted = (await deliveredOf(s, "Accept")).filter((a) => a.object?.type !== "Follow");
    expect(accepted.map((a) => a.object?.id)).toEqual([followerLike.id]);
  });

  it("drops forged, foreign and unknown requests unanswered", async () => {
    const s = await setup();
    const mine = await postAs(s, { status: "mine", visibility: "public" });
    const mallory = s.peer.actor();

    // Signed by the peer's actor, the Like inside is someone else's: nothing stored, nothing answered.
    const forged = request(s, likeRequest, mine, "a");
    forged.instrument.actor = mallory;
    await expectAccepted(await s.peer.send(s.actor, forged));
    // A reply attributed to someone else (the peer serves nothing at its id either).
    const forgedReply = request(s, replyRequest, mine, "b");
    forgedReply.instrument.attributedTo = mallory;
    await expectAccepted(await s.peer.send(s.actor, forgedReply));
    // An instrument about another post than the request's.
    const other = await postAs(s, { status: "another", visibility: "public" });
    const crossed = request(s, announceRequest, mine, "c");
    crossed.instrument.object = other.uri;
    await expectAccepted(await s.peer.send(s.actor, crossed));
    // A post of another server, and a post that does not exist here.
    const foreign = fill(likeRequest, {
      ...s.vars,
      N: `${s.vars.N}d`,
      OBJECT: `${s.peer.origin}/users/someone/statuses/1`,
      OBJECT_AUTHOR: `${s.peer.origin}/users/someone`,
    });
    await expectAccepted(await s.peer.send(s.actor, foreign));
    const missing = fill(likeRequest, {
      ...s.vars,
      N: `${s.vars.N}e`,
      OBJECT: `${s.target}/statuses/01AAAAAAAAAAAAAAAAAAAAAAAA`,
      OBJECT_AUTHOR: s.target,
    });
    await expectAccepted(await s.peer.send(s.actor, missing));
    // A request whose id lives on another origin than its sender's.
    const elsewhere = { ...request(s, likeRequest, mine, "f"), id: `https://elsewhere.example/requests/${s.vars.N}` };
    await expectAccepted(await s.peer.send(s.actor, elsewhere));

    expect(await deliveredOf(s, "Accept")).toEqual([]);
    expect(await deliveredOf(s, "Reject")).toEqual([]);
    const after = await statusOf(s, mine.id);
    expect([after.favourites_count, after.reblogs_count, after.replies_count]).toEqual([0, 0, 0]);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", forgedReply.instrument.id)).toEqual([]);
    expect(await notifications(s)).toEqual([]);
  });
});
