/**
 * The interoperability corpus (issue 18): payloads in the shapes Akkoma, Sharkey, GoToSocial, Pixelfed, Lemmy,
 * Mbin, PeerTube, WriteFreely, Mobilizon and BookWyrm send (test/fixtures/federation/, each naming its source),
 * posted signed to instance A's inbox by the Fedify peer, and what they became read back through the client API
 * as a local user; activity and object types Starling does not process are acknowledged and dropped; malformed
 * inbox bodies are refused with a reason, never a 500.
 */
import { afterEach, describe, expect, it } from "vitest";
import { call, json, registerUser, valid } from "./helpers";
import { A, instanceFetch } from "./instances";
import { expectAccepted, fill, followPeer, q, setup, unroute, type Setup } from "./inbound";
import akkomaContext from "./fixtures/federation/actors/akkoma-litepub-context.json";
import { StatusSchema, type Status } from "../src/schemas/status";
import { NotificationSchema } from "../src/schemas/social";
import { MAX_DEPTH, MAX_INBOX_BYTES } from "../src/federation/door/inbox-guard";
import akkomaCreate from "./fixtures/federation/akkoma-create-note.json";
import sharkeyCreate from "./fixtures/federation/sharkey-create-note.json";
import gtsCreate from "./fixtures/federation/gotosocial-create-note.json";
import pixelfedCreate from "./fixtures/federation/pixelfed-create-note.json";
import lemmyCreatePage from "./fixtures/federation/lemmy-create-page.json";
import lemmyAnnounce from "./fixtures/federation/lemmy-announce-create-page.json";
import mbinCreatePage from "./fixtures/federation/mbin-create-page.json";
import peertubeCreate from "./fixtures/federation/peertube-create-video.json";
import writefreelyCreate from "./fixtures/federation/writefreely-create-article.json";
import mobilizonCreate from "./fixtures/federation/mobilizon-create-event.json";
import bookwyrmCreate from "./fixtures/federation/bookwyrm-create-review.json";
import quoteRequest from "./fixtures/federation/mastodon-quote-request.json";

afterEach(unroute);

/** The stored status with this uri, as the local user's client sees it. */
async function statusByUri(s: Setup, uri: string): Promise<Status> {
  const [row] = await q<{ id: string }>("SELECT id FROM statuses WHERE uri = ?", uri);
  expect(row, `status ${uri} stored`).toBeDefined();
  return valid(StatusSchema, await json(`/api/v1/statuses/${row!.id}`, { instance: A, token: s.user.token }));
}

describe("notes from other software, mentioning a local user", () => {
  it("Akkoma (a quote, MFM source), Sharkey (content warning, sensitive image), GoToSocial (interaction policy), Pixelfed (an album)", async () => {
    const s = await setup();
    // Akkoma's litepub context, served by its own host (it names the quote terms).
    s.peer.objects.set(`${s.peer.origin}/schemas/litepub-0.1.jsonld`, akkomaContext);

    const akkoma = fill(akkomaCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, akkoma));
    const ak = await statusByUri(s, akkoma.object.id);
    expect(ak.visibility).toBe("public");
    // The rendered HTML, not the MFM source; the quote shown as one (issue 46), by its url (not served here).
    expect(ak.content).toContain("<b>bold</b>");
    expect(ak.content).not.toContain("**bold**");
    expect(ak.quote?.state).toBe("accepted");
    expect(ak.pleroma.quote_url).toBe(`${s.peer.origin}/objects/quoted-ak${s.vars.N}`);
    expect(ak.mentions.map((m) => m.id)).toEqual([s.user.id]);

    const sharkey = fill(sharkeyCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, sharkey));
    const sk = await statusByUri(s, sharkey.object.id);
    expect([sk.visibility, sk.spoiler_text, sk.sensitive]).toEqual(["public", "spoilers for the show", true]);
    expect(sk.content).toContain("it was the butler");
    expect(sk.media_attachments.map((m) => [m.type, m.remote_url, m.description])).toEqual([
      ["image", sharkey.object.attachment[0].url, "a still from the show"],
    ]);

    const gts = fill(gtsCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, gts));
    const gt = await statusByUri(s, gts.object.id);
    expect([gt.visibility, gt.url, gt.language]).toEqual(["public", gts.object.url, "en"]);
    expect(gt.tags.map((t) => t.name)).toEqual(["geese"]);
    expect(gt.media_attachments.map((m) => [m.type, m.description])).toEqual([["image", "a goose"]]);

    const pixelfed = fill(pixelfedCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, pixelfed));
    const px = await statusByUri(s, pixelfed.object.id);
    expect(px.media_attachments.map((m) => [m.type, m.remote_url, m.description])).toEqual([
      ["image", pixelfed.object.attachment[0].url, "the lake at dusk"],
      ["image", pixelfed.object.attachment[1].url, null],
    ]);

    // Each was a mention of the local user: four notifications, in the order they came.
    const notes = (await json("/api/v1/notifications", { instance: A, token: s.user.token })).map((x: unknown) =>
      valid(NotificationSchema, x),
    );
    expect(notes.map((x: any) => [x.type, x.status.id])).toEqual([px, gt, sk, ak].map((x) => ["mention", x.id]));
  });
});

