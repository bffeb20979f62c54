/** Statuses as ActivityStreams objects: the object dispatcher, addressing, outbox and featured collections. */
import { env } from "cloudflare:test";
import {
  Announce,
  Create,
  Document,
  Emoji,
  Hashtag,
  Mention,
  Note,
  OrderedCollection,
  OrderedCollectionPage,
  Question,
} from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import { describe, expect, it } from "vitest";
import { addressing, PUBLIC_COLLECTION } from "../src/services/addressing";
import { StatusSchema } from "../src/schemas/status";
import { countingD1 } from "./d1-counter";
import { BASE, call, json, post, registerUser, upload, valid, type TestUser } from "./helpers";

const AP = "application/activity+json";
const LD = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"';
const followersOf = (u: TestUser) => `${BASE}/users/${u.username}/followers`;
const actorOf = (u: TestUser) => `${BASE}/users/${u.username}`;

async function ap(path: string, status = 200, accept = AP) {
  const res = await call(path, { headers: { Accept: accept } });
  const text = await res.text();
  expect(res.status, `${path} -> ${text.slice(0, 300)}`).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/(activity|ld)\+json|^application\/json/);
  return JSON.parse(text);
}

/** A status's object, checked to be what Fedify itself parses back. */
async function object(id: string) {
  const body = await ap(`/objects/${id}`);
  return { body, parsed: (await Note.fromJsonLd(body).catch(() => Question.fromJsonLd(body))) as Note | Question };
}

/** Everything an async iterator yields (Fedify's `get…()` of multi-valued properties). */
async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const postStatus = async (u: TestUser, body: Record<string, unknown>) => valid(StatusSchema, await post(u, body));

describe("addressing by visibility", () => {
  const followers = "https://x.example/users/a/followers";
  const m = ["https://y.example/users/b", "https://x.example/users/c"];
  const table: [string, { to: string[]; cc: string[] } | null][] = [
    ["public", { to: [PUBLIC_COLLECTION], cc: [followers, ...m] }],
    ["unlisted", { to: [followers], cc: [PUBLIC_COLLECTION, ...m] }],
    ["private", { to: [followers], cc: m }],
    // Direct and list: everyone the status reached (recipients) and the mentioned.
    ["direct", { to: ["https://z.example/users/d", ...m], cc: [] }],
    ["list", { to: ["https://z.example/users/d", ...m], cc: [] }],
    ["local", null],
  ];
  for (const [visibility, expected] of table) {
    it(visibility, () => {
      expect(
        addressing({
          visibility: visibility as any,
          followers,
          mentioned: [...m, m[0]!],
          recipients: ["https://z.example/users/d"],
        }),
      ).toEqual(expected);
    });
  }
  it("a public status without mentions is to Public, cc followers only", () => {
    expect(addressing({ visibility: "public", followers, mentioned: [] })).toEqual({
      to: [PUBLIC_COLLECTION],
      cc: [followers],
    });
  });
});

