/**
 * Quote posts across servers (issue 46), against the Fedify test peer speaking Mastodon 4.5's flow (FEP-044f):
 * the peer asks to quote a Starling post and gets a stamp it can fetch (or a Reject), revoking deletes the stamp;
 * a Starling user quotes a remote post (pending, then accepted with the peer's stamp, revoked by its Delete);
 * Mastodon 4.5, Misskey and Akkoma quotes arriving render as quotes.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { call, json, valid } from "./helpers";
import { A, instanceFetch } from "./instances";
import { drainDeliveriesByHand, expectAccepted, fill, followPeer, q, setup, unroute, type Setup } from "./inbound";
import { StatusSchema, type Status } from "../src/schemas/status";
import { drainFederation } from "../src/federation/delivery/wake";
import { dayOf, hourOf, LIMITS, limitsClock, pending } from "../src/services/inbound-limits";
import { NotificationSchema } from "../src/schemas/social";
import quoteRequest from "./fixtures/federation/mastodon-quote-request-4.5.json";
import quoteAuthorization from "./fixtures/federation/mastodon-quote-authorization-4.5.json";
import acceptQuote from "./fixtures/federation/mastodon-accept-quote-request-4.5.json";
import createQuote from "./fixtures/federation/mastodon-create-quote-4.5.json";
import misskeyCreate from "./fixtures/federation/misskey-create-note.json";
import akkomaCreate from "./fixtures/federation/akkoma-create-note.json";
import akkomaContext from "./fixtures/federation/actors/akkoma-litepub-context.json";

drainDeliveriesByHand();
afterEach(unroute);

const postAs = async (s: Setup, body: Record<string, unknown>) =>
  valid(StatusSchema, await json("/api/v1/statuses", { instance: A, token: s.user.token, method: "POST", body }));
const statusOf = async (s: Setup, id: string) =>
  valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token }));
const statusByUri = async (s: Setup, uri: string): Promise<Status> => {
  const [row] = await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", uri);
  expect(row, `status ${uri} stored`).toBeDefined();
  return statusOf(s, row!.id);
};
/** An ActivityStreams document of A, as a server asks for it. */
const fetchDoc = (url: string) =>
  instanceFetch(A, new Request(url, { headers: { Accept: "application/activity+json" } }));
/** A public Note of `author` on the peer, served at `uri`. */
const servePost = (s: Setup, uri: string, author: string, content = "<p>quoted</p>") =>
  s.peer.objects.set(uri, {
    "@context": "https://www.w3.org/ns/activitystreams",
    id: uri,
    type: "Note",
    attributedTo: author,
    to: ["https://www.w3.org/ns/activitystreams#Public"],
    content,
    published: "2025-10-01T11:00:00Z",
  });