describe("other object types, from a followed actor", () => {
  it("Lemmy and Mbin pages, a PeerTube video, a WriteFreely article, a Mobilizon event: a status with the title linked, in home", async () => {
    const s = await setup();
    await followPeer(s);
    const vars = { ...s.vars, GROUP: `${s.peer.origin}/c/main${s.vars.N}` };

    const lemmy = fill(lemmyCreatePage, vars);
    await expectAccepted(await s.peer.send(s.actor, lemmy));
    const page = await statusByUri(s, lemmy.object.id);
    expect(page.visibility).toBe("public");
    expect(page.content).toContain(`<a href="${lemmy.object.id}">A link worth reading</a>`);
    expect(page.content).toContain("<strong>bold</strong>");
    expect(page.content).not.toContain("<script");
    expect(page.content).toContain(`href="https://example.org/article/${s.vars.N}"`);
    expect(page.spoiler_text).toBe("");
    // Lemmy's Update(Page) by its author edits the title and the body.
    const update = {
      "@context": lemmy["@context"],
      id: `${lemmy.id}/update`,
      type: "Update",
      actor: s.actor,
      to: lemmy.to,
      cc: lemmy.cc,
    };
    await expectAccepted(
      await s.peer.send(s.actor, {
        ...update,
        object: { ...lemmy.object, name: "A better title", content: "<p>edited</p>", updated: "2024-06-05T14:00:00Z" },
      }),
    );
    const edited = await statusByUri(s, lemmy.object.id);
    expect(edited.content).toContain(`<a href="${lemmy.object.id}">A better title</a></p><p>edited</p>`);
    expect(edited.edited_at).toBe("2024-06-05T14:00:00.000Z");

    const mbin = fill(mbinCreatePage, vars);
    await expectAccepted(await s.peer.send(s.actor, mbin));
    const thread = await statusByUri(s, mbin.object.id);
    expect(thread.content).toContain(`<a href="${mbin.object.url}">Thread title from Mbin</a>`);
    expect(thread.url).toBe(mbin.object.url);
    expect(thread.tags.map((t) => t.name)).toEqual(["linux"]);
    expect(thread.mentions.map((m) => m.id)).toEqual([s.user.id]);

    const peertube = fill(peertubeCreate, vars);
    await expectAccepted(await s.peer.send(s.actor, peertube));
    const video = await statusByUri(s, peertube.object.id);
    const watch = `${s.peer.origin}/w/${s.vars.N}`;
    // The watch page (not a video file), the name escaped, the Markdown description as text.
    expect(video.url).toBe(watch);
    expect(video.content).toContain(`<a href="${watch}">Installing &amp; running a server &lt;in 5 minutes&gt;</a>`);
    expect(video.content).toContain("<p>A short tutorial.</p>");
    expect(video.content).toContain("&lt;b&gt;not html&lt;/b&gt;");
    expect(video.media_attachments).toEqual([]);
    expect(video.created_at).toBe("2024-06-08T15:00:00.000Z");

    const writefreely = fill(writefreelyCreate, vars);
    await expectAccepted(await s.peer.send(s.actor, writefreely));
    const article = await statusByUri(s, writefreely.object.id);
    expect(article.content).toContain(
      `<a href="${writefreely.object.url}"><strong>Why I write in plain text</strong></a>`,
    );
    expect(article.content).toContain("Plain text lasts.");
    expect(article.tags.map((t) => t.name)).toEqual(["writing"]);

    const mobilizon = fill(mobilizonCreate, vars);
    await expectAccepted(await s.peer.send(s.actor, mobilizon));
    const event = await statusByUri(s, mobilizon.object.id);
    expect(event.content).toContain(`<a href="${mobilizon.object.url}">Repair café</a>`);
    expect(event.content).toContain("<p>2024-07-01T16:00:00Z · Community hall</p>");
    expect(event.content).toContain("Bring your broken toaster.");

    // All in the follower's home; the public ones in the federated timeline.
    const home = (await json("/api/v1/timelines/home?limit=40", { instance: A, token: s.user.token })).map(
      (x: unknown) => valid(StatusSchema, x),
    );
    expect(home.map((x: Status) => x.id)).toEqual(
      expect.arrayContaining([page.id, thread.id, video.id, article.id, event.id]),
    );
    // Re-delivered: nothing new.
    await expectAccepted(await s.peer.send(s.actor, { ...peertube, id: `${peertube.id}/again` }));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", peertube.object.id)).toHaveLength(1);
  });
});