describe("status objects", () => {
  it("serves public and unlisted statuses, 404 for every other visibility, and pages to browsers", async () => {
    const u = await registerUser();
    const friend = await registerUser();
    const list = await json("/api/v1/lists", { method: "POST", token: u.token, body: { title: "l" } });
    await json(`/api/v1/accounts/${friend.id}/follow`, { method: "POST", token: u.token });
    await json(`/api/v1/lists/${list.id}/accounts`, {
      method: "POST",
      token: u.token,
      body: { account_ids: [friend.id] },
    });
    const pub = await postStatus(u, { status: "public words", visibility: "public" });
    const unl = await postStatus(u, { status: "unlisted words", visibility: "unlisted" });
    expect(pub.uri).toBe(`${BASE}/objects/${pub.id}`);

    const p = await object(pub.id);
    expect(p.body.type).toBe("Note");
    expect(p.parsed.toIds.map(String)).toEqual([PUBLIC_COLLECTION]);
    expect(p.parsed.ccIds.map(String)).toEqual([followersOf(u)]);
    const q = await object(unl.id);
    expect(q.parsed.toIds.map(String)).toEqual([followersOf(u)]);
    expect(q.parsed.ccIds.map(String)).toEqual([PUBLIC_COLLECTION]);
    // A trailing slash is the same object.
    expect((await ap(`/objects/${pub.id}/`)).id).toBe(pub.uri);
    // The other ActivityStreams media type too.
    expect((await ap(`/objects/${pub.id}`, 200, LD)).id).toBe(pub.uri);

    for (const visibility of ["private", "direct", "local", `list:${list.id}`]) {
      const s = await postStatus(u, { status: `@${friend.username} not for servers`, visibility });
      const res = await call(`/objects/${s.id}`, { headers: { Accept: AP } });
      expect(res.status, visibility).toBe(404);
      expect(await res.json()).toEqual({ error: "Record not found" });
      // Its author still reads it through the client API.
      await json(`/api/v1/statuses/${s.id}`, { token: u.token });
    }
    // Unknown and malformed ids, and a remote status.
    for (const id of ["00000000000000000000000000", "not-an-id"])
      expect((await call(`/objects/${id}`, { headers: { Accept: AP } })).status).toBe(404);

    // Browsers keep the HTML page at the same URL and at /notice/<id>.
    for (const path of [`/objects/${pub.id}`, `/notice/${pub.id}`]) {
      const html = await call(path, { headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
      expect(html.status, path).toBe(200);
      expect(html.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await html.text()).toContain("public words");
    }
  });

  it("a remote status is not served here", async () => {
    const u = await registerUser();
    const s = await postStatus(u, { status: "soon remote" });
    // The same row made to look remote: only local statuses are this instance's to serve.
    await env.DB.prepare("UPDATE statuses SET local = 0 WHERE id = ?").bind(s.id).run();
    expect((await call(`/objects/${s.id}`, { headers: { Accept: AP } })).status).toBe(404);
  });

  it("has the Note's fields: attribution, content, summary, dates, reply, mentions, hashtags, emoji, media", async () => {
    const code = `blob${Date.now().toString(36)}`;
    await env.DB.prepare(
      "INSERT INTO custom_emojis (shortcode, domain, file, url, visible_in_picker, created_at) VALUES (?, NULL, ?, NULL, 1, ?)",
    )
      .bind(code, `emoji/${code}.png`, Date.now())
      .run();
    const u = await registerUser();
    const other = await registerUser();
    const parent = await postStatus(other, { status: "parent" });
    const media = await upload(u);
    await json(`/api/v1/media/${media.id}`, { method: "PUT", token: u.token, body: { description: "a white pixel" } });
    const s = await postStatus(u, {
      status: `@${other.username} look #Birds :${code}:`,
      spoiler_text: "birds inside",
      in_reply_to_id: parent.id,
      media_ids: [media.id],
    });
    const { body, parsed } = await object(s.id);
    expect(parsed).toBeInstanceOf(Note);
    expect(parsed.id?.href).toBe(s.uri);
    expect(parsed.url?.toString()).toBe(s.url);
    expect(parsed.attributionId?.href).toBe(actorOf(u));
    expect(parsed.content?.toString()).toBe(s.content);
    expect(parsed.summary?.toString()).toBe("birds inside");
    expect(parsed.sensitive).toBe(true);
    expect(parsed.published?.epochMilliseconds).toBe(Date.parse(s.created_at));
    expect(parsed.updated).toBeNull();
    expect(parsed.replyTargetId?.href).toBe(parent.uri);
    expect(parsed.ccIds.map(String)).toEqual([followersOf(u), actorOf(other)]);

    const tags = await all(parsed.getTags());
    const mention = tags.find((t) => t instanceof Mention) as Mention;
    expect(mention.href?.href).toBe(actorOf(other));
    expect(mention.name?.toString()).toBe(`@${other.username}@localhost`);
    const tag = tags.find((t) => t instanceof Hashtag) as Hashtag;
    expect(tag.href?.href).toBe(`${BASE}/tag/birds`);
    expect(tag.name?.toString()).toBe("#birds");
    const emoji = tags.find((t) => t instanceof Emoji) as Emoji;
    expect(emoji.name?.toString()).toBe(`:${code}:`);
    const icon = await emoji.getIcon();
    expect(icon?.url?.toString()).toBe(`${BASE}/media/emoji/${code}.png`);
    expect(icon?.mediaType).toBe("image/png");

    const [doc] = await all(parsed.getAttachments());
    expect(doc).toBeInstanceOf(Document);
    expect((doc as Document).mediaType).toBe("image/png");
    expect((doc as Document).name?.toString()).toBe("a white pixel");
    expect((doc as Document).url?.toString()).toBe(s.media_attachments[0]!.url);
    // The JSON a Mastodon server reads.
    expect(body["@context"]).toContain("https://www.w3.org/ns/activitystreams");
    expect(body.inReplyTo).toBe(parent.uri);
    expect(body.attachment.type ?? body.attachment[0]?.type).toBe("Document");

    // An edited status shows when (the client API has no editing yet: the row is set as an edit would).
    const at = Date.now();
    await env.DB.prepare("UPDATE statuses SET edited_at = ? WHERE id = ?").bind(at, s.id).run();
    expect((await object(s.id)).parsed.updated?.epochMilliseconds).toBe(at);
  });

  it("a poll is a Question with its options' counts", async () => {
    const u = await registerUser();
    const voter = await registerUser();
    const s = await postStatus(u, { status: "which?", poll: { options: ["tea", "coffee"], expires_in: 3600 } });
    await json(`/api/v1/polls/${s.poll!.id}/votes`, { method: "POST", token: voter.token, body: { choices: [1] } });
    const { body, parsed } = await object(s.id);
    expect(body.type).toBe("Question");
    expect(parsed).toBeInstanceOf(Question);
    const q = parsed as Question;
    const options = await all(q.getExclusiveOptions());
    expect(options.map((o) => o.name?.toString())).toEqual(["tea", "coffee"]);
    const counts = await Promise.all(options.map(async (o) => (await o.getReplies())?.totalItems));
    expect(counts).toEqual([0, 1]);
    expect(q.endTime?.epochMilliseconds).toBe(Date.parse(s.poll!.expires_at!));
    expect(q.closed).toBeNull();
    expect(q.voters).toBe(1);

    // An ended poll says when it closed.
    const ended = Date.now() - 1000;
    await env.DB.prepare("UPDATE polls SET expires_at = ? WHERE id = ?").bind(ended, s.poll!.id).run();
    const closed = (await object(s.id)).parsed as Question;
    expect(closed.closed).toBeInstanceOf(Temporal.Instant);
    expect((closed.closed as Temporal.Instant).epochMilliseconds).toBe(ended);
  });

  it("a deactivated author's statuses are gone", async () => {
    const u = await registerUser();
    const s = await postStatus(u, { status: "bye" });
    await ap(`/objects/${s.id}`);
    await env.DB.prepare("UPDATE accounts SET deactivated = 1 WHERE id = ?").bind(u.id).run();
    expect((await call(`/objects/${s.id}`, { headers: { Accept: AP } })).status).toBe(404);
    expect((await call(`/users/${u.username}/outbox`, { headers: { Accept: AP } })).status).toBe(404);
  });

  it("a reblog's uri answers its Announce; a deleted status is 404", async () => {
    const u = await registerUser();
    const author = await registerUser();
    const original = await postStatus(author, { status: "worth sharing" });
    const rb = valid(
      StatusSchema,
      await json(`/api/v1/statuses/${original.id}/reblog`, { method: "POST", token: u.token }),
    );
    expect(rb.uri).toBe(`${BASE}/activities/${rb.id}`);
    const body = await ap(`/activities/${rb.id}`);
    const a = await Announce.fromJsonLd(body);
    expect(a.id?.href).toBe(rb.uri);
    expect(a.actorId?.href).toBe(actorOf(u));
    expect(a.objectId?.href).toBe(original.uri);
    expect(a.toIds.map(String)).toEqual([PUBLIC_COLLECTION]);
    expect(a.ccIds.map(String)).toEqual([followersOf(u), actorOf(author)]);
    // A reblog's id is not an object, nor a status's an activity.
    expect((await call(`/objects/${rb.id}`, { headers: { Accept: AP } })).status).toBe(404);
    expect((await call(`/activities/${original.id}`, { headers: { Accept: AP } })).status).toBe(404);

    await json(`/api/v1/statuses/${original.id}`, { method: "DELETE", token: author.token });
    expect((await call(`/objects/${original.id}`, { headers: { Accept: AP } })).status).toBe(404);
    expect((await call(`/activities/${rb.id}`, { headers: { Accept: AP } })).status).toBe(404);
  });
});

describe("outbox and featured", () => {
  it("the actor names both collections", async () => {
    const u = await registerUser();
    const actor = await ap(`/users/${u.username}`);
    expect(actor.outbox).toBe(`${actorOf(u)}/outbox`);
    expect(actor.featured).toBe(`${actorOf(u)}/collections/featured`);
  });

  it("pages Create and Announce activities newest first, with a count of what federates", async () => {
    const u = await registerUser();
    const other = await registerUser();
    const theirs = await postStatus(other, { status: "theirs" });
    const ids: string[] = [];
    for (let i = 0; i < 22; i++)
      ids.push((await postStatus(u, { status: `post ${i}`, visibility: i % 2 ? "unlisted" : "public" })).id);
    for (const visibility of ["private", "direct", "local"])
      await postStatus(u, { status: `hidden ${visibility}`, visibility });
    const rb = await json(`/api/v1/statuses/${theirs.id}/reblog`, { method: "POST", token: u.token });

    const root = await ap(`/users/${u.username}/outbox`);
    const coll = await OrderedCollection.fromJsonLd(root);
    expect(coll.totalItems).toBe(23);
    expect(root.first).toBeDefined();
    const firstUrl = typeof root.first === "string" ? root.first : root.first.id;
    const first = await ap(new URL(firstUrl).pathname + new URL(firstUrl).search);
    const page1 = await OrderedCollectionPage.fromJsonLd(first);
    const items1 = await all(page1.getItems());
    expect(items1).toHaveLength(20);
    expect(items1[0]).toBeInstanceOf(Announce);
    expect(items1[0]!.id?.href).toBe(rb.uri);
    const creates = items1.slice(1) as Create[];
    for (const c of creates) expect(c).toBeInstanceOf(Create);
    const objs = await Promise.all(creates.map((c) => c.getObject()));
    expect(objs.map((o) => o?.id?.href)).toEqual(
      ids
        .slice(-19)
        .reverse()
        .map((id) => `${BASE}/objects/${id}`),
    );
    expect(creates[0]!.id?.href).toBe(`${BASE}/objects/${ids[21]}/activity`);
    expect(creates[0]!.actorId?.href).toBe(actorOf(u));
    // Unlisted (odd) and public (even) keep their addressing inside the outbox.
    expect(creates[0]!.toIds.map(String)).toEqual([followersOf(u)]);
    expect(creates[1]!.toIds.map(String)).toEqual([PUBLIC_COLLECTION]);

    expect(page1.nextId).not.toBeNull();
    const second = await ap(page1.nextId!.pathname + page1.nextId!.search);
    const page2 = await OrderedCollectionPage.fromJsonLd(second);
    const items2 = (await all(page2.getItems())) as Create[];
    const objs2 = await Promise.all(items2.map((c) => c.getObject()));
    expect(objs2.map((o) => o?.id?.href)).toEqual(
      ids
        .slice(0, 3)
        .reverse()
        .map((id) => `${BASE}/objects/${id}`),
    );
    const served = JSON.stringify([first, second]);
    expect(served).not.toContain("hidden");

    // Unknown accounts have no outbox; a browser gets the profile page.
    expect((await call(`/users/nobody_at_all_here/outbox`, { headers: { Accept: AP } })).status).toBe(404);
  });

  it("an outbox page costs the same D1 round trips whatever it holds", async () => {
    const trips = async (n: number) => {
      const u = await registerUser();
      for (let i = 0; i < n; i++)
        await postStatus(u, {
          status: `#t${i} post ${i}`,
          poll: i === 0 ? { options: ["a", "b"], expires_in: 600 } : undefined,
        });
      const counter = countingD1();
      const res = await call(`/users/${u.username}/outbox?cursor=first`, {
        headers: { Accept: AP },
        vars: { DB: counter.db } as never,
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).orderedItems.length).toBe(n);
      return counter.count();
    };
    const two = await trips(2);
    expect(await trips(12)).toBe(two);
    expect(two).toBeGreaterThan(0);
    expect(two).toBeLessThanOrEqual(2);
  });

  it("featured holds the pinned statuses as Notes", async () => {
    const u = await registerUser();
    const a = await postStatus(u, { status: "pinned one" });
    const b = await postStatus(u, { status: "pinned two", visibility: "unlisted" });
    await postStatus(u, { status: "not pinned" });
    for (const s of [a, b]) await json(`/api/v1/statuses/${s.id}/pin`, { method: "POST", token: u.token });
    const body = await ap(`/users/${u.username}/collections/featured`);
    const coll = await OrderedCollection.fromJsonLd(body);
    expect(coll.totalItems).toBe(2);
    const items = await all(coll.getItems());
    expect(items.map((n) => n.id?.href).sort()).toEqual([a.uri, b.uri].sort());
    for (const n of items) expect(n).toBeInstanceOf(Note);
    const empty = await ap(`/users/${(await registerUser()).username}/collections/featured`);
    expect(empty.totalItems).toBe(0);
  });
});