/** A public post of the peer's actor that anyone may quote, stored on A by the user's search for it. */
async function quotableRemotePost(s: Setup, name: string): Promise<{ remoteUri: string; remote: Status }> {
  const remoteUri = `${s.actor}/statuses/${name}${s.vars.N}`;
  s.peer.objects.set(remoteUri, {
    "@context": ["https://www.w3.org/ns/activitystreams", quoteRequest["@context"][1]],
    id: remoteUri,
    type: "Note",
    attributedTo: s.actor,
    to: ["https://www.w3.org/ns/activitystreams#Public"],
    content: "<p>a remote post</p>",
    published: "2025-10-01T12:00:00Z",
    interactionPolicy: { canQuote: { automaticApproval: ["https://www.w3.org/ns/activitystreams#Public"] } },
  });
  const found = await json(`/api/v2/search?q=${encodeURIComponent(remoteUri)}&resolve=true&type=statuses`, {
    instance: A,
    token: s.user.token,
  });
  return { remoteUri, remote: valid(StatusSchema, found.statuses[0]) };
}
/** Whether the peer was asked for the document at `uri`. */
const fetched = (s: Setup, uri: string) => s.peer.requests.includes(`GET ${new URL(uri).pathname}`);
/** `actor`'s hourly allowance here spent (the limits' clock held, so the hour cannot turn meanwhile). */
async function spendAllowance(actor: string) {
  const t = limitsClock.now();
  limitsClock.now = () => t;
  const n = LIMITS.stranger.hour.statuses;
  await env.DB.prepare(
    "INSERT INTO inbound_usage (day, sender, statuses, stranger_statuses, hour, hour_statuses, hour_stranger_statuses) VALUES (?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(dayOf(t), actor, n, n, hourOf(t), n, n)
    .run();
}
const realLimitsClock = limitsClock.now;
afterEach(() => {
  limitsClock.now = realLimitsClock;
});

/** What A delivered to the peer so far (its outbox drained first), of one type. */
async function deliveredOf(s: Setup, type: string) {
  await drainFederation(A.bindings);
  return s.peer.delivered.map((d) => d.body as Record<string, any>).filter((b) => b.type === type);
}

describe("being quoted by a Mastodon 4.5 server", () => {
  it("says who may quote each post, answers a QuoteRequest with a stamp it serves, and deletes it on revoking", async () => {
    const s = await setup();
    const mine = await postAs(s, { status: "quote me", visibility: "public" });
    // The Note says anyone may quote it (GoToSocial's and Mastodon 4.5's interactionPolicy).
    const note = (await (await fetchDoc(mine.uri)).json()) as Record<string, any>;
    expect(JSON.stringify(note.interactionPolicy.canQuote)).toMatch(/Public/);
    expect(JSON.stringify(note["@context"])).toContain("https://gotosocial.org/ns");

    const request = fill(quoteRequest, { ...s.vars, OBJECT: mine.uri });
    await expectAccepted(await s.peer.send(s.actor, request));
    const [accept] = await deliveredOf(s, "Accept");
    expect(accept).toMatchObject({ actor: `${A.origin}/users/${s.user.username}`, object: { id: request.id } });
    const stampUrl = accept!.result as string;
    expect(stampUrl).toMatch(new RegExp(`^${A.origin}/users/${s.user.username}/quote_authorizations/`));

    // The stamp, dereferenceable at its id, names the quote and the quoted post.
    const res = await fetchDoc(stampUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/(activity|ld)\+json/);
    expect(await res.json()).toMatchObject({
      id: stampUrl,
      type: "QuoteAuthorization",
      attributedTo: `${A.origin}/users/${s.user.username}`,
      interactingObject: request.instrument.id,
      interactionTarget: mine.uri,
    });
    // The quote is stored as one, counted, and the author notified.
    const theirs = await statusByUri(s, request.instrument.id);
    expect(theirs.quote?.state).toBe("accepted");
    expect(theirs.quote?.quoted_status?.id).toBe(mine.id);
    expect(theirs.content).toContain("Quoting this");
    expect((await statusOf(s, mine.id)).quotes_count).toBe(1);
    const notes = ((await json("/api/v1/notifications", { instance: A, token: s.user.token })) as unknown[]).map((n) =>
      valid(NotificationSchema, n),
    );
    expect(notes.map((n) => [n.type, n.status?.id])).toEqual([["quote", theirs.id]]);

    // Revoked: the stamp's Delete goes to the quoting author, and the stamp is gone.
    await json(`/api/v1/statuses/${mine.id}/quotes/${theirs.id}/revoke`, {
      instance: A,
      token: s.user.token,
      method: "POST",
    });
    const [del] = await deliveredOf(s, "Delete");
    expect(del).toMatchObject({ object: stampUrl, actor: `${A.origin}/users/${s.user.username}` });
    expect((await fetchDoc(stampUrl)).status).toBe(404);
    expect((await statusOf(s, mine.id)).quotes_count).toBe(0);
    // Asked again after revoking: rejected.
    await expectAccepted(await s.peer.send(s.actor, { ...request, id: `${request.id}-again` }));
    expect((await deliveredOf(s, "Reject")).map((r) => r.object.id)).toEqual([`${request.id}-again`]);
  });

  it("rejects a request its policy does not allow, one for a post it does not quote, and a blocked requester", async () => {
    const s = await setup();
    const closed = await postAs(s, {
      status: "nobody quotes this",
      visibility: "public",
      quote_approval_policy: "nobody",
    });
    const note = (await (await fetchDoc(closed.uri)).json()) as Record<string, any>;
    expect(JSON.stringify(note.interactionPolicy.canQuote)).toContain(`${A.origin}/users/${s.user.username}`);
    const request = fill(quoteRequest, { ...s.vars, OBJECT: closed.uri });
    await expectAccepted(await s.peer.send(s.actor, request));
    expect(await deliveredOf(s, "Accept")).toEqual([]);
    const [reject] = await deliveredOf(s, "Reject");
    expect(reject).toMatchObject({ object: { id: request.id, object: closed.uri } });
    expect((await statusByUri(s, request.instrument.id)).quote?.state).toBe("rejected");

    // A request naming an instrument that quotes another post.
    const open = await postAs(s, { status: "open", visibility: "public" });
    const other = fill(quoteRequest, { ...s.vars, N: `${s.vars.N}b`, OBJECT: closed.uri });
    await expectAccepted(await s.peer.send(s.actor, { ...other, object: open.uri }));
    expect((await deliveredOf(s, "Reject")).map((r) => r.object.id)).toContain(other.id);

    // A requester the author blocks (or whose domain she blocks): rejected.
    const them = (await q<{ id: string }>("SELECT id FROM accounts WHERE uri = ?", s.actor))[0]!.id;
    await json(`/api/v1/accounts/${them}/block`, { instance: A, token: s.user.token, method: "POST" });
    const blocked = fill(quoteRequest, { ...s.vars, N: `${s.vars.N}c`, OBJECT: open.uri });
    await expectAccepted(await s.peer.send(s.actor, blocked));
    expect((await deliveredOf(s, "Reject")).map((r) => r.object.id)).toContain(blocked.id);
    expect(await deliveredOf(s, "Accept")).toEqual([]);
  });
});

describe("a Reject of a quote request", () => {
  it("changes only the quote of the post asked about, and recounts it", async () => {
    const s = await setup();
    const first = await postAs(s, { status: "first", visibility: "public" });
    const second = await postAs(s, { status: "second", visibility: "public" });
    const request = fill(quoteRequest, { ...s.vars, OBJECT: first.uri });
    await expectAccepted(await s.peer.send(s.actor, request));
    const theirs = await statusByUri(s, request.instrument.id);
    expect(theirs.quote?.state).toBe("accepted");
    expect((await statusOf(s, first.id)).quotes_count).toBe(1);

    // The same quote named in a request for another post: rejected, the approved quote of the first untouched.
    await expectAccepted(await s.peer.send(s.actor, { ...request, id: `${request.id}-other`, object: second.uri }));
    expect((await deliveredOf(s, "Reject")).map((r) => r.object.id)).toEqual([`${request.id}-other`]);
    expect((await statusOf(s, theirs.id)).quote?.state).toBe("accepted");
    expect((await statusOf(s, first.id)).quotes_count).toBe(1);

    // Asked again once the author blocks the requester: rejected, and no longer counted.
    const them = (await q<{ id: string }>("SELECT id FROM accounts WHERE uri = ?", s.actor))[0]!.id;
    await json(`/api/v1/accounts/${them}/block`, { instance: A, token: s.user.token, method: "POST" });
    await expectAccepted(await s.peer.send(s.actor, { ...request, id: `${request.id}-again` }));
    expect((await deliveredOf(s, "Reject")).map((r) => r.object.id)).toContain(`${request.id}-again`);
    expect((await statusOf(s, first.id)).quotes_count).toBe(0);
  });
});

describe("a quote request whose quoting post cannot be had now", () => {
  it("answers a throttled sender 429 and sends no answer when the post cannot be fetched, unless the rule refuses anyway", async () => {
    const s = await setup();
    const mine = await postAs(s, { status: "quote me later", visibility: "public" });
    const answers = async () =>
      (
        await q<{ activity: string }>(
          "SELECT activity FROM federation_outbox WHERE account_id = ? AND (activity LIKE '%QuoteReject%' OR activity LIKE '%QuoteAccept%')",
          s.user.id,
        )
      ).map((r) => JSON.parse(r.activity).type);

    // A sender over its inbound limits: 429 with Retry-After, no Reject (it asks again later).
    const flooder = s.peer.actor();
    await spendAllowance(flooder);
    const throttled = fill(quoteRequest, { ...s.vars, ACTOR: flooder, OBJECT: mine.uri });
    const res = await s.peer.send(flooder, throttled);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect(await answers()).toEqual([]);
    expect(await q("SELECT id FROM statuses WHERE uri = ?", throttled.instrument.id)).toEqual([]);

    // A followers-only quote, named by id, that its server will not serve us (404): no answer at all.
    const hidden = fill(quoteRequest, { ...s.vars, OBJECT: mine.uri });
    hidden.instrument = hidden.instrument.id;
    await expectAccepted(await s.peer.send(s.actor, hidden));
    expect(fetched(s, hidden.instrument)).toBe(true);
    expect(await answers()).toEqual([]);
    expect(await deliveredOf(s, "Reject")).toEqual([]);

    // The same for a post nobody may quote: the rule refuses whatever the quote, so a Reject (as Mastodon does).
    const closed = await postAs(s, { status: "not quotable", visibility: "public", quote_approval_policy: "nobody" });
    const refused = fill(quoteRequest, { ...s.vars, N: `${s.vars.N}r`, OBJECT: closed.uri });
    refused.instrument = refused.instrument.id;
    await expectAccepted(await s.peer.send(s.actor, refused));
    expect((await deliveredOf(s, "Reject")).map((r) => r.object.id)).toEqual([refused.id]);
  });
});

describe("quoting a post of a Mastodon 4.5 server", () => {
  it("asks with a QuoteRequest, shows pending, then accepted with the peer's stamp, then revoked by its Delete", async () => {
    const s = await setup();
    const { remoteUri, remote } = await quotableRemotePost(s, "q");
    expect(remote.quote_approval).toMatchObject({ automatic: ["public"], current_user: "automatic" });

    const mine = await postAs(s, { status: "quoting a remote post", quoted_status_id: remote.id });
    expect(mine.quote).toEqual({ state: "pending", quoted_status: null });
    const [request] = await deliveredOf(s, "QuoteRequest");
    expect(request).toMatchObject({ object: remoteUri, instrument: { id: mine.uri, quote: remoteUri } });
    // The Note carries every quote form others read.
    const note = (await (await fetchDoc(mine.uri)).json()) as Record<string, any>;
    expect([note.quote, note.quoteUrl, note._misskey_quote]).toEqual([remoteUri, remoteUri, remoteUri]);
    expect(note.tag).toMatchObject({ type: "Link", href: remoteUri, rel: "https://misskey-hub.net/ns#_misskey_quote" });
    expect(note.quoteAuthorization).toBeUndefined();

    // The peer approves: its stamp served, then its Accept.
    const vars = { ...s.vars, QUOTING: mine.uri, OBJECT: remoteUri, QUOTER: `${A.origin}/users/${s.user.username}` };
    const stamp = fill(quoteAuthorization, vars);
    s.peer.objects.set(stamp.id, stamp);
    // A forged answer (by someone else) changes nothing.
    const mallory = s.peer.actor();
    await expectAccepted(
      await s.peer.send(mallory, fill(acceptQuote, { ...vars, ACTOR: mallory, REQUEST: request!.id })),
    );
    expect((await statusOf(s, mine.id)).quote?.state).toBe("pending");
    await expectAccepted(await s.peer.send(s.actor, fill(acceptQuote, { ...vars, REQUEST: request!.id })));
    const accepted = await statusOf(s, mine.id);
    expect(accepted.quote?.state).toBe("accepted");
    expect(accepted.quote?.quoted_status?.id).toBe(remote.id);
    // Sent again with its stamp.
    const updates = await deliveredOf(s, "Update");
    expect(updates.at(-1)?.object).toMatchObject({ id: mine.uri, quoteAuthorization: stamp.id });

    // The stamp deleted by its author: revoked, the quoted post hidden.
    await expectAccepted(
      await s.peer.send(s.actor, {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${stamp.id}#delete`,
        type: "Delete",
        actor: s.actor,
        object: stamp.id,
      }),
    );
    expect((await statusOf(s, mine.id)).quote).toEqual({ state: "revoked", quoted_status: null });
  });
});

describe("a local-only quote of another server's post", () => {
  it("asks nobody: no QuoteRequest leaves the instance, the quote shows as the post's policy allows", async () => {
    const s = await setup();
    const { remote } = await quotableRemotePost(s, "local");
    const mine = await postAs(s, { status: "just between us here", quoted_status_id: remote.id, visibility: "local" });
    expect(mine.visibility).toBe("local");
    expect(mine.quote?.state).toBe("accepted");
    expect(mine.quote?.quoted_status?.id).toBe(remote.id);
    expect(
      await q("SELECT id FROM federation_outbox WHERE account_id = ? AND activity LIKE '%QuoteRequest%'", s.user.id),
    ).toEqual([]);
    expect(await deliveredOf(s, "QuoteRequest")).toEqual([]);
    expect(JSON.stringify(s.peer.delivered)).not.toContain(mine.uri);
  });
});

describe("quotes other servers send", () => {
  it("Mastodon 4.5 (stamp verified), Misskey (_misskey_quote) and Akkoma (quoteUrl) render as quotes, not RE: links", async () => {
    const s = await setup();
    s.peer.objects.set(`${s.peer.origin}/schemas/litepub-0.1.jsonld`, akkomaContext);
    // Mastodon 4.5: one peer actor quotes another's post, approved by its stamp on the peer.
    const author = s.peer.actor();
    const quotedUri = `${author}/statuses/${s.vars.N}`;
    s.peer.objects.set(quotedUri, {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: quotedUri,
      type: "Note",
      attributedTo: author,
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      content: "<p>quoted on Mastodon</p>",
      published: "2025-10-01T11:00:00Z",
    });
    const stamp = fill(quoteAuthorization, {
      ...s.vars,
      ACTOR: author,
      QUOTING: `${s.actor}/statuses/${s.vars.N}`,
      OBJECT: quotedUri,
    });
    s.peer.objects.set(stamp.id, stamp);
    const create = fill(createQuote, { ...s.vars, OBJECT: quotedUri, AUTHORIZATION: stamp.id });
    await expectAccepted(await s.peer.send(s.actor, create));
    const masto = await statusByUri(s, create.object.id);
    expect(masto.quote?.state).toBe("accepted");
    expect(masto.quote?.quoted_status?.uri).toBe(quotedUri);
    expect(masto.quote?.quoted_status?.content).toContain("quoted on Mastodon");

    // A stamp that names another quote does not approve this one: pending, nothing shown.
    const forged = fill(createQuote, { ...s.vars, N: `${s.vars.N}f`, OBJECT: quotedUri, AUTHORIZATION: stamp.id });
    await expectAccepted(await s.peer.send(s.actor, forged));
    expect((await statusByUri(s, forged.object.id)).quote).toEqual({ state: "pending", quoted_status: null });

    // Misskey's quote of a note the peer serves.
    const misskey = fill(misskeyCreate, s.vars);
    const misskeyQuoted = misskey.object._misskey_quote as string;
    s.peer.objects.set(misskeyQuoted, {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: misskeyQuoted,
      type: "Note",
      attributedTo: s.actor,
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      content: "<p>the quoted note</p>",
      published: "2025-10-01T10:00:00Z",
    });
    await expectAccepted(await s.peer.send(s.actor, misskey));
    const mk = await statusByUri(s, misskey.object.id);
    expect(mk.quote?.state).toBe("accepted");
    expect(mk.quote?.quoted_status?.uri).toBe(misskeyQuoted);
    expect(mk.content).not.toContain("RE:");

    // Akkoma's, of a post its server does not serve: a quote all the same, by its url.
    const akkoma = fill(akkomaCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, akkoma));
    const ak = await statusByUri(s, akkoma.object.id);
    expect(ak.quote).toEqual({ state: "accepted", quoted_status: null });
    expect(ak.pleroma.quote_url).toBe(akkoma.object.quoteUrl);
    expect(ak.content).not.toContain("RE:");

    // The stamp URL of a post quoted nowhere: 404.
    expect(
      (
        await call(`/users/${s.user.username}/quote_authorizations/01ARZ3NDEKTSV4RRFFQ69G5FAV`, {
          instance: A,
          headers: { Accept: "application/activity+json" },
        })
      ).status,
    ).toBe(404);
  });
});