describe("searching for a page or a video by its URL", () => {
  it("a PeerTube video pasted in search is fetched and shown as a status (resolve=true)", async () => {
    const s = await setup();
    const video = { "@context": peertubeCreate["@context"], ...fill(peertubeCreate, s.vars).object };
    s.peer.objects.set(video.id, video);
    const body = await json(`/api/v2/search?q=${encodeURIComponent(video.id)}&resolve=true&type=statuses`, {
      instance: A,
      token: s.user.token,
    });
    expect(body.statuses).toHaveLength(1);
    const found = valid(StatusSchema, body.statuses[0]);
    expect([found.uri, found.url]).toEqual([video.id, `${s.peer.origin}/w/${s.vars.N}`]);
    expect(found.content).toContain("Installing &amp; running a server");
  });
});

describe("a Lemmy community (Group) announcing its members' posts", () => {
  /** The peer's actor served as a Group (same keys), a member on the same server, and the member's post. */
  async function community(s: Setup, post: { addressed?: boolean; content?: string; publicly?: boolean } = {}) {
    const group = s.actor;
    const person = await (
      await s.peer.handle(new Request(group, { headers: { Accept: "application/activity+json" } }))
    ).json<Record<string, unknown>>();
    s.peer.objects.set(group, { ...person, type: "Group", preferredUsername: `community${s.vars.N}` });
    const author = s.peer.actor();
    const announce = fill(lemmyAnnounce, { ...s.vars, GROUP: group, AUTHOR: author });
    const page = { "@context": announce["@context"], ...announce.object.object };
    if (post.addressed === false) {
      page.to = ["https://www.w3.org/ns/activitystreams#Public"];
      delete page.audience;
    }
    if (post.content) page.content = post.content;
    if (post.publicly === false) page.to = [group];
    s.peer.objects.set(page.id, page);
    return { group, author, announce, page };
  }

  it("stores the post (fetched from its id) for the group's local followers, by its author, in their home; unfollowing removes it", async () => {
    const s = await setup();
    const c = await community(s, { content: "<p>the real words</p>" });
    const groupId = await followPeer(s);
    const other = await registerUser({ instance: A });
    // The embedded copy says something else: the fetched one is what is stored.
    c.announce.object.object.content = "<p>forged words</p>";
    await expectAccepted(await s.peer.send(c.group, c.announce));
    expect(s.peer.requests).toContain(`GET ${new URL(c.page.id).pathname}`);
    const post = await statusByUri(s, c.page.id);
    expect(post.account.acct).toBe(`${new URL(c.author).pathname.split("/").pop()}@peer.example`);
    expect(post.content).toContain("the real words");
    expect(post.content).not.toContain("forged");
    expect(post.content).toContain(`>post 4</a>`);
    const home = await json("/api/v1/timelines/home", { instance: A, token: s.user.token });
    expect(home.map((x: { id: string }) => x.id)).toContain(post.id);
    // Only the group's followers got it.
    expect(
      (await json("/api/v1/timelines/home", { instance: A, token: other.token })).map((x: { id: string }) => x.id),
    ).not.toContain(post.id);
    // Announced again: nothing new.
    await expectAccepted(await s.peer.send(c.group, { ...c.announce, id: `${c.announce.id}/again` }));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", c.page.id)).toHaveLength(1);
    expect(await q("SELECT account_id FROM home_feed WHERE status_id = ?", post.id)).toEqual([
      { account_id: s.user.id },
    ]);
    // Unfollowing the group takes it out of home.
    await json(`/api/v1/accounts/${groupId}/unfollow`, { instance: A, token: s.user.token, method: "POST" });
    expect(
      (await json("/api/v1/timelines/home", { instance: A, token: s.user.token })).map((x: { id: string }) => x.id),
    ).not.toContain(post.id);
  });

  it("drops it when nobody here follows the group, when the post is not addressed to the group or not public, and from a Person", async () => {
    const s = await setup();
    const c = await community(s);
    await expectAccepted(await s.peer.send(c.group, c.announce));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", c.page.id)).toEqual([]);
    // Nothing was fetched for a group nobody follows.
    expect(s.peer.requests).not.toContain(`GET ${new URL(c.page.id).pathname}`);

    const t = await setup();
    const d = await community(t, { addressed: false });
    await followPeer(t);
    await expectAccepted(await t.peer.send(d.group, d.announce));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", d.page.id)).toEqual([]);
    // A post not public (addressed to the group alone) is not spread to the group's followers.
    const v = await setup();
    const e = await community(v, { publicly: false });
    await followPeer(v);
    await expectAccepted(await v.peer.send(e.group, e.announce));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", e.page.id)).toEqual([]);

    // A Person announcing a Create is not a group post (a boost: not stored here).
    const u = await setup();
    await followPeer(u);
    const announce = fill(lemmyAnnounce, { ...u.vars, GROUP: u.actor, AUTHOR: u.peer.actor() });
    u.peer.objects.set(announce.object.object.id, { "@context": announce["@context"], ...announce.object.object });
    await expectAccepted(await u.peer.send(u.actor, announce));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", announce.object.object.id)).toEqual([]);
  });
});