describe("a quote in a post nobody here asked for", () => {
  it("costs no fetch when the post concerns nobody here or its sender is over its limits; else fetched after, counted to the sender", async () => {
    const s = await setup();
    const author = s.peer.actor();
    const quotedUri = `${author}/statuses/${s.vars.N}`;
    servePost(s, quotedUri, author);
    const stampFor = (quoting: string) => {
      const stamp = fill(quoteAuthorization, { ...s.vars, ACTOR: author, QUOTING: quoting, OBJECT: quotedUri });
      s.peer.objects.set(stamp.id, stamp);
      return stamp.id as string;
    };
    // Nobody here follows the sender and the post addresses nobody here: dropped, its quote never fetched.
    const stranger = fill(createQuote, { ...s.vars, OBJECT: quotedUri, AUTHORIZATION: stampFor("x") });
    for (const o of [stranger, stranger.object]) o.cc = [`${s.actor}/followers`];
    stranger.object.tag = [];
    await expectAccepted(await s.peer.send(s.actor, stranger));
    expect(fetched(s, quotedUri)).toBe(false);
    expect(await q("SELECT id FROM statuses WHERE uri IN (?, ?)", quotedUri, stranger.object.id)).toEqual([]);

    // A sender over its hourly allowance: 429, and neither the quoted post nor the stamp fetched.
    const flooder = s.peer.actor();
    await spendAllowance(flooder);
    const stamp = stampFor(`${flooder}/statuses/${s.vars.N}`);
    const throttled = fill(createQuote, { ...s.vars, ACTOR: flooder, OBJECT: quotedUri, AUTHORIZATION: stamp });
    const res = await s.peer.send(flooder, throttled);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect(fetched(s, quotedUri)).toBe(false);
    expect(fetched(s, stamp)).toBe(false);
    expect(await q("SELECT id FROM statuses WHERE uri IN (?, ?)", quotedUri, throttled.object.id)).toEqual([]);

    // A post mentioning the local user: stored, then its quote fetched (counted to the sender, not searchable) and
    // approved by its stamp.
    const wanted = fill(createQuote, {
      ...s.vars,
      OBJECT: quotedUri,
      AUTHORIZATION: stampFor(`${s.actor}/statuses/${s.vars.N}`),
    });
    await expectAccepted(await s.peer.send(s.actor, wanted));
    const quote = await statusByUri(s, wanted.object.id);
    expect(quote.quote?.state).toBe("accepted");
    expect(quote.quote?.quoted_status?.uri).toBe(quotedUri);
    expect(quote.quote?.quoted_status?.quotes_count).toBe(1);
    expect(pending.get(s.actor)?.statuses).toBe(2);
    expect(pending.get(author)).toBeUndefined();
    const [row] = await q<{ search_rowid: number | null }>(
      "SELECT search_rowid FROM statuses WHERE uri = ?",
      quotedUri,
    );
    expect(row).toEqual({ search_rowid: null });
  });
});

describe("an old-style quote of a post not stored yet whose policy forbids it", () => {
  it("is pending once the quoted post is fetched: not shown, not counted", async () => {
    const s = await setup();
    await followPeer(s);
    const misskey = fill(misskeyCreate, s.vars);
    const quotedUri = misskey.object._misskey_quote as string;
    const author = s.peer.actor();
    // A Mastodon 4.5 post only its author may quote (`nobody`), on the peer, unknown here until the quote arrives.
    s.peer.objects.set(quotedUri, {
      "@context": ["https://www.w3.org/ns/activitystreams", quoteRequest["@context"][1]],
      id: quotedUri,
      type: "Note",
      attributedTo: author,
      to: ["https://www.w3.org/ns/activitystreams#Public"],
      content: "<p>do not quote me</p>",
      published: "2025-10-01T10:00:00Z",
      interactionPolicy: { canQuote: { automaticApproval: [author] } },
    });
    await expectAccepted(await s.peer.send(s.actor, misskey));
    expect(fetched(s, quotedUri)).toBe(true);
    const mk = await statusByUri(s, misskey.object.id);
    expect(mk.quote).toEqual({ state: "pending", quoted_status: null });
    const quoted = await statusByUri(s, quotedUri);
    expect(quoted.quotes_count).toBe(0);
    expect(await q("SELECT state FROM quotes WHERE quoted_status_id = ?", quoted.id)).toEqual([{ state: "pending" }]);
  });
});