describe("what Starling does not process is acknowledged and dropped", () => {
  it("a QuoteRequest naming a post it cannot fetch (answered with a Reject), a Create of an unknown object type (BookWyrm's Review), a Create of an id that 404s", async () => {
    const s = await setup();
    const [status] = await json("/api/v1/statuses", {
      instance: A,
      token: s.user.token,
      method: "POST",
      body: { status: "quote me" },
    }).then((x) => [x]);
    await expectAccepted(await s.peer.send(s.actor, fill(quoteRequest, { ...s.vars, TARGET_STATUS: status.uri })));
    const review = fill(bookwyrmCreate, s.vars);
    await expectAccepted(await s.peer.send(s.actor, review));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", review.object.id)).toEqual([]);
    // A Create naming its object by an id that answers 404.
    const bare = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${s.actor}/statuses/${s.vars.N}/activity`,
      type: "Create",
      actor: s.actor,
      object: `${s.actor}/statuses/${s.vars.N}`,
    };
    await expectAccepted(await s.peer.send(s.actor, bare));
    expect(await q("SELECT id FROM statuses WHERE uri = ?", bare.object)).toEqual([]);
    expect(await json("/api/v1/notifications", { instance: A, token: s.user.token })).toEqual([]);
  });

  it("refuses, with a reason and before any signature work, bodies too large (413), not JSON, not an object, without an actor or nested too deep (400)", async () => {
    const s = await setup();
    const post = (body: BodyInit, headers: Record<string, string> = {}) =>
      instanceFetch(
        A,
        new Request(`${A.origin}/inbox`, {
          method: "POST",
          headers: { "Content-Type": "application/activity+json", ...headers },
          body,
        }),
      );
    const expectRefused = async (res: Response, status: number, reason: RegExp) => {
      expect(res.status).toBe(status);
      expect((await res.json<{ error: string }>()).error).toMatch(reason);
    };
    const valid = fill(quoteRequest, { ...s.vars, TARGET_STATUS: `${A.origin}/objects/x` });
    const big = JSON.stringify({ ...valid, padding: "x".repeat(MAX_INBOX_BYTES) });
    await expectRefused(await post(big), 413, /larger than/);
    // Streamed without a length: counted as read.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 12; i++)
          c.enqueue(new TextEncoder().encode(i === 0 ? '{"padding":"' : "y".repeat(100_000)));
        c.close();
      },
    });
    await expectRefused(await post(stream), 413, /larger than/);
    await expectRefused(await post("{not json"), 400, /not JSON/);
    await expectRefused(await post("[1, 2]"), 400, /not a JSON object/);
    await expectRefused(await post(JSON.stringify({ ...valid, actor: undefined })), 400, /no actor/);
    let nested: Record<string, unknown> = { type: "Note", content: "deep" };
    for (let i = 0; i < MAX_DEPTH + 5; i++) nested = { type: "Note", inReplyTo: nested };
    await expectRefused(await post(JSON.stringify({ ...valid, object: nested })), 400, /nested/);
    // Deep enough to overflow a recursive parser: still a 400.
    await expectRefused(await post("[".repeat(200_000)), 400, /not JSON/);
    // Signed and well-formed, the same activity is acknowledged.
    await expectAccepted(await s.peer.send(s.actor, valid));
    expect((await call("/api/v1/pleroma/healthcheck", { instance: A })).status).toBe(200);
  });
});

describe("malformed activities from a verified sender are never a 500", () => {
  it("odd objects, types, dates, tags, attachments and ids: each acknowledged or refused, nothing half stored", async () => {
    const s = await setup();
    await followPeer(s);
    const as = "https://www.w3.org/ns/activitystreams";
    const note = (extra: Record<string, unknown>) => ({
      type: "Note",
      id: `${s.actor}/statuses/${s.vars.N}-${Math.random().toString(36).slice(2)}`,
      attributedTo: s.actor,
      to: [`${as}#Public`],
      content: "<p>odd</p>",
      ...extra,
    });
    const create = (object: unknown, extra: Record<string, unknown> = {}) => ({
      "@context": as,
      id: `${s.actor}#create-${Math.random().toString(36).slice(2)}`,
      type: "Create",
      actor: s.actor,
      object,
      ...extra,
    });
    const huge = note({ type: "Page", name: "t".repeat(20_000) });
    // Fedify refuses what it cannot read as ActivityStreams (an unparsable date, an id that is not a string) with
    // 400; the rest is acknowledged, stored when it makes sense, dropped otherwise.
    const cases: [string, unknown, number][] = [
      ["object without id or type", create({}), 202],
      ["object a number", create(42), 202],
      ["object null", create(null), 202],
      ["object id not a URL", create(note({ id: "not a url" })), 202],
      ["a type list", { ...create(note({})), type: ["Create", "Foo"] }, 202],
      ["content an object", create(note({ content: { nested: true } })), 202],
      ["published garbage", create(note({ published: "yesterday-ish" })), 400],
      [
        "tag a string, attachment with a javascript: url",
        create(
          note({
            tag: "#nope",
            attachment: [{ type: "Document", url: "javascript:alert(1)", mediaType: "image/png" }],
          }),
        ),
        202,
      ],
      ["a Page with a huge name", create(huge), 202],
      ["an Event with a malformed start", create(note({ type: "Event", name: "e", startTime: "soon" })), 400],
      ["to a number, cc an object with a numeric id", create(note({ to: 5, cc: { id: 7 } })), 400],
      [
        "an Announce of nothing",
        { "@context": as, id: `${s.actor}#announce`, type: "Announce", actor: s.actor, object: null },
        202,
      ],
      [
        "an Undo of a string",
        { "@context": as, id: `${s.actor}#undo`, type: "Undo", actor: s.actor, object: "https://peer.example/nothing" },
        202,
      ],
      ["a Delete of nothing", { "@context": as, id: `${s.actor}#delete`, type: "Delete", actor: s.actor }, 202],
    ];
    for (const [what, activity, status] of cases) {
      const res = await s.peer.send(s.actor, activity);
      expect(res.status, `${what}: ${await res.text()}`).toBe(status);
    }
    // The huge title is cut.
    const page = await statusByUri(s, huge.id);
    expect(page.content).toContain(`>${"t".repeat(500)}</a>`);
    expect(page.content).not.toContain("t".repeat(501));
    // What was stored renders: every status of this actor is a valid Status, with no javascript: media.
    const stored = await q<{ id: string }>(
      "SELECT s.id FROM statuses s JOIN accounts a ON a.id = s.account_id WHERE a.uri = ?",
      s.actor,
    );
    for (const { id } of stored) {
      const st = valid(StatusSchema, await json(`/api/v1/statuses/${id}`, { instance: A, token: s.user.token }));
      for (const m of st.media_attachments) expect(m.url).toMatch(/^https?:/);
      expect(st.content.length).toBeLessThan(120_000);
    }
    expect((await call("/api/v1/pleroma/healthcheck", { instance: A })).status).toBe(200);
  });
});
